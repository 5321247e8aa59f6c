-- Lexeme postings: bounded keyword candidate generation (design §5, consequence 1).
-- One row per (record, lexeme of its tsv) with a BM25-style impact, so a query takes the
-- top postings of each of its lexemes from an index instead of ranking every matching row.
-- Triggers keep the table in step with records.tsv whatever writes it.

-- BM25 term saturation with k1 = 1.2, b = 0.75 and a fixed average length of 64 tokens:
-- it only orders the postings of one lexeme, so the corpus-wide average is not needed.
CREATE OR REPLACE FUNCTION memseek_posting_impact(tf integer, dl integer) RETURNS real
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $$
  SELECT (tf * 2.2 / (tf + 1.2 * (0.25 + 0.75 * dl / 64.0)))::real
$$;

-- The postings of one tsvector: each lexeme with its impact (tf = its position count,
-- dl = the document's total position count).
CREATE OR REPLACE FUNCTION memseek_postings_of(doc tsvector) RETURNS TABLE (lexeme text, impact real)
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $$
  SELECT t.lexeme, memseek_posting_impact(coalesce(array_length(t.positions, 1), 1), d.dl)
  FROM (SELECT coalesce(sum(coalesce(array_length(positions, 1), 1)), 0)::integer AS dl FROM unnest(doc)) d,
       unnest(doc) t
$$;

CREATE OR REPLACE FUNCTION memseek_postings_insert() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO record_postings (workspace_id, record_id, lexeme, impact)
  SELECT n.workspace_id, n.id, p.lexeme, p.impact FROM new_rows n CROSS JOIN LATERAL memseek_postings_of(n.tsv) p;
  RETURN NULL;
END $$;

CREATE OR REPLACE FUNCTION memseek_postings_refresh() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  DELETE FROM record_postings WHERE workspace_id = OLD.workspace_id AND record_id = OLD.id;
  IF TG_OP = 'UPDATE' THEN
    INSERT INTO record_postings (workspace_id, record_id, lexeme, impact)
    SELECT NEW.workspace_id, NEW.id, p.lexeme, p.impact FROM memseek_postings_of(NEW.tsv) p;
  END IF;
  RETURN NULL;
END $$;

CREATE TRIGGER records_postings_insert AFTER INSERT ON records
  REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION memseek_postings_insert();
CREATE TRIGGER records_postings_update AFTER UPDATE OF tsv ON records
  FOR EACH ROW WHEN (OLD.tsv IS DISTINCT FROM NEW.tsv) EXECUTE FUNCTION memseek_postings_refresh();
CREATE TRIGGER records_postings_delete AFTER DELETE ON records
  FOR EACH ROW EXECUTE FUNCTION memseek_postings_refresh();

GRANT SELECT, INSERT, DELETE ON record_postings TO memseek_scoped;
ALTER TABLE record_postings ENABLE ROW LEVEL SECURITY;
CREATE POLICY postings_workspace ON record_postings TO memseek_scoped
  USING (workspace_id = nullif(current_setting('memseek.workspace_id', true), '')::uuid)
  WITH CHECK (workspace_id = nullif(current_setting('memseek.workspace_id', true), '')::uuid);

-- Records written before this migration.
INSERT INTO record_postings (workspace_id, record_id, lexeme, impact)
SELECT r.workspace_id, r.id, p.lexeme, p.impact FROM records r CROSS JOIN LATERAL memseek_postings_of(r.tsv) p;
