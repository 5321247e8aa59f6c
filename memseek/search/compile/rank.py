"""The rank expression in SQL: one compile rule per node class (`compile_rank`), one rule per
record signal (`signal_column`), and the stages that materialise each `normalize` window.

The rank grammar's node classes are imported here and by the modules computing a signal
(`keywords`, `bm25`); `query` names only the `RankNode` type of a plan's formula."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import singledispatch
from typing import Any

import sqlalchemy as sa
from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.sql.elements import ColumnElement

from memseek.catalog.rank import AgeHours
from memseek.catalog.rank import Bm25
from memseek.catalog.rank import Const
from memseek.catalog.rank import Decay
from memseek.catalog.rank import Max
from memseek.catalog.rank import Normalize
from memseek.catalog.rank import Product
from memseek.catalog.rank import RankNode
from memseek.catalog.rank import Saturate
from memseek.catalog.rank import Score
from memseek.catalog.rank import Signal
from memseek.catalog.rank import Similarity
from memseek.catalog.rank import Sum
from memseek.catalog.rank import TextMatch
from memseek.catalog.rank import age_fields
from memseek.catalog.rank import iter_nodes
from memseek.schema import inline
from memseek.schema import last_accessed
from memseek.search.compile.keywords import Keywords
from memseek.search.compile.keywords import keyword_signal
from memseek.search.compile.keywords import text_match
from memseek.search.compile.query import FLOAT
from memseek.search.compile.query import SINGLE_LIST_MODES
from memseek.search.compile.query import TS
from memseek.search.compile.query import CompilablePlan
from memseek.search.compile.query import Query
from memseek.search.compile.query import float_literal
from memseek.search.fuse import EXP_LIMIT


class UnsupportedNode(TypeError):
    """A rank node class without a compile rule (a test walks OPERATORS to prevent this)."""


# --- what the formula needs of the statement --------------------------------------------------

KEYWORD_MODES = ("text", "hybrid")
"""Modes with a keyword list."""
SIGNAL_READS: dict[type[RankNode], tuple[str, ...]] = {
    Similarity: ("embedding", "embedding_model"),
    TextMatch: ("tsv",),
    Bm25: ("tsv", "tsv_repeats", "tsv_length"),
    Score: ("scores",),
}
"""The `records` columns each signal's SQL reads (`signal_column`); `age_hours` reads its field."""


def list_signal(plan: CompilablePlan) -> RankNode | None:
    """The signal a single list measures while proposing each of its rows: the distance of a row
    with an embedding of the query's model, the keyword list's measure (`keyword_signal`) of a
    row that matches the query. Its pool reads the list's value, and the list carries no column
    for measuring it again."""
    if plan.mode == "vector":
        return Similarity()
    return keyword_signal(plan) if plan.mode == "text" else None


def carried_columns(plan: CompilablePlan) -> tuple[str, ...]:
    """The `records` columns a single list carries for its pool: what the pool selects and what
    the formula's signals read (none for other modes, whose pool reads `records` again)."""
    if plan.mode not in SINGLE_LIST_MODES or plan.rank is None:
        return ()
    names = {"occurred_at": None, "seq": None, "workspace_id": None}  # ordered, unique
    measured = list_signal(plan)
    for _, node in iter_nodes(plan.rank):
        if node == measured:
            continue  # the list's own measure is the signal (`signal_column`)
        names.update(dict.fromkeys(SIGNAL_READS.get(type(node), ())))
        if isinstance(node, AgeHours):
            names[node.field] = None
    return tuple(names)


def matches_keywords(plan: CompilablePlan) -> bool:
    """Whether the statement labels the query's lexemes (`keywords.Keywords`): its keyword list
    ranks by `text_match`, and so does a formula that reads it."""
    rank = plan.rank
    reads = rank is not None and any(isinstance(node, TextMatch) for _, node in iter_nodes(rank))
    return plan.mode in KEYWORD_MODES or reads


def ages_last_accessed(root: RankNode) -> bool:
    """Whether the formula reads `age_hours(last_accessed)` (a record's touches count)."""
    return "last_accessed" in age_fields(root)


# --- the rank expression over a stage ---------------------------------------------------------


@dataclass(frozen=True, slots=True)
class RankContext:
    """Where rank expressions read their inputs: the current stage and each input's column label."""

    source: Any
    labels: Mapping[RankNode, str]

    def column(self, node: RankNode) -> ColumnElement[float]:
        return self.source.c[self.labels[node]]  # type: ignore[no-any-return]


@singledispatch
def compile_rank(node: RankNode, ctx: RankContext) -> ColumnElement[float]:
    """The SQL value of `node` over the current stage; one rule per node class."""
    raise UnsupportedNode(f"no compile rule for rank node {type(node).__name__}")


@compile_rank.register(Similarity)
@compile_rank.register(TextMatch)
@compile_rank.register(Bm25)
@compile_rank.register(Score)
@compile_rank.register(AgeHours)
@compile_rank.register(Normalize)
def _(node: RankNode, ctx: RankContext) -> ColumnElement[float]:
    # Signals are computed once in the pool and each normalize in its own stage (windows
    # cannot nest); the expression just reads that column.
    return ctx.column(node)


