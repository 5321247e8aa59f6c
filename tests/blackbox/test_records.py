"""`POST /records`: the batch envelope, each RecordIn rule, every problem listed by index, all or
nothing, and odd values refused with a 422 or stored, never a 500 (design §1 "Records", §3).
"""

from __future__ import annotations

import json
from datetime import datetime
from decimal import Decimal
from typing import Any
from uuid import UUID
from uuid import uuid4

import pytest
from sqlalchemy.engine import Engine

from memseek.models.local import MODEL_ID
from memseek.runtime import Runtime
from tests.blackbox.design_support import VECTOR
from tests.blackbox.design_support import count_records
from tests.blackbox.design_support import fact
from tests.blackbox.design_support import one_id
from tests.blackbox.design_support import rec
from tests.blackbox.design_support import refused_at
from tests.blackbox.support import invalid
from tests.blackbox.support import note
from tests.blackbox.support import search
from tests.conftest import Client
from tests.conftest import Tenant
from tests.conftest import client_for
from tests.helpers import details
from tests.helpers import error
from tests.helpers import fetch
from tests.helpers import locs
from tests.helpers import post_records
from tests.helpers import with_settings
from tests.helpers import written
from tests.helpers import written_ids

# --- the envelope and the 201 shape ---------------------------------------------------------------


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


NOTES = {"collections": ["sx_notes"]}
RECENT: dict[str, Any] = {"mode": "recent", "scope": NOTES}


@pytest.mark.parametrize("count", [pytest.param(0, id="0"), pytest.param(1001, id="1001")])
def test_a_batch_outside_1_to_1000_is_refused_at_records(sx: Client, count: int) -> None:
    """Design §3: "`POST /records` — `{"records": [RecordIn, …]}`, 1–1,000 records"; the error's
    `loc` is the list itself, and nothing is written."""
    response = post_records(sx, *(note(f"n{i}") for i in range(count)))
    err = invalid(response, "records")
    assert all(d["loc"] == ["records"] for d in err["details"]), err
    assert search(sx, {**RECENT, "k": 1})["hits"] == []


# --- RecordIn: one rule at a time -----------------------------------------------------------------


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


PARENT = "0190a4f2-7b1c-7def-8abc-0123456789ab"


@pytest.mark.parametrize(
    ("record", "loc", "msg"),
    [
        pytest.param(rec(text=" \n"), ["text"], "must not be blank", id="text-blank"),
        pytest.param(rec(entity="  "), ["entity"], "must not be blank", id="entity-blank"),
        pytest.param(rec("bw_facts", key="\t"), ["key"], "must not be blank", id="key-blank"),
        pytest.param(rec(run_id=" "), ["run_id"], "must not be blank", id="run-id-blank"),
        pytest.param(
            rec(derived_from=[PARENT, PARENT]), ["derived_from"], "ids must be unique", id="parents-twice"
        ),
        pytest.param(
            rec("bw_vec", embedding=VECTOR),
            [],
            "embedding and embedding_model are given together or not at all",
            id="embedding-without-model",
        ),
        pytest.param(
            rec(occurred_at=1751364000),
            ["occurred_at"],
            "expected an ISO 8601 timestamp string with a timezone",
            id="occurred-at-number",
        ),
    ],
)
def test_a_broken_rule_is_told_in_the_users_words(
    bw: Client, record: dict[str, Any], loc: list[Any], msg: str
) -> None:
    """Design §1: text "required, non-blank"; the house's errors tell the user what to do, not
    the validator's internals (a regular expression, pydantic's "Value error, " prefix)."""
    found = details(post_records(bw, record))
    assert {"loc": ["records", 0, *loc], "msg": msg} in found, found


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


@pytest.mark.parametrize(
    "name",
    [
        "id",
        "depth",
        "created_at",
        "last_accessed",
        "processing",
        "current",
        "retracted_at",
        "retraction_reason",
    ],
)
def test_server_owned_fields_cannot_be_written(bw: Client, bw_db: Engine, bw_ws: Tenant, name: str) -> None:
    """§1: `id` is "server-generated", `depth` is computed from `derived_from`, `created_at` is
    "when it was written"; §3 lists the `RecordIn` keys and "Unknown keys are rejected"."""
    values = {"id": str(uuid4()), "depth": 0, "processing": "ready", "current": True}
    value = values.get(
        name, "2026-01-01T00:00:00Z" if name.endswith("_at") or name == "last_accessed" else "x"
    )
    assert locs(post_records(bw, rec(**{name: value}))) == [["records", 0, name]]
    assert count_records(bw_db, bw_ws) == 0


# --- text length: MAX_RECORD_CHARS ----------------------------------------------------------------


