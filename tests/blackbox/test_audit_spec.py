"""Conformance audit of the read side, over HTTP: statements of the spec no earlier suite pinned.

Every read route answers a client mistake with a `422` in the one error shape, never a `500`
(spec, Errors: "The request ... is invalid → 422"). Text PostgreSQL cannot store (a NUL character,
an unpaired surrogate) is such a mistake wherever it appears in a request.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.blackbox.conftest import ClientFactory
from tests.blackbox.support import ids
from tests.blackbox.support import invalid
from tests.blackbox.support import mcp_tools
from tests.blackbox.support import note
from tests.blackbox.support import search
from tests.blackbox.support import write
from tests.conftest import Client
from tests.helpers import ok

COMBINED = {"q": "x", "fuse": {"kind": "rrf"}}
NUL = "a\x00b"
SURROGATE = "a\ud800b"


def source(**values: Any) -> dict[str, Any]:
    return {"name": "s", "mode": "text", "scope": {"collections": ["sx_notes"]}, **values}


@pytest.mark.parametrize(
    ("body", "loc"),
    [
        pytest.param({"q": NUL, "mode": "text"}, ["q"], id="q-nul"),
        pytest.param({"q": SURROGATE, "mode": "text"}, ["q"], id="q-surrogate"),
        pytest.param(
            {"q": NUL, "mode": "hybrid", "scope": {"collections": ["sx_vec"]}}, ["q"], id="q-nul-hybrid"
        ),
        pytest.param(
            {"q": "x", "mode": "text", "scope": {"entities": ["e1", NUL]}},
            ["scope", "entities", 1],
            id="entity-nul",
        ),
        pytest.param(
            {"q": "x", "mode": "text", "scope": {"types": [NUL]}}, ["scope", "types", 0], id="type-nul"
        ),
        pytest.param(
            {
                "q": "x",
                "mode": "text",
                "scope": {"collections": ["sx_notes"]},
                "where": {"channel": {"eq": NUL}},
            },
            ["where", "channel", "eq"],
            id="where-eq-nul",
        ),
        pytest.param(
            {
                "q": "x",
                "mode": "text",
                "scope": {"collections": ["sx_notes"]},
                "where": {"channel": {"in": ["email", SURROGATE]}},
            },
            ["where", "channel", "in", 1],
            id="where-in-surrogate",
        ),
        pytest.param(
            {
                "q": "x",
                "mode": "text",
                "scope": {"collections": ["sx_notes"]},
                "where": {"tags": {"contains_any": [NUL]}},
            },
            ["where", "tags", "contains_any", 0],
            id="where-contains-nul",
        ),
        pytest.param(
            {"q": "x", "mode": "text", "graph_boost": {"anchor": NUL}},
            ["graph_boost", "anchor"],
            id="graph-boost-anchor-nul",
        ),
        pytest.param(
            {"q": "x", "mode": "text", "render": True, "fence": {"preamble": NUL}},
            ["fence", "preamble"],
            id="fence-preamble-nul",
        ),
        pytest.param({**COMBINED, "q": NUL, "sources": [source()]}, ["q"], id="combined-q-nul"),
        pytest.param(
            {**COMBINED, "sources": [source(scope={"collections": ["sx_notes"], "entities": [NUL]})]},
            ["sources", 0, "scope", "entities", 0],
            id="source-entity-nul",
        ),
    ],
)
def test_unstorable_text_in_a_search_is_422_at_its_path(
    sx: Client, body: dict[str, Any], loc: list[Any]
) -> None:
    write(sx, note("a b x"))
    invalid(sx.post("/search", json=body), *loc)


@pytest.mark.parametrize("route", ["/search", "/context"])
@pytest.mark.parametrize("query", ["q=a%00b", "q=x&entity=e%00", "q=x&collection=sx%00notes"])
def test_unstorable_text_in_a_get_route_is_422(sx: Client, route: str, query: str) -> None:
    invalid(sx.get(f"{route}?{query}"))


@pytest.mark.parametrize(
    ("view", "parameters", "name"),
    [
        pytest.param("sx_context", {"entity": NUL, "task": "x"}, "entity", id="search-view-entity"),
        pytest.param("sx_context", {"entity": "e1", "task": SURROGATE}, "task", id="search-view-task"),
        pytest.param("sx_walk", {"seed": NUL}, "seed", id="graph-seed"),
        pytest.param(
            "sx_walk", {"seed": "a", "predicates": ["needs", NUL]}, "predicates", id="graph-predicate"
        ),
    ],
)
def test_unstorable_text_in_view_parameters_is_422_naming_the_parameter(
    sx: Client, view: str, parameters: dict[str, Any], name: str
) -> None:
    invalid(sx.post(f"/views/{view}/query", json=parameters), "parameters", name)


# --- a scope finds its matches, however many better matches lie outside it ------------------------


LONE = "a long planning meeting where the yearly budget came up once among many other things"
# Spec, Scopes: "scope narrows a search to the records that should even be considered"; every
# proposal is re-checked, so a bounded proposal that holds only records outside the scope must not
# stand for the whole answer. CROWD exceeds the candidates of a default search (k 20 → 200).
CROWD = 250


def crowd(**values: Any) -> list[dict[str, Any]]:
    """CROWD short records that match `budget` better than LONE does."""
    record = {"collection": "sx_extra", "entity": "crowd", "type": "note", "text": "budget budget"}
    return [record | values for _ in range(CROWD)]


@pytest.mark.parametrize(
    ("scope", "lone"),
    [
        pytest.param({"collections": ["sx_notes"]}, note(LONE), id="collection"),
        pytest.param({"types": ["fact"]}, note(LONE, type="fact"), id="type"),
        pytest.param({"status": "draft"}, note(LONE, status="draft"), id="drafts"),
    ],
)
def test_a_search_finds_the_matches_of_its_scope_beside_a_crowd_outside_it(
    sx: Client, scope: dict[str, Any], lone: dict[str, Any]
) -> None:
    write(sx, *crowd())
    (lone_id,) = write(sx, lone)
    body = search(sx, {"q": "budget", "mode": "text", "scope": scope})
    assert ids(body) == [lone_id]


def test_superseded_values_never_crowd_out_the_current_ones(sx: Client) -> None:
    history = [note("budget budget", entity="crowd", key="plan", type="fact") for _ in range(CROWD)]
    *_, current = write(sx, *history)
    (lone_id,) = write(sx, note(LONE))
    body = search(sx, {"q": "budget", "mode": "text", "scope": {"collections": ["sx_notes"]}})
    assert sorted(ids(body)) == sorted([current, lone_id])


# --- the published contract shows the deployment's graph ceilings ---------------------------------


# Spec: input_schema "is the complete machine-readable contract, including ... numeric and length
# limits"; graph depth (1-16) and limit (1-500) may have lower deployment ceilings.
def published_schemas(client: Client) -> dict[str, dict[str, Any]]:
    """Each graph view's input schema as `GET /views` and the MCP tool list publish it."""
    listed = {
        v["name"]: v["input_schema"] for v in ok(client.get("/views"))["views"] if v["kind"] != "search"
    }
    tools = {name: t["inputSchema"] for name, t in mcp_tools(client).items() if name in listed}
    assert tools == {name: listed[name] for name in tools}
    return listed


