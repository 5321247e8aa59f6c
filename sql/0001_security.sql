-- Row-level security: request transactions run as memseek_scoped with
-- memseek.workspace_id set per transaction; rows of other workspaces are invisible.
DO $$
BEGIN
  IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'memseek_scoped') THEN
    CREATE ROLE memseek_scoped NOLOGIN;
  END IF;
  EXECUTE format('GRANT memseek_scoped TO %I', current_user);
EXCEPTION WHEN duplicate_object THEN NULL;
END $$;

GRANT SELECT ON workspaces, api_keys, definitions TO memseek_scoped;
GRANT SELECT, INSERT, UPDATE, DELETE ON records, processing_queue TO memseek_scoped;
GRANT USAGE ON SEQUENCE records_lane_seq TO memseek_scoped;

ALTER TABLE records ENABLE ROW LEVEL SECURITY;
ALTER TABLE processing_queue ENABLE ROW LEVEL SECURITY;
CREATE POLICY records_workspace ON records TO memseek_scoped
  USING (workspace_id = nullif(current_setting('memseek.workspace_id', true), '')::uuid)
  WITH CHECK (workspace_id = nullif(current_setting('memseek.workspace_id', true), '')::uuid);
CREATE POLICY queue_workspace ON processing_queue TO memseek_scoped
  USING (workspace_id = nullif(current_setting('memseek.workspace_id', true), '')::uuid)
  WITH CHECK (workspace_id = nullif(current_setting('memseek.workspace_id', true), '')::uuid);