@compile_rank.register
def _(node: Const, ctx: RankContext) -> ColumnElement[float]:
    return float_literal(node.value)


@compile_rank.register
def _(node: Sum, ctx: RankContext) -> ColumnElement[float]:
    total = compile_rank(node.children[0], ctx)
    for child in node.children[1:]:
        total = total + compile_rank(child, ctx)
    return total


@compile_rank.register
def _(node: Max, ctx: RankContext) -> ColumnElement[float]:
    return sa.func.greatest(*(compile_rank(child, ctx) for child in node.children), type_=FLOAT)


@compile_rank.register
def _(node: Product, ctx: RankContext) -> ColumnElement[float]:
    return float_literal(node.factor) * compile_rank(node.child, ctx)


@compile_rank.register
def _(node: Saturate, ctx: RankContext) -> ColumnElement[float]:
    return _curve(compile_rank(node.child, ctx), node.midpoint, node.exponent, rising=True)


@compile_rank.register
def _(node: Decay, ctx: RankContext) -> ColumnElement[float]:
    return _curve(compile_rank(node.child, ctx), node.midpoint, node.exponent, rising=False)


def _curve(x: ColumnElement[float], midpoint: float, exponent: float, rising: bool) -> ColumnElement[float]:
    """saturate `1/(1 + (m/x)^e)` or decay `1/(1 + (x/m)^e)`, x clamped at 0, in log space.

    Written with exp/ln and a clamped exponent so no input overflows float8 (`fuse.saturate`
    and `fuse.decay` are the same formulas in Python)."""
    f = float_literal
    safe_x = sa.func.greatest(x, f(1e-300), type_=FLOAT)
    ln_m, ln_x = sa.func.ln(f(midpoint), type_=FLOAT), sa.func.ln(safe_x, type_=FLOAT)
    log_ratio = f(exponent) * (ln_m - ln_x)
    clamped = sa.func.greatest(f(-EXP_LIMIT), sa.func.least(f(EXP_LIMIT), log_ratio, type_=FLOAT))
    power = sa.func.exp(clamped if rising else -clamped, type_=FLOAT)
    at_zero = 0.0 if rising else 1.0
    return sa.case((x <= 0, f(at_zero)), else_=f(1.0) / (f(1.0) + power))


# --- record signals, computed in the pool -----------------------------------------------------


@dataclass(frozen=True, slots=True)
class Reading:
    """Where the pool's signals read a record (`pool.reading` builds it from the proposal)."""

    query: Query
    keywords: Keywords | None
    row: Any
    """The record's columns: `records`, or the single list that carried them."""
    source: Any
    """What the pool selects from: the proposals, joined to their touches where read."""
    distance: ColumnElement[float] | None = None
    """The cosine distance the semantic list measured (NULL for rows it did not propose)."""
    match: ColumnElement[float] | None = None
    """The keyword match the keyword list measured (NULL for rows it did not propose)."""
    own: bool = False
    """The pool's rows are the one list that measured `distance` or `match` (`list_signal`):
    that value is the signal of every row, with no other measure to fall back on."""
    touched: ColumnElement[Any] | None = None
    """The candidate's latest touch, read for all candidates at once (`pool.touches_of`)."""

    def need_keywords(self) -> Keywords:
        if self.keywords is None:
            raise ValueError("text_match needs the query's labelled lexemes (`matches_keywords`)")
        return self.keywords


@singledispatch
def signal_column(node: Signal, read: Reading) -> ColumnElement[float]:
    """The SQL value of one record signal, read from the canonical row (missing → 0); `const`
    needs no column and compiles inline."""
    raise UnsupportedNode(f"no signal rule for {type(node).__name__}")


@signal_column.register
def _(node: Similarity, read: Reading) -> ColumnElement[float]:
    if read.own and read.distance is not None:  # `list_signal`: the same row, operator and vector
        return _similarity(read.distance)
    row = read.row
    distance = row.c.embedding.cosine_distance(read.query.vector())
    if read.distance is not None:  # measured while proposing: the same row, operator, vector
        distance = sa.func.coalesce(read.distance, distance, type_=FLOAT)
    usable = sa.and_(row.c.embedding.isnot(None), *read.query.same_model(row))
    return sa.case((usable, _similarity(distance)), else_=float_literal(0.0))


def _similarity(distance: ColumnElement[float]) -> ColumnElement[float]:
    """`1 - distance`; NaN (a zero vector) would outrank everything, so it counts as missing (0)."""
    similarity = sa.func.nullif(float_literal(1.0) - distance, float_literal(float("nan")), type_=FLOAT)
    return sa.func.coalesce(similarity, float_literal(0.0))


@signal_column.register
def _(node: TextMatch, read: Reading) -> ColumnElement[float]:
    return _keyword_signal(node, read, lambda row: text_match(read.query, read.need_keywords(), row))


