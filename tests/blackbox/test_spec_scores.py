"""Spec "How to read score", "Ordering and ties": the public score, rank_score and tie order."""

from __future__ import annotations

import pytest

from tests.blackbox.support import at
from tests.blackbox.support import ids
from tests.blackbox.support import note
from tests.blackbox.support import search
from tests.blackbox.support import write
from tests.conftest import Client

BY_IMPORTANCE = ["score", "importance"]
NOTES = {"collections": ["sx_notes"]}


def scored(sx: Client, k: int = 20, **extra: object) -> dict[str, object]:
    return search(sx, {"mode": "recent", "scope": NOTES, "rank": BY_IMPORTANCE, "k": k, **extra})


def test_worked_example_9_5_2_with_k_2(sx: Client) -> None:
    write(sx, *(note(scores={"importance": v}) for v in (2, 9, 5)))
    body = scored(sx, k=2)
    assert [h["rank_score"] for h in body["hits"]] == [9.0, 5.0]
    assert [h["score"] for h in body["hits"]] == [1.0, pytest.approx(3 / 7)]


def test_the_last_hit_of_the_whole_pool_scores_0(sx: Client) -> None:
    write(sx, *(note(scores={"importance": v}) for v in (2, 9, 5)))
    assert [h["score"] for h in scored(sx)["hits"]] == [1.0, pytest.approx(3 / 7), 0.0]


def test_every_candidate_tying_scores_1(sx: Client) -> None:
    write(sx, *(note(scores={"importance": 4}) for _ in range(3)))
    body = scored(sx)
    assert [h["score"] for h in body["hits"]] == [1.0, 1.0, 1.0]
    assert [h["rank_score"] for h in body["hits"]] == [4.0, 4.0, 4.0]


def test_rank_score_may_be_negative_or_above_1(sx: Client) -> None:
    write(sx, note(scores={"importance": -3}), note(scores={"importance": 12.5}))
    body = scored(sx)
    assert [h["rank_score"] for h in body["hits"]] == [12.5, -3.0]
    assert [h["score"] for h in body["hits"]] == [1.0, 0.0]


def test_the_pool_is_the_candidates_not_the_returned_hits(sx: Client) -> None:
    # candidates 2 (newest first) → the pool is {5, 9}: the older 1 is never ranked
    write(
        sx,
        note(scores={"importance": 1}, occurred_at=at(1)),
        note(scores={"importance": 9}, occurred_at=at(2)),
        note(scores={"importance": 5}, occurred_at=at(3)),
    )
    body = scored(sx, k=1, params={"candidates": 2})
    assert [(h["rank_score"], h["score"]) for h in body["hits"]] == [(9.0, 1.0)]
    body = scored(sx, k=2, params={"candidates": 2})
    assert [h["score"] for h in body["hits"]] == [1.0, 0.0]


def test_ties_break_by_occurred_at_descending(sx: Client) -> None:
    early, late, middle = write(sx, note(occurred_at=at(1)), note(occurred_at=at(3)), note(occurred_at=at(2)))
    body = search(sx, {"mode": "recent", "rank": ["const", 1]})
    assert ids(body) == [late, middle, early]
    assert [h["score"] for h in body["hits"]] == [1.0, 1.0, 1.0]


def test_ties_then_break_by_ingestion_order_descending(sx: Client) -> None:
    first, second, third = write(sx, *(note(occurred_at=at(1)) for _ in range(3)))
    assert ids(search(sx, {"mode": "recent", "rank": ["const", 1]})) == [third, second, first]
    (fourth,) = write(sx, note(occurred_at=at(1)))
    assert ids(search(sx, {"mode": "recent", "rank": ["const", 1]})) == [fourth, third, second, first]


def test_value_decides_before_any_tie_breaker(sx: Client) -> None:
    high, _low = write(
        sx,
        note(scores={"importance": 2}, occurred_at=at(1)),
        note(scores={"importance": 1}, occurred_at=at(9)),
    )
    assert ids(scored(sx))[0] == high


def test_text_ties_follow_the_same_order(sx: Client) -> None:
    a, b = write(sx, note("budget", occurred_at=at(2)), note("budget", occurred_at=at(2)))
    c = write(sx, note("budget", occurred_at=at(1)))[0]
    body = search(sx, {"mode": "text", "q": "budget", "rank": ["text_match"]})
    assert ids(body) == [b, a, c]


# --- structured ordering --------------------------------------------------------------------------


def structured(sx: Client, *order: dict[str, str]) -> list[str]:
    return ids(search(sx, {"mode": "structured", "scope": NOTES, "order_by": list(order), "k": 100}))


def test_structured_keys_in_declared_order_with_directions(sx: Client) -> None:
    a, b, c, d = write(
        sx,
        note(content={"channel": "b", "amount": 1}),
        note(content={"channel": "a", "amount": 1}),
        note(content={"channel": "a", "amount": 2}),
        note(content={"channel": "b", "amount": 2}),
    )
    assert structured(sx, {"field": "amount", "direction": "desc"}, {"field": "channel"}) == [c, d, b, a]
    assert structured(
        sx, {"field": "channel", "direction": "asc"}, {"field": "amount", "direction": "desc"}
    ) == [c, b, d, a]


@pytest.mark.parametrize("direction", ["asc", "desc"])
def test_missing_values_always_sort_last(sx: Client, direction: str) -> None:
    missing, low, high = write(sx, note(), note(content={"amount": 1}), note(content={"amount": 5}))
    expected = [low, high] if direction == "asc" else [high, low]
    assert structured(sx, {"field": "amount", "direction": direction}) == [*expected, missing]


def test_structured_ties_use_ingestion_order_ascending(sx: Client) -> None:
    first, second, third = write(sx, *(note(content={"amount": 1}, occurred_at=at(day)) for day in (3, 1, 2)))
    assert structured(sx, {"field": "amount"}) == [first, second, third]
    assert structured(sx, {"field": "amount", "direction": "desc"}) == [first, second, third]


def test_structured_sorts_numbers_and_datetimes_by_value(sx: Client) -> None:
    ten, nine, minus = write(
        sx,
        note(content={"amount": 10, "starts_at": "2026-07-01T10:00:00+02:00"}),
        note(content={"amount": 9, "starts_at": "2026-07-01T09:00:00Z"}),
        note(content={"amount": -1, "starts_at": "2026-07-01T08:30:00Z"}),
    )
    assert structured(sx, {"field": "amount"}) == [minus, nine, ten]
    assert structured(sx, {"field": "starts_at"}) == [ten, minus, nine]  # 10:00+02:00 is 08:00Z
