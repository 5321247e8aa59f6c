"""Blind audit of the write side (design §1, §3, §4), written from the design alone.

Every test quotes the design sentence it checks. Records go through `POST /records` of the `bw`
app (no in-process worker: processing runs only when a test calls `process`).
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
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
from tests.helpers import locs
from tests.helpers import ok
from tests.helpers import post_records
from tests.helpers import written
from tests.helpers import written_ids
from tests.integration.test_lanes import _in_parallel


def one_id(client: Client, record: dict[str, Any], query: str = "") -> str:
    (record_id,) = written_ids(client, record, query=query)
    return record_id


# --- authentication and workspaces --------------------------------------------------------------

ROUTES = [
    pytest.param("POST", "/records", {"records": [rec()]}, id="post-records"),
    pytest.param("GET", f"/records/{uuid4()}", None, id="get-record"),
    pytest.param("POST", f"/records/{uuid4()}/retract", {"reason": "x"}, id="retract"),
    pytest.param("POST", f"/records/{uuid4()}/approve", None, id="approve"),
    pytest.param("POST", f"/records/{uuid4()}/reject", {"reason": "x"}, id="reject"),
    pytest.param("POST", "/search", {"mode": "recent"}, id="search"),
    pytest.param("GET", "/views", None, id="views"),
    pytest.param("GET", "/context?q=hello", None, id="context"),
]


@pytest.mark.parametrize(("method", "path", "body"), ROUTES)
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


# --- POST /records: the envelope ----------------------------------------------------------------


def test_201_returns_id_processing_current_in_input_order(bw: Client) -> None:
    """§3: "`201` with `{"records": [{"id", "processing", "current"}]}` in input order." """
    response = post_records(bw, rec(text="one"), rec("bw_vec", text="two"), fact("three"))
    assert response.status_code == 201
    body = response.get_json()
    assert set(body) == {"records"}
    assert [set(r) for r in body["records"]] == [{"id", "processing", "current"}] * 3
    assert [fetch(bw, r["id"])["text"] for r in body["records"]] == ["one", "two", "three"]
    assert [r["processing"] for r in body["records"]] == ["ready", "pending", "ready"]


@pytest.mark.parametrize("size", [1, 1000])
def test_a_batch_of_1_to_1000_is_accepted(bw: Client, bw_db: Engine, bw_ws: Tenant, size: int) -> None:
    """§3: "`{"records": [RecordIn, …]}`, 1–1,000 records"."""
    assert len(written(bw, *[rec(text=f"t{i}") for i in range(size)])) == size
    assert count_records(bw_db, bw_ws) == size


@pytest.mark.parametrize("size", [0, 1001])
def test_a_batch_outside_1_to_1000_is_422(bw: Client, bw_db: Engine, bw_ws: Tenant, size: int) -> None:
    """§3: "1–1,000 records"."""
    error(post_records(bw, *[rec(text=f"t{i}") for i in range(size)]), 422)
    assert count_records(bw_db, bw_ws) == 0


def test_every_problem_is_listed_by_index_and_nothing_is_written(
    bw: Client, bw_db: Engine, bw_ws: Tenant
) -> None:
    """§3: "written atomically: any invalid record → `422` listing every problem by index, and
    nothing is written." """
    batch = [
        rec(text="fine"),
        rec(entity=""),
        rec(text="fine too"),
        {**rec(), "text": "   ", "bogus": 1},
        rec(collection="nope"),
    ]
    found = locs(post_records(bw, *batch))
    assert ["records", 1, "entity"] in found
    assert ["records", 3, "text"] in found
    assert ["records", 3, "bogus"] in found
    assert ["records", 4, "collection"] in found
    assert not any(loc[:2] in (["records", 0], ["records", 2]) for loc in found), found
    assert count_records(bw_db, bw_ws) == 0


def test_an_invalid_record_after_a_node_writes_no_automatic_link(
    bw: Client, bw_db: Engine, bw_ws: Tenant
) -> None:
    """§3: "any invalid record → `422` ... and nothing is written" (automatic links included)."""
    node = rec("bw_nodes", key="n1", content={"depends_on": ["a", "b"]})
    error(post_records(bw, node, rec(entity="")), 422)
    assert count_records(bw_db, bw_ws) == 0


