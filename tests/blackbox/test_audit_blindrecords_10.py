"""Blind audit of the write side (design §1, §3, §4), written from the design alone.

Every test quotes the design sentence it checks. Records go through `POST /records` of the `bw`
app (no in-process worker: processing runs only when a test calls `process`).
"""

from __future__ import annotations

import json
from typing import Any
from uuid import uuid4

import pytest
from flask import Flask
from sqlalchemy.engine import Engine

from memseek.models.local import MODEL_ID
from memseek.runtime import Runtime
from tests.blackbox.design_support import RECORD_FIELDS
from tests.blackbox.design_support import VECTOR
from tests.blackbox.design_support import count_records
from tests.blackbox.design_support import current_flags
from tests.blackbox.design_support import fact
from tests.blackbox.design_support import in_threads
from tests.blackbox.design_support import one_id
from tests.blackbox.design_support import process
from tests.blackbox.design_support import rec
from tests.blackbox.design_support import recent
from tests.blackbox.design_support import retract
from tests.blackbox.design_support import walk
from tests.conftest import Client
from tests.conftest import Tenant
from tests.conftest import client_for
from tests.helpers import error
from tests.helpers import fetch
from tests.helpers import ok
from tests.helpers import post_records
from tests.helpers import written
from tests.helpers import written_ids

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


# --- processing -----------------------------------------------------------------------------------


def test_a_record_needing_nothing_is_ready_and_one_needing_an_embedding_is_pending(
    bw: Client, bw_runtime: Runtime
) -> None:
    """§1: "A written record starts `pending` if anything must be computed for it, else `ready`";
    "only `ready` records are searchable"."""
    plain, vec = written_ids(bw, rec(text="plain one"), rec("bw_vec", text="to embed"))
    assert [fetch(bw, i)["processing"] for i in (plain, vec)] == ["ready", "pending"]
    assert recent(bw, "bw_vec") == []
    process(bw_runtime)
    assert fetch(bw, vec)["processing"] == "ready"
    assert len(recent(bw, "bw_vec")) == 1


def test_a_supplied_embedding_skips_the_embedding_step(bw: Client) -> None:
    """§3: "the record then skips the embedding step"."""
    (result,) = written(bw, rec("bw_vec", embedding=VECTOR, embedding_model=MODEL_ID))
    assert result["processing"] == "ready"


def test_supplied_enrichments_are_not_computed(bw: Client) -> None:
    """§1: processing is "each enrichment the collection requires whose value was not supplied by
    the writer"."""
    full = rec("bw_enriched", scores={"importance": 4}, annotations={"sentiment": {"label": "neutral"}})
    half = rec("bw_enriched", scores={"importance": 4})
    assert [r["processing"] for r in written(bw, full, half)] == ["ready", "pending"]


def test_a_failed_record_shows_its_error_and_is_never_searched(bw: Client, bw_runtime: Runtime) -> None:
    """§1: "failures are retried with backoff, then the record is `failed` (visible through
    `GET /records/{id}` with the error, never in search)"; an unconfigured provider makes "the
    records that need it stay `pending`, then `failed`"."""
    record_id = one_id(bw, rec("bw_remote", text="needs the remote model"))
    assert fetch(bw, record_id)["processing"] == "pending"
    process(bw_runtime, max_attempts=2)
    stored = fetch(bw, record_id)
    assert stored["processing"] == "failed"
    assert isinstance(stored["processing_error"], str) and stored["processing_error"]
    assert recent(bw, "bw_remote") == []


def test_a_client_enrichment_must_be_supplied(bw: Client) -> None:
    """§1 enrichments: `kind: client` — "the writer must supply annotations.region"."""
    ok_id = one_id(bw, rec("bw_client", annotations={"region": "eu"}))
    assert fetch(bw, ok_id)["processing"] == "ready"
    response = post_records(bw, rec("bw_client"))
    assert response.status_code == 422 or fetch(bw, response.get_json()["records"][0]["id"])[
        "processing"
    ] in (
        "pending",
        "failed",
    )


# --- keyed facts and lanes ------------------------------------------------------------------------


def test_of_three_values_written_into_a_slot_the_last_is_current(bw: Client) -> None:
    """§1: "The newest record written into a slot is its *current* value; earlier ones are
    superseded"."""
    a, b, c = (one_id(bw, fact(t)) for t in ("v1", "v2", "v3"))
    assert current_flags(bw, a, b, c) == [False, False, True]


