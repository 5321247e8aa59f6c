"""A ninth adversarial audit, from the angle of model reranking and the graph proximity boost:
the arithmetic after a boost, the tie order after a boost, the public score after reranking,
reranking and a graph boost in one request, both stages inside views, which links the boost's
walk uses, and a judge that answers badly.

Every test quotes the sentence of views-and-search.md it checks; expected values come from the
spec's formulas, never from the service's output.
"""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from memseek.runtime import Runtime
from tests.blackbox.conftest import environ
from tests.blackbox.fusion_support import chat_calls
from tests.blackbox.rerank_support import judge
from tests.blackbox.support import SCORED_RANKING
from tests.blackbox.support import at
from tests.blackbox.support import ids
from tests.blackbox.support import link
from tests.blackbox.support import note
from tests.blackbox.support import part
from tests.blackbox.support import rejects
from tests.blackbox.support import search
from tests.blackbox.support import sx_catalog
from tests.blackbox.support import vec
from tests.blackbox.support import write
from tests.conftest import Client
from tests.conftest import Tenant
from tests.conftest import client_for
from tests.helpers import error
from tests.helpers import ok
from tests.helpers import runtime_for
from tests.helpers import view_query
from tests.openai_server import OpenAIServer

# --- the public score after reranking -------------------------------------------------------------


JUDGED = {"kind": "llm_judge", **SCORED_RANKING}
"""The spec's ranking contract of a reranked single search: "ranking.kind: llm_judge"."""
IMP = ["score", "importance"]
NOTES = {"collections": ["sx_notes"]}


def text_search(top_n: int, **extra: Any) -> dict[str, Any]:
    """A text search over sx_notes for "budget", ordered by importance, reranked with `top_n`."""
    return {
        "mode": "text",
        "q": "budget",
        "scope": NOTES,
        "rank": IMP,
        "rerank": {"backend": "llm_judge", "top_n": top_n},
        **extra,
    }


@pytest.fixture
def three(sx: Client) -> dict[str, str]:
    """Three text matches whose ordinary order is a, b, c (importance 3, 2, 1)."""
    names = ["a", "b", "c"]
    written = write(sx, *(note(f"budget {n}", scores={"importance": 3 - i}) for i, n in enumerate(names)))
    return dict(zip(names, written, strict=True))


def test_scores_are_rescaled_over_the_judged_range(
    sx: Client, server: OpenAIServer, three: dict[str, str]
) -> None:
    """ "Judged results are reordered by the model's score ... Public scores are then rescaled over
    the new range" and "score = (u - low) / (high - low)": every candidate judged 0.2, 1.0 and 0.6
    → c, a, b scoring 1, 0.5 and 0 (any value that orders by the model's score, shifted or not,
    gives these)."""
    server.reply_with(judge({"budget a": 0.6, "budget b": 0.2, "budget c": 1.0}))
    body = search(sx, text_search(3))
    assert ids(body) == [three["c"], three["a"], three["b"]]
    assert [h["score"] for h in body["hits"]] == pytest.approx([1.0, 0.5, 0.0])
    assert [h["rank"] for h in body["hits"]] == [1, 2, 3]
    assert body["ranking"] == JUDGED
    rank_scores = [h["rank_score"] for h in body["hits"]]
    assert rank_scores[0] - rank_scores[1] == pytest.approx(0.4)
    assert rank_scores[1] - rank_scores[2] == pytest.approx(0.4)


def test_a_judged_tie_keeps_the_previous_order_and_shares_its_score(
    sx: Client, server: OpenAIServer, three: dict[str, str]
) -> None:
    """ "Judged results are reordered by the model's score, ties broken by the previous order" and
    "These tie-breakers affect rank but not rank_score or score": every record judged 0.7 keeps
    a, b, c with equal values, so every score is 1 ("if every candidate ties, every result scores
    1.0")."""
    server.reply_with(judge({"budget a": 0.7, "budget b": 0.7, "budget c": 0.7}))
    body = search(sx, text_search(3))
    assert ids(body) == [three["a"], three["b"], three["c"]]
    assert [h["score"] for h in body["hits"]] == [1.0, 1.0, 1.0]
    assert len({h["rank_score"] for h in body["hits"]}) == 1


