-- Each lexeme keeps at most its first two positions in records.tsv.
-- ts_rank_cd adds up every occurrence of a query word, with no saturation: a long record that
-- repeats a word ten times outranks a short one that states it twice. Capping the stored
-- positions is the saturation. Through the service, SciFact nDCG@10 of text and of the default
-- hybrid went 0.548 -> 0.664, and LoCoMo R@10 of the default hybrid 0.658 -> 0.670; caps of 1
-- and 3 did less on both (docs/search.md, "Repeated words").
-- Matching is unchanged: every lexeme stays, only its third and later positions go.
-- Lexemes are written back in tsvector's text form: quoted, with ' doubled and \ escaped;
-- a lexeme without positions (none that to_tsvector makes) is kept as it is. Weight labels are
-- not written back: to_tsvector labels every position D, the label a position without one has.
CREATE OR REPLACE FUNCTION memseek_rank_positions(doc tsvector) RETURNS tsvector
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT coalesce(string_agg(
           '''' || replace(replace(u.lexeme, '\', '\\'), '''', '''''') || ''''
             || coalesce(':' || array_to_string(u.positions[1:2], ','), ''),
           ' ')::tsvector, ''::tsvector)
  FROM unnest(doc) u
$$;

-- Records written before this migration: the postings trigger refreshes their postings. Only
-- records holding a lexeme three times or more change; finding them needs no rebuilt vector, so
-- the function runs once per rewritten record.
UPDATE records SET tsv = memseek_rank_positions(tsv)
WHERE EXISTS (SELECT FROM unnest(tsv) u WHERE cardinality(u.positions) > 2);
