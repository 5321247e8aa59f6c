"""Graph views (`kind: graph`) through `POST /views/{name}/query`, on real PostgreSQL."""

from __future__ import annotations

from typing import Any
from uuid import UUID

import pytest
from flask import Flask
from sqlalchemy.engine import Engine

from memseek.errors import RequestInvalid
from memseek.runtime import Runtime
from memseek.search.views import explain_view
from memseek.search.views import public_hash
from tests.conftest import Client
from tests.conftest import Tenant
from tests.conftest import client_for
from tests.helpers import details
from tests.helpers import error
from tests.helpers import locs
from tests.helpers import ok
from tests.helpers import run_script
from tests.helpers import runtime_for
from tests.helpers import view_query
from tests.helpers import written_ids
from tests.integration.view_support import EDGES
from tests.integration.view_support import SPEC_GRAPH_PARAMETERS
from tests.integration.view_support import Graph
from tests.integration.view_support import Statements
from tests.integration.view_support import link_body
from tests.integration.view_support import part_body
from tests.integration.view_support import spec_graph_response


def walk(client: Client, seed: str, **parameters: Any) -> dict[str, Any]:
    return ok(view_query(client, "g_walk", {"seed": seed, **parameters}))


def path_nodes(body: dict[str, Any]) -> list[list[str]]:
    return [p["nodes"] for p in body["paths"]]


def test_the_spec_example(vclient: Client, view_runtime: Runtime) -> None:
    [advises] = written_ids(vclient, link_body("people/maya", "advises", "companies/acme", confidence=0.92))
    written_ids(
        vclient,
        link_body("companies/acme", "owns", "companies/beta"),  # another predicate, at depth 2
        link_body("people/maya", "owns", "companies/gamma"),  # another predicate
        link_body("people/bob", "advises", "people/maya"),  # incoming: not followed out
    )
    body = ok(view_query(vclient, "g_walk", SPEC_GRAPH_PARAMETERS))
    catalog = view_runtime.catalog
    view = {"name": "g_walk", "version": 1, "hash": public_hash(catalog.view_hash(catalog.view("g_walk")))}
    assert body == spec_graph_response(view, advises)
    assert list(body) == [
        "view", "parameters", "hits", "input_record_ids", "nodes", "paths", "citations", "truncated",
        "profiles", "backend",
    ]  # fmt: skip


def test_defaults_are_applied_and_echoed(vclient: Client) -> None:
    written_ids(vclient, link_body("a", "x", "b"))
    body = walk(vclient, "a")
    assert body["parameters"] == {"seed": "a", "predicates": [], "direction": "out", "depth": 1, "limit": 20}
    assert path_nodes(body) == [["a", "b"]]


CYCLE = [("a", "b"), ("b", "c"), ("c", "a"), ("a", "d"), ("e", "a")]


@pytest.mark.parametrize(
    ("direction", "depth", "expected"),
    [
        pytest.param("out", 2, [["a", "b"], ["a", "d"], ["a", "b", "c"]], id="out"),
        pytest.param("in", 2, [["a", "c"], ["a", "e"], ["a", "c", "b"]], id="in"),
        pytest.param("both", 1, [["a", "b"], ["a", "c"], ["a", "d"], ["a", "e"]], id="both"),
        pytest.param("out", 16, [["a", "b"], ["a", "d"], ["a", "b", "c"]], id="never-revisits-a-node"),
        pytest.param("both", 2, [["a", "b"], ["a", "c"], ["a", "d"], ["a", "e"], ["a", "b", "c"],
                                 ["a", "c", "b"]], id="both-deeper"),
    ],
)  # fmt: skip
def test_directions_and_cycles(
    vclient: Client, direction: str, depth: int, expected: list[list[str]]
) -> None:
    written_ids(vclient, *(link_body(s, "rel", o) for s, o in CYCLE))
    body = walk(vclient, "a", direction=direction, depth=depth)
    assert path_nodes(body) == expected
    assert all(p["depth"] == len(p["edge_ids"]) == len(p["nodes"]) - 1 for p in body["paths"])
    assert body["nodes"] == sorted({node for nodes in expected for node in nodes})


def test_paths_order_by_depth_then_code_points_then_link_ids(vclient: Client) -> None:
    ids = written_ids(
        vclient, *(link_body("n", "rel", o) for o in ("é", "b", "B", "a", "a")), link_body("B", "rel", "A")
    )
    body = walk(vclient, "n", depth=2)
    assert path_nodes(body) == [["n", "B"], ["n", "a"], ["n", "a"], ["n", "b"], ["n", "é"], ["n", "B", "A"]]
    parallel = [p["edge_ids"][0] for p in body["paths"] if p["nodes"] == ["n", "a"]]
    assert parallel == sorted(ids[3:5])
    assert walk(vclient, "n", depth=2) == body  # the same request, the same order


