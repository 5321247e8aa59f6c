"""Erasure: the one place records are deleted (`erase_records`).

Erasing a record deletes its row — text, content, vector, scores, annotations, idempotency key —
and with it its keyword postings (the delete trigger of `records`), its processing queue row
(the queue's foreign key cascades), its touch and the automatic links it created (records whose
`link_node_id` is it). Nothing is kept as a flag. When an erased record was the current value of
a keyed slot, the slot follows the retraction rule: the newest non-retracted value of its lane
left becomes current (`memseek.write.lanes`). Records derived from an erased one keep existing;
their `derived_from` still names its id, which no longer resolves.

Every deletion of records goes through `erase_records`, so whatever must follow a deletion is
maintained in one place: the delete trigger appends −1 to the workspace's BM25 statistics, and
the deleted records' lexemes are folded then (`text_stats.fold`), so that a word no record holds
any more leaves no row.

Locks, in the order every other writer takes them, so erasure never deadlocks with them:
1. the slot advisory locks of the keyed records (sorted, as writes, retractions and approvals
   take them);
2. the queue rows of the records, in id order: a worker processing one of them holds its queue
   row until its batch commits, and locks the record only after it (`worker._lock_records`), so
   the erasure waits for that batch instead of deadlocking with it;
3. the record rows (and the rows a restore makes current) in id order;
4. after the delete, the workspace's BM25 fold lock (`text_stats.lock`), which compaction takes
   alone;
5. then the workspace's touch lock, exclusively: touches hold it shared while they
   upsert (`memseek.write.touch`), so once it is held no touch of an erased record is in flight,
   and a later one finds the record gone and writes nothing.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any
from uuid import UUID

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from memseek.schema import processing_queue
from memseek.schema import record_touches
from memseek.schema import records
from memseek.write import lanes
from memseek.write import text_stats
from memseek.write.rows import LaneKey
from memseek.write.store import UUID_T
from memseek.write.store import array

r = records.c


def touch_lock(workspace_id: UUID) -> int:
    """The advisory lock key touches of `workspace_id` hold shared and erasures exclusively."""
    return lanes.lock_key(workspace_id, "touches")


def erase_records(conn: Connection, workspace_id: UUID, ids: Sequence[UUID]) -> Counter[str]:
    """Erase `ids` of this workspace and their automatic links (module docstring); how many
    records of each collection went. Ids not in the workspace are ignored."""
    if not ids:
        return Counter()
    family = _family(conn, workspace_id, ids)
    lanes.lock_slots(
        conn, workspace_id, {(f.collection, f.entity, f.key) for f in family if f.key is not None}
    )
    family = _family(conn, workspace_id, ids)  # as it stands now that its slots are held
    doomed = sorted(f.id for f in family)
    _lock_queue(conn, workspace_id, doomed)
    restores = _restores(conn, workspace_id, family, doomed)
    lanes.lock_family(conn, workspace_id, sorted({*doomed, *restores}))
    erased = _delete(conn, workspace_id, doomed)
    lanes.set_current(conn, workspace_id, restores, True)
    conn.execute(sa.select(sa.func.pg_advisory_xact_lock(touch_lock(workspace_id))))
    touches = record_touches.c
    conn.execute(
        sa.delete(record_touches).where(
            touches.workspace_id == workspace_id, touches.record_id == sa.any_(array(doomed, UUID_T))
        )
    )
    return erased


def _family(conn: Connection, workspace_id: UUID, ids: Sequence[UUID]) -> list[Any]:
    """The records `ids` and their automatic links, with what lanes need of them."""
    wanted = array(sorted(set(ids)), UUID_T)
    stmt = sa.select(r.id, r.collection, r.entity, r.key, r.status, r.is_current).where(
        r.workspace_id == workspace_id, sa.or_(r.id == sa.any_(wanted), r.link_node_id == sa.any_(wanted))
    )
    return list(conn.execute(stmt))


def _lock_queue(conn: Connection, workspace_id: UUID, ids: Sequence[UUID]) -> None:
    q = processing_queue.c
    stmt = (
        sa.select(q.record_id)
        .where(q.workspace_id == workspace_id, q.record_id == sa.any_(array(ids, UUID_T)))
        .order_by(q.record_id)
        .with_for_update()
    )
    conn.execute(stmt)


def _restores(
    conn: Connection, workspace_id: UUID, family: Sequence[Any], doomed: Sequence[UUID]
) -> list[UUID]:
    """For each lane whose current value is erased, the value that becomes current instead."""
    emptied: set[LaneKey] = {
        (f.collection, f.entity, f.key, f.status) for f in family if f.key and f.is_current
    }
    found = (lanes.newest_in_lane(conn, workspace_id, lane, excluding=doomed) for lane in sorted(emptied))
    return [restore for restore in found if restore is not None]


def _delete(conn: Connection, workspace_id: UUID, ids: Sequence[UUID]) -> Counter[str]:
    stmt = (
        sa.delete(records)
        .where(r.workspace_id == workspace_id, r.id == sa.any_(array(ids, UUID_T)))
        .returning(r.collection, sa.func.tsvector_to_array(r.tsv))
    )
    deleted = conn.execute(stmt).all()
    text_stats.fold(conn, workspace_id, [lexeme for _, lexemes in deleted for lexeme in lexemes])
    return Counter(collection for collection, _ in deleted)
