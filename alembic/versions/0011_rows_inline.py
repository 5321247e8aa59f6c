"""A record's row stays whole on its heap page: no TOAST for the embedding, no room kept for touches.

Revision ID: 0011
Revises: 0010
Create Date: 2026-12-03

A record with a 384-d embedding is ~2.4 kB, past the 2 kB at which PostgreSQL moves its widest
values to the TOAST table by default: the embedding (1,540 bytes) went there, and every distance
a search recomputes for its candidates read it back through the TOAST index (200 rows: 2.40 ms
out of line, 1.42 ms inline; their `ts_rank_cd` over `tsv` 2.09 → 1.74 ms). With
`toast_tuple_target` at its maximum a row is compressed or moved out only when it would not fit
a page otherwise. Storage `MAIN` on the embedding alone was measured too and is worse for text:
the toaster then moves `tsv` out instead.

Fillfactor 80 (0006) kept room for the new row version of a touch; touches have their own table
since 0008, so records are written once and rarely updated, and full pages hold three rows
where 80 % of a page holds two.

Both settings apply to rows written from now on; `VACUUM FULL records` rewrites the rows already
stored (it moves their embeddings back inline).
"""

from alembic import op

revision = "0011"
down_revision = "0010"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.execute("ALTER TABLE records SET (toast_tuple_target = 8160)")
    op.execute("ALTER TABLE records RESET (fillfactor)")


def downgrade() -> None:
    op.execute("ALTER TABLE records RESET (toast_tuple_target)")
    op.execute("ALTER TABLE records SET (fillfactor = 80)")
