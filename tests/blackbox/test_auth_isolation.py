"""Authentication and workspace isolation (design §1 "Workspace and authentication"): every route
but `GET /health` needs a known bearer key, keys are only stored as a digest, and nothing — a
record, a count, a score, a graph link, a cached query vector — crosses a workspace boundary.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any
from uuid import uuid4

import pytest
import sqlalchemy as sa
from flask import Flask
from sqlalchemy.engine import Engine

from tests.blackbox.design_support import current_flags
from tests.blackbox.design_support import embedding_calls
from tests.blackbox.design_support import fact
from tests.blackbox.design_support import one_id
from tests.blackbox.design_support import raw
from tests.blackbox.design_support import rec
from tests.blackbox.design_support import recent
from tests.blackbox.design_support import retract
from tests.blackbox.support import crowd_records
from tests.blackbox.support import ids
from tests.blackbox.support import invalid
from tests.blackbox.support import item
from tests.blackbox.support import link
from tests.blackbox.support import listing
from tests.blackbox.support import note
from tests.blackbox.support import part
from tests.blackbox.support import query
from tests.blackbox.support import search
from tests.blackbox.support import vec
from tests.blackbox.support import write
from tests.conftest import Client
from tests.conftest import Tenant
from tests.conftest import make_tenant
from tests.helpers import cli_env
from tests.helpers import error
from tests.helpers import fetch
from tests.helpers import last_line
from tests.helpers import memseek
from tests.helpers import ok
from tests.helpers import post_records
from tests.helpers import view_query
from tests.helpers import written
from tests.helpers import written_ids
from tests.openai_server import OpenAIServer

# --- authentication -------------------------------------------------------------------------------


ID = "0190a4f2-7b1c-7def-8abc-0123456789ab"
PUBLIC_RULES = {"/health", "/openapi.json", "/", "/docs", "/docs/<path:asset>", "/ui", "/ui/<path:asset>"}
"""Served without a key (issue 42): health, the API's description, its docs, the inspector's page."""
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


RECORD_ROUTES = [
    pytest.param("POST", "/records", {"records": [rec()]}, id="post-records"),
    pytest.param("GET", f"/records/{uuid4()}", None, id="get-record"),
    pytest.param("POST", f"/records/{uuid4()}/retract", {"reason": "x"}, id="retract"),
    pytest.param("POST", f"/records/{uuid4()}/approve", None, id="approve"),
    pytest.param("POST", f"/records/{uuid4()}/reject", {"reason": "x"}, id="reject"),
    pytest.param("POST", "/search", {"mode": "recent"}, id="search"),
    pytest.param("GET", "/views", None, id="views"),
    pytest.param("GET", "/context?q=hello", None, id="context"),
]


@pytest.mark.parametrize(("method", "path", "body"), RECORD_ROUTES)
@pytest.mark.parametrize(
    "headers",
    [
        pytest.param({}, id="missing"),
        pytest.param({"Authorization": "Bearer " + "A" * 43}, id="unknown-key"),
        pytest.param({"Authorization": "Bearer "}, id="empty-key"),
        pytest.param({"Authorization": "Basic dXNlcjpwYXNz"}, id="basic-scheme"),
    ],
)
def test_every_route_but_health_requires_a_known_bearer_key(
    bw_app: Flask, bw_ws: Tenant, method: str, path: str, body: Any, headers: dict[str, str]
) -> None:
    """§1: "Every route except `GET /health` requires `Authorization: Bearer <key>` ... Missing or
    unknown key → `401`." """
    response = bw_app.test_client().open(path, method=method, json=body, headers=headers)
    error(response, 401)


def test_health_needs_no_key(bw_app: Flask) -> None:
    """§3: "`GET /health` — no auth; reports database reachability and catalog hash." """
    assert bw_app.test_client().get("/health").status_code == 200


