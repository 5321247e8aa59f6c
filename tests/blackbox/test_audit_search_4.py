"""A fourth adversarial audit of search semantics against views-and-search.md: boundary values,
type confusion (booleans, digit strings, integers past 64 bits), timestamps with odd offsets and
fractions on the strict bounds, ties across merged pools and boosts, and where errors point.

Every test quotes the spec sentence it relies on (docs/search.md, "Readings of the spec", for
the readings taken where the spec is silent).
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.blackbox.fusion_support import source
from tests.blackbox.support import at
from tests.blackbox.support import ids
from tests.blackbox.support import note
from tests.blackbox.support import rejects
from tests.blackbox.support import search
from tests.blackbox.support import write
from tests.conftest import Client

# --- timestamps -----------------------------------------------------------------------------------


NOTES = {"collections": ["sx_notes"]}


def recent_body(**extra: Any) -> dict[str, Any]:
    """A recent-mode search over sx_notes."""
    return {"mode": "recent", "scope": NOTES, **extra}


@pytest.mark.parametrize("bound", ["occurred_after", "occurred_before"])
def test_a_digit_string_is_not_a_time_bound(sx: Client, bound: str) -> None:
    """ "occurred_after: "2026-01-01T00:00:00Z" # time bounds, timezone required" and "Time bounds
    must include a timezone": a string of digits is no ISO timestamp and names no timezone."""
    rejects(sx, recent_body(scope={bound: "1767225600"}), "scope", bound)


def test_a_digit_string_is_not_a_timestamp_filter(sx: Client) -> None:
    """ "`gt`, `gte`, `lt`, `lte` — numbers and timestamps" and "Conditions are type-checked against
    the declared field": "1767225600" is a string, neither a number nor a timestamp with a zone."""
    rejects(sx, recent_body(where={"starts_at": {"gt": "1767225600"}}), "where", "starts_at", "gt")


AT_TEN = {"occurred_at": "2026-07-01T10:00:00Z"}
STARTS = {"content": {"starts_at": "2026-07-01T10:00:00.000001Z"}}


def bounded(after: str | None = None, before: str | None = None, **starts_at: str) -> dict[str, Any]:
    """A recent search with strict time bounds and conditions `starts_at` on starts_at."""
    scope = {"occurred_after": after, "occurred_before": before}
    where = {"starts_at": starts_at} if starts_at else {}
    return recent_body(scope={**NOTES, **{key: value for key, value in scope.items() if value}}, where=where)


@pytest.mark.parametrize(
    ("record", "query", "found"),
    [
        pytest.param(AT_TEN, bounded(after="2026-07-01T15:30:00+05:30"), False, id="after-east"),
        pytest.param(AT_TEN, bounded(before="2026-07-01T06:00:00-04:00"), False, id="before-west"),
        pytest.param(AT_TEN, bounded(after="2026-07-01T15:29:59.999999+05:30"), True, id="after-1us"),
        pytest.param(AT_TEN, bounded(before="2026-07-01T10:00:00.000001Z"), True, id="before-1us"),
        pytest.param(AT_TEN, bounded(after="2026-07-02T00:00:00+14:00"), False, id="after-plus-14"),
        pytest.param(AT_TEN, bounded(before="2026-06-30T22:00:00-12:00"), False, id="before-minus-12"),
        pytest.param(STARTS, bounded(gt="2026-07-01T12:00:00.000001+02:00"), False, id="gt-same-instant"),
        pytest.param(STARTS, bounded(gte="2026-07-01T12:00:00.000001+02:00"), True, id="gte-same-instant"),
        pytest.param(STARTS, bounded(lt="2026-07-01T05:00:00.000001-05:00"), False, id="lt-same-instant"),
        pytest.param(STARTS, bounded(lte="2026-07-01T05:00:00.000001-05:00"), True, id="lte-same-instant"),
        pytest.param(STARTS, bounded(gt="2026-07-01T10:00:00Z"), True, id="gt-1us-earlier"),
        pytest.param(STARTS, bounded(lt="2026-07-01T10:00:00.000002Z"), True, id="lt-1us-later"),
    ],
)
def test_time_bounds_compare_instants_across_offsets(
    sx: Client, record: dict[str, Any], query: dict[str, Any], found: bool
) -> None:
    """ "Both comparisons are strict: a record sitting exactly on a bound is excluded" (scope) and
    "`gt`, `gte`, `lt`, `lte` | greater/less than (or equal) | numbers and timestamps" (where): a
    bound written in another offset, to the microsecond, is the same instant."""
    (written,) = write(sx, note(**record))
    assert ids(search(sx, query)) == ([written] if found else [])


