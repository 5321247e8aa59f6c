"""Conformance audit, views: parameters and their JSON Schema, the second check, versions, packages, MCP.

Every expectation comes from the read-side spec (`views-and-search.md`: "View fields", "What is
checked, and when", "Discovering views with GET /views", "Parameter fields", "The view response
wrapper", "Errors") or the design (`memseek.md` §2 "The catalog", "Packages and MCP"). The `av5_`
views below let parameters supply the parts of a query the existing suites leave fixed (mode,
candidates, include, rerank, fusion, graph boost, ordering), so the second check of a view call
can be pinned part by part; `av5_pkg` pins versions that differ from `active: true`.
"""

from __future__ import annotations

from typing import Any

import pytest

from memseek.runtime import Runtime
from tests.blackbox.support import SCHEMA
from tests.blackbox.support import invalid
from tests.blackbox.support import note
from tests.blackbox.support import write
from tests.conftest import Client
from tests.conftest import Tenant
from tests.conftest import client_for
from tests.helpers import listed_views
from tests.helpers import locs
from tests.helpers import ok
from tests.helpers import view_query
from tests.openai_server import OpenAIServer

# --- "What is checked, and when": the second check, part by part ----------------------------------


SECOND_CHECK = [
    pytest.param("av5_knobs", {"task": ""}, "task", id="q-empty-for-a-text-search"),
    pytest.param("av5_knobs", {"task": "x", "mode": "sideways"}, "mode", id="mode-not-a-mode"),
    pytest.param("av5_knobs", {"task": "x", "cands": 0}, "cands", id="candidates-below-1"),
    pytest.param("av5_knobs", {"task": "x", "cands": 1001}, "cands", id="candidates-above-1000"),
    pytest.param("av5_knobs", {"task": "x", "inc": ["text", "bogus"]}, "inc", id="include-unknown-value"),
    pytest.param("av5_knobs", {"task": "x", "fld": ["label"]}, "fld", id="field-not-returnable"),
    pytest.param(
        "av5_knobs", {"task": "x", "fld": [f"f{i}" for i in range(17)]}, "fld", id="fields-above-16"
    ),
    pytest.param("av5_knobs", {"task": "x", "cols": ["sx_nowhere"]}, "cols", id="collection-unknown"),
    pytest.param("av5_knobs", {"task": "x", "status": "archived"}, "status", id="status-not-a-status"),
    pytest.param("av5_judged", {"task": "x", "top": 0}, "top", id="rerank-top-n-below-1"),
    pytest.param("av5_judged", {"task": "x", "top": 21}, "top", id="rerank-top-n-above-20"),
    pytest.param("av5_fused", {"task": "x", "sk": 0}, "sk", id="source-k-below-1"),
    pytest.param("av5_fused", {"task": "x", "sk": 101}, "sk", id="source-k-above-100"),
    pytest.param("av5_fused", {"task": "x", "w": 0}, "w", id="weight-not-above-0"),
    pytest.param("av5_fused", {"task": "x", "w": 100.5}, "w", id="weight-above-100"),
    pytest.param("av5_fused", {"task": "x", "rc": 0}, "rc", id="rank-constant-below-1"),
    pytest.param("av5_fused", {"task": "x", "rc": 1001}, "rc", id="rank-constant-above-1000"),
    pytest.param("av5_fused", {"task": "x", "fk": 101}, "fk", id="merged-k-above-100"),
    pytest.param("av5_boosted", {"anchor": "   "}, "anchor", id="anchor-blank-after-trim"),
    pytest.param("av5_boosted", {"anchor": "a" * 129}, "anchor", id="anchor-above-128"),
    pytest.param("av5_boosted", {"anchor": "a", "d": 5}, "d", id="boost-depth-above-4"),
    pytest.param("av5_boosted", {"anchor": "a", "d": 0}, "d", id="boost-depth-below-1"),
    pytest.param("av5_boosted", {"anchor": "a", "gw": 0}, "gw", id="boost-weight-not-above-0"),
    pytest.param("av5_boosted", {"anchor": "a", "gw": 1.5}, "gw", id="boost-weight-above-1"),
    pytest.param("av5_boosted", {"anchor": "a", "gl": 101}, "gl", id="boost-limit-above-100"),
    pytest.param("av5_sorted", {"entity": "e", "dir": "up"}, "dir", id="direction-not-asc-or-desc"),
]


@pytest.fixture
def av5(av5_runtime: Runtime, tenant: Tenant, server: OpenAIServer) -> Client:
    return client_for(av5_runtime, tenant)


