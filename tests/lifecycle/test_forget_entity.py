"""`DELETE /entities/{entity}` and the batched erasure behind it, on real PostgreSQL: what "about
an entity" covers (its records, their automatic links, links naming it at either end), the
synchronous and the background path, progress in `GET /erasures/{id}`, batches as separate
transactions, the fence (writes after the forget began survive), and isolation."""

from __future__ import annotations

import threading
import time
from urllib.parse import quote
from uuid import uuid4

import pytest
from sqlalchemy.engine import Engine

from memseek.db import workspace_transaction
from memseek.runtime import Runtime
from memseek.search_state import LargeWorkspaces
from memseek.write import erasures
from tests.conftest import Client
from tests.conftest import Tenant
from tests.helpers import app_for
from tests.helpers import error
from tests.helpers import fetch
from tests.helpers import ok
from tests.helpers import with_settings
from tests.helpers import written_ids
from tests.integration.test_lanes import _in_parallel
from tests.integration.test_lanes import _lane_invariant
from tests.lifecycle.support import count
from tests.lifecycle.support import delete
from tests.lifecycle.support import edge
from tests.lifecycle.support import fact
from tests.lifecycle.support import hold
from tests.lifecycle.support import holding
from tests.lifecycle.support import node
from tests.lifecycle.support import note
from tests.lifecycle.support import processed
from tests.lifecycle.support import rows
from tests.lifecycle.support import texts


@pytest.fixture
def small_batches(monkeypatch: pytest.MonkeyPatch) -> None:
    """Batches of 2 records, and entities of more than 3 records erased in the background."""
    monkeypatch.setattr(erasures, "BATCH", 2)
    monkeypatch.setattr(erasures, "SYNC_LIMIT", 3)


def test_everything_about_the_entity_goes_and_nothing_else(lc: Client, db: Engine, tenant: Tenant) -> None:
    written_ids(
        lc,
        note("ann", "ann note"),
        fact("ann", "city", "ann lives in Faro"),
        node("ann", "ann", ["db"]),  # an automatic link "ann depends_on db", entity ann
        edge("web", "web", "ann"),  # another entity's link naming ann as object
        edge("ops", "ann", "pager"),  # ... and as subject
        edge("ops", "web", "db"),  # a link not naming ann
        note("bob", "bob note"),
        note("annie", "annie note"),  # a longer name is another entity
    )
    done = ok(delete(lc, "/entities/ann", {"reason": "erasure request"}))
    assert done["kind"] == "entity" and done["state"] == "done" and done["entity"] == "ann"
    assert done["collection"] is None and done["reason"] == "erasure request"
    assert done["counts"] == {"lc_edges": 3, "lc_nodes": 1, "lc_notes": 2} and done["erased"] == 6
    assert texts(db, tenant.id) == ["web calls db", "bob note", "annie note"]
    assert ok(lc.get(f"/erasures/{done['id']}")) == done


def test_a_collection_narrows_the_forget(lc: Client, db: Engine, tenant: Tenant) -> None:
    written_ids(lc, note("ann", "ann note"), node("ann", "ann", ["db"]), edge("web", "web", "ann"))
    done = ok(lc.request("DELETE", "/entities/ann?collection=lc_edges"))
    assert done["collection"] == "lc_edges"
    # the automatic link (entity ann) and the link naming ann; the node and the note stay
    assert done["counts"] == {"lc_edges": 2}
    assert texts(db, tenant.id) == ["ann note", "ann"]


def test_a_collection_that_is_not_an_edges_collection_keeps_links(
    lc: Client, db: Engine, tenant: Tenant
) -> None:
    written_ids(lc, note("ann", "ann note"), edge("web", "web", "ann"))
    assert ok(lc.request("DELETE", "/entities/ann?collection=lc_notes"))["counts"] == {"lc_notes": 1}
    assert texts(db, tenant.id) == ["web calls ann"]


def test_an_entity_with_a_slash_in_its_name(lc: Client, db: Engine, tenant: Tenant) -> None:
    written_ids(lc, note("people/maya", "maya note"), note("people", "people note"))
    assert ok(delete(lc, "/entities/people%2Fmaya"))["counts"] == {"lc_notes": 1}
    assert ok(delete(lc, "/entities/people"))["counts"] == {"lc_notes": 1}
    assert texts(db, tenant.id) == []


