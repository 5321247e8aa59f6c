"""Design §1 "Workspace and authentication", §3 errors, `GET /health`, `GET /openapi.json`, key commands."""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path
from typing import Any
from uuid import UUID
from uuid import uuid4

import pytest
import sqlalchemy as sa
from flask import Flask
from sqlalchemy.engine import Engine

from memseek.db import create_db_engine
from memseek.runtime import Runtime
from memseek.settings import Settings
from tests.blackbox.design_support import rec
from tests.conftest import Client
from tests.conftest import Tenant
from tests.conftest import client_for
from tests.conftest import make_tenant
from tests.helpers import app_for
from tests.helpers import cli_env
from tests.helpers import error
from tests.helpers import fetch
from tests.helpers import last_line
from tests.helpers import memseek
from tests.helpers import post_records
from tests.helpers import with_settings
from tests.helpers import written_ids

ID = "0190a4f2-7b1c-7def-8abc-0123456789ab"
PUBLIC_RULES = {"/health", "/openapi.json", "/", "/docs", "/docs/<path:asset>", "/ui", "/ui/<path:asset>"}
"""Served without a key (issue 42): health, the API's description, its docs, the inspector's page."""
PUBLIC_PATHS = {re.sub(r"<(?:[^:>]+:)?([^>]+)>", r"{\1}", rule) for rule in PUBLIC_RULES}
# every route of the design and the spec, with a body that would be valid
ROUTES = [
    ("GET", "/views", None),
    ("POST", "/views/customer_context/query", {"entity": "e", "task": "t"}),
    ("GET", "/rank/schema", None),
    ("POST", "/search", {"mode": "recent"}),
    ("GET", "/search?q=x", None),
    ("GET", "/context?q=x", None),
    ("POST", "/records", {"records": [rec()]}),
    ("GET", f"/records/{ID}", None),
    ("POST", f"/records/{ID}/retract", {"reason": "r"}),
    ("POST", f"/records/{ID}/approve", None),
    ("POST", f"/records/{ID}/reject", {"reason": "r"}),
    ("POST", "/mcp", {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}),
]
ROUTE_IDS = [f"{method} {path.split('?')[0]}" for method, path, _ in ROUTES]


def raw(app: Flask, method: str, path: str, body: Any = None, headers: dict[str, str] | None = None) -> Any:
    return app.test_client().open(path, method=method, json=body, headers=headers or {})


# --- authentication ------------------------------------------------------------------------------


@pytest.mark.parametrize(("method", "path", "body"), ROUTES, ids=ROUTE_IDS)
@pytest.mark.parametrize(
    "headers",
    [
        pytest.param({}, id="no-header"),
        pytest.param(
            {"Authorization": "Bearer msk_unknownunknownunknownunknownunknown12345"}, id="unknown-key"
        ),
        pytest.param({"Authorization": "Bearer "}, id="empty-key"),
        pytest.param({"Authorization": "Basic dXNlcjpwYXNz"}, id="other-scheme"),
        pytest.param({"X-Api-Key": "whatever"}, id="other-header"),
    ],
)
def test_every_route_but_health_needs_a_bearer_key(
    bw_app: Flask, bw_ws: Tenant, method: str, path: str, body: Any, headers: dict[str, str]
) -> None:
    error(raw(bw_app, method, path, body, headers), 401)


def test_every_route_in_the_app_is_authenticated_except_health(bw_app: Flask, bw_ws: Tenant) -> None:
    """Routes nobody listed above are found from the app itself."""
    for rule in bw_app.url_map.iter_rules():
        path = re.sub(r"<[^>]+>", ID, rule.rule)
        for method in sorted((rule.methods or set()) - {"HEAD", "OPTIONS"}):
            response = raw(bw_app, method, path)
            if rule.rule in PUBLIC_RULES:
                assert response.status_code != 401, rule.rule
            else:
                error(response, 401)


def test_a_known_key_is_accepted_on_every_route(bw_app: Flask, bw_ws: Tenant) -> None:
    for method, path, body in ROUTES:
        response = raw(
            bw_app, method, path, body, {**bw_ws.headers, "Accept": "application/json, text/event-stream"}
        )
        assert response.status_code != 401, (method, path)


