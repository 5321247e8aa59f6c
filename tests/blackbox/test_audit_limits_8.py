"""Eighth conformance audit: every numeric limit of the spec and the design, at the boundary.

For each stated bound the earlier suites leave open, a request exactly at the bound is accepted and
its effect is visible in the response, a request just past it is refused where the documents place
the problem, and an omitted value shows its documented default. Load-time checks run
`memseek catalog check` over the `sx_` catalog with one `l8_case` view (and, for limits no `sx_`
collection can reach, an `l8_wide` collection); call-time checks use the `sx_` app and an `l8_`
catalog over the same session database.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.blackbox.support import link
from tests.blackbox.support import note
from tests.blackbox.support import part
from tests.blackbox.support import search
from tests.blackbox.support import write
from tests.conftest import Client
from tests.helpers import ok
from tests.helpers import view_query

# --- combined searches: the smallest weight, the largest boost ------------------------------------


NOTES = {"collections": ["sx_notes"]}
RECENT: dict[str, Any] = {"mode": "recent", "scope": NOTES}


def test_a_tiny_source_weight_scales_the_rrf_value(sx: Client) -> None:
    """Spec: weight "greater than 0 and at most 100"; "RRF(record) = sum … weight / (rank_constant +
    rank_in_source)". A weight just above 0 is accepted and scales the contribution."""
    write(sx, note())
    body = search(sx, {"sources": [{"name": "s", **RECENT, "weight": 1e-6}], "fuse": {"kind": "rrf"}})
    assert [h["rank_score"] for h in body["hits"]] == pytest.approx([1e-6 / 61], rel=1e-9)


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


# --- graph views: depth 16, limit 500, the orphans' 500 -------------------------------------------


def test_a_walk_of_depth_16_reaches_exactly_16_links(sx: Client) -> None:
    """Spec: "depth is how many links to follow (1–16)"; "A path's depth counts links". A chain of
    17 links from the seed: depth 16 returns paths of depth 1 to 16 and never reaches node 17."""
    write(sx, *(link(f"c{i:02d}", "next", f"c{i + 1:02d}") for i in range(17)))
    body = ok(view_query(sx, "sx_walk", {"seed": "c00", "depth": 16}))
    assert [p["depth"] for p in body["paths"]] == list(range(1, 17))
    assert body["nodes"] == [f"c{i:02d}" for i in range(17)]
    assert body["truncated"] is False


def test_limit_500_returns_500_paths_and_the_default_20(sx: Client) -> None:
    """Spec: "limit caps how many paths come back (1–500)"; "truncated: true means at least one
    more path existed beyond limit"; the view declares `limit: {type: integer, default: 20}`.
    With 501 links out of the seed: limit 500 returns 500 and is truncated; the default returns 20."""
    write(sx, *(link("hub", "has", f"n{i:03d}") for i in range(501)))
    body = ok(view_query(sx, "sx_walk", {"seed": "hub", "limit": 500}))
    assert (len(body["paths"]), len(body["citations"]), body["truncated"]) == (500, 500, True)
    default = ok(view_query(sx, "sx_walk", {"seed": "hub"}))
    assert (len(default["paths"]), default["truncated"]) == (20, True)


def test_an_orphan_report_of_500_of_501(sx: Client) -> None:
    """Spec: graph_orphans' "limit is its only parameter, accepting 1–500"; "truncated reports
    whether more eligible nodes existed than limit allowed"."""
    write(sx, *(part(f"p{i:03d}") for i in range(501)))
    body = ok(view_query(sx, "sx_orphans", {"limit": 500}))
    assert (len(body["orphans"]), len(body["input_record_ids"]), body["truncated"]) == (500, 500, True)
    assert [o["key"] for o in body["orphans"]] == [f"p{i:03d}" for i in range(500)]


# --- graph_boost: depth 4 and the default depth 2, the default limit 100 --------------------------


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