# --- RecordIn: one rule at a time ---------------------------------------------------------------


def drop(record: dict[str, Any], name: str) -> dict[str, Any]:
    return {k: v for k, v in record.items() if k != name}


INVALID = [
    pytest.param(drop(rec(), "collection"), ["collection"], id="collection-missing"),
    pytest.param(rec(collection="nope"), ["collection"], id="collection-unknown"),
    pytest.param(rec(collection_version=7), ["collection_version"], id="version-unknown"),
    pytest.param(drop(rec(), "entity"), ["entity"], id="entity-missing"),
    pytest.param(rec(entity=""), ["entity"], id="entity-empty"),
    pytest.param(rec(entity="e" * 257), ["entity"], id="entity-257"),
    pytest.param(rec(entity=5), ["entity"], id="entity-number"),
    pytest.param(drop(rec(), "type"), ["type"], id="type-missing"),
    pytest.param(rec(type="reflection"), ["type"], id="type-undeclared"),
    pytest.param(drop(rec(), "text"), ["text"], id="text-missing"),
    pytest.param(rec(text=""), ["text"], id="text-empty"),
    pytest.param(rec(text=" \n\t "), ["text"], id="text-blank"),
    pytest.param(rec(text="x" * 32769), ["text"], id="text-32769"),
    pytest.param(rec(text=None), ["text"], id="text-null"),
    pytest.param(rec(content=[1, 2]), ["content"], id="content-list"),
    pytest.param(rec(content="text"), ["content"], id="content-string"),
    pytest.param(rec(occurred_at="2026-07-01T10:00:00"), ["occurred_at"], id="occurred-naive"),
    pytest.param(rec(occurred_at="yesterday"), ["occurred_at"], id="occurred-garbage"),
    pytest.param(rec(occurred_at=1751364000), ["occurred_at"], id="occurred-number"),
    pytest.param(rec(scores={"importance": "high"}), ["scores"], id="score-string"),
    pytest.param(rec(scores={"importance": True}), ["scores"], id="score-boolean"),
    pytest.param(rec(scores=[1]), ["scores"], id="scores-list"),
    pytest.param(rec(annotations=["x"]), ["annotations"], id="annotations-list"),
    pytest.param(rec(status="archived"), ["status"], id="status-unknown"),
    pytest.param(rec(status="retracted"), ["status"], id="status-retracted"),
    pytest.param(rec(derived_from=[str(uuid4())]), ["derived_from"], id="derived-unknown"),
    pytest.param(rec(derived_from=["not-a-uuid"]), ["derived_from"], id="derived-not-uuid"),
    pytest.param(rec(derived_from="x"), ["derived_from"], id="derived-string"),
    pytest.param(rec(depth=1), ["depth"], id="depth-not-writable"),
    pytest.param(rec(id=str(uuid4())), ["id"], id="id-not-writable"),
    pytest.param(rec(created_at="2026-07-01T10:00:00Z"), ["created_at"], id="created-not-writable"),
    pytest.param(rec(processing="ready"), ["processing"], id="processing-not-writable"),
    pytest.param(rec(bogus=1), ["bogus"], id="unknown-key"),
    pytest.param(rec("bw_facts", key=None), ["key"], id="keyed-true-without-key"),
    pytest.param(drop(rec("bw_facts"), "key"), ["key"], id="keyed-true-key-absent"),
    pytest.param(rec("bw_events", key="k"), ["key"], id="keyed-false-with-key"),
    pytest.param(rec(idempotency_key=5), ["idempotency_key"], id="idempotency-key-number"),
    pytest.param(rec("bw_vec", embedding=VECTOR), [], id="embedding-without-model"),
    pytest.param(rec("bw_vec", embedding_model=MODEL_ID), [], id="model-without-embedding"),
    pytest.param(
        rec("bw_vec", embedding=VECTOR, embedding_model="other-model"), ["embedding_model"], id="wrong-model"
    ),
    pytest.param(
        rec("bw_vec", embedding=VECTOR[:100], embedding_model=MODEL_ID), ["embedding"], id="wrong-dimension"
    ),
    pytest.param(
        rec("bw_vec", embedding=[*VECTOR[:383], "x"], embedding_model=MODEL_ID),
        ["embedding"],
        id="not-floats",
    ),
]


