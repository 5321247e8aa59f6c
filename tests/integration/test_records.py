"""`POST /records` and `GET /records/{id}` over HTTP against real PostgreSQL (design §1, §3)."""

from __future__ import annotations

import json
from typing import Any
from uuid import UUID
from uuid import uuid4

import pytest
import sqlalchemy as sa
from flask import Flask

from memseek.runtime import Runtime
from memseek.write.worker import BackgroundWorker
from tests.conftest import Client
from tests.conftest import Tenant
from tests.helpers import details
from tests.helpers import error
from tests.helpers import fetch
from tests.helpers import locs
from tests.helpers import post_records
from tests.helpers import written
from tests.integration.write_support import count
from tests.integration.write_support import record_in

MAX_CHARS = 32768
LOCAL_MODEL = "all-MiniLM-L6-v2-onnx-int8"


INVALID = [
    pytest.param(record_in(foo=1), ["records", 0, "foo"], id="unknown-key"),
    pytest.param(
        {"entity": "e", "type": "fact", "text": "t"}, ["records", 0, "collection"], id="no-collection"
    ),
    pytest.param(record_in("nope"), ["records", 0, "collection"], id="unknown-collection"),
    pytest.param(
        record_in("w_events", collection_version=9),
        ["records", 0, "collection_version"],
        id="unknown-version",
    ),
    pytest.param(
        record_in("w_events", collection_version=0), ["records", 0, "collection_version"], id="version-zero"
    ),
    pytest.param(
        record_in("w_events", collection_version=1, type="note"),
        ["records", 0, "type"],
        id="type-of-other-version",
    ),
    pytest.param(record_in(entity=""), ["records", 0, "entity"], id="entity-empty"),
    pytest.param(record_in(entity="   "), ["records", 0, "entity"], id="entity-blank"),
    pytest.param(record_in(entity="x" * 257), ["records", 0, "entity"], id="entity-too-long"),
    pytest.param(record_in(entity=7), ["records", 0, "entity"], id="entity-number"),
    pytest.param(record_in(type="thing"), ["records", 0, "type"], id="type-undeclared"),
    pytest.param(record_in("w_facts", key=None), ["records", 0, "key"], id="keyed-needs-key"),
    pytest.param(record_in("w_events", key="k"), ["records", 0, "key"], id="events-forbid-key"),
    pytest.param(record_in(key=""), ["records", 0, "key"], id="key-empty"),
    pytest.param(record_in(text=" \n "), ["records", 0, "text"], id="text-blank"),
    pytest.param(record_in(text="x" * (MAX_CHARS + 1)), ["records", 0, "text"], id="text-too-long"),
    pytest.param(record_in(content=[1]), ["records", 0, "content"], id="content-not-object"),
    pytest.param(
        record_in(occurred_at="2026-01-01T00:00:00"), ["records", 0, "occurred_at"], id="naive-time"
    ),
    pytest.param(record_in(occurred_at=1767225600), ["records", 0, "occurred_at"], id="epoch-time"),
    pytest.param(record_in(occurred_at="yesterday"), ["records", 0, "occurred_at"], id="bad-time"),
    pytest.param(record_in(scores={"a": "high"}), ["records", 0, "scores", "a"], id="score-string"),
    pytest.param(record_in(scores={"a": True}), ["records", 0, "scores", "a"], id="score-bool"),
    pytest.param(record_in(scores={"a": 1e308 * 10}), ["records", 0, "scores", "a"], id="score-infinite"),
    pytest.param(record_in(annotations=[]), ["records", 0, "annotations"], id="annotations-not-object"),
    pytest.param(record_in(status="live"), ["records", 0, "status"], id="status"),
    pytest.param(record_in(derived_from=["nope"]), ["records", 0, "derived_from", 0], id="parent-not-uuid"),
    pytest.param(
        record_in(derived_from=[str(uuid4())]), ["records", 0, "derived_from", 0], id="parent-missing"
    ),
    pytest.param(
        record_in(derived_from=[str(UUID(int=1))] * 2), ["records", 0, "derived_from"], id="parent-repeated"
    ),
    pytest.param(record_in(run_id=""), ["records", 0, "run_id"], id="run-id-empty"),
    pytest.param(record_in(idempotency_key="x" * 257), ["records", 0, "idempotency_key"], id="idem-too-long"),
    pytest.param(record_in(embedding=[0.1] * 384), ["records", 0], id="embedding-without-model"),
    pytest.param(
        record_in(embedding=[0.1] * 384, embedding_model=LOCAL_MODEL),
        ["records", 0, "embedding"],
        id="embedding-without-declared-model",
    ),
    pytest.param(
        record_in("w_local", embedding=[0.1] * 384, embedding_model="other"),
        ["records", 0, "embedding_model"],
        id="embedding-wrong-model",
    ),
    pytest.param(
        record_in("w_local", embedding=[0.1] * 383, embedding_model=LOCAL_MODEL),
        ["records", 0, "embedding"],
        id="embedding-wrong-dimensions",
    ),
    pytest.param(
        record_in("w_local", embedding=[0.1, "x"], embedding_model=LOCAL_MODEL),
        ["records", 0, "embedding", 1],
        id="embedding-not-numbers",
    ),
    pytest.param(
        record_in("w_client"), ["records", 0, "annotations", "w_region"], id="client-enrichment-missing"
    ),
    pytest.param(
        record_in("w_chat", scores={"w_score": 9}),
        ["records", 0, "scores", "w_score"],
        id="supplied-score-out-of-range",
    ),
    pytest.param(
        record_in("w_chat", annotations={"w_label": {"label": "meh"}}),
        ["records", 0, "annotations", "w_label"],
        id="supplied-label-unknown",
    ),
    pytest.param(
        record_in(content={"x": [float("nan")]}), ["records", 0, "content", "x", 0], id="content-nan"
    ),
    pytest.param(
        record_in(annotations={"x": float("-inf")}),
        ["records", 0, "annotations", "x"],
        id="annotation-infinity",
    ),
    pytest.param(record_in(text="a\x00b"), ["records", 0, "text"], id="text-nul"),
    pytest.param(
        record_in(content={"x": ["ok", "a\x00"]}), ["records", 0, "content", "x", 1], id="content-nul"
    ),
]


