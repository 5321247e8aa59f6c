"""Eighth conformance audit: every numeric limit of the spec and the design, at the boundary.

For each stated bound the earlier suites leave open, a request exactly at the bound is accepted and
its effect is visible in the response, a request just past it is refused where the documents place
the problem, and an omitted value shows its documented default. Load-time checks run
`memseek catalog check` over the `sx_` catalog with one `l8_case` view (and, for limits no `sx_`
collection can reach, an `l8_wide` collection); call-time checks use the `sx_` app and an `l8_`
catalog over the same session database.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from memseek.runtime import Runtime
from tests.blackbox.conftest import ClientFactory
from tests.blackbox.conftest import environ
from tests.blackbox.support import check_catalog
from tests.blackbox.support import ids
from tests.blackbox.support import invalid
from tests.blackbox.support import link
from tests.blackbox.support import names
from tests.blackbox.support import note
from tests.blackbox.support import part
from tests.blackbox.support import search
from tests.blackbox.support import sx_catalog
from tests.blackbox.support import write
from tests.conftest import Client
from tests.conftest import Tenant
from tests.conftest import client_for
from tests.helpers import ok
from tests.helpers import runtime_for
from tests.helpers import view_query
from tests.openai_server import OpenAIServer

# --- the l8_wide collection: 16 returnable fields, 16 required enrichments, 100 record types ------


ENRICHMENT_NAMES = [f"l8_a{i}" for i in range(16)]
# The test catalog `l8` holds `l8_wide`, a collection at every per-collection limit a search can
# name: 16 returnable fields and 16 required (client) enrichments, so `fields` and `annotations`
# can hold 16 names, and 100 record types, so `scope.types` can hold 100 that all resolve; and
# `l8_walk`, an active graph view, so a `graph_boost` that names no graph resolves.
FIELD_NAMES = [f"f{i}" for i in range(16)]
FIVE_LEVELS = "[sum, [[max, [[product, 1, [saturate, [const, 1], {midpoint: 1, exponent: 1}]]]]]]"
FUSE = "fuse: {kind: rrf}"
N = "scope: {collections: [sx_notes]}"
TYPE_NAMES = [f"t{i}" for i in range(100)]
W = "scope: {collections: [l8_wide]}"


def yaml_list(values: list[str]) -> str:
    """`values` as an inline YAML list."""
    return "[" + ", ".join(values) + "]"


def const_sum(leaves: int) -> str:
    """`[sum, [[const, 1] × leaves]]`: leaves + 1 nodes, 2 levels."""
    return f"[sum, {yaml_list(['[const, 1]'] * leaves)}]"


def sources(count: int, extra: str = "") -> str:
    """`count` recent sources over sx_notes (inline YAML), each with `extra` keys."""
    one = "{name: s%d, mode: recent, scope: {collections: [sx_notes]}%s}"
    return yaml_list([one % (i, extra) for i in range(count)])


AT_LIMIT = [
    pytest.param(f"{{mode: recent, {N}, k: 100}}", id="k-100"),
    pytest.param(f"{{mode: recent, {N}, k: 1}}", id="k-1"),
    pytest.param(f"{{mode: recent, {N}, params: {{candidates: 1000}}}}", id="candidates-1000"),
    pytest.param(f"{{mode: recent, {N}, params: {{candidates: 1}}}}", id="candidates-1"),
    pytest.param(f"{{mode: text, q: {'a' * 8192}, {N}}}", id="q-8192"),
    pytest.param(
        f"{{mode: recent, scope: {{collections: [sx_notes], entities: {yaml_list(names(100))}}}}}",
        id="entities-100",
    ),
    pytest.param(
        f"{{mode: recent, scope: {{collections: [l8_wide], types: {yaml_list(TYPE_NAMES)}}}}}", id="types-100"
    ),
    pytest.param(f"{{mode: recent, {N}, where: {{channel: {{in: {yaml_list(names(100))}}}}}}}", id="in-100"),
    pytest.param(
        f"{{mode: recent, {N}, where: {{tags: {{contains_any: {yaml_list(names(100))}}}}}}}",
        id="contains-any-100",
    ),
    pytest.param(
        f"{{mode: recent, {N}, where: {{tags: {{contains_all: {yaml_list(names(100))}}}}}}}",
        id="contains-all-100",
    ),
    pytest.param(f"{{mode: recent, {W}, fields: {yaml_list(FIELD_NAMES)}}}", id="fields-16"),
    pytest.param(f"{{mode: recent, {W}, annotations: {yaml_list(ENRICHMENT_NAMES)}}}", id="annotations-16"),
    pytest.param(
        f"{{sources: {sources(8, ', k: 100, weight: 100')}, {FUSE}, k: 100}}", id="8-sources-at-max"
    ),
    pytest.param(
        f"{{sources: {sources(1, ', k: 1, weight: 0.000001')}, {FUSE}, k: 1}}", id="source-minimums"
    ),
    pytest.param(
        f"{{sources: {sources(1)}, fuse: {{kind: rrf, rank_constant: 1000}}}}", id="rank-constant-1000"
    ),
    pytest.param(f"{{sources: {sources(1)}, fuse: {{kind: rrf, rank_constant: 1}}}}", id="rank-constant-1"),
    pytest.param(f"{{q: x, mode: text, {N}, rerank: {{backend: llm_judge, top_n: 20}}}}", id="top-n-20"),
    pytest.param(f"{{q: x, mode: text, {N}, rerank: {{backend: llm_judge, top_n: 1}}}}", id="top-n-1"),
    pytest.param(
        f"{{mode: recent, {N}, graph_boost: {{anchor: {'a' * 128}, depth: 4, weight: 1, limit: 100}}}}",
        id="graph-boost-maximums",
    ),
    pytest.param(
        f"{{mode: recent, {N}, graph_boost: {{anchor: a, depth: 1, weight: 0.000001, limit: 1}}}}",
        id="graph-boost-minimums",
    ),
    pytest.param(f"{{mode: recent, {N}, rank: {const_sum(15)}}}", id="rank-16-nodes"),
    pytest.param(f"{{mode: recent, {N}, rank: {FIVE_LEVELS}}}", id="rank-5-levels"),
    pytest.param(f"{{sources: {sources(1)}, {FUSE}, boost: {const_sum(15)}}}", id="boost-16-nodes"),
    pytest.param(f"{{sources: {sources(1)}, {FUSE}, boost: {FIVE_LEVELS}}}", id="boost-5-levels"),
]


def check_view(tmp_path: Path, capsys: pytest.CaptureFixture[str], query: str) -> tuple[int, str]:
    """`memseek catalog check` of a catalog whose one search view `l8_case` has `query` (inline
    YAML), next to the active graph view `l8_walk`: the exit code and what it printed."""
    views = f"views:\n  - name: l8_case\n    version: 1\n    query: {query}\n"
    return check_catalog(sx_catalog(tmp_path, "l8", views=views), capsys)


@pytest.mark.parametrize("query", AT_LIMIT)
def test_a_view_at_each_request_limit_loads(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], query: str
) -> None:
    """Spec, "What is checked, and when": the template "is parsed as a strict search request"; each
    view holds one value exactly at a stated bound — k "between 1 and 100", candidates "1–1000",
    q "up to 8,192 characters", scope lists "up to 100 entries", value lists "at most 100 entries",
    fields and annotations "At most 16 names", "1 to 8 sources", a source's k "(1–100)" and weight
    "greater than 0 and at most 100", rank_constant "1–1000", top_n "1–20", graph_boost anchor
    "1–128 characters", depth "1–4", weight "above 0 and at most 1", limit "1–100", rank and boost
    "At most 16 nodes and 5 levels deep" — and loads."""
    code, err = check_view(tmp_path, capsys, query)
    assert code == 0, err


SIX_LEVELS = (
    "[sum, [[max, [[product, 1, [saturate, [product, 1, [const, 1]], {midpoint: 1, exponent: 1}]]]]]]"
)
PAST_LIMIT = [
    pytest.param(f"{{mode: recent, {N}, k: 101}}", "query.k", id="k-101"),
    pytest.param(f"{{mode: recent, {N}, k: 0}}", "query.k", id="k-0"),
    pytest.param(
        f"{{mode: recent, {N}, params: {{candidates: 1001}}}}",
        "query.params.candidates",
        id="candidates-1001",
    ),
    pytest.param(
        f"{{mode: recent, {N}, params: {{candidates: 0}}}}", "query.params.candidates", id="candidates-0"
    ),
    pytest.param(f"{{mode: text, q: {'a' * 8193}, {N}}}", "query.q", id="q-8193"),
    pytest.param(
        f"{{mode: recent, scope: {{collections: [sx_notes], entities: {yaml_list(names(101))}}}}}",
        "query.scope.entities",
        id="entities-101",
    ),
    pytest.param(
        f"{{mode: recent, scope: {{collections: [l8_wide], types: {yaml_list([*TYPE_NAMES, 't0x'])}}}}}",
        "query.scope.types",
        id="types-101",
    ),
    pytest.param(
        f"{{mode: recent, {N}, where: {{channel: {{in: {yaml_list(names(101))}}}}}}}",
        "query.where.channel.in",
        id="in-101",
    ),
    pytest.param(
        f"{{mode: recent, {N}, where: {{tags: {{contains_any: {yaml_list(names(101))}}}}}}}",
        "query.where.tags.contains_any",
        id="contains-any-101",
    ),
    pytest.param(
        f"{{mode: recent, {W}, fields: {yaml_list([*FIELD_NAMES, 'f0x'])}}}", "query.fields", id="fields-17"
    ),
    pytest.param(
        f"{{mode: recent, {W}, annotations: {yaml_list([*ENRICHMENT_NAMES, 'sx_region'])}}}",
        "query.annotations",
        id="annotations-17",
    ),
    pytest.param(f"{{sources: {sources(1, ', k: 101')}, {FUSE}}}", "query.sources[0].k", id="source-k-101"),
    pytest.param(
        f"{{sources: {sources(1, ', weight: 100.5')}, {FUSE}}}",
        "query.sources[0].weight",
        id="source-weight-100.5",
    ),
    pytest.param(
        f"{{sources: {sources(1, ', weight: 0')}, {FUSE}}}", "query.sources[0].weight", id="source-weight-0"
    ),
    pytest.param(
        f"{{sources: {sources(1, ', params: {candidates: 1001}')}, {FUSE}}}",
        "query.sources[0].params.candidates",
        id="source-candidates-1001",
    ),
    pytest.param(f"{{sources: {sources(1)}, {FUSE}, k: 101}}", "query.k", id="combined-k-101"),
    pytest.param(
        f"{{sources: {sources(1)}, fuse: {{kind: rrf, rank_constant: 1001}}}}",
        "query.fuse.rank_constant",
        id="rank-constant-1001",
    ),
    pytest.param(
        f"{{sources: {sources(1)}, fuse: {{kind: rrf, rank_constant: 0}}}}",
        "query.fuse.rank_constant",
        id="rank-constant-0",
    ),
    pytest.param(
        f"{{q: x, mode: text, {N}, rerank: {{backend: llm_judge, top_n: 21}}}}",
        "query.rerank.top_n",
        id="top-n-21",
    ),
    pytest.param(
        f"{{q: x, mode: text, {N}, rerank: {{backend: llm_judge, top_n: 0}}}}",
        "query.rerank.top_n",
        id="top-n-0",
    ),
    pytest.param(
        f"{{mode: recent, {N}, graph_boost: {{anchor: {'a' * 129}}}}}",
        "query.graph_boost.anchor",
        id="anchor-129",
    ),
    pytest.param(
        f"{{mode: recent, {N}, graph_boost: {{anchor: a, depth: 5}}}}",
        "query.graph_boost.depth",
        id="boost-depth-5",
    ),
    pytest.param(
        f"{{mode: recent, {N}, graph_boost: {{anchor: a, weight: 1.01}}}}",
        "query.graph_boost.weight",
        id="boost-weight-1.01",
    ),
    pytest.param(
        f"{{mode: recent, {N}, graph_boost: {{anchor: a, limit: 101}}}}",
        "query.graph_boost.limit",
        id="boost-limit-101",
    ),
    pytest.param(f"{{mode: recent, {N}, rank: {const_sum(16)}}}", "query.rank", id="rank-17-nodes"),
    pytest.param(f"{{mode: recent, {N}, rank: {SIX_LEVELS}}}", "query.rank", id="rank-6-levels"),
    pytest.param(
        f"{{sources: {sources(1)}, {FUSE}, boost: {const_sum(16)}}}", "query.boost", id="boost-17-nodes"
    ),
    pytest.param(
        f"{{sources: {sources(1)}, {FUSE}, boost: {SIX_LEVELS}}}", "query.boost", id="boost-6-levels"
    ),
    pytest.param(f"{{sources: {sources(9)}, {FUSE}}}", "query.sources", id="9-sources"),
    pytest.param(f"{{sources: [], {FUSE}}}", "query.sources", id="0-sources"),
]


@pytest.mark.parametrize(("query", "path"), PAST_LIMIT)
def test_a_view_past_a_request_limit_is_refused_at_its_path(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], query: str, path: str
) -> None:
    """Spec: the template "is parsed as a strict search request"; design §2: "an invalid catalog
    refuses to start and every error names the file, the definition (kind, name, version), the
    YAML path and the problem". Each view holds one value just past a bound of AT_LIMIT."""
    code, err = check_view(tmp_path, capsys, query)
    assert code == 2 and f"view l8_case v1: views[0].{path}" in err, err