def test_an_entity_with_line_breaks_in_its_name(lc: Client, db: Engine, tenant: Tenant) -> None:
    """Any stored text names an entity: its route reads line breaks too (Werkzeug's `path`
    converter stops at one), and a name that could not be stored is a 422 at its place."""
    written_ids(lc, note("ann\nsmith/\r\n2", "ann note"), note("ann", "other note"))
    assert ok(delete(lc, "/entities/ann%0Asmith%2F%0D%0A2"))["counts"] == {"lc_notes": 1}
    assert texts(db, tenant.id) == ["other note"]
    assert error(delete(lc, "/entities/nobody.%0A%00"), 422)["details"][0]["loc"] == ["path", "entity"]
    assert "entity" in error(delete(lc, "/entities/nobody%0Aelse"), 404, "not_found")["message"]


@pytest.mark.parametrize("entity", ["/people/maya", "//maya", "maya/", "/", "."])
def test_an_entity_with_leading_or_trailing_slashes(
    lc: Client, db: Engine, tenant: Tenant, entity: str
) -> None:
    """Issue 43 "What to build" 2: `DELETE /entities/{entity}` erases every record about that
    entity; any entity a record can name (1–256 characters, not blank) is reachable by its
    percent-encoded name, a leading slash included (it was redirected to another entity's path)."""
    written_ids(lc, note(entity, "its note"), note(entity.strip("/") + "x", "another entity's note"))
    done = ok(delete(lc, "/entities/" + quote(entity, safe="")))
    assert (done["entity"], done["counts"]) == (entity, {"lc_notes": 1})
    assert texts(db, tenant.id) == ["another entity's note"]


@pytest.mark.parametrize(
    "path", ["/entities/nobody", "/entities/ann?collection=lc_edges", "/entities/ann?collection=nothing"]
)
def test_nothing_about_it_is_404_and_logs_nothing(lc: Client, db: Engine, path: str) -> None:
    written_ids(lc, note("ann", "ann note"))
    error(delete(lc, path), 404, "not_found")
    assert count(db, "erasures") == 0 and count(db, "records") == 1


def test_another_workspaces_entity_is_404_and_changes_nothing(
    lc: Client, lc_other: Client, db: Engine
) -> None:
    written_ids(lc_other, note("zoe", "their note"), edge("zoe", "zoe", "web"))
    error(delete(lc, "/entities/zoe", {"reason": "x"}), 404, "not_found")
    assert count(db, "records") == 2 and count(db, "erasures") == 0


@pytest.mark.parametrize(
    ("query", "loc"),
    [
        pytest.param("?colection=lc_notes", ["query", "colection"], id="unknown-parameter"),
        pytest.param("?collection=a&collection=b", ["query", "collection"], id="repeated"),
    ],
)
def test_undeclared_query_parameters_are_422(lc: Client, query: str, loc: list[str]) -> None:
    written_ids(lc, note("ann", "ann note"))
    assert [d["loc"] for d in error(delete(lc, f"/entities/ann{query}"), 422)["details"]] == [loc]
    assert ok(delete(lc, "/entities/ann"))["erased"] == 1


def test_a_large_entity_is_erased_by_the_workers_with_progress(
    lc: Client, lc_runtime: Runtime, db: Engine, small_batches: None
) -> None:
    written_ids(lc, *(note("ann", f"ann {n}") for n in range(5)), note("bob", "bob note"))
    response = delete(lc, "/entities/ann", {"reason": "big"})
    assert response.status_code == 202
    started = response.get_json()
    assert set(started) == {"erasure_id", "state"} and started["state"] == "running"
    assert response.headers["Location"] == f"/erasures/{started['erasure_id']}"
    progress = [ok(lc.get(response.headers["Location"]))]
    while erasures.work_once(lc_runtime):  # one batch, one transaction, per call
        progress.append(ok(lc.get(response.headers["Location"])))
    assert [(p["state"], p["erased"]) for p in progress] == [
        ("running", 0),
        ("running", 2),
        ("running", 4),
        ("done", 5),
    ]
    assert progress[-1]["finished_at"] is not None and progress[1]["finished_at"] is None
    assert [r["text"] for r in rows(db, "SELECT text FROM records")] == ["bob note"]