def test_a_fractional_second_on_the_record_counts(sx: Client) -> None:
    """ "Both comparisons are strict": a record one microsecond after the bound is not on it."""
    (record,) = write(sx, note(occurred_at="2026-07-01T10:00:00.000001Z"))
    assert ids(search(sx, recent_body(scope={"occurred_after": "2026-07-01T12:00:00+02:00"}))) == [record]
    assert ids(search(sx, recent_body(scope={"occurred_before": "2026-07-01T10:00:00.000001+00:00"}))) == []


def test_after_equal_to_before_in_other_offsets_is_422(sx: Client) -> None:
    """ "occurred_after must be earlier than occurred_before": the same instant written in two
    offsets is not earlier."""
    scope = {"occurred_after": "2026-07-01T12:00:00+02:00", "occurred_before": "2026-07-01T10:00:00Z"}
    rejects(sx, recent_body(scope=scope))


# --- numbers: booleans, digit strings, integers past 64 bits --------------------------------------


HUGE = 10**400
"""An integer no float holds: JSON allows it, so it must be answered as a value, never a 500."""
IMP = ["score", "importance"]
PAST_64_BITS = 2**70


def boosted(**values: Any) -> dict[str, Any]:
    """A recent search with a graph boost of anchor "a" and `values`."""
    return recent_body(graph_boost={"anchor": "a", **values})


def judged(top_n: Any) -> dict[str, Any]:
    """A text search reranked by the judge with `top_n`."""
    return {"q": "x", "mode": "text", "rerank": {"backend": "llm_judge", "top_n": top_n}}


@pytest.mark.parametrize(
    ("body", "loc"),
    [
        pytest.param(recent_body(k=True), ("k",), id="k-true"),
        pytest.param(recent_body(k="5"), ("k",), id="k-digits"),
        pytest.param(recent_body(k=PAST_64_BITS), ("k",), id="k-past-64-bits"),
        pytest.param(
            recent_body(params={"candidates": True}), ("params", "candidates"), id="candidates-true"
        ),
        pytest.param(
            recent_body(params={"candidates": "100"}), ("params", "candidates"), id="candidates-digits"
        ),
        pytest.param(
            recent_body(params={"candidates": HUGE}), ("params", "candidates"), id="candidates-huge"
        ),
        pytest.param(recent_body(scope={"depth_lte": True}), ("scope", "depth_lte"), id="depth-lte-true"),
        pytest.param(recent_body(scope={"depth_lte": "2"}), ("scope", "depth_lte"), id="depth-lte-digits"),
        pytest.param(
            recent_body(scope={"collections": ["sx_notes"], "collection_versions": {"sx_notes": [True]}}),
            ("scope", "collection_versions", "sx_notes", 0),
            id="collection-version-true",
        ),
        pytest.param(recent_body(rank=["const", HUGE]), ("rank",), id="const-huge"),
        pytest.param(recent_body(rank=["product", HUGE, IMP]), ("rank",), id="factor-huge"),
        pytest.param(
            recent_body(rank=["decay", IMP, {"midpoint": HUGE, "exponent": 1}]), ("rank",), id="midpoint-huge"
        ),
        pytest.param(
            recent_body(rank=["saturate", IMP, {"midpoint": 1, "exponent": True}]),
            ("rank",),
            id="exponent-true",
        ),
        pytest.param(
            recent_body(rank=["decay", IMP, {"midpoint": "5", "exponent": 1}]),
            ("rank",),
            id="midpoint-digits",
        ),
        pytest.param(recent_body(rank=["product", True, IMP]), ("rank",), id="factor-true"),
        pytest.param(boosted(weight=True), ("graph_boost", "weight"), id="boost-weight-true"),
        pytest.param(boosted(weight=HUGE), ("graph_boost", "weight"), id="boost-weight-huge"),
        pytest.param(boosted(depth=True), ("graph_boost", "depth"), id="boost-depth-true"),
        pytest.param(boosted(limit=PAST_64_BITS), ("graph_boost", "limit"), id="boost-limit-past-64-bits"),
        pytest.param(judged(True), ("rerank", "top_n"), id="top-n-true"),
        pytest.param(judged(HUGE), ("rerank", "top_n"), id="top-n-huge"),
    ],
)
def test_numbers_are_numbers_in_range(sx: Client, body: dict[str, Any], loc: tuple[Any, ...]) -> None:
    """ "k (default 20, between 1 and 100)", "params.candidates (1–1000 …)", "depth_lte", "top_n is
    1–20", "weight: … above 0 and at most 1", "Every value produced must be finite" and "both
    options are required and must be positive": a boolean, a string of digits or an integer no
    float holds is a 422 at its own key, never a 500."""
    err = rejects(sx, body)
    assert any(detail["loc"][: len(loc)] == list(loc) for detail in err["details"]), err["details"]


