"""Audit of auth, workspace isolation, the HTTP conventions, configuration and the CLI.

Design §1 "Workspace and authentication", §3 "HTTP API beyond the spec", §4 "Configuration" and
the spec's "Errors" and "Deployment limits", on corners the other black-box files do not pin.
Each test quotes the sentence it checks; expected values come from the documents.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any
from uuid import uuid4

import pytest
from flask import Flask
from sqlalchemy.engine import Engine

from memseek.errors import ConfigError
from memseek.runtime import Runtime
from memseek.settings import Settings
from tests.blackbox.conftest import ClientFactory
from tests.blackbox.support import at
from tests.blackbox.support import ids
from tests.blackbox.support import invalid
from tests.blackbox.support import link
from tests.blackbox.support import note
from tests.blackbox.support import part
from tests.blackbox.support import search
from tests.blackbox.support import sx_catalog
from tests.blackbox.support import vec
from tests.blackbox.support import write
from tests.conftest import Client
from tests.conftest import Tenant
from tests.conftest import client_for
from tests.helpers import cli_env
from tests.helpers import error
from tests.helpers import fetch
from tests.helpers import memseek
from tests.helpers import ok
from tests.helpers import touches_written
from tests.helpers import view_query
from tests.helpers import with_settings

# --- design §1: nothing crosses a workspace boundary ----------------------------------------------


ACTIONS = [
    pytest.param("GET", "", None, id="get"),
    pytest.param("POST", "/retract", {"reason": "mine now"}, id="retract"),
    pytest.param("POST", "/approve", None, id="approve"),
    pytest.param("POST", "/reject", {"reason": "no"}, id="reject"),
]


def without(text: str, *values: str) -> str:
    """`text` with each of `values` replaced by a placeholder (to compare two answers that differ
    only in the id they name)."""
    for value in values:
        text = text.replace(value, "<id>")
    return text


@pytest.fixture
def sx_other(sx_app: Flask, other_tenant: Tenant, sx: Client) -> Client:
    """A client of the `sx_` app for a second workspace (`other_tenant`)."""
    return Client(sx_app.test_client(), other_tenant)


@pytest.mark.parametrize(("method", "suffix", "body"), ACTIONS)
def test_a_foreign_record_id_is_answered_exactly_like_an_unknown_id(
    sx: Client, sx_other: Client, method: str, suffix: str, body: Any
) -> None:
    """§1: "A record id from another workspace is answered exactly like an unknown id (`404`),
    never `403`." — same status, same body (but for the id it names), and nothing happens."""
    (foreign,) = write(sx_other, note("their proposal", key="plan", status="draft"))
    unknown = str(uuid4())
    theirs = sx.request(method, f"/records/{foreign}{suffix}", json=body)
    nobody = sx.request(method, f"/records/{unknown}{suffix}", json=body)
    error(theirs, 404, "not_found")
    error(nobody, 404, "not_found")
    assert without(theirs.get_data(as_text=True), foreign) == without(nobody.get_data(as_text=True), unknown)
    record = fetch(sx_other, foreign)
    assert (record["status"], record["retracted_at"], record["current"]) == ("draft", None, True)


NOTES = {"collections": ["sx_notes"]}


def test_deriving_from_a_foreign_record_is_refused_like_an_unknown_id(sx: Client, sx_other: Client) -> None:
    """§1 Records: `derived_from` — "ids of the records it was derived from (same workspace, must
    exist)"; a record id from another workspace "is answered exactly like an unknown id"."""
    (foreign,) = write(sx_other, note("their evidence"))
    unknown = str(uuid4())
    theirs = sx.post("/records", json={"records": [note("derived", derived_from=[foreign])]})
    nobody = sx.post("/records", json={"records": [note("derived", derived_from=[unknown])]})
    invalid(theirs)
    invalid(nobody)
    assert without(theirs.get_data(as_text=True), foreign) == without(nobody.get_data(as_text=True), unknown)
    assert search(sx, {"mode": "recent", "scope": NOTES})["hits"] == []


