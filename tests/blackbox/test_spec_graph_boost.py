"""Spec "Graph proximity boost": boosted = previous + weight / (distance + 1), diagnostics, limits."""

from __future__ import annotations

from typing import Any

import pytest
from flask import Flask

from tests.blackbox.support import ids
from tests.blackbox.support import link
from tests.blackbox.support import note
from tests.blackbox.support import rejects
from tests.blackbox.support import search
from tests.blackbox.support import write
from tests.conftest import Client
from tests.conftest import Tenant

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