VEC = {"collections": ["sx_vec"]}


@pytest.mark.parametrize("mode", ["text", "vector", "hybrid"])
def test_every_query_mode_can_be_reranked(sx: Client, server: OpenAIServer, mode: str) -> None:
    """ "It is allowed only when every search uses text, vector, or hybrid mode" and "Single-search
    responses report ranking.kind: llm_judge plus" the rerank object: the judge puts the record it
    scores highest first whatever the mode."""
    first, second = write(
        sx, vec("budget plan", scores={"importance": 2}), vec("budget", scores={"importance": 1})
    )
    server.reply_with(judge({"budget plan": 0.1, "budget": 0.9}))
    body = search(
        sx,
        {
            "mode": mode,
            "q": "budget",
            "scope": VEC,
            "rank": IMP,
            "rerank": {"backend": "llm_judge", "top_n": 5},
        },
    )
    assert ids(body) == [second, first]
    assert body["ranking"] == JUDGED
    assert body["rerank"] == {"backend": "llm_judge", "top_n": 5, "model": "cheap", "judged_records": 2}
    assert [h["score"] for h in body["hits"]] == [1.0, 0.0]


# --- reranking and the graph boost in one request -------------------------------------------------


def min_max(pool: list[float]) -> list[float]:
    """The spec's public score of each value over the pool."""
    low, high = min(pool), max(pool)
    return [1.0 if high == low else (v - low) / (high - low) for v in pool]


def values(body: dict[str, Any], name: str) -> dict[str, Any]:
    """`name` of each hit, by id."""
    return {hit["id"]: hit[name] for hit in body["hits"]}


@pytest.fixture
def maya_graph(sx: Client) -> None:
    """people/maya → companies/acme → widget."""
    write(sx, link("people/maya", "advises", "companies/acme"), link("companies/acme", "makes", "widget"))


def test_the_boost_adds_to_the_reranked_value(sx: Client, server: OpenAIServer, maya_graph: None) -> None:
    """ "Rank each search ... then optionally rerank a bounded prefix with a model. Combine. ...
    then add any graph proximity and sort again", "boosted = previous + weight / (distance + 1)" and
    "Unmatched results are untouched": against the same judgments without a boost, the anchor's
    record gains exactly 0.5, acme's 0.25, the unmatched record nothing, and the order follows."""
    maya, acme, other = write(
        sx,
        note("budget maya", entity="people/maya", scores={"importance": 3}),
        note("budget acme", entity="companies/acme", scores={"importance": 2}),
        note("budget other", entity="other", scores={"importance": 1}),
    )
    scores = {"budget maya": 0.1, "budget acme": 0.3, "budget other": 0.5}
    server.reply_with(judge(scores), judge(scores))
    plain = search(sx, text_search(3))
    assert ids(plain) == [other, acme, maya]
    boost = {"graph": "sx_walk", "anchor": "people/maya", "weight": 0.5}
    body = search(sx, text_search(3, graph_boost=boost))
    before, after = values(plain, "rank_score"), values(body, "rank_score")
    assert after[maya] - before[maya] == pytest.approx(0.5)
    assert after[acme] - before[acme] == pytest.approx(0.25)
    assert after[other] == pytest.approx(before[other])
    assert ids(body) == [maya, acme, other]  # judged 0.1 + 0.5 and 0.3 + 0.25 both pass 0.5
    pool = [after[i] for i in ids(body)]
    assert [h["score"] for h in body["hits"]] == pytest.approx(min_max(pool))
    assert body["ranking"] == JUDGED
    assert body["rerank"] == {"backend": "llm_judge", "top_n": 3, "model": "cheap", "judged_records": 3}
    assert body["graph_boost"] == {
        "anchor": "people/maya",
        "depth": 2,
        "weight": 0.5,
        "matched_records": 2,
        "edge_count": 2,
    }


