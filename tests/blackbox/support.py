"""Black-box conformance tests of the read side: the `sx_` catalog and HTTP helpers.

Everything is exercised over HTTP through the Flask test client: records are written with
`POST /records?wait=true` and read back with the spec's routes. The catalog is the test catalogs
`sx` (collections, models, enrichments) and `sx-views` (views and a package), in
tests/fixtures/catalogs/. It needs no model processing except for `sx_vec`, whose writers supply
the vector themselves (the local OpenAI-protocol test server's bag-of-words embedding, which also
embeds the queries), so every record is searchable as soon as the write returns.

Definitions are immutable per (kind, name, version) in the shared test database, so every name
there carries the `sx_` prefix and must never change content: add a new version instead.
"""

from __future__ import annotations

from datetime import UTC
from datetime import datetime
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from memseek.cli import main
from tests.conftest import Client
from tests.helpers import error
from tests.helpers import fixture_catalog
from tests.helpers import ok
from tests.helpers import written
from tests.openai_server import hashed_embedding

EMBED_ENV = "SX_EMBED_URL"
EMBED_MODEL = "hashed-bow"


def sx_catalog(root: Path, *layers: str, views: str | None = None) -> Path:
    """The `sx_` collections under `root` (test catalog `sx`, with the reference rank default, adding
    N(importance)), the test catalogs `layers` laid over them (`sx-views`: the `sx_` views and the
    `sx_pkg` package) and, when given, `views` as the views file `views/sx.yaml`.

    `cheap` (the judge) is the shipped alias: model aliases are recorded as last loaded, so
    redefining a shipped one in `sx` would change what the session database holds for it.
    """
    files = {} if views is None else {"views/sx.yaml": views}
    return fixture_catalog(root, "sx", *layers, files=files, rank_default=True)


def with_views(root: Path, views: str) -> Path:
    """The `sx_` collections under `root` whose only views file holds `views` (no package: `sx_pkg`
    pins `sx_` views such a catalog replaces)."""
    return sx_catalog(root, views=views)


