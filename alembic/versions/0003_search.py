"""Search: lexeme postings with per-posting impact for bounded keyword candidates.

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-30

`ts_rank_cd` over every row that shares a lexeme with the query is what makes keyword search
slow on large corpora (design §5). The postings table lets a search take the best postings of
each query lexeme from one index and compute `ts_rank_cd` on those candidates only. Triggers
on `records` keep it current, independent of which code path writes records.
"""

from pathlib import Path

import sqlalchemy as sa
from sqlalchemy.dialects.postgresql import UUID

from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None

SQL = Path(__file__).resolve().parents[2] / "sql"
WS = UUID(as_uuid=True)


def upgrade() -> None:
    op.create_table(
        "record_postings",
        sa.Column("workspace_id", WS, sa.ForeignKey("workspaces.id"), primary_key=True),
        sa.Column("record_id", WS, primary_key=True),
        sa.Column("lexeme", sa.Text, primary_key=True),
        sa.Column("impact", sa.REAL, nullable=False),
    )
    op.create_index(
        "record_postings_top",
        "record_postings",
        ["workspace_id", "lexeme", sa.text("impact DESC"), "record_id"],
    )
    op.execute((SQL / "0003_postings.sql").read_text())


def downgrade() -> None:
    for name in ("insert", "update", "delete"):
        op.execute(f"DROP TRIGGER IF EXISTS records_postings_{name} ON records")
    op.execute("DROP FUNCTION IF EXISTS memseek_postings_insert()")
    op.execute("DROP FUNCTION IF EXISTS memseek_postings_refresh()")
    op.execute("DROP FUNCTION IF EXISTS memseek_postings_of(tsvector)")
    op.execute("DROP FUNCTION IF EXISTS memseek_posting_impact(integer, integer)")
    op.execute("DROP POLICY IF EXISTS postings_workspace ON record_postings")
    op.drop_table("record_postings")