def test_predicates_filter_every_step(vclient: Client) -> None:
    links = [("s", "advises", "t"), ("t", "owns", "u"), ("t", "advises", "v"), ("s", "owns", "w")]
    written_ids(vclient, *(link_body(*link) for link in links))
    assert path_nodes(walk(vclient, "s", predicates=["advises"], depth=2)) == [["s", "t"], ["s", "t", "v"]]
    assert len(walk(vclient, "s", predicates=[], depth=2)["paths"]) == 4
    assert path_nodes(walk(vclient, "s", predicates=["owns", "advises"], depth=1)) == [["s", "t"], ["s", "w"]]


def test_citations_name_each_link_once_in_order_of_first_use(vclient: Client) -> None:
    first, second, third = written_ids(
        vclient, link_body("s", "rel", "t"), link_body("t", "rel", "u"), link_body("s", "rel", "v")
    )
    body = walk(vclient, "s", depth=2)
    assert [p["edge_ids"] for p in body["paths"]] == [[first], [third], [first, second]]
    assert [c["id"] for c in body["citations"]] == body["input_record_ids"] == [first, third, second]
    assert body["hits"] == body["citations"]


@pytest.mark.parametrize(
    ("limit", "depth", "paths", "truncated"),
    [
        pytest.param(3, 1, 3, False, id="exactly-limit"),
        pytest.param(2, 1, 2, True, id="one-more-existed"),
        pytest.param(3, 2, 3, True, id="a-deeper-path-existed"),
        pytest.param(4, 2, 4, False, id="all-levels"),
        pytest.param(1, 16, 1, True, id="limit-one"),
    ],
)
def test_limit_and_truncated(vclient: Client, limit: int, depth: int, paths: int, truncated: bool) -> None:
    links = [("s", "x1"), ("s", "x2"), ("s", "x3"), ("x1", "y")]
    written_ids(vclient, *(link_body(subject, "rel", obj) for subject, obj in links))
    body = walk(vclient, "s", limit=limit, depth=depth)
    assert (len(body["paths"]), body["truncated"]) == (paths, truncated)


def test_an_unknown_seed_walks_nowhere(vclient: Client) -> None:
    written_ids(vclient, link_body("s", "rel", "t"))
    body = walk(vclient, "nowhere", direction="both", depth=3)
    assert (body["hits"], body["paths"], body["nodes"], body["truncated"]) == ([], [], [], False)


# --- which links are live ----------------------------------------------------------------------


LIVENESS = [
    pytest.param({}, True, id="ready-current-active"),
    pytest.param({"processing": "pending"}, False, id="pending"),
    pytest.param({"processing": "failed"}, False, id="failed"),
    pytest.param({"is_current": False}, False, id="superseded"),
    pytest.param({"retracted_at": "2026-01-01T00:00:00Z"}, False, id="retracted"),
    pytest.param({"status": "draft"}, False, id="draft"),
    pytest.param({"collection": "g_notes"}, False, id="another-collection"),
    pytest.param("node-current", True, id="automatic-node-current"),
    pytest.param("node-superseded", False, id="automatic-node-superseded"),
    pytest.param("node-retracted", False, id="automatic-node-retracted"),
    pytest.param("node-missing", False, id="automatic-node-missing"),
]


@pytest.mark.parametrize(("state", "live"), LIVENESS)
def test_only_live_links_are_walked(vclient: Client, graph: Graph, state: Any, live: bool) -> None:
    nodes = {
        "node-current": {"link_node_id": graph.node("owner", "s")},
        "node-superseded": {"link_node_id": graph.node("owner", "s", is_current=False)},
        "node-retracted": {"link_node_id": graph.node("owner", "s2", retracted_at="2026-01-01T00:00:00Z")},
        "node-missing": {"link_node_id": "00000000-0000-7000-8000-000000000000"},
    }
    values = nodes[state] if isinstance(state, str) else state
    graph.link("s", "rel", "t", **values)
    assert path_nodes(walk(vclient, "s", direction="both")) == ([["s", "t"]] if live else [])


def test_a_link_without_its_ends_reaches_nothing(vclient: Client, graph: Graph) -> None:
    graph.record(EDGES, "s", "half a link", fields={"from_node": "s", "relationship": "rel"})
    assert walk(vclient, "s", direction="both")["paths"] == []