def check_catalog(root: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    """`memseek catalog check ROOT`: the exit code and what it printed to stderr."""
    code = main(["catalog", "check", str(root)])
    return code, capsys.readouterr().err


GRAPH = "{edges: sx_links, subject: src, object: dst, predicate: rel}"
GRAPH_PARAMETERS = {
    "seed": "{type: string, required: true}",
    "predicates": "{type: string_array, default: []}",
    "direction": "{type: string, default: out}",
    "depth": "{type: integer, default: 1}",
    "limit": "{type: integer, default: 20}",
}
"""The spec's five fixed parameters of a `kind: graph` view, as `sx_walk` declares them."""


def graph_view(graph: str = GRAPH, before: str = "", **parameters: str) -> str:
    """The keys after `version` of a `kind: graph` view over `graph` declaring GRAPH_PARAMETERS;
    `parameters` replaces a declaration by name (a new name comes last), `before` goes above
    `parameters:`."""
    declared = "".join(f"      {name}: {text}\n" for name, text in {**GRAPH_PARAMETERS, **parameters}.items())
    return f"    kind: graph\n    graph: {graph}\n{before}    parameters:\n{declared}"


SCORED_RANKING = {
    "scored": True,
    "score_semantics": "query_relative",
    "score_range": [0.0, 1.0],
    "normalization": "min_max",
    "normalization_scope": "ranked_candidates",
    "calibrated": False,
    "higher_is_better": True,
    "native_score_field": "rank_score",
}
"""The spec's ranking contract of a scored search, without `kind`."""
INCLUDES = [
    "text",
    "scores",
    "collection",
    "collection_version",
    "entity",
    "type",
    "key",
    "status",
    "depth",
    "occurred_at",
    "created_at",
    "run_id",
]
"""Every value `include` accepts, in the spec's order."""
WRAPPER_KEYS = [
    "view",
    "parameters",
    "hits",
    "ranking",
    "input_record_ids",
    "rendered",
    "truncated",
    "profiles",
    "backend",
]
"""The keys of a search view's response, in the spec's order ("The view response wrapper")."""
ENTRY_KEYS = [
    "name",
    "version",
    "hash",
    "active",
    "kind",
    "description",
    "parameters",
    "input_schema",
    "collections",
    "required_capabilities",
    "profiles",
]
"""The keys of a `GET /views` entry, in the order of the spec's example (with the view's
description, issue 42)."""
SCHEMA = "https://json-schema.org/draft/2020-12/schema"
"""The `$schema` of every view's `input_schema`."""


# --- records --------------------------------------------------------------------------------------


def ago(hours: float) -> str:
    """An ISO timestamp `hours` before now (negative: in the future)."""
    return (datetime.now(UTC) - timedelta(hours=hours)).isoformat()


def at(day: int, hour: int = 0, minute: int = 0) -> str:
    """A fixed UTC moment in July 2026."""
    return datetime(2026, 7, day, hour, minute, tzinfo=UTC).isoformat()


def note(text: str = "a note", entity: str = "e1", **values: Any) -> dict[str, Any]:
    """A record of `sx_notes` (an event unless `type`/`key` say otherwise)."""
    return {"collection": "sx_notes", "entity": entity, "type": "note", "text": text, **values}


def vec(text: str, entity: str = "e1", **values: Any) -> dict[str, Any]:
    """A record of `sx_vec` carrying the test server's embedding of its text."""
    return {
        "collection": "sx_vec",
        "entity": entity,
        "type": "note",
        "text": text,
        "embedding": hashed_embedding(text, 384),
        "embedding_model": EMBED_MODEL,
        **values,
    }


def link(subject: str, predicate: str, obj: str, **content: Any) -> dict[str, Any]:
    """A link record of `sx_links` (`src`/`dst`/`rel` are the graph block's fields)."""
    text = f"{subject} {predicate} {obj}"
    body = {"text": text, "src": subject, "dst": obj, "rel": predicate, **content}
    return {"collection": "sx_links", "entity": subject, "type": "link", "text": text, "content": body}


def part(key: str, needs: list[str] | None = None, entity: str = "parts") -> dict[str, Any]:
    """A node of `sx_parts`; each `needs` value becomes an automatic link."""
    content = {} if needs is None else {"needs": needs}
    return {
        "collection": "sx_parts",
        "entity": entity,
        "type": "component",
        "key": key,
        "text": f"component {key}",
        "content": content,
    }


def write(client: Client, *items: dict[str, Any], ready: bool = True) -> list[str]:
    """`POST /records?wait=true`; returns the ids in order (all ready unless `ready` is False)."""
    results = written(client, *items, query="?wait=true")
    if ready:
        assert all(r["processing"] == "ready" for r in results), results
    return [r["id"] for r in results]


def search(client: Client, body: dict[str, Any]) -> dict[str, Any]:
    """`POST /search`, expecting 200."""
    return ok(client.post("/search", json=body))


def ids(body: dict[str, Any]) -> list[str]:
    """The ids of a search response's hits, in order."""
    return [hit["id"] for hit in body["hits"]]


def invalid(response: Any, *loc: str | int) -> dict[str, Any]:
    """A 422 whose details include one at exactly `loc` (when given)."""
    err = error(response, 422, "invalid_request")
    if loc:
        assert list(loc) in [d["loc"] for d in err["details"]], err["details"]
    return err


def rejects(client: Client, body: dict[str, Any], *loc: str | int) -> dict[str, Any]:
    """`POST /search` with `body` answers 422 (at `loc` when given)."""
    return invalid(client.post("/search", json=body), *loc)


MCP_HEADERS = {"Accept": "application/json, text/event-stream"}
"""What a streamable-HTTP MCP client accepts (the server answers plain JSON)."""


def mcp_rpc(client: Client, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
    """One JSON-RPC exchange with `/mcp` (stateless streamable HTTP): the whole response, a
    `result` or an `error`."""
    request: dict[str, Any] = {"jsonrpc": "2.0", "id": 1, "method": method}
    if params is not None:
        request["params"] = params
    return ok(client.post("/mcp", json=request, headers=MCP_HEADERS))


def mcp_result(client: Client, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
    """The `result` of one JSON-RPC exchange with `/mcp` (fails on an `error`)."""
    answer = mcp_rpc(client, method, params)
    assert "result" in answer, answer
    return answer["result"]  # type: ignore[no-any-return]


def mcp_tools(client: Client) -> dict[str, dict[str, Any]]:
    """The MCP tools by name (`tools/list`)."""
    return {tool["name"]: tool for tool in mcp_result(client, "tools/list", {})["tools"]}


# --- used by several subject modules --------------------------------------------------------------


COMBINED = {
    "sources": [
        {"name": "a", "mode": "recent", "scope": {"collections": ["sx_notes"]}},
        {"name": "b", "mode": "recent", "scope": {"collections": ["sx_extra"]}},
    ],
    "fuse": {"kind": "rrf"},
}
NOTES = {"collections": ["sx_notes"]}
VEC = {"collections": ["sx_vec"]}


def recent(client: Client, **extra: Any) -> dict[str, Any]:
    """A `recent` search over sx_notes with `extra` keys."""
    return search(client, {"mode": "recent", "scope": NOTES, **extra})


def scope_ids(client: Client, **scope: Any) -> set[str]:
    """The ids a recent search over sx_notes returns with `scope` added."""
    return set(ids(search(client, {"mode": "recent", "scope": {**NOTES, **scope}, "k": 100})))


def rejected_at(client: Client, body: dict[str, Any], *prefix: str) -> None:
    """`POST /search` answers 422 with a detail whose `loc` starts with `prefix`."""
    err = rejects(client, body)
    assert any(d["loc"][: len(prefix)] == list(prefix) for d in err["details"]), err["details"]


PLAN_Q = "budget plan review"
BY_AMOUNT = [{"field": "amount"}]
MODES = [
    # mode, the single search, how many candidates its engine proposes (every eligible record it can
    # find: the pool is not cut by `candidates`, whose default is at least 100)
    pytest.param({"mode": "vector", "q": PLAN_Q, "scope": VEC}, 4, id="vector"),
    pytest.param({"mode": "text", "q": PLAN_Q, "scope": NOTES}, 3, id="text"),
    pytest.param({"mode": "hybrid", "q": PLAN_Q, "scope": VEC}, 4, id="hybrid"),
    pytest.param({"mode": "recent", "scope": NOTES}, 4, id="recent"),
    pytest.param({"mode": "structured", "scope": NOTES, "order_by": BY_AMOUNT}, 4, id="structured"),
]


def names(count: int, prefix: str = "v") -> list[str]:
    """`count` distinct names: prefix0, prefix1, …"""
    return [f"{prefix}{i}" for i in range(count)]


def text_of(response: Any) -> str:
    assert response.status_code == 200, response.get_data(as_text=True)
    return str(response.get_data(as_text=True))


RRF_60 = {"kind": "rrf", "rank_constant": 60}


def recent_body(**extra: Any) -> dict[str, Any]:
    """A recent-mode search over sx_notes."""
    return {"mode": "recent", "scope": NOTES, **extra}


def fused(*sources: dict[str, Any], **extra: Any) -> dict[str, Any]:
    """A combined search of `sources` fused with the default RRF constant."""
    return {"sources": list(sources), "fuse": RRF_60, **extra}


# Spec, Scopes: "scope narrows a search to the records that should even be considered"; every
# proposal is re-checked, so a bounded proposal that holds only records outside the scope must not
# stand for the whole answer. CROWD exceeds the candidates of a default search (k 20 → 200).
CROWD = 250


def matched_or_refused_at(response: Any, loc: list[Any]) -> list[str] | None:
    """The hit ids of a 200, or None for a 422 located at `loc` (anything else fails)."""
    if response.status_code == 200:
        return ids(response.get_json())
    invalid(response, *loc)
    return None


def has_lone_surrogate(text: str) -> bool:
    return any(0xD800 <= ord(char) <= 0xDFFF for char in text)


SEMANTIC = ("vector", "hybrid")
"""Modes that need embeddings: they read `sx_vec`; the others read `sx_notes`."""
Q = "budget"
"""Every record below holds this word, so a text search matches all of them."""


def item(mode: str, text: str = "budget note", **values: Any) -> dict[str, Any]:
    """A record a search of `mode` can read: an `sx_vec` record for vector/hybrid, else an
    `sx_notes` one with a sortable `amount` (structured mode orders by it)."""
    if mode in SEMANTIC:
        return vec(text, **values)
    return note(text, content={"amount": 1}, **values)


def query(mode: str, k: int = 100, **scope: Any) -> dict[str, Any]:
    """A search of `mode` over the collection `item` writes to, with `scope` added."""
    collection = "sx_vec" if mode in SEMANTIC else "sx_notes"
    body: dict[str, Any] = {"mode": mode, "k": k, "scope": {"collections": [collection], **scope}}
    if mode == "structured":
        body["order_by"] = [{"field": "amount"}]
    else:
        body["q"] = Q
    return body


def seen(client: Client, mode: str, **scope: Any) -> set[str]:
    """The ids a search of `mode` returns over `scope`."""
    return set(ids(search(client, query(mode, **scope))))


def crowd_records(**values: Any) -> list[dict[str, Any]]:
    """CROWD `sx_vec` records that match `budget` better than LONE does, in every signal."""
    return [vec("budget budget", entity="crowd", **values) for _ in range(CROWD)]


def values(client: Client, rank: Any, mode: str = "recent", **extra: Any) -> list[float]:
    """rank_score of every hit, in written order of the `i` content field."""
    body = search(client, {"mode": mode, "rank": rank, "k": 100, "include": ["text"], **extra})
    return [hit["rank_score"] for hit in sorted(body["hits"], key=lambda h: h["text"])]


def listing(client: Client, **scope: Any) -> list[str]:
    """Ids of a recent search over `scope` (k 100)."""
    return ids(search(client, {"mode": "recent", "k": 100, "scope": scope}))


def min_max(pool: list[float]) -> list[float]:
    """The spec's public score of each value over the pool."""
    low, high = min(pool), max(pool)
    return [1.0 if high == low else (v - low) / (high - low) for v in pool]
