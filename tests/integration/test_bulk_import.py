"""`memseek import`'s two passes (`write.bulk`) on real PostgreSQL: every line checked before
anything is written, parallel streams that keep each entity's file order (and so every lane's),
a refused batch that stops the import and writes nothing of itself, idempotent re-imports."""

from __future__ import annotations

import io
import json
import uuid
from typing import Any

import pytest
import sqlalchemy as sa
from sqlalchemy.engine import Engine

from memseek.errors import RequestInvalid
from memseek.runtime import Runtime
from memseek.write import bulk
from tests.conftest import Tenant
from tests.integration.write_support import record_in

ENTITIES = ("acme", "globex", "initech", "umbrella", "hooli")


def jsonl(*items: Any, blank_after: int | None = None) -> io.BytesIO:
    """A JSON Lines file of `items` (strings are written as they are), with a blank line after
    item `blank_after`."""
    lines = [item if isinstance(item, str) else json.dumps(item) for item in items]
    if blank_after is not None:
        lines.insert(blank_after, "   ")
    return io.BytesIO(("\n".join(lines) + "\n").encode())


def imported(runtime: Runtime, tenant: Tenant, source: io.BytesIO, **options: int) -> bulk.Imported:
    """Both passes over `source`, as `memseek import` runs them."""
    bulk.check_file(runtime, source, options.get("batch", bulk.MAX_RECORDS))
    source.seek(0)
    return bulk.write_file(runtime, tenant.id, source, **options)


def stored(db: Engine, tenant: Tenant) -> list[dict[str, Any]]:
    """The workspace's records in write order (`seq`)."""
    sql = sa.text("SELECT entity, key, text, is_current FROM records WHERE workspace_id = :ws ORDER BY seq")
    with db.connect() as conn:
        return [dict(row._mapping) for row in conn.execute(sql, {"ws": tenant.id})]


def interleaved_file() -> list[dict[str, Any]]:
    """Events and keyed facts of five entities, interleaved; each fact lane rewritten four times."""
    items = []
    for n in range(60):
        entity = ENTITIES[n % len(ENTITIES)]
        if n % 3 == 0:
            items.append(record_in("w_facts", entity=entity, key=f"plan-{n % 2}", text=f"{entity} plan {n}"))
        else:
            items.append(record_in("w_events", entity=entity, type="event", text=f"{entity} event {n}"))
    return items


def test_parallel_streams_keep_each_entitys_file_order_and_every_lane(
    write_runtime: Runtime, tenant: Tenant, db: Engine
) -> None:
    items = interleaved_file()
    done = imported(write_runtime, tenant, jsonl(*items), jobs=3, batch=4)
    assert (done.records, done.pending) == (60, 0)
    rows = stored(db, tenant)
    assert sorted(r["text"] for r in rows) == sorted(i["text"] for i in items)
    for entity in ENTITIES:
        assert [r["text"] for r in rows if r["entity"] == entity] == [
            i["text"] for i in items if i["entity"] == entity
        ]
    for entity in ENTITIES:
        for key in ("plan-0", "plan-1"):
            lane = [i["text"] for i in items if i["entity"] == entity and i.get("key") == key]
            current = [
                r["text"] for r in rows if r["is_current"] and (r["entity"], r["key"]) == (entity, key)
            ]
            assert current == lane[-1:]


@pytest.mark.parametrize(
    ("entities", "streams", "expected"),
    [
        pytest.param("aaaa", 2, [0, 0, 0, 0], id="one-entity-one-stream"),
        pytest.param("aaaabcd", 2, [0, 0, 0, 0, 1, 1, 1], id="new-entities-to-the-lighter-stream"),
        pytest.param("abcabc", 3, [0, 1, 2, 0, 1, 2], id="each-new-entity-its-own-stream"),
        pytest.param("aabbcdcd", 2, [0, 0, 1, 1, 0, 1, 0, 1], id="ties-to-the-first"),
    ],
)
def test_dealer_keeps_an_entity_in_one_stream_and_the_streams_even(
    entities: str, streams: int, expected: list[int]
) -> None:
    dealer = bulk.Dealer([0] * streams)
    assert [dealer.stream({"entity": e}) for e in entities] == expected


