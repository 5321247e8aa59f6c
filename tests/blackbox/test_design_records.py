"""Design §3 `POST /records`: the body, every RecordIn field and rule, atomicity, idempotency, wait."""

from __future__ import annotations

import json
import time
from datetime import datetime
from decimal import Decimal
from typing import Any
from uuid import UUID
from uuid import uuid4

import pytest
from flask import Flask
from sqlalchemy.engine import Engine

from memseek.models.local import MODEL_ID
from memseek.runtime import Runtime
from memseek.write.worker import start_background_worker
from tests.blackbox.design_support import VECTOR
from tests.blackbox.design_support import count_records
from tests.blackbox.design_support import rec
from tests.conftest import Client
from tests.conftest import Tenant
from tests.conftest import client_for
from tests.helpers import error
from tests.helpers import fetch
from tests.helpers import locs
from tests.helpers import post_records
from tests.helpers import with_settings
from tests.helpers import written
from tests.helpers import written_ids

# --- the envelope and the 201 shape -------------------------------------------------------------


def test_201_lists_id_processing_current_per_record_in_input_order(bw: Client) -> None:
    response = post_records(bw, rec(text="first"), rec("bw_vec", text="second"), rec(text="third"))
    assert response.status_code == 201
    results = response.get_json()
    assert list(results) == ["records"]
    assert [set(r) for r in results["records"]] == [{"id", "processing", "current"}] * 3
    assert [r["processing"] for r in results["records"]] == ["ready", "pending", "ready"]
    assert all(r["current"] is True for r in results["records"])
    texts = [fetch(bw, r["id"])["text"] for r in results["records"]]
    assert texts == ["first", "second", "third"]


def test_ids_are_server_generated_time_ordered_uuids(bw: Client) -> None:
    first = written_ids(bw, rec(), rec())
    (later,) = written_ids(bw, rec())
    parsed = [UUID(i) for i in [*first, later]]
    assert all(u.version == 7 for u in parsed)
    assert len(set(parsed)) == 3
    assert parsed[2] > parsed[0] and parsed[2] > parsed[1]


@pytest.mark.parametrize(
    "body",
    [
        pytest.param([], id="not-an-object"),
        pytest.param({}, id="no-records"),
        pytest.param({"records": []}, id="zero-records"),
        pytest.param({"records": {"collection": "bw_plain"}}, id="records-not-a-list"),
        pytest.param(
            {
                "records": [{"collection": "bw_plain", "entity": "e", "type": "note", "text": "t"}],
                "atomic": False,
            },
            id="unknown-top-level-key",
        ),
        pytest.param({"records": ["a string"]}, id="record-not-an-object"),
    ],
)
def test_an_invalid_envelope_is_422(bw: Client, bw_db: Engine, bw_ws: Tenant, body: Any) -> None:
    error(bw.post("/records", json=body), 422)
    assert count_records(bw_db, bw_ws) == 0


def test_at_most_1000_records_per_request(bw: Client, bw_db: Engine, bw_ws: Tenant) -> None:
    error(post_records(bw, *[rec(text=f"r{i}") for i in range(1001)]), 422)
    assert count_records(bw_db, bw_ws) == 0
    assert len(written(bw, *[rec(text=f"r{i}") for i in range(1000)])) == 1000
    assert count_records(bw_db, bw_ws) == 1000


def test_the_largest_valid_request_is_not_too_large(bw: Client, bw_db: Engine, bw_ws: Tenant) -> None:
    """1,000 records of MAX_RECORD_CHARS characters each fit the default request limit."""
    text = ("memory " * 4682)[:32768]
    assert len(written(bw, *[rec(text=text, content={"n": i}) for i in range(1000)])) == 1000
    assert count_records(bw_db, bw_ws) == 1000


def test_a_body_that_is_not_json_is_422(bw: Client) -> None:
    response = bw.raw.post(
        "/records", data="{not json", headers={**bw.tenant.headers, "Content-Type": "application/json"}
    )
    error(response, 422)


