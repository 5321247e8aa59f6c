"""Fusion and the public score: the spec's worked numbers as plain unit tests (no database)."""

from __future__ import annotations

import uuid
from datetime import UTC
from datetime import datetime
from datetime import timedelta

import pytest

from memseek.catalog.rank import OPERATORS
from memseek.catalog.rank import parse_rank
from memseek.errors import RequestInvalid
from memseek.search import fuse
from memseek.search.fuse import Hit
from memseek.search.fuse import RankedList

T0 = datetime(2026, 7, 1, tzinfo=UTC)


def hit(value: float | None = None, hours: float = 0, seq: int = 0, hid: int = 0) -> Hit:
    return Hit(uuid.UUID(int=hid), value, T0 - timedelta(hours=hours), seq)


def ranked(name: str, weight: float, *ids: int) -> RankedList:
    return RankedList(name, weight, tuple(hit(hid=i) for i in ids), None, None, len(ids))


@pytest.mark.parametrize(
    ("pool", "k", "expected"),
    [
        pytest.param([9, 5, 2], 2, [1.0, 3 / 7], id="spec-9-5-2-k2"),
        pytest.param([4, 4, 4], 3, [1.0, 1.0, 1.0], id="all-tie-is-1"),
        pytest.param([-1, -3], 2, [1.0, 0.0], id="negative-values"),
    ],
)
def test_public_score(pool: list[float], k: int, expected: list[float]) -> None:
    low, high = fuse.pool_bounds(pool)
    assert low is not None and high is not None
    assert [fuse.public_score(v, low, high) for v in pool[:k]] == pytest.approx(expected)


def test_rrf_worked_example() -> None:
    events = ranked("events", 1.0, 1, 2, 3, 4)
    reflections = ranked("reflections", 1.1, 5, 6, 7, 1)
    merged = {h.id.int: h for h in fuse.rrf([events, reflections], rank_constant=60)}
    assert merged[1].value == pytest.approx(1.0 / (60 + 1) + 1.1 / (60 + 4))
    assert round(merged[1].value or 0, 6) == 0.033581
    assert dict(merged[1].source_ranks) == {"events": 1, "reflections": 4}
    assert round(merged[2].value or 0, 6) == 0.016129  # 1.0/62, found by events alone
    assert round(merged[5].value or 0, 6) == 0.018033  # 1.1/61, 1st by reflections alone
    assert dict(merged[5].source_ranks) == {"reflections": 1}


def test_equal_rrf_sums_are_equal_floats_whatever_the_order_of_their_terms() -> None:
    """A Latin square: every record holds ranks 1-4 once, so every sum is 1/3+1/4+1/5+1/6 and
    the pool ties (spec: "if every candidate ties, every result scores 1.0"). A running `+` in
    list order leaves record 1 at 0.9499999999999998 and the others at 0.95."""
    rows = [(1, 2, 3, 4), (2, 3, 4, 1), (3, 4, 1, 2), (4, 1, 2, 3)]
    lists = [ranked(f"s{i}", 1.0, *row) for i, row in enumerate(rows)]
    values = {h.value for h in fuse.rrf(lists, rank_constant=2)}
    assert len(values) == 1 and values.pop() == pytest.approx(19 / 20, abs=1e-15)


@pytest.mark.parametrize(
    ("constant", "values"),
    [
        pytest.param(10, (0.0909, 0.0500, 0.0250), id="constant-10"),
        pytest.param(60, (0.0164, 0.0143, 0.0111), id="constant-60"),
        pytest.param(200, (0.00498, 0.00476, 0.00435), id="constant-200"),
    ],
)
def test_rank_constant_table(constant: int, values: tuple[float, float, float]) -> None:
    one = ranked("a", 1.0, *range(1, 31))
    merged = {h.id.int: h.value for h in fuse.rrf([one], constant)}
    assert (merged[1], merged[10], merged[30]) == pytest.approx(values, rel=2e-3)


def test_sweep_threshold() -> None:
    threshold = fuse.sweep_threshold(60, 15)
    assert threshold == (60 + 15) / (60 + 1) and round(threshold, 2) == 1.23
    assert 1.3 / (60 + 15) > 1.0 / (60 + 1) and threshold < 1.3  # the worst of 15 beats the best event
    assert 1.1 / (60 + 15) < 1.0 / (60 + 1) and threshold > 1.1