VECS = {"collections": ["sx_vec"]}


def observed(client: Client, body: dict[str, Any]) -> tuple[list[str], list[float], Any]:
    """What a search shows: hit ids, rank_scores and the backend diagnostics."""
    answer = search(client, body)
    return ids(answer), [hit["rank_score"] for hit in answer["hits"]], answer["backend"]


@pytest.mark.parametrize(
    "body",
    [
        pytest.param({"mode": "text", "rank": ["text_match"]}, id="text"),
        pytest.param({"mode": "recent", "rank": ["score", "importance"]}, id="recent"),
        pytest.param({"mode": "vector", "rank": ["similarity"], "k": 1}, id="vector"),
        pytest.param(
            {"mode": "hybrid", "rank": ["sum", [["similarity"], ["text_match"]]], "k": 1}, id="hybrid"
        ),
    ],
)
def test_another_workspaces_records_change_no_result_score_or_count(
    sx: Client, sx_other: Client, body: dict[str, Any]
) -> None:
    """§1: "Nothing ever crosses a workspace boundary: not in results, counts, graph walks, boosts,
    errors or timing-visible behaviour that we can avoid." Another workspace full of better
    matches (identical text, so identical vectors) changes nothing this workspace sees:
    hits, scores (formulas that do not age), nor `candidate_count`."""
    write(sx, note("budget review of Q3"), note("lunch"), vec("budget review notes"), vec("lunch plans"))
    scope = VECS if body["mode"] in ("vector", "hybrid") else NOTES
    body = {**body, "q": "budget review", "scope": scope}
    before = observed(sx, body)
    assert before[0]
    flood = [note("budget review budget review"), vec("budget review")]
    write(sx_other, *(flood * 150))
    assert observed(sx, body) == before


def test_graph_boost_never_walks_another_workspaces_links(sx: Client, sx_other: Client) -> None:
    """§1: nothing crosses a workspace boundary — "graph walks, boosts". Spec: graph_boost "matches
    a result when its key or its entity is one of those nodes"; the walk reads this workspace's
    links only, so another workspace's link to `far` neither matches nor counts."""
    write(sx, note("near", entity="near", scores={"importance": 2}), note("far", entity="far"))
    write(sx_other, link("hub", "r", "far"))
    body = {
        "mode": "recent",
        "scope": NOTES,
        "rank": ["score", "importance"],
        "graph_boost": {"graph": "sx_walk", "anchor": "hub", "weight": 1.0},
    }
    answer = search(sx, body)
    assert [hit["rank_score"] for hit in answer["hits"]] == [2.0, 0.0]
    assert (answer["graph_boost"]["matched_records"], answer["graph_boost"]["edge_count"]) == (0, 0)
    write(sx, link("hub", "r", "far"))  # the same link in this workspace does match
    answer = search(sx, body)
    assert answer["graph_boost"]["matched_records"] == 1 and answer["graph_boost"]["edge_count"] == 1


def test_an_orphan_report_sees_only_its_own_workspace(sx: Client, sx_other: Client) -> None:
    """§1: nothing crosses a workspace boundary; spec: an orphan is a current node "with no links at
    all, in either direction" — another workspace's link to it is no link of this workspace, and
    another workspace's nodes are not this workspace's orphans."""
    write(sx, part("alone"))
    write(sx_other, link("alone", "r", "elsewhere"), part("theirs"))
    mine = ok(view_query(sx, "sx_orphans", {}))
    assert [o["key"] for o in mine["orphans"]] == ["alone"]
    theirs = ok(view_query(sx_other, "sx_orphans", {}))
    assert [o["key"] for o in theirs["orphans"]] == ["theirs"]


# --- design §1: the bearer key --------------------------------------------------------------------