def test_non_finite_numbers_in_the_body_are_422(bw: Client, bw_db: Engine, bw_ws: Tenant) -> None:
    for literal in ("NaN", "Infinity", "-Infinity", "1e999"):
        raw = (
            '{"records": [{"collection": "bw_plain", "entity": "e", "type": "note", "text": "t", '
            f'"scores": {{"importance": {literal}}}}}]}}'
        )
        response = bw.raw.post(
            "/records", data=raw, headers={**bw.tenant.headers, "Content-Type": "application/json"}
        )
        error(response, 422)
    assert count_records(bw_db, bw_ws) == 0


# --- RecordIn: one rule at a time ---------------------------------------------------------------


def refused_at(
    client: Client, engine: Engine, workspace: Tenant, record: dict[str, Any], loc: list[Any]
) -> None:
    """Writing `record` alone is a 422 with a detail at `records[0].<loc>`, and nothing is written."""
    found = locs(post_records(client, record))
    assert any(found_loc[: 2 + len(loc)] == ["records", 0, *loc] for found_loc in found), found
    assert count_records(engine, workspace) == 0


LONG = "x" * 257


@pytest.mark.parametrize(
    ("record", "loc"),
    [
        pytest.param(rec(collection="nope"), ["collection"], id="collection-unknown"),
        pytest.param(
            {k: v for k, v in rec().items() if k != "collection"}, ["collection"], id="collection-missing"
        ),
        pytest.param(rec(collection_version=9), ["collection_version"], id="collection-version-unknown"),
        pytest.param(rec(collection_version=0), ["collection_version"], id="collection-version-zero"),
        pytest.param(rec(collection_version="1"), ["collection_version"], id="collection-version-string"),
        pytest.param({k: v for k, v in rec().items() if k != "entity"}, ["entity"], id="entity-missing"),
        pytest.param(rec(entity=""), ["entity"], id="entity-empty"),
        pytest.param(rec(entity=LONG), ["entity"], id="entity-257-chars"),
        pytest.param(rec(entity=5), ["entity"], id="entity-number"),
        pytest.param(rec(type="reflection"), ["type"], id="type-undeclared"),
        pytest.param({k: v for k, v in rec().items() if k != "type"}, ["type"], id="type-missing"),
        pytest.param(rec("bw_facts", key=None), ["key"], id="key-required-when-keyed-true"),
        pytest.param(rec("bw_events", key="k"), ["key"], id="key-forbidden-when-keyed-false"),
        pytest.param(rec(key=""), ["key"], id="key-empty"),
        pytest.param(rec(key=LONG), ["key"], id="key-257-chars"),
        pytest.param({k: v for k, v in rec().items() if k != "text"}, ["text"], id="text-missing"),
        pytest.param(rec(text=""), ["text"], id="text-empty"),
        pytest.param(rec(text=" \n\t "), ["text"], id="text-blank"),
        pytest.param(rec(text=5), ["text"], id="text-number"),
        pytest.param(rec(content=[1, 2]), ["content"], id="content-list"),
        pytest.param(rec(content="{}"), ["content"], id="content-string"),
        pytest.param(rec(occurred_at="2026-01-01T10:00:00"), ["occurred_at"], id="occurred-at-no-timezone"),
        pytest.param(rec(occurred_at="last tuesday"), ["occurred_at"], id="occurred-at-not-a-time"),
        pytest.param(rec(occurred_at=1767261600), ["occurred_at"], id="occurred-at-number"),
        pytest.param(rec(scores={"importance": "high"}), ["scores"], id="score-string"),
        pytest.param(rec(scores={"importance": True}), ["scores"], id="score-boolean"),
        pytest.param(rec(scores={"importance": None}), ["scores"], id="score-null"),
        pytest.param(rec(scores=[1]), ["scores"], id="scores-list"),
        pytest.param(rec(annotations=["x"]), ["annotations"], id="annotations-list"),
        pytest.param(rec(status="deleted"), ["status"], id="status-unknown"),
        pytest.param(rec(derived_from=["not-a-uuid"]), ["derived_from"], id="derived-from-not-uuid"),
        pytest.param(rec(derived_from=[str(uuid4())]), ["derived_from"], id="derived-from-unknown"),
        pytest.param(rec(derived_from="x"), ["derived_from"], id="derived-from-string"),
        pytest.param(rec(run_id=""), ["run_id"], id="run-id-empty"),
        pytest.param(rec(run_id=7), ["run_id"], id="run-id-number"),
        pytest.param(rec(idempotency_key=""), ["idempotency_key"], id="idempotency-key-empty"),
        pytest.param(rec(embedding=VECTOR), [], id="embedding-without-model"),
        pytest.param(rec(embedding_model=MODEL_ID), [], id="model-without-embedding"),
        pytest.param(rec(colour="red"), ["colour"], id="unknown-key"),
    ],
)
def test_each_recordin_rule_is_a_422_at_the_record_and_field(
    bw: Client, bw_db: Engine, bw_ws: Tenant, record: dict[str, Any], loc: list[Any]
) -> None:
    refused_at(bw, bw_db, bw_ws, record, loc)


