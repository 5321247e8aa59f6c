"""`last_accessed`: when a search last returned a record (spec "A note on last_accessed").

Touch-on-read is best-effort by spec, so it stays off the search's path: a search hands its hit
ids to the process's `TouchQueue` and returns; a writer thread coalesces what is queued (one set
of ids per workspace) and writes each workspace's set with one upsert. The queue is bounded and
drops ids past the bound rather than slow a search down.

A touch's time is the moment its search handed the ids over (the application's clock, as a
search's `now` is), not the moment the writer gets to them: so a later search of this process
can rank on touches still queued (`TouchQueue.queued`) with exactly the value the database will
hold once they are written, instead of waiting for them.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterable
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC
from datetime import datetime
from uuid import UUID

import sqlalchemy as sa
from sqlalchemy.dialects.postgresql import ARRAY
from sqlalchemy.dialects.postgresql import insert
from sqlalchemy.engine import Connection
from sqlalchemy.engine import Engine

from memseek.db import DATABASE_OUTAGES
from memseek.db import STATEMENT_LABEL
from memseek.db import workspace_transaction
from memseek.logs import first_line
from memseek.logs import log_throttled
from memseek.schema import record_touches
from memseek.schema import records
from memseek.write.erase import touch_lock
from memseek.write.store import TS
from memseek.write.store import UUID_T

log = logging.getLogger(__name__)

MAX_PENDING = 20_000
"""Ids waiting to be touched, over all workspaces; more are dropped (and counted)."""
LIMITS = {"statement_timeout": "5s", "lock_timeout": "1s", "synchronous_commit": "off"}
"""A touch never waits long: the writer must keep up, and shutdown waits for it. Nor does it
wait for its commit to reach the disk: touches are best-effort (a crash may lose the last few
hundred milliseconds of them), while a search that follows one ranks on it before it is
written (`queued`). The commit is visible at once either way; only its durability is deferred."""
LABEL = "touch-on-read"
SETTLE_SECONDS = 1.0
"""The longest a record read waits for its workspace's queued touches; then it reads what is there."""
LINGER_SECONDS = 1.0
"""How long an idle writer waits for more touches before it stops. Under steady searching it
never stops, so no search pays for starting a thread: `start()` returns only once the new
thread has been scheduled, which costs a scheduler round trip on a busy host."""


def touch(conn: Connection, workspace_id: UUID, ids: Iterable[UUID], at: datetime) -> None:
    """Set `last_accessed` to `at` for `ids` of this workspace (rows of `record_touches`), unless
    a touch already set a later time (two processes' writers may commit out of order).

    Record rows are never rewritten, so a touch neither waits for a writer holding a record nor
    takes pages of `records` out of the visibility map (sql/0008_touches.sql). Ids are written
    in order, so two processes touching the same records cannot deadlock. A row can only ever
    be written for this workspace (row-level security), and only for a record that still exists:
    the ids are hits of a search that may have run before an erasure, and an erased record
    leaves no row behind. The touch holds the workspace's touch lock shared
    (`erase.touch_lock`), taken before the upsert's snapshot: an erasure takes it exclusively
    before it deletes touches, so it waits for a touch in flight and a later touch finds the
    record gone. The existence check reads `records`, whose planning weighs every index of the
    table; the writer's connections run the statement often enough for psycopg to prepare it,
    which plans it once per connection.
    """
    wanted = sorted(set(ids))
    if wanted:
        conn.execute(sa.select(sa.func.pg_advisory_xact_lock_shared(touch_lock(workspace_id))))
        conn.execute(_TOUCH, {"workspace_id": workspace_id, "ids": wanted, "at": at})


def _touch_statement() -> sa.Insert:
    """The touch upsert, built once: constructing it per call cost more CPU than running it
    (the writer thread shares the interpreter with the requests it follows)."""
    ids = sa.bindparam("ids", type_=ARRAY(UUID_T))
    workspace = sa.bindparam("workspace_id", type_=UUID_T)
    at = sa.bindparam("at", type_=TS)
    r = records.c
    # The rows come from `records` itself, workspace column included: on Citus an INSERT …
    # SELECT between co-located tables that carries the source's distribution column runs on
    # the one shard both name; the existence check is the same.
    rows = (
        sa.select(r.workspace_id, r.id, at)
        .where(r.workspace_id == workspace, r.id == sa.any_(ids))
        .order_by(r.id)
    )
    stmt = insert(record_touches).from_select(["workspace_id", "record_id", "last_accessed"], rows)
    keys = [record_touches.c.workspace_id, record_touches.c.record_id]
    latest = sa.func.greatest(record_touches.c.last_accessed, stmt.excluded.last_accessed, type_=TS)
    newer = {"last_accessed": latest}
    return stmt.on_conflict_do_update(index_elements=keys, set_=newer)


_TOUCH = _touch_statement()


@dataclass(frozen=True, slots=True)
class Batch:
    """One workspace's ids taken by the writer, and the time they are touched with."""

    ids: frozenset[UUID]
    at: datetime


