"""Combined searches, the merge (spec "Combining several searches"): weighted RRF arithmetic,
deduplication, the public score over the merged (and boosted) pool, the boost expression, and the
tie order after fusion.

Expected values come from the spec's formulas, never from the service's output.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.blackbox.conftest import ClientFactory
from tests.blackbox.fusion_support import by_id
from tests.blackbox.fusion_support import chat_calls
from tests.blackbox.fusion_support import combined
from tests.blackbox.fusion_support import extra
from tests.blackbox.fusion_support import ranked_by
from tests.blackbox.fusion_support import source
from tests.blackbox.support import SCORED_RANKING
from tests.blackbox.support import at
from tests.blackbox.support import fused
from tests.blackbox.support import ids
from tests.blackbox.support import link
from tests.blackbox.support import min_max
from tests.blackbox.support import note
from tests.blackbox.support import rejects
from tests.blackbox.support import search
from tests.blackbox.support import write
from tests.conftest import Client
from tests.helpers import ok
from tests.openai_server import OpenAIServer
from tests.openai_server import judge_by_text

# --- the worked examples and the RRF arithmetic ---------------------------------------------------


SCORED = {"kind": "rrf", **SCORED_RANKING}


def test_worked_example_rank_1_and_rank_4(sx: Client) -> None:
    x, a, b, c = write(
        sx,
        note("x", scores={"importance": 10, "urgency": 6}),
        note("a", scores={"importance": 3, "urgency": 9}),
        note("b", scores={"importance": 2, "urgency": 8}),
        note("c", scores={"importance": 1, "urgency": 7}),
    )
    body = search(
        sx,
        {
            "sources": [source("events", "importance", 1.0), source("reflections", "urgency", 1.1)],
            "fuse": {"kind": "rrf", "rank_constant": 60},
        },
    )
    hits = {hit["id"]: hit for hit in body["hits"]}
    assert hits[x]["source_ranks"] == {"events": 1, "reflections": 4}
    assert hits[x]["rank_score"] == pytest.approx(1.0 / 61 + 1.1 / 64)
    assert round(hits[x]["rank_score"], 6) == 0.033581
    assert hits[a]["source_ranks"] == {"events": 2, "reflections": 1}
    assert hits[a]["rank_score"] == pytest.approx(1.0 / 62 + 1.1 / 61)
    assert ids(body) == [a, b, x, c]  # 0.034162, 0.033615 (1/63 + 1.1/62), 0.033581, 0.033085
    assert body["ranking"] == SCORED


NOTES = {"collections": ["sx_notes"]}


def test_agreement_beats_either_source_alone(sx: Client) -> None:
    both, events_only = write(
        sx, note("both", scores={"importance": 9}), note("events", scores={"importance": 5})
    )
    (reflections_only,) = write(sx, extra("reflection", scores={"importance": 7}))
    body = search(
        sx,
        {
            "sources": [
                {"name": "events", "mode": "recent", "scope": NOTES, "rank": ["score", "importance"], "k": 2},
                {
                    "name": "reflections",
                    "mode": "recent",
                    "scope": {"collections": ["sx_extra", "sx_notes"]},
                    "rank": ["score", "importance"],
                    "k": 2,
                    "weight": 1.1,
                },
            ],
            "fuse": {"kind": "rrf"},
        },
    )
    by_id = {hit["id"]: hit for hit in body["hits"]}
    assert ids(body) == [both, reflections_only, events_only]
    assert by_id[both]["source_ranks"] == {"events": 1, "reflections": 1}
    assert by_id[both]["rank_score"] == pytest.approx(1.0 / 61 + 1.1 / 61)
    assert by_id[reflections_only]["source_ranks"] == {"reflections": 2}
    assert by_id[reflections_only]["rank_score"] == pytest.approx(1.1 / 62)
    assert by_id[events_only]["source_ranks"] == {"events": 2}
    assert round(by_id[events_only]["rank_score"], 6) == round(1.0 / 62, 6)


EXTRA = {"collections": ["sx_extra"]}


def test_rank_1_alone_in_each_source(sx: Client) -> None:
    (event,) = write(sx, note("e", scores={"importance": 1}))
    (reflection,) = write(sx, extra("r", scores={"importance": 1}))
    body = search(
        sx,
        {
            "sources": [
                {"name": "events", "mode": "recent", "scope": NOTES},
                {"name": "reflections", "mode": "recent", "scope": EXTRA, "weight": 1.1},
            ],
            "fuse": {"kind": "rrf"},
        },
    )
    by_id = {hit["id"]: hit for hit in body["hits"]}
    assert round(by_id[event]["rank_score"], 6) == 0.016393
    assert round(by_id[reflection]["rank_score"], 6) == 0.018033
    assert by_id[event]["source_ranks"] == {"events": 1}


@pytest.mark.parametrize(
    ("rank_constant", "rank", "value"),
    [
        (10, 1, 0.0909),
        (10, 10, 0.0500),
        (60, 1, 0.0164),
        (60, 10, 0.0143),
        (200, 1, 0.00498),
        (200, 10, 0.00476),
    ],
)
def test_rank_constant_table(sx: Client, rank_constant: int, rank: int, value: float) -> None:
    written = write(sx, *(note(f"n{i}", scores={"importance": 20 - i}) for i in range(rank)))
    body = search(
        sx,
        {"sources": [source("only", "importance")], "fuse": {"kind": "rrf", "rank_constant": rank_constant}},
    )
    hit = body["hits"][rank - 1]
    assert hit["id"] == written[rank - 1] and hit["source_ranks"] == {"only": rank}
    assert hit["rank_score"] == pytest.approx(1.0 / (rank_constant + rank))
    assert hit["rank_score"] == pytest.approx(value, rel=5e-3)


def test_weights_are_purely_relative(sx: Client) -> None:
    write(sx, *(note(f"n{i}", scores={"importance": i, "urgency": 10 - i}) for i in range(6)))

    def order(w1: float, w2: float) -> list[str]:
        return ids(
            search(
                sx,
                {
                    "sources": [source("a", "importance", w1), source("b", "urgency", w2)],
                    "fuse": {"kind": "rrf"},
                },
            )
        )

    assert order(1.0, 2.0) == order(10, 20) == order(0.5, 1.0)


def test_three_weighted_sources_that_each_find_different_records(sx: Client) -> None:
    """ "RRF(record) = sum over sources that found it of weight / (rank_constant + rank_in_source)"
    and "A source that did not find the record contributes nothing at all": three sources with
    weights 0.5, 2 and 3 and rank_constant 10, each cut to its own k."""
    a, b, c, d = write(
        sx,
        note("a", scores={"importance": 4, "urgency": 1, "hidden": 9}),
        note("b", scores={"importance": 3, "urgency": 4}),
        note("c", scores={"importance": 2, "urgency": 3, "hidden": 8}),
        note("d", scores={"importance": 1, "urgency": 2}),
    )
    body = search(
        sx,
        {
            **combined(
                ranked_by("i", "importance", 0.5, k=4),
                ranked_by("u", "urgency", 2, k=2),
                ranked_by("h", "hidden", 3, k=1),
            ),
            "fuse": {"kind": "rrf", "rank_constant": 10},
        },
    )
    expected = {
        a: ({"i": 1, "h": 1}, 0.5 / 11 + 3 / 11),
        b: ({"i": 2, "u": 1}, 0.5 / 12 + 2 / 11),
        c: ({"i": 3, "u": 2}, 0.5 / 13 + 2 / 12),
        d: ({"i": 4}, 0.5 / 14),
    }
    hits = by_id(body)
    assert {i: (h["source_ranks"], h["rank_score"]) for i, h in hits.items()} == {
        i: (ranks, pytest.approx(value)) for i, (ranks, value) in expected.items()
    }
    assert ids(body) == [a, b, c, d]
    values = [expected[i][1] for i in (a, b, c, d)]
    assert [h["score"] for h in body["hits"]] == pytest.approx(min_max(values))
    assert [h["rank"] for h in body["hits"]] == [1, 2, 3, 4]


def test_a_record_found_by_every_source_comes_back_once(sx: Client) -> None:
    """ "Every merged result includes source_ranks: an object mapping each source name to the
    record's position in that source's list": a record all three sources found is one result, its
    value the sum of three contributions."""
    first, second = write(
        sx, note(scores={"importance": 2, "urgency": 1}), note(scores={"importance": 1, "urgency": 2})
    )
    body = search(
        sx, combined(ranked_by("x", "importance"), ranked_by("y", "urgency"), ranked_by("z", "importance"))
    )
    assert sorted(ids(body)) == sorted([first, second])
    hits = by_id(body)
    assert hits[first]["source_ranks"] == {"x": 1, "y": 2, "z": 1}
    assert hits[first]["rank_score"] == pytest.approx(1 / 61 + 1 / 62 + 1 / 61)
    assert hits[second]["source_ranks"] == {"x": 2, "y": 1, "z": 2}
    assert hits[second]["rank_score"] == pytest.approx(1 / 62 + 1 / 61 + 1 / 62)
    assert ids(body) == [first, second]


def test_the_sweep_threshold_decides_whether_a_weighted_source_sweeps(sx: Client) -> None:
    """ "a source A sweeps every record that only source B found once weight_A / weight_B >=
    (rank_constant + k_A) / (rank_constant + 1)": with k_A 3 and constant 60 the threshold is
    63/61; just above it A's worst record beats B's best, just below it does not."""
    b_best = write(sx, note("b", scores={"urgency": 9}))[0]
    a_records = write(sx, *(extra(f"a{i}", scores={"importance": 3 - i}) for i in range(3)))
    a_worst = a_records[-1]

    def order(weight_a: float) -> list[str]:
        body = search(
            sx,
            combined(
                {
                    "name": "a",
                    "mode": "recent",
                    "scope": EXTRA,
                    "rank": ["score", "importance"],
                    "k": 3,
                    "weight": weight_a,
                },
                ranked_by("b", "urgency", 1.0, k=1),
            ),
        )
        return ids(body)

    above = order(63 / 61 * 1.001)
    assert above.index(a_worst) < above.index(b_best)
    below = order(63 / 61 * 0.999)
    assert below.index(b_best) < below.index(a_worst)


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


RECENT: dict[str, Any] = {"mode": "recent", "scope": NOTES}


def test_a_tiny_source_weight_scales_the_rrf_value(sx: Client) -> None:
    """Spec: weight "greater than 0 and at most 100"; "RRF(record) = sum … weight / (rank_constant +
    rank_in_source)". A weight just above 0 is accepted and scales the contribution."""
    write(sx, note())
    body = search(sx, {"sources": [{"name": "s", **RECENT, "weight": 1e-6}], "fuse": {"kind": "rrf"}})
    assert [h["rank_score"] for h in body["hits"]] == pytest.approx([1e-6 / 61], rel=1e-9)


