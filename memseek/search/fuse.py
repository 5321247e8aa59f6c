"""Fusion and the public score: pure functions over ranked lists (no IO, no Flask).

* `public_score` — the spec's min-max display scale over a ranked pool (all ties → 1.0).
* `rrf` — weighted reciprocal rank fusion over per-source ranked lists; `rank_constant` is
  always an explicit argument (the spec's default is 60, never 1).
* `evaluate_rank` — a rank expression evaluated in Python over a pool of fetched signals. The
  combined search's `boost` uses it: boost is applied after merging, so its pool (for
  `normalize`) is the merged pool, which exists only here, not inside any one SQL statement.
* `order_hits` — the spec's tie order: value desc, occurred_at desc, ingestion order desc, id.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Callable
from collections.abc import Mapping
from collections.abc import Sequence
from dataclasses import dataclass
from dataclasses import field
from dataclasses import replace
from datetime import datetime
from functools import singledispatch
from typing import Any
from uuid import UUID

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
from memseek.catalog.rank import Similarity
from memseek.catalog.rank import Sum
from memseek.catalog.rank import TextMatch
from memseek.errors import Detail
from memseek.errors import FormulaOverflow

EXP_LIMIT = 700.0
"""Bound on the exponent of `exp` in saturate/decay: exp(±700) stays inside float8, so a
steep curve gives 0 or 1 instead of an overflow error (the SQL side uses the same bound)."""


@dataclass(frozen=True, slots=True)
class Hit:
    """One ranked record: its ordering keys plus the stored values fetched for the response."""

    id: UUID
    value: float | None
    """The internal ranking value (`rank_score`); None for structured searches."""
    occurred_at: datetime
    seq: int
    record: Mapping[str, Any] = field(default_factory=dict)
    source_ranks: Mapping[str, int] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class RankedList:
    """One search's result: its hits in rank order and the bounds of its ranked pool."""

    name: str
    weight: float
    hits: tuple[Hit, ...]
    low: float | None
    high: float | None
    candidate_count: int


def public_score(value: float, low: float, high: float) -> float:
    """The spec's display score: `(u - low) / (high - low)`, or 1 when the pool ties."""
    if high == low:
        return 1.0
    if math.isinf(high - low):  # finite bounds a float cannot span: halve all three first
        value, low, high = value / 2, low / 2, high / 2
    return (value - low) / (high - low)


def pool_bounds(values: Sequence[float]) -> tuple[float | None, float | None]:
    """Smallest and largest value of a pool (None, None when it is empty)."""
    return (min(values), max(values)) if values else (None, None)


def order_hits(hits: Sequence[Hit]) -> list[Hit]:
    """Value desc, occurred_at desc, ingestion order desc, then id ascending."""
    by_id = sorted(hits, key=lambda h: h.id)
    # A stable reverse sort keeps the ascending id order among full ties.
    return sorted(by_id, key=lambda h: (h.value or 0.0, h.occurred_at, h.seq), reverse=True)


def rrf(lists: Sequence[RankedList], rank_constant: int) -> list[Hit]:
    """Weighted RRF: `sum(weight / (rank_constant + rank))` over the lists that hold a record.

    Each merged hit carries `source_ranks` (list name → 1-based position) and the stored values
    of its first occurrence (every source reads the same canonical row). The terms are summed
    with `math.fsum`, exactly rounded, so equal sums are equal floats whatever order the lists
    hold the terms in (a running `+` could leave them an ulp apart and break a tie)."""
    first: dict[UUID, Hit] = {}
    ranks: dict[UUID, dict[str, int]] = {}
    terms: dict[UUID, list[float]] = defaultdict(list)
    for ranked in lists:
        for position, hit in enumerate(ranked.hits, start=1):
            first.setdefault(hit.id, hit)
            ranks.setdefault(hit.id, {})[ranked.name] = position
            terms[hit.id].append(ranked.weight / (rank_constant + position))
    return [replace(hit, value=math.fsum(terms[i]), source_ranks=ranks[i]) for i, hit in first.items()]


def apply_boost(hits: Sequence[Hit], boosts: Sequence[float]) -> list[Hit]:
    """`RRF(record) * max(0, boost(record))`, element-wise; a value that is not finite is a 422
    (spec: "Every value produced must be finite"), as an overflowing rank formula is."""
    values = [(hit.value or 0.0) * max(0.0, b) for hit, b in zip(hits, boosts, strict=True)]
    return [replace(hit, value=value) for hit, value in zip(hits, _finite(values), strict=True)]


def _finite(column: Column) -> Column:
    """`column`, or the 422 at `boost` when a value is not finite (a boost is the one formula
    evaluated here; in SQL an overflow fails the statement, the same 422 at `rank`)."""
    if not all(map(math.isfinite, column)):
        raise FormulaOverflow(
            "the boost formula produced a value out of range",
            [Detail(("boost",), "every value a formula produces must be finite")],
        )
    return column


def sweep_threshold(rank_constant: int, k_leading: int) -> float:
    """The weight ratio at which a source sweeps every record another source found only once."""
    return (rank_constant + k_leading) / (rank_constant + 1)


# --- rank expressions evaluated in Python --------------------------------------------------


