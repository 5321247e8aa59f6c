"""Graph views and orphan reports (spec "Graph views and orphan reports"): walks from a seed over
live links, depth and path order, direction, predicates, limits, views that narrow the fixed
contract, and the nodes no live link touches.
"""

from __future__ import annotations

from typing import Any

import pytest
from flask import Flask

from memseek.runtime import Runtime
from tests.blackbox.conftest import ClientFactory
from tests.blackbox.conftest import environ
from tests.blackbox.design_support import process
from tests.blackbox.design_support import rec
from tests.blackbox.design_support import retract
from tests.blackbox.design_support import walk
from tests.blackbox.support import invalid
from tests.blackbox.support import link
from tests.blackbox.support import note
from tests.blackbox.support import part
from tests.blackbox.support import sx_catalog
from tests.blackbox.support import write
from tests.conftest import Client
from tests.conftest import Tenant
from tests.conftest import client_for
from tests.helpers import app_for
from tests.helpers import error
from tests.helpers import fetch
from tests.helpers import listed_views
from tests.helpers import locs
from tests.helpers import ok
from tests.helpers import runtime_for
from tests.helpers import view_query
from tests.helpers import with_models
from tests.helpers import written_ids
from tests.openai_server import OpenAIServer

# --- graph walks ----------------------------------------------------------------------------------


GRAPH_KEYS = [
    "view",
    "parameters",
    "hits",
    "input_record_ids",
    "nodes",
    "paths",
    "citations",
    "truncated",
    "profiles",
    "backend",
]


def walk_sx(client: Client, **parameters: Any) -> dict[str, Any]:
    return ok(view_query(client, "sx_walk", parameters))


def test_the_spec_example(sx: Client) -> None:
    (edge,) = write(sx, link("people/maya", "advises", "companies/acme", confidence=0.92))
    body = walk_sx(sx, seed="people/maya", predicates=["advises"], direction="out", depth=2, limit=20)
    assert list(body) == GRAPH_KEYS
    assert body["view"]["name"] == "sx_walk" and body["view"]["version"] == 1 and body["view"]["hash"]
    assert body["parameters"] == {
        "seed": "people/maya",
        "predicates": ["advises"],
        "direction": "out",
        "depth": 2,
        "limit": 20,
    }
    citation = {
        "id": edge,
        "text": "people/maya advises companies/acme",
        "subject": "people/maya",
        "object": "companies/acme",
        "predicate": "advises",
        "content": {
            "text": "people/maya advises companies/acme",
            "src": "people/maya",
            "dst": "companies/acme",
            "rel": "advises",
            "confidence": 0.92,
        },
    }
    assert body["hits"] == [citation] and body["citations"] == [citation]
    assert body["input_record_ids"] == [edge]
    assert body["nodes"] == ["companies/acme", "people/maya"]
    assert body["paths"] == [{"nodes": ["people/maya", "companies/acme"], "edge_ids": [edge], "depth": 1}]
    assert body["truncated"] is False
    assert body["profiles"] == ["pg_default"]
    assert body["backend"] == [{"kind": "graph", "name": "postgresql"}]


def test_defaults_are_applied_and_reported(sx: Client) -> None:
    body = walk_sx(sx, seed="nowhere")
    assert body["parameters"] == {
        "seed": "nowhere",
        "predicates": [],
        "direction": "out",
        "depth": 1,
        "limit": 20,
    }
    assert (body["hits"], body["nodes"], body["paths"], body["citations"]) == ([], [], [], [])
    assert body["truncated"] is False


@pytest.fixture
def chain(sx: Client) -> dict[str, str]:
    """a -uses-> b -uses-> c, a -owns-> d, e -uses-> a."""
    names = ["ab", "bc", "ad", "ea"]
    written = write(
        sx, link("a", "uses", "b"), link("b", "uses", "c"), link("a", "owns", "d"), link("e", "uses", "a")
    )
    return dict(zip(names, written, strict=True))


