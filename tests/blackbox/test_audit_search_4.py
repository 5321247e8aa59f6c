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
from tests.blackbox.support import ranked
from tests.blackbox.support import recent_body
from tests.blackbox.support import rejects
from tests.blackbox.support import search
from tests.blackbox.support import write
from tests.conftest import Client

# --- numbers: booleans, digit strings, integers past 64 bits --------------------------------------


HUGE = 10**400
"""An integer no float holds: JSON allows it, so it must be answered as a value, never a 500."""
PAST_64_BITS = 2**70
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


# --- rank expressions at extreme values -----------------------------------------------------------


def test_const_keeps_tiny_and_huge_finite_values(sx: Client) -> None:
    """ "`[const, n]` | A fixed number": a tiny and a huge finite n come back as rank_score."""
    write(sx, note())
    assert ranked(sx, ["const", 1e-300]) == [1e-300]
    assert ranked(sx, ["const", 1e308]) == [1e308]
    assert ranked(sx, ["const", -(2**70)]) == [float(-(2**70))]


IMP = ["score", "importance"]


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


NOTES = {"collections": ["sx_notes"]}


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


# --- more timestamps, ordering keys, rerank none, anchors -----------------------------------------


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
