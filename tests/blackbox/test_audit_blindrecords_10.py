"""Blind audit of the write side (design §1, §3, §4), written from the design alone.

Every test quotes the design sentence it checks. Records go through `POST /records` of the `bw`
app (no in-process worker: processing runs only when a test calls `process`).
"""

from __future__ import annotations

from typing import Any
from uuid import uuid4

import pytest
from flask import Flask
from sqlalchemy.engine import Engine

from memseek.runtime import Runtime
from tests.blackbox.design_support import count_records
from tests.blackbox.design_support import current_flags
from tests.blackbox.design_support import fact
from tests.blackbox.design_support import one_id
from tests.blackbox.design_support import rec
from tests.blackbox.design_support import recent
from tests.conftest import Client
from tests.conftest import Tenant
from tests.conftest import client_for
from tests.helpers import error
from tests.helpers import fetch
from tests.helpers import post_records
from tests.helpers import written

# --- authentication and workspaces ----------------------------------------------------------------


RECORD_ROUTES = [
    pytest.param("POST", "/records", {"records": [rec()]}, id="post-records"),
    pytest.param("GET", f"/records/{uuid4()}", None, id="get-record"),
    pytest.param("POST", f"/records/{uuid4()}/retract", {"reason": "x"}, id="retract"),
    pytest.param("POST", f"/records/{uuid4()}/approve", None, id="approve"),
    pytest.param("POST", f"/records/{uuid4()}/reject", {"reason": "x"}, id="reject"),
    pytest.param("POST", "/search", {"mode": "recent"}, id="search"),
    pytest.param("GET", "/views", None, id="views"),
    pytest.param("GET", "/context?q=hello", None, id="context"),
    pytest.param("GET", "/openapi.json", None, id="openapi"),
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


# --- lengths are characters, and nothing a writer sends leaks a 500 -------------------------------


@pytest.mark.parametrize(
    "record",
    [
        pytest.param(rec(text="é" * 32768), id="text-32768-two-byte-chars"),
        pytest.param(rec(text="😀" * 32768), id="text-32768-astral-chars"),
        pytest.param(rec(entity="é" * 256), id="entity-256-two-byte-chars"),
        pytest.param(rec(entity="😀" * 256), id="entity-256-astral-chars"),
    ],
)
def test_limits_count_characters(bw: Client, record: dict[str, Any]) -> None:
    """§1: entity "1–256 chars"; text "at most `MAX_RECORD_CHARS` (default 32,768)" characters."""
    stored = fetch(bw, one_id(bw, record))
    assert stored["text"] == record["text"] and stored["entity"] == record["entity"]


# --- more readings: replays, drafts of nodes, settings, admin keys --------------------------------


def test_a_body_over_the_request_limit_is_413(bw_runtime: Runtime, bw_ws: Tenant, bw_db: Engine) -> None:
    """§3: "Status codes as in the spec, plus ... `413` (body too large)", in the one error shape."""
    from tests.helpers import with_settings

    client = client_for(with_settings(bw_runtime, max_request_bytes=2000), bw_ws)
    error(post_records(client, rec(text="x" * 5000)), 413)
    assert count_records(bw_db, bw_ws) == 0


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