def test_depth_and_path_order(sx: Client, chain: dict[str, str]) -> None:
    body = walk_sx(sx, seed="a", depth=2)
    assert [p["nodes"] for p in body["paths"]] == [["a", "b"], ["a", "d"], ["a", "b", "c"]]
    for path in body["paths"]:
        assert path["depth"] == len(path["edge_ids"]) == len(path["nodes"]) - 1
    assert body["paths"][2]["edge_ids"] == [chain["ab"], chain["bc"]]
    assert body["nodes"] == ["a", "b", "c", "d"]
    assert [c["id"] for c in body["citations"]] == body["input_record_ids"]
    assert sorted(body["input_record_ids"]) == sorted([chain["ab"], chain["ad"], chain["bc"]])
    assert len(set(body["input_record_ids"])) == 3  # each link once
    assert walk_sx(sx, seed="a", depth=2) == body  # the same request, the same order


def test_direction(sx: Client, chain: dict[str, str]) -> None:
    assert [p["nodes"] for p in walk_sx(sx, seed="a", direction="in")["paths"]] == [["a", "e"]]
    both = walk_sx(sx, seed="a", direction="both")["paths"]
    assert sorted(p["nodes"][1] for p in both) == ["b", "d", "e"]
    assert [p["nodes"] for p in walk_sx(sx, seed="c", direction="in", depth=2)["paths"]] == [
        ["c", "b"],
        ["c", "b", "a"],
    ]


def test_predicates_filter(sx: Client, chain: dict[str, str]) -> None:
    body = walk_sx(sx, seed="a", predicates=["owns"], depth=3)
    assert [p["nodes"] for p in body["paths"]] == [["a", "d"]]
    assert body["citations"][0]["predicate"] == "owns"
    assert len(walk_sx(sx, seed="a", predicates=["owns", "uses"], depth=3)["paths"]) == 3


def test_limit_and_truncated(sx: Client, chain: dict[str, str]) -> None:
    body = walk_sx(sx, seed="a", depth=2, limit=2)
    assert [p["nodes"] for p in body["paths"]] == [["a", "b"], ["a", "d"]]
    assert body["truncated"] is True
    assert walk_sx(sx, seed="a", depth=2, limit=3)["truncated"] is False


def test_walks_never_revisit_a_node_on_the_path(sx: Client) -> None:
    write(sx, link("x", "r", "y"), link("y", "r", "x"), link("y", "r", "z"))
    body = walk_sx(sx, seed="x", depth=5)
    assert [p["nodes"] for p in body["paths"]] == [["x", "y"], ["x", "y", "z"]]


def test_walks_skip_retracted_links(sx: Client) -> None:
    gone, kept = write(sx, link("s", "r", "t"), link("s", "r", "u"))
    sx.post(f"/records/{gone}/retract", json={"reason": "wrong"})
    assert walk_sx(sx, seed="s")["input_record_ids"] == [kept]


def test_walks_skip_superseded_automatic_links(sx: Client) -> None:
    write(sx, part("engine", ["fuel"]))
    assert walk_sx(sx, seed="engine")["nodes"] == ["engine", "fuel"]
    write(sx, part("engine", ["battery"]))
    body = walk_sx(sx, seed="engine")
    assert body["nodes"] == ["battery", "engine"]
    assert body["citations"][0]["subject"] == "engine" and body["citations"][0]["predicate"] == "needs"


def test_walks_skip_draft_links(sx: Client) -> None:
    draft = link("p", "r", "q")
    write(sx, {**draft, "status": "draft"})
    assert walk_sx(sx, seed="p")["paths"] == []


def test_seed_is_trimmed(sx: Client, chain: dict[str, str]) -> None:
    body = walk_sx(sx, seed="  a \t")
    assert body["parameters"]["seed"] == "a" and len(body["paths"]) == 2
    assert walk_sx(sx, seed="s" * 128)["paths"] == []


