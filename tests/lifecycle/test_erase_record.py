"""`DELETE /records/{id}` on real PostgreSQL: a real erasure (the row and everything derived from
it gone, not flagged), the retraction rule for keyed slots, derived records left dangling, the
erasure log entry, and another workspace's ids answering 404 with nothing changed."""

from __future__ import annotations

import threading
import time
from typing import Any

import pytest
import sqlalchemy as sa
from sqlalchemy.engine import Engine

from memseek.db import workspace_transaction
from memseek.runtime import Runtime
from tests.conftest import Client
from tests.helpers import details
from tests.helpers import error
from tests.helpers import fetch
from tests.helpers import ok
from tests.helpers import written_ids
from tests.lifecycle.support import count
from tests.lifecycle.support import delete
from tests.lifecycle.support import fact
from tests.lifecycle.support import hold
from tests.lifecycle.support import node
from tests.lifecycle.support import note
from tests.lifecycle.support import processed
from tests.lifecycle.support import rows


def erased(client: Client, record_id: str, body: Any = None) -> dict[str, Any]:
    return ok(delete(client, f"/records/{record_id}", body))


def test_erasure_deletes_the_row_and_what_derives_from_it(
    lc: Client, lc_runtime: Runtime, db: Engine
) -> None:
    [doomed, kept] = written_ids(
        lc, note("ann", "Ann's quokka passport number"), note("ann", "Ann likes tea")
    )
    processed(lc_runtime)
    assert ok(lc.post("/search", json={"q": "quokka", "mode": "text"}))["hits"]  # touched by the read
    lc.raw.application.extensions["memseek"].touches.flush(timeout=30)
    assert count(db, "record_touches", record_id=doomed) == 1
    assert count(db, "record_postings", record_id=doomed) > 0
    answer = erased(lc, doomed, {"reason": "user asked"})
    assert set(answer) == {"erased", "collection", "entity", "erasure_id", "counts"}
    assert (answer["erased"], answer["collection"], answer["entity"]) == (doomed, "lc_notes", "ann")
    assert answer["counts"] == {"lc_notes": 1}
    for table, column in (
        ("records", "id"),
        ("record_postings", "record_id"),
        ("record_touches", "record_id"),
    ):
        assert count(db, table, **{column: doomed}) == 0, table
    error(lc.get(f"/records/{doomed}"), 404, "not_found")
    assert fetch(lc, kept)["text"] == "Ann likes tea"
    assert count(db, "record_postings", record_id=kept) > 0


def test_a_pending_record_leaves_the_processing_queue(lc: Client, db: Engine) -> None:
    [pending] = written_ids(lc, note("ann", "not embedded yet"))
    assert count(db, "processing_queue", record_id=pending) == 1
    erased(lc, pending)
    assert count(db, "processing_queue", record_id=pending) == 0


def test_the_idempotency_key_goes_with_the_record(lc: Client) -> None:
    [first] = written_ids(lc, note("ann", "once", idempotency_key="k-1"))
    erased(lc, first)
    [again] = written_ids(lc, note("ann", "once", idempotency_key="k-1"))
    assert again != first  # a new write: nothing remembers the erased one
    [replay] = written_ids(lc, note("ann", "once", idempotency_key="k-1"))
    assert replay == again


def test_erasing_the_current_value_restores_the_previous_one(lc: Client) -> None:
    old, middle, current = written_ids(
        lc, fact("ann", "city", "Lisbon"), fact("ann", "city", "Porto"), fact("ann", "city", "Faro")
    )
    ok(lc.post(f"/records/{middle}/retract", json={"reason": "wrong"}))
    erased(lc, current)
    assert fetch(lc, old)["current"] is True  # the newest non-retracted earlier value
    assert fetch(lc, middle)["current"] is False
    erased(lc, old)
    assert fetch(lc, middle)["current"] is False  # retracted values never come back


def test_erasing_a_superseded_value_changes_no_currency(lc: Client) -> None:
    old, current = written_ids(lc, fact("ann", "city", "Lisbon"), fact("ann", "city", "Faro"))
    erased(lc, old)
    assert fetch(lc, current)["current"] is True


def test_a_drafts_lane_falls_back_like_retraction(lc: Client) -> None:
    first, second = written_ids(
        lc, fact("ann", "plan", "draft one", status="draft"), fact("ann", "plan", "draft two", status="draft")
    )
    [active] = written_ids(lc, fact("ann", "plan", "active"))
    erased(lc, second)
    assert fetch(lc, first)["current"] is True and fetch(lc, active)["current"] is True


def test_a_nodes_automatic_links_are_erased_with_it_and_the_restored_nodes_return(
    lc: Client, db: Engine
) -> None:
    old, new = written_ids(lc, node("svc", "svc", ["db"]), node("svc", "svc", ["cache", "queue"]))
    links = rows(
        db,
        "SELECT id::text, link_node_id::text AS node, is_current FROM records WHERE link_node_id IS NOT NULL",
    )
    assert sorted(link["node"] for link in links) == sorted([old, new, new])
    answer = erased(lc, new)
    assert answer["counts"] == {"lc_nodes": 1, "lc_edges": 2}
    left = rows(
        db, "SELECT link_node_id::text AS node, is_current FROM records WHERE link_node_id IS NOT NULL"
    )
    assert left == [{"node": old, "is_current": True}]  # the old node is current again, its link too
    assert fetch(lc, old)["current"] is True