# --- the public score over the merged pool --------------------------------------------------------


def test_score_is_min_max_over_the_merged_pool_before_the_top_level_k(sx: Client) -> None:
    write(sx, *(note(f"n{i}", scores={"importance": 10 - i}) for i in range(3)))
    body = search(sx, {"sources": [source("only", "importance")], "fuse": {"kind": "rrf"}, "k": 2})
    low, high, middle = 1 / 63, 1 / 61, 1 / 62
    assert [h["score"] for h in body["hits"]] == [1.0, pytest.approx((middle - low) / (high - low))]


def test_score_is_rescaled_over_the_boosted_values(sx: Client) -> None:
    """ "The final value is RRF(record) * max(0, boost(record))" and the public score's input is
    "Final values, after ranking, merging, reranking, and boosts": values 4/62, 1/61 and 0 score
    1, (1/61)/(4/62) and 0."""
    first, second, third = write(
        sx,
        note("a", scores={"importance": 9, "urgency": 1}),
        note("b", scores={"importance": 5, "urgency": 4}),
        note("c", scores={"importance": 1, "urgency": -2}),
    )
    body = search(sx, combined(ranked_by("s", "importance"), boost=["score", "urgency"]))
    assert ids(body) == [second, first, third]
    assert [h["score"] for h in body["hits"]] == pytest.approx([1.0, (1 / 61) / (4 / 62), 0.0])


