"""A workspace at a glance: its records by collection version and processing state, and its queue.

`GET /collections` and the inspector show these counts beside the catalog's declarations. One
statement answers them all, whatever the number of collections: the records counted per
collection version (states as the write path sets them; a retracted record counts only as
retracted, since no read returns it), and the workspace's processing queue. It counts every
record of the workspace, so its cost grows with the workspace; it is an operator's view, not a
call for every request of an application.
"""

from __future__ import annotations

from dataclasses import asdict
from dataclasses import dataclass
from datetime import datetime
from uuid import UUID

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from memseek.schema import processing_queue
from memseek.schema import records

STATES = ("pending", "ready", "failed")
"""Processing states of a record that is not retracted."""


@dataclass(frozen=True, slots=True)
class Counts:
    """Records of one collection version: by processing state, and retracted."""

    pending: int = 0
    ready: int = 0
    failed: int = 0
    retracted: int = 0

    def to_json(self) -> dict[str, int]:
        return asdict(self)


@dataclass(frozen=True, slots=True)
class Queue:
    """The workspace's processing queue: records waiting, those retried after a failure, and
    when the oldest waiting one was queued."""

    depth: int = 0
    retrying: int = 0
    oldest: datetime | None = None

    def to_json(self) -> dict[str, object]:
        oldest = self.oldest.isoformat() if self.oldest is not None else None
        return {"depth": self.depth, "retrying": self.retrying, "oldest_enqueued_at": oldest}


@dataclass(frozen=True, slots=True)
class Overview:
    """Counts by (collection, version), and the queue."""

    counts: dict[tuple[str, int], Counts]
    queue: Queue


def _counts_statement(workspace_id: UUID) -> sa.Select[tuple[object, ...]]:
    r, q = records.c, processing_queue.c
    live = r.retracted_at.is_(None)
    by_state = [sa.func.count().filter(live & (r.processing == state)).label(state) for state in STATES]
    counts = (
        sa.select(
            r.collection, r.collection_version, *by_state, sa.func.count().filter(~live).label("retracted")
        )
        .where(r.workspace_id == workspace_id)
        .group_by(r.collection, r.collection_version)
        .subquery("counts")
    )
    queue = (
        sa.select(
            sa.func.count().label("depth"),
            sa.func.count().filter(q.attempts > 0).label("retrying"),
            sa.func.min(q.enqueued_at).label("oldest"),
        )
        .where(q.workspace_id == workspace_id)
        .subquery("queue")
    )
    # The queue's one row joined to every count row (or alone, in an empty workspace).
    return sa.select(queue, counts).select_from(queue.outerjoin(counts, sa.true()))


def overview(conn: Connection, workspace_id: UUID) -> Overview:
    """The workspace's counts and queue, in one statement (run in its scoped transaction)."""
    rows = conn.execute(_counts_statement(workspace_id)).mappings().all()
    counts = {
        (row["collection"], row["collection_version"]): Counts(*(row[s] for s in (*STATES, "retracted")))
        for row in rows
        if row["collection"] is not None
    }
    first = rows[0]
    return Overview(counts, Queue(first["depth"], first["retrying"], first["oldest"]))


def last_seq(conn: Connection, workspace_id: UUID) -> int:
    """The ingestion order number of the workspace's newest record (0 when it has none): records
    written after this moment have a higher one."""
    newest = sa.select(sa.func.coalesce(sa.func.max(records.c.seq), 0)).where(
        records.c.workspace_id == workspace_id
    )
    return int(conn.execute(newest).scalar_one())


def counts_since(conn: Connection, workspace_id: UUID, seq: int) -> Counts:
    """The workspace's records written after ingestion order `seq`, by processing state."""
    r = records.c
    live = r.retracted_at.is_(None)
    by_state = [sa.func.count().filter(live & (r.processing == state)) for state in STATES]
    query = sa.select(*by_state, sa.func.count().filter(~live)).where(
        r.workspace_id == workspace_id, r.seq > seq
    )
    row = conn.execute(query).one()
    return Counts(row[0], row[1], row[2], row[3])
