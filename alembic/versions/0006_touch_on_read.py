"""Touch-on-read: room on each `records` page for the new row version a touch writes.

Revision ID: 0006
Revises: 0005
Create Date: 2026-11-30

Touch-on-read updates `last_accessed` of every record a search returns. No index contains that
column, so the update can be HOT (heap-only: the new version stays on its page and no index
entry is written) — but only if the page has room for it. With the default fillfactor of 100
a bulk-loaded page is full, so most touches were not HOT: each inserted a new entry into every
index of `records`, the HNSW graph included (8 % HOT at 1M records, 21–75 % at 100k). A row is
~1 kB on the heap (the embedding is TOASTed), so 80 leaves room for one or two new versions;
the page is pruned of the dead ones as it is read again.

The setting applies to pages written from now on; existing full pages gain room as their
rows move or are vacuumed (rewrite the table, e.g. `VACUUM FULL records`, to apply it at once).
"""

from alembic import op

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None

FILLFACTOR = 80


def upgrade() -> None:
    op.execute(f"ALTER TABLE records SET (fillfactor = {FILLFACTOR})")


def downgrade() -> None:
    op.execute("ALTER TABLE records RESET (fillfactor)")
