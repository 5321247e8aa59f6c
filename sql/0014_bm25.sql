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
-- One function a row calls, so that on a Citus cluster each shard runs the UPDATE whole; it is
-- IMMUTABLE as to_tsvector(regconfig, text) is (Citus pushes only immutable functions in FROM
-- down to the shards), and dropped once it has run.
CREATE FUNCTION memseek_stored_terms(body text, stored tsvector, OUT repeats tsvector, OUT length integer)
LANGUAGE plpgsql IMMUTABLE AS $$
DECLARE
  config regconfig;
  parsed record;
BEGIN
  FOR config IN SELECT 'english'::regconfig UNION ALL SELECT oid::regconfig FROM pg_ts_config WHERE cfgname <> 'english' LOOP
    SELECT * INTO parsed FROM memseek_text_terms(to_tsvector(config, body));
    IF parsed.tsv = stored THEN
      repeats := parsed.repeats;
      length := parsed.length;
      RETURN;
    END IF;
  END LOOP;
  repeats := '';
  length := (SELECT coalesce(sum(greatest(cardinality(u.positions), 1)), 0) FROM unnest(stored) u);
END $$;

ALTER TABLE records ADD COLUMN tsv_repeats tsvector, ADD COLUMN tsv_length integer;
UPDATE records SET (tsv_repeats, tsv_length) = (SELECT t.repeats, t.length FROM memseek_stored_terms(text, tsv) t);
DROP FUNCTION memseek_stored_terms(text, tsvector);

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

-- The deltas of documents given as arrays, one element per record: `sign` (+1 or -1) per
-- workspace and per (workspace, lexeme). The triggers read their rows into arrays first and call
-- this, so that it runs on a Citus cluster too: there a trigger's INSERT into another distributed
-- table is a distributed statement of its own, which cannot read the trigger's transition table,
-- and an INSERT of computed rows without ON CONFLICT reaches the shard as a COPY, which
-- row-level security refuses to the scoped role (sql/citus_postings.sql); and Citus plans no
-- statement of an SQL function with parameters, so this is PL/pgSQL. The tables have no unique
-- index, so ON CONFLICT DO NOTHING never skips a row.
CREATE OR REPLACE FUNCTION memseek_text_stats_add(sign integer, workspaces uuid[], lengths integer[], docs tsvector[])
RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO text_corpus (workspace_id, records, length)
  SELECT u.workspace_id, sign * count(*), sign * sum(u.length)
  FROM unnest(workspaces, lengths) u(workspace_id, length) GROUP BY 1
  ON CONFLICT DO NOTHING;
  INSERT INTO text_lexemes (workspace_id, lexeme, records)
  SELECT u.workspace_id, l.lexeme, sign * count(*)
  FROM unnest(workspaces, docs) u(workspace_id, doc) CROSS JOIN LATERAL unnest(tsvector_to_array(u.doc)) l(lexeme)
  GROUP BY 1, 2
  ON CONFLICT DO NOTHING;
END $$;

-- Inserted rows count +1, deleted rows (erasure, retention, any DELETE) -1: one delta row per
-- workspace and per (workspace, lexeme) of the statement. A deleted record's lexemes are then
-- folded by its deleter (`memseek.write.text_stats.fold`), so that its words leave no trace.
CREATE OR REPLACE FUNCTION memseek_text_stats_changed() RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
  workspaces uuid[];
  lengths integer[];
  docs tsvector[];
BEGIN
  SELECT array_agg(c.workspace_id), array_agg(c.tsv_length), array_agg(c.tsv) INTO workspaces, lengths, docs
  FROM changed_rows c WHERE c.retracted_at IS NULL;
  PERFORM memseek_text_stats_add(CASE TG_OP WHEN 'DELETE' THEN -1 ELSE 1 END, workspaces, lengths, docs);
  RETURN NULL;
END $$;

-- A retraction (or its reversal) or a new text moves one record out of or into the counts.
CREATE OR REPLACE FUNCTION memseek_text_stats_update() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  IF OLD.retracted_at IS NULL THEN
    PERFORM memseek_text_stats_add(-1, ARRAY[OLD.workspace_id], ARRAY[OLD.tsv_length], ARRAY[OLD.tsv]);
  END IF;
  IF NEW.retracted_at IS NULL THEN
    PERFORM memseek_text_stats_add(1, ARRAY[NEW.workspace_id], ARRAY[NEW.tsv_length], ARRAY[NEW.tsv]);
  END IF;
  RETURN NULL;
END $$;

CREATE TRIGGER records_text_stats_insert AFTER INSERT ON records
  REFERENCING NEW TABLE AS changed_rows FOR EACH STATEMENT EXECUTE FUNCTION memseek_text_stats_changed();
CREATE TRIGGER records_text_stats_delete AFTER DELETE ON records
  REFERENCING OLD TABLE AS changed_rows FOR EACH STATEMENT EXECUTE FUNCTION memseek_text_stats_changed();
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