def test_a_boost_that_matches_nothing_leaves_a_reranked_search_as_it_was(
    sx: Client, server: OpenAIServer, three: dict[str, str]
) -> None:
    """ "Unmatched results are untouched" and "Each search sends at most its first N results to the
    catalog's cheap model": with k 1 and top_n 3, adding a boost around an anchor no record
    touches may not change what is judged, the order, the values or the scores."""
    scores = {"budget a": 0.1, "budget b": 0.2, "budget c": 0.9}
    server.reply_with(judge(scores), judge(scores))
    plain = search(sx, text_search(3, k=1))
    boosted = search(sx, text_search(3, k=1, graph_boost={"anchor": "nobody", "weight": 1.0}))
    assert boosted["graph_boost"]["matched_records"] == 0
    assert [(h["id"], h["rank_score"], h["score"]) for h in boosted["hits"]] == [
        (h["id"], h["rank_score"], h["score"]) for h in plain["hits"]
    ]
    assert boosted["rerank"] == plain["rerank"]


def test_a_combined_search_reranks_each_source_then_boosts_the_merge(
    sx: Client, server: OpenAIServer, maya_graph: None
) -> None:
    """ "When several searches are combined, reranking happens independently inside each one before
    merging", "RRF(record) = sum over sources that found it of weight / (rank_constant + rank)",
    "boosted = previous + weight / (distance + 1)" and "ranking.kind stays rrf": the judge reverses
    the source, the anchor's record (now 2nd) gains 0.001."""
    maya, other = write(
        sx,
        note("budget maya", entity="people/maya", scores={"importance": 2}),
        note("budget other", entity="other", scores={"importance": 1}),
    )
    server.reply_with(judge({"budget maya": 0.2, "budget other": 0.8}))
    body = search(
        sx,
        {
            "q": "budget",
            "sources": [{"name": "s", "mode": "text", "scope": NOTES, "rank": IMP}],
            "fuse": {"kind": "rrf"},
            "rerank": {"backend": "llm_judge", "top_n": 2},
            "graph_boost": {"anchor": "people/maya", "weight": 0.001},
        },
    )
    assert ids(body) == [maya, other]
    assert values(body, "source_ranks") == {maya: {"s": 2}, other: {"s": 1}}
    assert values(body, "rank_score") == pytest.approx({maya: 1 / 62 + 0.001, other: 1 / 61})
    assert body["ranking"] == {"kind": "rrf", **SCORED_RANKING}
    assert body["rerank"]["judged_records"] == 2 and body["graph_boost"]["matched_records"] == 1


# --- the arithmetic and the tie order after a boost -----------------------------------------------


def test_a_node_reached_two_ways_counts_its_shortest_distance(sx: Client) -> None:
    """ "Memseek walks links in both directions from the anchor, records the shortest distance to
    every node it reaches" and "the response reports ... how many links the walk used": with
    maya → acme → widget and maya → widget, widget is one link away (+1/2, not +1/3) and the walk
    used three links."""
    write(
        sx,
        link("people/maya", "advises", "companies/acme"),
        link("companies/acme", "makes", "widget"),
        link("people/maya", "uses", "widget"),
    )
    (widget,) = write(sx, note("widget", entity="widget", scores={"importance": 0}))
    body = search(
        sx,
        {
            "mode": "recent",
            "scope": NOTES,
            "rank": IMP,
            "graph_boost": {"anchor": "people/maya", "weight": 1},
        },
    )
    assert values(body, "rank_score") == pytest.approx({widget: 0.5})
    assert body["graph_boost"]["edge_count"] == 3 and body["graph_boost"]["matched_records"] == 1


@pytest.mark.parametrize(
    ("boosted_at", "plain_at", "boosted_first"),
    [
        pytest.param(at(2), at(1), True, id="boosted-newer"),
        pytest.param(at(1), at(2), False, id="plain-newer"),
    ],
)
def test_a_tie_after_the_boost_breaks_by_occurred_at(
    sx: Client, boosted_at: str, plain_at: str, boosted_first: bool
) -> None:
    """ "then everything is sorted and rescaled again" and "results are ordered by internal value
    descending, then by occurred_at descending ... These tie-breakers affect rank but not rank_score
    or score": 0 + 1/(1 + 1) ties 0.5 exactly; the newer record leads and both score 1."""
    write(sx, link("people/maya", "advises", "companies/acme"))
    boosted, plain = write(
        sx,
        note("acme", entity="companies/acme", scores={"importance": 0}, occurred_at=boosted_at),
        note("plain", entity="other", scores={"importance": 0.5}, occurred_at=plain_at),
    )
    body = search(
        sx,
        {
            "mode": "recent",
            "scope": NOTES,
            "rank": IMP,
            "graph_boost": {"anchor": "people/maya", "weight": 1},
        },
    )
    assert ids(body) == ([boosted, plain] if boosted_first else [plain, boosted])
    assert [h["rank_score"] for h in body["hits"]] == [0.5, 0.5]
    assert [h["score"] for h in body["hits"]] == [1.0, 1.0]


