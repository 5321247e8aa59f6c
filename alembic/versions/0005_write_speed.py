"""Write speed: cheaper postings maintenance for batch inserts.

Revision ID: 0005
Revises: 0004
Create Date: 2026-11-30

The postings trigger of 0003 was about a quarter of a 1,000-record `POST /records`. Its
set-returning function becomes inlinable (not STRICT), the postings are inserted in index
order, and the per-posting foreign key to `workspaces` gives way to a TRUNCATE trigger
(sql/0005_write_speed.sql says why that is enough).
"""

from alembic import op
from memseek.migrate import function_definition
from memseek.migrate import sql_script

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.execute(sql_script("0005_write_speed.sql"))


def downgrade() -> None:
    op.execute("DROP TRIGGER IF EXISTS records_postings_truncate ON records")
    op.execute("DROP FUNCTION IF EXISTS memseek_postings_truncate()")
    op.create_foreign_key(
        "record_postings_workspace_id_fkey", "record_postings", "workspaces", ["workspace_id"], ["id"]
    )
    op.execute(function_definition("0003_postings.sql", "memseek_postings_insert"))
    op.execute("ALTER FUNCTION memseek_postings_of(tsvector) STRICT")