@pytest.mark.parametrize(
    "header",
    [
        pytest.param("Bearer {key} extra", id="trailing-token"),
        pytest.param("Token {key}", id="other-scheme"),
        pytest.param("{key}", id="no-scheme"),
        pytest.param("Bearer {prefix}", id="stored-prefix-only"),
        pytest.param("Bearer {key}x", id="one-more-character"),
        pytest.param("Bearer clé-inconnue", id="non-ascii"),
        pytest.param("Bearer", id="scheme-only"),
    ],
)
@pytest.mark.parametrize(
    ("method", "path", "body"),
    [
        pytest.param("GET", "/views", None, id="views"),
        pytest.param("POST", "/search", {"mode": "recent"}, id="search"),
        pytest.param("POST", "/records", {"records": [note()]}, id="records"),
    ],
)
def test_a_malformed_authorization_header_is_401(
    sx: Client, header: str, method: str, path: str, body: Any
) -> None:
    """§1: "Every route except `GET /health` requires `Authorization: Bearer <key>` … Missing or
    unknown key → `401`." — a header that is not exactly a live key is refused, never a 500."""
    value = header.format(key=sx.tenant.key, prefix=sx.tenant.key[:12])
    response = sx.raw.open(path, method=method, json=body, headers={"Authorization": value})
    error(response, 401, "unauthorized")


# --- design §3: 413, and bodies of the wrong JSON type --------------------------------------------


ID = "0190a4f2-7b1c-7def-8abc-0123456789ab"
POST_ROUTES = [
    pytest.param("/records", id="records"),
    pytest.param("/search", id="search"),
    pytest.param("/views/sx_context/query", id="view-query"),
    pytest.param(f"/records/{ID}/retract", id="retract"),
    pytest.param(f"/records/{ID}/approve", id="approve"),
    pytest.param(f"/records/{ID}/reject", id="reject"),
    pytest.param("/mcp", id="mcp"),
]


@pytest.mark.parametrize("path", POST_ROUTES)
def test_every_post_route_refuses_a_body_over_the_limit_with_413(
    sx_runtime: Runtime, tenant: Tenant, path: str
) -> None:
    """§3: "Status codes as in the spec, plus `401` (auth), `404`, `409` (conflict, response too
    large), `413` (body too large)", in the one error shape on every route."""
    client = client_for(with_settings(sx_runtime, max_request_bytes=1000), tenant)
    body = json.dumps({"reason": "x" * 2000, "padding": "y" * 2000}).encode()
    response = client.request("POST", path, data=body, headers={"Content-Type": "application/json"})
    error(response, 413, "payload_too_large")


@pytest.mark.parametrize(
    "body", [[], "text", 7, None, True], ids=["array", "string", "number", "null", "bool"]
)
@pytest.mark.parametrize(
    "path",
    [
        pytest.param("/records", id="records"),
        pytest.param("/search", id="search"),
        pytest.param("/views/sx_context/query", id="view-query"),
        pytest.param("/views/sx_walk/query", id="graph-view-query"),
        pytest.param(f"/records/{ID}/retract", id="retract"),
        pytest.param(f"/records/{ID}/reject", id="reject"),
    ],
)
def test_a_json_body_that_is_not_an_object_is_422(sx: Client, path: str, body: Any) -> None:
    """Spec, Errors: "The request or a catalog reference is invalid → `422`"; design §3: the one
    error shape on every route (never a 500)."""
    raw = json.dumps(body).encode()
    error(sx.request("POST", path, data=raw, headers={"Content-Type": "application/json"}), 422)


# --- GET /openapi.json ----------------------------------------------------------------------------


def schema_at(spec: dict[str, Any], name: str, prop: str) -> dict[str, Any]:
    """The schema of property `prop` of component `name`, its `$ref` / nullable `anyOf` resolved."""
    schema = spec["components"]["schemas"][name]["properties"][prop]
    merged = dict(schema)
    for option in schema.get("anyOf", []):
        if option.get("type") != "null":
            merged.update(option)
    return merged


