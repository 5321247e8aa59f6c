"""Keyword matching: the query's lexemes labelled by rarity or weighed by IDF (`Keywords`), the
`text_match` signal over them, what a keyword list ranks by (`keyword_signal`, `keyword_rank`),
and the best postings a broad keyword list ranks (`posting_ids`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import sqlalchemy as sa
from sqlalchemy.dialects.postgresql import ARRAY
from sqlalchemy.dialects.postgresql import TSVECTOR
from sqlalchemy.sql.elements import ColumnElement
from sqlalchemy.sql.selectable import CTE
from sqlalchemy.sql.selectable import Select

from memseek.catalog.rank import Bm25
from memseek.catalog.rank import TextMatch
from memseek.catalog.rank import iter_nodes
from memseek.catalog.rank import signals
from memseek.schema import inline
from memseek.schema import record_postings
from memseek.schema import records
from memseek.search.compile.bm25 import Bm25Terms
from memseek.search.compile.query import FLOAT
from memseek.search.compile.query import CompilablePlan
from memseek.search.compile.query import Query
from memseek.search.compile.query import R

RARITY_CLASSES = (("A", 0.002), ("B", 0.02), ("C", 0.1))
"""`ts_rank_cd` weight label of a query lexeme → the largest fraction of the workspace's records
holding it; more common lexemes keep the label every stored position has, D. With PostgreSQL's
default weights (A 1.0, B 0.4, C 0.2, D 0.1) an occurrence of a word at most one record in
five hundred holds counts ten times one most records hold (`query_terms`). The bounds are the
best found on the LoCoMo and SciFact quality suites (docs/search.md); C also bounds how many
postings a query lexeme's count reads."""
RARITY_MIN_RECORDS = 200
"""Smaller workspaces label nothing (a tenth of a few records is no evidence that a word is
common): `text_match` is then plain `ts_rank_cd`."""
RARITY_SCALE = 5_000
"""Records counted at most: in larger workspaces the classes are the fractions of this many
records (a lexeme with more than 500 postings is common), so counting stays bounded: the record
count reads heap pages that touch-on-read keeps out of the visibility map."""
_POSTING_COUNT_LABEL = "C"
"""Postings are counted up to this class's bound (more means D)."""
LABEL_WEIGHTS = {"A": 1.0, "B": 0.4, "C": 0.2, "D": 0.1}
"""PostgreSQL's default `ts_rank_cd` weights per label (what `text_match` uses)."""
POSTING_POOL = 2
"""Records read per keyword candidate wanted: the best postings are re-checked and ranked by
`ts_rank_cd` on at most this many times the keyword list's length in records."""


class _PgChar(sa.types.UserDefinedType[str]):
    """PostgreSQL's one-byte `"char"` (the weight label `setweight` takes)."""

    cache_ok = True

    def get_col_spec(self, **kw: Any) -> str:
        return '"char"'


def _label(label: str) -> ColumnElement[str]:
    return sa.cast(sa.literal(label, sa.Text), _PgChar())


