-- The postings triggers on a Citus cluster (memseek.citus.distribute runs this after distributing).
-- On a shard, a trigger's INSERT into record_postings is a distributed statement of its own, run
-- on the node holding the co-located postings shard. Two things the single-node bodies do that
-- Citus cannot: read the transition table inside that statement (its SELECT runs apart from the
-- trigger, where "new_rows" does not exist), and insert computed rows without ON CONFLICT or
-- RETURNING (Citus then sends them by COPY, which row-level security refuses to the scoped role).
-- So the transition table is read into arrays first, and each INSERT carries ON CONFLICT DO
-- NOTHING: the table has no unique index, so nothing is ever skipped, and the rows reach the
-- shard as an INSERT … SELECT that keeps the policies.

CREATE OR REPLACE FUNCTION memseek_postings_insert() RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
  workspaces uuid[];
  ids uuid[];
  docs tsvector[];
BEGIN
  SELECT array_agg(n.workspace_id), array_agg(n.id), array_agg(n.tsv) INTO workspaces, ids, docs FROM new_rows n;
  INSERT INTO record_postings (workspace_id, record_id, lexeme, impact)
  SELECT n.workspace_id, n.id, p.lexeme, p.impact
  FROM unnest(workspaces, ids, docs) AS n (workspace_id, id, tsv) CROSS JOIN LATERAL memseek_postings_of(n.tsv) p
  ON CONFLICT DO NOTHING;
  RETURN NULL;
END $$;

CREATE OR REPLACE FUNCTION memseek_postings_refresh() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  DELETE FROM record_postings
  WHERE workspace_id = OLD.workspace_id AND lexeme = ANY (tsvector_to_array(OLD.tsv)) AND record_id = OLD.id;
  IF TG_OP = 'UPDATE' THEN
    INSERT INTO record_postings (workspace_id, record_id, lexeme, impact)
    SELECT NEW.workspace_id, NEW.id, p.lexeme, p.impact FROM memseek_postings_of(NEW.tsv) p
    ON CONFLICT DO NOTHING;
  END IF;
  RETURN NULL;
END $$;