def test_each_batch_commits_on_its_own(
    lc: Client, lc_runtime: Runtime, db: Engine, small_batches: None
) -> None:
    written_ids(lc, *(note("ann", f"ann {n}") for n in range(5)))
    erasure_id = delete(lc, "/entities/ann").get_json()["erasure_id"]
    assert erasures.work_once(lc_runtime)
    assert count(db, "records") == 3  # seen from another connection: the batch committed
    with db.begin() as conn:  # a batch in flight holds the job: a second worker skips it
        hold(conn, "erasures", "id", erasure_id)
        assert not erasures.work_once(lc_runtime)
    assert count(db, "records") == 3
    processed(lc_runtime)  # the worker loop finishes it
    assert count(db, "records") == 0


def test_workers_claim_different_erasures(
    lc: Client, lc_runtime: Runtime, db: Engine, small_batches: None
) -> None:
    written_ids(lc, *(note(who, f"{who} {n}") for who in ("ann", "bob") for n in range(4)))
    first = delete(lc, "/entities/ann").get_json()["erasure_id"]
    second = delete(lc, "/entities/bob").get_json()["erasure_id"]
    with db.begin() as conn:
        claimed = erasures.claim(conn)
        assert claimed is not None and str(claimed.id) == first  # the oldest first
        with lc_runtime.engine.begin() as other:
            assert str(erasures.claim(other).id) == second  # type: ignore[union-attr]
    processed(lc_runtime)
    assert count(db, "records") == 0


def test_writes_after_the_forget_began_survive(
    lc: Client, lc_runtime: Runtime, db: Engine, small_batches: None
) -> None:
    written_ids(lc, *(note("ann", f"before {n}") for n in range(4)), fact("ann", "city", "before"))
    assert delete(lc, "/entities/ann").status_code == 202
    [after, city] = written_ids(lc, note("ann", "after"), fact("ann", "city", "after"))
    processed(lc_runtime)
    assert sorted(r["text"] for r in rows(db, "SELECT text FROM records")) == ["after", "after"]
    assert fetch(lc, city)["current"] is True and fetch(lc, after)["text"] == "after"
    assert ok(delete(lc, "/entities/ann"))["erased"] == 2  # forgetting again takes them


def test_concurrent_writes_while_forgetting(
    lc: Client, lc_runtime: Runtime, db: Engine, tenant: Tenant, small_batches: None
) -> None:
    """A writer keeps writing about the entity (events and one keyed slot) while a worker erases
    it batch by batch: every record whose write returned before the forget was requested is
    gone, every record whose write started after the forget answered survives, and each lane
    keeps one current value, the newest survivor."""
    written_ids(lc, *(note("ann", f"early {n}") for n in range(6)), fact("ann", "city", "early"))
    writes: list[tuple[float, float, str]] = []
    forget: list[float] = []  # when it was requested, when it answered
    writing = threading.Event()
    writing.set()

    def writer() -> None:
        for n in range(2000):
            began = time.monotonic()
            [record_id] = written_ids(
                lc, fact("ann", "city", f"w{n}") if n % 3 == 0 else note("ann", f"w{n}")
            )
            writes.append((began, time.monotonic(), record_id))
            if len(forget) == 2 and sum(began > forget[1] for began, _, _ in writes) >= 9:
                break
        writing.clear()

    def eraser() -> None:
        while len(writes) < 3:
            time.sleep(0.01)
        forget.append(time.monotonic())
        assert delete(lc, "/entities/ann").status_code == 202
        forget.append(time.monotonic())
        while erasures.work_once(lc_runtime) or writing.is_set():
            time.sleep(0.01)

    _in_parallel(2, lambda seed: eraser() if seed else writer())
    processed(lc_runtime)
    present = {
        r["id"] for r in rows(db, "SELECT id::text FROM records WHERE workspace_id = :ws", ws=tenant.id)
    }
    requested, answered = forget
    assert not [record_id for _, ended, record_id in writes if ended < requested and record_id in present]
    assert [
        record_id for began, _, record_id in writes if began > answered and record_id not in present
    ] == []
    assert "early 0" not in texts(db, tenant.id)
    _lane_invariant(db)


