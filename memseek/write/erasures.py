"""Erasures: of one record, of everything about an entity, of a collection's expired records; the
log that proves them (docs/lifecycle.md).

Every erasure is a row of `erasures`: what was named (a record id, an entity and optionally a
collection, a retention rule), why, by whom, when, and how many records of each collection went
— never the erased text, content or vectors. The deletions themselves are `erase.erase_records`.

One record is erased in the request's transaction. An entity or a retention run is erased in
batches of `BATCH` records, each batch its own transaction, so neither a huge transaction nor
long-held locks stand in the way of writers; the row is the job's state (`running`, then `done`,
with its counts so far), so a crash loses at most the batch in flight, and any worker resumes
the job where it stood. A batch holds the job's row lock (`FOR UPDATE`; workers claim with `SKIP
LOCKED`, as the processing queue does), so batches of one job never run at once. An entity of at
most `SYNC_LIMIT` records is forgotten within the request; a larger one is left to the workers
(`memseek serve`'s in-process worker or `memseek worker`) and its request answers at once.

The fence: a batched erasure erases the records whose ingestion position (`seq`) is at most the
workspace's highest when it began (`high_water`). Records written after it began survive, and
so do their automatic links; writes still in flight when it began (accepted, not yet committed)
may go either way. An entity's records are read through `records_entity`, in ingestion order,
each batch stopping after its first `BATCH` rows; links naming the entity (below) come last.

What "about an entity" covers: the records whose `entity` is it, their automatic links, and the
link records of every edges collection whose subject or object is it — the ends a graph view maps
(`graph.subject`, `graph.object`) and the ends automatic links write (`links.edge_field_names`).
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Callable
from collections.abc import Mapping
from dataclasses import dataclass
from dataclasses import replace
from datetime import datetime
from functools import partial
from typing import Any
from uuid import UUID

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from memseek import citus
from memseek.catalog.catalog import Catalog
from memseek.db import DATABASE_OUTAGES
from memseek.db import scope_settings
from memseek.db import set_local
from memseek.db import workspace_transaction
from memseek.errors import NotFound
from memseek.logs import first_line
from memseek.runtime import Runtime
from memseek.schema import erasures
from memseek.schema import field_text
from memseek.schema import inline
from memseek.schema import records
from memseek.write import store
from memseek.write.erase import erase_records
from memseek.write.ids import uuid7
from memseek.write.links import edge_field_names

BATCH = 500
"""Records erased per transaction (their automatic links come with them)."""
SYNC_LIMIT = 1000
"""An entity with at most this many records to erase is forgotten within its request (two
batches); a larger one is erased by the workers, and its request answers `202` at once."""

e = erasures.c
r = records.c
log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class Erasure:
    """One row of the erasure log (`erasures`)."""

    workspace_id: UUID
    id: UUID
    kind: str
    state: str
    record_id: UUID | None = None
    entity: str | None = None
    collection: str | None = None
    reason: str | None = None
    requested_by: str | None = None
    high_water: int | None = None
    cutoff_field: str | None = None
    cutoff: datetime | None = None
    counts: Mapping[str, int] | None = None
    started_at: datetime | None = None
    finished_at: datetime | None = None

    @property
    def done(self) -> bool:
        return self.state == "done"

    @property
    def erased(self) -> int:
        """Records erased so far, over every collection."""
        return sum((self.counts or {}).values())

    def to_json(self) -> dict[str, Any]:
        """The erasure as `GET /erasures/{id}` shows it."""
        retention = None
        if self.cutoff_field is not None:
            retention = {"field": self.cutoff_field, "cutoff": store.iso(self.cutoff)}
        return {
            "id": str(self.id),
            "kind": self.kind,
            "state": self.state,
            "record_id": None if self.record_id is None else str(self.record_id),
            "entity": self.entity,
            "collection": self.collection,
            "retention": retention,
            "reason": self.reason,
            "requested_by": self.requested_by,
            "counts": dict(sorted((self.counts or {}).items())),
            "erased": self.erased,
            "started_at": store.iso(self.started_at),
            "finished_at": store.iso(self.finished_at),
        }


def _from_row(row: Any) -> Erasure:
    return Erasure(**{name: value for name, value in row._mapping.items() if name in Erasure.__slots__})


def insert_erasure(conn: Connection, erasure: Erasure) -> Erasure:
    """Log `erasure` (finished now when it is done); the row as stored."""
    values = {
        name: getattr(erasure, name)
        for name in Erasure.__slots__
        if getattr(erasure, name) is not None and name not in ("started_at", "counts")
    }
    values["counts"] = dict(erasure.counts or {})
    if erasure.done:
        values["finished_at"] = sa.func.now()
    return _from_row(conn.execute(sa.insert(erasures).values(values).returning(erasures)).one())


def get_erasure(conn: Connection, workspace_id: UUID, erasure_id: UUID, *, lock: bool = False) -> Erasure:
    """One erasure of this workspace (`NotFound` otherwise); `lock` holds its row (the job's
    state) until the transaction ends."""
    stmt = sa.select(erasures).where(e.workspace_id == workspace_id, e.id == erasure_id)
    row = conn.execute(stmt.with_for_update() if lock else stmt).one_or_none()
    if row is None:
        raise NotFound(f"erasure {erasure_id} not found")
    return _from_row(row)


def list_erasures(conn: Connection, workspace_id: UUID, after: UUID | None, limit: int) -> list[Erasure]:
    """Up to `limit` erasures of this workspace, newest first (ids are time-ordered), after `after`."""
    where = [e.workspace_id == workspace_id]
    if after is not None:
        where.append(e.id < after)
    stmt = sa.select(erasures).where(*where).order_by(e.id.desc()).limit(limit)
    return [_from_row(row) for row in conn.execute(stmt)]


def high_water(conn: Connection, workspace_id: UUID) -> int:
    """The workspace's highest ingestion position now (0 when it holds nothing)."""
    stmt = sa.select(sa.func.coalesce(sa.func.max(r.seq), 0)).where(r.workspace_id == workspace_id)
    return int(conn.scalar(stmt) or 0)


