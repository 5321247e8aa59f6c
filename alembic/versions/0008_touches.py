"""Touch-on-read writes `record_touches`, not `records` (sql/0008_touches.sql says why).

Revision ID: 0008
Revises: 0007
Create Date: 2026-12-01
"""

from pathlib import Path

from alembic import op

revision = "0008"
down_revision = "0007"
branch_labels = None
depends_on = None

SQL = Path(__file__).resolve().parents[2] / "sql"


def upgrade() -> None:
    op.execute((SQL / "0008_touches.sql").read_text())


def downgrade() -> None:
    # Keep what the touches recorded: records.last_accessed becomes the later of the two again.
    op.execute(
        "UPDATE records r SET last_accessed = t.last_accessed FROM record_touches t "
        "WHERE t.workspace_id = r.workspace_id AND t.record_id = r.id AND t.last_accessed > r.last_accessed"
    )
    op.execute(
        "CREATE OR REPLACE FUNCTION memseek_postings_truncate() RETURNS trigger LANGUAGE plpgsql AS $$ "
        "BEGIN TRUNCATE record_postings; RETURN NULL; END $$"
    )
    op.execute("DROP TABLE record_touches")