@pytest.mark.parametrize(
    "header",
    [
        pytest.param("Bearer {key} extra", id="trailing-token"),
        pytest.param("Token {key}", id="other-scheme"),
        pytest.param("{key}", id="no-scheme"),
        pytest.param("Bearer {prefix}", id="stored-prefix-only"),
        pytest.param("Bearer {key}x", id="one-more-character"),
        pytest.param("Bearer clé-inconnue", id="non-ascii"),
        pytest.param("Bearer", id="scheme-only"),
    ],
)
@pytest.mark.parametrize(
    ("method", "path", "body"),
    [
        pytest.param("GET", "/views", None, id="views"),
        pytest.param("POST", "/search", {"mode": "recent"}, id="search"),
        pytest.param("POST", "/records", {"records": [note()]}, id="records"),
    ],
)
def test_a_malformed_authorization_header_is_401(
    sx: Client, header: str, method: str, path: str, body: Any
) -> None:
    """§1: "Every route except `GET /health` requires `Authorization: Bearer <key>` … Missing or
    unknown key → `401`." — a header that is not exactly a live key is refused, never a 500."""
    value = header.format(key=sx.tenant.key, prefix=sx.tenant.key[:12])
    response = sx.raw.open(path, method=method, json=body, headers={"Authorization": value})
    error(response, 401, "unauthorized")


@pytest.mark.parametrize(
    ("method", "path", "kwargs"),
    [
        pytest.param("POST", "/records", {"data": b"{oops"}, id="malformed-json"),
        pytest.param("POST", "/records?wait=maybe", {"json": {"records": []}}, id="bad-query"),
        pytest.param("GET", "/records/not-a-uuid", {}, id="malformed-id"),
        pytest.param("GET", f"/records/{uuid4()}", {}, id="unknown-id"),
        pytest.param("POST", f"/records/{uuid4()}/retract", {"json": {}}, id="retract-bad-body"),
        pytest.param("POST", "/views/nope/query", {"json": {}}, id="unknown-view"),
    ],
)
@pytest.mark.parametrize(
    "headers",
    [
        pytest.param({}, id="no-key"),
        pytest.param({"Authorization": "Bearer msk_not_a_real_key_000000000000000000"}, id="unknown-key"),
    ],
)
def test_a_request_without_a_valid_key_is_401_before_anything_else(
    bw_app: Flask, bw_ws: Tenant, method: str, path: str, kwargs: dict[str, Any], headers: dict[str, str]
) -> None:
    """§1: "Every route except `GET /health` requires `Authorization: Bearer <key>` … Missing or
    unknown key → `401`" — whatever else is wrong with the request."""
    response = bw_app.test_client().open(
        path, method=method, headers={"Content-Type": "application/json", **headers}, **kwargs
    )
    error(response, 401, "unauthorized")


def test_a_key_is_matched_exactly(bw_app: Flask, bw_ws: Tenant) -> None:
    """§1: keys are random secrets "stored only as a digest": a changed letter case is another key."""
    client = bw_app.test_client()
    swapped = bw_ws.key.swapcase()
    error(client.get("/views", headers={"Authorization": f"Bearer {swapped}"}), 401, "unauthorized")
    assert client.get("/views", headers=bw_ws.headers).status_code == 200


def test_health_needs_no_key_even_with_a_bad_one(bw_app: Flask, bw_ws: Tenant) -> None:
    response = bw_app.test_client().get("/health", headers={"Authorization": "Bearer nope"})
    assert response.status_code == 200


def test_openapi_json_needs_no_key(bw_app: Flask, bw_ws: Tenant) -> None:
    # issue 42: the API's description is public (GET /health, /openapi.json, /docs, /ui)
    assert bw_app.test_client().get("/openapi.json").status_code == 200


