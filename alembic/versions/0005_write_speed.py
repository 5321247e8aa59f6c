"""Write speed: cheaper postings maintenance for batch inserts.

Revision ID: 0005
Revises: 0004
Create Date: 2026-11-30

The postings trigger of 0003 was about a quarter of a 1,000-record `POST /records`. Its
set-returning function becomes inlinable (not STRICT), the postings are inserted in index
order, and the per-posting foreign key to `workspaces` gives way to a TRUNCATE trigger
(sql/0005_write_speed.sql says why that is enough).
"""

from pathlib import Path

from alembic import op

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None

SQL = Path(__file__).resolve().parents[2] / "sql"


def upgrade() -> None:
    op.execute((SQL / "0005_write_speed.sql").read_text())


def _definition_0003(function: str) -> str:
    """The CREATE statement of `function` exactly as sql/0003_postings.sql has it."""
    blocks = (SQL / "0003_postings.sql").read_text().split("\n\n")
    return next(block for block in blocks if block.startswith(f"CREATE OR REPLACE FUNCTION {function}("))


def downgrade() -> None:
    op.execute("DROP TRIGGER IF EXISTS records_postings_truncate ON records")
    op.execute("DROP FUNCTION IF EXISTS memseek_postings_truncate()")
    op.create_foreign_key(
        "record_postings_workspace_id_fkey", "record_postings", "workspaces", ["workspace_id"], ["id"]
    )
    op.execute(_definition_0003("memseek_postings_insert"))
    op.execute("ALTER FUNCTION memseek_postings_of(tsvector) STRICT")
