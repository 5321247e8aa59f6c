"""The `bm25` signal in SQL: Okapi BM25 of a record for the query's lexemes, with the workspace's
own statistics (`text_corpus`, `text_lexemes`: sql/0014_bm25.sql).

    bm25 = Σ over the query's lexemes t held by the record of
           idf(t) · tf · (k1 + 1) / (tf + k1 · (1 − b + b · dl / avgdl))
    idf(t) = ln(1 + (N − df(t) + 0.5) / (df(t) + 0.5))

N is the number of the workspace's records that are not retracted, df(t) how many of them hold
t, avgdl their mean length in positions; tf is t's positions in the record's full text and dl
the record's length (`tsv_length`). Each query lexeme counts once, as the query's `OR` matches it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import sqlalchemy as sa
from sqlalchemy.dialects.postgresql import ARRAY
from sqlalchemy.dialects.postgresql import TSVECTOR
from sqlalchemy.sql.elements import ColumnElement
from sqlalchemy.sql.selectable import CTE

from memseek.catalog.rank import Bm25
from memseek.schema import records
from memseek.schema import text_corpus
from memseek.schema import text_lexemes
from memseek.search.compile.query import FLOAT
from memseek.search.compile.query import Query
from memseek.search.compile.query import float_literal

STORED_POSITIONS = 2
"""Positions `tsv` keeps per lexeme (sql/0010_rank_positions.sql); `tsv_repeats` holds the rest."""


@dataclass(frozen=True, slots=True)
class Bm25Terms:
    """The query's lexemes with their IDF (`terms`: lexeme, idf) and, in one row, the arrays and
    the average length each record's score reads (`scoring`: lexemes, idfs, avgdl): one CTE
    each per statement, shared by the keyword list and the signal."""

    terms: CTE
    scoring: CTE

    @classmethod
    def build(cls, query: Query, lexemes: Any) -> Bm25Terms:
        """`lexemes`: the query's lexemes, one row each (`keywords.query_lexemes`)."""
        T, F = text_corpus.c, text_lexemes.c
        corpus = sa.select(
            sa.cast(sa.func.coalesce(sa.func.sum(T.records), 0), FLOAT).label("n"),
            sa.cast(sa.func.coalesce(sa.func.sum(T.length), 0), FLOAT).label("total"),
        ).where(T.workspace_id == query.ws)
        corpus_cte = corpus.cte("bm25_corpus")
        df = (
            sa.select(sa.cast(sa.func.coalesce(sa.func.sum(F.records), 0), FLOAT).label("df"))
            .where(F.workspace_id == query.ws, F.lexeme == lexemes.c.lexeme)
            .correlate(lexemes)
            .lateral("lexeme_df")
        )
        half = float_literal(0.5)
        idf = sa.func.ln(
            float_literal(1.0) + (corpus_cte.c.n - df.c.df + half) / (df.c.df + half), type_=FLOAT
        )
        terms = (
            sa.select(lexemes.c.lexeme, idf.label("idf"))
            .select_from(lexemes.join(corpus_cte, sa.true()).join(df, sa.true()))
            .cte("bm25_terms")
        )
        positive_n = sa.func.nullif(corpus_cte.c.n, float_literal(0.0), type_=FLOAT)
        avgdl = sa.select(corpus_cte.c.total / positive_n).scalar_subquery()
        scoring = sa.select(
            sa.func.array_agg(terms.c.lexeme, type_=ARRAY(sa.Text)).label("lexemes"),
            sa.func.array_agg(terms.c.idf, type_=ARRAY(FLOAT)).label("idfs"),
            avgdl.label("avgdl"),
        ).cte("bm25_scoring")
        return cls(terms, scoring)

    def score(self, node: Bm25, row: Any = records) -> ColumnElement[float]:
        """The record's BM25 (0 when it holds no query lexeme; 0 in an empty workspace)."""
        norm = self._norm(node, row)
        held = self._sum(row.c.tsv, lambda tf: _saturation(node, tf, norm))
        # A lexeme in `tsv_repeats` holds STORED_POSITIONS positions in `tsv`, counted above:
        # its term adds the difference its further positions make.
        stored = float_literal(float(STORED_POSITIONS))
        repeats = self._sum(
            row.c.tsv_repeats,
            lambda tf: _saturation(node, stored + tf, norm) - _saturation(node, stored, norm),
        )
        repeated = sa.case((sa.func.length(row.c.tsv_repeats) > 0, repeats), else_=float_literal(0.0))
        return held + repeated

    def _norm(self, node: Bm25, row: Any) -> ColumnElement[float]:
        """`k1 · (1 − b + b · dl / avgdl)`; NULL in a workspace without text (the score is then 0)."""
        avgdl = sa.select(self.scoring.c.avgdl).scalar_subquery()
        relative = sa.cast(row.c.tsv_length, FLOAT) / sa.func.nullif(avgdl, float_literal(0.0), type_=FLOAT)
        k1, b = float_literal(node.k1), float_literal(node.b)
        return k1 * (float_literal(1.0) - b + b * relative)

    def _sum(self, vector: Any, term: Any) -> ColumnElement[float]:
        """Σ idf · term(tf) over the query lexemes `vector` holds, tf their positions there (0
        for none).

        The query's lexemes are labelled A (`setweight`) and kept alone (`ts_filter`): unnesting
        only those costs a fraction of unnesting the record's whole vector. Stored positions
        carry label D (to_tsvector's), so no other lexeme is kept."""
        lexemes = sa.select(self.scoring.c.lexemes).scalar_subquery()
        idfs = sa.select(self.scoring.c.idfs).scalar_subquery()
        labelled = sa.func.setweight(vector, sa.literal_column("'A'::\"char\""), lexemes, type_=TSVECTOR)
        kept = sa.func.ts_filter(labelled, sa.literal_column("'{a}'::\"char\"[]"), type_=TSVECTOR)
        held = sa.func.unnest(kept).table_valued("lexeme", "positions", "weights").render_derived("held")
        tf = sa.cast(sa.func.cardinality(held.c.positions), FLOAT)
        idf = idfs[sa.func.array_position(lexemes, held.c.lexeme)]
        total = sa.func.coalesce(sa.func.sum(idf * term(tf)), float_literal(0.0))
        return sa.select(total).select_from(held).scalar_subquery()


def _saturation(node: Bm25, tf: ColumnElement[float], norm: ColumnElement[float]) -> ColumnElement[float]:
    """`tf · (k1 + 1) / (tf + norm)`."""
    return tf * float_literal(node.k1 + 1.0) / (tf + norm)