@dataclass(frozen=True, slots=True)
class Keywords:
    """The query's lexemes as the statement weighs them: labelled by rarity for `text_match`
    (`terms`, from `query_terms`, and the record count and class bounds those labels used,
    `bounds`, from `rarity_bounds`), and with their IDF for `bm25` (`bm25`), each built only
    when something reads it: one CTE each per statement, shared by the keyword list and the
    signals. `ranked_by` is the signal the keyword list ranks its matches by and measures."""

    bounds: CTE | None
    terms: CTE | None
    bm25: Bm25Terms | None = None
    ranked_by: TextMatch | Bm25 = TextMatch()

    @classmethod
    def build(cls, query: Query) -> Keywords:
        rank, ranked_by = query.plan.rank, keyword_signal(query.plan)
        read = signals(rank) if rank is not None else frozenset()
        bm25 = Bm25Terms.build(query, _query_lexemes(query)) if Bm25 in read else None
        if isinstance(ranked_by, Bm25) and TextMatch not in read:
            return cls(None, None, bm25, ranked_by)
        bounds = rarity_bounds(query)
        return cls(bounds, query_terms(query, bounds), bm25, ranked_by)

    def counted(self) -> ColumnElement[int] | None:
        """The record count the rarity labels used (what `statement` reports as `counted_records`)."""
        return None if self.bounds is None else sa.select(self.bounds.c.n).scalar_subquery()

    def labelled_tsv(self, row: Any = records) -> ColumnElement[Any]:
        """The record's `tsv` with the query's lexemes labelled by rarity (see `query_terms`)."""
        if self.terms is None:
            raise ValueError("text_match needs the query's rarity labels (`Keywords.build`)")
        labelled = row.c.tsv
        for label, _ in RARITY_CLASSES:
            lexemes = sa.func.array_agg(self.terms.c.lexeme).filter(self.terms.c.label == label)
            chosen = sa.select(sa.func.coalesce(lexemes, sa.cast(sa.literal([]), ARRAY(sa.Text))))
            labelled = sa.func.setweight(labelled, _label(label), chosen.scalar_subquery(), type_=TSVECTOR)
        return labelled  # type: ignore[no-any-return]

    def need_bm25(self) -> Bm25Terms:
        """The query's IDF, which `build` prepares whenever the formula reads `bm25`."""
        if self.bm25 is None:
            raise ValueError("bm25 needs the query's IDF (`Keywords.build`)")
        return self.bm25


def keyword_signal(plan: CompilablePlan) -> TextMatch | Bm25:
    """What a keyword list ranks its matches by, so that its proposals and the formula agree:
    the formula's first `bm25` (with its options), else `text_match` as the spec's formulas do."""
    if plan.rank is not None:
        for _, node in iter_nodes(plan.rank):
            if isinstance(node, Bm25):
                return node
    return TextMatch()


def query_terms(query: Query, bounds: CTE) -> CTE:
    """The query's lexemes, each labelled A, B, C or D by how many of the workspace's records
    hold it (`RARITY_CLASSES`): an inverse document frequency in four steps for `ts_rank_cd`.

    `ts_rank_cd` has none of its own: a word most records hold counts as much as one a few hold,
    so long records full of the query's common words outrank the few that share its distinctive
    ones. Document frequencies are counted from the workspace's own postings, each with a LIMIT
    just past the C bound (no statistics of other workspaces, no count beyond the cut-off),
    against the workspace's record count (`bounds`). A workspace smaller than
    `RARITY_MIN_RECORDS` counts nothing and labels every lexeme D, the label every stored
    position already has, so `text_match` is unchanged there. Matching is unchanged everywhere."""
    lexemes = _query_lexemes(query)
    P = record_postings.c
    postings = (
        sa.select(sa.literal(1).label("one"))
        .where(P.workspace_id == query.ws, P.lexeme == lexemes.c.lexeme)
        .limit(sa.select(bounds.c[_POSTING_COUNT_LABEL]).scalar_subquery() + 1)
        .correlate(lexemes)
        .subquery("lexeme_postings")
    )
    # Counted per lexeme, one row each: grouping the postings of every lexeme afterwards reads
    # them all again.
    df = sa.select(sa.func.count().label("df")).select_from(postings).lateral("lexeme_df")
    label = sa.case(*((df.c.df <= bounds.c[name], name) for name, _ in RARITY_CLASSES), else_="D")
    return (
        sa.select(lexemes.c.lexeme, label.label("label"))
        .select_from(lexemes.join(bounds, sa.true()).join(df, sa.true()))
        .cte("query_terms")
    )