@pytest.mark.parametrize(("body", "loc"), INVALID)
def test_invalid_record_is_422_and_writes_nothing(
    wclient: Client, db: Any, body: dict[str, Any], loc: list[Any]
) -> None:
    good = record_in(text="fine")
    response = post_records(wclient, good, body)
    shifted = [loc[0], 1, *loc[2:]]
    assert shifted in locs(response)
    assert count(db) == 0 and count(db, "processing_queue") == 0


def test_nan_is_rejected(wclient: Client, db: Any) -> None:
    raw = json.dumps({"records": [record_in(scores={"a": 1.0})]}).replace("1.0", "NaN")
    response = wclient.post("/records", data=raw, headers={"Content-Type": "application/json"})
    assert locs(response) == [["records", 0, "scores", "a"]]


FIELD_TYPES = [
    pytest.param(
        {"meta": {"s": 1}}, ["content", "meta", "s"], "field 's' at content.meta.s", id="string-path"
    ),
    pytest.param({"s_old": 1}, ["content", "s_old"], "field 's' at content.s_old", id="string-fallback"),
    pytest.param({"sa": ["a", 1]}, ["content", "sa"], "field 'sa'", id="string-array"),
    pytest.param({"sa": "a"}, ["content", "sa"], "field 'sa'", id="string-array-scalar"),
    pytest.param({"n": "1"}, ["content", "n"], "field 'n'", id="number"),
    pytest.param({"n": True}, ["content", "n"], "field 'n'", id="number-bool"),
    pytest.param({"i": 1.5}, ["content", "i"], "field 'i'", id="integer"),
    pytest.param({"b": "true"}, ["content", "b"], "field 'b'", id="boolean"),
    pytest.param({"d": "2026-01-01T00:00:00"}, ["content", "d"], "field 'd'", id="datetime-naive"),
    pytest.param({"d": 5}, ["content", "d"], "field 'd'", id="datetime-number"),
]


@pytest.mark.parametrize(("content", "loc", "msg"), FIELD_TYPES)
def test_declared_field_type_errors_name_index_field_and_path(
    wclient: Client, db: Any, content: dict[str, Any], loc: list[Any], msg: str
) -> None:
    response = post_records(wclient, record_in("w_events"), record_in("w_events", content=content))
    found = details(response)
    assert [d["loc"] for d in found] == [["records", 1, *loc]]
    assert msg in found[0]["msg"]
    assert count(db) == 0


