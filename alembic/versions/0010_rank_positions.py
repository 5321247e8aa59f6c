"""Stored full text keeps at most two positions per lexeme (`memseek_rank_positions`).

`text_match` is `ts_rank_cd`, which counts every occurrence of a query word without saturation;
sql/0010_rank_positions.sql says why two and what it measured. Records already written are
rewritten (their postings follow through the update trigger). The downgrade drops the function
only: positions already removed cannot be restored without re-parsing every text.

Revision ID: 0010
Revises: 0009
Create Date: 2026-12-02
"""

from pathlib import Path

from alembic import op

revision = "0010"
down_revision = "0009"
branch_labels = None
depends_on = None

SQL = Path(__file__).resolve().parents[2] / "sql"


def upgrade() -> None:
    op.execute((SQL / "0010_rank_positions.sql").read_text())


def downgrade() -> None:
    op.execute("DROP FUNCTION IF EXISTS memseek_rank_positions(tsvector)")