def test_text_is_at_most_32768_characters_by_default(bw: Client) -> None:
    assert fetch(bw, written_ids(bw, rec(text="é" * 32768))[0])["text"] == "é" * 32768
    assert locs(post_records(bw, rec(text="é" * 32769))) == [["records", 0, "text"]]


def test_max_record_chars_is_honoured(bw_runtime: Runtime, bw_ws: Tenant) -> None:
    client = client_for(with_settings(bw_runtime, max_record_chars=10), bw_ws)
    assert post_records(client, rec(text="0123456789")).status_code == 201
    assert locs(post_records(client, rec(text="0123456789A"))) == [["records", 0, "text"]]


def test_max_record_chars_is_a_setting(bw_runtime: Runtime, bw_ws: Tenant, bw_db: Engine) -> None:
    """§1: text "at most `MAX_RECORD_CHARS` (default 32,768)"; settings are environment variables."""
    from memseek.settings import Settings
    from tests.helpers import with_settings

    limit = Settings.from_env({"MAX_RECORD_CHARS": "10"}).max_record_chars
    client = client_for(with_settings(bw_runtime, max_record_chars=limit), bw_ws)
    assert locs(post_records(client, rec(text="x" * 11))) == [["records", 0, "text"]]
    one_id(client, rec(text="x" * 10))
    assert count_records(bw_db, bw_ws) == 1


# --- every problem, by index; all or nothing ------------------------------------------------------


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


@pytest.mark.parametrize(
    ("record", "expected"),
    [
        pytest.param(
            rec(type="unknown", colour=1),
            [["records", 0, "colour"], ["records", 0, "type"]],
            id="unknown-key-and-undeclared-type",
        ),
        pytest.param(
            rec(entity="", content={"n": "not a number"}),
            [["records", 0, "entity"], ["records", 0, "content", "n"]],
            id="blank-entity-and-mistyped-declared-field",
        ),
        pytest.param(
            rec("bw_facts", key=None, text="", scores={"a": "x"}),
            [["records", 0, "text"], ["records", 0, "scores", "a"], ["records", 0, "key"]],
            id="blank-text-bad-score-and-missing-key",
        ),
        pytest.param(
            rec("bw_events", key="k", run_id=""),
            [["records", 0, "run_id"], ["records", 0, "key"]],
            id="blank-run-id-and-forbidden-key",
        ),
    ],
)
def test_every_problem_of_one_record_is_listed(
    bw: Client, bw_db: Engine, bw_ws: Tenant, record: dict[str, Any], expected: list[list[Any]]
) -> None:
    found = [loc[: len(want)] for loc in locs(post_records(bw, record)) for want in expected]
    for want in expected:
        assert want in found, (want, found)
    assert count_records(bw_db, bw_ws) == 0


def test_shape_problems_of_an_unknown_collection_are_still_listed(bw: Client) -> None:
    found = locs(post_records(bw, rec("bw_nowhere", entity="", colour=1)))
    assert ["records", 0, "entity"] in [loc[:3] for loc in found]
    assert ["records", 0, "colour"] in [loc[:3] for loc in found]


def test_problems_are_listed_by_record_index(bw: Client) -> None:
    response = post_records(bw, rec(type="unknown"), rec(entity=""), rec(type="unknown", colour=1))
    indexes = [loc[1] for loc in locs(response)]
    assert indexes == sorted(indexes) and set(indexes) == {0, 1, 2}


def test_a_valid_record_next_to_an_invalid_one_reports_nothing(bw: Client) -> None:
    found = locs(post_records(bw, rec(text="fine"), rec(type="unknown", colour=1)))
    assert not [loc for loc in found if loc[1] == 0]


@pytest.mark.parametrize(
    "record",
    [
        pytest.param({"collection": "bw_plain"}, id="only-a-collection"),
        pytest.param({"collection": ["bw_plain"], "entity": 1}, id="collection-not-a-string"),
        pytest.param(rec(collection_version=0, type="unknown"), id="bad-version"),
        pytest.param(rec(embedding=[0.1], embedding_model=None), id="embedding-without-model"),
        pytest.param(rec(embedding=["x"], embedding_model="m", type="unknown"), id="bad-embedding"),
        pytest.param(rec(content="text", annotations=[], scores=None), id="wrong-containers"),
        pytest.param(rec("bw_facts", key=5, type=3, text=None, entity=None), id="wrong-scalars"),
        pytest.param(rec("bw_client", derived_from=["nope"], status="x"), id="client-enrichment"),
    ],
)
def test_a_record_with_many_problems_is_a_422_never_a_500(bw: Client, record: dict[str, Any]) -> None:
    found = locs(post_records(bw, record))
    assert found and all(loc[:2] == ["records", 0] for loc in found), found


# --- odd values: refused with a 422 or stored and read back, never a 500 --------------------------


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