def test_every_problem_of_every_record_is_listed(wclient: Client, db: Any) -> None:
    response = post_records(
        wclient, record_in("w_facts", type="x", key=None), record_in(), record_in("w_facts", text=" ", foo=1)
    )
    assert sorted(map(str, locs(response))) == sorted(
        map(
            str,
            [
                ["records", 0, "key"],
                ["records", 0, "type"],
                ["records", 2, "text"],
                ["records", 2, "foo"],
            ],
        )
    )
    assert count(db) == 0


@pytest.mark.parametrize(
    ("body", "loc"),
    [
        pytest.param([], ["body"], id="not-object"),
        pytest.param({}, ["records"], id="missing"),
        pytest.param({"records": []}, ["records"], id="empty"),
        pytest.param({"records": {}}, ["records"], id="not-list"),
        pytest.param({"records": [record_in()] * 1001}, ["records"], id="too-many"),
        pytest.param({"records": [record_in()], "wait": True}, ["wait"], id="extra-key"),
    ],
)
def test_envelope_errors(wclient: Client, db: Any, body: Any, loc: list[Any]) -> None:
    assert loc in locs(wclient.post("/records", json=body))
    assert count(db) == 0


def test_thousand_records_in_one_batch(wclient: Client, db: Any) -> None:
    results = written(wclient, *[record_in(text=f"record {i}") for i in range(1000)])
    assert len(results) == 1000 and len({r["id"] for r in results}) == 1000
    with db.connect() as conn:
        rows = conn.execute(sa.text("SELECT id, text FROM records ORDER BY seq")).all()
    assert [str(row.id) for row in rows] == [r["id"] for r in results]
    assert [row.text for row in rows] == [f"record {i}" for i in range(1000)]


def test_written_record_reads_back_whole(wclient: Client, db: Any) -> None:
    body = record_in(
        "w_events",
        content={
            "meta": {"s": "x"},
            "sa": ["a"],
            "n": 1.5,
            "i": 2,
            "b": False,
            "d": "2026-01-02T03:04:05.000006+01:00",
            "extra": {"ü": [1, None]},
        },
        scores={"importance": 3},
        annotations={"note": {"any": "json"}},
        run_id="run-1",
        occurred_at="2026-01-01T00:00:00+02:00",
    )
    [result] = written(wclient, body)
    assert result["processing"] == "ready" and result["current"] is True
    record = fetch(wclient, result["id"])
    assert list(record) == [
        "id",
        "collection",
        "collection_version",
        "entity",
        "type",
        "key",
        "text",
        "content",
        "scores",
        "annotations",
        "status",
        "depth",
        "derived_from",
        "run_id",
        "occurred_at",
        "created_at",
        "last_accessed",
        "processing",
        "processing_error",
        "current",
        "retracted_at",
        "retraction_reason",
    ]
    assert record["collection_version"] == 2 and record["content"] == body["content"]
    assert record["scores"] == {"importance": 3} and record["annotations"] == body["annotations"]
    assert record["occurred_at"] == "2025-12-31T22:00:00+00:00"
    assert record["last_accessed"] == record["created_at"]
    lineage = (record["status"], record["depth"], record["derived_from"], record["run_id"])
    assert lineage == ("active", 0, [], "run-1")
    assert UUID(record["id"]).version == 7
    with db.connect() as conn:
        fields = conn.execute(sa.text("SELECT fields FROM records")).scalar_one()
    assert fields == {"s": "x", "sa": ["a"], "n": 1.5, "i": 2, "b": False, "d": 1767319445000006}


def test_content_keeps_numbers_json_cannot_round_trip_through_floats(wclient: Client, db: Any) -> None:
    content = {"big": 10**40, "exact": 0.1, "nested": [{"x": -(2**70)}], "unicode": "ü\U0001f600"}
    [result] = written(wclient, record_in(content=content))
    assert fetch(wclient, result["id"])["content"] == content