@pytest.mark.parametrize(
    ("parameters", "name"),
    [
        pytest.param({}, "seed", id="seed-required"),
        pytest.param({"seed": ""}, "seed", id="seed-empty"),
        pytest.param({"seed": "   "}, "seed", id="seed-blank"),
        pytest.param({"seed": "s" * 129}, "seed", id="seed-129"),
        pytest.param({"seed": 7}, "seed", id="seed-type"),
        pytest.param({"seed": "a", "direction": "up"}, "direction", id="direction"),
        pytest.param({"seed": "a", "depth": 0}, "depth", id="depth-0"),
        pytest.param({"seed": "a", "depth": 17}, "depth", id="depth-17"),
        pytest.param({"seed": "a", "depth": "2"}, "depth", id="depth-type"),
        pytest.param({"seed": "a", "limit": 0}, "limit", id="limit-0"),
        pytest.param({"seed": "a", "limit": 501}, "limit", id="limit-501"),
        pytest.param({"seed": "a", "predicates": "uses"}, "predicates", id="predicates-type"),
        pytest.param({"seed": "a", "hops": 2}, "hops", id="unknown"),
    ],
)
def test_walk_parameter_validation(sx: Client, parameters: dict[str, Any], name: str) -> None:
    invalid(sx.post("/views/sx_walk/query", json=parameters), "parameters", name)


def test_walk_bounds_are_inclusive(sx: Client) -> None:
    assert walk_sx(sx, seed="a", depth=16, limit=500)["parameters"]["depth"] == 16
    assert walk_sx(sx, seed="a", depth=1, limit=1)["paths"] == []


def test_deployment_ceilings(sx_with: ClientFactory) -> None:
    client = sx_with(max_graph_depth=2, max_graph_paths=10)
    invalid(client.post("/views/sx_walk/query", json={"seed": "a", "depth": 3}), "parameters", "depth")
    invalid(client.post("/views/sx_walk/query", json={"seed": "a", "limit": 11}), "parameters", "limit")
    invalid(client.post("/views/sx_orphans/query", json={"limit": 11}), "parameters", "limit")
    assert client.post("/views/sx_walk/query", json={"seed": "a", "depth": 2, "limit": 10}).status_code == 200


def test_graph_views_are_listed(sx: Client) -> None:
    views = {(v["name"], v["version"]): v for v in sx.get("/views").get_json()["views"]}
    walk_view, orphans = views[("sx_walk", 1)], views[("sx_orphans", 1)]
    assert walk_view["kind"] == "graph" and orphans["kind"] == "graph_orphans"
    assert walk_view["parameters"] == {
        "seed": {"type": "string", "required": True, "default": None},
        "predicates": {"type": "string_array", "required": False, "default": []},
        "direction": {"type": "string", "required": False, "default": "out"},
        "depth": {"type": "integer", "required": False, "default": 1},
        "limit": {"type": "integer", "required": False, "default": 20},
    }
    assert orphans["parameters"] == {"limit": {"type": "integer", "required": False, "default": 50}}
    assert walk_view["input_schema"]["required"] == ["seed"]
    assert walk_view["input_schema"]["properties"]["direction"]["enum"] == ["out", "in", "both"]
    assert walk_view["profiles"] == orphans["profiles"] == ["pg_default"]


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


def test_a_retracted_link_leaves_the_graph(bw: Client) -> None:
    """§1: "a retracted record is never returned by any read" — graph walks included."""
    (link,) = written_ids(
        bw, rec("bw_edges", text="a uses b", content={"src": "a", "dst": "b", "rel": "uses"})
    )
    assert walk(bw, "a")["nodes"] == ["a", "b"]
    assert retract(bw, link).status_code == 200
    result = walk(bw, "a")
    assert result["hits"] == [] and "b" not in result["nodes"]


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


# --- a graph view narrows its fixed contract ------------------------------------------------------


@pytest.fixture(scope="module")
def walk_app(runtime: Runtime, sx_server: OpenAIServer, tmp_path_factory: pytest.TempPathFactory) -> Flask:
    """The `sx_` collections with one graph view of its own (graph boosts need exactly one)."""
    root = sx_catalog(tmp_path_factory.mktemp("ald-walk-catalog"), "ald-walk")
    return app_for(runtime_for(runtime, root, environ(sx_server)))


@pytest.fixture
def aldw(walk_app: Flask, tenant: Tenant, sx: Client) -> Client:
    return Client(walk_app.test_client(), tenant)