@pytest.mark.parametrize(
    ("component", "prop", "expected"),
    [
        pytest.param("SingleSearch", "k", {"minimum": 1, "maximum": 100, "default": 20}, id="k"),
        pytest.param("Source", "k", {"minimum": 1, "maximum": 100}, id="source-k"),
        pytest.param("CombinedSearch", "k", {"minimum": 1, "maximum": 100, "default": 20}, id="combined-k"),
        pytest.param("Params", "candidates", {"minimum": 1, "maximum": 1000}, id="candidates"),
        pytest.param("Fuse", "rank_constant", {"minimum": 1, "maximum": 1000, "default": 60}, id="rrf"),
        pytest.param("Source", "weight", {"default": 1.0}, id="source-weight"),
        pytest.param("Rerank", "top_n", {"minimum": 1, "maximum": 20}, id="top-n"),
        pytest.param("GraphBoost", "anchor", {"minLength": 1, "maxLength": 128}, id="anchor"),
        pytest.param("GraphBoost", "depth", {"minimum": 1, "maximum": 4, "default": 2}, id="boost-depth"),
        pytest.param(
            "GraphBoost", "weight", {"exclusiveMinimum": 0, "maximum": 1, "default": 0.05}, id="boost-weight"
        ),
        pytest.param("GraphBoost", "limit", {"minimum": 1, "maximum": 100, "default": 100}, id="boost-limit"),
        pytest.param("SingleSearch", "fields", {"maxItems": 16}, id="fields"),
        pytest.param("SingleSearch", "annotations", {"maxItems": 16}, id="annotations"),
        pytest.param("RecordsIn", "records", {"minItems": 1, "maxItems": 1000}, id="records"),
        pytest.param("RecordIn", "status", {"default": "active"}, id="status"),
    ],
)
def test_openapi_states_the_documented_bounds_and_defaults(
    sx: Client, component: str, prop: str, expected: dict[str, Any]
) -> None:
    """§3: "`GET /openapi.json` — the OpenAPI 3.1 description of every route, generated from the
    same pydantic models that validate requests"; the bounds and defaults are the spec's
    (k "default 20, between 1 and 100", candidates 1–1000, rank_constant "defaults to 60 and
    must be 1–1000", top_n 1–20, graph_boost anchor "1–128 characters", depth "1–4, default 2",
    weight "above 0 and at most 1, default 0.05", limit "1–100, default 100", at most 16 field and
    annotation names) and the design's (1–1,000 records, status "default `active`")."""
    spec = ok(sx.get("/openapi.json"))
    schema = schema_at(spec, component, prop)
    assert {key: schema.get(key) for key in expected} == expected


def object_schemas(schema: Any) -> list[dict[str, Any]]:
    """Every object schema declaring `properties` inside `schema`."""
    found: list[dict[str, Any]] = []
    if isinstance(schema, dict):
        if "properties" in schema:
            found.append(schema)
        for value in schema.values():
            found += object_schemas(value)
    elif isinstance(schema, list):
        for value in schema:
            found += object_schemas(value)
    return found


def test_every_request_object_in_openapi_forbids_unknown_keys(sx: Client) -> None:
    """§3 `RecordIn`: "Unknown keys are rejected"; §5 parse: "unknown keys are errors"; the
    description is "generated from the same pydantic models that validate requests"."""
    spec = ok(sx.get("/openapi.json"))
    schemas = spec["components"]["schemas"]
    bodies = [
        operation["requestBody"]["content"]["application/json"]["schema"]
        for item in spec["paths"].values()
        for operation in item.values()
        if "requestBody" in operation
    ]
    requests = {body["$ref"].rsplit("/", 1)[-1] for body in bodies}
    assert {"RecordsIn", "SearchRequest", "ReasonIn"} <= requests
    checked = [schema for name, schema in schemas.items() if name not in ("Error", "ViewParameters")]
    for schema in object_schemas(checked):
        assert schema.get("additionalProperties") is False, schema.get("title")


# --- configuration: deployment ceilings never widen the spec's ranges -----------------------------