def test_derived_records_keep_existing_with_an_unresolved_parent(lc: Client) -> None:
    [parent] = written_ids(lc, note("ann", "raw event"))
    [child] = written_ids(lc, note("bob", "a reflection", derived_from=[parent]))
    erased(lc, parent)
    assert fetch(lc, child)["derived_from"] == [parent]
    error(lc.get(f"/records/{parent}"), 404)


def test_the_erasure_is_logged_without_the_text(lc: Client, tenant: Any) -> None:
    [doomed] = written_ids(lc, note("ann", "secret marmalade recipe"))
    answer = erased(lc, doomed, {"reason": "GDPR art. 17"})
    entry = ok(lc.get(f"/erasures/{answer['erasure_id']}"))
    assert entry["kind"] == "record" and entry["state"] == "done"
    assert (entry["record_id"], entry["entity"], entry["collection"]) == (doomed, "ann", "lc_notes")
    assert entry["reason"] == "GDPR art. 17" and entry["counts"] == {"lc_notes": 1} and entry["erased"] == 1
    assert entry["requested_by"] == f"key {tenant.key[:12]}"
    assert entry["started_at"] and entry["finished_at"]
    assert "marmalade" not in str(entry)


def test_no_body_and_an_empty_object_are_the_same(lc: Client) -> None:
    a, b = written_ids(lc, note("ann", "a"), note("ann", "b"))
    assert lc.raw.delete(f"/records/{a}", headers=lc.tenant.headers).status_code == 200
    assert ok(lc.get(f"/erasures/{erased(lc, b, {})['erasure_id']}"))["reason"] is None


@pytest.mark.parametrize(
    ("body", "loc"),
    [
        pytest.param({"reason": " "}, ["reason"], id="blank-reason"),
        pytest.param({"reason": 7}, ["reason"], id="number"),
        pytest.param({"why": "x"}, ["why"], id="unknown-key"),
    ],
)
def test_an_invalid_body_is_422_and_erases_nothing(lc: Client, body: Any, loc: list[Any]) -> None:
    [kept] = written_ids(lc, note("ann", "kept"))
    assert [d["loc"] for d in details(delete(lc, f"/records/{kept}", body))] == [loc]
    assert fetch(lc, kept)["text"] == "kept"


@pytest.mark.parametrize("raw", ["not-a-uuid", "00000000-0000-0000-0000-000000000000"])
def test_unknown_and_malformed_ids_are_404(lc: Client, raw: str) -> None:
    error(delete(lc, f"/records/{raw}"), 404, "not_found")


def test_another_workspaces_id_is_404_and_changes_nothing(lc: Client, lc_other: Client, db: Engine) -> None:
    [theirs] = written_ids(lc_other, note("ann", "their record"))
    before = count(db, "records")
    err = error(delete(lc, f"/records/{theirs}", {"reason": "x"}), 404, "not_found")
    assert err["message"] == f"record {theirs} not found"
    assert count(db, "records") == before and count(db, "erasures") == 0
    assert fetch(lc_other, theirs)["text"] == "their record"


def test_row_level_security_hides_other_workspaces_erasures(lc: Client, lc_other: Client, db: Engine) -> None:
    for client in (lc, lc_other):
        [record_id] = written_ids(client, note("ann", "x"))
        erased(client, record_id)
    with workspace_transaction(db, lc.tenant.id) as conn:  # no workspace predicate on purpose
        assert conn.execute(sa.text("SELECT workspace_id FROM erasures")).scalars().all() == [lc.tenant.id]
    insert = "INSERT INTO erasures (workspace_id, id, kind, state)"
    insert += " VALUES (:ws, gen_random_uuid(), 'record', 'done')"
    with workspace_transaction(db, lc.tenant.id) as conn, pytest.raises(sa.exc.ProgrammingError):
        conn.execute(sa.text(insert), {"ws": lc_other.tenant.id})


def test_an_erasure_waits_for_the_worker_processing_the_record(lc: Client, db: Engine) -> None:
    """A worker holds a record's queue row while it computes; the erasure waits for its batch
    instead of deadlocking with it (the worker locks the record after its queue row)."""
    [record_id] = written_ids(lc, note("ann", "being embedded"))
    answers: list[int] = []
    with db.begin() as worker:
        hold(worker, "processing_queue", "record_id", record_id)
        eraser = threading.Thread(
            target=lambda: answers.append(delete(lc, f"/records/{record_id}").status_code)
        )
        eraser.start()
        time.sleep(0.5)
        assert answers == []  # waiting on the queue row
        hold(worker, "records", "id", record_id)
    eraser.join(30)
    assert answers == [200] and count(db, "records", id=record_id) == 0