def test_weights_are_relative() -> None:
    def order(w1: float, w2: float) -> list[int]:
        merged = fuse.rrf([ranked("a", w1, 1, 2, 3), ranked("b", w2, 3, 4, 5)], 60)
        return [h.id.int for h in fuse.order_hits(merged)]

    assert order(1.0, 2.0) == order(10.0, 20.0) == order(0.5, 1.0)


def test_boost_multiplies_and_clamps() -> None:
    boosted = fuse.apply_boost([hit(0.5), hit(0.5), hit(0.5)], [2.0, -1.0, 0.0])
    assert [h.value for h in boosted] == [1.0, 0.0, 0.0]


def test_tie_order() -> None:
    hits = [
        hit(1.0, hours=1, seq=9, hid=1),
        hit(1.0, seq=1, hid=3),
        hit(1.0, seq=1, hid=2),
        hit(1.0, seq=5, hid=4),
        hit(2.0, hours=9, hid=5),
    ]
    assert [h.id.int for h in fuse.order_hits(hits)] == [5, 4, 2, 3, 1]


# --- rank expressions in Python ------------------------------------------------------------------


def values(tree: list[object], pool: list[fuse.Signals]) -> list[float]:
    return fuse.evaluate_rank(parse_rank(tree), pool)


@pytest.mark.parametrize(
    ("tree", "x", "expected"),
    [
        pytest.param(["saturate", ["score", "s"], {"midpoint": 5, "exponent": 2}], 5, 0.5, id="saturate-mid"),
        pytest.param(["decay", ["score", "s"], {"midpoint": 24, "exponent": 1}], 24, 0.5, id="decay-mid"),
        pytest.param(["saturate", ["score", "s"], {"midpoint": 5, "exponent": 1}], 0, 0.0, id="saturate-0"),
        pytest.param(["decay", ["score", "s"], {"midpoint": 5, "exponent": 1}], -3, 1.0, id="decay-clamped"),
        pytest.param(["saturate", ["score", "s"], {"midpoint": 1, "exponent": 500}], 10, 1.0, id="steep"),
        pytest.param(["product", -2, ["score", "s"]], 3, -6.0, id="product"),
    ],
)
def test_curves(tree: list[object], x: float, expected: float) -> None:
    assert values(tree, [fuse.Signals(scores={"s": x})]) == [pytest.approx(expected)]


def test_normalize_and_ties() -> None:
    pool = [fuse.Signals(scores={"s": v}) for v in (1, 3, 5)]
    assert values(["normalize", ["score", "s"]], pool) == [0.0, 0.5, 1.0]
    assert values(["normalize", ["const", 4]], pool) == [0.0, 0.0, 0.0]


def test_missing_signals_are_zero() -> None:
    pool = [fuse.Signals(scores={"s": True}), fuse.Signals()]
    assert values(
        ["sum", [["score", "s"], ["similarity"], ["text_match"], ["age_hours", "created_at"]]], pool
    ) == [0.0, 0.0]


@pytest.mark.parametrize(
    "tree",
    [
        pytest.param(["max", [["const", 1], ["product", -10, ["const", 1e308]]]], id="hidden-by-max"),
        pytest.param(
            ["sum", [["product", 10, ["const", 1e308]], ["product", -10, ["const", 1e308]]]],
            id="inf-minus-inf",
        ),
    ],
)
def test_a_value_that_is_not_finite_anywhere_in_the_tree_is_refused(tree: list[object]) -> None:
    """Spec: "Every value produced must be finite" — at every node, as in SQL, where an
    overflow fails the statement; a `max` or a `sum` must not hide it."""
    pool = [fuse.Signals(scores={"s": v}) for v in (-1e308, 1e308)]
    with pytest.raises(RequestInvalid) as caught:
        values(tree, pool)
    assert [d.loc for d in caught.value.details] == [("boost",)]


def test_normalize_spans_any_two_finite_values() -> None:
    """Issue 45: stored scores of ±1e308 are finite, so normalising them must not overflow
    (`max - min` would): the range is taken on halves, as the SQL does."""
    pool = [fuse.Signals(scores={"s": v}) for v in (-1e308, 0.0, 1e308)]
    assert values(["normalize", ["score", "s"]], pool) == [0.0, 0.5, 1.0]


def test_every_operator_has_an_evaluation_rule() -> None:
    registered = set(fuse.node_values.registry)
    assert set(OPERATORS.values()) <= registered