def test_the_bearer_scheme_is_case_insensitive(bw_app: Flask, bw_ws: Tenant) -> None:
    response = raw(bw_app, "GET", "/views", headers={"Authorization": f"bearer {bw_ws.key}"})
    assert response.status_code == 200


def test_401_has_the_one_error_shape(bw_app: Flask, bw_ws: Tenant) -> None:
    err = error(raw(bw_app, "GET", "/views"), 401, "unauthorized")
    assert "Bearer" in err["message"]


def test_a_revoked_key_is_401_and_other_keys_keep_working(bw_app: Flask, bw_url: str, bw_ws: Tenant) -> None:
    env = cli_env(DATABASE_URL=bw_url)
    second = last_line(memseek(env, "key", "create", "bw-a"))
    revoked = memseek(env, "key", "revoke", bw_ws.key[:16])
    assert revoked.returncode == 0, revoked.stderr
    assert bw_ws.key not in revoked.stdout
    error(raw(bw_app, "GET", "/views", headers=bw_ws.headers), 401)
    assert raw(bw_app, "GET", "/views", headers={"Authorization": f"Bearer {second}"}).status_code == 200


def test_keys_carry_at_least_32_bytes_of_entropy_and_are_unique(bw_url: str, bw_ws: Tenant) -> None:
    env = cli_env(DATABASE_URL=bw_url)
    keys = {bw_ws.key}
    for _ in range(3):
        keys.add(last_line(memseek(env, "key", "create", "bw-a")))
    assert len(keys) == 4
    for key in keys:
        secret = key.split("_", 1)[-1]
        assert re.fullmatch(r"[A-Za-z0-9_-]+", secret)
        assert len(secret) * 6 >= 256, key  # base64url characters carry 6 bits each


def test_keys_are_stored_only_as_a_digest(bw_db: Engine, bw_ws: Tenant) -> None:
    with bw_db.connect() as conn:
        rows = conn.execute(sa.text("SELECT * FROM api_keys")).mappings().all()
    assert rows
    stored = " ".join(str(value) for row in rows for value in row.values())
    assert bw_ws.key not in stored
    assert bw_ws.key[16:] not in stored  # not even the secret part


# --- workspaces: nothing crosses the boundary ----------------------------------------------------


def test_records_of_one_workspace_are_invisible_to_another(bw_app: Flask, bw_db: Engine) -> None:
    a, b = make_tenant(bw_db, "bw-x"), make_tenant(bw_db, "bw-y")
    client_a, client_b = Client(bw_app.test_client(), a), Client(bw_app.test_client(), b)
    (record_id,) = written_ids(client_a, rec(text="secret plans", idempotency_key="k"))
    error(client_b.get(f"/records/{record_id}"), 404, "not_found")
    body = {"mode": "recent", "scope": {"collections": ["bw_plain"]}}
    assert client_b.post("/search", json=body).get_json()["hits"] == []
    assert [h["id"] for h in client_a.post("/search", json=body).get_json()["hits"]] == [record_id]
    # the same idempotency key in the other workspace is a new record, not a replay or a conflict
    (other,) = written_ids(client_b, rec(text="different", idempotency_key="k"))
    assert other != record_id


# --- GET /health ----------------------------------------------------------------------------------


def test_health_needs_no_key_and_reports_database_and_catalog_hash(
    bw_app: Flask, bw_runtime: Runtime
) -> None:
    response = raw(bw_app, "GET", "/health")
    assert response.status_code == 200
    body = response.get_json()
    assert body["database"] == "ok"
    assert body["catalog_hash"] == bw_runtime.catalog.hash and body["catalog_hash"]
    # a key is not needed, and a bad one does not matter
    assert raw(bw_app, "GET", "/health", headers={"Authorization": "Bearer nope"}).status_code == 200


def test_the_catalog_hash_changes_with_the_catalog(bw_runtime: Runtime) -> None:
    from memseek.catalog.load import load_catalog
    from memseek.search.view_checks import VIEW_CHECKS

    with_package = load_catalog(
        bw_runtime.settings.memseek_catalog, package="support_agent", view_checks=VIEW_CHECKS
    )
    assert with_package.hash != bw_runtime.catalog.hash
    again = load_catalog(bw_runtime.settings.memseek_catalog, view_checks=VIEW_CHECKS)
    assert again.hash == bw_runtime.catalog.hash


