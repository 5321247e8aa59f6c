"""How to read score, ordering and ties (spec "How to read score", "Ordering and ties"): the
public score is min–max over the ranked candidates, ties break by `occurred_at` then ingestion
order, and structured listings sort by their keys with missing values last.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.blackbox.support import ago
from tests.blackbox.support import at
from tests.blackbox.support import ids
from tests.blackbox.support import note
from tests.blackbox.support import recent
from tests.blackbox.support import search
from tests.blackbox.support import write
from tests.conftest import Client

# --- the public score -----------------------------------------------------------------------------


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


def test_score_worked_example_9_5_2_with_k_2(sx: Client) -> None:
    """ "Internal values [9, 5, 2] with k: 2 return scores [1, 3/7] — the unreturned 2 still sets the
    lower bound.\""""
    nine, five, _two = write(
        sx,
        note("9", scores={"importance": 9}),
        note("5", scores={"importance": 5}),
        note("2", scores={"importance": 2}),
    )
    body = recent(sx, rank=["score", "importance"], k=2)
    assert ids(body) == [nine, five]
    assert [hit["rank_score"] for hit in body["hits"]] == [9, 5]
    assert body["hits"][0]["score"] == 1.0
    assert body["hits"][1]["score"] == pytest.approx(3 / 7)


def test_score_pool_is_the_candidates_the_search_ranked(sx: Client) -> None:
    """Pool: "Every candidate the search ranked ... tunable with params.candidates"; recent proposes
    "Newest first": with 2 candidates the oldest record (2) is never ranked, so 5 scores 0."""
    write(
        sx,
        note("2", scores={"importance": 2}, occurred_at=ago(3)),
        note("5", scores={"importance": 5}, occurred_at=ago(2)),
        note("9", scores={"importance": 9}, occurred_at=ago(1)),
    )
    body = recent(sx, rank=["score", "importance"], k=2, params={"candidates": 2})
    assert [hit["score"] for hit in body["hits"]] == [1.0, 0.0]


def test_all_ties_score_1_and_break_by_occurred_at_then_ingestion_desc(sx: Client) -> None:
    """ "if every candidate ties, every result scores 1.0"; ties by "occurred_at descending, then by
    ingestion order descending"; "These tie-breakers affect rank but not rank_score or score.\""""
    early, late1, late2 = write(
        sx, note("e", occurred_at=at(1)), note("l1", occurred_at=at(3)), note("l2", occurred_at=at(3))
    )
    body = recent(sx, rank=["const", 1])
    assert ids(body) == [late2, late1, early]
    assert [hit["score"] for hit in body["hits"]] == [1.0, 1.0, 1.0]
    assert [hit["rank_score"] for hit in body["hits"]] == [1, 1, 1]


def test_missing_signal_is_zero(sx: Client) -> None:
    """ "Any missing signal is 0" — a record without the score is still returned, ranked with 0."""
    has, missing = write(sx, note("has", scores={"importance": 3}), note("missing"))
    body = recent(sx, rank=["score", "importance"])
    assert ids(body) == [has, missing]
    assert [hit["rank_score"] for hit in body["hits"]] == [3, 0]


def test_rank_score_may_be_negative_and_score_stays_in_0_1(sx: Client) -> None:
    """rank_score: "any finite number ... It can exceed 1 or be negative"; score = (u - low) / (high -
    low): values -1, -2, -3 give scores 1, 0.5, 0."""
    one, two, three = write(
        sx,
        note("1", scores={"importance": 1}),
        note("2", scores={"importance": 2}),
        note("3", scores={"importance": 3}),
    )
    body = recent(sx, rank=["product", -1.0, ["score", "importance"]])
    assert ids(body) == [one, two, three]
    assert [hit["rank_score"] for hit in body["hits"]] == [-1, -2, -3]
    assert [hit["score"] for hit in body["hits"]] == [1.0, 0.5, 0.0]


EITHER = ["max", [["similarity"], ["text_match"]]]
PLAN_Q = "budget plan review"
VEC = {"collections": ["sx_vec"]}
RANKED = [
    pytest.param({"mode": "vector", "q": PLAN_Q, "scope": VEC, "rank": ["similarity"]}, id="vector"),
    pytest.param({"mode": "text", "q": PLAN_Q, "scope": NOTES, "rank": ["text_match"]}, id="text"),
    pytest.param(
        {"mode": "hybrid", "q": PLAN_Q, "scope": VEC, "rank": EITHER},
        id="hybrid",
    ),
]


@pytest.mark.usefixtures("mode_corpus")
@pytest.mark.parametrize("query", RANKED)
def test_score_is_min_max_over_the_ranked_candidates_before_k(sx: Client, query: dict[str, Any]) -> None:
    """ "score = (u - low) / (high - low)" where low/high are "the smallest and largest values in the
    ranked candidate pool" — "Every candidate the search ranked, before `k` cut the response". The
    formulas read no time, so the full list (k 20) gives the pool's bounds for the cut one (k 2)."""
    whole = search(sx, query)
    values = [h["rank_score"] for h in whole["hits"]]
    assert len(values) >= 3 and values == sorted(values, reverse=True)
    low, high = values[-1], values[0]
    assert high > low
    cut = search(sx, {**query, "k": 2})
    assert ids(cut) == ids(whole)[:2]
    assert [h["rank_score"] for h in cut["hits"]] == values[:2]
    assert [h["score"] for h in cut["hits"]] == pytest.approx([1.0, (values[1] - low) / (high - low)])
    assert [h["score"] for h in whole["hits"]] == pytest.approx([(u - low) / (high - low) for u in values])
    assert whole["hits"][-1]["score"] == 0.0


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


