-- An OR over the lexemes of `to_tsvector(cfg, q)`: a record matches when it contains ANY
-- query lexeme. websearch_to_tsquery/plainto_tsquery AND every term and return nothing for
-- most natural-language questions (design §5). Each lexeme is quoted so that characters
-- with tsquery meaning (: & | ! ') stay literal.
CREATE OR REPLACE FUNCTION memseek_any_lexeme(cfg regconfig, q text) RETURNS tsquery
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $$
  SELECT coalesce(string_agg(quote_literal(lexeme), ' | '), '')::tsquery
  FROM unnest(tsvector_to_array(to_tsvector(cfg, q))) AS lexeme
$$;