@pytest.mark.parametrize(
    ("parameters", "name"),
    [
        pytest.param({"seed": "a", "predicates": ["advises"]}, "predicates", id="item-enum"),
        pytest.param({"seed": "a", "direction": "both"}, "direction", id="narrowed-direction"),
        pytest.param({"seed": "a", "depth": 4}, "depth", id="narrowed-depth"),
        pytest.param({"seed": "a", "limit": 51}, "limit", id="narrowed-limit"),
        pytest.param({"seed": "a", "depth": 0}, "depth", id="spec-minimum-depth"),
        pytest.param({"seed": "a", "limit": 0}, "limit", id="spec-minimum-limit"),
    ],
)
def test_a_graph_view_may_narrow_its_contract(aldw: Client, parameters: dict[str, Any], name: str) -> None:
    assert locs(view_query(aldw, "ald_walk", parameters)) == [["parameters", name]]


def test_a_narrowed_graph_view_accepts_its_own_bounds(aldw: Client, sx: Client) -> None:
    (edge,) = write(sx, link("a", "uses", "b"))
    body = ok(view_query(aldw, "ald_walk", {"seed": "a", "predicates": ["uses"], "depth": 3, "limit": 50}))
    assert body["parameters"] == {
        "seed": "a",
        "predicates": ["uses"],
        "direction": "out",
        "depth": 3,
        "limit": 50,
    }
    assert body["input_record_ids"] == [edge]


def test_a_narrowed_graph_views_schema_shows_its_bounds(aldw: Client) -> None:
    entry = listed_views(aldw)[("ald_walk", 1)]
    assert entry["kind"] == "graph"
    props = entry["input_schema"]["properties"]
    assert props["seed"]["description"] == "Where the walk starts."
    assert props["predicates"]["items"] == {"type": "string", "enum": ["uses", "owns"]}
    assert props["predicates"]["default"] == []
    assert props["direction"]["enum"] == ["out", "in"] and props["direction"]["default"] == "out"
    # spec: depth 1-16, limit 1-500; the view narrows the upper bounds (3.0 is a whole number)
    assert (props["depth"]["minimum"], props["depth"]["maximum"], props["depth"]["default"]) == (1, 3, 1)
    assert isinstance(props["depth"]["maximum"], int)
    assert (props["limit"]["minimum"], props["limit"]["maximum"], props["limit"]["default"]) == (1, 50, 20)


def test_a_graph_view_may_narrow_predicates_and_depth(s3: Client) -> None:
    """Spec: predicates — "you can restrict the allowed set with the parameter's item_enum"; the
    input schema carries "allowed values, numeric and length limits"."""
    write(s3, link("a", "owns", "b"), link("a", "advises", "c"))
    body = ok(view_query(s3, "s3_walk", {"seed": "a", "predicates": ["owns"]}))
    assert body["nodes"] == ["a", "b"]
    invalid(view_query(s3, "s3_walk", {"seed": "a", "predicates": ["advises"]}), "parameters", "predicates")
    invalid(view_query(s3, "s3_walk", {"seed": "a", "depth": 4}), "parameters", "depth")
    props = listed_views(s3)[("s3_walk", 1)]["input_schema"]["properties"]
    assert props["predicates"]["items"] == {"type": "string", "enum": ["uses", "owns"]}
    assert (props["depth"]["minimum"], props["depth"]["maximum"]) == (1, 3)
    assert props["seed"]["description"] == "Where the walk starts."
    assert (props["seed"]["minLength"], props["seed"]["maxLength"]) == (1, 128)


# --- orphan reports -------------------------------------------------------------------------------


ORPHAN_KEYS = [
    "view",
    "parameters",
    "hits",
    "orphans",
    "input_record_ids",
    "truncated",
    "profiles",
    "backend",
]


def orphans(client: Client, **parameters: Any) -> dict[str, Any]:
    return ok(view_query(client, "sx_orphans", parameters))


def test_orphan_report_shape_and_order(sx: Client) -> None:
    lonely_b, lonely_a, _linked, _target = write(
        sx,
        part("zeta", entity="b"),
        part("omega", entity="a"),
        part("alpha", ["beta"], entity="a"),
        part("beta", entity="a"),
    )
    body = orphans(sx)
    assert list(body) == ORPHAN_KEYS
    assert body["parameters"] == {"limit": 50}
    assert body["hits"] == body["orphans"]
    assert [o["id"] for o in body["orphans"]] == [lonely_a, lonely_b] == body["input_record_ids"]
    assert body["orphans"][0] == {
        "id": lonely_a,
        "entity": "a",
        "key": "omega",
        "text": "component omega",
        "content": {},
    }
    assert body["truncated"] is False
    assert body["backend"] == [{"kind": "graph", "name": "postgresql"}]