@pytest.mark.parametrize(
    ("method", "path", "body"),
    [
        pytest.param("POST", "/search", {"mode": "recent"}, id="post-search"),
        pytest.param("GET", "/search?q=x", None, id="get-search"),
        pytest.param("GET", "/context?q=x", None, id="get-context"),
        pytest.param("POST", "/views/sx_context/query", {"entity": "e", "task": "t"}, id="view-query"),
        pytest.param("GET", "/views", None, id="views"),
        pytest.param("GET", "/rank/schema", None, id="rank-schema"),
    ],
)
def test_every_read_route_requires_workspace_authentication(
    sx: Client, method: str, path: str, body: object
) -> None:
    missing = sx.raw.open(path, method=method, json=body)
    error(missing, 401)
    wrong = sx.raw.open(path, method=method, json=body, headers={"Authorization": "Bearer nope"})
    error(wrong, 401)


def test_search_requires_workspace_authentication(sx: Client) -> None:
    """ "All of these routes require workspace authentication." (design: missing key → 401)"""
    assert sx.raw.post("/search", json={"mode": "recent"}).status_code == 401
    assert sx.raw.get("/search?q=a").status_code == 401
    assert sx.raw.get("/context?q=a").status_code == 401


VIEW_ROUTES = [
    pytest.param("GET", "/views", id="list"),
    pytest.param("POST", "/views/bv10_ctx/query", id="query"),
    pytest.param("POST", "/views/bv10_nowhere/query", id="query-unknown"),
]


@pytest.mark.parametrize(("method", "path"), VIEW_ROUTES)
@pytest.mark.parametrize("headers", [{}, {"Authorization": "Bearer not-a-key"}], ids=["no-key", "bad-key"])
def test_view_routes_require_workspace_authentication(
    bv_app: Flask, tenant: Tenant, method: str, path: str, headers: dict[str, str]
) -> None:
    """ "All of these routes require workspace authentication." / design: "Missing or unknown key → 401"."""
    response = bv_app.test_client().open(
        path, method=method, json={"entity": "abc", "task": "x"}, headers=headers
    )
    error(response, 401)


# --- keys: the admin commands ---------------------------------------------------------------------


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


