"""Auth, the error shape, health and the OpenAPI document over real HTTP routes."""

from __future__ import annotations

import pytest
import sqlalchemy as sa
from flask import Flask

from memseek import auth
from memseek.errors import Conflict
from tests.conftest import Client
from tests.conftest import Tenant
from tests.helpers import details
from tests.helpers import error


def test_health_needs_no_key(app: Flask, db) -> None:  # type: ignore[no-untyped-def]
    response = app.test_client().get("/health")
    assert response.status_code == 200
    body = response.get_json()
    assert body["database"] == "ok"
    assert body["catalog_hash"].startswith("sha256")


@pytest.mark.parametrize(
    "headers",
    [
        pytest.param({}, id="missing"),
        pytest.param({"Authorization": "Basic abc"}, id="wrong-scheme"),
        pytest.param({"Authorization": "Bearer "}, id="empty"),
        pytest.param({"Authorization": "Bearer msk_not-a-real-key"}, id="unknown"),
    ],
)
def test_bad_keys_are_401(app: Flask, tenant: Tenant, headers: dict[str, str]) -> None:
    error(app.test_client().get("/views", headers=headers), 401, "unauthorized")


def test_revoked_key_is_401(app: Flask, db, tenant: Tenant) -> None:  # type: ignore[no-untyped-def]
    c = app.test_client()
    assert c.get("/views", headers=tenant.headers).status_code == 200
    with db.begin() as conn:
        auth.revoke_key(conn, tenant.key[:14])
    error(c.get("/views", headers=tenant.headers), 401, "unauthorized")


def test_second_key_for_workspace(app: Flask, db, tenant: Tenant) -> None:  # type: ignore[no-untyped-def]
    with db.begin() as conn:
        key = auth.create_key(conn, "tenant-a")
    assert key != tenant.key and key.startswith("msk_") and len(key) >= 40
    response = app.test_client().get("/views", headers={"Authorization": f"Bearer {key}"})
    assert response.status_code == 200


def test_keys_stored_as_digest_only(db, tenant: Tenant) -> None:  # type: ignore[no-untyped-def]
    with db.connect() as conn:
        row = conn.execute(sa.text("SELECT prefix, digest FROM api_keys")).one()
    assert tenant.key not in (row.prefix, bytes(row.digest).decode(errors="ignore"))
    assert bytes(row.digest) == auth.digest(tenant.key)


def test_unknown_route_404(client: Client) -> None:
    error(client.get("/no/such/route"), 404, "not_found")


def test_wrong_method_405(client: Client) -> None:
    response = client.post("/health")
    error(response, 405, "method_not_allowed")


def test_body_over_limit_413(app: Flask, client: Client) -> None:
    limit = app.config["MAX_CONTENT_LENGTH"]
    response = client.raw.post("/openapi.json", data=b"x" * (limit + 1), headers=client.tenant.headers)
    error(response, 413, "payload_too_large")


def test_openapi_lists_routes(client: Client) -> None:
    doc = client.get("/openapi.json").get_json()
    assert doc["openapi"].startswith("3.1")
    assert "/health" in doc["paths"]


@pytest.mark.parametrize(
    "body",
    [
        pytest.param(b"{not json", id="malformed"),
        pytest.param(b"\xff\xfe", id="not-utf8"),
        pytest.param(b"", id="empty"),
    ],
)
@pytest.mark.parametrize("path", ["/search", "/records"])
def test_non_json_bodies_are_422(client: Client, path: str, body: bytes) -> None:
    response = client.raw.post(
        path, data=body, headers={**client.tenant.headers, "Content-Type": "application/json"}
    )
    assert details(response)[0]["loc"] == ["body"]


def test_revoking_needs_an_unambiguous_prefix(db, tenant: Tenant) -> None:  # type: ignore[no-untyped-def]
    """Only 12 characters of a key are stored: a prefix two live keys share is refused, and so is
    one too short to mean anything; the whole key always names itself."""
    with db.begin() as conn:
        auth.create_key(conn, "tenant-a")
        # give the second key the first one's stored prefix, as a 12-character collision would
        conn.execute(sa.text("UPDATE api_keys SET prefix = :p"), {"p": tenant.key[: auth.PREFIX_CHARS]})
    for prefix, message in ((tenant.key[:14], "2 keys start with"), ("msk_abc", "give at least")):
        with db.begin() as conn, pytest.raises(Conflict, match=message):
            auth.revoke_key(conn, prefix)
    with db.begin() as conn:
        assert auth.revoke_key(conn, tenant.key) == 1
        live = conn.execute(sa.text("SELECT count(*) FROM api_keys WHERE revoked_at IS NULL")).scalar()
    assert live == 1


@pytest.mark.parametrize(("name", "message"), [("  ", "must not be blank"), ("tenant-a", "already exists")])
def test_workspace_names_are_unique_and_not_blank(db, tenant: Tenant, name: str, message: str) -> None:  # type: ignore[no-untyped-def]
    with db.begin() as conn, pytest.raises(Conflict, match=message):
        auth.create_workspace(conn, name)