def test_automatic_links_follow_their_node_revision(vclient: Client) -> None:
    written_ids(vclient, part_body("svc", "api", ["db", "cache"]))
    body = walk(vclient, "api")
    assert path_nodes(body) == [["api", "cache"], ["api", "db"]]
    assert {c["predicate"] for c in body["citations"]} == {"depends_on"}
    [second] = written_ids(vclient, part_body("svc", "api", ["queue"]))
    assert path_nodes(walk(vclient, "api")) == [["api", "queue"]]
    retracted = vclient.post(f"/records/{second}/retract", json={"reason": "wrong"})
    assert retracted.status_code == 200, retracted.get_data(as_text=True)
    assert path_nodes(walk(vclient, "api")) == [["api", "cache"], ["api", "db"]]  # first is current again


def test_walks_stay_in_their_workspace(view_app: Flask, vclient: Client, other_tenant: Tenant) -> None:
    written_ids(vclient, link_body("s", "rel", "t"))
    other = Client(view_app.test_client(), other_tenant)
    written_ids(other, link_body("s", "rel", "foreign"))
    assert path_nodes(walk(vclient, "s")) == [["s", "t"]]
    assert path_nodes(walk(other, "s")) == [["s", "foreign"]]


# --- parameters, limits and lookup ------------------------------------------------------------


def test_the_seed_is_trimmed(vclient: Client) -> None:
    written_ids(vclient, link_body("s", "rel", "t"))
    body = walk(vclient, "  s \n")
    assert body["parameters"]["seed"] == "s"
    assert path_nodes(body) == [["s", "t"]]
    assert walk(vclient, " " + "x" * 128 + " ")["parameters"]["seed"] == "x" * 128


@pytest.mark.parametrize(
    ("parameters", "loc"),
    [
        pytest.param({}, ["parameters", "seed"], id="seed-missing"),
        pytest.param({"seed": "   "}, ["parameters", "seed"], id="seed-blank"),
        pytest.param({"seed": "x" * 129}, ["parameters", "seed"], id="seed-too-long"),
        pytest.param({"seed": 7}, ["parameters", "seed"], id="seed-not-string"),
        pytest.param({"seed": "s", "depth": 0}, ["parameters", "depth"], id="depth-zero"),
        pytest.param({"seed": "s", "depth": 17}, ["parameters", "depth"], id="depth-over-16"),
        pytest.param({"seed": "s", "depth": "2"}, ["parameters", "depth"], id="depth-text"),
        pytest.param({"seed": "s", "limit": 0}, ["parameters", "limit"], id="limit-zero"),
        pytest.param({"seed": "s", "limit": 501}, ["parameters", "limit"], id="limit-over-500"),
        pytest.param({"seed": "s", "direction": "sideways"}, ["parameters", "direction"], id="direction"),
        pytest.param({"seed": "s", "predicates": "advises"}, ["parameters", "predicates"], id="predicates"),
        pytest.param({"seed": "s", "hops": 2}, ["parameters", "hops"], id="unknown"),
    ],
)
def test_invalid_parameters_are_422(vclient: Client, parameters: dict[str, Any], loc: list[Any]) -> None:
    assert loc in locs(view_query(vclient, "g_walk", parameters))


@pytest.mark.parametrize("body", [None, [], "seed"], ids=["no-body", "list", "string"])
def test_a_body_that_is_not_an_object_is_422(vclient: Client, body: Any) -> None:
    assert details(view_query(vclient, "g_walk", body))


def test_deployment_ceilings_are_named(view_runtime: Runtime, tenant: Tenant) -> None:
    client = client_for(runtime_for(view_runtime, max_graph_depth=3, max_graph_paths=10), tenant)
    assert ok(view_query(client, "g_walk", {"seed": "s", "depth": 3, "limit": 10}))["paths"] == []
    [depth] = details(view_query(client, "g_walk", {"seed": "s", "depth": 4, "limit": 10}))
    assert depth["loc"] == ["parameters", "depth"] and "MAX_GRAPH_DEPTH" in depth["msg"]
    [limit] = details(view_query(client, "g_walk", {"seed": "s", "limit": 11}))
    assert limit["loc"] == ["parameters", "limit"] and "MAX_GRAPH_PATHS" in limit["msg"]
    [orphans] = details(view_query(client, "g_orphans", {"limit": 11}))
    assert orphans["loc"] == ["parameters", "limit"] and "MAX_GRAPH_PATHS" in orphans["msg"]


