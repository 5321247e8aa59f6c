"""The graph boost stage's arithmetic (pure): bonuses, matching, re-ordering, diagnostics."""

from __future__ import annotations

from datetime import UTC
from datetime import datetime
from uuid import UUID

import pytest

from memseek.search.fuse import Hit
from memseek.search.graph import Path
from memseek.search.graph import Proximity
from memseek.search.graph import measure
from memseek.search.graph_boost import apply_graph_boost
from memseek.search.graph_boost import bonus
from memseek.search.graph_boost import distance_of
from memseek.search.request import GraphBoost

MOMENT = datetime(2026, 7, 1, tzinfo=UTC)
DISTANCES = {"people/maya": 0, "companies/acme": 1, "companies/beta": 2}


def hit(n: int, value: float | None, key: str | None = None, entity: str = "other", **kw: object) -> Hit:
    values = {"occurred_at": MOMENT, "seq": n, **kw}
    return Hit(UUID(int=n), value, record={"key": key, "entity": entity}, **values)  # type: ignore[arg-type]


def ids(hits: list[Hit]) -> list[int]:
    return [h.id.int for h in hits]


@pytest.mark.parametrize(
    ("distance", "expected"),
    [
        pytest.param(0, 0.05, id="anchor-full-weight"),
        pytest.param(1, 0.025, id="one-link-half"),
        pytest.param(2, 0.05 / 3, id="two-links-third"),
        pytest.param(None, 0.0, id="unmatched-untouched"),
    ],
)
def test_bonus_is_weight_over_distance_plus_one(distance: int | None, expected: float) -> None:
    assert bonus(0.05, distance) == pytest.approx(expected)


@pytest.mark.parametrize(
    ("key", "entity", "expected"),
    [
        pytest.param("companies/beta", "other", 2, id="key"),
        pytest.param(None, "companies/acme", 1, id="entity"),
        pytest.param("companies/beta", "people/maya", 0, id="nearer-of-both"),
        pytest.param("nowhere", "nobody", None, id="neither"),
    ],
)
def test_a_result_matches_on_its_key_or_its_entity(
    key: str | None, entity: str, expected: int | None
) -> None:
    assert distance_of(hit(1, 1.0, key, entity), DISTANCES) == expected


def test_scored_pool_is_boosted_and_resorted() -> None:
    pool = [hit(1, 1.0), hit(2, 0.99), hit(3, 0.9, entity="people/maya")]
    boost = GraphBoost(anchor="people/maya", weight=0.2)
    out = apply_graph_boost(pool, Proximity(DISTANCES, edge_count=4), boost, structured=False)
    assert ids(out.hits) == [3, 1, 2]
    assert [h.value for h in out.hits] == pytest.approx([1.1, 1.0, 0.99])
    assert out.diagnostics == {
        "anchor": "people/maya", "depth": 2, "weight": 0.2, "matched_records": 1, "edge_count": 4,
    }  # fmt: skip


def test_ties_after_the_boost_follow_the_spec_order() -> None:
    later = datetime(2026, 7, 2, tzinfo=UTC)
    pool = [hit(1, 1.0), hit(2, 0.95, entity="companies/acme", occurred_at=later)]
    out = apply_graph_boost(
        pool, Proximity(DISTANCES, 1), GraphBoost(anchor="x", weight=0.1), structured=False
    )
    assert [h.value for h in out.hits] == pytest.approx([1.0, 1.0])
    assert ids(out.hits) == [2, 1]  # equal values: the later occurred_at first


def test_structured_pool_is_reordered_by_proximity_and_keeps_no_values() -> None:
    pool = [
        hit(1, None),
        hit(2, None, entity="companies/beta"),
        hit(3, None),
        hit(4, None, key="people/maya"),
    ]
    out = apply_graph_boost(pool, Proximity(DISTANCES, 2), GraphBoost(anchor="people/maya"), structured=True)
    assert ids(out.hits) == [4, 2, 1, 3]  # nearest first; unmatched keep their order_by order
    assert all(h.value is None for h in out.hits)
    assert out.diagnostics["matched_records"] == 2


def test_measure_keeps_the_shortest_distance_and_counts_links_once() -> None:
    a, b, c = UUID(int=1), UUID(int=2), UUID(int=3)
    paths = [
        Path(("x", "y"), (a,)),
        Path(("x", "z"), (b,)),
        Path(("x", "y", "z"), (a, c)),
    ]
    measured = measure("x", paths)
    assert measured.distances == {"x": 0, "y": 1, "z": 1}
    assert measured.edge_count == 3


def test_an_anchor_without_links_is_still_at_distance_zero() -> None:
    assert measure("lonely", []) == Proximity({"lonely": 0}, 0)