def test_health_reports_an_unreachable_database(bw_runtime: Runtime) -> None:
    dead = create_db_engine(Settings(database_url="postgresql://memseek@127.0.0.1:9/nothing"))
    app = app_for(replace(bw_runtime, engine=dead))
    response = raw(app, "GET", "/health")
    assert response.status_code == 503
    body = response.get_json()
    assert body["database"] != "ok" and body["catalog_hash"] == bw_runtime.catalog.hash


def test_an_unreachable_database_is_503_not_500(bw_runtime: Runtime, bw_ws: Tenant) -> None:
    dead = create_db_engine(Settings(database_url="postgresql://memseek@127.0.0.1:9/nothing"))
    app = app_for(replace(bw_runtime, engine=dead))
    err = error(raw(app, "GET", "/views", headers=bw_ws.headers), 503)
    assert "127.0.0.1" not in err["message"] and "psycopg" not in err["message"]


# --- GET /openapi.json ----------------------------------------------------------------------------


def openapi(client: Client) -> dict[str, Any]:
    response = client.get("/openapi.json")
    assert response.status_code == 200
    return response.get_json()  # type: ignore[no-any-return]


def test_openapi_is_3_1_and_describes_every_route(bw: Client, bw_app: Flask) -> None:
    spec = openapi(bw)
    assert spec["openapi"].startswith("3.1")
    assert spec["info"]["title"] and spec["info"]["version"]
    documented = {(path, method.upper()) for path, item in spec["paths"].items() for method in item}
    served = set()
    for rule in bw_app.url_map.iter_rules():
        path = re.sub(r"<(?:[^:>]+:)?([^>]+)>", r"{\1}", rule.rule)
        served |= {(path, m) for m in (rule.methods or set()) - {"HEAD", "OPTIONS"}}
    served = {(p.replace("{raw_id}", "{id}"), m) for p, m in served}
    assert served == documented, served ^ documented
    for path, method in [
        ("/records", "POST"),
        ("/records/{id}", "GET"),
        ("/records/{id}/retract", "POST"),
        ("/records/{id}/approve", "POST"),
        ("/records/{id}/reject", "POST"),
        ("/search", "POST"),
        ("/search", "GET"),
        ("/context", "GET"),
        ("/views", "GET"),
        ("/views/{name}/query", "POST"),
        ("/rank/schema", "GET"),
        ("/health", "GET"),
        ("/openapi.json", "GET"),
    ]:
        assert (path, method) in documented, (path, method)


def test_openapi_is_a_valid_openapi_3_1_document(bw: Client) -> None:
    from openapi_spec_validator import validate

    validate(openapi(bw))  # raises on any violation (unresolved references, undeclared path parameters, …)


def test_openapi_marks_every_route_but_health_as_needing_a_bearer_key(bw: Client) -> None:
    spec = openapi(bw)
    schemes = spec["components"]["securitySchemes"]
    (bearer,) = [name for name, scheme in schemes.items() if scheme.get("scheme") == "bearer"]
    for path, item in spec["paths"].items():
        for method, operation in item.items():
            security = operation.get("security", spec.get("security"))
            if path in PUBLIC_PATHS:
                assert not security, security
            else:
                assert security == [{bearer: []}], (path, method)


def resolve(spec: dict[str, Any], schema: dict[str, Any]) -> dict[str, Any]:
    while "$ref" in schema:
        name = schema["$ref"].rsplit("/", 1)[-1]
        schema = spec["components"]["schemas"][name]
    return schema


def test_openapi_describes_the_records_body_from_the_validating_models(bw: Client) -> None:
    spec = openapi(bw)
    operation = spec["paths"]["/records"]["post"]
    body = resolve(spec, operation["requestBody"]["content"]["application/json"]["schema"])
    assert body["required"] == ["records"] and body.get("additionalProperties") is False
    records = body["properties"]["records"]
    assert (records["minItems"], records["maxItems"]) == (1, 1000)
    record = resolve(spec, records["items"])
    assert set(record["properties"]) == {
        "collection",
        "collection_version",
        "entity",
        "type",
        "key",
        "text",
        "content",
        "occurred_at",
        "scores",
        "annotations",
        "status",
        "derived_from",
        "run_id",
        "idempotency_key",
        "embedding",
        "embedding_model",
    }
    assert set(record["required"]) == {"collection", "entity", "type", "text"}
    assert record.get("additionalProperties") is False
    assert "201" in operation["responses"]
    names = {p["name"] for p in operation.get("parameters", [])}
    assert names == {"wait", "timeout"}


