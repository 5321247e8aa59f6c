"""Conformance audit 4 of rendered rows, fences, budgets, the GET routes, graph walks and orphan
reports, over HTTP: statements of the spec the earlier suites left unpinned.

Token counts are the deployment's own: these tests only assert what holds under any tokenizer
(a block with more text than the budget could ever hold, or far less than it).
"""

from __future__ import annotations

import pytest

from tests.blackbox.conftest import ClientFactory
from tests.blackbox.support import link
from tests.blackbox.support import note
from tests.blackbox.support import orphans
from tests.blackbox.support import part
from tests.blackbox.support import walk_sx
from tests.blackbox.support import write
from tests.conftest import Client
from tests.helpers import ok

# --- graph walks ----------------------------------------------------------------------------------


def test_parallel_links_are_distinct_paths(sx: Client) -> None:
    """Spec: "citations lists each link record a returned path used, once"; paths differ by their links."""
    uses, owns = write(sx, link("a", "uses", "b"), link("a", "owns", "b"))
    body = walk_sx(sx, seed="a")
    assert [p["nodes"] for p in body["paths"]] == [["a", "b"], ["a", "b"]]
    assert sorted(e for p in body["paths"] for e in p["edge_ids"]) == sorted([uses, owns])
    assert sorted(body["input_record_ids"]) == sorted([uses, owns]) and body["nodes"] == ["a", "b"]


def test_a_self_loop_is_never_followed(sx: Client) -> None:
    """Walks "never revisit a node already on the current path": a link from a node to itself is
    never part of a path."""
    loop, onward = write(sx, link("s", "r", "s"), link("s", "r", "t"))
    for direction in ("out", "in", "both"):
        body = walk_sx(sx, seed="s", direction=direction, depth=3)
        assert loop not in body["input_record_ids"], direction
    assert [p["nodes"] for p in walk_sx(sx, seed="s", depth=3)["paths"]] == [["s", "t"]]
    assert walk_sx(sx, seed="s", depth=3)["input_record_ids"] == [onward]


def test_both_directions_over_a_two_cycle(sx: Client) -> None:
    """direction "both" follows links either way, and walks "never revisit a node already on the
    current path": x→y and y→x give two one-link paths and nothing longer."""
    there, back = write(sx, link("x", "r", "y"), link("y", "r", "x"))
    body = walk_sx(sx, seed="x", direction="both", depth=4)
    assert [p["nodes"] for p in body["paths"]] == [["x", "y"], ["x", "y"]]
    assert sorted(p["edge_ids"][0] for p in body["paths"]) == sorted([there, back])
    assert body["truncated"] is False


def test_both_directions_walk_on_against_a_link(sx: Client) -> None:
    """direction "both": a path may mix links followed forwards and backwards; "A path's depth counts
    links, so edge_ids has that many entries and nodes has one more."."""
    ab, cb = write(sx, link("a", "r", "b"), link("c", "r", "b"))
    body = walk_sx(sx, seed="a", direction="both", depth=2)
    assert body["paths"] == [
        {"nodes": ["a", "b"], "edge_ids": [ab], "depth": 1},
        {"nodes": ["a", "b", "c"], "edge_ids": [ab, cb], "depth": 2},
    ]
    assert body["nodes"] == ["a", "b", "c"]
    assert walk_sx(sx, seed="a", depth=2)["nodes"] == ["a", "b"]  # out alone cannot go against c→b


def test_a_limited_walk_cites_only_the_returned_paths(sx: Client) -> None:
    """Spec: "citations lists each link record a returned path used, once. hits is the same list ...
    input_record_ids is those same ids in order"; "truncated: true means at least one more path
    existed beyond limit"."""
    write(sx, link("hub", "r", "n1"), link("hub", "r", "n2"), link("hub", "r", "n3"))
    body = walk_sx(sx, seed="hub", limit=1)
    (path,) = body["paths"]
    assert body["input_record_ids"] == path["edge_ids"]
    assert [c["id"] for c in body["citations"]] == path["edge_ids"] and body["hits"] == body["citations"]
    assert body["truncated"] is True