@pytest.mark.parametrize("count", [pytest.param(0, id="0-sources"), pytest.param(9, id="9-sources")])
def test_a_source_count_out_of_range_is_the_only_problem_reported(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], count: int
) -> None:
    """Spec: "1 to 8 sources"; "You must declare fuse" and "With sources you cannot also set a
    top-level mode". Design §2: every error names "the YAML path and the problem". The view's
    `fuse` is required with sources and it has no `mode` to miss, so the one problem is the count
    at `query.sources` (as `POST /search` reports it, at `["sources"]` only)."""
    code, err = check_view(tmp_path, capsys, f"{{sources: {sources(count)}, {FUSE}}}")
    problems = [line.strip() for line in err.splitlines() if "view l8_case v1:" in line]
    assert code == 2 and len(problems) == 1 and "views[0].query.sources:" in problems[0], err


# --- the l8 app: a catalog with l8_wide -----------------------------------------------------------


def wide_record(type_name: str = "t99") -> dict[str, Any]:
    """A record of `l8_wide` with a value for every field and every enrichment."""
    return {
        "collection": "l8_wide",
        "entity": "e1",
        "type": type_name,
        "text": "wide",
        "content": {name: f"value {name}" for name in FIELD_NAMES},
        "annotations": {name: {"n": name} for name in ENRICHMENT_NAMES},
    }