def ceiling_client(sx_with: ClientFactory, **settings: int) -> Client | None:
    """A client whose deployment sets `settings`, or None when the settings refuse such values
    (also acceptable: the variable is then named)."""
    environ = {name.upper(): str(value) for name, value in settings.items()}
    try:
        Settings.from_env(environ)
    except ConfigError as exc:
        assert any(name in str(exc) for name in environ), exc
        return None
    return sx_with(**settings)


@pytest.mark.parametrize(
    ("view", "parameters", "loc"),
    [
        pytest.param("sx_walk", {"seed": "a", "depth": 17}, "depth", id="walk-depth-17"),
        pytest.param("sx_walk", {"seed": "a", "limit": 501}, "limit", id="walk-limit-501"),
        pytest.param("sx_orphans", {"limit": 501}, "limit", id="orphans-limit-501"),
    ],
)
def test_a_ceiling_above_the_spec_range_does_not_widen_it(
    sx_with: ClientFactory, view: str, parameters: dict[str, Any], loc: str
) -> None:
    """Spec: "depth is how many links to follow (1–16) and limit caps how many paths come back
    (1–500). Your deployment may impose lower ceilings than those."; orphans: "limit is its only
    parameter, accepting 1–500". A deployment ceiling only lowers these ranges."""
    client = ceiling_client(sx_with, max_graph_depth=20, max_graph_paths=1000)
    if client is None:
        return
    invalid(view_query(client, view, parameters), "parameters", loc)
    schema = next(v for v in ok(client.get("/views"))["views"] if v["name"] == view)["input_schema"]
    assert schema["properties"][loc]["maximum"] == {"depth": 16, "limit": 500}[loc]


@pytest.mark.parametrize(
    ("boost", "loc"),
    [
        pytest.param({"depth": 5}, "depth", id="depth-5"),
        pytest.param({"limit": 101}, "limit", id="limit-101"),
    ],
)
def test_a_ceiling_above_the_spec_range_does_not_widen_graph_boost(
    sx_with: ClientFactory, boost: dict[str, Any], loc: str
) -> None:
    """Spec: graph_boost "depth: 2 # how many links out to look, 1–4", "limit: 100 # how many paths
    to walk, 1–100"."""
    client = ceiling_client(sx_with, max_graph_depth=20, max_graph_paths=1000)
    if client is None:
        return
    body = {"mode": "recent", "scope": NOTES, "graph_boost": {"anchor": "hub", **boost}}
    invalid(client.post("/search", json=body), "graph_boost", loc)


# --- MAX_QUERY_CHARS: characters, at the exact boundary -------------------------------------------


@pytest.mark.parametrize("char", ["a", "é", "語", "😀"], ids=["ascii", "latin", "cjk", "astral"])
def test_max_query_chars_counts_characters_not_bytes(sx: Client, char: str) -> None:
    """Spec: "`MAX_QUERY_CHARS` Maximum length of the query text `q` (8,192 by default)"; design
    §4 `MAX_QUERY_CHARS` default 8192. 8,192 characters pass whatever their UTF-8 length; 8,193
    are a 422 at `q`."""
    assert search(sx, {"mode": "text", "q": char * 8192, "scope": NOTES})["hits"] == []
    invalid(sx.post("/search", json={"mode": "text", "q": char * 8193, "scope": NOTES}), "q")


def test_max_query_chars_bounds_get_search_and_get_context_exactly(sx: Client) -> None:
    """Spec: `MAX_QUERY_CHARS` bounds "the query text `q`" (8,192 by default) — `GET /search` and
    `GET /context` take `q` as a query parameter."""
    for route in ("/search", "/context"):
        assert sx.get(f"{route}?q={'a' * 8192}&collection=sx_vec").status_code == 200, route
        invalid(sx.get(f"{route}?q={'a' * 8193}&collection=sx_vec"), "query", "q")


