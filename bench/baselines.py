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

    def search(self, query_tokens: Sequence[str], k: int) -> list[str]:
        if self.index is None or not query_tokens:
            return []
        scores = self.index.get_scores(list(query_tokens))
        top = np.argsort(-scores, kind="stable")[:k]
        return [self.doc_ids[i] for i in top if scores[i] > 0]


class Dense:
    """Exact (brute-force) cosine retrieval over unit vectors."""

    def __init__(self, doc_ids: Sequence[str], vectors: np.ndarray) -> None:
        self.doc_ids = list(doc_ids)
        self.matrix = vectors

    def search(self, query_vector: np.ndarray, k: int) -> list[str]:
        if not self.doc_ids:
            return []
        scores = self.matrix @ query_vector
        top = np.argsort(-scores, kind="stable")[:k]
        return [self.doc_ids[i] for i in top]
