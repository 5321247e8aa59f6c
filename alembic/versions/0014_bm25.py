"""BM25 statistics maintained at write time: each record's repeated positions and length, each
workspace's record count, total length and lexeme document frequencies (sql/0014_bm25.sql).

Records already written are re-parsed in the configuration that reproduces their stored `tsv`
(every row of `records` is rewritten once: run `VACUUM (ANALYZE) records` afterwards), and their
counts are inserted. The counts are append-only deltas with row-level security; `workspace_id`
leads every index, so the tables distribute by workspace like `records`.

Revision ID: 0014
Revises: 0013
Create Date: 2026-12-05
"""

from alembic import op
from memseek import citus
from memseek.migrate import sql_script
from memseek.migrate import statements

revision = "0014"
down_revision = "0013"
branch_labels = None
depends_on = None


def upgrade() -> None:
    citus.for_migration(op.get_bind())
    for statement in statements(sql_script("0014_bm25.sql")):
        op.execute(statement)


def downgrade() -> None:
    citus.for_migration(op.get_bind())
    op.execute("DROP TRIGGER records_text_stats_insert ON records")
    op.execute("DROP TRIGGER records_text_stats_delete ON records")
    op.execute("DROP TRIGGER records_text_stats_update ON records")
    op.execute(
        "DROP FUNCTION memseek_text_stats_changed(), memseek_text_stats_update(), "
        "memseek_text_stats_add(integer, uuid[], integer[], tsvector[])"
    )
    op.execute("DROP TABLE text_corpus, text_lexemes")
    op.execute("ALTER TABLE records DROP COLUMN tsv_repeats, DROP COLUMN tsv_length")
    op.execute("DROP FUNCTION memseek_text_terms(tsvector)")
