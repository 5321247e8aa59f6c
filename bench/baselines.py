"""In-process retrieval baselines: BM25 (rank-bm25) and exact dense retrieval (same local model).

Both tokenise nothing themselves beyond what is stated: BM25 reads the lexemes PostgreSQL's
`english` text search configuration produces (Snowball stemming and its stop words, the same
analyzer the service's text index uses), with term frequencies from the lexeme positions, so
BM25 and the service's `ts_rank_cd` differ in scoring only, not in analysis. Parameters are
Lucene's defaults (k1 = 1.2, b = 0.75), as in BEIR's Elasticsearch BM25.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import numpy as np
import psycopg
from rank_bm25 import BM25Okapi

_LEXEME = re.compile(r"'((?:[^']|'')*)'(?::([0-9A-D,]+))?")


def parse_tsvector(text: str) -> list[str]:
    """A tsvector's text form as a token list, each lexeme repeated once per position."""
    tokens = []
    for lexeme, positions in _LEXEME.findall(text):
        word = lexeme.replace("''", "'")
        tokens += [word] * (len(positions.split(",")) if positions else 1)
    return tokens


def english_tokens(conn: psycopg.Connection, texts: Sequence[str]) -> list[list[str]]:
    """`to_tsvector('english', text)` of each text, as token lists (input order)."""
    rows = conn.execute(
        "SELECT to_tsvector('english', t)::text "
        "FROM unnest(%s::text[]) WITH ORDINALITY AS u(t, n) ORDER BY n",
        (list(texts),),
    ).fetchall()
    return [parse_tsvector(row[0]) for row in rows]


class BM25:
    """BM25 over token lists; `search` returns matching doc ids, best first."""

    def __init__(self, doc_ids: Sequence[str], tokens: Sequence[Sequence[str]]) -> None:
        self.doc_ids = list(doc_ids)
        # rank-bm25 divides by the corpus size; an empty document list would divide by zero.
        self.index = BM25Okapi([list(t) or [""] for t in tokens], k1=1.2, b=0.75) if doc_ids else None

    def scores(self, query_tokens: Sequence[str]) -> np.ndarray:
        """Every document's score, in `doc_ids` order (0 for one holding no query token)."""
        if self.index is None or not query_tokens:
            return np.zeros(len(self.doc_ids))
        return np.asarray(self.index.get_scores(list(query_tokens)), dtype=float)

    def search(self, query_tokens: Sequence[str], k: int) -> list[str]:
        scores = self.scores(query_tokens)
        top = np.argsort(-scores, kind="stable")[:k]
        return [self.doc_ids[i] for i in top if scores[i] > 0]


class Dense:
    """Exact (brute-force) cosine retrieval over unit vectors."""

    def __init__(self, doc_ids: Sequence[str], vectors: np.ndarray) -> None:
        self.doc_ids = list(doc_ids)
        self.matrix = vectors

    def scores(self, query_vector: np.ndarray) -> np.ndarray:
        """Every document's cosine similarity, in `doc_ids` order."""
        return self.matrix @ query_vector if self.doc_ids else np.zeros(0)

    def search(self, query_vector: np.ndarray, k: int) -> list[str]:
        scores = self.scores(query_vector)
        top = np.argsort(-scores, kind="stable")[:k]
        return [self.doc_ids[i] for i in top]


MINMAX_POOL = 200
"""Documents each side of `minmax_sum` proposes: the service's default candidate count."""


def minmax_sum(bm25: BM25, dense: Dense, tokens: Sequence[str], vector: np.ndarray, k: int) -> list[str]:
    """The min–max sum of BM25 and dense, the usual convex fusion at equal weights: each side's
    `MINMAX_POOL` best documents pooled, each score min–max normalised over the pool (a document
    without a query token scores BM25 0), the two added, best first."""
    lexical, semantic = bm25.scores(tokens), dense.scores(vector)
    matching = np.argsort(-lexical, kind="stable")[:MINMAX_POOL]
    pool = np.union1d(matching[lexical[matching] > 0], np.argsort(-semantic, kind="stable")[:MINMAX_POOL])
    total = _minmax(lexical[pool]) + _minmax(semantic[pool])
    order = np.argsort(-total, kind="stable")[:k]
    return [bm25.doc_ids[pool[i]] for i in order]


def _minmax(values: np.ndarray) -> np.ndarray:
    spread = values.max() - values.min() if len(values) else 0.0
    return (values - values.min()) / spread if spread > 0 else np.zeros(len(values))