# --- one record ---------------------------------------------------------------------------------


def erase_record(
    conn: Connection, workspace_id: UUID, record_id: UUID, reason: str | None, requested_by: str | None
) -> Erasure:
    """Erase one record (and its automatic links) and log it; `NotFound` when the workspace has no
    such record."""
    row = store.fetch(conn, workspace_id, record_id)
    if row is None:
        raise NotFound(f"record {record_id} not found")
    counts = erase_records(conn, workspace_id, [record_id])
    erasure = Erasure(
        workspace_id, uuid7(), "record", "done", record_id, row.entity, row.collection, reason, requested_by
    )
    return insert_erasure(conn, replace(erasure, counts=counts))


# --- what a batched erasure selects ---------------------------------------------------------------


def edge_ends(catalog: Catalog) -> list[tuple[str, sa.ColumnElement[str]]]:
    """(edges collection, one end of its links as SQL) for every end a graph view maps or an
    automatic link writes: a declared field's materialised value, else the content key the link
    writes it at (`links.link_content`)."""
    ends = {
        (v.graph.edges, end)
        for v in catalog.all_views()
        if v.graph
        for end in (v.graph.subject, v.graph.object)
    }
    for versions in catalog.collections.values():
        for decl in (link for collection in versions for link in collection.links):
            subject, obj, _ = edge_field_names(catalog, decl.edges)
            ends |= {(decl.edges, subject), (decl.edges, obj)}
    return [(edges, _end(catalog, edges, name)) for edges, name in sorted(ends)]


def _end(catalog: Catalog, edges: str, name: str) -> sa.ColumnElement[str]:
    if any(name in version.fields for version in catalog.versions(edges)):
        return field_text(records, name)
    end: sa.ColumnElement[str] = r.content.op("->>", return_type=sa.Text)(inline(name))
    return end


def _selections(catalog: Catalog, erasure: Erasure) -> list[sa.Select[Any]]:
    """The statements whose ids the erasure erases, in the order batches take them."""
    fence = [r.workspace_id == erasure.workspace_id, r.seq <= erasure.high_water]
    if erasure.collection is not None:
        fence.append(r.collection == erasure.collection)
    if erasure.kind == "retention":
        return [sa.select(r.id).where(*fence, r[str(erasure.cutoff_field)] < erasure.cutoff)]
    own = sa.select(r.id).where(*fence, r.entity == erasure.entity).order_by(r.seq)
    links = [
        sa.select(r.id).where(*fence, r.collection == edges, end == erasure.entity)
        for edges, end in edge_ends(catalog)
        if erasure.collection in (None, edges)
    ]
    return [own, *links]


def _batch_ids(conn: Connection, catalog: Catalog, erasure: Erasure, limit: int) -> list[UUID]:
    """Up to `limit` ids the erasure still has to erase."""
    found: dict[UUID, None] = {}
    for stmt in _selections(catalog, erasure):
        if len(found) >= limit:
            break
        found.update(dict.fromkeys(conn.scalars(stmt.limit(limit - len(found)))))
    return list(found)


def run_batch(conn: Connection, catalog: Catalog, erasure: Erasure) -> Erasure:
    """Erase the erasure's next batch and record it; done when the batch was the last. The caller
    holds the erasure's row lock (`get_erasure(lock=True)` or `claim`)."""
    ids = _batch_ids(conn, catalog, erasure, BATCH)
    counts = Counter(erasure.counts or {}) + erase_records(conn, erasure.workspace_id, ids)
    done = len(ids) < BATCH
    values: dict[str, Any] = {"counts": dict(counts), "state": "done" if done else "running"}
    if done:
        values["finished_at"] = sa.func.now()
    stmt = (
        sa.update(erasures)
        .where(e.workspace_id == erasure.workspace_id, e.id == erasure.id)
        .values(values)
        .returning(erasures)
    )
    return _from_row(conn.execute(stmt).one())


