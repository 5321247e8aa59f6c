"""Eighth conformance audit: every numeric limit of the spec and the design, at the boundary.

For each stated bound the earlier suites leave open, a request exactly at the bound is accepted and
its effect is visible in the response, a request just past it is refused where the documents place
the problem, and an omitted value shows its documented default. Load-time checks run
`memseek catalog check` over the `sx_` catalog with one `l8_case` view (and, for limits no `sx_`
collection can reach, an `l8_wide` collection); call-time checks use the `sx_` app and an `l8_`
catalog over the same session database.
"""

from __future__ import annotations

from tests.blackbox.support import link
from tests.blackbox.support import part
from tests.blackbox.support import write
from tests.conftest import Client
from tests.helpers import ok
from tests.helpers import view_query

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
