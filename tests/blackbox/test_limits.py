"""Numeric limits at their boundaries (spec "Deployment limits", design §4): a request exactly at
a bound is accepted and its effect visible, one just past it is refused where the documents
place the problem; `MAX_QUERY_CHARS` and `MAX_RESPONSE_BYTES` to the exact character and byte.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from memseek.runtime import Runtime
from tests.blackbox.conftest import ClientFactory
from tests.blackbox.conftest import environ
from tests.blackbox.fusion_support import combined
from tests.blackbox.fusion_support import ranked_by
from tests.blackbox.support import at
from tests.blackbox.support import check_catalog
from tests.blackbox.support import ids
from tests.blackbox.support import invalid
from tests.blackbox.support import link
from tests.blackbox.support import names
from tests.blackbox.support import note
from tests.blackbox.support import part
from tests.blackbox.support import recent
from tests.blackbox.support import search
from tests.blackbox.support import sx_catalog
from tests.blackbox.support import vec
from tests.blackbox.support import write
from tests.conftest import Client
from tests.conftest import Tenant
from tests.conftest import client_for
from tests.helpers import error
from tests.helpers import fetch
from tests.helpers import ok
from tests.helpers import runtime_for
from tests.helpers import touches_written
from tests.helpers import view_query
from tests.helpers import with_settings
from tests.openai_server import OpenAIServer

# --- a view at each request limit -----------------------------------------------------------------


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


# --- the l8 app: sixteen fields, sixteen annotations, a hundred types -----------------------------


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


# --- MAX_QUERY_CHARS ------------------------------------------------------------------------------


NOTES = {"collections": ["sx_notes"]}


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


def test_get_search_q_is_bounded_by_max_query_chars(sx_with: ClientFactory) -> None:
    """Spec, Deployment limits: "`MAX_QUERY_CHARS` | Maximum length of the query text `q`"."""
    invalid(sx_with(max_query_chars=5).get("/search?q=abcdef"), "query", "q")


# --- MAX_RESPONSE_BYTES ---------------------------------------------------------------------------


RECENT: dict[str, Any] = {"mode": "recent", "scope": NOTES}


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


def test_the_size_limit_is_the_exact_byte_count(sx: Client, sx_with: ClientFactory) -> None:
    """Spec: "`MAX_RESPONSE_BYTES` | Size of the whole JSON response, past which you get `409`"."""
    write(sx, *(note(f"row {i}", content={"amount": i}) for i in range(5)))
    body = {"mode": "structured", "scope": NOTES, "order_by": [{"field": "amount"}], "include": ["text"]}
    size = len(sx.post("/search", json=body).get_data())
    assert sx_with(max_response_bytes=size).post("/search", json=body).status_code == 200
    error(sx_with(max_response_bytes=size - 1).post("/search", json=body), 409, "response_too_large")


def test_graph_views_and_get_search_are_size_bounded(sx: Client, sx_with: ClientFactory) -> None:
    """Spec: "The whole response is size-bounded. Exceeding the limit does not silently drop
    results: the request fails with 409 response_too_large"."""
    write(sx, *(link("hub", "uses", f"leaf{i}") for i in range(30)), *(part(f"p{i}") for i in range(30)))
    write(sx, *(vec("alpha " + "x" * 1500) for _ in range(5)))
    small = sx_with(max_response_bytes=1500)
    error(view_query(small, "sx_walk", {"seed": "hub", "limit": 500}), 409, "response_too_large")
    error(view_query(small, "sx_orphans", {"limit": 500}), 409, "response_too_large")
    error(small.get("/search?q=alpha&collection=sx_vec"), 409, "response_too_large")


def test_a_search_response_too_large_is_409(sx_with: ClientFactory) -> None:
    """ "Exceeding the limit does not silently drop results: the request fails with 409
    response_too_large\""""
    client = sx_with(max_response_bytes=2000)
    write(client, *(note("x" * 1500) for _ in range(3)))
    error(client.post("/search", json={"mode": "recent", "include": ["text"]}), 409, "response_too_large")
    assert len(recent(client, k=1)["hits"]) == 1


def test_max_response_bytes_bounds_the_whole_json_response(sx: Client, sx_with: ClientFactory) -> None:
    """MAX_RESPONSE_BYTES: "Size of the whole JSON response, past which you get `409`." A structured
    response (no time-dependent scores) of N bytes passes a limit of N and fails N - 1."""
    write(sx, *(note("y" * 300, content={"count": i}) for i in range(3)))
    body = {"mode": "structured", "scope": NOTES, "order_by": [{"field": "count"}], "include": ["text"]}
    size = len(sx.post("/search", json=body).get_data())
    assert sx_with(max_response_bytes=size).post("/search", json=body).status_code == 200
    error(sx_with(max_response_bytes=size - 1).post("/search", json=body), 409, "response_too_large")


def test_a_view_response_too_large_is_409(bv_runtime: Runtime, tenant: Tenant, server: Any) -> None:
    """ "The result was successful but too large to return — 409 response_too_large"."""
    client = client_for(with_settings(bv_runtime, max_response_bytes=1000), tenant)
    write(client, *[note("lorem ipsum " * 40, entity="big") for _ in range(5)])
    ok(view_query(client, "bv10_ver", {"entity": "big"}))  # ids only: under the limit
    error(view_query(client, "bv10_ctx", {"entity": "big", "task": "lorem"}), 409, "response_too_large")


def test_a_combined_response_too_large_is_409(sx: Client, sx_with: ClientFactory) -> None:
    """ "The whole response is size-bounded. Exceeding the limit does not silently drop results:
    the request fails with 409 response_too_large"."""
    write(sx, *(note("x" * 1500, scores={"importance": i}) for i in range(6)))
    body = combined(ranked_by("a", "importance"), ranked_by("b", "importance"), include=["text"])
    error(sx_with(max_response_bytes=4000).post("/search", json=body), 409, "response_too_large")


def test_too_large_is_409(sx: Client, sx_with: ClientFactory) -> None:
    write(sx, *(note("y" * 1000) for _ in range(5)))
    error(
        sx_with(max_response_bytes=1000).post("/search", json={"mode": "recent", "include": ["text"]}),
        409,
        "response_too_large",
    )


def test_response_too_large_is_409_and_drops_nothing(sx: Client, sx_with: ClientFactory) -> None:
    write(sx, *(note("x" * 1500) for _ in range(10)))
    small = sx_with(max_response_bytes=4000)
    err = error(
        small.post("/search", json={"mode": "recent", "include": ["text"]}), 409, "response_too_large"
    )
    assert err["message"]
    assert len(search(small, {"mode": "recent", "k": 1, "include": ["text"]})["hits"]) == 1


def test_response_too_large_applies_to_views(sx: Client, sx_with: ClientFactory) -> None:
    write(sx, *(note("budget " + "x" * 1500, entity="big") for _ in range(10)))
    small = sx_with(max_response_bytes=2000)
    response = small.post("/views/sx_context/query", json={"entity": "big", "task": "budget"})
    error(response, 409, "response_too_large")