class TouchQueue:
    """Touches waiting to be written, and the thread that writes them.

    The writer runs only while there is work: `add` starts it when no writer runs, and it exits
    once the queue has stayed empty for `LINGER_SECONDS`. It is not a daemon thread, so a process
    that exits normally first writes what is queued (each statement is bounded by `LIMITS`).

    A workspace's queued ids share one time, that of its latest `add`: an id an earlier search
    queued counts as read when the latest did, at most one write's duration later (the writer
    used to write the database's `now()`, later still). The writer writes each set with the time
    it had when taken, and `queued` reports the same times until that write has committed.
    """

    def __init__(self, engine: Engine, max_pending: int = MAX_PENDING) -> None:
        self._engine = engine
        self._max_pending = max_pending
        self._state = threading.Condition()
        self._pending: dict[UUID, set[UUID]] = {}
        self._pending_at: dict[UUID, datetime] = {}
        self._count = 0
        self._writer: threading.Thread | None = None
        self._writing: dict[UUID, Batch] = {}  # the batch being written, until each commits
        self._started = 0  # batches taken by the writer
        self._finished = 0  # batches written (or failed)
        self.dropped = 0

    def add(self, workspace_id: UUID, ids: Sequence[UUID]) -> None:
        """Queue `ids` of a workspace to be touched now; returns at once."""
        at = datetime.now(UTC)
        with self._state:
            queued = self._pending.setdefault(workspace_id, set())
            fresh = [i for i in dict.fromkeys(ids) if i not in queued]
            room = max(0, self._max_pending - self._count)
            if len(fresh) > room:
                self.dropped += len(fresh) - room
                fresh = fresh[:room]
            queued.update(fresh)
            self._count += len(fresh)
            if not queued.isdisjoint(ids):
                self._pending_at[workspace_id] = at
            self._state.notify_all()  # a lingering writer takes them now
            if self._writer is None and self._count:
                writer = threading.Thread(target=self._run, name="memseek-touch")
                writer.start()  # it waits for this lock before it looks at the queue
                self._writer = writer  # only once started: a failed start leaves the next add to retry

    def queued(self, workspace_id: UUID) -> dict[UUID, datetime]:
        """The workspace's touches not yet committed (queued or being written), each id with the
        time it will be written with: what a search ranks on instead of waiting for them
        (read-your-touches without the wait). An id both being written and queued again has
        its later, queued time, which its next write sets."""
        with self._state:
            found: dict[UUID, datetime] = {}
            if (writing := self._writing.get(workspace_id)) is not None:
                found.update(dict.fromkeys(writing.ids, writing.at))
            if pending := self._pending.get(workspace_id):
                found.update(dict.fromkeys(pending, self._pending_at[workspace_id]))
            return found

    def flush(self, timeout: float | None = None) -> bool:
        """Wait until everything queued before this call is written; False on timeout."""
        with self._state:
            target = self._started + 1 if self._count else self._started
            return self._state.wait_for(lambda: self._finished >= target, timeout)

    def settle(self, workspace_id: UUID, timeout: float = SETTLE_SECONDS) -> bool:
        """Wait until no touch of this workspace is queued or being written (read-your-touches:
        a record read after a search shows the `last_accessed` that search set); False on timeout."""
        with self._state:
            return self._state.wait_for(
                lambda: not self._pending.get(workspace_id) and workspace_id not in self._writing, timeout
            )

    def _run(self) -> None:
        STATEMENT_LABEL.set(LABEL)
        while batch := self._take():
            for workspace_id, taken in batch.items():
                self._write(workspace_id, taken)
                with self._state:
                    del self._writing[workspace_id]
                    self._state.notify_all()
            with self._state:
                self._finished += 1
                self._state.notify_all()

    def _take(self) -> dict[UUID, Batch]:
        """Everything queued, waiting up to `LINGER_SECONDS` for some (empty: the writer stops)."""
        with self._state:
            self._state.wait_for(lambda: self._count > 0, LINGER_SECONDS)
            batch = {
                ws: Batch(frozenset(ids), self._pending_at[ws]) for ws, ids in self._pending.items() if ids
            }
            self._pending, self._pending_at, self._count = {}, {}, 0
            self._writing = dict(batch)
            if batch:
                self._started += 1
            else:
                self._writer = None
            if self.dropped:
                log.warning("touch-on-read queue full: %d record touches dropped", self.dropped)
                self.dropped = 0
            return batch

    def _write(self, workspace_id: UUID, batch: Batch) -> None:
        try:
            with workspace_transaction(self._engine, workspace_id, LIMITS) as conn:
                touch(conn, workspace_id, batch.ids, batch.at)
        except DATABASE_OUTAGES as exc:  # an outage: one line per interval, no traceback
            log_throttled(log, logging.WARNING, "touch-database", "touch-on-read failed: %s", first_line(exc))
        except Exception:  # best-effort by spec: the searches already succeeded
            log.exception("touch-on-read failed for %d records", len(batch.ids))