@pytest.mark.parametrize(("view", "parameters", "name"), SECOND_CHECK)
def test_the_second_check_blames_the_parameter_that_supplied_the_part(
    av5: Client, view: str, parameters: dict[str, Any], name: str
) -> None:
    """Spec, "What is checked, and when": "When the view is called, Memseek rejects unknown,
    missing, wrongly typed, or out-of-range parameters, applies defaults, fills the placeholders,
    and validates the finished request a second time before running it. That second check matters
    when a parameter supplies part of the query itself"; each bound is the spec's own (q required
    for text; `params.candidates` 1-1000; include's list; fields "At most 16 names" and returnable;
    status active|draft|all; top_n 1-20; a source's k 1-100; weight "greater than 0 and at most
    100"; rank_constant 1-1000; k 1-100; anchor "trimmed, 1-128 characters"; depth 1-4; weight
    "above 0 and at most 1"; limit 1-100; direction asc or desc). Errors: "The request or a
    catalog reference is invalid | 422"."""
    found = locs(view_query(av5, view, parameters))
    assert ["parameters", name] in found, found
    assert all(loc[0] == "parameters" for loc in found), found


def test_a_parameter_that_overflows_the_formula_is_422_not_500(av5: Client, sx: Client) -> None:
    """Spec: "Every value produced must be finite" (rank expressions); a view call "validates the
    finished request"; Errors: an invalid request is `422`."""
    write(sx, note("weighty", scores={"importance": 10}))
    found = locs(view_query(av5, "av5_weighted", {"w": 1e308}))
    assert ["parameters", "w"] in found, found


def test_parameters_that_fit_every_part_run(av5: Client, sx: Client) -> None:
    """Spec: defaults are applied and "parameters shows the values supplied plus any defaults
    applied"; the bounds of the table above are inclusive."""
    (record,) = write(sx, note("alpha budget", content={"channel": "email"}))
    body = ok(view_query(av5, "av5_knobs", {"task": "budget", "cands": 1000, "inc": ["text", "depth"]}))
    assert body["parameters"] == {
        "task": "budget",
        "mode": "text",
        "cands": 1000,
        "status": "active",
        "inc": ["text", "depth"],
        "fld": ["channel"],
        "cols": ["sx_notes"],
        "depth": 0,
    }
    (hit,) = body["hits"]
    assert hit["id"] == record and hit["text"] == "alpha budget" and hit["depth"] == 0
    assert hit["fields"] == {"channel": "email"}
    fused = ok(view_query(av5, "av5_fused", {"task": "budget", "sk": 100, "w": 100, "rc": 1000, "fk": 100}))
    assert fused["input_record_ids"] == [record]
    assert fused["hits"][0]["rank_score"] == pytest.approx(100 / (1000 + 1))


# --- "They cannot widen the scope, change the ranking, or ask for more results than you allowed" ---


@pytest.mark.parametrize(
    "extra",
    [
        pytest.param({"k": 100}, id="k"),
        pytest.param({"scope": {"collections": ["sx_extra"]}}, id="scope"),
        pytest.param({"collections": ["sx_extra"]}, id="collections"),
        pytest.param({"rank": ["const", 1]}, id="rank"),
        pytest.param({"mode": "recent"}, id="mode"),
        pytest.param({"q": "other"}, id="q"),
        pytest.param({"where": {}}, id="where"),
        pytest.param({"include": ["scores"]}, id="include"),
        pytest.param({"version": 2}, id="version"),
    ],
)
def test_a_caller_cannot_widen_the_view(sx: Client, extra: dict[str, Any]) -> None:
    """Spec: callers "cannot widen the scope, change the ranking, or ask for more results than you
    allowed"; `POST /views/{name}/query` "Accepts only that view's parameters"; "choosing exact
    versions is something a deployment package does, not something a caller does"; unknown
    parameters are rejected."""
    (key,) = extra
    found = locs(view_query(sx, "sx_context", {"entity": "e1", "task": "x", **extra}))
    assert found == [["parameters", key]], found


def test_a_version_in_the_query_string_selects_nothing(av5: Client) -> None:
    """Spec: "A view is always addressed by name, and the name resolves to whichever version is
    currently active. There is no version in the URL"."""
    response = av5.post("/views/av5_pick/query?version=2", json={"entity": "e"})
    if response.status_code != 422:
        assert ok(response)["view"]["version"] == 1


# --- "Parameter fields": values at the edges of their types ---------------------------------------


@pytest.mark.parametrize("raw", ["1e999", "-1e999", "NaN", "Infinity"])
def test_a_number_parameter_must_be_finite(sx: Client, raw: str) -> None:
    """Spec: `number` is a parameter type and "Memseek rejects ... wrongly typed, or out-of-range
    parameters"; JSON has no infinite or NaN numbers."""
    data = f'{{"entity": "maria", "min_amount": {raw}}}'.encode()
    response = sx.post("/views/sx_contract/query", data=data, headers={"Content-Type": "application/json"})
    found = [d["loc"] for d in invalid(response)["details"]]
    if raw not in ("NaN", "Infinity"):  # not JSON at all: a malformed body may be refused as such
        assert ["parameters", "min_amount"] in found, found