@pytest.mark.parametrize(("record", "loc"), INVALID)
def test_each_invalid_recordin_is_422_at_its_loc(
    bw: Client, bw_db: Engine, bw_ws: Tenant, record: dict[str, Any], loc: list[Any]
) -> None:
    """§1 records table and §3 `RecordIn`: every rule; "any invalid record → `422` listing every
    problem by index"; "Unknown keys are rejected"."""
    found = locs(post_records(bw, rec(text="ok"), record))
    assert any(f[: 2 + len(loc)] == ["records", 1, *loc] for f in found), found
    assert count_records(bw_db, bw_ws) == 0


@pytest.mark.parametrize(
    "record",
    [
        pytest.param(rec(entity="e" * 256), id="entity-256"),
        pytest.param(rec(entity="e"), id="entity-1"),
        pytest.param(rec(text="x" * 32768), id="text-32768"),
        pytest.param(rec(key="any-slot"), id="keyed-any-with-key"),
        pytest.param(rec(key=None), id="keyed-any-null-key"),
        pytest.param(rec(occurred_at="2026-07-01T10:00:00+02:00"), id="occurred-offset"),
        pytest.param(rec(scores={"a": 1, "b": -2.5, "c": 0}), id="scores-numbers"),
        pytest.param(rec(annotations={"x": [1, {"y": None}], "z": "s"}), id="annotations-any-json"),
        pytest.param(rec(run_id="run-42"), id="run-id"),
        pytest.param(rec(status="draft"), id="draft"),
        pytest.param(rec("bw_events"), id="keyed-false-no-key"),
        pytest.param(rec("bw_retired", collection_version=1), id="pinned-inactive-version"),
    ],
)
def test_valid_edge_values_are_written(bw: Client, record: dict[str, Any]) -> None:
    """§1 records table: entity "1–256 chars"; text "at most `MAX_RECORD_CHARS` (default 32,768)";
    keyed "any (default)"; a writer may pin a version."""
    record_id = one_id(bw, record)
    stored = fetch(bw, record_id)
    for name in ("entity", "text", "key", "scores", "annotations", "run_id", "status"):
        if name in record:
            assert stored[name] == record[name], name


def test_a_collection_without_active_version_needs_a_pin(bw: Client) -> None:
    """§1: `collection_version` is "the active one unless the writer pins a version"; with no
    active version there is nothing to write under."""
    found = locs(post_records(bw, rec("bw_retired")))
    assert any(loc[:2] == ["records", 0] for loc in found), found


@pytest.mark.parametrize(
    ("content", "needle"),
    [
        pytest.param({"meta": {"s": 5}}, "meta", id="string-at-path"),
        pytest.param({"old": {"s": 5}}, "old", id="string-at-fallback"),
        pytest.param({"sa": ["a", 1]}, "sa", id="string-array-item"),
        pytest.param({"sa": "a"}, "sa", id="string-array-scalar"),
        pytest.param({"n": "5"}, "n", id="number-string"),
        pytest.param({"n": True}, "n", id="number-boolean"),
        pytest.param({"i": 1.5}, "i", id="integer-fraction"),
        pytest.param({"i": "1"}, "i", id="integer-string"),
        pytest.param({"b": "true"}, "b", id="boolean-string"),
        pytest.param({"b": 1}, "b", id="boolean-number"),
        pytest.param({"d": "tomorrow"}, "d", id="datetime-garbage"),
        pytest.param({"d": "2026-07-01T10:00:00"}, "d", id="datetime-naive"),
    ],
)
def test_a_declared_field_of_the_wrong_type_is_422_naming_index_field_and_path(
    bw: Client, bw_db: Engine, bw_ws: Tenant, content: dict[str, Any], needle: str
) -> None:
    """§2 collections: "every declared field present in `content` (via its path or a fallback path)
    must have the declared type, else the write is rejected with a `422` naming the record index,
    field and path." """
    found = error(post_records(bw, rec(), rec(content=content)), 422)["details"]
    mine = [d for d in found if d["loc"][:2] == ["records", 1]]
    assert mine, found
    assert any(needle in json.dumps(d) for d in mine), mine
    assert count_records(bw_db, bw_ws) == 0