@dataclass(frozen=True, slots=True)
class Signals:
    """The signal values of one record, as `evaluate_rank` reads them (missing → 0)."""

    similarity: float = 0.0
    text_match: float = 0.0
    bm25: float = 0.0
    scores: Mapping[str, Any] = field(default_factory=dict)
    ages: Mapping[str, float] = field(default_factory=dict)


def age_hours(moment: datetime, now: datetime) -> float:
    """Hours from `moment` to `now`; a future moment counts as 0."""
    return max(0.0, (now - moment).total_seconds() / 3600.0)


def numeric_score(scores: Mapping[str, Any], name: str) -> float | None:
    """`scores[name]` as a float, or None when it is missing or not a number."""
    value = scores.get(name)
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value)


def stored_score(scores: Mapping[str, Any], name: str) -> float:
    """`scores[name]` as a rank signal: a missing or non-numeric value reads as 0."""
    value = numeric_score(scores, name)
    return 0.0 if value is None else value


Column = list[float]


def evaluate_rank(node: RankNode, pool: Sequence[Signals]) -> Column:
    """The value of `node` for every record of `pool` (a column, because normalize needs the
    pool). Every node's values must be finite, as in SQL, where an overflow (or a normalize
    over bounds further apart than a float spans) fails the statement: here, the 422 at `boost`.
    Checking each node, not only the result, keeps a `max` or a `sum` from hiding one."""
    return _finite(node_values(node, pool))


@singledispatch
def node_values(node: RankNode, pool: Sequence[Signals]) -> Column:
    """The rule of `node`'s type (one per node type; children go through `evaluate_rank`)."""
    raise TypeError(f"no evaluation rule for rank node {type(node).__name__}")


def _per_record(read: Callable[[Signals], float]) -> Callable[[Sequence[Signals]], Column]:
    return lambda pool: [read(s) for s in pool]


@node_values.register
def _(node: Similarity, pool: Sequence[Signals]) -> Column:
    return _per_record(lambda s: s.similarity)(pool)


@node_values.register
def _(node: TextMatch, pool: Sequence[Signals]) -> Column:
    return _per_record(lambda s: s.text_match)(pool)


@node_values.register
def _(node: Bm25, pool: Sequence[Signals]) -> Column:
    return _per_record(lambda s: s.bm25)(pool)


@node_values.register
def _(node: Score, pool: Sequence[Signals]) -> Column:
    return _per_record(lambda s: stored_score(s.scores, node.name))(pool)


@node_values.register
def _(node: AgeHours, pool: Sequence[Signals]) -> Column:
    return _per_record(lambda s: s.ages.get(node.field, 0.0))(pool)


@node_values.register
def _(node: Const, pool: Sequence[Signals]) -> Column:
    return [node.value] * len(pool)


@node_values.register
def _(node: Sum, pool: Sequence[Signals]) -> Column:
    columns = [evaluate_rank(child, pool) for child in node.children]
    # Left to right, like the SQL `a + b + c`, so both sides round identically.
    return [sum(values) for values in zip(*columns, strict=True)]


@node_values.register
def _(node: Max, pool: Sequence[Signals]) -> Column:
    columns = [evaluate_rank(child, pool) for child in node.children]
    return [max(values) for values in zip(*columns, strict=True)]


@node_values.register
def _(node: Product, pool: Sequence[Signals]) -> Column:
    return [node.factor * x for x in evaluate_rank(node.child, pool)]


@node_values.register
def _(node: Normalize, pool: Sequence[Signals]) -> Column:
    return normalize(evaluate_rank(node.child, pool))


@node_values.register
def _(node: Saturate, pool: Sequence[Signals]) -> Column:
    return [saturate(x, node.midpoint, node.exponent) for x in evaluate_rank(node.child, pool)]


@node_values.register
def _(node: Decay, pool: Sequence[Signals]) -> Column:
    return [decay(x, node.midpoint, node.exponent) for x in evaluate_rank(node.child, pool)]


def normalize(column: Sequence[float]) -> Column:
    """`(x - min) / (max - min)` across the column; all ties → 0."""
    if not column:
        return []
    low, high = min(column), max(column)
    if high == low:
        return [0.0] * len(column)
    if math.isinf(high - low):  # finite bounds a float cannot span: halve them all first (exact)
        return [(x / 2 - low / 2) / (high / 2 - low / 2) for x in column]
    return [(x - low) / (high - low) for x in column]


def _log_ratio(x: float, midpoint: float, exponent: float) -> float:
    """`exponent * ln(midpoint / x)`, clamped to ±EXP_LIMIT (x > 0)."""
    return max(-EXP_LIMIT, min(EXP_LIMIT, exponent * (math.log(midpoint) - math.log(x))))


def saturate(x: float, midpoint: float, exponent: float) -> float:
    """`x^e / (x^e + m^e)` with x clamped at 0, computed as `1 / (1 + (m/x)^e)` in log space."""
    if x <= 0:
        return 0.0
    return 1.0 / (1.0 + math.exp(_log_ratio(x, midpoint, exponent)))


def decay(x: float, midpoint: float, exponent: float) -> float:
    """`1 / (1 + x^e / m^e)` with x clamped at 0, computed in log space."""
    if x <= 0:
        return 1.0
    return 1.0 / (1.0 + math.exp(-_log_ratio(x, midpoint, exponent)))