def test_occurred_at_defaults_to_created_at(wclient: Client, db: Any) -> None:
    [result] = written(wclient, record_in())
    record = fetch(wclient, result["id"])
    assert record["occurred_at"] == record["created_at"]


@pytest.mark.parametrize(
    ("written_at", "stored"),
    [
        ("2026-07-01T10:00:00+23:59", "2026-06-30T10:01:00+00:00"),
        ("2026-07-01T10:00:00-23:59", "2026-07-02T09:59:00+00:00"),
    ],
)
def test_occurred_at_offsets_beyond_postgres_are_stored_as_the_instant(
    wclient: Client, db: Any, written_at: str, stored: str
) -> None:
    """ISO 8601 offsets reach ±23:59; PostgreSQL reads at most ±15:59, so the instant goes in UTC."""
    [result] = written(wclient, record_in(occurred_at=written_at))
    assert fetch(wclient, result["id"])["occurred_at"] == stored


def test_pinned_collection_version(wclient: Client, db: Any) -> None:
    [result] = written(wclient, record_in("w_events", collection_version=1))
    assert fetch(wclient, result["id"])["collection_version"] == 1


def test_derived_depth(wclient: Client, db: Any) -> None:
    [a, b] = written(wclient, record_in(text="a"), record_in(text="b"))
    [c] = written(wclient, record_in(text="c", derived_from=[a["id"]]))
    [d] = written(wclient, record_in(text="d", derived_from=[b["id"], c["id"]]))
    assert fetch(wclient, c["id"])["depth"] == 1
    record = fetch(wclient, d["id"])
    assert record["depth"] == 2 and record["derived_from"] == [b["id"], c["id"]]


def test_parent_from_another_workspace_does_not_exist(
    write_app: Flask, wclient: Client, other_tenant: Tenant
) -> None:
    other = Client(write_app.test_client(), other_tenant)
    [foreign] = written(other, record_in())
    response = post_records(wclient, record_in(derived_from=[foreign["id"]]))
    assert locs(response) == [["records", 0, "derived_from", 0]]


def test_supplied_embedding_skips_processing(wclient: Client, db: Any) -> None:
    [result] = written(wclient, record_in("w_local", embedding=[0.5] * 384, embedding_model=LOCAL_MODEL))
    assert result["processing"] == "ready"
    assert count(db, "processing_queue") == 0
    with db.connect() as conn:
        model = conn.execute(sa.text("SELECT embedding_model FROM records")).scalar_one()
    assert model == LOCAL_MODEL


def test_a_wrong_embedding_model_is_told_every_name_it_may_give(wclient: Client, db: Any) -> None:
    """The model may be named as `GET /collections` shows it (conf/models.yaml's name) or by its
    embedder's id; the 422 lists both, so the caller can fix the request from the message."""
    response = post_records(wclient, record_in("w_local", embedding=[0.5] * 384, embedding_model="MiniLM"))
    [detail] = details(response)
    assert detail["loc"] == ["records", 0, "embedding_model"]
    assert "'all-MiniLM-L6-v2' or 'all-MiniLM-L6-v2-onnx-int8'" in detail["msg"]
    assert count(db, "records") == 0


def test_processing_needs_decide_initial_state(wclient: Client, db: Any) -> None:
    results = written(
        wclient,
        record_in("w_local"),
        record_in("w_chat"),
        record_in("w_chat", scores={"w_score": 2}, annotations={"w_label": {"label": "good"}}),
        record_in("w_client", annotations={"w_region": "eu"}),
    )
    assert [r["processing"] for r in results] == ["pending", "pending", "ready", "ready"]
    assert count(db, "processing_queue") == 2


