"""The workspaces' BM25 statistics (sql/0014_bm25.sql): folding their append-only deltas.

Triggers on `records` append one `text_corpus` row per write statement and workspace, and one
`text_lexemes` row per lexeme it wrote (−1 for a deletion); a search sums a workspace's rows.
Nothing is updated in place, so concurrent writers of one workspace never wait for each other's
counts. Folding replaces a workspace's rows by their sum: compaction folds every repeated row so
that the rows a search sums stay few, and a deletion (`write.erase.erase_records`) folds the
deleted records' lexemes at once, so that a lexeme no record holds any more leaves no row.
"""

from __future__ import annotations

from collections.abc import Sequence
from uuid import UUID

import sqlalchemy as sa
from sqlalchemy.engine import Connection
from sqlalchemy.engine import Engine

from memseek import citus
from memseek.schema import text_corpus
from memseek.schema import text_lexemes
from memseek.write import lanes
from memseek.write import store
from memseek.write.store import array

DUE = "/* memseek worker due */"
"""The label of `compact_due`'s look-up across workspaces, as the worker's other look-ups of due work."""
COMPACT_AFTER = 32
"""A workspace is compacted once it has more `text_corpus` rows than this (write statements since
its last compaction): a search then sums at most about this many rows per query lexeme."""

COMPACT_SECONDS = 30.0
"""A worker that stays busy still compacts at least this often: between batches when idle would
otherwise never come under a steady stream of writes, and the rows a search sums would grow."""

C = text_corpus.c
L = text_lexemes.c


def lock(conn: Connection, workspace_id: UUID) -> None:
    """Take the workspace's fold lock for the rest of the transaction. Two folds of the same rows
    would each delete rows the other deletes, in an order of their own, and could deadlock;
    writers never take it (they only append)."""
    conn.execute(sa.select(sa.func.pg_advisory_xact_lock(lanes.lock_key(workspace_id, "text stats"))))


def fold(conn: Connection, workspace_id: UUID, lexemes: Sequence[str]) -> None:
    """Fold the workspace's rows of `lexemes` into one row each, none for a lexeme no record holds."""
    if lexemes:
        _fold_lexemes(conn, workspace_id, L.lexeme == sa.any_(array(sorted(set(lexemes)), sa.Text)))


def compact(conn: Connection, workspace_id: UUID) -> None:
    """Fold the workspace's deltas into one row for its totals and one per lexeme (none for a
    lexeme no record holds any more)."""
    lock(conn, workspace_id)
    gone = (
        sa.delete(text_corpus)
        .where(C.workspace_id == workspace_id)
        .returning(C.records, C.length)
        .cte("gone")
    )
    totals = sa.select(sa.func.sum(gone.c.records), sa.func.sum(gone.c.length)).having(sa.func.count() > 0)
    for records, length in conn.execute(totals):
        conn.execute(text_corpus.insert().values(workspace_id=workspace_id, records=records, length=length))
    repeated = (
        sa.select(L.lexeme)
        .where(L.workspace_id == workspace_id)
        .group_by(L.lexeme)
        .having(sa.func.count() > 1)
    )
    _fold_lexemes(conn, workspace_id, L.lexeme.in_(repeated.scalar_subquery()))


def _fold_lexemes(conn: Connection, workspace_id: UUID, which: sa.ColumnElement[bool]) -> None:
    """Replace the workspace's rows `which` selects by their sum per lexeme.

    The rows are deleted and summed by one statement (a routed SELECT over a deleting CTE), and
    the sums inserted from arrays: rows a writer commits meanwhile are not among those deleted
    and stay, so no count is lost or doubled. Two statements rather than one INSERT over the
    deleting CTE, which Citus cannot plan with its values as parameters."""
    lock(conn, workspace_id)
    gone = (
        sa.delete(text_lexemes)
        .where(L.workspace_id == workspace_id, which)
        .returning(L.lexeme, L.records)
        .cte("gone")
    )
    total = sa.func.sum(gone.c.records)
    folded = conn.execute(sa.select(gone.c.lexeme, total).group_by(gone.c.lexeme).having(total != 0)).all()
    if folded:
        src = store.unnest(
            {
                "lexeme": ([row[0] for row in folded], sa.Text),
                "records": ([row[1] for row in folded], sa.BigInteger),
            },
            "folded",
        )
        rows = sa.select(sa.literal(workspace_id, store.UUID_T), src.c.lexeme, src.c.records)
        insert = text_lexemes.insert().from_select(["workspace_id", "lexeme", "records"], rows)
        conn.execute(citus.returning_rows(insert))


def compact_due(engine: Engine) -> int:
    """Compact every workspace with more than `COMPACT_AFTER` deltas, each in its own
    transaction; how many were compacted."""
    with engine.begin() as conn:
        due = conn.scalars(
            sa.select(C.workspace_id)
            .group_by(C.workspace_id)
            .having(sa.func.count() > COMPACT_AFTER)
            .prefix_with(DUE, dialect="postgresql")  # the one kind of statement reading every workspace
        ).all()
    for workspace_id in due:
        with engine.begin() as conn:
            compact(conn, workspace_id)
    return len(due)