def test_a_tie_after_the_boost_at_one_moment_breaks_by_ingestion_order(sx: Client) -> None:
    """ "then by occurred_at descending, then by ingestion order descending": the same moment, so
    the later-written record leads."""
    write(sx, link("people/maya", "advises", "companies/acme"))
    plain, boosted = write(
        sx,
        note("plain", entity="other", scores={"importance": 0.5}, occurred_at=at(1)),
        note("acme", entity="companies/acme", scores={"importance": 0}, occurred_at=at(1)),
    )
    (later_plain,) = write(sx, note("plain 2", entity="other", scores={"importance": 0.5}, occurred_at=at(1)))
    body = search(
        sx,
        {
            "mode": "recent",
            "scope": NOTES,
            "rank": IMP,
            "graph_boost": {"anchor": "people/maya", "weight": 1},
        },
    )
    assert ids(body) == [later_plain, boosted, plain]


def test_a_boost_that_lifts_the_lowest_record_rescales_every_score(sx: Client) -> None:
    """ "With graph_boost | The same pools, but measured after the boost is added": importance
    3, 2, 1.25 and 1 for the anchor's record with weight 0.5 → values 3, 2, 1.5, 1.25; the public
    score runs from 1.25 (no longer 1) to 3."""
    write(sx, link("people/maya", "advises", "companies/acme"))
    top, mid, low, maya = write(
        sx,
        note("top", entity="e", scores={"importance": 3}),
        note("mid", entity="e", scores={"importance": 2}),
        note("low", entity="e", scores={"importance": 1.25}),
        note("maya", entity="people/maya", scores={"importance": 1}),
    )
    body = search(
        sx,
        {
            "mode": "recent",
            "scope": NOTES,
            "rank": IMP,
            "graph_boost": {"anchor": "people/maya", "weight": 0.5},
        },
    )
    assert ids(body) == [top, mid, maya, low]
    assert [h["rank_score"] for h in body["hits"]] == pytest.approx([3, 2, 1.5, 1.25])
    assert [h["score"] for h in body["hits"]] == pytest.approx(min_max([3, 2, 1.5, 1.25]))


def test_a_structured_boost_lifts_a_record_from_below_k(sx: Client, maya_graph: None) -> None:
    """ "Graph boost is also permitted on a single structured search. Proximity can reorder
    structured results, but the response still reports ranking.kind: structured" and "add any graph
    proximity and sort again. Finalize. ... take the top-level k": with k 1, the anchor's record,
    last by amount, is the one result."""
    write(sx, note(content={"amount": 1}), note(content={"amount": 2}))
    (maya,) = write(sx, note(entity="people/maya", content={"amount": 3}))
    body = search(
        sx,
        {
            "mode": "structured",
            "scope": NOTES,
            "order_by": [{"field": "amount"}],
            "k": 1,
            "graph_boost": {"anchor": "people/maya"},
        },
    )
    assert ids(body) == [maya]
    assert body["hits"] == [{"id": maya, "rank": 1, "score": None}]
    assert body["ranking"] == {"kind": "structured", "scored": False}


