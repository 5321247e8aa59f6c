"""Sort indexes are rebuilt with `compile.SORTED_LIST` in their predicate (`memseek.indexes`).

Start-up creates each sort index under its name if no index has that name, so the ones built
before this revision (without the clause) are dropped here and start-up builds them again. The
downgrade drops them too, so that the older start-up builds its own.

Revision ID: 0009
Revises: 0008
Create Date: 2026-12-01
"""

from alembic import op

revision = "0009"
down_revision = "0008"
branch_labels = None
depends_on = None

DROP_SORT_INDEXES = r"""
DO $$
DECLARE name text;
BEGIN
    FOR name IN
        SELECT indexname FROM pg_indexes
        WHERE schemaname = current_schema() AND tablename = 'records'
          AND (indexname LIKE 'records\_sort\_%' OR indexname LIKE 'records\_sortall\_%')
    LOOP
        EXECUTE format('DROP INDEX %I', name);
    END LOOP;
END $$
"""


def upgrade() -> None:
    op.execute(DROP_SORT_INDEXES)


def downgrade() -> None:
    op.execute(DROP_SORT_INDEXES)