RRF_60 = {"kind": "rrf", "rank_constant": 60}


def fused(*sources: dict[str, Any], **extra: Any) -> dict[str, Any]:
    """A combined search of `sources` fused with the default RRF constant."""
    return {"sources": list(sources), "fuse": RRF_60, **extra}


@pytest.mark.parametrize(
    ("change", "loc"),
    [
        pytest.param({"weight": True}, ("sources", 0, "weight"), id="weight-true"),
        pytest.param({"weight": "1"}, ("sources", 0, "weight"), id="weight-digits"),
        pytest.param({"weight": HUGE}, ("sources", 0, "weight"), id="weight-huge"),
        pytest.param({"weight": -HUGE}, ("sources", 0, "weight"), id="weight-huge-negative"),
        pytest.param({"k": True}, ("sources", 0, "k"), id="k-true"),
        pytest.param({"k": PAST_64_BITS}, ("sources", 0, "k"), id="k-past-64-bits"),
    ],
)
def test_source_numbers_are_numbers_in_range(
    sx: Client, change: dict[str, Any], loc: tuple[Any, ...]
) -> None:
    """ "plus a weight (default 1.0) …" "The accepted range is greater than 0 and at most 100" and
    "k (1–100)": each refused at the source's own key."""
    rejects(sx, fused({**source("a", "importance"), **change}), *loc)


@pytest.mark.parametrize(
    "fuse",
    [
        pytest.param({"kind": "rrf", "rank_constant": True}, id="true"),
        pytest.param({"kind": "rrf", "rank_constant": "60"}, id="digits"),
        pytest.param({"kind": "rrf", "rank_constant": PAST_64_BITS}, id="past-64-bits"),
        pytest.param({"kind": "rrf", "rank_constant": -1}, id="negative"),
    ],
)
def test_rank_constant_is_an_integer_1_to_1000(sx: Client, fuse: dict[str, Any]) -> None:
    """ "rank_constant defaults to 60 and must be 1–1000"."""
    rejects(sx, {**fused(source("a", "importance")), "fuse": fuse}, "fuse", "rank_constant")


@pytest.mark.parametrize(
    ("where", "loc"),
    [
        pytest.param({"amount": {"eq": True}}, ("where", "amount", "eq"), id="number-eq-true"),
        pytest.param({"amount": {"gt": True}}, ("where", "amount", "gt"), id="number-gt-true"),
        pytest.param({"count": {"in": [True, 1]}}, ("where", "count", "in"), id="integer-in-true"),
        pytest.param({"amount": {"eq": "10"}}, ("where", "amount", "eq"), id="number-eq-digits"),
        pytest.param({"count": {"gte": "1"}}, ("where", "count", "gte"), id="integer-gte-digits"),
        pytest.param({"channel": {"eq": 5}}, ("where", "channel", "eq"), id="string-eq-number"),
        pytest.param({"channel": {"in": ["a", 5]}}, ("where", "channel", "in"), id="string-in-number"),
        pytest.param(
            {"tags": {"contains_any": [5]}}, ("where", "tags", "contains_any"), id="contains-number"
        ),
        pytest.param({"vip": {"in": ["true"]}}, ("where", "vip", "in"), id="boolean-in-string"),
        pytest.param({"starts_at": {"eq": 5}}, ("where", "starts_at", "eq"), id="timestamp-eq-number"),
        pytest.param({"amount": {"exists": 1}}, ("where", "amount", "exists"), id="exists-one"),
    ],
)
def test_conditions_are_type_checked_against_the_field(
    sx: Client, where: dict[str, Any], loc: tuple[str, ...]
) -> None:
    """ "Conditions are type-checked against the declared field": booleans are not numbers, digit
    strings are not numbers, numbers are not strings."""
    err = rejects(sx, recent_body(where=where))
    assert any(detail["loc"][: len(loc)] == list(loc) for detail in err["details"]), err["details"]