def test_structured_order_by_fields_directions_missing_last_then_ingestion(sx: Client) -> None:
    """ "Structured mode compares each order_by field in the order you declared them, honoring each
    direction. Missing values always sort last, including in descending sorts. Remaining ties use
    ingestion order ascending, then record id.\""""
    a1, b5, a5, none, a5b, b_none = write(
        sx,
        note("a1", content={"channel": "a", "amount": 1}),
        note("b5", content={"channel": "b", "amount": 5}),
        note("a5", content={"channel": "a", "amount": 5}),
        note("none", content={}),
        note("a5b", content={"channel": "a", "amount": 5}),
        note("bnone", content={"channel": "b"}),
    )
    order = [{"field": "channel", "direction": "asc"}, {"field": "amount", "direction": "desc"}]
    body = search(sx, {"mode": "structured", "scope": NOTES, "order_by": order})
    assert ids(body) == [a5, a5b, a1, b5, b_none, none]
    order = [{"field": "channel", "direction": "desc"}, {"field": "amount"}]
    body = search(sx, {"mode": "structured", "scope": NOTES, "order_by": order})
    assert ids(body) == [b5, b_none, a1, a5, a5b, none]


def test_structured_direction_defaults_to_asc(sx: Client) -> None:
    """order_by: "direction is asc or desc (default asc)"."""
    two, one = write(sx, note(content={"count": 2}), note(content={"count": 1}))
    body = search(sx, {"mode": "structured", "scope": NOTES, "order_by": [{"field": "count"}]})
    assert ids(body) == [one, two]


def test_structured_k_cuts_the_sorted_list(sx: Client) -> None:
    """k applies to structured listings too: the first k of the full order_by."""
    write(sx, *(note(str(i), content={"count": i}) for i in (3, 1, 2)))
    body = search(
        sx,
        {"mode": "structured", "scope": NOTES, "order_by": [{"field": "count"}], "k": 2, "fields": ["count"]},
    )
    assert [hit["fields"]["count"] for hit in body["hits"]] == [1, 2]
    assert [hit["rank"] for hit in body["hits"]] == [1, 2]


@pytest.mark.parametrize(
    ("field", "values", "order"),
    [
        pytest.param("amount", [10, -2, 1.5], [1, 2, 0], id="numbers-numerically"),
        pytest.param("vip", [True, False], [1, 0], id="booleans"),
        pytest.param(
            "starts_at", ["2026-07-01T10:00:00+00:00", "2026-07-01T11:00:00+02:00"], [1, 0], id="instants"
        ),
        pytest.param("channel", ["b", {"meta": "a"}], [1, 0], id="fallback-path"),
    ],
)
def test_structured_sorts_by_typed_value(sx: Client, field: str, values: list[Any], order: list[int]) -> None:
    """Structured mode "Filter and sort exactly": values compare as their declared type (numbers
    numerically, timestamps as instants), read through fallback paths."""

    def content(value: Any) -> dict[str, Any]:
        if isinstance(value, dict):
            return {"meta": {"channel": value["meta"]}}
        return {field: value}

    written_ids = write(sx, *(note(str(i), content=content(v)) for i, v in enumerate(values)))
    body = search(sx, {"mode": "structured", "scope": NOTES, "order_by": [{"field": field}]})
    assert ids(body) == [written_ids[i] for i in order]


@pytest.mark.parametrize(
    ("direction", "expected"),
    [
        pytest.param("asc", ["no", "yes", "missing"], id="asc"),
        pytest.param("desc", ["yes", "no", "missing"], id="desc"),
    ],
)
def test_structured_sorts_booleans_with_missing_last(sx: Client, direction: str, expected: list[str]) -> None:
    """ "Structured mode compares each order_by field in the order you declared them, honoring each
    direction. Missing values always sort last, including in descending sorts.\""""
    written = write(sx, note(content={}), note(content={"vip": True}), note(content={"vip": False}))
    names = dict(zip(written, ["missing", "yes", "no"], strict=True))
    body = search(
        sx, {"mode": "structured", "scope": NOTES, "order_by": [{"field": "vip", "direction": direction}]}
    )
    assert [names[i] for i in ids(body)] == expected


def test_structured_sorts_the_extremes_of_numbers(sx: Client) -> None:
    """ "Structured mode compares each order_by field … honoring each direction": integers past 64
    bits, huge and tiny floats sort by value."""
    values = [-1e300, -(2**70), -1, 0, 5e-324, 1e-300, 2**70, 1e300]
    written = write(sx, *(note(f"v{i}", content={"amount": v}) for i, v in enumerate(reversed(values))))
    by_value = dict(zip(reversed(values), written, strict=True))
    body = search(
        sx, {"mode": "structured", "scope": NOTES, "order_by": [{"field": "amount", "direction": "desc"}]}
    )
    assert ids(body) == [by_value[v] for v in reversed(values)]