class TestIdempotency:
    def test_replay_returns_original(self, wclient: Client, db: Any) -> None:
        body = record_in(idempotency_key="op-1")
        [first] = written(wclient, body)
        [again] = written(wclient, dict(body))
        assert again == first and count(db) == 1

    def test_replay_inside_one_batch(self, wclient: Client, db: Any) -> None:
        body = record_in(idempotency_key="op-1")
        first, second = written(wclient, body, dict(body))
        assert first == second and count(db) == 1

    def test_defaults_are_the_same_payload(self, wclient: Client, db: Any) -> None:
        [first] = written(wclient, record_in(idempotency_key="op-1"))
        [again] = written(wclient, record_in(idempotency_key="op-1", content={}, status="active"))
        assert again["id"] == first["id"]

    @pytest.mark.parametrize("earlier_request", [True, False], ids=["stored", "same-batch"])
    def test_different_payload_is_409_and_writes_nothing(
        self, wclient: Client, db: Any, earlier_request: bool
    ) -> None:
        if earlier_request:
            written(wclient, record_in(idempotency_key="op-1"))
        batch = [record_in(text="other"), record_in(idempotency_key="op-1", text="changed")]
        if not earlier_request:
            batch.insert(0, record_in(idempotency_key="op-1"))
        before = count(db)
        err = error(post_records(wclient, *batch), 409, "conflict")
        assert err["details"][0]["loc"][-1] == "idempotency_key"
        assert count(db) == before

    def test_keys_are_per_workspace(self, write_app: Flask, wclient: Client, other_tenant: Tenant) -> None:
        other = Client(write_app.test_client(), other_tenant)
        [mine] = written(wclient, record_in(idempotency_key="op-1"))
        [theirs] = written(other, record_in(idempotency_key="op-1", text="different"))
        assert mine["id"] != theirs["id"]


class TestWait:
    @pytest.mark.parametrize(
        ("query", "loc"),
        [
            pytest.param("?wait=maybe", ["query", "wait"], id="wait"),
            pytest.param("?wait=true&timeout=61", ["query", "timeout"], id="timeout-over-max"),
            pytest.param("?wait=true&timeout=-1", ["query", "timeout"], id="timeout-negative"),
            pytest.param("?wait=true&timeout=soon", ["query", "timeout"], id="timeout-text"),
            pytest.param("?wait=true&when=now", ["query", "when"], id="unknown-parameter"),
        ],
    )
    def test_bad_parameters(self, wclient: Client, db: Any, query: str, loc: list[Any]) -> None:
        assert loc in locs(post_records(wclient, record_in(), query=query))
        assert count(db) == 0

    def test_a_wait_of_another_form_is_told_the_forms(self, wclient: Client) -> None:
        response = post_records(wclient, record_in(), query="?wait=yes")
        assert error(response, 422)["details"] == [
            {"loc": ["query", "wait"], "msg": "must be true or false (in any case), 1 or 0, not 'yes'"}
        ]

    def test_timeout_returns_pending_states(self, wclient: Client, db: Any) -> None:
        [result] = written(wclient, record_in("w_local"), query="?wait=true&timeout=0.2")
        assert result["processing"] == "pending"

    def test_wait_returns_processed_states(self, write_runtime: Runtime, wclient: Client, db: Any) -> None:
        worker = BackgroundWorker(write_runtime, idle_seconds=0.2).start()
        try:
            query = "?wait=true&timeout=30"
            results = written(wclient, record_in("w_local"), record_in("w_facts"), query=query)
        finally:
            worker.stop()
        assert [r["processing"] for r in results] == ["ready", "ready"]


class TestGet:
    def test_other_workspace_is_404_like_unknown(
        self, write_app: Flask, wclient: Client, other_tenant: Tenant
    ) -> None:
        [result] = written(wclient, record_in())
        other = Client(write_app.test_client(), other_tenant)
        foreign = error(other.get(f"/records/{result['id']}"), 404, "not_found")
        unknown = error(other.get(f"/records/{uuid4()}"), 404, "not_found")
        assert foreign["details"] == unknown["details"] == []
        for action, body in (("retract", {"reason": "x"}), ("approve", None), ("reject", {"reason": "x"})):
            error(other.post(f"/records/{result['id']}/{action}", json=body), 404, "not_found")

    @pytest.mark.parametrize("raw", ["not-a-uuid", "123", "01a2"])
    def test_malformed_id_is_404(self, wclient: Client, raw: str) -> None:
        error(wclient.get(f"/records/{raw}"), 404, "not_found")


def test_routes_are_in_openapi(wclient: Client) -> None:
    paths = wclient.get("/openapi.json").get_json()["paths"]
    assert {
        "/records",
        "/records/{id}",
        "/records/{id}/retract",
        "/records/{id}/approve",
        "/records/{id}/reject",
    } <= set(paths)
    assert "requestBody" in paths["/records"]["post"]