def test_a_boost_normalizes_over_the_merged_pool_before_the_top_level_k(sx: Client) -> None:
    """ "boost is an optional expression applied after merging", normalize is "(x - min) / (max -
    min) across the current candidates", and "The top-level k applies only after the lists have
    been merged": with k 1, the unreturned records still set normalize's bounds (urgency 0..10 →
    5 reads 0.5) and the public score's lower bound."""
    write(
        sx,
        note("low", scores={"importance": 3, "urgency": 0}),
        note("mid", scores={"importance": 2, "urgency": 5}),
        note("top", scores={"importance": 1, "urgency": 10}),
    )
    boost = ["sum", [["const", 1], ["normalize", ["score", "urgency"]]]]
    body = search(sx, combined(ranked_by("s", "importance"), boost=boost, k=1))
    (hit,) = body["hits"]
    assert hit["source_ranks"] == {"s": 3}
    assert hit["rank_score"] == pytest.approx(2 / 63)
    assert hit["score"] == 1.0
    body = search(sx, combined(ranked_by("s", "importance"), boost=boost, k=2))
    values = [1 / 61, 1.5 / 62, 2 / 63]
    assert [h["rank_score"] for h in body["hits"]] == pytest.approx([2 / 63, 1.5 / 62])
    assert [h["score"] for h in body["hits"]] == pytest.approx(min_max(values)[::-1][:2])


