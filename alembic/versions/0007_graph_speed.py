"""Graph speed: the view graph reads look links up through, and the old graph index names gone.

Revision ID: 0007
Revises: 0006
Create Date: 2026-11-30

Request transactions run as `memseek_scoped` under the `records_workspace` row-level security
policy. PostgreSQL then evaluates a query's own conditions only after the policy's, unless they
are leakproof — and `fields ->> 'end' = node` is not (`->>` is not marked leakproof), so a walk
step could not use the graph expression indexes as index conditions and read every link of the
workspace, at every step (seconds per walk at 100,000 links).

`graph_records` is the workspace's records as graph reads need them, filtered by the same
setting as the policy (`memseek.workspace_id`; nothing when unset), but read with the view
owner's rights, so that the policy's ordering rule does not apply and the expression indexes
serve the lookups. The filter is the policy's own, so a statement that forgot its workspace
predicate still sees nothing foreign. Only columns graph reads use are exposed.

The start-up graph indexes (`memseek.indexes`) changed shape and name (`records_graph_*` →
`records_walk_*` and `records_nodes_*`, plus expression statistics `records_end_*`); the old
ones are dropped here, the new ones are created at start-up (and dropped by the downgrade).
"""

from alembic import op

revision = "0007"
down_revision = "0006"
branch_labels = None
depends_on = None

VIEW = """
CREATE VIEW graph_records AS
  SELECT workspace_id, id, collection, fields, processing, is_current, status, retracted_at, link_node_id
  FROM records
  WHERE workspace_id = nullif(current_setting('memseek.workspace_id', true), '')::uuid
"""


def _drop(kind: str, names: str, prefix: str) -> None:
    """Drop every `kind` (INDEX, STATISTICS) that `names` (a query of name) lists under `prefix`."""
    op.execute(f"""
DO $$
DECLARE dropped text;
BEGIN
  FOR dropped IN SELECT listed.name FROM ({names}) AS listed(name) WHERE listed.name LIKE '{prefix}\\_%'
  LOOP
    EXECUTE format('DROP {kind} %I', dropped);
  END LOOP;
END $$""")


INDEXES = "SELECT indexname FROM pg_indexes WHERE tablename = 'records' AND schemaname = current_schema()"
STATISTICS = "SELECT stxname FROM pg_statistic_ext WHERE stxrelid = 'records'::regclass"


def upgrade() -> None:
    op.execute(VIEW)
    op.execute("GRANT SELECT ON graph_records TO memseek_scoped")
    _drop("INDEX", INDEXES, "records\\_graph")


def downgrade() -> None:
    op.execute("DROP VIEW IF EXISTS graph_records")
    _drop("INDEX", INDEXES, "records\\_walk")
    _drop("INDEX", INDEXES, "records\\_nodes")
    _drop("STATISTICS", STATISTICS, "records\\_end")