@pytest.mark.parametrize(
    ("bad_line", "expected_loc"),
    [
        pytest.param('{"collection": "w_any", "entity": ', ["line", 4], id="not-json"),
        pytest.param(record_in(bogus=1), ["line", 4, "bogus"], id="unknown-key"),
        pytest.param(record_in(collection="w_nowhere"), ["line", 4, "collection"], id="unknown-collection"),
        pytest.param(record_in(text=""), ["line", 4, "text"], id="empty-text"),
        pytest.param("[1, 2]", ["line", 4], id="not-an-object"),
    ],
)
def test_a_problem_on_any_line_writes_nothing(
    write_runtime: Runtime, tenant: Tenant, db: Engine, bad_line: Any, expected_loc: list[Any]
) -> None:
    # a blank line after the second record: line numbers count it
    source = jsonl(record_in(), record_in(), bad_line, record_in(), blank_after=2)
    with pytest.raises(RequestInvalid) as raised:
        bulk.check_file(write_runtime, source, batch=2)
    assert [d.to_json()["loc"][: len(expected_loc)] for d in raised.value.details] == [expected_loc]
    assert stored(db, tenant) == []


def test_every_problem_is_listed_by_line(write_runtime: Runtime, tenant: Tenant) -> None:
    source = jsonl(record_in(), "not json", record_in(), record_in(bogus=1), record_in(entity=""))
    with pytest.raises(RequestInvalid) as raised:
        bulk.check_file(write_runtime, source, batch=2)
    assert [d.loc[:2] for d in raised.value.details] == [("line", 2), ("line", 4), ("line", 5)]


def test_a_file_without_records_is_refused(write_runtime: Runtime) -> None:
    with pytest.raises(RequestInvalid, match="no records"):
        bulk.check_file(write_runtime, jsonl("", "  "))


def test_a_batch_the_database_refuses_stops_the_import_and_writes_none_of_itself(
    write_runtime: Runtime, tenant: Tenant, db: Engine
) -> None:
    items = [record_in(text=f"record {n}") for n in range(12)]
    items[7] = record_in(text="record 7", derived_from=[str(uuid.uuid4())])  # no such parent
    with pytest.raises(RequestInvalid) as raised:
        imported(write_runtime, tenant, jsonl(*items), jobs=1, batch=5)
    assert "lines 6–10 were not written" in raised.value.message
    assert [d.loc for d in raised.value.details] == [("line", 8, "derived_from", 0)]
    assert [r["text"] for r in stored(db, tenant)] == [f"record {n}" for n in range(5)]


def test_importing_again_with_idempotency_keys_writes_nothing_twice(
    write_runtime: Runtime, tenant: Tenant, db: Engine
) -> None:
    items = [
        record_in(entity=e, text=f"{e} {n}", idempotency_key=f"{e}-{n}") for n in range(4) for e in ENTITIES
    ]
    first = imported(write_runtime, tenant, jsonl(*items), jobs=2, batch=3)
    again = imported(write_runtime, tenant, jsonl(*items), jobs=2, batch=3)
    assert first.records == again.records == len(items)
    assert len(stored(db, tenant)) == len(items)


def test_records_without_vectors_are_reported_pending(write_runtime: Runtime, tenant: Tenant) -> None:
    items = [record_in("w_local", text=f"note {n}") for n in range(3)] + [record_in(text="plain")]
    assert imported(write_runtime, tenant, jsonl(*items)).pending == 3


@pytest.mark.parametrize(
    ("changed_line", "raised"),
    [
        pytest.param("not json", RequestInvalid, id="not-json"),  # the import's own error
        pytest.param("[1, 2]", TypeError, id="not-an-object"),  # any other error stops every stream too
    ],
)
def test_a_file_changed_after_its_check_stops_the_import(
    write_runtime: Runtime, tenant: Tenant, changed_line: str, raised: type[Exception]
) -> None:
    source = jsonl(*[record_in(entity=e) for e in ENTITIES * 3], changed_line)
    with pytest.raises(raised):
        bulk.write_file(write_runtime, tenant.id, source, jobs=2, batch=2)


def test_an_unknown_collection_is_told_the_nearest(write_runtime: Runtime) -> None:
    """As `POST /records` answers it: the import's check names the collections and the nearest."""
    with pytest.raises(RequestInvalid) as raised:
        bulk.check_file(write_runtime, jsonl(record_in(collection="w_evnts")))
    (detail,) = raised.value.details
    assert detail.loc == ("line", 1, "collection")
    nearest = "unknown collection 'w_evnts'; did you mean 'w_events'? the collections are: "
    assert detail.msg.startswith(nearest)