def test_rendered_rows_follow_the_reranked_and_boosted_order(
    sx: Client, server: OpenAIServer, maya_graph: None
) -> None:
    """ "Setting render: true also returns a compact text block of the same results" and `rank`
    is the "Final position after every stage of ordering": rows in the final order."""
    maya, other = write(
        sx,
        note("budget maya", entity="people/maya", scores={"importance": 2}),
        note("budget other", entity="other", scores={"importance": 1}),
    )
    server.reply_with(judge({"budget maya": 0.0, "budget other": 0.25}))
    body = search(sx, text_search(2, render=True, graph_boost={"anchor": "people/maya", "weight": 0.5}))
    assert ids(body) == [maya, other]  # judged 0.25 behind 0.0 + 0.5
    assert re.findall(r"\[id=([0-9a-f-]+)\]", body["rendered"]) == [maya, other]


# --- which links the boost's walk uses ------------------------------------------------------------


def test_the_boost_skips_retracted_links(sx: Client) -> None:
    """Graph views: "Walks skip links that are unprocessed, superseded, or retracted"; graph_boost
    "walks links in both directions from the anchor": a retracted link reaches nothing."""
    gone, _kept = write(sx, link("hub", "r", "gone"), link("hub", "r", "kept"))
    ok(sx.post(f"/records/{gone}/retract", json={"reason": "wrong"}))
    far, near = write(sx, note("gone", entity="gone"), note("kept", entity="kept"))
    body = search(
        sx, {"mode": "recent", "scope": NOTES, "rank": ["const", 0], "graph_boost": {"anchor": "hub"}}
    )
    assert values(body, "rank_score") == pytest.approx({far: 0.0, near: 0.025})
    assert body["graph_boost"]["edge_count"] == 1 and body["graph_boost"]["matched_records"] == 1


def test_the_boost_skips_superseded_automatic_links(sx: Client) -> None:
    """ "Walks skip links that are unprocessed, superseded, or retracted" and "A link produced
    automatically from a node stays live only while that exact node record is still current": after
    engine's needs change from fuel to battery, only battery is near engine."""
    write(sx, part("engine", ["fuel"]))
    write(sx, part("engine", ["battery"]))
    fuel, battery = write(sx, note("fuel", entity="fuel"), note("battery", entity="battery"))
    body = search(
        sx,
        {
            "mode": "recent",
            "scope": NOTES,
            "rank": ["const", 0],
            "graph_boost": {"anchor": "engine", "weight": 1},
        },
    )
    assert values(body, "rank_score") == pytest.approx({fuel: 0.0, battery: 0.5})
    assert body["graph_boost"]["edge_count"] == 1


# --- both stages inside views ---------------------------------------------------------------------


def test_a_boosted_view_orders_and_scores_like_the_search_it_holds(sx: Client, maya_graph: None) -> None:
    """ "its results, ordering, scores, rendering, and diagnostics mean exactly what they mean
    above" and "The view wrapper does not currently forward the optional rerank or graph_boost
    diagnostic objects, although the ordering and scores already reflect those stages": sx_boosted
    with anchor widget answers what its query answers through POST /search."""
    write(
        sx,
        note("maya", entity="people/maya", scores={"importance": 1}),
        note("acme", entity="companies/acme", scores={"importance": 1.4}),
        note("widget", entity="widget", scores={"importance": 0.2}),
        note("other", entity="other", scores={"importance": 1.6}),
    )
    direct = search(
        sx,
        {
            "mode": "recent",
            "scope": NOTES,
            "rank": IMP,
            "graph_boost": {"anchor": "widget", "weight": 1.0},
            "k": 5,
        },
    )
    view = ok(view_query(sx, "sx_boosted", {"anchor": "widget"}))
    shown = [(h["id"], h["rank"], h["rank_score"], h["score"]) for h in view["hits"]]
    assert shown == [(h["id"], h["rank"], h["rank_score"], h["score"]) for h in direct["hits"]]
    assert [h["rank_score"] for h in view["hits"]] == pytest.approx([1.9, 1.6, 1 + 1 / 3, 1.2])
    assert view["input_record_ids"] == ids(view)
    assert "graph_boost" not in view and "rerank" not in view


