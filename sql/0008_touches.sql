-- Touch-on-read outside `records` (migration 0008).
-- A touch used to UPDATE records.last_accessed: a new version of a ~2.5 kB row for every record
-- a search returned. Each one took the page out of the visibility map until the next vacuum, so
-- under search load index-only scans went back to the heap and the planner stopped choosing
-- them. The newest-first candidates of a hybrid search then read 5,000 rows of other
-- collections through `records_recent`: 3.5 ms of a 16 ms statement at 100k records. Touches
-- now go to this narrow table. A record's last_accessed is the later of its own column (set
-- when written, and by touches before this migration) and its row here.
CREATE TABLE record_touches (
  workspace_id uuid NOT NULL,
  record_id uuid NOT NULL,
  last_accessed timestamptz NOT NULL,
  PRIMARY KEY (workspace_id, record_id)
) WITH (fillfactor = 70);  -- room for the next touch's version on the same page (HOT)

GRANT SELECT, INSERT, UPDATE ON record_touches TO memseek_scoped;
ALTER TABLE record_touches ENABLE ROW LEVEL SECURITY;
CREATE POLICY touches_workspace ON record_touches TO memseek_scoped
  USING (workspace_id = nullif(current_setting('memseek.workspace_id', true), '')::uuid)
  WITH CHECK (workspace_id = nullif(current_setting('memseek.workspace_id', true), '')::uuid);

-- Derived rows like postings: emptied with records (TRUNCATE … CASCADE reaches records only).
CREATE OR REPLACE FUNCTION memseek_postings_truncate() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  TRUNCATE record_postings, record_touches;
  RETURN NULL;
END $$;