def test_max_query_chars_bounds_a_combined_search_and_a_view_exactly(sx: Client) -> None:
    """Spec: `MAX_QUERY_CHARS` (8,192 by default) — for a combined search's shared `q` and for the
    `q` a view fills from its parameters."""
    sources = [
        {"name": "a", "mode": "text", "scope": NOTES},
        {"name": "b", "mode": "recent", "scope": {"collections": ["sx_extra"]}},
    ]
    combined = {"sources": sources, "fuse": {"kind": "rrf"}}
    assert search(sx, {**combined, "q": "b" * 8192})["hits"] == []
    invalid(sx.post("/search", json={**combined, "q": "b" * 8193}), "q")
    assert ok(view_query(sx, "sx_context", {"entity": "e", "task": "c" * 8192}))["hits"] == []
    invalid(view_query(sx, "sx_context", {"entity": "e", "task": "c" * 8193}), "parameters", "task")


# --- MAX_RESPONSE_BYTES: the exact byte count, every route, and no touch --------------------------


LISTING = {"entity": "lister", "start": "2026-07-01T00:00:00Z", "end": "2026-08-01T00:00:00Z"}


@pytest.mark.parametrize(
    ("method", "path", "body"),
    [
        pytest.param("POST", "/views/sx_listing/query", LISTING, id="search-view"),
        pytest.param("POST", "/views/sx_walk/query", {"seed": "hub", "limit": 500}, id="graph-view"),
        pytest.param("POST", "/views/sx_orphans/query", {"limit": 500}, id="orphans-view"),
        # not GET /search: its default formula ages last_accessed, so two calls' scores (and
        # their digits) differ by the time between them; test_a_response_too_large_touches_nothing
        # covers its 409
    ],
)
def test_the_response_limit_is_the_exact_byte_count_on_every_route(
    sx: Client, sx_with: ClientFactory, method: str, path: str, body: Any
) -> None:
    """Spec: "`MAX_RESPONSE_BYTES` | Size of the whole JSON response, past which you get `409`";
    "The whole response is size-bounded" — a response of exactly the limit passes."""
    write(
        sx,
        *(note(f"row {i}", entity="lister", content={"starts_at": at(i + 1, 9)}) for i in range(3)),
        *(link("hub", "r", f"leaf{i}") for i in range(3)),
        *(part(f"p{i}") for i in range(3)),
        *(vec(f"alpha {i}") for i in range(3)),
    )
    unbounded = sx.request(method, path, json=body)
    assert unbounded.status_code == 200, unbounded.get_data(as_text=True)
    size = len(unbounded.get_data())
    touches_written(sx)
    assert sx_with(max_response_bytes=size).request(method, path, json=body).status_code == 200
    too_small = sx_with(max_response_bytes=size - 1).request(method, path, json=body)
    error(too_small, 409, "response_too_large")


@pytest.mark.parametrize(
    ("method", "path", "body"),
    [
        pytest.param("POST", "/search", {"mode": "recent", "include": ["text"]}, id="post-search"),
        pytest.param("GET", "/search?q=unread&collection=sx_vec", None, id="get-search"),
        pytest.param("POST", "/views/sx_context/query", {"entity": "e1", "task": "unread"}, id="view"),
    ],
)
def test_a_response_too_large_touches_nothing(
    sx: Client, sx_with: ClientFactory, method: str, path: str, body: Any
) -> None:
    """Spec: "Exceeding the limit does not silently drop results: the request fails with 409
    response_too_large"; "Afterwards, returned records have their "last read" timestamp updated"
    — a request that failed returned no records."""
    records = write(sx, note("unread " + "x" * 500), vec("unread " + "y" * 500))
    before = [fetch(sx, record)["last_accessed"] for record in records]
    small = sx_with(max_response_bytes=300)
    error(small.request(method, path, json=body), 409, "response_too_large")
    touches_written(small)
    assert [fetch(sx, record)["last_accessed"] for record in records] == before


# --- configuration errors and `memseek explain` through the command -------------------------------