def test_the_rarity_count_of_a_shrunken_workspace_is_taken_again(lc: Client, lc_runtime: Runtime) -> None:
    written_ids(lc, note("ann", "ann note"))
    large = lc.raw.application.extensions["memseek"].search.large_workspaces
    large.add(lc.tenant.id)
    ok(delete(lc, "/entities/ann"))
    assert lc.tenant.id not in large


def test_a_large_workspace_is_counted_again_after_a_while() -> None:
    remembered = LargeWorkspaces(seconds=0.05)
    workspace = uuid4()
    remembered.add(workspace)
    assert workspace in remembered and uuid4() not in remembered
    time.sleep(0.1)
    assert workspace not in remembered


def test_the_sync_path_finishes_what_a_crash_left_running(
    lc: Client, lc_runtime: Runtime, db: Engine, tenant: Tenant
) -> None:
    """A forget whose request died after logging it: the job is in the table, and finishing it
    (any worker, or `finish`) erases everything it names."""
    written_ids(lc, *(note("ann", f"ann {n}") for n in range(3)))
    with workspace_transaction(db, tenant.id) as conn:
        erasure, small = erasures.begin_forget(conn, lc_runtime.catalog, tenant.id, "ann", None, None, "test")
    assert small and ok(lc.get(f"/erasures/{erasure.id}"))["state"] == "running"
    done = erasures.finish(lc_runtime, tenant.id, erasure.id)
    assert done.done and done.erased == 3 and count(db, "records") == 0


def test_erasures_of_one_entity_leave_other_workspaces_alone(
    lc: Client, lc_other: Client, lc_runtime: Runtime, db: Engine, small_batches: None
) -> None:
    theirs = written_ids(lc_other, *(note("ann", f"their {n}") for n in range(5)), edge("x", "x", "ann"))
    written_ids(lc, *(note("ann", f"mine {n}") for n in range(5)), edge("x", "x", "ann"))
    assert delete(lc, "/entities/ann").status_code == 202
    processed(lc_runtime)
    assert all(fetch(lc_other, record_id) for record_id in theirs)
    assert count(db, "records", workspace_id=lc.tenant.id) == 0


def test_records_still_queued_leave_nothing_behind(lc: Client, db: Engine) -> None:
    """Records not processed yet sit in the processing queue too (the `lc_` app runs no worker);
    every table is searched for their ids, text and idempotency key (`support.holding`)."""
    ids = written_ids(
        lc, note("zed", "quokkazanzibar pending"), note("zed", "another", idempotency_key="zk-1")
    )
    needles = [*ids, "zk-1", "quokkazanzibar"]
    # text_lexemes: the workspace's count of records holding the marker's lexeme (BM25).
    assert holding(db, needles) == {
        "records": 2,
        "record_postings": 3,
        "processing_queue": 2,
        "text_lexemes": 1,
    }
    assert ok(delete(lc, "/entities/zed"))["erased"] == 2
    assert holding(db, needles) == {}


def test_a_small_forget_out_of_time_goes_on_in_the_background(
    lc: Client, lc_runtime: Runtime, db: Engine
) -> None:
    """The request's deadline passes while its batch waits for a worker holding a record: the
    answer is the running erasure (`202`, its Location), not an error, and the workers finish it."""
    hurried = Client(app_for(with_settings(lc_runtime, search_timeout_ms=3000)).test_client(), lc.tenant)
    [held, *_] = written_ids(lc, *(note("ann", f"ann {n}") for n in range(3)))
    with db.begin() as worker:
        hold(worker, "processing_queue", "record_id", held)
        response = delete(hurried, "/entities/ann", {"reason": "slow"})
    assert response.status_code == 202, response.get_json()
    assert count(db, "records") == 3
    location = response.headers["Location"]
    assert ok(lc.get(location))["state"] == "running"
    processed(lc_runtime)
    assert ok(lc.get(location))["erased"] == 3 and count(db, "records") == 0
