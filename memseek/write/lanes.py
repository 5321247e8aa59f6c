"""Keyed-fact lanes (design "Keyed facts", "Drafts"): which record of a slot is current.

A lane is (workspace, collection, entity, key, status); exactly one non-retracted record per lane
is current (the partial unique index `records_current_slot` enforces at most one), chosen by
write order (`lane_seq`), never by processing state. Events (`key` null) are always current until
retracted. Automatic links share their node's `is_current`.

Locking, so that concurrent writers end with one current record and never deadlock:
1. a transaction-level advisory lock per slot (collection, entity, key) — covering both the
   active and the draft lane, since approval moves a record between them — taken in sorted
   order, before any row is touched;
2. then every existing row a statement changes is locked in `id` order in one statement
   (the worker locks the rows it updates in the same order).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from collections.abc import Sequence
from typing import Any
from uuid import UUID

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from memseek.errors import Conflict
from memseek.errors import NotFound
from memseek.schema import lane_seq
from memseek.schema import records
from memseek.write.rows import Lane
from memseek.write.rows import LaneKey
from memseek.write.store import UUID_T
from memseek.write.store import array
from memseek.write.store import fetch
from memseek.write.store import unnest

r = records.c


def lock_key(workspace_id: UUID, *parts: str) -> int:
    """A signed 64-bit advisory lock key for `parts` within one workspace."""
    digest = hashlib.blake2b(json.dumps([str(workspace_id), *parts]).encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big", signed=True)


def lock_keys(conn: Connection, keys: Iterable[int]) -> None:
    """Take transaction-level advisory locks on `keys` in ascending order (one round trip)."""
    ordered = sorted(set(keys))
    if not ordered:
        return
    # unnest emits the array in order, so the locks are taken in that order
    src = unnest({"k": (ordered, sa.BigInteger)}, "keys")
    conn.execute(sa.select(sa.func.pg_advisory_xact_lock(src.c.k)))


def lock_slots(conn: Connection, workspace_id: UUID, slots: Iterable[Lane]) -> None:
    """Serialise writers of the given slots for the rest of the transaction."""
    lock_keys(conn, (lock_key(workspace_id, *slot) for slot in slots))


def _family(workspace_id: UUID, nodes: Sequence[UUID]) -> sa.ColumnElement[bool]:
    """The records `nodes` and their automatic links."""
    ids = array(nodes, UUID_T)
    node_or_link = sa.or_(r.id == sa.any_(ids), r.link_node_id == sa.any_(ids))
    return sa.and_(r.workspace_id == workspace_id, node_or_link)


def lock_family(conn: Connection, workspace_id: UUID, nodes: Sequence[UUID]) -> None:
    """Row-lock `nodes` and their automatic links, in id order."""
    if nodes:
        conn.execute(sa.select(r.id).where(_family(workspace_id, nodes)).order_by(r.id).with_for_update())


def set_current(conn: Connection, workspace_id: UUID, nodes: Sequence[UUID], value: bool) -> None:
    """Make `nodes` and their links current (non-retracted ones only) or superseded."""
    if not nodes:
        return
    where = _family(workspace_id, nodes)
    if value:
        where = sa.and_(where, r.retracted_at.is_(None))
    locked = sa.select(r.id).where(where).order_by(r.id).with_for_update().cte("locked")
    stmt = sa.update(records).where(r.workspace_id == workspace_id, r.id.in_(sa.select(locked.c.id)))
    conn.execute(stmt.values(is_current=value))


def current_of(conn: Connection, workspace_id: UUID, lanes: Sequence[LaneKey]) -> list[UUID]:
    """Ids of the current records of `lanes` (collection, entity, key, status)."""
    if not lanes:
        return []
    cols = ("collection", "entity", "key", "status")
    src = unnest({name: ([lane[i] for lane in lanes], sa.Text) for i, name in enumerate(cols)}, "l")
    stmt = (
        sa.select(r.id)
        .join(src, sa.and_(*(r[name] == src.c[name] for name in cols)))
        .where(r.workspace_id == workspace_id, r.is_current, r.key.is_not(None))
    )
    return list(conn.scalars(stmt))


def newest_in_lane(
    conn: Connection, workspace_id: UUID, lane: LaneKey, excluding: Sequence[UUID]
) -> UUID | None:
    """The non-retracted record of `lane` written last, other than those in `excluding`."""
    collection, entity, key, status = lane
    stmt = (
        sa.select(r.id)
        .where(
            r.workspace_id == workspace_id,
            r.collection == collection,
            r.entity == entity,
            r.key == key,
            r.status == status,
            r.retracted_at.is_(None),
            r.id != sa.all_(array(excluding, UUID_T)),
        )
        .order_by(r.lane_seq.desc())
        .limit(1)
    )
    return conn.scalar(stmt)


def _locked_record(conn: Connection, workspace_id: UUID, record_id: UUID) -> Any:
    """The record after its slot lock is held (404 when it is not in this workspace)."""
    row = fetch(conn, workspace_id, record_id)
    if row is None:
        raise NotFound(f"record {record_id} not found")
    if row.key is not None:
        lock_slots(conn, workspace_id, [(row.collection, row.entity, row.key)])
        row = fetch(conn, workspace_id, record_id)
    return row


def _lane(row: Any, status: str | None = None) -> LaneKey:
    return row.collection, row.entity, row.key, status or row.status


def retract(
    conn: Connection, workspace_id: UUID, record_id: UUID, reason: str, *, draft_only: bool = False
) -> None:
    """Retract a record; when it was current, the newest earlier value of its lane becomes current."""
    row = _locked_record(conn, workspace_id, record_id)
    if row.retracted_at is not None:
        raise Conflict(f"record {record_id} is already retracted")
    if draft_only and row.status != "draft":
        raise Conflict(f"record {record_id} is not a draft; only drafts can be rejected")
    restore = None
    if row.key is not None and row.is_current:
        restore = newest_in_lane(conn, workspace_id, _lane(row), excluding=[record_id])
    lock_family(conn, workspace_id, [record_id] + ([restore] if restore else []))
    set_current(conn, workspace_id, [record_id], False)
    conn.execute(
        sa.update(records)
        .where(r.workspace_id == workspace_id, r.id == record_id)
        .values(retracted_at=sa.func.now(), retraction_reason=reason)
    )
    if restore is not None:
        set_current(conn, workspace_id, [restore], True)


def approve(conn: Connection, workspace_id: UUID, record_id: UUID) -> None:
    """Move a draft into the active lane as its current value; the draft lane falls back a value."""
    row = _locked_record(conn, workspace_id, record_id)
    if row.status != "draft" or row.retracted_at is not None:
        raise Conflict(f"record {record_id} is not a pending draft (retracted, or already active)")
    previous = current_of(conn, workspace_id, [_lane(row, "active")]) if row.key is not None else []
    restore = None
    if row.key is not None and row.is_current:
        restore = newest_in_lane(conn, workspace_id, _lane(row), excluding=[record_id])
    lock_family(conn, workspace_id, [record_id, *previous] + ([restore] if restore else []))
    set_current(conn, workspace_id, previous, False)
    family = _family(workspace_id, [record_id])
    conn.execute(sa.update(records).where(family).values(status="active"))
    # The next value read first, then written: Citus runs no volatile function in an UPDATE.
    entered = conn.execute(sa.select(lane_seq.next_value())).scalar_one()
    conn.execute(
        sa.update(records).where(r.workspace_id == workspace_id, r.id == record_id).values(lane_seq=entered)
    )
    set_current(conn, workspace_id, [record_id], True)
    if restore is not None:
        set_current(conn, workspace_id, [restore], True)
