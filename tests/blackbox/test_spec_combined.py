"""Spec "Combining several searches": rules, weighted RRF, the worked example, source_ranks, boost."""

from __future__ import annotations

from typing import Any

import pytest

from tests.blackbox.fusion_support import extra
from tests.blackbox.fusion_support import source
from tests.blackbox.support import SCORED_RANKING
from tests.blackbox.support import ids
from tests.blackbox.support import note
from tests.blackbox.support import rejects
from tests.blackbox.support import search
from tests.blackbox.support import write
from tests.conftest import Client

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


def test_score_is_min_max_over_the_merged_pool_before_the_top_level_k(sx: Client) -> None:
    write(sx, *(note(f"n{i}", scores={"importance": 10 - i}) for i in range(3)))
    body = search(sx, {"sources": [source("only", "importance")], "fuse": {"kind": "rrf"}, "k": 2})
    low, high, middle = 1 / 63, 1 / 61, 1 / 62
    assert [h["score"] for h in body["hits"]] == [1.0, pytest.approx((middle - low) / (high - low))]


def test_each_source_is_cut_to_its_own_k_before_merging(sx: Client) -> None:
    write(sx, *(note(f"n{i}", scores={"importance": i}) for i in range(10)))
    body = search(sx, {"sources": [source("a", "importance", k=3)], "fuse": {"kind": "rrf"}, "k": 10})
    assert len(body["hits"]) == 3
    assert [h["source_ranks"] for h in body["hits"]] == [{"a": 1}, {"a": 2}, {"a": 3}]


def test_top_level_k_defaults_to_20_after_merging(sx: Client) -> None:
    write(sx, *(note(f"n{i}") for i in range(15)))
    write(sx, *(extra(f"x{i}") for i in range(15)))
    body = search(
        sx,
        {
            "sources": [
                {"name": "a", "mode": "recent", "scope": NOTES},
                {"name": "b", "mode": "recent", "scope": EXTRA},
            ],
            "fuse": {"kind": "rrf"},
        },
    )
    assert len(body["hits"]) == 20


def test_combined_response_shape(sx: Client) -> None:
    write(sx, note("budget"), extra("budget"))
    body = search(
        sx,
        {
            "q": "budget",
            "sources": [
                {"name": "events", "mode": "text", "scope": NOTES},
                {"name": "latest", "mode": "recent", "scope": EXTRA},
            ],
            "fuse": {"kind": "rrf"},
        },
    )
    assert body.keys() == {"hits", "ranking", "rendered", "truncated", "backend", "profiles"}
    assert body["backend"] == [
        {"source": "events", "name": "pg", "layout": None, "candidate_count": 1},
        {"source": "latest", "name": "pg", "layout": None, "candidate_count": 1},
    ]
    for hit in body["hits"]:
        assert hit.keys() == {"id", "rank", "score", "rank_score", "source_ranks"}
    assert body["ranking"] == SCORED


def test_structured_source_inside_a_combined_search(sx: Client) -> None:
    small, big = write(sx, note(content={"amount": 1}), note(content={"amount": 2}))
    body = search(
        sx,
        {
            "sources": [
                {
                    "name": "s",
                    "mode": "structured",
                    "scope": NOTES,
                    "order_by": [{"field": "amount", "direction": "desc"}],
                }
            ],
            "fuse": {"kind": "rrf"},
        },
    )
    assert ids(body) == [big, small]
    assert body["ranking"]["kind"] == "rrf"
    assert [h["rank_score"] for h in body["hits"]] == [pytest.approx(1 / 61), pytest.approx(1 / 62)]


def test_output_controls_apply_to_combined_searches(sx: Client) -> None:
    write(sx, note("hello", content={"channel": "email"}))
    body = search(
        sx,
        {
            "sources": [{"name": "s", "mode": "recent", "scope": NOTES}],
            "fuse": {"kind": "rrf"},
            "include": ["text"],
            "fields": ["channel"],
            "render": True,
            "fence": {"tag": "records"},
        },
    )
    (hit,) = body["hits"]
    assert hit["text"] == "hello" and hit["fields"] == {"channel": "email"}
    assert body["rendered"].startswith('<records untrusted="true">\n[id=')


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


# --- validation -----------------------------------------------------------------------------------


def combined_request(**overrides: Any) -> dict[str, Any]:
    body: dict[str, Any] = {
        "q": "x",
        "sources": [{"name": "a", "mode": "recent", "scope": NOTES}],
        "fuse": {"kind": "rrf"},
    }
    return {**body, **overrides}