def test_unknown_views_are_404(vclient: Client) -> None:
    error(view_query(vclient, "no_such_view", {}), 404, "not_found")


def test_a_package_pins_the_version_that_runs(view_runtime: Runtime, tenant: Tenant) -> None:
    pinned = runtime_for(view_runtime, memseek_package="g_pkg")
    client = client_for(pinned, tenant)
    body = ok(view_query(client, "g_walk", {"seed": "s"}))
    assert body["view"] == {
        "name": "g_walk",
        "version": 2,
        "hash": public_hash(pinned.catalog.view_hash(pinned.catalog.view("g_walk"))),
    }
    active = view_runtime.catalog
    assert body["view"]["hash"] != public_hash(active.view_hash(active.view("g_walk")))
    assert details(view_query(client, "g_walk", {"seed": "s", "depth": 4}))  # v2 narrows depth to 3
    assert view_query(client, "g_note_listing", {}).status_code == 404  # not in the package


def test_statements_name_the_view(vclient: Client, statements: Statements) -> None:
    walk(vclient, "s")
    ok(view_query(vclient, "g_orphans"))
    tagged = [s for s in statements.texts if "/* memseek view " in s]
    assert any("/* memseek view g_walk v1 */" in s and "level_1" in s for s in tagged)
    assert any("/* memseek view g_orphans v1 */" in s for s in tagged)


def test_explain_prints_the_walk_and_its_citations_as_a_call_runs_them(
    vclient: Client, view_runtime: Runtime, db: Engine, tenant: Tenant
) -> None:
    """Design §3: `memseek explain` prints the exact SQL "one search or view call would run" —
    a graph view's call runs the walk, then reads the links it used; each statement, as printed,
    returns what the call returned, and carries the view's comment."""
    [advises] = written_ids(vclient, link_body("people/maya", "advises", "companies/acme"))
    script = explain_view(view_runtime, tenant.id, "g_walk", {"seed": " people/maya "})
    lines = script.splitlines()
    walk_sql, citations_sql = split_statements(lines, ["-- the walk", "-- the links it used, as citations"])
    assert lines[:3] == [
        "BEGIN;",
        "SET LOCAL role = 'memseek_scoped';",
        f"SET LOCAL memseek.workspace_id = '{tenant.id}';",  # graph_records shows this workspace
    ]
    with db.begin() as conn:  # the script runs as printed
        (row,), citations = run_script(conn, script)
        assert (row.nodes, row.edge_ids) == (["people/maya", "companies/acme"], [UUID(advises)])
        assert [str(r.id) for r in citations] == [advises]
    assert walk_sql.count("/* memseek view g_walk v1 */") == 1 == citations_sql.count("view g_walk v1")


def test_explain_of_a_walk_finding_nothing_prints_only_the_walk(
    view_runtime: Runtime, tenant: Tenant
) -> None:
    lines = explain_view(view_runtime, tenant.id, "g_walk", {"seed": "nobody"}, analyze=True).splitlines()
    headers = [line for line in lines if line.startswith("-- ") and not line.startswith("--   ")]
    assert headers == [
        "-- the walk",
        "-- EXPLAIN (ANALYZE, BUFFERS)",
    ]


def test_explain_prints_the_orphan_report_as_a_call_runs_it(
    vclient: Client, view_runtime: Runtime, db: Engine, tenant: Tenant
) -> None:
    written_ids(vclient, part_body("shop", "cart"))
    script = explain_view(view_runtime, tenant.id, "g_orphans", {"limit": 5})
    (report_sql,) = split_statements(script.splitlines(), ["-- the orphan report"])
    with db.begin() as conn:
        assert [[r.key for r in rows] for rows in run_script(conn, script)] == [["cart"]]
    assert "/* memseek view g_orphans v1 */" in report_sql


def test_explain_checks_the_parameters_as_a_call_does(view_runtime: Runtime, tenant: Tenant) -> None:
    with pytest.raises(RequestInvalid) as caught:
        explain_view(view_runtime, tenant.id, "g_walk", {"seed": "a", "depth": 99})
    assert [d.loc for d in caught.value.details] == [("parameters", "depth")]


def split_statements(lines: list[str], headers: list[str]) -> list[str]:
    """The statements under each header line, in order (no EXPLAIN output asked for), up to the
    script's closing ROLLBACK."""
    starts = [lines.index(header) for header in headers]
    ends = starts[1:] + [lines.index("ROLLBACK;")]
    return ["\n".join(lines[start + 1 : end]).rstrip(";") for start, end in zip(starts, ends, strict=True)]