def test_entity_of_256_characters_and_every_optional_field_are_accepted(bw: Client) -> None:
    (parent,) = written_ids(bw, rec())
    full = rec(
        "bw_plain",
        entity="e" * 256,
        key="k" * 256,
        type="fact",
        text="all fields",
        collection_version=1,
        content={"meta": {"s": "x"}},
        occurred_at="2026-01-02T03:04:05+02:00",
        scores={"importance": 7, "urgency": -1.5},
        annotations={"region": {"code": "eu"}, "n": 1},
        status="draft",
        derived_from=[parent],
        run_id="run-1",
        idempotency_key="idem-1",
    )
    (record_id,) = written_ids(bw, full)
    record = fetch(bw, record_id)
    assert record["entity"] == "e" * 256 and record["key"] == "k" * 256
    assert record["scores"] == {"importance": 7, "urgency": -1.5}
    assert record["annotations"] == {"region": {"code": "eu"}, "n": 1}
    assert (record["status"], record["run_id"], record["derived_from"]) == ("draft", "run-1", [parent])
    assert datetime.fromisoformat(record["occurred_at"]) == datetime.fromisoformat(
        "2026-01-02T01:04:05+00:00"
    )


def test_keyed_any_takes_records_with_and_without_a_key(bw: Client) -> None:
    fact, event = written(bw, rec(key="k"), rec(key=None))
    assert fetch(bw, fact["id"])["key"] == "k"
    assert fetch(bw, event["id"])["key"] is None


# --- text length: MAX_RECORD_CHARS --------------------------------------------------------------


def test_text_is_at_most_32768_characters_by_default(bw: Client) -> None:
    assert fetch(bw, written_ids(bw, rec(text="é" * 32768))[0])["text"] == "é" * 32768
    assert locs(post_records(bw, rec(text="é" * 32769))) == [["records", 0, "text"]]


def test_max_record_chars_is_honoured(bw_runtime: Runtime, bw_ws: Tenant) -> None:
    client = client_for(with_settings(bw_runtime, max_record_chars=10), bw_ws)
    assert post_records(client, rec(text="0123456789")).status_code == 201
    assert locs(post_records(client, rec(text="0123456789A"))) == [["records", 0, "text"]]


# --- declared fields: types, paths, fallback paths ----------------------------------------------


