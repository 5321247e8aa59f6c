"""`last_accessed`: when a search last returned a record (spec "A note on last_accessed")."""

from __future__ import annotations

from collections.abc import Sequence
from uuid import UUID

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from memseek.schema import records
from memseek.write.store import UUID_T
from memseek.write.store import array

r = records.c


def touch(conn: Connection, workspace_id: UUID, ids: Sequence[UUID]) -> None:
    """Set `last_accessed` to now for `ids` of this workspace.

    Best effort by design: rows another transaction holds (a writer superseding them, a worker
    finishing them) are skipped rather than waited for, so a search never blocks on a write.
    """
    if not ids:
        return
    locked = (
        sa.select(r.id)
        .where(r.workspace_id == workspace_id, r.id == sa.any_(array(sorted(set(ids)), UUID_T)))
        .order_by(r.id)
        .with_for_update(skip_locked=True)
        .cte("touched")
    )
    stmt = sa.update(records).where(r.workspace_id == workspace_id, r.id.in_(sa.select(locked.c.id)))
    conn.execute(stmt.values(last_accessed=sa.func.now()))