def test_a_reranked_view_orders_and_scores_like_the_search_it_holds(
    sx: Client, server: OpenAIServer, three: dict[str, str]
) -> None:
    """ "The view wrapper does not currently forward the optional rerank or graph_boost diagnostic
    objects, although the ordering and scores already reflect those stages": sx_judged (text over
    sx_notes, top_n 3) answers what the same search answers, with ranking.kind llm_judge."""
    scores = {"budget a": 0.5, "budget b": 1.0, "budget c": 0.0}
    server.reply_with(judge(scores), judge(scores))
    direct = search(
        sx, {"q": "budget", "mode": "text", "scope": NOTES, "rerank": {"backend": "llm_judge", "top_n": 3}}
    )
    view = ok(view_query(sx, "sx_judged", {"task": "budget"}))
    assert ids(view) == [three["b"], three["a"], three["c"]] == ids(direct)
    assert [h["score"] for h in view["hits"]] == pytest.approx([1.0, 0.5, 0.0])
    assert [h["score"] for h in view["hits"]] == [h["score"] for h in direct["hits"]]
    assert [h["rank_score"] for h in view["hits"]] == [h["rank_score"] for h in direct["hits"]]
    assert view["ranking"] == JUDGED
    assert "rerank" not in view and "graph_boost" not in view


# --- a judge that answers badly -------------------------------------------------------------------


@pytest.mark.parametrize(
    "judgments",
    [
        pytest.param([{"id": "r1", "score": "0.5"}, {"id": "r2", "score": 0.5}], id="numeric-string"),
        pytest.param([{"id": "r1", "score": True}, {"id": "r2", "score": 0.5}], id="boolean"),
        pytest.param([{"id": "r1", "score": None}, {"id": "r2", "score": 0.5}], id="null-score"),
        pytest.param([{"id": "r1"}, {"id": "r2", "score": 0.5}], id="no-score"),
        pytest.param([{"id": "r1", "score": 0.5}, {"id": "r9", "score": 0.5}], id="substituted-id"),
        pytest.param([{"id": 1, "score": 0.5}, {"id": "r2", "score": 0.5}], id="integer-id"),
        pytest.param([{"score": 0.5}, {"id": "r2", "score": 0.5}], id="no-id"),
        pytest.param([], id="empty"),
        pytest.param({"r1": 0.5, "r2": 0.5}, id="judgments-an-object"),
    ],
)
def test_a_bad_judgment_fails_the_search(sx: Client, server: OpenAIServer, judgments: Any) -> None:
    """ "The model must return every record it was given, exactly once, scored 0–1. A missing,
    extra, duplicate, or invalid judgment fails the search instead of quietly falling back" and
    "the reranking model ... unavailable | 503"."""
    write(sx, note("budget one"), note("budget two"))
    server.reply_with(json.dumps({"judgments": judgments}))
    error(sx.post("/search", json=text_search(2)), 503)


@pytest.mark.parametrize("literal", ["NaN", "Infinity", "-Infinity"])
def test_a_non_finite_judgment_fails_the_search(sx: Client, server: OpenAIServer, literal: str) -> None:
    """ "scored 0–1 ... an invalid judgment fails the search": a score that is not a finite number
    (written as the non-standard JSON literals some producers emit) is invalid."""
    write(sx, note("budget one"), note("budget two"))
    server.reply_with(f'{{"judgments": [{{"id": "r1", "score": {literal}}}, {{"id": "r2", "score": 0.5}}]}}')
    error(sx.post("/search", json=text_search(2)), 503)


def test_scores_of_exactly_0_and_1_are_valid(sx: Client, server: OpenAIServer, three: dict[str, str]) -> None:
    """ "scored 0–1": both ends are valid judgments (the integers 0 and 1 included)."""
    server.reply_with(
        json.dumps(
            {"judgments": [{"id": "r1", "score": 0}, {"id": "r2", "score": 1}, {"id": "r3", "score": 0.5}]}
        )
    )
    body = search(sx, text_search(3))
    assert ids(body) == [three["b"], three["c"], three["a"]]
    assert [h["score"] for h in body["hits"]] == pytest.approx([1.0, 0.5, 0.0])


def test_a_failed_judgment_is_not_a_partial_answer(sx: Client, server: OpenAIServer) -> None:
    """ "fails the search instead of quietly falling back, so you always know whether reranking
    happened": the failure is the whole response, an error object and nothing else."""
    write(sx, note("budget one"), note("budget two"))
    server.reply_with(json.dumps({"judgments": [{"id": "r1", "score": 0.5}]}))
    response = sx.post("/search", json=text_search(2, graph_boost={"anchor": "nobody"}))
    error(response, 503)
    assert len(chat_calls(server)) == 1