def test_a_missing_catalog_directory_stops_the_command_naming_it(bw_url: str, tmp_path: Path) -> None:
    """§4: "`MEMSEEK_CATALOG` | the shipped reference catalog | catalog directory"; §2: "an invalid
    catalog refuses to start"."""
    missing = tmp_path / "no-such-catalog"
    env = cli_env(DATABASE_URL=bw_url, MEMSEEK_CATALOG=str(missing))
    result = memseek(env, "explain", stdin=json.dumps({"mode": "recent"}))
    assert result.returncode != 0
    assert str(missing) in result.stderr and "Traceback" not in result.stderr, result.stderr


def test_an_unknown_package_stops_the_command_naming_it(tmp_path: Path) -> None:
    """§4: "`MEMSEEK_PACKAGE` | none | deployment package name"; §2: "`MEMSEEK_PACKAGE` selects one
    package" — a name no package has selects nothing, and the catalog refuses to load."""
    root = sx_catalog(tmp_path / "catalog", "sx-views")
    result = memseek(cli_env(MEMSEEK_PACKAGE="no_such_package"), "catalog", "check", str(root))
    assert result.returncode != 0
    assert "no_such_package" in result.stderr and "Traceback" not in result.stderr, result.stderr
    assert memseek(cli_env(MEMSEEK_PACKAGE="sx_pkg"), "catalog", "check", str(root)).returncode == 0


def test_explain_names_the_route_and_binds_quoted_values(explain_env: dict[str, str]) -> None:
    """§3: "`memseek explain` prints the exact SQL one search or view call would run (parameters
    bound) and, with `--analyze`, Postgres' `EXPLAIN (ANALYZE, BUFFERS)` for it. Every generated
    statement carries a comment naming the view or route" — an ad-hoc search is `POST /search`;
    a value holding a quote is bound as a literal that still runs."""
    body = {"mode": "text", "q": "budget", "scope": {"collections": ["bw_plain"], "entities": ["O'Brien"]}}
    result = memseek(explain_env, "explain", "--workspace", "bw-a", stdin=json.dumps(body))
    assert result.returncode == 0, result.stderr
    assert "/* memseek POST /search" in result.stdout
    assert "'O''Brien'" in result.stdout
    analyzed = memseek(explain_env, "explain", "--workspace", "bw-a", "--analyze", stdin=json.dumps(body))
    assert analyzed.returncode == 0, analyzed.stderr
    assert "Execution Time" in analyzed.stdout


def test_explain_of_an_unknown_view_is_refused_naming_it(explain_env: dict[str, str]) -> None:
    """§3: `memseek explain` prints the SQL of "one search or view call"; spec: "No active view by
    that name → 404" — the command refuses, naming the view."""
    args = ("explain", "--workspace", "bw-a", "--view", "no_such_view")
    result = memseek(explain_env, *args, stdin="{}")
    assert result.returncode != 0
    assert "no_such_view" in result.stderr and "Traceback" not in result.stderr, result.stderr


EXPLAINED = [
    pytest.param(
        {"mode": "text", "q": "budget's", "scope": {"collections": ["bw_plain"], "entities": ["O'Brien"]}},
        id="text",
    ),
    pytest.param({"mode": "vector", "q": "budget", "scope": {"collections": ["bw_vec"]}}, id="vector"),
    pytest.param(
        {
            "mode": "hybrid",
            "q": "plan",
            "scope": {"collections": ["bw_vec"], "occurred_after": "2026-01-01T00:00Z"},
        },
        id="hybrid",
    ),
    pytest.param(
        {
            "mode": "structured",
            "scope": {"collections": ["bw_plain"]},
            "where": {"sa": {"contains_any": ["a", "b"]}, "b": {"eq": True}, "s": {"in": ["x", "y"]}},
            "order_by": [{"field": "d"}],
        },
        id="structured",
    ),
    pytest.param(
        {
            "q": "budget",
            "sources": [
                {"name": "a", "mode": "text", "scope": {"collections": ["bw_plain"]}},
                {"name": "b", "mode": "vector", "scope": {"collections": ["bw_vec"]}},
            ],
            "fuse": {"kind": "rrf"},
        },
        id="combined",
    ),
]


