"""`memseek export` and the restore of an export by `memseek import`, on real PostgreSQL: a round
trip into another workspace and into another database keeps every field of every record
(`GET /records/{id}` JSON and the vector), lane order, processing states and the queue; an
interrupted restore resumes; every problem of a bad file is listed by line before anything is
written; and the commands themselves."""

from __future__ import annotations

import io
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from flask import Flask
from sqlalchemy.engine import Engine

from memseek.boot import build_runtime
from memseek.errors import Conflict
from memseek.errors import RequestInvalid
from memseek.runtime import Runtime
from memseek.write import bulk
from memseek.write.export import export_file
from memseek.write.listing import RecordFilter
from tests.conftest import Client
from tests.conftest import Tenant
from tests.conftest import make_database
from tests.conftest import make_tenant
from tests.helpers import app_for
from tests.helpers import cli_env
from tests.helpers import fetch
from tests.helpers import memseek
from tests.helpers import ok
from tests.helpers import written_ids
from tests.integration.test_bm25 import assert_counts_exact
from tests.lifecycle.support import delete
from tests.lifecycle.support import fact
from tests.lifecycle.support import node
from tests.lifecycle.support import note
from tests.lifecycle.support import processed
from tests.lifecycle.support import rows


def exported(runtime: Runtime, tenant: Tenant, **which: Any) -> io.BytesIO:
    out = io.BytesIO()
    export_file(runtime.engine, tenant.id, "tenant-a", RecordFilter(**which), out)
    out.seek(0)
    return out


def imported(runtime: Runtime, workspace_id: Any, source: io.BytesIO, **options: Any) -> bulk.Imported:
    """Both passes of `memseek import` over `source`."""
    checked = bulk.check_file(runtime, source)
    source.seek(0)
    return bulk.write_file(runtime, workspace_id, source, lanes=checked.lanes, **options)


def history(lc: Client, lc_runtime: Runtime) -> list[str]:
    """Records in every state the source can hold; their ids in write order."""
    ids = written_ids(lc, fact("ann", "city", "Lisbon", occurred_at="2020-01-02T03:04:05.678901+05:30"))
    ids += written_ids(lc, fact("ann", "plan", "draft plan", status="draft"), fact("ann", "plan", "old plan"))
    ids += written_ids(
        lc,
        fact("ann", "city", "Porto", scores={"importance": 3.25}, annotations={"mood": {"label": "ok"}}),
        note("ann", "a raw event", content={"day": 7, "nested": {"a": [1, 2.5, "x"]}}, run_id="run-1"),
        node("ann", "svc", ["db", "cache"]),
        note("bob", "bob note", idempotency_key="bob-1"),
    )
    ids += written_ids(lc, note("ann", "derived", derived_from=[ids[4]]))
    ok(lc.post(f"/records/{ids[1]}/approve"))  # the draft becomes the newest active plan: lane order != seq
    ok(lc.post(f"/records/{ids[3]}/retract", json={"reason": "moved back"}))  # Lisbon current again
    processed(lc_runtime)  # embedded: ready with vectors
    ids += written_ids(lc, note("ann", "still pending"), note("ann", "parent to erase"))
    ids += written_ids(lc, note("ann", "orphaned child", derived_from=[ids[-1]]))
    ok(delete(lc, f"/records/{ids[-2]}"))
    return [i for i in ids if i != ids[-2]]


def every_record(engine: Engine, workspace_id: Any) -> list[dict[str, Any]]:
    return rows(
        engine,
        "SELECT id::text, embedding::text AS vector, embedding_model, lane_seq, link_node_id::text, "
        "idempotency_key, payload_hash, collection, entity, key, status FROM records "
        "WHERE workspace_id = :ws ORDER BY seq",
        ws=workspace_id,
    )


def lane_orders(found: list[dict[str, Any]]) -> dict[tuple[Any, ...], list[str]]:
    lanes: dict[tuple[Any, ...], list[tuple[int, str]]] = {}
    for r in found:
        if r["key"] is not None:
            lanes.setdefault((r["collection"], r["entity"], r["key"], r["status"]), []).append(
                (r["lane_seq"], r["id"])
            )
    return {lane: [i for _, i in sorted(members)] for lane, members in lanes.items()}