def test_depth_stops_the_walk(sx: Client) -> None:
    """Spec: "depth is how many links to follow": paths of every length up to depth, none longer."""
    write(sx, link("p1", "r", "p2"), link("p2", "r", "p3"), link("p3", "r", "p4"))
    body = walk_sx(sx, seed="p1", depth=2)
    assert [p["depth"] for p in body["paths"]] == [1, 2] and body["nodes"] == ["p1", "p2", "p3"]
    assert body["truncated"] is False


def test_a_reached_node_is_walked_from_along_every_path(sx: Client) -> None:
    """Walks "never revisit a node already on the *current* path": a node reached two ways is a
    node of two paths, and the walk goes on from it along each."""
    write(sx, link("a", "r", "b"), link("a", "r", "c"), link("b", "r", "d"), link("c", "r", "d"))
    body = walk_sx(sx, seed="a", depth=2)
    assert sorted(p["nodes"] for p in body["paths"] if p["depth"] == 2) == [["a", "b", "d"], ["a", "c", "d"]]
    assert [p["depth"] for p in body["paths"]] == [1, 1, 2, 2]  # ordered by distance first


def test_the_deployment_ceiling_admits_its_own_value(sx_with: ClientFactory, sx: Client) -> None:
    """Spec: "depth is how many links to follow (1–16) and limit caps how many paths come back (1–500).
    Your deployment may impose lower ceilings than those." (`MAX_GRAPH_DEPTH`, `MAX_GRAPH_PATHS`)."""
    write(sx, link("c1", "r", "c2"), link("c2", "r", "c3"), link("c3", "r", "c4"))
    client = sx_with(max_graph_depth=2, max_graph_paths=2)
    body = ok(client.post("/views/sx_walk/query", json={"seed": "c1", "depth": 2, "limit": 2}))
    assert [p["depth"] for p in body["paths"]] == [1, 2] and body["truncated"] is False


# --- orphan reports -------------------------------------------------------------------------------


def test_a_node_whose_only_link_is_retracted_is_an_orphan(sx: Client) -> None:
    """Spec: "current nodes with no links at all, in either direction"; walks skip retracted links, and a
    retracted link is no link."""
    _node, edge = write(sx, part("alone"), link("alone", "r", "elsewhere"))
    assert orphans(sx)["orphans"] == []
    sx.post(f"/records/{edge}/retract", json={"reason": "wrong"})
    assert [o["key"] for o in orphans(sx)["orphans"]] == ["alone"]


def test_a_self_linked_node_is_not_an_orphan(sx: Client) -> None:
    """Spec: "current nodes with no links at all, in either direction": a link to itself is a link."""
    write(sx, part("narcissus"), link("narcissus", "r", "narcissus"), part("echo"))
    assert [o["key"] for o in orphans(sx)["orphans"]] == ["echo"]


def test_a_draft_node_is_not_counted(sx: Client) -> None:
    """Spec: "Nodes are counted when they are current, active, fully processed, and not retracted"."""
    write(sx, {**part("sketch"), "status": "draft"}, part("real"))
    assert [o["key"] for o in orphans(sx)["orphans"]] == ["real"]


def test_the_default_orphan_limit_is_50(sx: Client) -> None:
    """`limit: {type: integer, default: 50}`; "truncated reports whether more eligible nodes existed
    than limit allowed"."""
    write(sx, *(part(f"n{i:02d}") for i in range(51)))
    body = orphans(sx)
    assert len(body["orphans"]) == 50 and body["truncated"] is True
    assert [o["key"] for o in body["orphans"]] == [f"n{i:02d}" for i in range(50)]


def test_orphans_are_only_the_nodes_collection(sx: Client) -> None:
    """Orphans are "current nodes" of the view's `nodes` collection; a link's own record, or a keyed
    record elsewhere, is not a node."""
    write(sx, note("keyed note", key="solo"), link("u", "r", "v"), part("lonely"))
    assert [o["key"] for o in orphans(sx)["orphans"]] == ["lonely"]


MESH = [
    ("a", "r", "b"),
    ("a", "p", "b"),
    ("a", "r", "c"),
    ("b", "r", "c"),
    ("c", "r", "a"),
    ("c", "r", "D"),
    ("D", "r", "b"),
    ("b", "r", "_e"),
    ("_e", "r", "a"),
    ("f", "r", "a"),
    ("D", "p", "f"),
]
"""Cycles, a parallel pair, mixed-case and punctuated names: every walk has many paths."""
TREE = [("a", "r", f"c{i}") for i in range(3)] + [
    (f"c{i}", "r", f"g{i}{j}") for i in range(3) for j in range(4)
]
"""A seed with three children of four children each: the walk's room runs out inside a level."""


