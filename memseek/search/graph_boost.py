"""The graph boost stage: a request's `graph_boost`, graph proximity added to the ranked pool.

Runs after ranking (single search) or merging (combined searches), on the whole ranked pool —
before the final `k` cut, so a record just below the cut can be lifted into it and the public
score is rescaled over the boosted pool. `boost_by_graph` walks from the anchor (IO: one
statement in the workspace's transaction, `memseek.search.graph.proximity`); the rest is pure
arithmetic over the pool and the measured distances (`apply_graph_boost`).

A result matches when its key or its entity is a reached node (the nearer one counts) and gets
`boosted = previous + weight / (distance + 1)`. Scored pools are then re-sorted with the spec's
tie order. A structured pool has no values: proximity reorders it (largest boost first) and the
`order_by` order decides among equal boosts, so results keep `score: null` and no `rank_score`.
"""

from __future__ import annotations

from collections.abc import Mapping
from collections.abc import Sequence
from dataclasses import dataclass
from dataclasses import replace
from typing import Any
from uuid import UUID

from sqlalchemy.engine import Engine

from memseek.search.fuse import Hit
from memseek.search.fuse import order_hits
from memseek.search.graph import Proximity
from memseek.search.graph import graph_transaction
from memseek.search.graph import proximity
from memseek.search.request import GraphBoost
from memseek.search.resolve import RequestPlan


@dataclass(frozen=True, slots=True)
class Boosted:
    """The re-ordered pool and the diagnostics object `POST /search` reports as `graph_boost`."""

    hits: list[Hit]
    diagnostics: dict[str, Any]


def boost_by_graph(
    engine: Engine, workspace_id: UUID, plan: RequestPlan, pool: Sequence[Hit], label: str
) -> Boosted | None:
    """`pool` (in rank order) boosted by proximity to the request's anchor, or None when the
    request asks for no graph boost."""
    boost, view = plan.graph_boost, plan.graph_view
    if boost is None or view is None or view.graph is None:
        return None
    with graph_transaction(engine, workspace_id) as conn:
        near = proximity(conn, workspace_id, view.graph, boost.anchor, boost.depth, boost.limit, label)
    structured = not plan.combined and plan.searches[0].mode == "structured"
    return apply_graph_boost(pool, near, boost, structured=structured)


def distance_of(hit: Hit, distances: Mapping[str, int]) -> int | None:
    """The nearer of the hit's key and entity among the reached nodes, or None."""
    found = [distances[name] for name in (hit.record["key"], hit.record["entity"]) if name in distances]
    return min(found) if found else None


def bonus(weight: float, distance: int | None) -> float:
    """`weight / (distance + 1)`, or 0 for an unmatched result."""
    return 0.0 if distance is None else weight / (distance + 1)


def apply_graph_boost(
    pool: Sequence[Hit], near: Proximity, boost: GraphBoost, *, structured: bool
) -> Boosted:
    """Add each hit's proximity bonus and re-order the pool (see the module docstring).

    Every hit's `record` must hold `key` and `entity`. `pool` is in rank order."""
    bonuses = [bonus(boost.weight, distance_of(hit, near.distances)) for hit in pool]
    if structured:
        order = sorted(range(len(pool)), key=lambda i: -bonuses[i])  # stable: order_by breaks ties
        hits = [pool[i] for i in order]
    else:
        hits = order_hits(
            [replace(hit, value=(hit.value or 0.0) + b) for hit, b in zip(pool, bonuses, strict=True)]
        )
    diagnostics = {
        "anchor": boost.anchor,
        "depth": boost.depth,
        "weight": boost.weight,
        "matched_records": sum(1 for b in bonuses if b > 0),
        "edge_count": near.edge_count,
    }
    return Boosted(hits, diagnostics)
