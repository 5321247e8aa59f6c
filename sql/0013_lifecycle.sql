-- The data lifecycle (migration 0013): erasure, listing, export, retention (docs/lifecycle.md).

-- The erasure log: one row per erasure (a record, an entity, a retention run), naming what was
-- asked for, by whom and why, and how many records of each collection went. It never holds the
-- erased records' text, content or vectors. An entity or retention erasure runs in batches, each
-- its own transaction; `high_water` (the workspace's highest `seq` when it began) fences it, so
-- records written after it began survive. `state` 'running' rows are the job queue workers claim.
CREATE TABLE erasures (
  workspace_id uuid NOT NULL REFERENCES workspaces (id),
  id uuid NOT NULL,
  kind text NOT NULL CHECK (kind IN ('record', 'entity', 'retention')),
  record_id uuid,
  entity text,
  collection text,
  reason text,
  requested_by text,
  state text NOT NULL CHECK (state IN ('running', 'done')),
  high_water bigint,
  cutoff_field text CHECK (cutoff_field IN ('occurred_at', 'created_at')),
  cutoff timestamptz,
  counts jsonb NOT NULL DEFAULT '{}',
  started_at timestamptz NOT NULL DEFAULT now(),
  finished_at timestamptz,
  PRIMARY KEY (workspace_id, id)
);

-- Workers claim running erasures of every workspace, oldest first (like `processing_queue_next`,
-- the one kind of index not led by workspace_id: it holds only unfinished jobs).
CREATE INDEX erasures_running ON erasures (started_at, id) WHERE state = 'running';

GRANT SELECT, INSERT, UPDATE ON erasures TO memseek_scoped;
ALTER TABLE erasures ENABLE ROW LEVEL SECURITY;
CREATE POLICY erasures_workspace ON erasures TO memseek_scoped
  USING (workspace_id = nullif(current_setting('memseek.workspace_id', true), '')::uuid)
  WITH CHECK (workspace_id = nullif(current_setting('memseek.workspace_id', true), '')::uuid);

-- An erased record's touch goes with it (touches have no foreign key: sql/0008_touches.sql).
GRANT DELETE ON record_touches TO memseek_scoped;

-- One entity's records in ingestion order: `GET /records?entity=` pages through them newest
-- first, and forgetting an entity reads them batch by batch, each batch stopping after its
-- first rows (`records_scope` leads with the collection, so it serves neither without one).
CREATE INDEX records_entity ON records (workspace_id, entity, seq);
