"""`[bm25]`: Okapi BM25 with the workspace's own statistics, kept at write time.

The reference below computes BM25 in Python from the texts of the workspace's records that are
not retracted (docs/search.md, "BM25"): the full lexeme vectors PostgreSQL's `english`
configuration makes of them (every position, not the two `tsv` keeps), N, df and the average
length over that corpus, IDF `ln(1 + (N − df + 0.5) / (df + 0.5))`. A search's `[bm25]` value must
equal it to 1e-9 after any mix of supersession (superseded records stay in the corpus),
retraction and erasure (the corpus loses them; `erase.erase_records`, what erasing a record, an
entity and retention run), and compaction of the statistics must change no score. The stored
counts must equal a recount from `records` after each change, and an erased record's lexemes
must leave no row behind.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any
from uuid import UUID
from uuid import uuid4

import pytest
import sqlalchemy as sa
from hypothesis import HealthCheck
from hypothesis import given as hypothesis_given
from hypothesis import settings
from hypothesis import strategies as st
from sqlalchemy.engine import Engine

from memseek.schema import records
from memseek.schema import text_corpus
from memseek.schema import text_lexemes
from memseek.write import text_stats
from memseek.write.erase import erase_records
from memseek.write.store import text_columns
from tests.conftest import Tenant
from tests.conftest import make_tenant
from tests.integration.searchdata import Rec
from tests.integration.searchdata import unit
from tests.integration.test_search_execute import given
from tests.integration.test_search_execute import ids
from tests.integration.test_search_execute import run

WORDS = ("cat", "dog", "bird", "fish", "tree", "river", "stone", "cloud")
_LEXEME = re.compile(r"'((?:[^']|'')*)'(?::([0-9A-D,]+))?")


def parsed(db: Engine, text: str) -> Counter[str]:
    """`to_tsvector('english', text)`: each lexeme with its number of positions."""
    with db.connect() as conn:
        vector = conn.execute(sa.text("SELECT to_tsvector('english', :t)::text"), {"t": text}).scalar_one()
    return Counter({m[0]: len(m[1].split(",")) for m in _LEXEME.findall(vector)})


def reference(db: Engine, corpus: Sequence[str], query: str, k1: float = 1.2, b: float = 0.75) -> list[float]:
    """BM25 of each text of `corpus` for `query`, with `corpus` as the whole collection."""
    docs = [parsed(db, text) for text in corpus]
    terms = set(parsed(db, query))
    n = len(docs)
    avgdl = sum(sum(d.values()) for d in docs) / n
    scores = []
    for doc in docs:
        dl, score = sum(doc.values()), 0.0
        for term in terms & set(doc):
            df = sum(1 for d in docs if term in d)
            idf = math.log(1 + (n - df + 0.5) / (df + 0.5))
            tf = doc[term]
            score += idf * tf * (k1 + 1) / (tf + k1 * (1 - b + b * dl / avgdl))
        scores.append(score)
    return scores


RECOUNT = sa.text("""
    SELECT (SELECT coalesce(sum(records), 0) FROM text_corpus WHERE workspace_id = :ws),
           (SELECT coalesce(sum(length), 0) FROM text_corpus WHERE workspace_id = :ws),
           (SELECT count(*) FROM records WHERE workspace_id = :ws AND retracted_at IS NULL),
           (SELECT coalesce(sum(tsv_length), 0) FROM records
            WHERE workspace_id = :ws AND retracted_at IS NULL),
           ARRAY(SELECT lexeme || '=' || sum(records) FROM text_lexemes WHERE workspace_id = :ws
                 GROUP BY lexeme HAVING sum(records) <> 0 ORDER BY lexeme),
           ARRAY(SELECT l || '=' || count(*) FROM records r, unnest(tsvector_to_array(r.tsv)) l
                 WHERE r.workspace_id = :ws AND r.retracted_at IS NULL GROUP BY l ORDER BY l),
           ARRAY(SELECT DISTINCT lexeme FROM text_lexemes WHERE workspace_id = :ws AND lexeme NOT IN (
                   SELECT unnest(tsvector_to_array(tsv)) FROM records WHERE workspace_id = :ws)
                 ORDER BY lexeme)