def test_fields_are_checked_against_the_pinned_version(bw: Client) -> None:
    """§1 collections: "Records store the version they were written under, and every field read
    uses the declaration of *that* version." (v1 declares `channel: integer`, v2 a string)."""
    v2 = rec("customer_events", content={"channel": "email"})
    assert fetch(bw, one_id(bw, v2))["collection_version"] == 2
    error(post_records(bw, {**v2, "collection_version": 1}), 422)
    v1 = one_id(bw, rec("customer_events", content={"channel": 3}, collection_version=1))
    assert fetch(bw, v1)["collection_version"] == 1


def test_absent_declared_fields_are_fine(bw: Client) -> None:
    """§2: only fields "present in `content`" are type-checked."""
    one_id(bw, rec(content={"unrelated": {"x": [1, "a"]}}))


# --- content, timestamps, defaults --------------------------------------------------------------


def test_content_is_returned_exactly_as_written(bw: Client) -> None:
    """§1: `content` — "the original payload, preserved byte-for-byte in meaning (returned exactly
    as written)"."""
    content = {
        "z": 1,
        "a": [1, 2.5, None, True, "ü€😀", {"nested": {}}],
        "big": 12345678901234567,
        "tiny": 1e-300,
        "neg": -0.1,
        "s": 'line\nbreak "quoted" \\ slash',
        "meta": {"s": "x"},
        "empty": [],
    }
    got = fetch(bw, one_id(bw, rec(content=content)))["content"]
    assert got == content


def test_occurred_at_defaults_to_created_at_and_last_accessed_starts_there(bw: Client) -> None:
    """§1: `occurred_at` "defaults to `created_at`"; `last_accessed` "starts at `created_at`"."""
    stored = fetch(bw, one_id(bw, rec()))
    assert stored["occurred_at"] == stored["created_at"]
    assert stored["last_accessed"] == stored["created_at"]


def test_occurred_at_keeps_the_instant(bw: Client) -> None:
    """§1: `occurred_at` — "when it happened; timezone required"."""
    from datetime import datetime

    stored = fetch(bw, one_id(bw, rec(occurred_at="2026-07-01T10:00:00+02:00")))
    parsed = datetime.fromisoformat(stored["occurred_at"].replace("Z", "+00:00"))
    assert parsed == datetime.fromisoformat("2026-07-01T08:00:00+00:00")
    assert parsed.tzinfo is not None


def test_get_record_returns_the_whole_record_with_defaults(bw: Client) -> None:
    """§3: "`GET /records/{id}` — the whole record: every field ... plus `processing`,
    `processing_error`, `current` (boolean), `retracted_at` and `retraction_reason`." """
    record_id = one_id(bw, rec(text="hello", entity="cust-9"))
    stored = fetch(bw, record_id)
    assert set(stored) == RECORD_FIELDS
    expected = {
        "id": record_id,
        "collection": "bw_plain",
        "collection_version": 1,
        "entity": "cust-9",
        "type": "note",
        "key": None,
        "text": "hello",
        "status": "active",
        "depth": 0,
        "derived_from": [],
        "run_id": None,
        "processing": "ready",
        "processing_error": None,
        "current": True,
        "retracted_at": None,
        "retraction_reason": None,
        "scores": {},
        "annotations": {},
    }
    assert {k: stored[k] for k in expected} == expected
    assert stored["content"] in ({}, None)


@pytest.mark.parametrize("bad", ["not-a-uuid", "12345", "0b9e3c52-6f4e-4c1d-9a57-3f0d2b1e8c44"])
def test_get_an_unknown_record_is_404(bw: Client, bad: str) -> None:
    """§3: status codes "plus ... `404`"; an unknown id is `404`."""
    error(bw.get(f"/records/{bad}"), 404)


# --- idempotency ---------------------------------------------------------------------------------