def test_input_schemas_show_the_deployments_graph_ceilings(sx_with: ClientFactory) -> None:
    schemas = published_schemas(sx_with(max_graph_depth=3, max_graph_paths=10))
    walk, orphans = schemas["sx_walk"]["properties"], schemas["sx_orphans"]["properties"]
    assert (walk["depth"]["maximum"], walk["limit"]["maximum"], orphans["limit"]["maximum"]) == (3, 10, 10)


def test_input_schemas_show_the_spec_bounds_under_the_default_ceilings(sx: Client) -> None:
    schemas = published_schemas(sx)
    walk, orphans = schemas["sx_walk"]["properties"], schemas["sx_orphans"]["properties"]
    assert (walk["depth"]["maximum"], walk["limit"]["maximum"], orphans["limit"]["maximum"]) == (16, 500, 500)


# --- GET /search and GET /context: every problem is located at the query parameter ----------------


# Design, errors: "details items carry a loc (JSON path)"; a GET request has no body, so its
# problems are at ["query", <parameter>] — as a missing `q` or an unknown parameter already are.
@pytest.mark.parametrize("route", ["/search", "/context"])
@pytest.mark.parametrize(
    ("query", "parameter"),
    [
        pytest.param("q=%20", "q", id="q-blank"),
        pytest.param("q=x&k=0", "k", id="k-0"),
        pytest.param("q=x&k=101", "k", id="k-101"),
        pytest.param("q=x&entity=", "entity", id="entity-empty"),
        pytest.param("q=x&collection=", "collection", id="collection-empty"),
        pytest.param("q=x&collection=nope", "collection", id="collection-unknown"),
        pytest.param("q=a%00b", "q", id="q-nul"),
    ],
)
def test_get_route_problems_are_located_at_the_query_parameter(
    sx: Client, route: str, query: str, parameter: str
) -> None:
    invalid(sx.get(f"{route}?{query}"), "query", parameter)


@pytest.mark.parametrize(
    ("query", "parameter"),
    [
        pytest.param("q=x&fence_tag=1bad", "fence_tag", id="fence-tag"),
        pytest.param("q=x&fence_preamble=%00", "fence_preamble", id="fence-preamble"),
    ],
)
def test_get_context_fence_problems_are_located_at_the_query_parameter(
    sx: Client, query: str, parameter: str
) -> None:
    invalid(sx.get(f"/context?{query}"), "query", parameter)