""")


def assert_counts_exact(db: Engine, workspace_id: UUID, orphans: bool = False) -> tuple[Any, ...]:
    """The workspace's summed statistics equal a recount of its records that are not retracted,
    and (unless `orphans`) no lexeme row is left for a lexeme no record of the workspace holds:
    only a text rewritten in place leaves rows that sum to 0 until the next compaction. Returns
    them (records, length, each lexeme's count)."""
    with db.connect() as conn:
        records_n, length, counted_n, counted_length, lexemes, recounted, left = conn.execute(
            RECOUNT, {"ws": workspace_id}
        ).one()
    assert (records_n, length) == (counted_n, counted_length)
    assert lexemes == recounted
    assert orphans or left == []
    return records_n, length, lexemes


def bm25_values(
    db: Engine, tenant: Tenant, query: str, rank: Any = ("bm25",), mode: str = "text"
) -> dict[UUID, float]:
    """Every record a search finds, with its `[bm25]` value (every version, k 100)."""
    body = {"mode": mode, "q": query, "rank": list(rank), "k": 100, "scope": {"versions": "all"}}
    result = run(db, tenant, body, vector=unit(1, 0) if mode == "hybrid" else None)
    return {hit.id: float(hit.value) for hit in result.hits if hit.value is not None}


def execute(db: Engine, statement: Any) -> None:
    with db.begin() as conn:
        conn.execute(statement)


@dataclass(frozen=True)
class Doc:
    text: str
    superseded: bool
    retracted: bool
    erased: bool


docs = st.builds(
    Doc,
    text=st.lists(st.sampled_from(WORDS), min_size=1, max_size=9).map(" ".join),
    superseded=st.booleans(),
    retracted=st.booleans(),
    erased=st.booleans(),
)


def check_against_reference(
    db: Engine,
    tenant: Tenant,
    texts: dict[UUID, str],
    query: str,
    k1: float = 1.2,
    b: float = 0.75,
    orphans: bool = False,
) -> None:
    assert_counts_exact(db, tenant.id, orphans)
    found = bm25_values(db, tenant, query, ("bm25", {"k1": k1, "b": b}))
    expected = dict(zip(texts, reference(db, list(texts.values()), query, k1, b), strict=True))
    assert set(found) == {record for record, score in expected.items() if score > 0}
    for record, value in found.items():
        assert value == pytest.approx(expected[record], rel=0, abs=1e-9)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@hypothesis_given(
    corpus=st.lists(docs, min_size=1, max_size=10),
    query=st.lists(st.sampled_from((*WORDS, "zebra")), min_size=1, max_size=3).map(" ".join),
    k1=st.sampled_from((1.2, 0.0, 2.5)),
    b=st.sampled_from((0.75, 0.0, 1.0)),
)
def test_bm25_equals_the_reference_after_supersession_retraction_and_erasure(
    db: Engine, corpus: list[Doc], query: str, k1: float, b: float
) -> None:
    tenant = make_tenant(db, f"bm25-{uuid4()}")
    recs = [
        Rec(text=d.text, key="slot" if d.superseded else None, is_current=not d.superseded) for d in corpus
    ]
    written = given(db, tenant, *recs)
    by_id = dict(zip(written, corpus, strict=True))
    retracted = [i for i, d in by_id.items() if d.retracted and not d.erased]
    erased = [i for i, d in by_id.items() if d.erased]
    execute(db, records.update().where(records.c.id.in_(retracted)).values(retracted_at=sa.func.now()))
    with db.begin() as conn:
        erase_records(conn, tenant.id, erased)
    assert_counts_exact(db, tenant.id)
    corpus_texts = {i: d.text for i, d in by_id.items() if not d.retracted and not d.erased}
    if not corpus_texts:
        assert bm25_values(db, tenant, query) == {}
        return
    check_against_reference(db, tenant, corpus_texts, query, k1, b)
    with db.begin() as conn:
        text_stats.compact(conn, tenant.id)
    check_against_reference(db, tenant, corpus_texts, query, k1, b)


def test_repeated_words_count_every_time_and_a_retraction_can_be_reversed(db: Engine, tenant: Tenant) -> None:
    """`tsv` keeps two positions of `cat`; BM25 reads all five (`tsv_repeats`). Un-retracting a
    record puts it back into the counts."""
    texts = ["cat cat cat cat cat dog", "cat bird", "fish tree", "cat dog dog dog"]
    written = given(db, tenant, *(Rec(text=t) for t in texts))
    check_against_reference(db, tenant, dict(zip(written, texts, strict=True)), "cat dog")
    retract = records.update().where(records.c.id == written[1])
    execute(db, retract.values(retracted_at=sa.func.now()))
    check_against_reference(
        db, tenant, {i: t for i, t in zip(written, texts, strict=True) if i != written[1]}, "cat dog"
    )
    execute(db, retract.values(retracted_at=None))
    check_against_reference(db, tenant, dict(zip(written, texts, strict=True)), "cat dog")


def test_a_new_text_moves_the_counts(db: Engine, tenant: Tenant) -> None:
    """A record whose text is rewritten (by hand: the service never does) counts its new lexemes."""
    texts = ["cat dog", "bird fish", "cat cat cat tree"]
    written = given(db, tenant, *(Rec(text=t) for t in texts))
    new_text = "river river river cat"
    update = records.update().where(records.c.id == written[0])
    execute(db, update.values(text=new_text, **text_columns("english", new_text)))
    texts[0] = new_text
    check_against_reference(
        db, tenant, dict(zip(written, texts, strict=True)), "river cat tree", orphans=True
    )


def test_another_workspaces_records_change_no_score(db: Engine, tenant: Tenant, other_tenant: Tenant) -> None:
    texts = ["cat dog", "cat bird bird", "fish tree cat", "stone"]
    given(db, tenant, *(Rec(text=t) for t in texts))
    before = {mode: bm25_values(db, tenant, "cat bird", mode=mode) for mode in ("text", "hybrid")}
    given(db, other_tenant, *(Rec(text=f"bird bird river {i}") for i in range(30)), Rec(text="cat " * 40))
    after = {mode: bm25_values(db, tenant, "cat bird", mode=mode) for mode in ("text", "hybrid")}
    assert after == before
    # Hybrid computes the same signal; its newest-first list also proposes `stone`, which reads 0.
    assert {i: v for i, v in before["hybrid"].items() if v > 0} == before["text"]
    assert sorted(before["hybrid"].values())[0] == 0.0
    assert bm25_values(db, other_tenant, "cat bird") != {}


@pytest.mark.parametrize("mode", ["vector", "recent"])
def test_bm25_is_zero_outside_text_and_hybrid(db: Engine, tenant: Tenant, mode: str) -> None:
    given(db, tenant, Rec(text="cat dog", embedding=unit(1, 0)), Rec(text="cat", embedding=unit(0, 1)))
    body = {"mode": mode, "q": "cat", "rank": ["sum", [["bm25"], ["const", 1]]], "k": 10}
    result = run(db, tenant, body, vector=unit(1, 0) if mode == "vector" else None)
    assert len(ids(result)) == 2
    assert {hit.value for hit in result.hits} == {1.0}


def test_compaction_folds_the_deltas_and_keeps_the_counts(db: Engine, tenant: Tenant) -> None:
    for text in ("cat dog", "cat", "dog bird", "bird"):
        given(db, tenant, Rec(text=text))
    written = given(db, tenant, Rec(text="fish"))
    execute(db, records.delete().where(records.c.id == written[0]))

    def counts() -> tuple[Any, Any, int]:
        with db.connect() as conn:
            corpus = conn.execute(
                sa.select(
                    sa.func.sum(text_corpus.c.records), sa.func.sum(text_corpus.c.length), sa.func.count()
                ).where(text_corpus.c.workspace_id == tenant.id)
            ).one()
            lexemes = conn.execute(
                sa.select(text_lexemes.c.lexeme, sa.func.sum(text_lexemes.c.records))
                .where(text_lexemes.c.workspace_id == tenant.id)
                .group_by(text_lexemes.c.lexeme)
                .having(sa.func.sum(text_lexemes.c.records) != 0)
            ).all()
            rows = conn.execute(
                sa.select(sa.func.count()).where(text_lexemes.c.workspace_id == tenant.id)
            ).scalar_one()
        return (corpus[0], corpus[1]), sorted(lexemes), rows

    before = counts()
    assert before[0] == (4, 6)
    with db.begin() as conn:
        text_stats.compact(conn, tenant.id)
    after = counts()
    assert after[:2] == before[:2]
    assert after[2] == 3  # cat, dog, bird: one row each, none for fish
    assert sorted(after[1]) == [("bird", 2), ("cat", 2), ("dog", 2)]


def test_compact_due_folds_only_workspaces_with_many_deltas(
    db: Engine, tenant: Tenant, other_tenant: Tenant, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(text_stats, "COMPACT_AFTER", 3)
    for text in ("cat dog", "cat", "dog bird", "bird"):
        given(db, tenant, Rec(text=text))
    given(db, other_tenant, Rec(text="cat fish"))

    def rows(workspace_id: UUID) -> int:
        with db.connect() as conn:
            return int(
                conn.execute(
                    sa.select(sa.func.count()).where(text_corpus.c.workspace_id == workspace_id)
                ).scalar_one()
            )

    assert (rows(tenant.id), rows(other_tenant.id)) == (4, 1)
    assert text_stats.compact_due(db) >= 1
    assert (rows(tenant.id), rows(other_tenant.id)) == (1, 1)
    assert_counts_exact(db, tenant.id)
    assert_counts_exact(db, other_tenant.id)