# --- an entity ------------------------------------------------------------------------------------


def begin_forget(
    conn: Connection,
    catalog: Catalog,
    workspace_id: UUID,
    entity: str,
    collection: str | None,
    reason: str | None,
    requested_by: str | None,
) -> tuple[Erasure, bool]:
    """Log the erasure of everything about `entity` (in `collection`, when given) and whether it
    is small enough to finish within the request (`SYNC_LIMIT`); `NotFound` when nothing in the
    workspace is about it."""
    erasure = Erasure(
        workspace_id, uuid7(), "entity", "running", None, entity, collection, reason, requested_by
    )
    erasure = replace(erasure, high_water=high_water(conn, workspace_id))
    found = len(_batch_ids(conn, catalog, erasure, SYNC_LIMIT + 1))
    if not found:
        where = f" in collection {collection!r}" if collection is not None else ""
        raise NotFound(f"no records about entity {entity!r}{where}")
    erasure = insert_erasure(conn, erasure)
    store.notify_workers(conn)
    return erasure, found <= SYNC_LIMIT


Progress = Callable[[Erasure], None]


def finish(
    runtime: Runtime, workspace_id: UUID, erasure_id: UUID, progress: Progress | None = None
) -> Erasure:
    """Run the erasure's batches here until it is done (a worker may take some of them too)."""
    while True:
        with workspace_transaction(runtime.engine, workspace_id) as conn:
            erasure = get_erasure(conn, workspace_id, erasure_id, lock=True)
            if not erasure.done:
                erasure = run_batch(conn, runtime.catalog, erasure)
        runtime.search.large_workspaces.discard(workspace_id)
        if progress is not None:
            progress(erasure)
        if erasure.done:
            return erasure


def forget(
    runtime: Runtime,
    workspace_id: UUID,
    entity: str,
    collection: str | None = None,
    reason: str | None = None,
    requested_by: str | None = None,
) -> Erasure:
    """`DELETE /entities/{entity}`: the erasure, done when the entity was small enough to finish
    here (`SYNC_LIMIT`), else running for the workers. A small one that cannot finish in time
    (the request's deadline passed while a batch waited for locks, or the database went away
    after the erasure was logged) is returned running too: it is logged and the workers finish
    it, so the caller follows it like a large one rather than getting an error for a job that
    goes on."""
    with workspace_transaction(runtime.engine, workspace_id) as conn:
        erasure, small = begin_forget(
            conn, runtime.catalog, workspace_id, entity, collection, reason, requested_by
        )
    if not small:
        return erasure
    try:
        return finish(runtime, workspace_id, erasure.id)
    except DATABASE_OUTAGES as exc:
        log.warning("erasure %s goes on in the background: %s", erasure.id, first_line(exc))
        return erasure


# --- workers --------------------------------------------------------------------------------------


def claim(conn: Connection) -> Erasure | None:
    """The oldest running erasure of any workspace that no one else holds, its row locked (on
    Citus, of the workspace of the oldest running one: `citus.claim_in_one_workspace`); the
    transaction goes on confined to the erasure's workspace (role and row-level security), on
    Citus entered before the row is locked."""
    running = sa.select(erasures).where(e.state == "running").order_by(e.started_at, e.id).limit(1)
    oldest = running.with_only_columns(e.workspace_id).prefix_with(DUE, dialect="postgresql")
    locking = running.with_for_update(skip_locked=True)
    stmt = citus.claim_in_one_workspace(conn, locking, oldest, e.workspace_id, enter=partial(_enter, conn))
    row = None if stmt is None else conn.execute(stmt).one_or_none()
    if row is None:
        return None
    if not citus.enabled(conn):  # on Citus, entered before the claim
        _enter(conn, row.workspace_id)
    return _from_row(row)


def _enter(conn: Connection, workspace_id: UUID) -> None:
    set_local(conn, scope_settings(workspace_id))


DUE = "/* memseek worker due */"
"""The label of the look-ups of whose work is due (a queue row, an erasure, a retention run): the
background jobs' statements that read every workspace."""


def work_once(runtime: Runtime) -> bool:
    """One batch of the oldest unclaimed running erasure; False when there is none. Workers
    connect as the login role to claim across workspaces; the batch itself runs confined to the
    erasure's workspace (role and row-level security), in the claiming transaction (`claim`)."""
    with runtime.engine.begin() as conn:
        erasure = claim(conn)
        if erasure is None:
            return False
        run_batch(conn, runtime.catalog, erasure)
    runtime.search.large_workspaces.discard(erasure.workspace_id)
    return True