def test_a_repeated_idempotency_key_returns_the_original(bw: Client, bw_db: Engine, bw_ws: Tenant) -> None:
    """§3: "a repeated `idempotency_key` in the same workspace returns the original record instead
    of writing again"."""
    record = rec(text="once", idempotency_key="abc")
    first = written(bw, record)
    again = written(bw, record)
    assert again[0]["id"] == first[0]["id"]
    assert count_records(bw_db, bw_ws) == 1


def test_a_replay_inside_a_larger_batch_writes_only_the_new_ones(
    bw: Client, bw_db: Engine, bw_ws: Tenant
) -> None:
    """§3 idempotency: the original record is returned, in input order, next to new ones."""
    original = one_id(bw, rec(text="once", idempotency_key="abc"))
    results = written(bw, rec(text="new"), rec(text="once", idempotency_key="abc"))
    assert results[1]["id"] == original
    assert results[0]["id"] != original
    assert count_records(bw_db, bw_ws) == 2


@pytest.mark.parametrize(
    "change",
    [
        pytest.param({"text": "different"}, id="text"),
        pytest.param({"entity": "other"}, id="entity"),
        pytest.param({"content": {"x": 1}}, id="content"),
        pytest.param({"scores": {"importance": 3}}, id="scores"),
        pytest.param({"status": "draft"}, id="status"),
    ],
)
def test_the_same_key_with_a_different_payload_is_409(
    bw: Client, bw_db: Engine, bw_ws: Tenant, change: dict[str, Any]
) -> None:
    """§3: "the same key with a different payload → `409`"."""
    record = rec(text="once", idempotency_key="abc")
    written(bw, record)
    error(post_records(bw, {**record, **change}), 409)
    assert count_records(bw_db, bw_ws) == 1


def test_a_409_in_a_batch_writes_nothing(bw: Client, bw_db: Engine, bw_ws: Tenant) -> None:
    """§3: "written atomically" — a conflicting record stops the whole batch."""
    written(bw, rec(text="once", idempotency_key="abc"))
    error(post_records(bw, rec(text="new"), rec(text="changed", idempotency_key="abc")), 409)
    assert count_records(bw_db, bw_ws) == 1


def test_a_replayed_fact_does_not_supersede_a_newer_value(bw: Client) -> None:
    """§3: a replay "returns the original record instead of writing again" — it is no new write,
    so the slot's newer value stays current."""
    first = one_id(bw, fact("v1", idempotency_key="f1"))
    second = one_id(bw, fact("v2"))
    (replayed,) = written(bw, fact("v1", idempotency_key="f1"))
    assert replayed["id"] == first
    assert replayed["current"] is False
    assert current_flags(bw, first, second) == [False, True]


# --- ?wait=true ------------------------------------------------------------------------------------


def test_wait_returns_ready_states_at_once_when_nothing_is_pending(bw: Client) -> None:
    """§3: "`?wait=true` ... returns once those records are processed"."""
    started = time.monotonic()
    results = written(bw, rec(), fact("x"), query="?wait=true")
    assert [r["processing"] for r in results] == ["ready", "ready"]
    assert time.monotonic() - started < 5


def test_wait_returns_when_the_timeout_passes(bw: Client) -> None:
    """§3: "returns once those records are processed or the timeout passes, with their states"."""
    started = time.monotonic()
    results = written(bw, rec(), rec("bw_vec"), query="?wait=true&timeout=1")
    elapsed = time.monotonic() - started
    assert [r["processing"] for r in results] == ["ready", "pending"]
    assert 0.9 <= elapsed < 5


def test_without_wait_the_answer_does_not_wait(bw: Client) -> None:
    """§3: waiting happens only with `?wait=true`."""
    started = time.monotonic()
    results = written(bw, rec("bw_vec"))
    assert results[0]["processing"] == "pending"
    assert time.monotonic() - started < 5


@pytest.mark.parametrize("timeout", ["61", "60.5", "-1", "abc", "1e9", "nan", "inf"])
def test_a_timeout_outside_its_range_is_422(bw: Client, bw_db: Engine, bw_ws: Tenant, timeout: str) -> None:
    """§3: "`timeout`, default 10 s, max 60 s"."""
    error(post_records(bw, rec(), query=f"?wait=true&timeout={timeout}"), 422)
    assert count_records(bw_db, bw_ws) == 0


