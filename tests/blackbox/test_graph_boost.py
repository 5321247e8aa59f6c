"""The graph proximity boost (spec "Graph proximity boost"): weight / (distance + 1) added for
records reached from the anchor, over live, processed links of the one graph it walks; the
arithmetic and tie order after a boost, with reranking, and inside views.
"""

from __future__ import annotations

import re
from typing import Any

import pytest
from flask import Flask

from memseek.runtime import Runtime
from tests.blackbox.conftest import environ
from tests.blackbox.design_support import process
from tests.blackbox.design_support import rec
from tests.blackbox.rerank_support import text_search
from tests.blackbox.support import MODES
from tests.blackbox.support import SCORED_RANKING
from tests.blackbox.support import at
from tests.blackbox.support import ids
from tests.blackbox.support import link
from tests.blackbox.support import min_max
from tests.blackbox.support import note
from tests.blackbox.support import part
from tests.blackbox.support import recent_body
from tests.blackbox.support import rejects
from tests.blackbox.support import search
from tests.blackbox.support import sx_catalog
from tests.blackbox.support import write
from tests.conftest import Client
from tests.conftest import Tenant
from tests.conftest import client_for
from tests.helpers import ok
from tests.helpers import runtime_for
from tests.helpers import view_query
from tests.helpers import with_models
from tests.helpers import written
from tests.helpers import written_ids
from tests.openai_server import OpenAIServer
from tests.openai_server import judge_by_text

# --- the boost ------------------------------------------------------------------------------------


IMP = ["score", "importance"]
NOTES = {"collections": ["sx_notes"]}