def test_in_one_batch_the_last_into_a_slot_is_current(bw: Client) -> None:
    """§1: "Concurrent writers to one slot must end with exactly one current record"; write order
    within a batch is input order."""
    results = written(bw, fact("v1"), fact("v2"))
    assert current_flags(bw, *(r["id"] for r in results)) == [False, True]
    assert [r["current"] for r in results] == [False, True]


@pytest.mark.parametrize(
    "other",
    [
        pytest.param({"entity": "cust-2"}, id="entity"),
        pytest.param({"key": "other"}, id="key"),
        pytest.param({"status": "draft"}, id="status"),
    ],
)
def test_another_entity_key_or_status_is_another_slot(bw: Client, other: dict[str, Any]) -> None:
    """§1: "A slot is `(workspace, collection, entity, key, status)`." """
    a = one_id(bw, fact("v1"))
    b = one_id(bw, fact("v2", **other))
    assert current_flags(bw, a, b) == [True, True]


def test_keyed_records_in_two_collections_are_two_slots(bw: Client) -> None:
    """§1: the slot includes the collection."""
    a = one_id(bw, fact("v1"))
    b = one_id(bw, rec(key="plan", type="fact"))
    assert current_flags(bw, a, b) == [True, True]


def test_records_without_a_key_are_always_current(bw: Client) -> None:
    """§1: "Events (`key: null`) are always current." """
    ids = written_ids(bw, rec(), rec(), rec("bw_events"), rec("bw_events"))
    assert current_flags(bw, *ids) == [True] * 4


def test_a_newer_value_still_processing_hides_the_older(bw: Client, bw_runtime: Runtime) -> None:
    """§1: ""Newest" is decided by write order, never by processing state — a newer value still
    being processed hides the older one (spec: no stale fallback)."""
    old = one_id(
        bw, rec("bw_vec", type="fact", key="k", text="old", embedding=VECTOR, embedding_model=MODEL_ID)
    )
    new = one_id(bw, rec("bw_vec", type="fact", key="k", text="new"))
    assert fetch(bw, new)["processing"] == "pending"
    assert current_flags(bw, old, new) == [False, True]
    assert recent(bw, "bw_vec") == []
    process(bw_runtime)
    assert [h["text"] for h in recent(bw, "bw_vec")] == ["new"]


def test_retracting_the_current_value_restores_the_newest_earlier_one(bw: Client) -> None:
    """§1: "Retracting the current value makes the newest non-retracted earlier value current
    again." """
    a, b, c = (one_id(bw, fact(t)) for t in ("v1", "v2", "v3"))
    ok(retract(bw, b))
    assert current_flags(bw, a, b, c) == [False, False, True]
    ok(retract(bw, c))
    assert current_flags(bw, a, b, c) == [True, False, False]
    assert [h["text"] for h in recent(bw, "bw_facts")] == ["v1"]
    ok(retract(bw, a))
    assert current_flags(bw, a, b, c) == [False, False, False]
    assert recent(bw, "bw_facts") == []


def test_a_write_after_retraction_becomes_current(bw: Client) -> None:
    """§1: the newest record written into a slot is current."""
    a = one_id(bw, fact("v1"))
    ok(retract(bw, a))
    b = one_id(bw, fact("v2"))
    assert current_flags(bw, a, b) == [False, True]


# --- retract / approve / reject -------------------------------------------------------------------


def test_retract_answers_the_whole_record_and_hides_it_from_search(bw: Client) -> None:
    """§3: "`POST /records/{id}/retract` `{"reason": "..."}`"; §1: "a retracted record is never
    returned by any read"."""
    record_id = one_id(bw, rec(text="to hide"))
    body = ok(retract(bw, record_id, reason="typo"))
    assert set(body) == RECORD_FIELDS
    assert body["retraction_reason"] == "typo"
    assert body["retracted_at"] is not None
    assert body["current"] is False
    assert recent(bw, "bw_plain") == []


@pytest.mark.parametrize(
    "body",
    [
        pytest.param(None, id="no-body"),
        pytest.param({}, id="no-reason"),
        pytest.param({"reason": 5}, id="reason-number"),
        pytest.param({"reason": "x", "extra": 1}, id="unknown-key"),
    ],
)
@pytest.mark.parametrize("action", ["retract", "reject"])
def test_retract_and_reject_need_a_reason(bw: Client, body: Any, action: str) -> None:
    """§3: "`POST /records/{id}/retract` `{"reason": "..."}`; ... `POST /records/{id}/reject`
    `{"reason": "..."}`"."""
    record_id = one_id(bw, rec(status="draft"))
    error(bw.post(f"/records/{record_id}/{action}", json=body), 422)
    assert fetch(bw, record_id)["retracted_at"] is None