def many(count: int) -> list[dict[str, Any]]:
    return [{"name": f"s{i}", "mode": "recent", "scope": NOTES} for i in range(count)]


def test_one_to_eight_sources(sx: Client) -> None:
    assert len(search(sx, combined_request(sources=many(8)))["backend"]) == 8
    rejects(sx, combined_request(sources=many(9)), "sources")
    rejects(sx, combined_request(sources=[]), "sources")


@pytest.mark.parametrize(
    ("overrides", "loc"),
    [
        pytest.param({"sources": [*many(1), *many(1)]}, ("sources", 1, "name"), id="duplicate-name"),
        pytest.param({"fuse": None}, ("fuse",), id="fuse-null"),
        pytest.param({"fuse": {"kind": "linear"}}, ("fuse", "kind"), id="fuse-kind"),
        pytest.param(
            {"fuse": {"kind": "rrf", "rank_constant": 0}}, ("fuse", "rank_constant"), id="constant-0"
        ),
        pytest.param(
            {"fuse": {"kind": "rrf", "rank_constant": 1001}}, ("fuse", "rank_constant"), id="constant-1001"
        ),
        pytest.param({"fuse": {"kind": "rrf", "k": 60}}, ("fuse", "k"), id="fuse-unknown-key"),
        pytest.param({"mode": "recent"}, ("mode",), id="top-level-mode"),
        pytest.param({"scope": NOTES}, ("scope",), id="top-level-scope"),
        pytest.param({"where": {"channel": {"eq": "x"}}}, ("where",), id="top-level-where"),
        pytest.param({"order_by": [{"field": "amount"}]}, ("order_by",), id="top-level-order-by"),
        pytest.param({"rank": ["const", 1]}, ("rank",), id="top-level-rank"),
        pytest.param({"params": {"candidates": 10}}, ("params",), id="top-level-params"),
        pytest.param({"k": 0}, ("k",), id="k-0"),
        pytest.param({"k": 101}, ("k",), id="k-101"),
    ],
)
def test_combined_rules(sx: Client, overrides: dict[str, Any], loc: tuple[Any, ...]) -> None:
    body = combined_request(**overrides)
    if body.get("fuse") is None:
        del body["fuse"]
    rejects(sx, body, *loc)


@pytest.mark.parametrize(
    ("change", "loc"),
    [
        pytest.param({"weight": 0}, ("weight",), id="weight-0"),
        pytest.param({"weight": -1}, ("weight",), id="weight-negative"),
        pytest.param({"weight": 100.5}, ("weight",), id="weight-over-100"),
        pytest.param({"k": 0}, ("k",), id="k-0"),
        pytest.param({"k": 101}, ("k",), id="k-101"),
        pytest.param({"scope": {}}, ("scope", "collections"), id="collections-required"),
        pytest.param({"name": None}, ("name",), id="name-required"),
        pytest.param({"fuse": {"kind": "rrf"}}, ("fuse",), id="unknown-key"),
        pytest.param({"mode": "structured"}, ("order_by",), id="structured-needs-order-by"),
        pytest.param({"mode": "text", "rank": ["similarity"]}, ("rank",), id="rank-signal-for-mode"),
    ],
)
def test_source_rules(sx: Client, change: dict[str, Any], loc: tuple[Any, ...]) -> None:
    one = {"name": "a", "mode": "recent", "scope": NOTES, **change}
    one = {key: value for key, value in one.items() if value is not None}
    err = rejects(sx, combined_request(sources=[one]))
    assert any(d["loc"][: 2 + len(loc)] == ["sources", 0, *loc] for d in err["details"]), err


def test_weight_100_and_rank_constant_bounds_are_inclusive(sx: Client) -> None:
    body = combined_request(
        sources=[{"name": "a", "mode": "recent", "scope": NOTES, "weight": 100, "k": 100}],
        fuse={"kind": "rrf", "rank_constant": 1000},
    )
    search(sx, body)
    search(sx, combined_request(fuse={"kind": "rrf", "rank_constant": 1}))


def test_weight_defaults_to_1_and_rank_constant_to_60(sx: Client) -> None:
    write(sx, note())
    (hit,) = search(sx, combined_request())["hits"]
    assert hit["rank_score"] == pytest.approx(1 / 61)


def test_q_is_required_when_a_source_needs_it(sx: Client) -> None:
    body = combined_request(sources=[{"name": "a", "mode": "text", "scope": NOTES}])
    del body["q"]
    rejects(sx, body, "q")
    body = combined_request()
    del body["q"]
    search(sx, body)