def test_the_maximum_timeout_is_accepted(bw: Client) -> None:
    """§3: "max 60 s" — 60 itself is allowed."""
    assert written(bw, rec(), query="?wait=true&timeout=60")[0]["processing"] == "ready"


# --- processing -------------------------------------------------------------------------------------


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


# --- keyed facts and lanes ----------------------------------------------------------------------


def test_the_newest_write_into_a_slot_is_current(bw: Client) -> None:
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
def test_a_slot_is_collection_entity_key_and_status(bw: Client, other: dict[str, Any]) -> None:
    """§1: "A slot is `(workspace, collection, entity, key, status)`." """
    a = one_id(bw, fact("v1"))
    b = one_id(bw, fact("v2", **other))
    assert current_flags(bw, a, b) == [True, True]


def test_keyed_records_in_two_collections_are_two_slots(bw: Client) -> None:
    """§1: the slot includes the collection."""
    a = one_id(bw, fact("v1"))
    b = one_id(bw, rec(key="plan", type="fact"))
    assert current_flags(bw, a, b) == [True, True]


def test_events_are_always_current(bw: Client) -> None:
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


# --- derived records ------------------------------------------------------------------------------


def test_depth_is_one_plus_the_deepest_source(bw: Client) -> None:
    """§1: `depth` — "0 for ingested evidence; a derived record is `1 + max(depth of
    derived_from)`"; `derived_from` "non-empty exactly when depth > 0"."""
    a, b = written_ids(bw, rec(text="a"), rec(text="b"))
    c = one_id(bw, rec(text="c", derived_from=[a]))
    d = one_id(bw, rec(text="d", derived_from=[c, b]))
    e = one_id(bw, rec(text="e", derived_from=[d, a]))
    depths = [fetch(bw, i)["depth"] for i in (a, b, c, d, e)]
    assert depths == [0, 0, 1, 2, 3]
    assert fetch(bw, d)["derived_from"] == [c, b]
    assert fetch(bw, a)["derived_from"] == []


def test_derived_from_an_empty_list_is_depth_zero(bw: Client) -> None:
    """§1: `derived_from` is "non-empty exactly when depth > 0"."""
    stored = fetch(bw, one_id(bw, rec(derived_from=[])))
    assert stored["depth"] == 0 and stored["derived_from"] == []


def test_derived_from_across_collections(bw: Client) -> None:
    """§1: `derived_from` — "same workspace, must exist" (any collection)."""
    source = one_id(bw, fact("f"))
    stored = fetch(bw, one_id(bw, rec("bw_events", derived_from=[source], run_id="r1")))
    assert stored["depth"] == 1 and stored["run_id"] == "r1"


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
    "record",
    [
        pytest.param(rec(text="a\x00b"), id="nul-in-text"),
        pytest.param(rec(entity="a\x00b"), id="nul-in-entity"),
        pytest.param(rec(content={"x": "a\x00b"}), id="nul-in-content"),
        pytest.param(rec(content={"a\x00": 1}), id="nul-in-content-key"),
        pytest.param(rec(annotations={"x": "a\x00b"}), id="nul-in-annotations"),
        pytest.param(fact("v", key="k\x00"), id="nul-in-key"),
        pytest.param(rec(idempotency_key="k\x00"), id="nul-in-idempotency-key"),
        pytest.param(rec(run_id="r\x00"), id="nul-in-run-id"),
        pytest.param(rec(content={"i": 10**30}), id="integer-field-beyond-bigint"),
        pytest.param(rec(content={"i": 2**63}), id="integer-field-2-63"),
        pytest.param(rec(content={"n": 10**400}), id="number-field-huge-int"),
        pytest.param(rec(content={"x": 10**400}), id="undeclared-huge-int"),
        pytest.param(rec(content={"n": None}), id="declared-null"),
        pytest.param(rec(content={"meta": "flat"}), id="path-through-a-string"),
        pytest.param(rec(content={"sa": [None]}), id="string-array-null-item"),
        pytest.param(rec(content={"d": "0001-01-01T00:00:00Z"}), id="datetime-year-1"),
        pytest.param(rec(content={"d": "9999-12-31T23:59:59+00:00"}), id="datetime-year-9999"),
        pytest.param(rec(occurred_at="0001-01-01T00:00:00+01:00"), id="occurred-before-year-1-utc"),
        pytest.param(rec(occurred_at="9999-12-31T23:59:59-05:00"), id="occurred-after-9999-utc"),
        pytest.param(rec(scores={"importance": 1e308}), id="score-max-double"),
        pytest.param(rec(scores={"importance": 10**400}), id="score-huge-int"),
        pytest.param(rec(scores={"": 1}), id="score-empty-name"),
        pytest.param(rec(collection_version=2**63), id="version-beyond-bigint"),
        pytest.param(rec(collection_version=True), id="version-boolean"),
        pytest.param(rec("bw_vec", embedding=[1e308] * 384, embedding_model=MODEL_ID), id="embedding-huge"),
        pytest.param(rec("bw_vec", embedding=[0.0] * 384, embedding_model=MODEL_ID), id="embedding-zero"),
        pytest.param(rec(entity="   "), id="entity-blank"),
        pytest.param(rec(idempotency_key="k" * 5000), id="idempotency-key-long"),
    ],
)
def test_odd_values_are_written_or_refused_never_a_500(bw: Client, record: dict[str, Any]) -> None:
    """TEAM error rule / §3: "Error body, every route" with the listed status codes — an odd value
    is either written (`201`) or refused (`422` at its record), never a server error."""
    response = post_records(bw, record)
    if response.status_code == 201:
        return
    found = locs(response)
    assert any(loc[:2] == ["records", 0] for loc in found), found


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