@pytest.mark.parametrize(
    ("where", "expected"),
    [
        pytest.param({"count": {"eq": PAST_64_BITS}}, set(), id="integer-eq-past-64-bits"),
        pytest.param({"count": {"in": [PAST_64_BITS, 3]}}, {"three"}, id="integer-in-past-64-bits"),
        pytest.param({"count": {"lt": -PAST_64_BITS}}, set(), id="integer-lt-minus-past-64-bits"),
        pytest.param({"amount": {"eq": 10**30}}, set(), id="number-eq-1e30"),
        pytest.param({"amount": {"lte": 10**30}}, {"three", "big"}, id="number-lte-1e30"),
        pytest.param({"amount": {"eq": 2.5}}, {"three"}, id="number-eq-fraction"),
        pytest.param({"amount": {"gt": 2.5, "lte": 1e300}}, {"big"}, id="number-range-1e300"),
        pytest.param({"amount": {"eq": 1e-300}}, set(), id="number-eq-tiny"),
    ],
)
def test_number_filters_past_float_and_64_bits(sx: Client, where: dict[str, Any], expected: set[str]) -> None:
    """ "any single value" / "is one of the listed values" / "greater/less than (or equal)": a value
    no stored number equals simply matches nothing, however large."""
    three, big = write(
        sx,
        note("three", content={"count": 3, "amount": 2.5}),
        note("big", content={"count": 4, "amount": 1e20}),
    )
    names = {three: "three", big: "big"}
    assert {names[i] for i in ids(search(sx, recent_body(where=where)))} == expected


def test_an_in_list_may_repeat_a_value(sx: Client) -> None:
    """ "Value lists (in, contains_any, contains_all) must be non-empty and hold at most 100
    entries" — uniqueness is not required of them (it is of scope lists)."""
    (record,) = write(sx, note(content={"channel": "email", "tags": ["vip"]}))
    where = {"channel": {"in": ["email", "email"]}, "tags": {"contains_all": ["vip", "vip"]}}
    assert ids(search(sx, recent_body(where=where))) == [record]


# --- candidates and k at their bounds -------------------------------------------------------------


def test_one_candidate_means_at_most_one_result(sx: Client) -> None:
    """ "params.candidates (1–1000 …) — how many records the search engine proposes before
    ranking": with 1 proposed, k: 20 returns at most one, which scores 1."""
    write(sx, *(note(f"n{i}", occurred_at=at(i + 1)) for i in range(3)))
    body = search(sx, recent_body(k=20, params={"candidates": 1}))
    assert len(body["hits"]) == 1
    assert body["hits"][0]["score"] == 1.0


def test_k_1_and_100_with_1000_candidates(sx: Client) -> None:
    """ "k (default 20, between 1 and 100)" and "params.candidates (1–1000 …)": both bounds are
    inclusive."""
    first, second = write(sx, note("a", occurred_at=at(2)), note("b", occurred_at=at(1)))
    assert ids(search(sx, recent_body(k=1, params={"candidates": 1000}))) == [first]
    assert ids(search(sx, recent_body(k=100, params={"candidates": 1000}))) == [first, second]


# --- rank expressions at extreme values -----------------------------------------------------------


def ranked(client: Client, rank: Any) -> list[float]:
    """The rank_score of each hit of a recent search ranked by `rank`."""
    return [hit["rank_score"] for hit in search(client, recent_body(rank=rank))["hits"]]


def test_const_keeps_tiny_and_huge_finite_values(sx: Client) -> None:
    """ "`[const, n]` | A fixed number": a tiny and a huge finite n come back as rank_score."""
    write(sx, note())
    assert ranked(sx, ["const", 1e-300]) == [1e-300]
    assert ranked(sx, ["const", 1e308]) == [1e308]
    assert ranked(sx, ["const", -(2**70)]) == [float(-(2**70))]


def test_decay_at_its_midpoint_is_half_whatever_the_exponent(sx: Client) -> None:
    """ "`[decay, a, {midpoint: m, exponent: e}]` | `1 / (1 + x^e / m^e)` → 1 down to 0, passing 0.5
    at `x = m`": with a huge exponent x^e alone would overflow, the value is still 0.5."""
    write(sx, note(scores={"importance": 5}))
    assert ranked(sx, ["decay", IMP, {"midpoint": 5, "exponent": 1000}]) == [pytest.approx(0.5)]
    assert ranked(sx, ["saturate", IMP, {"midpoint": 5, "exponent": 1000}]) == [pytest.approx(0.5)]


def test_a_tiny_midpoint_and_exponent(sx: Client) -> None:
    """ "`[saturate, a, {midpoint: m, exponent: e}]` | `x^e / (x^e + m^e)`" and "saturate and decay
    clamp their input at 0 first, and both options are required and must be positive": tiny
    positive options are valid; x = 0 saturates to 0, any x far above m to ~1."""
    write(sx, note(scores={"importance": 1}, occurred_at=at(2)), note(scores={}, occurred_at=at(1)))
    values = ranked(sx, ["saturate", IMP, {"midpoint": 1e-300, "exponent": 2}])
    assert values == [pytest.approx(1.0), 0.0]
    values = ranked(sx, ["decay", IMP, {"midpoint": 1, "exponent": 1e-300}])
    assert values == [1.0, pytest.approx(0.5)]