def test_approve_moves_a_draft_into_the_active_lane(bw: Client) -> None:
    """§1: "`POST /records/{id}/approve` moves a draft into the active lane, where it becomes the
    current active value of its slot." """
    live = one_id(bw, fact("live"))
    draft = one_id(bw, fact("proposal", status="draft"))
    assert current_flags(bw, live, draft) == [True, True]
    body = ok(bw.post(f"/records/{draft}/approve"))
    assert set(body) == RECORD_FIELDS
    assert body["status"] == "active" and body["current"] is True
    assert current_flags(bw, live, draft) == [False, True]
    assert [h["text"] for h in recent(bw, "bw_facts")] == ["proposal"]


def test_approving_an_older_draft_still_makes_it_the_current_active_value(bw: Client) -> None:
    """§1: an approved draft "becomes the current active value of its slot", even when the active
    value was written after the draft."""
    draft = one_id(bw, fact("proposal", status="draft"))
    live = one_id(bw, fact("live"))
    ok(bw.post(f"/records/{draft}/approve"))
    assert current_flags(bw, live, draft) == [False, True]


def test_retracting_an_approved_draft_restores_the_previous_active_value(bw: Client) -> None:
    """§1: "Retracting the current value makes the newest non-retracted earlier value current
    again." """
    live = one_id(bw, fact("live"))
    draft = one_id(bw, fact("proposal", status="draft"))
    ok(bw.post(f"/records/{draft}/approve"))
    ok(retract(bw, draft))
    assert current_flags(bw, live, draft) == [True, False]


def test_drafts_have_their_own_current_value(bw: Client) -> None:
    """§1 slot includes status: the newest draft is the current draft; rejecting it restores the
    earlier draft; the active lane is untouched."""
    live = one_id(bw, fact("live"))
    d1 = one_id(bw, fact("d1", status="draft"))
    d2 = one_id(bw, fact("d2", status="draft"))
    assert current_flags(bw, live, d1, d2) == [True, False, True]
    body = ok(bw.post(f"/records/{d2}/reject", json={"reason": "no"}))
    assert body["retraction_reason"] == "no" and body["retracted_at"] is not None
    assert current_flags(bw, live, d1, d2) == [True, True, False]


def test_approving_the_current_draft_restores_the_earlier_draft(bw: Client) -> None:
    """§1: the approved draft leaves the draft lane; the newest remaining draft becomes current
    there."""
    d1 = one_id(bw, fact("d1", status="draft"))
    d2 = one_id(bw, fact("d2", status="draft"))
    ok(bw.post(f"/records/{d2}/approve"))
    assert current_flags(bw, d1, d2) == [True, True]
    assert fetch(bw, d1)["status"] == "draft"


@pytest.mark.parametrize("action", ["approve", "reject"])
def test_approve_and_reject_apply_to_drafts_only(bw: Client, action: str) -> None:
    """§1: approve "moves a draft"; reject "retracts a draft"."""
    active = one_id(bw, rec())
    response = bw.post(f"/records/{active}/{action}", json={"reason": "x"} if action == "reject" else None)
    assert response.status_code in (409, 422), response.get_data(as_text=True)
    error(response, response.status_code)
    stored = fetch(bw, active)
    assert stored["status"] == "active" and stored["retracted_at"] is None


@pytest.mark.parametrize("action", ["approve", "reject", "retract"])
def test_actions_on_a_retracted_record_are_refused(bw: Client, action: str) -> None:
    """§1: a retracted record is gone from every read; it cannot be approved, rejected or retracted
    again."""
    draft = one_id(bw, rec(status="draft"))
    ok(retract(bw, draft, reason="first"))
    response = bw.post(f"/records/{draft}/{action}", json=None if action == "approve" else {"reason": "x"})
    assert response.status_code in (404, 409, 422), response.get_data(as_text=True)
    stored = fetch(bw, draft)
    assert stored["retraction_reason"] == "first" and stored["status"] == "draft"


def test_an_approved_event_draft_stays_current(bw: Client) -> None:
    """§1: "Events (`key: null`) are always current"; an approved draft event is active."""
    draft = one_id(bw, rec(status="draft"))
    body = ok(bw.post(f"/records/{draft}/approve"))
    assert body["status"] == "active" and body["current"] is True