def test_a_single_merged_result_scores_1(sx: Client) -> None:
    """ "score = 1 if high == low": a merged pool of one record."""
    write(sx, note(scores={"importance": 1}))
    body = search(sx, combined(ranked_by("a", "importance", 3), ranked_by("b", "importance", 0.2)))
    (hit,) = body["hits"]
    assert hit["score"] == 1.0 and hit["rank_score"] == pytest.approx(3 / 61 + 0.2 / 61)


RRF_RANKING = {"kind": "rrf", **SCORED_RANKING}
"""The spec's ranking contract of a combined search: "ranking.kind is rrf"."""


def test_graph_boost_on_a_combined_search_rescales_over_the_whole_boosted_pool(sx: Client) -> None:
    """ "With graph_boost | The same pools, but measured after the boost is added" (combined: "Every
    record the merge produced, before the top-level k") and "boosted = previous + weight /
    (distance + 1)": the last-ranked anchor record rises to the top; the unreturned last record
    still sets the lower bound."""
    write(sx, link("people/maya", "advises", "companies/acme"))
    first, second, third, maya = write(
        sx,
        note("a", scores={"importance": 4}),
        note("b", scores={"importance": 3}),
        note("c", scores={"importance": 2}),
        note("m", entity="people/maya", scores={"importance": 1}),
    )
    body = search(
        sx, combined(ranked_by("s", "importance"), graph_boost={"anchor": "people/maya", "weight": 0.01}, k=2)
    )
    values = {first: 1 / 61, second: 1 / 62, third: 1 / 63, maya: 1 / 64 + 0.01}
    assert ids(body) == [maya, first]
    assert [h["rank_score"] for h in body["hits"]] == pytest.approx([values[maya], values[first]])
    low, high = values[third], values[maya]
    assert [h["score"] for h in body["hits"]] == pytest.approx([1.0, (values[first] - low) / (high - low)])
    assert body["hits"][0]["source_ranks"] == {"s": 4}
    assert body["ranking"] == RRF_RANKING
    assert body["graph_boost"]["matched_records"] == 1


def test_the_default_graph_weight_makes_proximity_the_sort_key_of_a_combined_search(sx: Client) -> None:
    """ "The default 0.05 on a combined search is not a nudge: it is larger than any RRF value in
    the response, so it stops being a tie-breaker and becomes the sort key — you get "everything
    near the anchor, then everything else."\""""
    write(sx, link("people/maya", "advises", "companies/acme"))
    plain = write(sx, *(note(f"n{i}", scores={"importance": 10 - i}) for i in range(5)))
    (acme,) = write(sx, note("acme", entity="companies/acme", scores={"importance": 0}))
    body = search(
        sx,
        combined(
            ranked_by("a", "importance"), ranked_by("b", "importance"), graph_boost={"anchor": "people/maya"}
        ),
    )
    assert ids(body) == [acme, *plain]
    assert body["hits"][0]["rank_score"] == pytest.approx(2 / 66 + 0.05 / 2)


