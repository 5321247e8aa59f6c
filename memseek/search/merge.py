"""Ranking across a request's searches (pure; no IO).

A single search's hits stay as its statement ordered and cut them, with the bounds of the pool
the statement ranked. A combined search's lists are merged by weighted reciprocal rank fusion
(`fuse.rrf`), then its `boost` is evaluated in Python (`fuse.evaluate_rank`) over the stored
values each source statement returned: boost is defined over the merged pool, which no single
statement sees. Ages are measured from the request's one `now`, the same instant the SQL used.
"""

from __future__ import annotations

from collections.abc import Mapping
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any
from typing import get_args

from memseek.catalog.rank import AgeField
from memseek.search import fuse
from memseek.search.execute import SearchResult
from memseek.search.fuse import Hit
from memseek.search.fuse import RankedList
from memseek.search.resolve import RequestPlan


@dataclass(frozen=True, slots=True)
class Ranked:
    """An order of hits and the bounds of the pool the public score is scaled over."""

    hits: tuple[Hit, ...]
    low: float | None
    high: float | None


def rank(plan: RequestPlan, results: Sequence[SearchResult], now: datetime) -> Ranked:
    """A single search's hits as the statement ordered and cut them; combined searches merged
    (the whole merged pool, in order: the request's `k` cuts it later, `cut`)."""
    if not plan.combined:
        (result,) = results
        return Ranked(result.hits, result.low, result.high)
    lists = [
        RankedList(s.source or "", s.weight, r.hits, r.low, r.high, r.candidate_count)
        for s, r in zip(plan.searches, results, strict=True)
    ]
    merged = fuse.rrf(lists, plan.rank_constant)
    if plan.boost is not None:
        signals = [record_signals(hit.record, now) for hit in merged]
        merged = fuse.apply_boost(merged, fuse.evaluate_rank(plan.boost, signals))
    return Ranked(tuple(fuse.order_hits(merged)), None, None)


def cut(ordered: Sequence[Hit], k: int) -> Ranked:
    """The top `k` of a whole ordered pool, with the pool's bounds."""
    low, high = fuse.pool_bounds([hit.value or 0.0 for hit in ordered])
    return Ranked(tuple(ordered[:k]), low, high)


def record_signals(record: Mapping[str, Any], now: datetime) -> fuse.Signals:
    """The query-independent signals of a fetched record (what a boost may read)."""
    ages = {name: fuse.age_hours(record[name], now) for name in get_args(AgeField)}
    return fuse.Signals(scores=record["scores"], ages=ages)