def test_min_max_over_the_widest_finite_range_tops_at_1(sx: Client) -> None:
    """ "score = (u - low) / (high - low)" and "the top hit always scores 1.0": rank_scores of
    1e308 and -1e308 are both finite; the top one scores 1 and the bottom one 0."""
    write(sx, note(scores={"importance": 1}), note(scores={"importance": -1}))
    body = search(sx, recent_body(rank=["product", 1e308, IMP]))
    assert [hit["rank_score"] for hit in body["hits"]] == [1e308, -1e308]
    assert [hit["score"] for hit in body["hits"]] == [1.0, 0.0]


# --- combined searches at the bounds --------------------------------------------------------------


@pytest.mark.parametrize(
    ("rank_constant", "first", "second"),
    [pytest.param(1, 1 / 2, 1 / 3, id="1"), pytest.param(1000, 1 / 1001, 1 / 1002, id="1000")],
)
def test_rank_constant_bounds_reach_the_formula(
    sx: Client, rank_constant: int, first: float, second: float
) -> None:
    """ "RRF(record) = sum over sources that found it of weight / (rank_constant + rank_in_source)"
    and "rank_constant … must be 1–1000": both ends are inclusive and used exactly."""
    write(sx, note(scores={"importance": 2}), note(scores={"importance": 1}))
    body = search(
        sx, {**fused(source("a", "importance")), "fuse": {"kind": "rrf", "rank_constant": rank_constant}}
    )
    assert [hit["rank_score"] for hit in body["hits"]] == [pytest.approx(first), pytest.approx(second)]


def test_extreme_weight_ratios_still_follow_the_formula(sx: Client) -> None:
    """ "weight is purely relative" and "The accepted range is greater than 0 and at most 100": a
    weight of 1e-300 is valid, and its contributions are weight / (60 + rank)."""
    lone, both = write(
        sx, note(scores={"importance": 2, "urgency": 1}), note(scores={"importance": 1, "urgency": 2})
    )
    body = search(sx, fused(source("tiny", "importance", 1e-300), source("full", "urgency", 100)))
    hits = {hit["id"]: hit for hit in body["hits"]}
    assert hits[lone]["rank_score"] == pytest.approx(1e-300 / 61 + 100 / 62)
    assert hits[both]["rank_score"] == pytest.approx(1e-300 / 62 + 100 / 61)
    assert ids(body) == [both, lone]


def test_an_integer_weight_merges_like_the_same_float(sx: Client) -> None:
    """ "1.0 and 2.0 merge exactly like 10 and 20": integer weights are the same numbers."""
    write(sx, note(scores={"importance": 2, "urgency": 1}), note(scores={"importance": 1, "urgency": 2}))
    as_ints = search(sx, fused(source("a", "importance", 1), source("b", "urgency", 2)))
    as_floats = search(sx, fused(source("a", "importance", 1.0), source("b", "urgency", 2.0)))
    assert [h["rank_score"] for h in as_ints["hits"]] == [h["rank_score"] for h in as_floats["hits"]]
    assert ids(as_ints) == ids(as_floats)


def test_equal_rrf_values_break_by_occurred_at_then_ingestion_order(sx: Client) -> None:
    """ "For scored searches, results are ordered by internal value descending, then by
    occurred_at descending, then by ingestion order descending": each source's only record at
    rank 1 with equal weights ties on RRF."""
    older, newer, later_written = write(
        sx,
        note(scores={"importance": 1}, occurred_at=at(1)),
        note(scores={"urgency": 1}, occurred_at=at(3)),
        note(scores={"hidden": 1}, occurred_at=at(3)),
    )
    only = {"where": {}, "params": {"candidates": 100}}
    body = search(
        sx,
        fused(
            {**source("a", "importance", k=1), **only},
            {**source("b", "urgency", k=1), **only},
            {**source("c", "hidden", k=1), **only},
        ),
    )
    assert ids(body) == [later_written, newer, older]
    assert [hit["rank_score"] for hit in body["hits"]] == [pytest.approx(1 / 61)] * 3
    assert [hit["score"] for hit in body["hits"]] == [1.0, 1.0, 1.0]


def test_a_zero_boost_ties_every_record_and_falls_to_the_tie_breakers(sx: Client) -> None:
    """ "The final value is RRF(record) * max(0, boost(record))" and "results are ordered by
    internal value descending, then by occurred_at descending": a negative boost makes every value
    0, so the newest comes first and every score is 1."""
    best, newest = write(
        sx,
        note(scores={"importance": 9}, occurred_at=at(1)),
        note(scores={"importance": 1}, occurred_at=at(5)),
    )
    body = search(sx, {**fused(source("a", "importance")), "boost": ["const", -3]})
    assert ids(body) == [newest, best]
    assert [hit["rank_score"] for hit in body["hits"]] == [0, 0]
    assert [hit["score"] for hit in body["hits"]] == [1.0, 1.0]


