"""Search latency: newest-first candidates per collection from one index.

Revision ID: 0004
Revises: 0003
Create Date: 2026-11-30

The newest-first list (recent mode, and one third of every hybrid proposal) reads a collection's
records in `occurred_at DESC, seq DESC` order. `records_recent` orders the whole workspace, so
the scan first steps over every newer record of other collections — 5,000 graph links at 100k
records, 3.9 of a 16 ms hybrid statement. This index orders one collection, is partial on the
two rules every search applies (`processing = 'ready'`, not retracted) and includes the columns
the default scope checks, so the newest-first list is an index-only scan. That is also what
makes the planner choose it: by cost alone `records_recent` ties with it (the planner cannot
know which collections the newest rows belong to) and won about half the time.

Built without CONCURRENTLY (migrations run in a transaction): on a large existing table it
holds writes to `records` while it builds (under a second per 100,000 records here).
"""

import sqlalchemy as sa

from alembic import op

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None

INDEX = "records_collection_recent"


def upgrade() -> None:
    op.create_index(
        INDEX,
        "records",
        ["workspace_id", "collection", "occurred_at", "seq"],
        postgresql_include=["id", "collection_version", "status", "is_current"],
        postgresql_where=sa.text("processing = 'ready' AND retracted_at IS NULL"),
    )


def downgrade() -> None:
    op.drop_index(INDEX, table_name="records")
