"""Cheaper postings to write: one index, lexemes compared bytewise.

Revision ID: 0012
Revises: 0011
Create Date: 2026-12-03

Every posting a batch writes went into two B-trees; the primary key served only the refresh
trigger's DELETE, which now finds a record's postings through the top index by the lexemes of
its old document. Lexemes take the "C" collation (sql/0012_postings_key.sql says why).

The collation change rebuilds `record_postings_top` under an exclusive lock on the postings
(2 s for the 2M postings of 100k records on the benchmark host); the table is not rewritten.
"""

from alembic import op
from memseek.migrate import function_definition
from memseek.migrate import sql_script

revision = "0012"
down_revision = "0011"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.execute(sql_script("0012_postings_key.sql"))


def downgrade() -> None:
    op.execute(function_definition("0003_postings.sql", "memseek_postings_refresh"))
    op.execute(function_definition("0005_write_speed.sql", "memseek_postings_insert"))
    op.execute('ALTER TABLE record_postings ALTER COLUMN lexeme TYPE text COLLATE "default"')
    op.create_primary_key("record_postings_pkey", "record_postings", ["workspace_id", "record_id", "lexeme"])
