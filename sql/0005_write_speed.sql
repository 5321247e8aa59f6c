-- Cheaper postings maintenance for batch writes (migration 0005).
-- Measured on a 1,000-record POST /records, the statement-level postings trigger took about a
-- quarter of the batch insert (~210 ms of ~940): ~50 ms calling memseek_postings_of once per
-- record, ~110 ms checking the workspace foreign key of each of the ~20,000 postings, and the
-- index inserts themselves.

-- Not STRICT, so the planner inlines it into the trigger's INSERT … SELECT instead of calling
-- it once per record (PostgreSQL never inlines a STRICT set-returning SQL function). The result
-- is unchanged: records.tsv is NOT NULL, and a NULL document unnests to no rows either way.
ALTER FUNCTION memseek_postings_of(tsvector) CALLED ON NULL INPUT;

-- The ~20 postings of each record inserted in the order of the `record_postings_top` index
-- (lexeme, impact): consecutive inserts land on the same leaf pages instead of all over it.
CREATE OR REPLACE FUNCTION memseek_postings_insert() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO record_postings (workspace_id, record_id, lexeme, impact)
  SELECT n.workspace_id, n.id, p.lexeme, p.impact FROM new_rows n CROSS JOIN LATERAL memseek_postings_of(n.tsv) p
  ORDER BY p.lexeme, p.impact DESC;
  RETURN NULL;
END $$;

-- Postings are derived rows: only the triggers on records write them, from records rows that
-- already passed records' own workspace foreign key and row-level security. A foreign key per
-- posting re-checked the same workspace ~20 times per record. What it still did — emptying the
-- postings when `TRUNCATE workspaces … CASCADE` reached records — a TRUNCATE trigger does now.
ALTER TABLE record_postings DROP CONSTRAINT record_postings_workspace_id_fkey;

CREATE OR REPLACE FUNCTION memseek_postings_truncate() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  TRUNCATE record_postings;
  RETURN NULL;
END $$;

CREATE TRIGGER records_postings_truncate AFTER TRUNCATE ON records
  FOR EACH STATEMENT EXECUTE FUNCTION memseek_postings_truncate();