@pytest.mark.parametrize(
    ("status", "answer"),
    [
        pytest.param(200, {"object": "chat.completion", "choices": []}, id="no-choices"),
        pytest.param(
            200,
            {"choices": [{"index": 0, "message": {"role": "assistant", "content": None}}]},
            id="null-content",
        ),
        pytest.param(200, b"<html>gateway</html>", id="not-json"),
        pytest.param(429, {"error": {"message": "slow down"}}, id="rate-limited"),
    ],
)
def test_a_judge_that_does_not_answer_the_protocol_is_503(
    sx: Client, server: OpenAIServer, status: int, answer: Any
) -> None:
    """ "Embeddings, search credentials, or the reranking model are unavailable | 503" and "fails the
    search instead of quietly falling back": a reply without a usable message."""
    write(sx, note("budget one"), note("budget two"))
    server.respond_next(answer, status=status)
    error(sx.post("/search", json=text_search(2)), 503)


def test_a_view_trims_an_anchor_its_parameter_filled(sx: Client, maya_graph: None) -> None:
    """graph_boost "anchor: people/maya  # trimmed, 1–128 characters" and a view call "fills the
    placeholders, and validates the finished request a second time": sx_boosted called with
    "  widget  " boosts exactly as with "widget"."""
    write(
        sx, note("widget", entity="widget", scores={"importance": 0}), note("x", scores={"importance": 0.4})
    )
    padded = ok(view_query(sx, "sx_boosted", {"anchor": "  widget  "}))
    plain = ok(view_query(sx, "sx_boosted", {"anchor": "widget"}))
    assert [h["rank_score"] for h in padded["hits"]] == pytest.approx([1.0, 0.4])
    assert ids(padded) == ids(plain)


# --- which graph a boost walks --------------------------------------------------------------------


@pytest.fixture(scope="session")
def rb9_runtimes(
    runtime: Runtime, sx_server: OpenAIServer, tmp_path_factory: pytest.TempPathFactory
) -> dict[str, Runtime]:
    """The sx_ catalog with two active graph views, and with none."""
    return {
        name: runtime_for(
            runtime, sx_catalog(tmp_path_factory.mktemp(f"rb9-{name}"), f"rb9-{name}"), environ(sx_server)
        )
        for name in ("two", "none")
    }


@pytest.mark.parametrize("catalog", ["two", "none"])
def test_graph_must_be_named_unless_exactly_one_graph_view_is_active(
    rb9_runtimes: dict[str, Runtime], tenant: Tenant, server: OpenAIServer, catalog: str
) -> None:
    """ "graph: dependency_graph  # optional when exactly one graph view is active": with two active
    graph views, or none, a boost that names no graph is a 422 at graph_boost.graph."""
    client = client_for(rb9_runtimes[catalog], tenant)
    rejects(
        client, {"mode": "recent", "scope": NOTES, "graph_boost": {"anchor": "hub"}}, "graph_boost", "graph"
    )


def test_a_named_graph_is_walked_when_two_are_active(
    rb9_runtimes: dict[str, Runtime], tenant: Tenant, server: OpenAIServer
) -> None:
    """ "graph: dependency_graph  # optional when exactly one graph view is active": naming one of
    two active graph views walks it (hub → spoke, one link: +weight/2)."""
    client = client_for(rb9_runtimes["two"], tenant)
    write(client, link("hub", "r", "spoke"))
    (spoke,) = write(client, note("spoke", entity="spoke", scores={"importance": 0}))
    body = search(
        client,
        {
            "mode": "recent",
            "scope": NOTES,
            "rank": IMP,
            "graph_boost": {"graph": "rb9_backward", "anchor": "hub", "weight": 1},
        },
    )
    assert values(body, "rank_score") == pytest.approx({spoke: 0.5})
    assert body["graph_boost"]["edge_count"] == 1 and body["graph_boost"]["matched_records"] == 1