def test_unicode_source_names_key_source_ranks(sx: Client) -> None:
    """ "1 to 8 sources, each with a unique name" and "source_ranks: an object mapping each source
    name to the record's position in that source's list": any text is a name."""
    (record,) = write(sx, note(scores={"importance": 1, "urgency": 1}))
    body = search(sx, fused(source("événements", "importance"), source("🧠 reflections", "urgency")))
    assert body["hits"][0]["id"] == record
    assert body["hits"][0]["source_ranks"] == {"événements": 1, "🧠 reflections": 1}
    assert {entry["source"] for entry in body["backend"]} == {"événements", "🧠 reflections"}


# --- where errors point inside a source -----------------------------------------------------------


@pytest.mark.parametrize(
    ("change", "loc"),
    [
        pytest.param(
            {"where": {"amount": {"gt": "soon"}}}, ("sources", 0, "where", "amount", "gt"), id="where"
        ),
        pytest.param({"where": {"nope": {"eq": 1}}}, ("sources", 0, "where", "nope"), id="where-undeclared"),
        pytest.param(
            {"order_by": [{"field": "amount"}]}, ("sources", 0, "order_by"), id="order-by-not-structured"
        ),
        pytest.param(
            {"params": {"candidates": 0}}, ("sources", 0, "params", "candidates"), id="candidates-0"
        ),
        pytest.param(
            {"scope": {**NOTES, "depth_lte": -1}}, ("sources", 0, "scope", "depth_lte"), id="depth-lte"
        ),
    ],
)
def test_problems_inside_a_source_are_located_there(
    sx: Client, change: dict[str, Any], loc: tuple[Any, ...]
) -> None:
    """ "Each source takes its own mode, scope, where, order_by, rank, params, and k (1–100) — the
    same options as a single search": a problem in one is reported at that source's key."""
    rejects(
        sx, fused(source("ok", "urgency"), {**source("a", "importance"), **change}), *loc[:1], 1, *loc[2:]
    )


def test_rerank_next_to_a_recent_source_is_refused_at_rerank(sx: Client) -> None:
    """ "It is allowed only when every search uses text, vector, or hybrid mode.\""""
    text = {"name": "t", "mode": "text", "scope": NOTES}
    body = fused(text, source("r", "importance"), q="x", rerank={"backend": "llm_judge", "top_n": 1})
    rejects(sx, body, "rerank")


# --- where: operators on the wrong kind of field, list equality, long strings ---------------------


@pytest.mark.parametrize(
    ("where", "loc"),
    [
        pytest.param({"tags": {"in": ["vip"]}}, ("where", "tags", "in"), id="in-on-a-list-field"),
        pytest.param({"vip": {"gt": 0}}, ("where", "vip", "gt"), id="gt-on-a-boolean"),
        pytest.param({"tags": {"lte": 3}}, ("where", "tags", "lte"), id="lte-on-a-list-field"),
        pytest.param({"amount": {"eq": [1, 2]}}, ("where", "amount", "eq"), id="list-eq-on-a-number"),
        pytest.param(
            {"channel": {"contains_all": ["a"]}}, ("where", "channel", "contains_all"), id="all-on-scalar"
        ),
    ],
)
def test_operators_only_work_on_their_kinds_of_field(
    sx: Client, where: dict[str, Any], loc: tuple[str, ...]
) -> None:
    """The operator table: "`in` | is one of the listed values | single values", "`gt` … | numbers
    and timestamps", "`eq` | any single value, or an exact ordered match for a list", and
    "contains_any/contains_all also require the field to hold a list"."""
    err = rejects(sx, recent_body(where=where))
    assert any(detail["loc"][: len(loc)] == list(loc) for detail in err["details"]), err["details"]


def test_eq_on_a_list_is_an_exact_ordered_match_even_when_empty(sx: Client) -> None:
    """ "`eq` | equals | any single value, or an exact ordered match for a list": [] matches only
    the record holding an empty list, not the one without the field."""
    empty, _, ordered = write(
        sx,
        note(content={"tags": []}),
        note(content={}),
        note(content={"tags": ["a", "b"]}),
    )
    assert ids(search(sx, recent_body(where={"tags": {"eq": []}}))) == [empty]
    assert ids(search(sx, recent_body(where={"tags": {"eq": ["a", "b"]}}))) == [ordered]
    assert ids(search(sx, recent_body(where={"tags": {"eq": ["b", "a"]}}))) == []