@pytest.fixture(scope="module")
def l8_runtime(
    runtime: Runtime, sx_server: OpenAIServer, tmp_path_factory: pytest.TempPathFactory
) -> Runtime:
    return runtime_for(runtime, sx_catalog(tmp_path_factory.mktemp("l8-catalog"), "l8"), environ(sx_server))


@pytest.fixture
def l8(l8_runtime: Runtime, tenant: Tenant, server: OpenAIServer) -> Client:
    return client_for(l8_runtime, tenant)


def test_sixteen_fields_sixteen_annotations_and_a_hundred_types_are_returned(l8: Client) -> None:
    """Spec: "fields — declared field values to return … At most 16 names"; "annotations —
    enrichment values to return … At most 16 names"; "collections, entities, and types are unique
    lists of up to 100 entries each". At each limit the search runs and returns every value, and
    the 100th type still selects its records."""
    first, last = write(l8, wide_record("t0"), wide_record("t99"))
    body = search(
        l8,
        {
            "mode": "recent",
            "scope": {"collections": ["l8_wide"], "types": TYPE_NAMES},
            "fields": FIELD_NAMES,
            "annotations": ENRICHMENT_NAMES,
        },
    )
    assert ids(body) == [last, first]
    for hit in body["hits"]:
        assert hit["fields"] == {name: f"value {name}" for name in FIELD_NAMES}
        assert hit["annotations"] == {name: {"n": name} for name in ENRICHMENT_NAMES}
    only_last = search(
        l8, {"mode": "recent", "scope": {"collections": ["l8_wide"], "types": TYPE_NAMES[50:]}}
    )
    assert ids(only_last) == [last]