def assert_same(source: Client, target: Client, engine: Engine, target_engine: Engine) -> None:
    """Every field of every record, the vector and lane order, source against target."""
    ours, theirs = every_record(engine, source.tenant.id), every_record(target_engine, target.tenant.id)
    for entity in {r["entity"] for r in ours}:  # an entity's records are written in file order
        assert [r["id"] for r in theirs if r["entity"] == entity] == [
            r["id"] for r in ours if r["entity"] == entity
        ]
    order = [r["id"] for r in ours]
    theirs = sorted(theirs, key=lambda r: order.index(r["id"]))
    for mine, restored in zip(ours, theirs, strict=True):
        assert fetch(target, restored["id"]) == fetch(source, mine["id"])
        same = ("vector", "embedding_model", "link_node_id", "idempotency_key", "payload_hash")
        assert {k: restored[k] for k in same} == {k: mine[k] for k in same}
    assert lane_orders(theirs) == lane_orders(ours)
    # The BM25 statistics the restore's inserts wrote: exact, and the source's (docs/search.md).
    counts = assert_counts_exact(target_engine, target.tenant.id)
    assert counts == assert_counts_exact(engine, source.tenant.id) and counts[0] > 0


@pytest.fixture
def third(lc_app: Flask, db: Engine) -> Client:
    return Client(lc_app.test_client(), make_tenant(db, "tenant-c"))


def test_a_round_trip_into_another_workspace_keeps_every_field(
    lc: Client, third: Client, lc_runtime: Runtime, db: Engine
) -> None:
    ids = history(lc, lc_runtime)
    done = imported(lc_runtime, third.tenant.id, exported(lc_runtime, lc.tenant), jobs=2, batch=3)
    assert done.records == len(ids) + 2  # and the node's two automatic links
    assert_same(lc, third, db, db)
    queued = "SELECT record_id::text AS id FROM processing_queue WHERE workspace_id = :ws ORDER BY record_id"
    assert rows(db, queued, ws=third.tenant.id) == [{"id": ids[-2]}, {"id": ids[-1]}]  # pending there too
    [parent] = fetch(third, ids[-1])["derived_from"]  # unresolved, as it was
    assert third.get(f"/records/{parent}").status_code == 404


def test_restored_lanes_behave_as_the_sources(lc: Client, third: Client, lc_runtime: Runtime) -> None:
    ids = history(lc, lc_runtime)
    imported(lc_runtime, third.tenant.id, exported(lc_runtime, lc.tenant))
    for client in (lc, third):  # retracting the current plan restores the same earlier one
        ok(client.post(f"/records/{ids[1]}/retract", json={"reason": "x"}))
    assert fetch(third, ids[2])["current"] is fetch(lc, ids[2])["current"] is True
    [again] = written_ids(third, note("bob", "bob note", idempotency_key="bob-1"))
    assert again == ids[6]  # the idempotency key still finds its record
    [newer] = written_ids(third, fact("ann", "city", "Faro"))
    assert fetch(third, newer)["current"] and not fetch(third, ids[0])["current"]


def test_importing_again_writes_only_what_is_missing(
    lc: Client, third: Client, lc_runtime: Runtime, db: Engine
) -> None:
    history(lc, lc_runtime)
    source = exported(lc_runtime, lc.tenant).getvalue()
    lines = source.splitlines(keepends=True)
    imported(lc_runtime, third.tenant.id, io.BytesIO(b"".join(lines[:5])))  # an interrupted restore
    done = imported(lc_runtime, third.tenant.id, io.BytesIO(source))
    assert done.records == len(lines) - 5
    assert_same(lc, third, db, db)