def test_openapi_describes_the_record_action_bodies(bw: Client) -> None:
    spec = openapi(bw)
    for action in ("retract", "reject"):
        body = spec["paths"][f"/records/{{id}}/{action}"]["post"]["requestBody"]
        assert body["required"] is True
        schema = resolve(spec, body["content"]["application/json"]["schema"])
        assert schema["required"] == ["reason"]
    approve = spec["paths"]["/records/{id}/approve"]["post"]
    assert approve.get("requestBody", {"required": False})["required"] is False


def test_openapi_documents_the_error_shape(bw: Client) -> None:
    spec = openapi(bw)
    for item in spec["paths"].values():
        for operation in item.values():
            assert "422" in operation["responses"] or operation is spec["paths"]["/health"]["get"]


# --- the one error shape: 404, 405, 413, 422, 500 ---------------------------------------------------


def test_an_unknown_route_is_404_with_the_error_shape(bw: Client) -> None:
    error(bw.get("/nothing/here"), 404, "not_found")
    error(bw.post("/records/x/y/z", json={}), 404, "not_found")


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("GET", "/records"),
        ("DELETE", f"/records/{ID}"),
        ("PUT", "/records"),
        ("GET", f"/records/{ID}/retract"),
        ("POST", "/health"),
        ("POST", "/views"),
        ("GET", "/views/customer_context/query"),
        ("DELETE", "/search"),
        ("GET", "/mcp"),
        ("DELETE", "/mcp"),
    ],
)
def test_a_wrong_method_is_405_with_the_error_shape(bw: Client, method: str, path: str) -> None:
    response = bw.request(method, path)
    error(response, 405, "method_not_allowed")
    assert response.headers.get("Allow")


def test_a_body_over_the_limit_is_413(bw_runtime: Runtime, bw_ws: Tenant) -> None:
    client = client_for(with_settings(bw_runtime, max_request_bytes=2000), bw_ws)
    error(post_records(client, rec(text="x" * 3000)), 413, "payload_too_large")
    assert post_records(client, rec(text="x" * 100)).status_code == 201


def test_an_internal_error_is_500_with_the_error_shape_and_no_internals(
    bw: Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    import memseek.api.records as records_api

    def explode(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("password=hunter2 at /srv/secret.py line 3")

    monkeypatch.setattr(records_api, "write_records", explode)
    err = error(post_records(bw, rec()), 500, "internal_error")
    assert "hunter2" not in err["message"] and "secret" not in err["message"]
    assert err["details"] == []


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("POST", "/records"),
        ("POST", f"/records/{ID}/retract"),
        ("POST", f"/records/{ID}/reject"),
        ("POST", "/search"),
        ("POST", "/views/customer_context/query"),
    ],
)
@pytest.mark.parametrize(
    "body", [b"", b"{oops", b"\xff\xfe", b"[1, 2"], ids=["empty", "broken", "binary", "open"]
)
def test_a_body_that_is_not_json_is_422_with_the_error_shape(
    bw: Client, method: str, path: str, body: bytes
) -> None:
    response = bw.request(method, path, data=body, headers={"Content-Type": "application/json"})
    error(response, 422)


@pytest.mark.parametrize("path", ["/records", "/search", "/views/customer_context/query"])
def test_a_body_nested_too_deeply_is_422_not_500(bw: Client, path: str) -> None:
    deep = b"[" * 100_000 + b"]" * 100_000
    error(bw.request("POST", path, data=deep, headers={"Content-Type": "application/json"}), 422)


@pytest.mark.parametrize("depth", [127, 129, 300, 100_000])
def test_deeply_nested_content_is_stored_or_refused_never_a_500(bw: Client, depth: int) -> None:
    content = b'{"a":' * depth + b"1" + b"}" * depth
    body = b'{"records": [{"collection": "bw_plain", "entity": "e", "type": "note", "text": "t", "content": '
    response = bw.request(
        "POST", "/records", data=body + content + b"}]}", headers={"Content-Type": "application/json"}
    )
    if depth > 128:  # content nests at most 128 levels
        error(response, 422)
        return
    assert response.status_code == 201, response.get_data(as_text=True)[:500]
    stored = fetch(bw, response.get_json()["records"][0]["id"])["content"]
    for _ in range(depth):
        stored = stored["a"]
    assert stored == 1