@pytest.mark.parametrize(
    ("graph", "direction"),
    [
        pytest.param(MESH, "out", id="mesh-out"),
        pytest.param(MESH, "in", id="mesh-in"),
        pytest.param(MESH, "both", id="mesh-both"),
        pytest.param(TREE, "out", id="tree-out"),
        pytest.param(TREE, "both", id="tree-both"),
    ],
)
def test_a_limited_walk_is_the_first_paths_of_the_whole_walk(
    sx: Client, graph: list[tuple[str, str, str]], direction: str
) -> None:
    """Spec: "paths is ordered by distance first, then deterministically, so the same request always
    returns the same order"; "limit caps how many paths come back"; "truncated: true means at
    least one more path existed beyond limit". So a walk with `limit` n returns the first n paths
    of the same walk with room for all, and is truncated exactly when that walk has more."""
    write(sx, *(link(s, p, o) for s, p, o in graph))
    whole = walk_sx(sx, seed="a", direction=direction, depth=3, limit=500)
    assert whole["truncated"] is False and len(whole["paths"]) > 4
    assert [p["depth"] for p in whole["paths"]] == sorted(p["depth"] for p in whole["paths"])
    for limit in range(1, len(whole["paths"]) + 2):
        body = walk_sx(sx, seed="a", direction=direction, depth=3, limit=limit)
        assert body["paths"] == whole["paths"][:limit], limit
        assert body["truncated"] is (len(whole["paths"]) > limit), limit


def test_every_path_of_a_walk_is_simple_and_live(sx: Client) -> None:
    """Spec: walks "never revisit a node already on the current path"; "A path's depth counts links,
    so edge_ids has that many entries and nodes has one more"; every link used is cited once."""
    written = write(sx, *(link(s, p, o) for s, p, o in MESH))
    ends = {edge: (s, o) for edge, (s, _p, o) in zip(written, MESH, strict=True)}
    body = walk_sx(sx, seed="a", direction="both", depth=4, limit=500)
    for path in body["paths"]:
        nodes, edges = path["nodes"], path["edge_ids"]
        assert len(set(nodes)) == len(nodes) == len(edges) + 1 == path["depth"] + 1
        assert nodes[0] == "a"
        for step, edge in enumerate(edges):
            assert {nodes[step], nodes[step + 1]} == set(ends[edge])
    used = list(dict.fromkeys(e for p in body["paths"] for e in p["edge_ids"]))
    assert sorted(body["input_record_ids"]) == sorted(used)
    assert body["nodes"] == sorted({n for p in body["paths"] for n in p["nodes"]})
    signatures = [tuple(p["edge_ids"]) for p in body["paths"]]
    assert len(signatures) == len(set(signatures))


def test_retracting_a_node_frees_the_node_it_linked_to(sx: Client) -> None:
    """Spec: "A link produced automatically from a node stays live only while that exact node record
    is still current"; nodes are counted when "not retracted"."""
    hub, _leaf = write(sx, part("hub", ["leaf"]), part("leaf"))
    assert orphans(sx)["orphans"] == []
    sx.post(f"/records/{hub}/retract", json={"reason": "gone"})
    assert [o["key"] for o in orphans(sx)["orphans"]] == ["leaf"]


def test_nodes_and_orphans_sort_by_code_point(sx: Client) -> None:
    """Spec: "nodes is the sorted set of everything the walk reached"; orphans are "ordered by entity
    and key" — the same order on every deployment, whatever its database collation."""
    names = ["b", "B", "_z", "a", "10", "9", "é"]
    write(sx, *(link("hub", "r", name) for name in names))
    assert walk_sx(sx, seed="hub")["nodes"] == sorted([*names, "hub"])
    nodes = [("E", f"o{name}") for name in names] + [("e", "x"), ("_", "y")]
    write(sx, *(part(key, entity=entity) for entity, key in reversed(nodes)))
    assert [(o["entity"], o["key"]) for o in orphans(sx)["orphans"]] == sorted(nodes)
