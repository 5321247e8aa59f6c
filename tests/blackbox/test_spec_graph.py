"""Spec "Graph views" and "Orphan reports": fixed contracts, walks, paths, citations, orphans."""

from __future__ import annotations

from typing import Any

import pytest

from tests.blackbox.conftest import ClientFactory
from tests.blackbox.support import invalid
from tests.blackbox.support import link
from tests.blackbox.support import orphans
from tests.blackbox.support import part
from tests.blackbox.support import walk_sx
from tests.blackbox.support import write
from tests.conftest import Client
from tests.helpers import error

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