def test_long_and_unicode_filter_values_are_answered(sx: Client) -> None:
    """ "`eq` | equals" and "`in` | is one of the listed values": values of any length or script are
    compared exactly (a long value simply matches nothing)."""
    (record,) = write(sx, note(content={"channel": "электронная почта 📧"}))
    long_values = ["x" * 20_000] + [f"{i}" * 1000 for i in range(99)]
    assert ids(search(sx, recent_body(where={"channel": {"eq": "x" * 20_000}}))) == []
    assert ids(search(sx, recent_body(where={"channel": {"in": long_values}}))) == []
    assert ids(search(sx, recent_body(where={"channel": {"in": ["электронная почта 📧"]}}))) == [record]


@pytest.mark.parametrize(
    "condition",
    [
        pytest.param({"eq": 0.1}, id="eq"),
        pytest.param({"in": [0.3, 0.1]}, id="in"),
        pytest.param({"gte": 0.1}, id="gte"),
        pytest.param({"lte": 0.1}, id="lte"),
        pytest.param({"gt": 0.09999999999999999, "lt": 0.10000000000000002}, id="between-neighbours"),
    ],
)
def test_a_decimal_fraction_matches_itself(sx: Client, condition: dict[str, Any]) -> None:
    """ "`eq` | equals | any single value" and "`gt`, `gte`, `lt`, `lte` | greater/less than (or
    equal)": the JSON number 0.1 written on a record equals the JSON number 0.1 in a filter."""
    (record,) = write(sx, note(content={"amount": 0.1}))
    assert ids(search(sx, recent_body(where={"amount": condition}))) == [record]


def test_subnormal_and_extreme_number_bounds_are_answered(sx: Client) -> None:
    """ "`gt`, `gte`, `lt`, `lte` | … | numbers": any finite JSON number is a bound."""
    (record,) = write(sx, note(content={"amount": 1e-320}))
    assert ids(search(sx, recent_body(where={"amount": {"eq": 5e-324}}))) == []
    assert ids(search(sx, recent_body(where={"amount": {"gt": 5e-324, "lt": 1e-300}}))) == [record]
    assert ids(search(sx, recent_body(where={"amount": {"gt": -1.7976931348623157e308}}))) == [record]


@pytest.mark.parametrize(
    ("rank", "expected"),
    [
        pytest.param(["saturate", IMP, {"midpoint": 1, "exponent": 2}], [1.0, 0.0], id="saturate-huge-x"),
        pytest.param(["decay", IMP, {"midpoint": 1, "exponent": 2}], [1.0, 0.0], id="decay-huge-x"),
    ],
)
def test_shapers_at_the_edges_of_the_float_range(sx: Client, rank: Any, expected: list[float]) -> None:
    """ "`[normalize, a]` | `(x - min) / (max - min)` across the current candidates → 0–1" (whose
    results, 1 and 0, are finite: "Every value produced must be finite"),
    "`[saturate …]` | `x^e / (x^e + m^e)` → 0 up to 1" and "`[decay …]` | `1 / (1 + x^e / m^e)` → 1
    down to 0": with inputs of ±1e300 the values are (close to) the ends of 0–1."""
    write(
        sx,
        note(scores={"importance": 1e300}, occurred_at=at(2)),
        note(scores={"importance": -1e300}, occurred_at=at(1)),
    )
    assert sorted(ranked(sx, rank), reverse=True) == [pytest.approx(v) for v in expected]


# --- more timestamps, ordering keys, rerank none, anchors -----------------------------------------


@pytest.mark.parametrize(
    "where",
    [
        pytest.param({"starts_at": {"eq": "2026-07-01T12:00:00+02:00"}}, id="eq-other-offset"),
        pytest.param({"starts_at": {"in": ["2026-07-01T05:00:00-05:00"]}}, id="in-other-offset"),
        pytest.param({"starts_at": {"gt": "0001-01-01T00:00:00+23:59"}}, id="gt-year-1-east"),
        pytest.param({"starts_at": {"lt": "9999-12-31T23:59:59-23:59"}}, id="lt-year-9999-west"),
    ],
)
def test_timestamp_values_are_instants_whatever_their_offset(sx: Client, where: dict[str, Any]) -> None:
    """ "`eq` | equals | any single value", "`in` | is one of the listed values" and "`gt` … |
    numbers and timestamps": a timestamp names an instant; its offset is only how it is written,
    even at the ends of the calendar."""
    (record,) = write(sx, note(content={"starts_at": "2026-07-01T10:00:00Z"}))
    assert ids(search(sx, recent_body(where=where))) == [record]