def boosted(client: Client, boost: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return search(client, {"mode": "recent", "scope": NOTES, "rank": IMP, "graph_boost": boost, **extra})


@pytest.fixture
def near(sx: Client) -> dict[str, str]:
    """Links maya → acme → widget; one record per distance plus an unmatched one."""
    write(sx, link("people/maya", "advises", "companies/acme"), link("companies/acme", "makes", "widget"))
    names = ["maya", "acme", "widget", "other"]
    written = write(
        sx,
        note("maya", entity="people/maya", scores={"importance": 1}),
        note("acme", entity="someone", type="fact", key="companies/acme", scores={"importance": 1}),
        note("widget", entity="widget", scores={"importance": 1}),
        note("other", entity="other", scores={"importance": 1.2}),
    )
    return dict(zip(names, written, strict=True))


def test_weight_over_distance_plus_one(sx: Client, near: dict[str, str]) -> None:
    body = boosted(sx, {"graph": "sx_walk", "anchor": "people/maya", "weight": 1.0})
    assert ids(body) == [near["maya"], near["acme"], near["widget"], near["other"]]
    assert [h["rank_score"] for h in body["hits"]] == pytest.approx([2.0, 1.5, 1 + 1 / 3, 1.2])
    assert [h["score"] for h in body["hits"]] == pytest.approx([1.0, 0.3 / 0.8, (1 / 3 - 0.2) / 0.8, 0.0])
    assert body["graph_boost"] == {
        "anchor": "people/maya",
        "depth": 2,
        "weight": 1.0,
        "matched_records": 3,
        "edge_count": 2,
    }
    assert body["ranking"]["kind"] == "rank_expression"


def test_defaults_and_the_only_active_graph_view(sx: Client, near: dict[str, str]) -> None:
    body = boosted(sx, {"anchor": "  people/maya "})
    assert body["graph_boost"] == {
        "anchor": "people/maya",
        "depth": 2,
        "weight": 0.05,
        "matched_records": 3,
        "edge_count": 2,
    }
    assert [h["rank_score"] for h in body["hits"]] == pytest.approx([1.2, 1.05, 1.025, 1 + 0.05 / 3])


def test_walks_both_directions(sx: Client, near: dict[str, str]) -> None:
    body = boosted(sx, {"anchor": "widget", "weight": 1.0})
    scores = {h["id"]: h["rank_score"] for h in body["hits"]}
    assert scores[near["widget"]] == pytest.approx(2.0)
    assert scores[near["acme"]] == pytest.approx(1.5)
    assert scores[near["maya"]] == pytest.approx(1 + 1 / 3)


def test_depth_bounds_the_walk(sx: Client, near: dict[str, str]) -> None:
    body = boosted(sx, {"anchor": "people/maya", "weight": 1.0, "depth": 1})
    scores = {h["id"]: h["rank_score"] for h in body["hits"]}
    assert scores[near["widget"]] == pytest.approx(1.0)
    assert body["graph_boost"]["matched_records"] == 2 and body["graph_boost"]["edge_count"] == 1


def test_an_anchor_with_no_links_still_matches_itself(sx: Client) -> None:
    (record,) = write(sx, note(entity="lonely", scores={"importance": 0}))
    write(sx, note(scores={"importance": 0.5}))
    body = boosted(sx, {"anchor": "lonely", "weight": 1.0})
    assert ids(body)[0] == record
    assert body["graph_boost"]["matched_records"] == 1 and body["graph_boost"]["edge_count"] == 0


def test_the_boost_sees_the_pool_below_the_cut(sx: Client, near: dict[str, str]) -> None:
    write(sx, *(note(f"filler {i}", scores={"importance": 1.1}) for i in range(5)))
    body = boosted(sx, {"anchor": "widget", "weight": 1.0}, k=1)
    assert ids(body) == [near["widget"]]


def test_unmatched_results_are_untouched(sx: Client, near: dict[str, str]) -> None:
    body = boosted(sx, {"anchor": "nobody", "weight": 1.0})
    assert [h["rank_score"] for h in body["hits"]] == pytest.approx([1.2, 1.0, 1.0, 1.0])
    assert body["graph_boost"]["matched_records"] == 0


def test_structured_search_with_graph_boost(sx: Client) -> None:
    write(sx, link("people/maya", "advises", "companies/acme"))
    first, _second, maya = write(
        sx,
        note(content={"amount": 1}),
        note(content={"amount": 2}),
        note(entity="people/maya", content={"amount": 3}),
    )
    body = search(
        sx,
        {
            "mode": "structured",
            "scope": NOTES,
            "order_by": [{"field": "amount"}],
            "graph_boost": {"anchor": "people/maya"},
        },
    )
    assert ids(body)[:2] == [maya, first]
    assert body["ranking"] == {"kind": "structured", "scored": False}
    assert all(h.keys() == {"id", "rank", "score"} and h["score"] is None for h in body["hits"])
    assert body["graph_boost"]["matched_records"] == 1


def test_combined_search_with_graph_boost(sx: Client, near: dict[str, str]) -> None:
    body = search(
        sx,
        {
            "sources": [{"name": "s", "mode": "recent", "scope": NOTES, "rank": IMP}],
            "fuse": {"kind": "rrf"},
            "graph_boost": {"anchor": "people/maya", "weight": 0.001},
        },
    )
    scores = {h["id"]: h["rank_score"] for h in body["hits"]}
    ranks = {h["id"]: h["source_ranks"]["s"] for h in body["hits"]}
    assert scores[near["maya"]] == pytest.approx(1 / (60 + ranks[near["maya"]]) + 0.001)
    assert scores[near["widget"]] == pytest.approx(1 / (60 + ranks[near["widget"]]) + 0.001 / 3)
    assert scores[near["other"]] == pytest.approx(1 / 61)
    assert body["ranking"]["kind"] == "rrf"


def test_views_do_not_forward_the_diagnostics(sx: Client, near: dict[str, str]) -> None:
    response = sx.post("/views/sx_boosted/query", json={"anchor": "widget"})
    body = response.get_json()
    assert response.status_code == 200 and "graph_boost" not in body
    assert body["hits"][0]["id"] == near["widget"]


@pytest.mark.parametrize(
    ("boost", "loc"),
    [
        pytest.param({}, ("graph_boost", "anchor"), id="anchor-required"),
        pytest.param({"anchor": "   "}, ("graph_boost", "anchor"), id="anchor-blank"),
        pytest.param({"anchor": "a" * 129}, ("graph_boost", "anchor"), id="anchor-129"),
        pytest.param({"anchor": "a", "depth": 0}, ("graph_boost", "depth"), id="depth-0"),
        pytest.param({"anchor": "a", "depth": 5}, ("graph_boost", "depth"), id="depth-5"),
        pytest.param({"anchor": "a", "weight": 0}, ("graph_boost", "weight"), id="weight-0"),
        pytest.param({"anchor": "a", "weight": 1.01}, ("graph_boost", "weight"), id="weight-over-1"),
        pytest.param({"anchor": "a", "limit": 0}, ("graph_boost", "limit"), id="limit-0"),
        pytest.param({"anchor": "a", "limit": 101}, ("graph_boost", "limit"), id="limit-101"),
        pytest.param({"anchor": "a", "graph": "sx_nothing"}, ("graph_boost", "graph"), id="unknown-graph"),
        pytest.param({"anchor": "a", "graph": "sx_context"}, ("graph_boost", "graph"), id="not-a-graph"),
        pytest.param({"anchor": "a", "graph": "sx_orphans"}, ("graph_boost", "graph"), id="orphan-report"),
        pytest.param({"anchor": "a", "hops": 2}, ("graph_boost", "hops"), id="unknown-key"),
    ],
)
def test_graph_boost_validation(sx: Client, boost: dict[str, Any], loc: tuple[str, ...]) -> None:
    rejects(sx, {"mode": "recent", "graph_boost": boost}, *loc)


def test_graph_boost_bounds_are_inclusive(sx: Client) -> None:
    body = search(
        sx, {"mode": "recent", "graph_boost": {"anchor": "a" * 128, "depth": 4, "weight": 1, "limit": 100}}
    )
    assert body["graph_boost"]["depth"] == 4 and body["graph_boost"]["weight"] == 1
    body = search(sx, {"mode": "recent", "graph_boost": {"anchor": "a", "depth": 1, "limit": 1}})
    assert body["graph_boost"]["depth"] == 1


def test_graph_boost_appears_only_when_configured(sx: Client) -> None:
    assert "graph_boost" not in search(sx, {"mode": "recent"})


def test_limit_caps_the_paths_walked(sx: Client, near: dict[str, str]) -> None:
    body = boosted(sx, {"anchor": "people/maya", "weight": 1.0, "limit": 1})
    assert body["graph_boost"]["edge_count"] == 1 and body["graph_boost"]["matched_records"] == 2
    scores = {h["id"]: h["rank_score"] for h in body["hits"]}
    assert scores[near["widget"]] == pytest.approx(1.0)


def test_graph_boost_reads_only_the_workspace_graph(sx: Client, sx_app: Flask, other_tenant: Tenant) -> None:
    other = Client(sx_app.test_client(), other_tenant)
    write(other, link("people/maya", "advises", "companies/acme"))
    (record,) = write(sx, note("acme", entity="companies/acme", scores={"importance": 1}))
    body = boosted(sx, {"anchor": "people/maya", "weight": 1.0})
    assert body["graph_boost"]["edge_count"] == 0 and body["graph_boost"]["matched_records"] == 0
    assert body["hits"][0]["id"] == record and body["hits"][0]["rank_score"] == pytest.approx(1.0)


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


@pytest.fixture
def maya_graph(sx: Client) -> None:
    """people/maya → companies/acme → widget."""
    write(sx, link("people/maya", "advises", "companies/acme"), link("companies/acme", "makes", "widget"))


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


TOP_KEYS = {"hits", "ranking", "rendered", "truncated", "backend", "profiles"}


@pytest.mark.parametrize(("query", "proposed"), MODES)
def test_graph_boost_object_is_reported_even_when_nothing_matched(
    sx: Client, query: dict[str, Any], proposed: int
) -> None:
    """ "`graph_boost` Present only when configured; reports the settings applied, how many records
    matched, and how many links the walk used" (example: anchor, depth, weight, matched_records,
    edge_count) — configured on a search that finds nothing, it still reports, with its defaults
    ("depth … default 2", "weight … default 0.05") and the anchor trimmed."""
    assert proposed > 0  # the corpus is not written here: every search finds nothing
    body = search(sx, {**query, "graph_boost": {"anchor": "  people/nobody "}})
    assert body["hits"] == [] and body["backend"]["candidate_count"] == 0
    report = body["graph_boost"]
    expected = {"anchor": "people/nobody", "depth": 2, "weight": 0.05, "matched_records": 0, "edge_count": 0}
    assert {key: report.get(key) for key in expected} == expected
    assert body.keys() == TOP_KEYS | {"graph_boost"}


RECENT: dict[str, Any] = {"mode": "recent", "scope": NOTES}


@pytest.fixture
def chain(sx: Client) -> list[str]:
    """hub -> c1 -> … -> c5, and one note about each of c1…c5 (in that order)."""
    write(sx, *(link("hub" if i == 1 else f"c{i - 1}", "next", f"c{i}") for i in range(1, 6)))
    return write(sx, *(note(f"about c{i}", entity=f"c{i}") for i in range(1, 6)))


@pytest.mark.parametrize(
    ("boost", "added"),
    [
        pytest.param({"depth": 4}, [1 / 2, 1 / 3, 1 / 4, 1 / 5, 0.0], id="depth-4"),
        pytest.param({}, [1 / 2, 1 / 3, 0.0, 0.0, 0.0], id="default-depth-2"),
        pytest.param({"depth": 1}, [1 / 2, 0.0, 0.0, 0.0, 0.0], id="depth-1"),
    ],
)
def test_graph_boost_depth_reaches_exactly_that_many_links(
    sx: Client, chain: list[str], boost: dict[str, Any], added: list[float]
) -> None:
    """Spec: graph_boost "depth: 2 # how many links out to look, 1–4, default 2"; "boosted =
    previous + weight / (distance + 1)"; "Unmatched results are untouched"."""
    body = search(
        sx,
        {**RECENT, "rank": ["const", 0], "graph_boost": {"anchor": "hub", "weight": 1, **boost}},
    )
    by_id = {h["id"]: h["rank_score"] for h in body["hits"]}
    assert [by_id[i] for i in chain] == pytest.approx(added)
    assert body["graph_boost"]["depth"] == boost.get("depth", 2)
    assert body["graph_boost"]["matched_records"] == sum(1 for a in added if a)


def test_graph_boost_walks_100_paths_by_default(sx: Client) -> None:
    """Spec: graph_boost "limit: 100 # how many paths to walk, 1–100, default 100"; the response
    reports "how many records matched and how many links the walk used". 101 links out of the
    anchor, one note about each far end: the default walk uses 100 links and matches 100 notes;
    limit 1 uses one."""
    write(sx, *(link("hub", "has", f"n{i:03d}") for i in range(101)))
    write(sx, *(note(f"about n{i:03d}", entity=f"n{i:03d}") for i in range(101)))
    body = search(sx, {**RECENT, "k": 100, "graph_boost": {"anchor": "hub"}})
    assert (body["graph_boost"]["edge_count"], body["graph_boost"]["matched_records"]) == (100, 100)
    one = search(sx, {**RECENT, "graph_boost": {"anchor": "hub", "limit": 1}})
    assert (one["graph_boost"]["edge_count"], one["graph_boost"]["matched_records"]) == (1, 1)


# --- reranking and the graph boost in one request -------------------------------------------------


JUDGED = {"kind": "llm_judge", **SCORED_RANKING}
"""The spec's ranking contract of a reranked single search: "ranking.kind: llm_judge"."""


def values(body: dict[str, Any], name: str) -> dict[str, Any]:
    """`name` of each hit, by id."""
    return {hit["id"]: hit[name] for hit in body["hits"]}


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
    server.reply_with(judge_by_text(scores), judge_by_text(scores))
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
    server.reply_with(judge_by_text(scores), judge_by_text(scores))
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
    server.reply_with(judge_by_text({"budget maya": 0.2, "budget other": 0.8}))
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
    server.reply_with(judge_by_text({"budget maya": 0.0, "budget other": 0.25}))
    body = search(sx, text_search(2, render=True, graph_boost={"anchor": "people/maya", "weight": 0.5}))
    assert ids(body) == [maya, other]  # judged 0.25 behind 0.0 + 0.5
    assert re.findall(r"\[id=([0-9a-f-]+)\]", body["rendered"]) == [maya, other]


# --- which links and which graph the boost walks --------------------------------------------------


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


def test_graph_boost_walks_only_processed_links(
    p5_runtime: Runtime, bw_ws: Tenant, openai_server: OpenAIServer
) -> None:
    """Spec, Graph views: "Walks skip links that are unprocessed"; design §1 Graph data: "a link
    written directly is live as soon as it is processed" — `graph_boost` walks the same links."""
    client = client_for(p5_runtime, bw_ws)
    edge = {"src": "maya", "dst": "proj", "rel": "owns"}
    link = {
        "collection": "p5_rel",
        "entity": "maya",
        "type": "link",
        "text": "maya owns proj",
        "content": edge,
    }
    (link_result,) = written(client, link)
    assert link_result["processing"] == "pending"
    (target,) = written_ids(client, rec("bw_plain", entity="proj", text="project note"))
    body = {
        "mode": "recent",
        "scope": {"collections": ["bw_plain"]},
        "graph_boost": {"graph": "p5_walk", "anchor": "maya", "weight": 0.5},
    }
    before = search(client, body)
    assert (before["graph_boost"]["matched_records"], before["graph_boost"]["edge_count"]) == (0, 0)
    walked = ok(view_query(client, "p5_walk", {"seed": "maya"}))
    assert walked["hits"] == []
    process(with_models(p5_runtime, openai_server.environ(api_key="k")))
    after = search(client, body)
    assert (after["graph_boost"]["matched_records"], after["graph_boost"]["edge_count"]) == (1, 1)
    assert ids(after) == [target]


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


# --- inside views ---------------------------------------------------------------------------------


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
