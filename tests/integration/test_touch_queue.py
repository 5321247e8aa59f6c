"""The background touch-on-read queue (`memseek.write.touch.TouchQueue`) on the real database."""

from __future__ import annotations

import threading
from datetime import UTC
from datetime import datetime
from datetime import timedelta
from typing import Any
from uuid import UUID

import pytest
import sqlalchemy as sa
from sqlalchemy.engine import Engine

from memseek.db import workspace_transaction
from memseek.schema import last_accessed
from memseek.schema import record_touches
from memseek.schema import records
from memseek.write.touch import LINGER_SECONDS
from memseek.write.touch import TouchQueue
from memseek.write.touch import touch
from tests.conftest import Tenant
from tests.helpers import statements_sent
from tests.helpers import touch_writer_held
from tests.integration.searchdata import NOW
from tests.integration.searchdata import Rec
from tests.integration.searchdata import insert


def given(db: Engine, tenant: Tenant, count: int) -> list[UUID]:
    with db.begin() as conn:
        return insert(conn, tenant.id, *[Rec() for _ in range(count)])


def touched(db: Engine, ids: list[UUID]) -> list[bool]:
    """Whether each record's last_accessed (its own column or its touch) is past the fixture's NOW."""
    query = sa.select(records.c.id, last_accessed() > NOW).where(records.c.id.in_(ids))
    with db.connect() as conn:
        rows = dict(conn.execute(query).all())
    return [rows[i] for i in ids]


def test_queued_touches_are_written_by_flush(db: Engine, tenant: Tenant) -> None:
    a, b, c = given(db, tenant, 3)
    queue = TouchQueue(db)
    queue.add(tenant.id, [a])
    queue.add(tenant.id, [a, b])
    assert queue.flush(timeout=30)
    assert touched(db, [a, b, c]) == [True, True, False]
    assert queue.flush(timeout=0)  # nothing queued: returns at once


def test_one_update_per_workspace_labelled(db: Engine, tenant: Tenant, other_tenant: Tenant) -> None:
    mine = given(db, tenant, 2)
    theirs = given(db, other_tenant, 1)
    queue = TouchQueue(db)
    with statements_sent(db) as sent:
        queue.add(tenant.id, mine)
        queue.add(other_tenant.id, theirs)
        assert queue.flush(timeout=30)
    updates = [s for s in sent if "INSERT INTO record_touches" in s]
    assert 2 <= len(updates) <= 3  # one per workspace and batch; the first id may be a batch alone
    assert all(s.startswith("/* memseek touch-on-read */") for s in updates)
    assert touched(db, [*mine, *theirs]) == [True, True, True]


def test_ids_of_another_workspace_are_never_touched(db: Engine, tenant: Tenant, other_tenant: Tenant) -> None:
    (theirs,) = given(db, other_tenant, 1)
    queue = TouchQueue(db)
    queue.add(tenant.id, [theirs])
    assert queue.flush(timeout=30)
    assert touched(db, [theirs]) == [False]


def test_past_the_bound_touches_are_dropped_and_logged(
    db: Engine, tenant: Tenant, caplog: pytest.LogCaptureFixture
) -> None:
    a, b = given(db, tenant, 2)
    queue = TouchQueue(db, max_pending=1)
    queue.add(tenant.id, [a, a, b])  # a repeated id is one touch
    assert queue.flush(timeout=30)
    assert touched(db, [a, b]) == [True, False]
    assert "1 record touches dropped" in caplog.text


def test_a_record_a_writer_holds_is_touched_without_waiting(db: Engine, tenant: Tenant) -> None:
    """Touches write `record_touches`, never the record row a writer may hold."""
    locked, free = given(db, tenant, 2)
    queue = TouchQueue(db)
    with workspace_transaction(db, tenant.id) as holder:
        holder.execute(sa.text("SELECT 1 FROM records WHERE id = :id FOR UPDATE"), {"id": locked})
        queue.add(tenant.id, [locked, free])
        assert queue.flush(timeout=30)  # done while the lock is still held
        assert touched(db, [locked, free]) == [True, True]
    with db.connect() as conn:
        rows = conn.execute(sa.text("SELECT count(*) FROM records WHERE last_accessed > :now"), {"now": NOW})
        assert rows.scalar() == 0  # record rows are not rewritten