@signal_column.register
def _(node: Bm25, read: Reading) -> ColumnElement[float]:
    if read.query.plan.mode not in KEYWORD_MODES:
        return float_literal(0.0)  # no query lexemes are matched: 0, like any missing signal
    return _keyword_signal(node, read, lambda row: read.need_keywords().need_bm25().score(node, row))


def _keyword_signal(node: TextMatch | Bm25, read: Reading, measure: Any) -> ColumnElement[float]:
    """A keyword signal of the row: the keyword list's own measure where the list ranked by this
    very signal (`Keywords.ranked_by`), else `measure(row)`."""
    measured = read.match if read.need_keywords().ranked_by == node else None
    if read.own and measured is not None:  # `list_signal`: the same row, expression and query
        return measured
    query, row = read.query, read.row
    if measured is None:
        return measure(row)  # type: ignore[no-any-return]
    # Measured while proposing: the same row and expression. Most rows the keyword list did not
    # propose hold no query lexeme, and their measure is 0, but computing it costs far more
    # than the match test (docs/search.md, "Keyword match of the other lists' rows").
    # An integer 0 keeps the CASE `real`, as ts_rank_cd is: a float8 would change the low bits.
    unproposed = sa.case((query.matches_query(row), measure(row)), else_=inline(0))
    return sa.func.coalesce(measured, unproposed, type_=FLOAT)


@signal_column.register
def _(node: Score, read: Reading) -> ColumnElement[float]:
    value = read.row.c.scores.op("->", return_type=JSONB)(inline(node.name))
    number = sa.func.jsonb_typeof(value) == inline("number")
    return sa.case((number, sa.cast(sa.cast(value, sa.Numeric), FLOAT)), else_=float_literal(0.0))


@signal_column.register
def _(node: AgeHours, read: Reading) -> ColumnElement[float]:
    row = read.row
    moment = row.c[node.field]
    if node.field == "last_accessed":
        queued, touched = read.query.queued_touch(row), read.touched
        if touched is None:
            moment = last_accessed(row, read.query.ws, queued)
        else:
            moment = sa.func.greatest(moment, touched, queued, type_=TS)
    seconds = sa.cast(sa.extract("epoch", read.query.now - moment), FLOAT)
    return sa.func.greatest(float_literal(0.0), seconds / float_literal(3600.0), type_=FLOAT)


def signal_columns(labels: Mapping[RankNode, str], read: Reading) -> list[ColumnElement[float]]:
    """Every labelled signal's column, as the pool selects them."""
    return [
        signal_column(node, read).label(label) for node, label in labels.items() if isinstance(node, Signal)
    ]


# --- normalize stages ------------------------------------------------------------------------


def rank_inputs(root: RankNode) -> dict[RankNode, str]:
    """A column label for every distinct signal (except const) and normalize node."""
    labels: dict[RankNode, str] = {}
    for _, node in iter_nodes(root):
        if isinstance(node, Signal | Normalize) and not isinstance(node, Const) and node not in labels:
            labels[node] = f"{'norm' if isinstance(node, Normalize) else 'sig'}_{len(labels)}"
    return labels


def _normalize_height(node: RankNode) -> int:
    """How many normalize nodes nest at or below `node` (stages needed to compute it)."""
    below = max((_normalize_height(child) for _, child in node.parts()), default=0)
    return below + (1 if isinstance(node, Normalize) else 0)


def normalize_window(x: ColumnElement[float]) -> ColumnElement[float]:
    """`(x - min) / (max - min)` over the whole pool; all ties → 0.

    Computed on halves (`(x/2 - min/2) / (max/2 - min/2)`): halving a float8 is exact, and the
    difference of two halves always fits, so any two finite values (scores of ±1e308) normalise
    where `max - min` itself would overflow."""
    half = float_literal(0.5)
    low = sa.func.min(x).over() * half
    spread = sa.func.nullif(sa.func.max(x).over() * half - low, float_literal(0.0), type_=FLOAT)
    return sa.func.coalesce((x * half - low) / spread, float_literal(0.0), type_=FLOAT)


def rank_stages(pool: Any, root: RankNode, labels: Mapping[RankNode, str]) -> Any:
    """The pool extended by one pair of stages per normalize height (raw value, then window)."""
    norms = [n for n in labels if isinstance(n, Normalize)]
    stage = pool
    for height in range(1, _normalize_height(root) + 1):
        level = [n for n in norms if _normalize_height(n) == height]
        ctx = RankContext(stage, labels)
        raw = [compile_rank(n.child, ctx).label(f"{labels[n]}_x") for n in level]
        stage = sa.select(stage, *raw).cte(f"rank_{height}_input")
        windows = [normalize_window(stage.c[f"{labels[n]}_x"]).label(labels[n]) for n in level]
        stage = sa.select(stage, *windows).cte(f"rank_{height}")
    return stage


def rank_value(stage: Any, root: RankNode, labels: Mapping[RankNode, str]) -> ColumnElement[float]:
    """The formula's value over the last stage."""
    return compile_rank(root, RankContext(stage, labels))