# --- idempotency inside one batch and under concurrency ------------------------------------------


def test_one_key_twice_in_one_batch_writes_one_record(bw: Client, bw_db: Engine, bw_ws: Tenant) -> None:
    """§3: "a repeated `idempotency_key` in the same workspace returns the original record instead
    of writing again" — also when the repeat is in the same request."""
    record = rec(text="once", idempotency_key="dup")
    response = post_records(bw, record, record)
    if response.status_code == 201:
        first, second = response.get_json()["records"]
        assert first["id"] == second["id"]
        assert count_records(bw_db, bw_ws) == 1
    else:
        error(response, response.status_code)
        assert response.status_code in (409, 422)
        assert count_records(bw_db, bw_ws) == 0


def test_one_key_with_two_payloads_in_one_batch_is_refused(bw: Client, bw_db: Engine, bw_ws: Tenant) -> None:
    """§3: "the same key with a different payload → `409`"."""
    response = post_records(bw, rec(text="a", idempotency_key="dup"), rec(text="b", idempotency_key="dup"))
    assert response.status_code in (409, 422), response.get_data(as_text=True)
    error(response, response.status_code)
    assert count_records(bw_db, bw_ws) == 0


def in_threads(count: int, action: Callable[[int], Any]) -> list[Any]:
    """`action(i)` for i in 0 … count-1, each on its own thread, released together; the results in
    that order (`_in_parallel` fails with whatever a thread raised)."""
    results: list[Any] = [None] * count

    def work(index: int) -> None:
        results[index] = action(index)

    _in_parallel(count, work)
    return results


def test_concurrent_writers_to_one_slot_end_with_one_current(
    bw_app: Flask, bw_ws: Tenant, bw: Client
) -> None:
    """§1: "Concurrent writers to one slot must end with exactly one current record." """

    def write(index: int) -> str:
        return one_id(Client(bw_app.test_client(), bw_ws), fact(f"v{index}"))

    ids = in_threads(6, write)
    assert sum(current_flags(bw, *ids)) == 1
    assert len(recent(bw, "bw_facts")) == 1


def test_concurrent_replays_of_one_key_write_one_record(bw_app: Flask, bw_ws: Tenant, bw_db: Engine) -> None:
    """§3: "a repeated `idempotency_key` in the same workspace returns the original record instead
    of writing again" — also when the repeats race."""

    def write(index: int) -> Any:
        response = post_records(Client(bw_app.test_client(), bw_ws), rec(text="once", idempotency_key="race"))
        return response.status_code, response.get_json()

    results = in_threads(6, write)
    assert [status for status, _ in results] == [201] * 6, results
    assert len({body["records"][0]["id"] for _, body in results}) == 1
    assert count_records(bw_db, bw_ws) == 1


