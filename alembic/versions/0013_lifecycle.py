"""The data lifecycle: the erasure log, erasable touches, an index of each entity's records.

Revision ID: 0013
Revises: 0012
Create Date: 2026-12-05

Erasing a record deletes it and everything derived from it (docs/lifecycle.md); `erasures` logs
each erasure without the erased content and is the queue of the batched ones (sql/0013_lifecycle.sql).
`records_entity` serves listing one entity's records and forgetting an entity. Built without
CONCURRENTLY (migrations run in a transaction): on a large existing table it holds writes to
`records` while it builds.
"""

from alembic import op
from memseek.migrate import sql_script

revision = "0013"
down_revision = "0012"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.execute(sql_script("0013_lifecycle.sql"))


def downgrade() -> None:
    op.execute("DROP INDEX IF EXISTS records_entity")
    op.execute("REVOKE DELETE ON record_touches FROM memseek_scoped")
    op.execute("DROP TABLE IF EXISTS erasures")