# --- automatic links of node collections ----------------------------------------------------------


def edges_of(client: Client) -> list[dict[str, Any]]:
    return [fetch(client, h["id"]) for h in recent(client, "bw_edges")]


def test_a_node_writes_one_link_per_value(bw: Client) -> None:
    """§1 graph data: "Writing a node writes one link record per value (subject = node key,
    object = value, `derived_from: [node id]`, `depth: node depth + 1`)." """
    node = one_id(bw, rec("bw_nodes", key="api", content={"depends_on": ["db", "cache"]}))
    links = edges_of(bw)
    assert len(links) == 2
    assert all(link["derived_from"] == [node] and link["depth"] == 1 for link in links)
    assert all(link["collection"] == "bw_edges" for link in links)
    objects = walk(bw, "api", predicates=["depends_on"])
    assert sorted(json.dumps(objects).count(name) > 0 for name in ("db", "cache")) == [True, True]


def test_a_derived_node_links_one_deeper(bw: Client) -> None:
    """§1: "`depth: node depth + 1`"."""
    source = one_id(bw, rec())
    node = one_id(bw, rec("bw_nodes", key="api", content={"depends_on": ["db"]}, derived_from=[source]))
    (link,) = edges_of(bw)
    assert fetch(bw, node)["depth"] == 1
    assert link["depth"] == 2 and link["derived_from"] == [node]


def test_a_node_without_values_writes_no_link(bw: Client) -> None:
    """§1: "one link record per value" — no value, no link."""
    written(bw, rec("bw_nodes", key="a", content={"depends_on": []}), rec("bw_nodes", key="b"))
    assert recent(bw, "bw_edges") == []


def test_links_of_a_superseded_node_are_not_live(bw: Client) -> None:
    """§1: "Such a link is live only while that exact node record is current"."""
    one_id(bw, rec("bw_nodes", key="api", content={"depends_on": ["db"]}))
    one_id(bw, rec("bw_nodes", key="api", content={"depends_on": ["queue"]}))
    text = json.dumps(walk(bw, "api"))
    assert "queue" in text and '"db"' not in text


def test_links_of_a_retracted_node_are_not_live(bw: Client) -> None:
    """§1: "Such a link is live only while that exact node record is current"."""
    node = one_id(bw, rec("bw_nodes", key="api", content={"depends_on": ["db"]}))
    assert "db" in json.dumps(walk(bw, "api"))
    ok(retract(bw, node))
    assert '"db"' not in json.dumps(walk(bw, "api"))


def test_a_link_written_directly_is_live(bw: Client) -> None:
    """§1: "a link written directly is live as soon as it is processed"."""
    content = {"src": "api", "dst": "db", "rel": "depends_on"}
    one_id(bw, rec("bw_edges", text="api depends on db", content=content, entity="api"))
    assert "db" in json.dumps(walk(bw, "api"))


def test_a_restored_node_makes_its_links_live_again(bw: Client) -> None:
    """§1: "Such a link is live only while that exact node record is current" — retracting the
    newer node makes the older one current again, and with it its links."""
    one_id(bw, rec("bw_nodes", key="api", content={"depends_on": ["db"]}))
    newer = one_id(bw, rec("bw_nodes", key="api", content={"depends_on": ["queue"]}))
    ok(retract(bw, newer))
    text = json.dumps(walk(bw, "api"))
    assert '"db"' in text and "queue" not in text


def test_a_replayed_node_writes_no_second_set_of_links(bw: Client, bw_db: Engine, bw_ws: Tenant) -> None:
    """§3: a repeated `idempotency_key` "returns the original record instead of writing again"."""
    node = rec("bw_nodes", key="api", content={"depends_on": ["db", "cache"]}, idempotency_key="n")
    first = one_id(bw, node)
    assert count_records(bw_db, bw_ws) == 3
    assert one_id(bw, node) == first
    assert count_records(bw_db, bw_ws) == 3


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