def test_orphans_count_links_in_either_direction(sx: Client) -> None:
    write(sx, part("a"), part("b"), part("c"), link("a", "r", "x"), link("y", "r", "b"))
    assert [o["key"] for o in orphans(sx)["orphans"]] == ["c"]


def test_orphans_ordered_by_entity_then_key(sx: Client) -> None:
    write(sx, part("b", entity="2"), part("a", entity="2"), part("z", entity="1"))
    assert [(o["entity"], o["key"]) for o in orphans(sx)["orphans"]] == [("1", "z"), ("2", "a"), ("2", "b")]


def test_orphans_limit_and_truncated(sx: Client) -> None:
    write(sx, *(part(f"k{i}") for i in range(4)))
    body = orphans(sx, limit=3)
    assert [o["key"] for o in body["orphans"]] == ["k0", "k1", "k2"] and body["truncated"] is True
    assert orphans(sx, limit=4)["truncated"] is False


def test_an_outdated_node_revision_never_hides_an_orphan(sx: Client) -> None:
    write(sx, part("hub", ["leaf"]), part("leaf"))
    assert orphans(sx)["orphans"] == []
    write(sx, part("hub"))  # the new revision links nothing: both are isolated now
    assert [o["key"] for o in orphans(sx)["orphans"]] == ["hub", "leaf"]


def test_orphans_skip_retracted_and_superseded_nodes(sx: Client) -> None:
    gone, old = write(sx, part("gone"), part("node"))
    (new,) = write(sx, part("node"))
    sx.post(f"/records/{gone}/retract", json={"reason": "wrong"})
    assert orphans(sx)["input_record_ids"] == [new] and old != new


@pytest.mark.parametrize("limit", [0, 501, "5", 2.5])
def test_orphan_limit_validation(sx: Client, limit: Any) -> None:
    invalid(sx.post("/views/sx_orphans/query", json={"limit": limit}), "parameters", "limit")


def test_orphans_take_only_limit(sx: Client) -> None:
    invalid(sx.post("/views/sx_orphans/query", json={"seed": "a"}), "parameters", "seed")
    assert orphans(sx, limit=500)["parameters"] == {"limit": 500}


def test_graph_views_are_workspace_bound(sx: Client, sx_with: ClientFactory) -> None:
    write(sx, link("a", "r", "b"), part("solo"))
    assert len(walk_sx(sx, seed="a")["paths"]) == 1
    error(sx.raw.post("/views/sx_walk/query", json={"seed": "a"}), 401)


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


def orphan_keys(client: Client) -> list[str]:
    return [hit["key"] for hit in ok(view_query(client, "p5_orphans", {}))["hits"]]


def test_orphan_reports_count_only_fully_processed_nodes(
    p5_runtime: Runtime, bw_ws: Tenant, openai_server: OpenAIServer
) -> None:
    """Spec, Orphan reports: "Nodes are counted when they are current, active, fully processed, and
    not retracted"."""
    client = client_for(p5_runtime, bw_ws)
    node = {"collection": "p5_parts", "entity": "parts", "type": "component", "text": "a part"}
    pending, failing = written_ids(client, {**node, "key": "pending-part"}, {**node, "key": "failing-part"})
    assert orphan_keys(client) == []
    process(with_models(p5_runtime, {}), max_attempts=1)  # nothing due is left: both fail
    assert [fetch(client, i)["processing"] for i in (pending, failing)] == ["failed", "failed"]
    assert orphan_keys(client) == []
    (ready,) = written_ids(client, {**node, "key": "ready-part"})
    process(with_models(p5_runtime, openai_server.environ(api_key="k")))
    assert fetch(client, ready)["processing"] == "ready"
    assert orphan_keys(client) == ["ready-part"]