EMOJI = "\U0001f600"  # one character outside the Basic Multilingual Plane: 4 bytes of UTF-8


@pytest.mark.parametrize(
    ("entity", "accepted"),
    [
        pytest.param(EMOJI * 3, True, id="3-characters"),
        pytest.param(EMOJI * 12, True, id="12-characters"),
        pytest.param(EMOJI * 2, False, id="2-characters"),
        pytest.param(EMOJI * 13, False, id="13-characters"),
    ],
)
def test_length_bounds_count_a_wide_character_once(sx: Client, entity: str, accepted: bool) -> None:
    """Spec: "`min_length`, `max_length` | `string` | Inclusive character-count bounds"
    (`sx_contract.entity` declares 3 and 12)."""
    response = view_query(sx, "sx_contract", {"entity": entity})
    if accepted:
        assert ok(response)["parameters"]["entity"] == entity
    else:
        invalid(response, "parameters", "entity")


@pytest.mark.parametrize(
    "moment",
    ["2026-07-17T09:00:00Z", "2026-07-17T11:00:00+02:00", "2026-07-17T09:00:00.250000+00:00"],
)
def test_a_datetime_with_a_timezone_is_accepted_and_echoed(sx: Client, moment: str) -> None:
    """Spec: "Datetime values must include a timezone (`2026-07-17T09:00:00Z`)"; "parameters shows
    the values supplied"."""
    body = ok(view_query(sx, "sx_contract", {"entity": "maria", "after": moment}))
    assert body["parameters"]["after"] == moment


# --- GET /views: graph contracts and what a view can be seen to read ------------------------------


def test_graph_views_publish_their_fixed_contract(sx: Client) -> None:
    """Spec, Graph views: "exactly seed, predicates, direction, and limit, with the types and
    defaults above"; "seed ... must be 1-128 characters"; "direction is out, in, or both"; "depth
    is how many links to follow (1-16) and limit caps how many paths come back (1-500)"; orphans:
    "limit is its only parameter, accepting 1-500"; input_schema includes "allowed values,
    numeric and length limits, and defaults"; `collections` "lists the collections the view can
    be seen to read"."""
    views = listed_views(sx)
    walk, orphans = views[("sx_walk", 1)], views[("sx_orphans", 1)]
    assert (walk["kind"], orphans["kind"]) == ("graph", "graph_orphans")
    assert walk["parameters"] == {
        "seed": {"type": "string", "required": True, "default": None},
        "predicates": {"type": "string_array", "required": False, "default": []},
        "direction": {"type": "string", "required": False, "default": "out"},
        "depth": {"type": "integer", "required": False, "default": 1},
        "limit": {"type": "integer", "required": False, "default": 20},
    }
    assert walk["input_schema"] == {
        "$schema": SCHEMA,
        "type": "object",
        "properties": {
            "seed": {"type": "string", "minLength": 1, "maxLength": 128},
            "predicates": {"type": "array", "items": {"type": "string"}, "default": []},
            "direction": {"type": "string", "enum": ["out", "in", "both"], "default": "out"},
            "depth": {"type": "integer", "minimum": 1, "maximum": 16, "default": 1},
            "limit": {"type": "integer", "minimum": 1, "maximum": 500, "default": 20},
        },
        "additionalProperties": False,
        "required": ["seed"],
    }
    assert orphans["parameters"] == {"limit": {"type": "integer", "required": False, "default": 50}}
    assert orphans["input_schema"] == {
        "$schema": SCHEMA,
        "type": "object",
        "properties": {"limit": {"type": "integer", "minimum": 1, "maximum": 500, "default": 50}},
        "additionalProperties": False,
        "required": [],
    }
    assert "sx_links" in walk["collections"]
    assert {"sx_links", "sx_parts"} <= set(orphans["collections"])
    assert walk["required_capabilities"] == orphans["required_capabilities"] == []


def test_a_view_with_an_empty_scope_lists_every_collection_it_can_read(av5: Client) -> None:
    """Spec: "An empty scope means 'everything this workspace can see' in ordinary collections";
    `collections` "lists the collections the view can be seen to read" (docs/search.md, "Empty
    scope": edges collections — `sx_links` here — are graph data, not ordinary collections)."""
    entry = listed_views(av5)[("av5_everything", 1)]
    assert sorted(entry["collections"]) == [
        "sx_extra",
        "sx_notes",
        "sx_parts",
        "sx_tagged",
        "sx_vec",
        "sx_versioned",
    ]
    assert entry["profiles"] == ["pg_default"] and entry["parameters"] == {}