def test_a_vector_of_another_model_is_computed_again(
    lc: Client, third: Client, lc_runtime: Runtime, db: Engine
) -> None:
    [record_id] = written_ids(lc, note("ann", "embedded"))
    processed(lc_runtime)
    lines = exported(lc_runtime, lc.tenant).getvalue().splitlines()
    line = json.loads(lines[1])
    assert line["processing"] == "ready" and len(line["embedding"]) == 384
    imported(
        lc_runtime,
        third.tenant.id,
        io.BytesIO(b"\n".join([lines[0], json.dumps(line | {"embedding_model": "x"}).encode()])),
    )
    assert fetch(third, record_id)["processing"] == "pending"
    processed(lc_runtime)
    assert fetch(third, record_id)["processing"] == "ready"
    vectors = rows(
        db, "SELECT embedding::text AS v, embedding_model AS model FROM records WHERE id = :id", id=record_id
    )
    assert (
        vectors[0] == vectors[1] and vectors[0]["model"] == line["embedding_model"]
    )  # computed again, alike


def test_export_filters_by_entity_and_collection(lc: Client, lc_runtime: Runtime) -> None:
    written_ids(lc, note("ann", "ann note"), node("ann", "svc", ["db"]), note("bob", "bob note"))
    for which, texts in (
        ({"entity": "ann"}, ["ann note", "svc", "svc depends_on db"]),
        ({"collection": "lc_notes"}, ["ann note", "bob note"]),
        ({"entity": "ann", "collection": "lc_edges"}, ["svc depends_on db"]),
    ):
        lines = exported(lc_runtime, lc.tenant, **which).getvalue().splitlines()
        header = json.loads(lines[0])
        assert header["memseek_export"] == 1 and header["filter"] == which
        assert [json.loads(line)["text"] for line in lines[1:]] == texts


def test_every_problem_of_an_export_is_listed_by_line_before_anything_is_written(
    lc: Client, third: Client, lc_runtime: Runtime, db: Engine
) -> None:
    written_ids(lc, note("ann", "one"), note("ann", "two"))
    lines = exported(lc_runtime, lc.tenant).getvalue().splitlines()
    bad = json.loads(lines[2])
    bad.update(collection_version=9, current="yes")
    broken = io.BytesIO(b"\n".join([lines[0], lines[1], json.dumps(bad).encode(), b"{not json"]))
    with pytest.raises(RequestInvalid) as caught:
        bulk.check_file(lc_runtime, broken)
    assert sorted(tuple(d.loc) for d in caught.value.details) == [("line", 3, "current"), ("line", 4)]
    header = json.loads(lines[0]) | {"memseek_export": 2}
    with pytest.raises(RequestInvalid) as caught:
        bulk.check_file(lc_runtime, io.BytesIO(b"\n".join([json.dumps(header).encode(), lines[1]])))
    assert [d.loc for d in caught.value.details] == [("line", 1, "memseek_export")]
    unknown = json.loads(lines[1]) | {"collection_version": 9}
    with pytest.raises(RequestInvalid) as caught:
        bulk.check_file(lc_runtime, io.BytesIO(b"\n".join([lines[0], json.dumps(unknown).encode()])))
    assert [d.loc for d in caught.value.details] == [("line", 2, "collection_version")]
    assert rows(db, "SELECT count(*) AS n FROM records WHERE workspace_id = :ws", ws=third.tenant.id) == [
        {"n": 0}
    ]


def test_a_slot_the_target_already_fills_refuses_the_batch(
    lc: Client, third: Client, lc_runtime: Runtime
) -> None:
    written_ids(lc, fact("ann", "city", "Lisbon"))
    written_ids(third, fact("ann", "city", "Faro"))
    with pytest.raises(Conflict):
        imported(lc_runtime, third.tenant.id, exported(lc_runtime, lc.tenant))


@pytest.fixture
def other_database(pg_server_url: str, lc_runtime: Runtime) -> Iterator[Runtime]:
    """The `lc_` catalog's runtime over a second, freshly migrated database."""
    url = make_database(pg_server_url, "memseek_lc_restore")
    settings = lc_runtime.settings.with_overrides(database_url=url)
    restored = build_runtime(settings)
    yield restored
    restored.close()


def test_a_round_trip_into_another_database(
    lc: Client, lc_runtime: Runtime, other_database: Runtime, db: Engine
) -> None:
    history(lc, lc_runtime)
    target = Client(app_for(other_database).test_client(), make_tenant(other_database.engine, "restored"))
    imported(other_database, target.tenant.id, exported(lc_runtime, lc.tenant))
    assert_same(lc, target, db, other_database.engine)