def test_a_failing_write_is_logged_and_the_queue_keeps_going(
    db: Engine, tenant: Tenant, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    (record,) = given(db, tenant, 1)
    queue = TouchQueue(db)

    def broken(*args: Any) -> None:
        raise RuntimeError("lock timeout")

    with monkeypatch.context() as patch:
        patch.setattr("memseek.write.touch.touch", broken)
        queue.add(tenant.id, [record])
        assert queue.flush(timeout=30)
    assert "touch-on-read failed for 1 records" in caplog.text
    queue.add(tenant.id, [record])
    assert queue.flush(timeout=30)
    assert touched(db, [record]) == [True]


def test_settle_waits_for_its_workspace_only(db: Engine, tenant: Tenant, other_tenant: Tenant) -> None:
    mine = given(db, tenant, 2)
    queue = TouchQueue(db)
    assert queue.settle(other_tenant.id, timeout=0)  # nothing of that workspace: at once
    queue.add(tenant.id, mine)
    assert queue.settle(tenant.id, timeout=30)
    assert touched(db, mine) == [True, True]  # written before settle returned, no flush needed


def stored(db: Engine, ids: list[UUID]) -> dict[UUID, datetime]:
    """The touches written for `ids` (rows of `record_touches`)."""
    query = sa.select(record_touches.c.record_id, record_touches.c.last_accessed)
    with db.connect() as conn:
        return dict(conn.execute(query.where(record_touches.c.record_id.in_(ids))).all())


def test_queued_reports_uncommitted_touches_with_the_times_then_written(
    db: Engine, tenant: Tenant, other_tenant: Tenant, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What a search ranks on instead of waiting: the touches being written and those queued
    behind them, until they commit, each with exactly the time the database then holds."""
    a, b, c = given(db, tenant, 3)
    queue = TouchQueue(db)
    with touch_writer_held(monkeypatch) as writing:
        queue.add(tenant.id, [a])
        assert writing.wait(30)
        being_written = queue.queued(tenant.id)
        queue.add(tenant.id, [a, b])  # `a` again, queued behind its own write
        both = queue.queued(tenant.id)
        assert queue.queued(other_tenant.id) == {}
        assert stored(db, [a, b, c]) == {}
    assert set(being_written) == {a}
    assert set(both) == {a, b} and both[a] == both[b] > being_written[a]
    assert queue.flush(timeout=30)
    assert queue.queued(tenant.id) == {}
    assert stored(db, [a, b, c]) == both  # the later touch of `a` wins


def test_a_touch_never_moves_last_accessed_back(db: Engine, tenant: Tenant) -> None:
    """Two processes' writers may commit out of order: the later time stays."""
    (record,) = given(db, tenant, 1)
    later = datetime.now(UTC)
    for at in (later, later - timedelta(seconds=5)):
        with workspace_transaction(db, tenant.id) as conn:
            touch(conn, tenant.id, [record], at)
    assert stored(db, [record]) == {record: later}


def writers() -> set[threading.Thread]:
    return {t for t in threading.enumerate() if t.name == "memseek-touch"}


def test_a_writer_lingers_for_the_next_touches_then_stops(db: Engine, tenant: Tenant) -> None:
    """Searches in quick succession share one writer thread; an idle queue leaves none running."""
    a, b = given(db, tenant, 2)
    queue = TouchQueue(db)
    before = writers()
    queue.add(tenant.id, [a])
    assert queue.flush(timeout=30)
    (mine,) = writers() - before
    queue.add(tenant.id, [b])
    assert queue.flush(timeout=30)
    assert writers() - before == {mine}  # the same thread wrote the second touch
    assert touched(db, [a, b]) == [True, True]
    mine.join(timeout=LINGER_SECONDS + 10)
    assert not mine.is_alive()
    queue.add(tenant.id, [a])  # a new writer starts for later touches
    assert queue.flush(timeout=30)