@pytest.mark.parametrize(
    "scope",
    [
        pytest.param({"occurred_after": "0001-01-01T00:00:00+23:59"}, id="after-year-1-east"),
        pytest.param({"occurred_before": "9999-12-31T23:59:59-23:59"}, id="before-year-9999-west"),
    ],
)
def test_time_bounds_at_the_ends_of_the_calendar(sx: Client, scope: dict[str, str]) -> None:
    """ "occurred_after / occurred_before … time bounds, timezone required": any valid timestamp with
    a timezone is a bound, even one whose UTC instant falls outside years 1-9999."""
    (record,) = write(sx, note(occurred_at="2026-07-01T10:00:00Z"))
    assert ids(search(sx, recent_body(scope=scope))) == [record]


def test_recent_proposes_the_newest_first(sx: Client) -> None:
    """ "`recent` | Newest first, then reordered by the formula" and "params.candidates … how many
    records the search engine proposes before ranking": with one candidate, the newest record is
    the only one ranked, though an older one scores higher."""
    _, newest = write(
        sx,
        note(scores={"importance": 9}, occurred_at=at(1)),
        note(scores={"importance": 1}, occurred_at=at(3)),
    )
    assert ids(search(sx, recent_body(rank=IMP, params={"candidates": 1}))) == [newest]


def test_rerank_none_does_nothing_and_reports_nothing(sx: Client) -> None:
    """ "`none` means do nothing" and "`rerank` | Present only when model reranking ran"."""
    write(sx, note("budget"))
    body = search(sx, {"q": "budget", "mode": "text", "rerank": {"backend": "none"}})
    assert "rerank" not in body
    assert body["ranking"]["kind"] == "rank_expression"


@pytest.mark.parametrize(
    ("anchor", "accepted"),
    [
        pytest.param("   ", False, id="blank"),
        pytest.param("  " + "a" * 128 + "\t", True, id="128-after-trimming"),
        pytest.param(" " + "a" * 129 + " ", False, id="129-after-trimming"),
    ],
)
def test_the_anchor_is_trimmed_then_1_to_128_characters(sx: Client, anchor: str, accepted: bool) -> None:
    """ "anchor: people/maya # trimmed, 1–128 characters"."""
    body = recent_body(graph_boost={"anchor": anchor})
    if accepted:
        search(sx, body)
    else:
        rejects(sx, body, "graph_boost", "anchor")


# --- integer fields, structured sorts on booleans and extremes, source k --------------------------


@pytest.mark.parametrize(
    ("condition", "expected"),
    [
        pytest.param({"gt": 1.5}, [4, 3, 2], id="fractional-bound"),
        pytest.param({"lte": 1e300, "gte": -1e300}, [4, 3, 2, 1, 0], id="bounds-past-any-integer"),
        pytest.param({"lt": PAST_64_BITS, "gt": -PAST_64_BITS}, [4, 3, 2, 1, 0], id="bounds-past-64-bits"),
        pytest.param({"gte": 2**63 - 1}, [], id="int64-max"),
        pytest.param({"lte": -(2**63)}, [], id="int64-min"),
    ],
)
def test_integer_fields_compare_with_any_number(
    sx: Client, condition: dict[str, Any], expected: list[int]
) -> None:
    """ "`gt`, `gte`, `lt`, `lte` | greater/less than (or equal) | numbers and timestamps": an integer
    field compares by value with any number, fractional or beyond 64 bits."""
    written = write(sx, *(note(f"n{i}", content={"count": i}, occurred_at=at(1, i)) for i in range(5)))
    assert ids(search(sx, recent_body(where={"count": condition}))) == [written[i] for i in expected]


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


def test_a_sources_k_defaults_to_20(sx: Client) -> None:
    """ "Each source takes its own … k (1–100) — the same options as a single search" (k default 20),
    and "Each source is ranked and cut to its own k before merging"."""
    write(sx, *(note(f"n{i}", scores={"importance": i}) for i in range(25)))
    plain = {"name": "a", "mode": "recent", "scope": NOTES, "rank": IMP}
    body = search(sx, fused(plain, k=100))
    assert len(body["hits"]) == 20
    assert sorted(hit["source_ranks"]["a"] for hit in body["hits"]) == list(range(1, 21))


def test_a_boost_that_overflows_the_merged_value_is_refused_not_a_500(sx: Client) -> None:
    """ "The final value is RRF(record) * max(0, boost(record))", "Every value produced must be
    finite" and the error table ("The request or a catalog reference is invalid | `422`"): a boost
    of 1e308 on an RRF value of 100 is not finite."""
    write(sx, note(scores={"urgency": 1}))
    heavy = fused(source("a", "urgency", 100), source("b", "urgency", 100), boost=["const", 1e308])
    rejects(sx, {**heavy, "fuse": {"kind": "rrf", "rank_constant": 1}})