@pytest.mark.parametrize(
    ("content", "loc"),
    [
        pytest.param({"meta": {"s": 5}}, ["meta", "s"], id="string-at-path"),
        pytest.param({"old": {"s": False}}, ["old", "s"], id="string-at-first-fallback"),
        pytest.param({"s": ["x"]}, ["s"], id="string-at-second-fallback"),
        pytest.param({"sa": "x"}, ["sa"], id="string-array-scalar"),
        pytest.param({"sa": ["x", 1]}, ["sa"], id="string-array-number-item"),
        pytest.param({"n": "1.5"}, ["n"], id="number-string"),
        pytest.param({"n": True}, ["n"], id="number-boolean"),
        pytest.param({"i": 1.5}, ["i"], id="integer-fraction"),
        pytest.param({"i": "3"}, ["i"], id="integer-string"),
        pytest.param({"b": "true"}, ["b"], id="boolean-string"),
        pytest.param({"b": 1}, ["b"], id="boolean-number"),
        pytest.param({"d": "tomorrow"}, ["d"], id="datetime-not-a-time"),
        pytest.param({"d": "2026-01-01T00:00:00"}, ["d"], id="datetime-no-timezone"),
        pytest.param({"d": 1767225600}, ["d"], id="datetime-number"),
    ],
)
def test_a_declared_field_with_the_wrong_type_is_422_naming_index_field_and_path(
    bw: Client, bw_db: Engine, bw_ws: Tenant, content: dict[str, Any], loc: list[str]
) -> None:
    response = post_records(bw, rec(text="ok"), rec(content=content))
    (detail,) = error(response, 422)["details"]
    assert detail["loc"] == ["records", 1, "content", *loc]
    assert {"meta": "s", "old": "s"}.get(loc[0], loc[0]) in detail["msg"]
    assert ".".join(loc) in detail["msg"]
    assert count_records(bw_db, bw_ws) == 0


def test_declared_fields_of_the_right_type_are_accepted(bw: Client) -> None:
    content = {
        "meta": {"s": "x"},
        "sa": ["a", "b"],
        "n": 1.5,
        "i": 3,
        "b": False,
        "d": "2026-01-01T00:00:00+01:00",
        "undeclared": {"anything": [1, "x"]},
    }
    (record_id,) = written_ids(bw, rec(content=content), rec(content={"n": 2, "sa": [], "i": -7}))[:1]
    assert fetch(bw, record_id)["content"] == content


def test_a_fallback_path_is_only_read_when_the_path_is_absent(bw: Client) -> None:
    # the path holds a string, so the (wrongly typed) fallback values are never read
    assert post_records(bw, rec(content={"meta": {"s": "ok"}, "old": {"s": 5}, "s": 6})).status_code == 201
    # path absent: the first fallback present decides
    assert post_records(bw, rec(content={"old": {"s": "ok"}, "s": 6})).status_code == 201


def test_fields_are_checked_against_the_pinned_collection_version(bw: Client) -> None:
    # customer_events v1 declares channel as an integer, v2 (active) as a string
    v1 = rec("customer_events", collection_version=1, content={"channel": "email"})
    assert locs(post_records(bw, v1)) == [["records", 0, "content", "channel"]]
    (pinned,) = written_ids(bw, rec("customer_events", collection_version=1, content={"channel": 3}))
    record = fetch(bw, pinned)
    assert (record["collection"], record["collection_version"]) == ("customer_events", 1)
    response = post_records(bw, rec("customer_events", content={"channel": 3}))
    assert locs(response) == [["records", 0, "content", "channel"]]
    (active,) = written_ids(bw, rec("customer_events", content={"meta": {"channel": "email"}}))
    assert fetch(bw, active)["collection_version"] == 2


def test_a_collection_without_an_active_version_takes_only_pinned_writes(bw: Client) -> None:
    assert locs(post_records(bw, rec("bw_retired"))) == [["records", 0, "collection"]]
    (pinned,) = written_ids(bw, rec("bw_retired", collection_version=1))
    assert fetch(bw, pinned)["collection_version"] == 1


def test_the_collection_version_type_must_be_declared_by_that_version(bw: Client) -> None:
    # v2 declares `note`, v1 only `event`
    assert post_records(bw, rec("customer_events", type="note")).status_code == 201
    assert locs(post_records(bw, rec("customer_events", collection_version=1, type="note"))) == [
        ["records", 0, "type"]
    ]