def rarity_bounds(query: Query) -> CTE:
    """One row: the workspace's records counted up to `RARITY_SCALE` (`n`) and each class's
    largest posting count (`A`, `B`, `C`; -1 in a workspace too small to label). A workspace
    known to hold that many (`Inputs.large_workspace`) is not counted: its statement carries the
    scale as a constant and no reference to `records` that the planner would still weigh; the
    bounds follow from `n` alike."""
    if query.inputs.large_workspace:
        size = sa.select(inline(RARITY_SCALE).label("n")).subquery("workspace_size")
    else:
        held = sa.select(R.seq).where(R.workspace_id == query.ws).limit(RARITY_SCALE)
        counted = sa.select(sa.func.count().label("n")).select_from(held.subquery("workspace_records"))
        size = counted.subquery("workspace_size")
    bounds = [
        sa.case(
            (size.c.n >= RARITY_MIN_RECORDS, sa.cast(sa.func.floor(size.c.n * fraction), sa.Integer)),
            else_=-1,  # a small workspace: nothing is counted, nothing is labelled
        ).label(label)
        for label, fraction in RARITY_CLASSES
    ]
    return sa.select(size.c.n, *bounds).cte("rarity_bounds")


def _query_lexemes(query: Query) -> Any:
    return (
        sa.func.unnest(sa.func.tsvector_to_array(query.query_tsvector()))
        .table_valued("lexeme")
        .render_derived(name="query_lexemes", with_types=False)
    )


def keyword_rank(query: Query, keywords: Keywords, row: Any = records) -> ColumnElement[float]:
    """The keyword list's measure of a record: its `ranked_by` signal."""
    ranked_by = keywords.ranked_by
    if isinstance(ranked_by, Bm25):
        return keywords.need_bm25().score(ranked_by, row)
    return text_match(query, keywords, row)


def text_match(query: Query, keywords: Keywords, row: Any = records) -> ColumnElement[float]:
    """The `text_match` signal: PostgreSQL `ts_rank_cd` (default weights, no normalisation: "0
    upward, no fixed ceiling", as the spec's signal table says) of the record, its query
    lexemes labelled by rarity (`query_terms`), for the query. The stored `tsv` keeps two
    positions per lexeme (`store.text_terms`), so a word repeated counts at most twice.
    Scaled into [0, 1) (flags 1|32), it lost to similarity in the default hybrid's `max` almost
    everywhere on the LoCoMo and SciFact quality suites."""
    return sa.func.ts_rank_cd(keywords.labelled_tsv(row), query.tsquery(), type_=FLOAT)


def posting_ids(query: Query, keywords: Keywords) -> Select[Any]:
    """Ids holding the best postings of the query lexemes: each lexeme's `list_size` highest
    impacts, then the `POSTING_POOL × list_size` records with the largest sum of impacts
    weighted as the list's signal weighs the lexemes: by rarity label for `text_match`
    (`query_terms`), by IDF for `bm25` (an impact is BM25's term-frequency factor at the
    default k1 and b, so the sum is BM25 with a fixed average length).

    For a scope naming entities the exact path is used instead: those rows are few, and the
    best postings of the whole workspace could all lie outside the scope."""
    if isinstance(keywords.ranked_by, Bm25):
        lexemes = keywords.need_bm25().terms
        weight: ColumnElement[float] = lexemes.c.idf
    else:
        assert keywords.terms is not None  # `Keywords.build` labels for a list ranked by text_match
        lexemes = keywords.terms
        weight = sa.case(*((lexemes.c.label == label, w) for label, w in LABEL_WEIGHTS.items()))
    P = record_postings.c
    best = (
        sa.select(P.record_id, P.impact)
        .where(P.workspace_id == query.ws, P.lexeme == lexemes.c.lexeme)
        .order_by(P.impact.desc(), P.record_id)
        .limit(query.list_size)
        .lateral("best_postings")
    )
    total = sa.func.sum(best.c.impact * weight)
    return (
        sa.select(best.c.record_id)
        .select_from(lexemes.join(best, sa.true()))
        .group_by(best.c.record_id)
        .order_by(total.desc(), best.c.record_id)
        .limit(POSTING_POOL * query.list_size)
    )
