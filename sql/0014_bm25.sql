-- BM25 statistics of each workspace's text, maintained at write time (docs/search.md, "BM25").
--
-- The corpus of a workspace is its records that are not retracted, whatever their collection,
-- processing state or currency (a superseded value is still readable with `versions: all`).
-- A record's document is its text's full lexeme vector in its collection's configuration:
-- records.tsv keeps each lexeme's first two positions for ts_rank_cd (migration 0010), so the
-- positions it drops are kept beside it (tsv_repeats), with the document's length in positions
-- (tsv_length). A lexeme's term frequency = its positions in tsv + its positions in tsv_repeats.
--
-- The counts are append-only deltas, never a row updated in place: concurrent writers of one
-- workspace would otherwise queue on its totals row and on the rows of its common lexemes until
-- each commits (a commit waits for the HNSW insertion). A search sums a workspace's rows;
-- `memseek.write.text_stats.compact` folds them (the worker runs it when a workspace has many).

-- One pass over a parsed text: the stored tsv (exactly memseek_rank_positions(doc)), the
-- positions past each lexeme's second, and the number of positions.
CREATE OR REPLACE FUNCTION memseek_text_terms(doc tsvector, OUT tsv tsvector, OUT repeats tsvector, OUT length integer)
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $$
  SELECT coalesce(string_agg(q.quoted || coalesce(':' || array_to_string(u.positions[1:2], ','), ''), ' ')::tsvector, ''::tsvector),
         coalesce((string_agg(q.quoted || ':' || array_to_string(u.positions[3:], ','), ' ')
                     FILTER (WHERE cardinality(u.positions) > 2))::tsvector, ''::tsvector),
         coalesce(sum(greatest(cardinality(u.positions), 1)), 0)::integer
  FROM unnest(doc) u,
       LATERAL (SELECT '''' || replace(replace(u.lexeme, '\', '\\'), '''', '''''') || '''' AS quoted) q
$$;

-- Records already written: re-parsed in the configuration that reproduces their stored tsv
-- (english first, then any other); a record none reproduces counts as stored (no repeats).
ALTER TABLE records ADD COLUMN tsv_repeats tsvector, ADD COLUMN tsv_length integer;

UPDATE records r SET (tsv_repeats, tsv_length) = (
  SELECT t.repeats, t.length FROM memseek_text_terms(to_tsvector('english'::regconfig, r.text)) t WHERE t.tsv = r.tsv
);
UPDATE records r SET (tsv_repeats, tsv_length) = (
  SELECT t.repeats, t.length
  FROM pg_ts_config c, LATERAL memseek_text_terms(to_tsvector(c.oid::regconfig, r.text)) t
  WHERE t.tsv = r.tsv LIMIT 1
) WHERE tsv_length IS NULL;
UPDATE records r SET tsv_repeats = '', tsv_length = (
  SELECT coalesce(sum(greatest(cardinality(u.positions), 1)), 0) FROM unnest(r.tsv) u
) WHERE tsv_length IS NULL;

ALTER TABLE records ALTER COLUMN tsv_repeats SET NOT NULL, ALTER COLUMN tsv_length SET NOT NULL;

CREATE TABLE text_corpus (
  workspace_id uuid NOT NULL,
  records bigint NOT NULL,
  length bigint NOT NULL
);
CREATE INDEX text_corpus_workspace ON text_corpus (workspace_id) INCLUDE (records, length);

CREATE TABLE text_lexemes (
  workspace_id uuid NOT NULL,
  lexeme text COLLATE "C" NOT NULL,
  records bigint NOT NULL
);
CREATE INDEX text_lexemes_lexeme ON text_lexemes (workspace_id, lexeme) INCLUDE (records);

GRANT SELECT, INSERT, DELETE ON text_corpus, text_lexemes TO memseek_scoped;
ALTER TABLE text_corpus ENABLE ROW LEVEL SECURITY;
ALTER TABLE text_lexemes ENABLE ROW LEVEL SECURITY;
CREATE POLICY text_corpus_workspace ON text_corpus TO memseek_scoped
  USING (workspace_id = nullif(current_setting('memseek.workspace_id', true), '')::uuid)
  WITH CHECK (workspace_id = nullif(current_setting('memseek.workspace_id', true), '')::uuid);
CREATE POLICY text_lexemes_workspace ON text_lexemes TO memseek_scoped
  USING (workspace_id = nullif(current_setting('memseek.workspace_id', true), '')::uuid)
  WITH CHECK (workspace_id = nullif(current_setting('memseek.workspace_id', true), '')::uuid);

-- Inserted rows count +1: one delta row per workspace and per (workspace, lexeme) of the statement.
CREATE OR REPLACE FUNCTION memseek_text_stats_inserted() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO text_corpus (workspace_id, records, length)
  SELECT workspace_id, count(*), sum(tsv_length) FROM changed_rows
  WHERE retracted_at IS NULL GROUP BY workspace_id;
  INSERT INTO text_lexemes (workspace_id, lexeme, records)
  SELECT c.workspace_id, l.lexeme, count(*)
  FROM changed_rows c CROSS JOIN LATERAL unnest(tsvector_to_array(c.tsv)) l(lexeme)
  WHERE c.retracted_at IS NULL GROUP BY 1, 2;
  RETURN NULL;
END $$;

-- Deleters and compaction of a workspace's counts take this lock, in workspace order, for the
-- rest of their transaction: each folds rows the other would fold, and in opposite orders they
-- could deadlock. Writers never take it.
CREATE OR REPLACE FUNCTION memseek_text_stats_lock(ws uuid) RETURNS void
LANGUAGE sql AS $$
  SELECT pg_advisory_xact_lock(hashtextextended('memseek text stats ' || ws::text, 0))
$$;

-- Deleted rows (erasure, retention, any DELETE) count -1, and every lexeme they held is folded
-- at once into one row, or none when no record holds it any more: an erased record's words
-- leave no trace in the counts (docs/lifecycle.md). Rows of a writer not yet committed are not
-- folded and stay, so no count is lost.
CREATE OR REPLACE FUNCTION memseek_text_stats_deleted() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  PERFORM memseek_text_stats_lock(w.workspace_id)
  FROM (SELECT DISTINCT workspace_id FROM changed_rows ORDER BY 1) w;
  INSERT INTO text_corpus (workspace_id, records, length)
  SELECT workspace_id, -count(*), -sum(tsv_length) FROM changed_rows
  WHERE retracted_at IS NULL GROUP BY workspace_id;
  WITH erased AS (
    SELECT c.workspace_id, l.lexeme, count(*) FILTER (WHERE c.retracted_at IS NULL) AS n
    FROM changed_rows c CROSS JOIN LATERAL unnest(tsvector_to_array(c.tsv)) l(lexeme)
    GROUP BY 1, 2
  ), gone AS (
    DELETE FROM text_lexemes t USING erased e
    WHERE t.workspace_id = e.workspace_id AND t.lexeme = e.lexeme
    RETURNING t.workspace_id, t.lexeme, t.records
  ), folded AS (
    SELECT workspace_id, lexeme, sum(records) AS records FROM gone GROUP BY 1, 2
  )
  INSERT INTO text_lexemes (workspace_id, lexeme, records)
  SELECT e.workspace_id, e.lexeme, coalesce(f.records, 0) - e.n
  FROM erased e LEFT JOIN folded f USING (workspace_id, lexeme)
  WHERE coalesce(f.records, 0) - e.n <> 0;
  RETURN NULL;
END $$;

-- A retraction (or its reversal) or a new text moves one record out of or into the counts.
CREATE OR REPLACE FUNCTION memseek_text_stats_update() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO text_corpus (workspace_id, records, length)
  SELECT NEW.workspace_id, sum(v.n), sum(v.n * v.len)
  FROM (VALUES (-1, OLD.tsv_length, OLD.retracted_at IS NULL), (1, NEW.tsv_length, NEW.retracted_at IS NULL)) v(n, len, counted)
  WHERE v.counted HAVING sum(v.n) <> 0 OR sum(v.n * v.len) <> 0;
  INSERT INTO text_lexemes (workspace_id, lexeme, records)
  SELECT NEW.workspace_id, d.lexeme, sum(d.n)
  FROM (SELECT -1 AS n, l AS lexeme FROM unnest(tsvector_to_array(OLD.tsv)) l WHERE OLD.retracted_at IS NULL
        UNION ALL
        SELECT 1, l FROM unnest(tsvector_to_array(NEW.tsv)) l WHERE NEW.retracted_at IS NULL) d
  GROUP BY d.lexeme HAVING sum(d.n) <> 0;
  RETURN NULL;
END $$;

CREATE TRIGGER records_text_stats_insert AFTER INSERT ON records
  REFERENCING NEW TABLE AS changed_rows FOR EACH STATEMENT EXECUTE FUNCTION memseek_text_stats_inserted();
CREATE TRIGGER records_text_stats_delete AFTER DELETE ON records
  REFERENCING OLD TABLE AS changed_rows FOR EACH STATEMENT EXECUTE FUNCTION memseek_text_stats_deleted();
CREATE TRIGGER records_text_stats_update AFTER UPDATE OF tsv, tsv_length, retracted_at ON records
  FOR EACH ROW WHEN (
    OLD.tsv IS DISTINCT FROM NEW.tsv OR OLD.tsv_length IS DISTINCT FROM NEW.tsv_length
    OR (OLD.retracted_at IS NULL) IS DISTINCT FROM (NEW.retracted_at IS NULL)
  ) EXECUTE FUNCTION memseek_text_stats_update();

-- The counts of records already written.
INSERT INTO text_corpus (workspace_id, records, length)
SELECT workspace_id, count(*), sum(tsv_length) FROM records WHERE retracted_at IS NULL GROUP BY workspace_id;
INSERT INTO text_lexemes (workspace_id, lexeme, records)
SELECT r.workspace_id, l.lexeme, count(*)
FROM records r CROSS JOIN LATERAL unnest(tsvector_to_array(r.tsv)) l(lexeme)
WHERE r.retracted_at IS NULL GROUP BY 1, 2;