# --- all or nothing -----------------------------------------------------------------------------


def test_every_problem_of_every_record_is_listed_by_index_and_nothing_is_written(
    bw: Client, bw_db: Engine, bw_ws: Tenant
) -> None:
    response = post_records(
        bw,
        rec(type="unknown", content={"n": "x"}),
        rec(text="fine"),
        rec(entity="", text="", colour=1),
        rec("bw_facts", key=None, derived_from=[str(uuid4())]),
    )
    found = locs(response)
    assert ["records", 0, "type"] in found and ["records", 0, "content", "n"] in found
    assert not [loc for loc in found if loc[:2] == ["records", 1]]
    for field in ("entity", "text", "colour"):
        assert any(loc[:3] == ["records", 2, field] for loc in found), (field, found)
    assert any(loc[:3] == ["records", 3, "key"] for loc in found)
    assert count_records(bw_db, bw_ws) == 0


def test_a_missing_parent_fails_the_whole_request(bw: Client, bw_db: Engine, bw_ws: Tenant) -> None:
    response = post_records(bw, rec(text="good"), rec(derived_from=[str(uuid4())]))
    assert [loc[:3] for loc in locs(response)] == [["records", 1, "derived_from"]]
    assert count_records(bw_db, bw_ws) == 0


# --- odd values: refused with a 422 or stored and read back, never a 500 ---------------------------


@pytest.mark.parametrize(
    ("record", "loc"),
    [
        pytest.param(rec(idempotency_key="a\u0000b"), ["idempotency_key"], id="nul-in-idempotency-key"),
        pytest.param(rec(run_id="a\u0000b"), ["run_id"], id="nul-in-run-id"),
        pytest.param(rec(entity="a\u0000b"), ["entity"], id="nul-in-entity"),
        pytest.param(rec(key="a\u0000b"), ["key"], id="nul-in-key"),
        pytest.param(rec(text="a\u0000b"), ["text"], id="nul-in-text"),
        pytest.param(rec(content={"a\u0000": 1}), ["content"], id="nul-in-content-key"),
        pytest.param(rec(content={"a": "\ud800"}), ["content"], id="surrogate-in-content-value"),
        pytest.param(rec(content={"\ud800": 1}), ["content"], id="surrogate-in-content-key"),
        pytest.param(rec(annotations={"p": "\udfff"}), ["annotations"], id="surrogate-in-annotation"),
        pytest.param(rec(scores={"a\u0000": 1}), ["scores"], id="nul-in-score-name"),
        pytest.param(rec(scores={"a": 10**400}), ["scores"], id="score-overflows"),
        pytest.param(
            rec(occurred_at="0001-01-01T00:00:00+14:00"), ["occurred_at"], id="before-year-1-in-utc"
        ),
        pytest.param(
            rec(occurred_at="9999-12-31T23:59:59-14:00"), ["occurred_at"], id="after-year-9999-in-utc"
        ),
    ],
)
def test_unstorable_values_are_422(
    bw: Client, bw_db: Engine, bw_ws: Tenant, record: dict[str, Any], loc: list[str]
) -> None:
    refused_at(bw, bw_db, bw_ws, record, loc)