def test_a_merged_pool_that_ties_scores_1_everywhere(sx: Client) -> None:
    one, two = write(
        sx,
        {"collection": "sx_notes", "entity": "tie", "type": "note", "text": "left"},
        {"collection": "sx_extra", "entity": "tie", "type": "note", "text": "right"},
    )
    body = search(
        sx,
        {
            "sources": [
                {"name": "a", "mode": "recent", "scope": {"collections": ["sx_notes"], "entities": ["tie"]}},
                {"name": "b", "mode": "recent", "scope": {"collections": ["sx_extra"], "entities": ["tie"]}},
            ],
            "fuse": {"kind": "rrf"},
        },
    )
    assert {hit["id"] for hit in body["hits"]} == {one, two}
    assert [hit["score"] for hit in body["hits"]] == [1.0, 1.0]
    assert [hit["rank_score"] for hit in body["hits"]] == [pytest.approx(1 / 61)] * 2
    assert [hit["rank"] for hit in body["hits"]] == [1, 2]
    assert body["ranking"]["kind"] == "rrf"


# --- boost ----------------------------------------------------------------------------------------


def test_boost_multiplies_the_rrf_value(sx: Client) -> None:
    first, second, third = write(
        sx,
        note("a", scores={"importance": 9, "urgency": 1}),
        note("b", scores={"importance": 5, "urgency": 4}),
        note("c", scores={"importance": 1, "urgency": -2}),
    )
    body = search(
        sx, {"sources": [source("s", "importance")], "fuse": {"kind": "rrf"}, "boost": ["score", "urgency"]}
    )
    by_id = {hit["id"]: hit for hit in body["hits"]}
    assert ids(body)[:2] == [second, first]
    assert by_id[second]["rank_score"] == pytest.approx(4 / 62)
    assert by_id[first]["rank_score"] == pytest.approx(1 / 61)
    assert by_id[third]["rank_score"] == 0.0  # max(0, boost): a negative boost zeroes, never flips
    assert by_id[third]["source_ranks"] == {"s": 3}


def test_boost_may_use_ages_and_constants(sx: Client) -> None:
    write(sx, note("a"))
    boost = ["sum", [["const", 2], ["decay", ["age_hours", "occurred_at"], {"midpoint": 24, "exponent": 1}]]]
    (hit,) = search(sx, {"sources": [source("s", "importance")], "fuse": {"kind": "rrf"}, "boost": boost})[
        "hits"
    ]
    assert hit["rank_score"] == pytest.approx(3 / 61, rel=1e-3)


@pytest.mark.parametrize("signal", [["similarity"], ["text_match"]])
def test_boost_may_not_use_query_signals(sx: Client, signal: list[str]) -> None:
    rejects(
        sx,
        {
            "q": "x",
            "sources": [source("s", "importance")],
            "fuse": {"kind": "rrf"},
            "boost": ["sum", [signal]],
        },
        "boost",
        1,
        0,
    )


@pytest.mark.parametrize(
    ("boost", "factor"),
    [
        pytest.param(["sum", [["const", 1]] * 15], 15.0, id="16-nodes"),
        pytest.param(
            ["sum", [["max", [["product", 2, ["saturate", ["const", 1], {"midpoint": 1, "exponent": 1}]]]]]],
            1.0,
            id="5-levels",
        ),
    ],
)
def test_a_boost_at_the_expression_limits_multiplies_the_rrf_value(
    sx: Client, boost: Any, factor: float
) -> None:
    """Spec: boost "is an optional expression applied after merging … The final value is
    RRF(record) * max(0, boost(record))"; "At most 16 nodes and 5 levels deep". At each limit the
    boost is accepted and multiplies 1/(60 + 1)."""
    write(sx, note())
    body = search(sx, {"sources": [{"name": "s", **RECENT}], "fuse": {"kind": "rrf"}, "boost": boost})
    assert [h["rank_score"] for h in body["hits"]] == pytest.approx([factor / 61])


def test_a_boost_that_overflows_the_merged_value_is_refused_not_a_500(sx: Client) -> None:
    """ "The final value is RRF(record) * max(0, boost(record))", "Every value produced must be
    finite" and the error table ("The request or a catalog reference is invalid | `422`"): a boost
    of 1e308 on an RRF value of 100 is not finite."""
    write(sx, note(scores={"urgency": 1}))
    heavy = fused(source("a", "urgency", 100), source("b", "urgency", 100), boost=["const", 1e308])
    rejects(sx, {**heavy, "fuse": {"kind": "rrf", "rank_constant": 1}})