def test_errors_name_problems_with_a_json_path(bw: Client) -> None:
    err = error(post_records(bw, rec(), rec(entity="")), 422)
    assert err["code"] == "invalid_request"
    assert [d["loc"][:3] for d in err["details"]] == [["records", 1, "entity"]]


def test_record_routes_accept_the_canonical_uuid_in_any_case(bw: Client) -> None:
    (record_id,) = written_ids(bw, rec())
    assert fetch(bw, record_id.upper())["id"] == record_id
    assert UUID(record_id)


def test_cli_admin_commands_print_the_key_alone_on_the_last_line(
    bw_url: str, bw_app: Flask, bw_db: Engine, tmp_path: Path
) -> None:
    env = cli_env(DATABASE_URL=bw_url)
    created = memseek(env, "workspace", "create", "acme")
    assert created.returncode == 0, created.stderr
    key = created.stdout.rstrip("\n").splitlines()[-1]
    assert key == key.strip() and " " not in key and len(key) >= 43
    assert created.stdout.count(key) == 1
    client = Client(bw_app.test_client(), Tenant(uuid4(), key))
    assert post_records(client, rec()).status_code == 201
    more = memseek(env, "key", "create", "acme")
    assert more.returncode == 0, more.stderr
    second = more.stdout.rstrip("\n").splitlines()[-1]
    assert second != key and len(second) >= 43
    second_client = Client(bw_app.test_client(), Tenant(uuid4(), second))
    assert second_client.post("/search", json={"mode": "recent"}).status_code == 200
    assert (
        len(
            second_client.post(
                "/search", json={"mode": "recent", "scope": {"collections": ["bw_plain"]}}
            ).get_json()["hits"]
        )
        == 1
    )  # the same workspace
    revoked = memseek(env, "key", "revoke", key[:12])
    assert revoked.returncode == 0, revoked.stderr
    error(post_records(client, rec()), 401)
    assert post_records(second_client, rec()).status_code == 201


@pytest.mark.parametrize(
    "args",
    [
        pytest.param(("workspace", "create", "dup"), id="workspace-exists"),
        pytest.param(("key", "create", "no-such-workspace"), id="key-for-unknown-workspace"),
        pytest.param(("key", "revoke", "msk_zzzzzzzzzzzz"), id="revoke-unknown-prefix"),
    ],
)
def test_cli_admin_errors_exit_non_zero_with_a_message(
    bw_url: str, bw_db: Engine, args: tuple[str, ...]
) -> None:
    env = cli_env(DATABASE_URL=bw_url)
    assert memseek(env, "workspace", "create", "dup").returncode == 0
    result = memseek(env, *args)
    assert result.returncode != 0
    assert result.stderr.strip() and "Traceback" not in result.stderr
    assert not result.stdout.strip().startswith("msk_")


def test_row_level_security_hides_other_workspaces_from_a_statement_without_a_predicate(
    bw: Client, bw_app: Flask, bw_engine: Engine, bw_ws: Tenant
) -> None:
    from memseek.db import workspace_transaction

    other = make_tenant(bw_engine, "bw-rls")
    written_ids(bw, rec(text="mine"))
    written_ids(Client(bw_app.test_client(), other), rec(text="theirs"), rec(text="theirs too"))
    with workspace_transaction(bw_engine, bw_ws.id) as conn:
        texts = conn.execute(sa.text("SELECT text FROM records")).scalars().all()
    assert texts == ["mine"]


def test_a_graph_walk_never_crosses_workspaces(bw: Client, bw_other: Client) -> None:
    written_ids(bw_other, rec("bw_nodes", key="api", content={"depends_on": ["secret-db"]}))
    written_ids(bw, rec("bw_nodes", key="api", content={"depends_on": ["db"]}))
    response = bw.post("/views/bw_graph/query", json={"seed": "api", "depth": 3})
    assert response.status_code == 200
    assert response.get_json()["nodes"] == ["api", "db"]