@pytest.mark.parametrize(
    "content",
    [
        pytest.param({"i": 10**30}, id="integer-field-beyond-64-bits"),
        pytest.param({"n": 10**400}, id="number-field-beyond-double"),
        pytest.param({"n": 1.7976931348623157e308, "i": -(2**63)}, id="extremes"),
        pytest.param({"d": "0001-01-01T00:00:00Z"}, id="datetime-field-year-1"),
        pytest.param({"d": "9999-12-31T23:59:59.999999Z"}, id="datetime-field-year-9999"),
        pytest.param({"meta": {"s": "x" * 100_000}}, id="long-string-field"),
        pytest.param({"sa": ["x"] * 5000}, id="long-string-array-field"),
    ],
)
def test_extreme_declared_field_values_are_stored_or_refused_never_a_500(
    bw: Client, content: dict[str, Any]
) -> None:
    response = post_records(bw, rec(content=content))
    if response.status_code == 422:
        assert locs(response)[0][:3] == ["records", 0, "content"]
        return
    assert response.status_code == 201, response.get_data(as_text=True)[:300]
    stored = bw.get(f"/records/{response.get_json()['records'][0]['id']}").get_data(as_text=True)
    exact = json.loads(stored, parse_float=Decimal, parse_int=Decimal)["content"]
    assert exact == json.loads(
        json.dumps(content), parse_float=Decimal, parse_int=Decimal
    )  # the same numbers
    listing = {
        "mode": "structured",
        "scope": {"collections": ["bw_plain"]},
        "order_by": [{"field": "n"}, {"field": "i"}, {"field": "d"}],
        "fields": ["s", "d"],
    }
    assert bw.post("/search", json=listing).status_code == 200


def test_a_reason_with_a_nul_character_is_422(bw: Client) -> None:
    (record_id,) = written_ids(bw, rec())
    error(bw.post(f"/records/{record_id}/retract", json={"reason": "a\u0000b"}), 422)
    assert fetch(bw, record_id)["retracted_at"] is None


# --- values as stored -------------------------------------------------------------------------


def test_content_is_returned_exactly_as_written(bw: Client) -> None:
    content = {
        "text": "Ünïcödé ✓ — 中文 😀",
        "nested": {"list": [1, 2.5, "three", None, True, {"deep": []}]},
        "big": 12345678901234567890123,
        "float": 0.1,
        "negative": -0.0001,
        "exp": 1.5e-10,
        "empty": {},
        "quote": "\"<&>'",
        "zero": 0,
        "flag": False,
        "null": None,
    }
    (record_id,) = written_ids(bw, rec(content=content))
    assert fetch(bw, record_id)["content"] == content


def test_content_defaults_to_an_empty_object(bw: Client) -> None:
    (record_id,) = written_ids(bw, rec())
    record = fetch(bw, record_id)
    assert (record["content"], record["scores"], record["annotations"]) == ({}, {}, {})
    assert (record["derived_from"], record["depth"], record["run_id"]) == ([], 0, None)
    assert record["status"] == "active"


def test_occurred_at_defaults_to_created_at_and_keeps_the_instant(bw: Client) -> None:
    default, given = written_ids(bw, rec(), rec(occurred_at="2026-03-01T12:00:00-05:00"))
    record = fetch(bw, default)
    assert record["occurred_at"] == record["created_at"]
    assert datetime.fromisoformat(record["created_at"]).tzinfo is not None
    stored = datetime.fromisoformat(fetch(bw, given)["occurred_at"])
    assert stored == datetime.fromisoformat("2026-03-01T17:00:00+00:00")
    assert stored.utcoffset() is not None


def test_last_accessed_starts_at_created_at(bw: Client) -> None:
    record = fetch(bw, written_ids(bw, rec())[0])
    assert record["last_accessed"] == record["created_at"]


def test_depth_is_one_plus_the_deepest_parent(bw: Client) -> None:
    (a,) = written_ids(bw, rec(text="evidence a"))
    (b,) = written_ids(bw, rec(text="derived b", derived_from=[a]))
    (c,) = written_ids(bw, rec(text="derived c", derived_from=[b]))
    (d,) = written_ids(bw, rec(text="derived d", derived_from=[a, c]))
    assert [fetch(bw, i)["depth"] for i in (a, b, c, d)] == [0, 1, 2, 3]
    assert fetch(bw, d)["derived_from"] == [a, c]


def test_derived_from_must_be_unique(bw: Client) -> None:
    (a,) = written_ids(bw, rec())
    assert any(
        loc[:3] == ["records", 0, "derived_from"] for loc in locs(post_records(bw, rec(derived_from=[a, a])))
    )