@pytest.mark.parametrize(
    ("body", "loc"),
    [
        pytest.param({"fields": [*FIELD_NAMES, "f0x"]}, ("fields",), id="fields-17"),
        pytest.param(
            {"annotations": [*ENRICHMENT_NAMES, "sx_region"]}, ("annotations",), id="annotations-17"
        ),
        pytest.param(
            {"scope": {"collections": ["l8_wide"], "types": [*TYPE_NAMES, "t100"]}},
            ("scope", "types"),
            id="types-101",
        ),
    ],
)
def test_one_name_past_the_limit_is_refused_at_the_list(
    l8: Client, body: dict[str, Any], loc: tuple[str]
) -> None:
    """Spec: "At most 16 names" (fields, annotations); scope lists "up to 100 entries each" — the
    17th or 101st entry is a 422 located at the list itself."""
    request = {"mode": "recent", "scope": {"collections": ["l8_wide"]}, **body}
    invalid(l8.post("/search", json=request), *loc)


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


# --- MAX_RESPONSE_BYTES: the 4 MiB default --------------------------------------------------------


def test_the_default_response_limit_is_4_mib(sx: Client, sx_with: ClientFactory) -> None:
    """Spec: "`MAX_RESPONSE_BYTES` | Size of the whole JSON response, past which you get `409`";
    design §4: `MAX_RESPONSE_BYTES` default "4 MiB". A response just over 4,194,304 bytes is a
    409 under the default; one under it is a 200."""
    write(sx, *(note(f"n{i}", content={"channel": f"{i:03d}" + "x" * 43_000}) for i in range(100)))
    body = {**RECENT, "fields": ["channel"]}
    roomy = sx_with(max_response_bytes=64 * 1024 * 1024)
    big = roomy.post("/search", json={**body, "k": 100})
    small = roomy.post("/search", json={**body, "k": 90})
    assert len(big.get_data()) > 4 * 1024 * 1024 >= len(small.get_data())
    response = sx.post("/search", json={**body, "k": 100})
    assert response.status_code == 409 and response.get_json()["error"]["code"] == "response_too_large"
    assert len(ok(sx.post("/search", json={**body, "k": 90}))["hits"]) == 90