def test_concurrent_retractions_of_the_current_value_leave_one_current(
    bw_app: Flask, bw_ws: Tenant, bw: Client
) -> None:
    """§1: "Retracting the current value makes the newest non-retracted earlier value current
    again"; exactly one current per slot."""
    ids = [one_id(bw, fact(f"v{i}")) for i in range(5)]

    def retract_one(index: int) -> int:
        return int(retract(Client(bw_app.test_client(), bw_ws), ids[index + 1]).status_code)

    statuses = in_threads(4, retract_one)
    assert statuses == [200] * 4
    assert current_flags(bw, *ids) == [True, False, False, False, False]


# --- more readings: replays, drafts of nodes, settings, admin keys --------------------------------


def test_a_replay_of_a_retracted_original_returns_it_unchanged(
    bw: Client, bw_db: Engine, bw_ws: Tenant
) -> None:
    """§3: "a repeated `idempotency_key` ... returns the original record instead of writing again"
    — even after the original was retracted (it is not current)."""
    record = rec(text="once", idempotency_key="gone")
    original = one_id(bw, record)
    ok(retract(bw, original))
    (replayed,) = written(bw, record)
    assert replayed["id"] == original and replayed["current"] is False
    assert count_records(bw_db, bw_ws) == 1


def test_a_replay_that_spells_out_the_defaults_is_the_same_payload(
    bw: Client, bw_db: Engine, bw_ws: Tenant
) -> None:
    """§3: "the same key with a different payload → `409`" — the same values spelled out (status
    `active`, empty scores/annotations/derived_from, another key order) are the same payload."""
    first = one_id(bw, rec(text="x", content={"p": 1, "q": 2}, idempotency_key="same"))
    spelled = rec(
        text="x",
        content={"q": 2, "p": 1},
        idempotency_key="same",
        status="active",
        scores={},
        annotations={},
        derived_from=[],
    )
    assert one_id(bw, spelled) == first
    assert count_records(bw_db, bw_ws) == 1


def test_links_of_a_draft_node_go_live_when_it_is_approved(bw: Client) -> None:
    """§1: automatic links are "live only while that exact node record is current" (spec: nodes
    count when "current, active"); an approved draft node becomes the current active value."""
    node = one_id(bw, rec("bw_nodes", key="api", status="draft", content={"depends_on": ["db"]}))
    assert walk(bw, "api")["hits"] == []
    ok(bw.post(f"/records/{node}/approve"))
    assert "db" in json.dumps(walk(bw, "api")["hits"])


def test_max_record_chars_is_a_setting(bw_runtime: Runtime, bw_ws: Tenant, bw_db: Engine) -> None:
    """§1: text "at most `MAX_RECORD_CHARS` (default 32,768)"; settings are environment variables."""
    from memseek.settings import Settings
    from tests.helpers import with_settings

    limit = Settings.from_env({"MAX_RECORD_CHARS": "10"}).max_record_chars
    client = client_for(with_settings(bw_runtime, max_record_chars=limit), bw_ws)
    assert locs(post_records(client, rec(text="x" * 11))) == [["records", 0, "text"]]
    one_id(client, rec(text="x" * 10))
    assert count_records(bw_db, bw_ws) == 1


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


def test_wait_defaults_to_ten_seconds(bw: Client) -> None:
    """§3: "`?wait=true` (with `timeout`, default 10 s, max 60 s)"."""
    started = time.monotonic()
    (result,) = written(bw, rec("bw_vec"), query="?wait=true")
    elapsed = time.monotonic() - started
    assert result["processing"] == "pending"
    assert 9.5 <= elapsed < 14


def test_get_shows_a_retracted_record_with_its_retraction(bw: Client) -> None:
    """§3: `GET /records/{id}` carries "`retracted_at` and `retraction_reason`" — the one read
    that still answers a retracted record (search never does)."""
    record_id = one_id(bw, rec())
    ok(retract(bw, record_id, reason="duplicate"))
    stored = fetch(bw, record_id)
    assert stored["retraction_reason"] == "duplicate" and stored["retracted_at"] is not None
    assert stored["current"] is False