def test_a_parent_in_another_workspace_is_answered_like_an_unknown_one(bw: Client, bw_other: Client) -> None:
    (foreign,) = written_ids(bw_other, rec())
    unknown = str(uuid4())
    foreign_error = error(post_records(bw, rec(derived_from=[foreign])), 422)
    unknown_error = error(post_records(bw, rec(derived_from=[unknown])), 422)
    assert foreign_error["details"][0]["loc"] == unknown_error["details"][0]["loc"]
    assert foreign_error["details"][0]["msg"].replace(foreign, "ID") == unknown_error["details"][0][
        "msg"
    ].replace(unknown, "ID")


# --- idempotency --------------------------------------------------------------------------------


def test_a_repeated_idempotency_key_returns_the_original_record(
    bw: Client, bw_db: Engine, bw_ws: Tenant
) -> None:
    body = rec(text="once", idempotency_key="import-42")
    (first,) = written(bw, body)
    (again,) = written(bw, body)
    assert again == first
    assert count_records(bw_db, bw_ws) == 1


def test_an_idempotency_key_with_a_different_payload_is_409_and_writes_nothing(
    bw: Client, bw_db: Engine, bw_ws: Tenant
) -> None:
    written(bw, rec(text="once", idempotency_key="import-43"))
    response = post_records(bw, rec(text="fresh"), rec(text="changed", idempotency_key="import-43"))
    error(response, 409, "conflict")
    assert count_records(bw_db, bw_ws) == 1


def test_idempotency_keys_are_per_workspace(bw: Client, bw_other: Client) -> None:
    (mine,) = written(bw, rec(idempotency_key="shared-key"))
    (theirs,) = written(bw_other, rec(idempotency_key="shared-key"))
    assert mine["id"] != theirs["id"]
    (theirs_changed,) = written(bw_other, rec(idempotency_key="mine-only", text="other text"))
    assert theirs_changed["id"] != mine["id"]


def test_a_replay_inside_a_mixed_request_writes_only_the_new_records(
    bw: Client, bw_db: Engine, bw_ws: Tenant
) -> None:
    (first,) = written(bw, rec(text="old", idempotency_key="k-1"))
    replay, new = written(bw, rec(text="old", idempotency_key="k-1"), rec(text="new", idempotency_key="k-2"))
    assert replay["id"] == first["id"] and new["id"] != first["id"]
    assert count_records(bw_db, bw_ws) == 2


# --- ?wait=true ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "query",
    [
        pytest.param("?wait=true&timeout=61", id="timeout-above-60"),
        pytest.param("?wait=true&timeout=-1", id="timeout-negative"),
        pytest.param("?wait=true&timeout=soon", id="timeout-not-a-number"),
        pytest.param("?wait=maybe", id="wait-not-boolean"),
        pytest.param("?wiat=true", id="unknown-parameter"),
    ],
)
def test_invalid_wait_parameters_are_422(bw: Client, bw_db: Engine, bw_ws: Tenant, query: str) -> None:
    error(post_records(bw, rec(), query=query), 422)
    assert count_records(bw_db, bw_ws) == 0


def test_wait_with_the_longest_timeout_returns_at_once_when_nothing_is_pending(bw: Client) -> None:
    started = time.monotonic()
    (result,) = written(bw, rec(), query="?wait=true&timeout=60")
    assert result["processing"] == "ready"
    assert time.monotonic() - started < 5


def test_wait_returns_the_pending_state_when_the_timeout_passes(bw: Client) -> None:
    started = time.monotonic()
    (result,) = written(bw, rec("bw_vec"), query="?wait=true&timeout=1")
    elapsed = time.monotonic() - started
    assert result["processing"] == "pending"
    assert 0.9 <= elapsed < 5
    assert fetch(bw, result["id"])["processing"] == "pending"


def test_wait_timeout_defaults_to_10_seconds(bw: Client) -> None:
    started = time.monotonic()
    (result,) = written(bw, rec("bw_vec"), query="?wait=true")
    elapsed = time.monotonic() - started
    assert result["processing"] == "pending"
    assert 9.5 <= elapsed < 15