def test_the_commands(lc: Client, lc_runtime: Runtime, db: Engine, tmp_path: Path) -> None:
    """`memseek export` to a file and to standard output, `memseek import` of it into another
    workspace (created by `memseek workspace create`)."""
    written_ids(lc, note("ann", "ann note"), fact("ann", "city", "Faro"), note("bob", "bob note"))
    env = cli_env(
        DATABASE_URL=str(db.url.render_as_string(hide_password=False)),
        MEMSEEK_CATALOG=str(lc_runtime.settings.memseek_catalog),
    )
    target = tmp_path / "ann.jsonl"
    result = memseek(env, "export", str(target), "--workspace", "tenant-a", "--entity", "ann")
    assert result.returncode == 0, result.stderr
    assert result.stderr.strip() == "exported 2 records"
    streamed = memseek(env, "export", "-", "--workspace", "tenant-a", "--entity", "ann")
    assert (
        streamed.stdout.splitlines()[1:] == target.read_text().splitlines()[1:]
    )  # the header's time differs
    assert memseek(env, "workspace", "create", "copy").returncode == 0
    result = memseek(env, "import", str(target), "--workspace", "copy")
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines()[0].startswith("2 exported records checked in ")
    workspace = "SELECT id FROM workspaces WHERE name = 'copy'"
    copied = rows(db, f"SELECT text FROM records WHERE workspace_id = ({workspace}) ORDER BY seq")
    assert [r["text"] for r in copied] == ["ann note", "Faro"]
    assert memseek(env, "export", str(tmp_path / "x.jsonl"), "--workspace", "nowhere").returncode == 2


def test_a_restore_keeps_the_ingestion_order_of_the_whole_file(
    lc: Client, lc_runtime: Runtime, db: Engine, tmp_path: Path
) -> None:
    """Issue 43 "What to build" 5: `memseek import` reads an export back "with the same records";
    by default (no `--jobs`) a restore keeps the file's ingestion order across entities too, so
    `GET /records` of the target lists them in the source's order (newest first)."""
    for n in range(3):
        written_ids(lc, note("ann", f"ann {n}"), note("bob", f"bob {n}"), note(f"e{n}", f"e {n}"))
    env = cli_env(
        DATABASE_URL=str(db.url.render_as_string(hide_password=False)),
        MEMSEEK_CATALOG=str(lc_runtime.settings.memseek_catalog),
    )
    target = tmp_path / "all.jsonl"
    assert memseek(env, "export", str(target), "--workspace", "tenant-a").returncode == 0
    assert memseek(env, "workspace", "create", "copy").returncode == 0
    result = memseek(env, "import", str(target), "--workspace", "copy", "--batch", "2")
    assert result.returncode == 0, result.stderr
    workspace = "(SELECT id FROM workspaces WHERE name = :name)"
    listed = f"SELECT id::text FROM records WHERE workspace_id = {workspace} ORDER BY seq"
    assert rows(db, listed, name="copy") == rows(db, listed, name="tenant-a")


def test_the_export_of_an_empty_workspace_restores_as_nothing(
    lc: Client, lc_runtime: Runtime, db: Engine, tmp_path: Path
) -> None:
    """Issue 43 "What to build" 5: `memseek import` reads back what `memseek export` writes; the
    export of a workspace holding nothing (its header alone) is a valid export and restores as
    nothing, rather than failing as a file with no records."""
    env = cli_env(
        DATABASE_URL=str(db.url.render_as_string(hide_password=False)),
        MEMSEEK_CATALOG=str(lc_runtime.settings.memseek_catalog),
    )
    target = tmp_path / "empty.jsonl"
    assert (
        memseek(env, "export", str(target), "--workspace", "tenant-a").stderr.strip() == "exported 0 records"
    )
    assert memseek(env, "workspace", "create", "copy").returncode == 0
    result = memseek(env, "import", str(target), "--workspace", "copy")
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines()[0].startswith("0 exported records checked in ")
    assert result.stdout.splitlines()[1].startswith("imported 0 records in ")
    assert (tmp_path / "blank.jsonl").write_text("") == 0
    assert memseek(env, "import", str(tmp_path / "blank.jsonl"), "--workspace", "copy").returncode == 2