@pytest.mark.parametrize("body", EXPLAINED)
def test_explain_prints_sql_that_runs_as_printed(
    explain_env: dict[str, str], bw_engine: Engine, body: dict[str, Any]
) -> None:
    """§3: "`memseek explain` prints the exact SQL one search or view call would run (parameters
    bound)" — what it prints runs as it stands (a DBA pastes it into psql): quoted strings,
    arrays, timestamps and the query vector included."""
    result = memseek(explain_env, "explain", "--workspace", "bw-a", stdin=json.dumps(body))
    assert result.returncode == 0, result.stderr
    with bw_engine.connect() as conn:
        driver = conn.connection.dbapi_connection
        assert driver is not None
        with driver.cursor() as cursor:
            cursor.execute(result.stdout)  # no parameters: the text as printed, every statement of it
        driver.rollback()


@pytest.mark.parametrize(
    ("view", "parameters", "shown"),
    [
        pytest.param(
            "bw_graph",
            {"seed": "api-seed", "depth": 2},
            "'api-seed'",
            id="graph",
        ),
        pytest.param("customer_context", {"entity": "maria-e", "task": "budget"}, "'maria-e'", id="search"),
    ],
)
def test_explain_prints_the_sql_of_any_view_call(
    explain_env: dict[str, str], view: str, parameters: dict[str, Any], shown: str
) -> None:
    """§3: "`memseek explain` prints the exact SQL one search or view call would run (parameters
    bound) … Every generated statement carries a comment naming the view or route" — a graph
    view's call runs SQL too (spec: a graph view is a view, called through the same route)."""
    args = ("explain", "--workspace", "bw-a", "--view", view)
    result = memseek(explain_env, *args, stdin=json.dumps(parameters))
    assert result.returncode == 0, result.stderr
    assert f"/* memseek view {view} v1" in result.stdout and shown in result.stdout


# --- timing-visible behaviour: the query-vector cache ---------------------------------------------


def test_one_workspaces_query_is_not_served_from_another_workspaces_cache(
    sx: Client, sx_other: Client, server: Any
) -> None:
    """§1: "Nothing ever crosses a workspace boundary: not in results, counts, graph walks, boosts,
    errors or timing-visible behaviour that we can avoid." A query vector cached for one
    workspace's search and reused for another's would tell the second workspace (by the missing
    provider round trip) that someone else asked exactly that question."""
    body = {"mode": "vector", "q": "did anyone else ask about the merger", "scope": VECS}
    search(sx, body)
    search(sx_other, body)
    embeddings = [r for r in server.requests if r.path == "/v1/embeddings"]
    assert len(embeddings) == 2


# --- GET /openapi.json: the GET routes' query parameters ------------------------------------------


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        pytest.param(
            "/search", {"q": True, "entity": False, "collection": False, "k": False}, id="get-search"
        ),
        pytest.param(
            "/context",
            {
                "q": True,
                "entity": False,
                "collection": False,
                "k": False,
                "fence_tag": False,
                "fence_preamble": False,
            },
            id="get-context",
        ),
    ],
)
def test_openapi_lists_exactly_the_get_routes_query_parameters(
    sx: Client, path: str, expected: dict[str, bool]
) -> None:
    """Spec: `GET /search` — "Convenience only: required `q` plus optional `entity`, `collection`,
    and `k`"; design §3: `GET /context` — "required `q`, optional `entity`, `collection`, `k`,
    `fence_tag`, `fence_preamble`"."""
    operation = ok(sx.get("/openapi.json"))["paths"][path]["get"]
    params = {p["name"]: p["required"] for p in operation["parameters"] if p["in"] == "query"}
    assert params == expected