def test_admin_commands_create_and_revoke_keys(
    bw_app: Flask,
    bw_ws: Tenant,
    bw_url: str,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """§1: "`memseek key create WORKSPACE`, `memseek key revoke KEY_PREFIX`"; a revoked key is
    unknown → `401`; keys are random (≥ 32 bytes of entropy)."""
    from memseek.cli import main

    monkeypatch.setenv("DATABASE_URL", bw_url)
    assert main(["key", "create", "bw-a"]) == 0
    key = capsys.readouterr().out.strip().splitlines()[-1]
    assert len(key) >= 43 and key != bw_ws.key
    client = bw_app.test_client()
    headers = {"Authorization": f"Bearer {key}"}
    assert client.get("/views", headers=headers).status_code == 200
    assert main(["key", "revoke", key[:16]]) == 0
    error(client.get("/views", headers=headers), 401)
    assert client.get("/views", headers=bw_ws.headers).status_code == 200


# --- workspaces: nothing crosses the boundary -----------------------------------------------------


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


@pytest.mark.parametrize(
    ("method", "suffix", "body"),
    [
        pytest.param("GET", "", None, id="get"),
        pytest.param("POST", "/retract", {"reason": "x"}, id="retract"),
        pytest.param("POST", "/approve", None, id="approve"),
        pytest.param("POST", "/reject", {"reason": "x"}, id="reject"),
    ],
)
def test_a_foreign_record_is_answered_like_an_unknown_one(
    bw: Client, bw_other: Client, method: str, suffix: str, body: Any
) -> None:
    """§1: "A record id from another workspace is answered exactly like an unknown id (`404`), never
    `403`." """
    foreign = one_id(bw_other, rec(status="draft"))
    unknown = str(uuid4())
    got = bw.request(method, f"/records/{foreign}{suffix}", json=body)
    ref = bw.request(method, f"/records/{unknown}{suffix}", json=body)
    err, ref_err = error(got, 404), error(ref, 404)
    assert err["code"] == ref_err["code"]
    assert err["message"].replace(foreign, unknown) == ref_err["message"]
    assert fetch(bw_other, foreign)["status"] == "draft"
    assert fetch(bw_other, foreign)["retracted_at"] is None


def test_derived_from_a_foreign_record_is_refused_like_an_unknown_one(bw: Client, bw_other: Client) -> None:
    """§1 records table: `derived_from` — "ids of the records it was derived from (same workspace,
    must exist)"; a foreign id is answered exactly like an unknown id."""
    foreign = one_id(bw_other, rec())
    unknown = str(uuid4())
    got = error(post_records(bw, rec(derived_from=[foreign])), 422)
    ref = error(post_records(bw, rec(derived_from=[unknown])), 422)
    assert [d["loc"] for d in got["details"]] == [d["loc"] for d in ref["details"]]
    assert [d["msg"].replace(foreign, unknown) for d in got["details"]] == [d["msg"] for d in ref["details"]]


def test_workspaces_never_see_each_others_records(bw: Client, bw_other: Client) -> None:
    """§1: "Nothing ever crosses a workspace boundary: not in results, counts ..." """
    written(bw, rec(text="mine"))
    assert recent(bw_other, "bw_plain") == []
    assert [h["text"] for h in recent(bw, "bw_plain")] == ["mine"]


def test_the_same_slot_in_two_workspaces_is_two_slots(bw: Client, bw_other: Client) -> None:
    """§1 keyed facts: "A slot is `(workspace, collection, entity, key, status)`." """
    mine = one_id(bw, fact("mine"))
    theirs = one_id(bw_other, fact("theirs"))
    assert current_flags(bw, mine) == [True]
    assert current_flags(bw_other, theirs) == [True]


def test_idempotency_keys_are_per_workspace(bw: Client, bw_other: Client) -> None:
    """§3: "a repeated `idempotency_key` in the same workspace returns the original record"."""
    mine = one_id(bw, rec(idempotency_key="k1"))
    theirs = one_id(bw_other, rec(idempotency_key="k1"))
    assert mine != theirs
    assert fetch(bw_other, theirs)["id"] == theirs


def test_retracting_in_one_workspace_leaves_the_same_slot_of_another_current(
    bw: Client, bw_other: Client
) -> None:
    """§1: a slot is "(workspace, collection, entity, key, status)"; "Nothing ever crosses a
    workspace boundary"."""
    (mine,) = written_ids(bw, fact("mine"))
    (theirs,) = written_ids(bw_other, fact("theirs"))
    assert current_flags(bw, mine) == [True] and current_flags(bw_other, theirs) == [True]
    assert retract(bw_other, theirs).status_code == 200
    assert current_flags(bw, mine) == [True]
    assert [h["text"] for h in recent(bw, "bw_facts")] == ["mine"]
    assert recent(bw_other, "bw_facts") == []


def test_a_foreign_draft_cannot_be_approved_or_rejected(bw: Client, bw_other: Client) -> None:
    """§1: "A record id from another workspace is answered exactly like an unknown id (`404`)" —
    and nothing happens to it."""
    (draft,) = written_ids(bw_other, fact("their proposal", status="draft"))
    error(bw.post(f"/records/{draft}/approve"), 404, "not_found")
    error(bw.post(f"/records/{draft}/reject", json={"reason": "no"}), 404, "not_found")
    record = fetch(bw_other, draft)
    assert (record["status"], record["retracted_at"], record["current"]) == ("draft", None, True)


ACTIONS = [
    pytest.param("GET", "", None, id="get"),
    pytest.param("POST", "/retract", {"reason": "mine now"}, id="retract"),
    pytest.param("POST", "/approve", None, id="approve"),
    pytest.param("POST", "/reject", {"reason": "no"}, id="reject"),
]


def without(text: str, *values: str) -> str:
    """`text` with each of `values` replaced by a placeholder (to compare two answers that differ
    only in the id they name)."""
    for value in values:
        text = text.replace(value, "<id>")
    return text


@pytest.fixture
def sx_other(sx_app: Flask, other_tenant: Tenant, sx: Client) -> Client:
    """A client of the `sx_` app for a second workspace (`other_tenant`)."""
    return Client(sx_app.test_client(), other_tenant)


@pytest.mark.parametrize(("method", "suffix", "body"), ACTIONS)
def test_a_foreign_record_id_is_answered_exactly_like_an_unknown_id(
    sx: Client, sx_other: Client, method: str, suffix: str, body: Any
) -> None:
    """§1: "A record id from another workspace is answered exactly like an unknown id (`404`),
    never `403`." — same status, same body (but for the id it names), and nothing happens."""
    (foreign,) = write(sx_other, note("their proposal", key="plan", status="draft"))
    unknown = str(uuid4())
    theirs = sx.request(method, f"/records/{foreign}{suffix}", json=body)
    nobody = sx.request(method, f"/records/{unknown}{suffix}", json=body)
    error(theirs, 404, "not_found")
    error(nobody, 404, "not_found")
    assert without(theirs.get_data(as_text=True), foreign) == without(nobody.get_data(as_text=True), unknown)
    record = fetch(sx_other, foreign)
    assert (record["status"], record["retracted_at"], record["current"]) == ("draft", None, True)


NOTES = {"collections": ["sx_notes"]}


def test_deriving_from_a_foreign_record_is_refused_like_an_unknown_id(sx: Client, sx_other: Client) -> None:
    """§1 Records: `derived_from` — "ids of the records it was derived from (same workspace, must
    exist)"; a record id from another workspace "is answered exactly like an unknown id"."""
    (foreign,) = write(sx_other, note("their evidence"))
    unknown = str(uuid4())
    theirs = sx.post("/records", json={"records": [note("derived", derived_from=[foreign])]})
    nobody = sx.post("/records", json={"records": [note("derived", derived_from=[unknown])]})
    invalid(theirs)
    invalid(nobody)
    assert without(theirs.get_data(as_text=True), foreign) == without(nobody.get_data(as_text=True), unknown)
    assert search(sx, {"mode": "recent", "scope": NOTES})["hits"] == []


VECS = {"collections": ["sx_vec"]}


def observed(client: Client, body: dict[str, Any]) -> tuple[list[str], list[float], Any]:
    """What a search shows: hit ids, rank_scores and the backend diagnostics."""
    answer = search(client, body)
    return ids(answer), [hit["rank_score"] for hit in answer["hits"]], answer["backend"]


@pytest.mark.parametrize(
    "body",
    [
        pytest.param({"mode": "text", "rank": ["text_match"]}, id="text"),
        pytest.param({"mode": "recent", "rank": ["score", "importance"]}, id="recent"),
        pytest.param({"mode": "vector", "rank": ["similarity"], "k": 1}, id="vector"),
        pytest.param(
            {"mode": "hybrid", "rank": ["sum", [["similarity"], ["text_match"]]], "k": 1}, id="hybrid"
        ),
    ],
)
def test_another_workspaces_records_change_no_result_score_or_count(
    sx: Client, sx_other: Client, body: dict[str, Any]
) -> None:
    """§1: "Nothing ever crosses a workspace boundary: not in results, counts, graph walks, boosts,
    errors or timing-visible behaviour that we can avoid." Another workspace full of better
    matches (identical text, so identical vectors) changes nothing this workspace sees:
    hits, scores (formulas that do not age), nor `candidate_count`."""
    write(sx, note("budget review of Q3"), note("lunch"), vec("budget review notes"), vec("lunch plans"))
    scope = VECS if body["mode"] in ("vector", "hybrid") else NOTES
    body = {**body, "q": "budget review", "scope": scope}
    before = observed(sx, body)
    assert before[0]
    flood = [note("budget review budget review"), vec("budget review")]
    write(sx_other, *(flood * 150))
    assert observed(sx, body) == before


def test_graph_boost_never_walks_another_workspaces_links(sx: Client, sx_other: Client) -> None:
    """§1: nothing crosses a workspace boundary — "graph walks, boosts". Spec: graph_boost "matches
    a result when its key or its entity is one of those nodes"; the walk reads this workspace's
    links only, so another workspace's link to `far` neither matches nor counts."""
    write(sx, note("near", entity="near", scores={"importance": 2}), note("far", entity="far"))
    write(sx_other, link("hub", "r", "far"))
    body = {
        "mode": "recent",
        "scope": NOTES,
        "rank": ["score", "importance"],
        "graph_boost": {"graph": "sx_walk", "anchor": "hub", "weight": 1.0},
    }
    answer = search(sx, body)
    assert [hit["rank_score"] for hit in answer["hits"]] == [2.0, 0.0]
    assert (answer["graph_boost"]["matched_records"], answer["graph_boost"]["edge_count"]) == (0, 0)
    write(sx, link("hub", "r", "far"))  # the same link in this workspace does match
    answer = search(sx, body)
    assert answer["graph_boost"]["matched_records"] == 1 and answer["graph_boost"]["edge_count"] == 1


def test_an_orphan_report_sees_only_its_own_workspace(sx: Client, sx_other: Client) -> None:
    """§1: nothing crosses a workspace boundary; spec: an orphan is a current node "with no links at
    all, in either direction" — another workspace's link to it is no link of this workspace, and
    another workspace's nodes are not this workspace's orphans."""
    write(sx, part("alone"))
    write(sx_other, link("alone", "r", "elsewhere"), part("theirs"))
    mine = ok(view_query(sx, "sx_orphans", {}))
    assert [o["key"] for o in mine["orphans"]] == ["alone"]
    theirs = ok(view_query(sx_other, "sx_orphans", {}))
    assert [o["key"] for o in theirs["orphans"]] == ["theirs"]


def test_another_workspace_is_invisible(sx: Client, sx_app: Flask, other_tenant: Tenant) -> None:
    (mine,) = write(sx, note("budget mine"))
    other = Client(sx_app.test_client(), other_tenant)
    write(other, note("budget theirs"))
    assert listing(sx) == [mine]
    assert ids(search(sx, {"mode": "text", "q": "budget"})) == [mine]


# Spec, Scopes: "scope narrows a search to the records that should even be considered"; every
# proposal is re-checked, so a bounded proposal that holds only records outside the scope must not
# stand for the whole answer. CROWD exceeds the candidates of a default search (k 20 → 200).
CROWD = 250
MODES = ["text", "vector", "hybrid", "recent", "structured"]
"""Every search mode (spec "Choosing a search mode")."""


@pytest.mark.parametrize("mode", MODES)
def test_another_workspaces_records_change_no_count(
    sx: Client, sx_app: Flask, other_tenant: Tenant, mode: str
) -> None:
    """Design §1: "Nothing ever crosses a workspace boundary: not in results, counts …" — the
    `backend.candidate_count` (spec: "how many candidates the search engine proposed") and the
    scores of one workspace's search are the same whatever another workspace holds."""
    write(sx, item(mode, "budget one", occurred_at="2026-01-01T00:00:00Z"))
    write(sx, item(mode, "budget two budget", occurred_at="2026-01-02T00:00:00Z"))
    body = query(mode, k=1)
    before = search(sx, body)
    other = Client(sx_app.test_client(), other_tenant)
    write(other, *(item(mode, "budget budget budget", entity=f"o{i}") for i in range(CROWD)))
    after = search(sx, body)
    assert after["backend"]["candidate_count"] == before["backend"]["candidate_count"] == 2
    assert ids(after) == ids(before)
    assert [h["score"] for h in after["hits"]] == [h["score"] for h in before["hits"]]


Q = "budget"
"""Every record below holds this word, so a text search matches all of them."""


def test_another_workspaces_records_change_no_count_of_a_combined_search(
    sx: Client, sx_app: Flask, other_tenant: Tenant
) -> None:
    """Design §1: "Nothing ever crosses a workspace boundary: not in results, counts …" — each
    source's `candidate_count` included."""
    write(sx, note("budget one"), note("budget two budget"), vec("budget three"))
    body = {
        "q": Q,
        "sources": [
            {"name": "words", "mode": "text", "scope": {"collections": ["sx_notes"]}},
            {"name": "meaning", "mode": "vector", "scope": {"collections": ["sx_vec"]}},
            {"name": "latest", "mode": "recent", "scope": {"collections": ["sx_notes", "sx_extra"]}},
        ],
        "fuse": {"kind": "rrf"},
        "k": 2,
    }
    before = search(sx, body)
    other = Client(sx_app.test_client(), other_tenant)
    write(other, *(note("budget budget", entity=f"o{i}") for i in range(CROWD)))
    write(other, *(vec("budget budget", entity=f"o{i}") for i in range(CROWD)))
    after = search(sx, body)
    counts = {b["source"]: b["candidate_count"] for b in after["backend"]}
    assert counts == {"words": 2, "meaning": 1, "latest": 2}
    assert after["backend"] == before["backend"]
    assert [(h["id"], h["score"]) for h in after["hits"]] == [(h["id"], h["score"]) for h in before["hits"]]


LONE = "a long planning meeting where the yearly budget came up once among many other things"


@pytest.mark.parametrize("mode", ["vector", "hybrid", "text", "recent"])
def test_another_workspaces_rows_never_crowd_out_mine(
    sx: Client, sx_app: Flask, other_tenant: Tenant, mode: str
) -> None:
    """Design §1: "Nothing ever crosses a workspace boundary: not in results, counts, graph walks,
    boosts, errors or timing-visible behaviour that we can avoid"."""
    other = Client(sx_app.test_client(), other_tenant)
    write(other, *crowd_records())
    (lone,) = write(sx, vec(LONE, entity="lone"))
    body = {"q": Q, "mode": mode, "k": 10, "scope": {"collections": ["sx_vec"]}}
    assert ids(search(sx, body)) == [lone]


# --- no workspace learns what another one searched ------------------------------------------------


VECTOR_SEARCH = {"q": "down provider", "mode": "vector", "scope": {"collections": ["sx_vec"]}}


@pytest.mark.parametrize("down", [False, True], ids=["provider-up", "provider-down"])
def test_another_workspaces_query_is_not_reused(
    sx: Client, sx_app: Any, other_tenant: Tenant, server: OpenAIServer, down: bool
) -> None:
    """Design §1 Workspace: "Nothing ever crosses a workspace boundary: not in results, counts,
    graph walks, boosts, errors or timing-visible behaviour that we can avoid"; §1 Models: a
    provider that is unreachable "makes the reads that need it fail with `503`". Whether workspace
    B's search calls the provider (its time, its 503) must not depend on what A searched before."""
    other = Client(sx_app.test_client(), other_tenant)
    body = {**VECTOR_SEARCH, "q": "a phrase only workspace a searched"}
    search(sx, body)
    server.reset()
    if down:
        server.fail_next(500, times=5)
        error(other.post("/search", json=body), 503)
    else:
        search(other, body)
    assert len(embedding_calls(server)) == 1


def test_one_workspaces_query_is_not_served_from_another_workspaces_cache(
    sx: Client, sx_other: Client, server: Any
) -> None:
    """§1: "Nothing ever crosses a workspace boundary: not in results, counts, graph walks, boosts,
    errors or timing-visible behaviour that we can avoid." A query vector cached for one
    workspace's search and reused for another's would tell the second workspace (by the missing
    provider round trip) that someone else asked exactly that question."""
    body = {"mode": "vector", "q": "did anyone else ask about the merger", "scope": VECS}
    search(sx, body)
    search(sx_other, body)
    embeddings = [r for r in server.requests if r.path == "/v1/embeddings"]
    assert len(embeddings) == 2