@pytest.mark.parametrize(
    ("path", "body"),
    [
        pytest.param("/retract", {"reason": "a\x00b"}, id="retract-nul-reason"),
        pytest.param("/reject", {"reason": "a\x00b"}, id="reject-nul-reason"),
        pytest.param("/retract", {"reason": "r" * 100_000}, id="retract-long-reason"),
        pytest.param("/retract", [], id="retract-list-body"),
        pytest.param("/approve", {"unexpected": 1}, id="approve-with-body"),
    ],
)
def test_odd_action_bodies_never_500(bw: Client, path: str, body: Any) -> None:
    """§3 "Error body, every route": a request is answered in the one error shape or succeeds."""
    draft = one_id(bw, rec(status="draft"))
    response = bw.post(f"/records/{draft}{path}", json=body)
    assert response.status_code < 500, response.get_data(as_text=True)
    if response.status_code >= 400:
        error(response, response.status_code)


# --- more readings: replays, drafts of nodes, settings, admin keys --------------------------------


def test_links_of_a_draft_node_go_live_when_it_is_approved(bw: Client) -> None:
    """§1: automatic links are "live only while that exact node record is current" (spec: nodes
    count when "current, active"); an approved draft node becomes the current active value."""
    node = one_id(bw, rec("bw_nodes", key="api", status="draft", content={"depends_on": ["db"]}))
    assert walk(bw, "api")["hits"] == []
    ok(bw.post(f"/records/{node}/approve"))
    assert "db" in json.dumps(walk(bw, "api")["hits"])


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


def test_a_newer_value_that_failed_still_hides_the_older(bw: Client, bw_runtime: Runtime) -> None:
    """§1: ""Newest" is decided by write order, never by processing state"; failed records are
    "never in search"."""
    supplied = {"scores": {"importance": 3}, "annotations": {"sentiment": {"label": "neutral"}}}
    old = one_id(bw, rec("bw_enriched", type="fact", key="k", text="old", **supplied))
    new = one_id(bw, rec("bw_enriched", type="fact", key="k", text="new"))
    process(bw_runtime, max_attempts=1)
    assert fetch(bw, new)["processing"] == "failed"
    assert current_flags(bw, old, new) == [False, True]
    assert recent(bw, "bw_enriched") == []


def test_retracting_an_approved_draft_restores_the_value_written_after_it(bw: Client) -> None:
    """§1: approve "moves a draft into the active lane, where it becomes the current active value";
    retracting it "makes the newest non-retracted earlier value current again" — earlier in the
    lane, so the active value written after the draft but before its approval."""
    old = one_id(bw, fact("old"))
    draft = one_id(bw, fact("proposal", status="draft"))
    live = one_id(bw, fact("live"))
    ok(bw.post(f"/records/{draft}/approve"))
    assert current_flags(bw, old, live, draft) == [False, False, True]
    ok(retract(bw, draft))
    assert current_flags(bw, old, live, draft) == [False, True, False]


def test_concurrent_approvals_into_one_slot_leave_one_current(
    bw_app: Flask, bw_ws: Tenant, bw: Client
) -> None:
    """§1: "Concurrent writers to one slot must end with exactly one current record." """
    drafts = [one_id(bw, fact(f"d{i}", status="draft")) for i in range(4)]
    live = one_id(bw, fact("live"))

    def approve(index: int) -> int:
        client = Client(bw_app.test_client(), bw_ws)
        return int(client.post(f"/records/{drafts[index]}/approve").status_code)

    assert in_threads(4, approve) == [200] * 4
    assert sum(current_flags(bw, live, *drafts)) == 1
    assert len(recent(bw, "bw_facts")) == 1


def test_concurrent_writes_and_retractions_leave_one_current(
    bw_app: Flask, bw_ws: Tenant, bw: Client
) -> None:
    """§1: exactly one current record per slot, whatever the interleaving of writes and
    retractions."""
    ids = [one_id(bw, fact(f"v{i}")) for i in range(3)]

    def act(index: int) -> str | None:
        client = Client(bw_app.test_client(), bw_ws)
        if index % 2:
            ok(retract(client, ids[2 - index // 2]))
            return None
        return one_id(client, fact(f"new{index}"))

    new = [i for i in in_threads(4, act) if i is not None]
    flags = current_flags(bw, *ids, *new)
    assert sum(flags) == 1, flags


def test_get_shows_a_retracted_record_with_its_retraction(bw: Client) -> None:
    """§3: `GET /records/{id}` carries "`retracted_at` and `retraction_reason`" — the one read
    that still answers a retracted record (search never does)."""
    record_id = one_id(bw, rec())
    ok(retract(bw, record_id, reason="duplicate"))
    stored = fetch(bw, record_id)
    assert stored["retraction_reason"] == "duplicate" and stored["retracted_at"] is not None
    assert stored["current"] is False