def test_wait_returns_once_the_records_are_processed(
    bw_runtime: Runtime, bw_app: Flask, bw_ws: Tenant
) -> None:
    worker = start_background_worker(bw_runtime)
    try:
        client = Client(bw_app.test_client(), bw_ws)
        started = time.monotonic()
        results = written(
            client, rec("bw_vec", text="embed me"), rec(text="plain"), query="?wait=true&timeout=30"
        )
        assert [r["processing"] for r in results] == ["ready", "ready"]
        assert time.monotonic() - started < 25
    finally:
        worker.stop()


@pytest.mark.parametrize("value", ["true", "True", "1"])
def test_wait_accepts_the_usual_spellings_of_true(bw: Client, value: str) -> None:
    started = time.monotonic()
    (result,) = written(bw, rec("bw_vec"), query=f"?wait={value}&timeout=0.5")
    assert result["processing"] == "pending" and 0.4 <= time.monotonic() - started < 5


def test_without_wait_the_write_does_not_wait(bw: Client) -> None:
    started = time.monotonic()
    (result,) = written(bw, rec("bw_vec"), query="?wait=false")
    assert result["processing"] == "pending" and time.monotonic() - started < 5


# --- supplied embeddings ------------------------------------------------------------------------


def test_a_supplied_embedding_of_the_collections_model_skips_the_embedding_step(bw: Client) -> None:
    (result,) = written(bw, rec("bw_vec", embedding=VECTOR, embedding_model=MODEL_ID))
    assert result["processing"] == "ready"
    assert fetch(bw, result["id"])["processing"] == "ready"


def test_the_model_named_in_models_yaml_is_the_embedding_model_id(bw: Client) -> None:
    """conf/models.yaml says `model: all-MiniLM-L6-v2`: a writer may name the model that way."""
    (result,) = written(bw, rec("bw_vec", embedding=VECTOR, embedding_model="all-MiniLM-L6-v2"))
    assert result["processing"] == "ready"


@pytest.mark.parametrize(
    ("record", "loc"),
    [
        pytest.param(
            rec("bw_vec", embedding=VECTOR, embedding_model="text-embedding-3-small"),
            ["embedding_model"],
            id="other-model",
        ),
        pytest.param(
            rec("bw_vec", embedding=VECTOR, embedding_model="default"),
            ["embedding_model"],
            id="alias-is-not-a-model-id",
        ),
        pytest.param(
            rec("bw_vec", embedding=VECTOR[:383], embedding_model=MODEL_ID),
            ["embedding"],
            id="too-few-dimensions",
        ),
        pytest.param(
            rec("bw_vec", embedding=[*VECTOR, 0.1], embedding_model=MODEL_ID),
            ["embedding"],
            id="too-many-dimensions",
        ),
        pytest.param(
            rec("bw_vec", embedding=["x"] * 384, embedding_model=MODEL_ID), ["embedding"], id="not-numbers"
        ),
        pytest.param(rec("bw_vec", embedding=[], embedding_model=MODEL_ID), ["embedding"], id="empty"),
        pytest.param(
            rec("bw_plain", embedding=VECTOR, embedding_model=MODEL_ID),
            ["embedding"],
            id="collection-without-embedding",
        ),
    ],
)
def test_a_supplied_embedding_that_does_not_fit_is_422(
    bw: Client, bw_db: Engine, bw_ws: Tenant, record: dict[str, Any], loc: list[str]
) -> None:
    refused_at(bw, bw_db, bw_ws, record, loc)


def test_a_non_finite_embedding_value_is_422(bw: Client) -> None:
    body = {"records": [rec("bw_vec", embedding_model=MODEL_ID)]}
    raw = json.dumps(body)[:-3] + ', "embedding": [' + ", ".join(["0.1"] * 383 + ["NaN"]) + "]}]}"
    response = bw.raw.post(
        "/records", data=raw, headers={**bw.tenant.headers, "Content-Type": "application/json"}
    )
    error(response, 422)