# --- ties after fusion ----------------------------------------------------------------------------


def test_a_pool_that_ties_on_rrf_scores_1_and_falls_to_the_tie_order(sx: Client) -> None:
    """ "RRF(record) = sum over sources that found it of weight / (rank_constant + rank_in_source)",
    "if every candidate ties, every result scores 1.0" and "results are ordered by internal value
    descending, then by occurred_at descending": four sources rank four records as a Latin square,
    so every record's RRF is 1/3 + 1/4 + 1/5 + 1/6 — a tie, whatever order the terms are added in."""
    newest, second, third, oldest = write(
        sx,
        note("x", occurred_at="2026-07-04T00:00:00Z", scores={"importance": 4, "urgency": 3, "hidden": 2}),
        note("y", occurred_at="2026-07-03T00:00:00Z", scores={"importance": 3, "urgency": 4, "hidden": 1}),
        note("z", occurred_at="2026-07-02T00:00:00Z", scores={"importance": 2, "urgency": 1, "hidden": 4}),
        note("w", occurred_at="2026-07-01T00:00:00Z", scores={"importance": 1, "urgency": 2, "hidden": 3}),
    )
    reversed_importance = ["product", -1, ["score", "importance"]]
    body = search(
        sx,
        {
            **combined(
                ranked_by("i", "importance"),
                ranked_by("u", "urgency"),
                ranked_by("h", "hidden"),
                {**ranked_by("r", "importance"), "rank": reversed_importance},
            ),
            "fuse": {"kind": "rrf", "rank_constant": 2},
        },
    )
    assert by_id(body)[newest]["source_ranks"] == {"i": 1, "u": 2, "h": 3, "r": 4}
    assert [h["rank_score"] for h in body["hits"]] == [pytest.approx(1 / 3 + 1 / 4 + 1 / 5 + 1 / 6)] * 4
    assert [h["score"] for h in body["hits"]] == [1.0, 1.0, 1.0, 1.0]
    assert ids(body) == [newest, second, third, oldest]


def test_equal_rrf_sums_tie_at_the_default_constant(sx: Client) -> None:
    """ "results are ordered by internal value descending, then by occurred_at descending … These
    tie-breakers affect rank but not rank_score or score": with the default constant 60, ranks
    (1, 2, 7) and (7, 1, 2) in three sources both sum to 1/61 + 1/62 + 1/67, so the newer record
    comes first and both show the same rank_score and score."""
    older, newer, *_fillers = write(
        sx,
        note("x", occurred_at="2026-07-01T00:00:00Z", scores={"importance": 7, "urgency": 6, "hidden": 1}),
        note("y", occurred_at="2026-07-02T00:00:00Z", scores={"importance": 1, "urgency": 7, "hidden": 6}),
        *(
            note(
                f"f{i}",
                occurred_at="2026-06-01T00:00:00Z",
                scores={"importance": 7 - i, "urgency": 6 - i, "hidden": 8 - i - (i > 1)},
            )
            for i in range(1, 6)
        ),
    )
    body = search(
        sx, combined(ranked_by("a", "importance"), ranked_by("b", "urgency"), ranked_by("c", "hidden"))
    )
    hits = by_id(body)
    assert hits[older]["source_ranks"] == {"a": 1, "b": 2, "c": 7}
    assert hits[newer]["source_ranks"] == {"a": 7, "b": 1, "c": 2}
    order = ids(body)
    assert order.index(newer) == order.index(older) - 1
    assert hits[newer]["rank_score"] == hits[older]["rank_score"]
    assert hits[newer]["score"] == hits[older]["score"]


def test_boost_multiplies_before_graph_proximity_adds(sx: Client) -> None:
    """ "The final value is RRF(record) * max(0, boost(record)). boost multiplies; the separate
    graph_boost adds" and "Merge multiple searches with weighted RRF and the optional multiplying
    boost, then add any graph proximity and sort again": 3/61 for the plain record against
    3/62 + 0.01 for the anchor's (not (1/62 + 0.01) * 3)."""
    write(sx, link("people/maya", "advises", "companies/acme"))
    plain, maya = write(
        sx, note("p", scores={"importance": 2}), note("m", entity="people/maya", scores={"importance": 1})
    )
    body = search(
        sx,
        combined(
            ranked_by("s", "importance"),
            boost=["const", 3],
            graph_boost={"anchor": "people/maya", "weight": 0.01},
        ),
    )
    hits = by_id(body)
    assert hits[plain]["rank_score"] == pytest.approx(3 / 61)
    assert hits[maya]["rank_score"] == pytest.approx(3 / 62 + 0.01)
    assert ids(body) == [maya, plain]
    assert body["graph_boost"] == {
        "anchor": "people/maya",
        "depth": 2,
        "weight": 0.01,
        "matched_records": 1,
        "edge_count": 1,
    }


def test_a_source_with_nothing_to_judge_adds_no_judgments(sx: Client, server: OpenAIServer) -> None:
    """ "Each search sends at most its first N results to the catalog's cheap model" and
    "judged_records is then the total across them": a source that found nothing sends nothing."""
    (record,) = write(sx, note("budget a"))
    server.reply_with(judge_by_text({"budget a": 0.4}))
    body = search(
        sx,
        combined(
            {"name": "n", "mode": "text", "scope": NOTES},
            {"name": "x", "mode": "text", "scope": EXTRA},
            q="budget",
            rerank={"backend": "llm_judge", "top_n": 3},
        ),
    )
    assert ids(body) == [record]
    assert body["rerank"]["judged_records"] == 1
    assert len(chat_calls(server)) == 1


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


# --- more of the merge ----------------------------------------------------------------------------


def test_truncated_rendering_leaves_the_merged_json_whole(sx_with: ClientFactory, sx: Client) -> None:
    """ "When the next complete row would exceed the budget, rendering stops, appends a [...]
    truncated row, and sets truncated: true in the response. The JSON results are unaffected."\""""
    write(sx, *(note(f"row {i} " + "word " * 40, scores={"importance": i}) for i in range(6)))
    body = ok(
        sx_with(search_render_tokens=300).post(
            "/search", json=combined(ranked_by("a", "importance"), ranked_by("b", "importance"), render=True)
        )
    )
    assert len(body["hits"]) == 6
    assert body["truncated"] is True
    assert body["rendered"].splitlines()[-1] == "[...] truncated"
    assert [h["rank"] for h in body["hits"]] == [1, 2, 3, 4, 5, 6]


def test_a_boost_over_a_missing_or_tied_signal_zeroes_every_value(sx: Client) -> None:
    """ "Any missing signal is 0", normalize: "If every candidate ties, all become 0", "The final
    value is RRF(record) * max(0, boost(record))" and "if every candidate ties, every result scores
    1.0": every value becomes 0, so the order falls to occurred_at descending."""
    early, late = write(
        sx,
        note("a", occurred_at="2026-07-01T00:00:00Z", scores={"importance": 9, "urgency": 3}),
        note("b", occurred_at="2026-07-02T00:00:00Z", scores={"importance": 1, "urgency": 3}),
    )
    for boost in (["normalize", ["score", "urgency"]], ["score", "c5_nobody_wrote_this"]):
        body = search(sx, combined(ranked_by("s", "importance"), boost=boost))
        assert ids(body) == [late, early]
        assert [h["rank_score"] for h in body["hits"]] == [0, 0]
        assert [h["score"] for h in body["hits"]] == [1.0, 1.0]
        assert [h["source_ranks"] for h in body["hits"]] == [{"s": 2}, {"s": 1}]


@pytest.mark.parametrize(
    ("body", "loc"),
    [
        pytest.param(
            combined({"name": "t", "mode": "text", "scope": NOTES}, q="   "),
            ("q",),
            id="blank-q-for-a-text-source",
        ),
        pytest.param(
            combined(ranked_by("r", "importance"), q="x" * 8193), ("q",), id="q-over-8192-characters"
        ),
    ],
)
def test_q_rules_hold_for_combined_searches(sx: Client, body: dict[str, Any], loc: tuple[Any, ...]) -> None:
    """ "vector, text, and hybrid all require a non-empty query string q" and "q — the query text,
    up to 8,192 characters by default"."""
    rejects(sx, body, *loc)
