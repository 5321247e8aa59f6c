"""Black-box conformance tests of the read side: the `sx_` catalog and HTTP helpers.

Everything is exercised over HTTP through the Flask test client: records are written with
`POST /records?wait=true` and read back with the spec's routes. The catalog below needs no
model processing except for `sx_vec`, whose writers supply the vector themselves (the local
OpenAI-protocol test server's bag-of-words embedding, which also embeds the queries), so every
record is searchable as soon as the write returns.

Definitions are immutable per (kind, name, version) in the shared test database, so every name
here carries the `sx_` prefix and must never change content: add a new version instead.
"""

from __future__ import annotations

from datetime import UTC
from datetime import datetime
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from memseek.cli import main
from tests import helpers
from tests.conftest import Client
from tests.helpers import error
from tests.helpers import ok
from tests.helpers import written
from tests.openai_server import hashed_embedding

EMBED_ENV = "SX_EMBED_URL"
EMBED_MODEL = "hashed-bow"

# `cheap` (the judge) is the shipped alias: model aliases are recorded as last loaded, so
# redefining a shipped one here would change what the session database holds for it.
MODELS = """
models:
  sx_embed: {kind: embedding, provider: openai, model: hashed-bow, dimensions: 384,
             base_url_env: SX_EMBED_URL, max_retries: 0, timeout_seconds: 5}
"""

ENRICHMENTS = """
enrichments:
  sx_region: {kind: client}
  sx_rating: {kind: llm_score, instructions: Rate how useful this is., range: [1, 10]}
"""

COLLECTIONS = """
collections:
  - name: sx_notes
    version: 1
    active: true
    types: [note, event, fact]
    keyed: any
    fields:
      channel: {type: string, path: channel, fallback_paths: [meta.channel], filterable: true,
                sortable: true, returnable: true}
      amount: {type: number, filterable: true, sortable: true, returnable: true}
      count: {type: integer, filterable: true, sortable: true, returnable: true}
      vip: {type: boolean, filterable: true, sortable: true, returnable: true}
      tags: {type: string_array, filterable: true, returnable: true}
      starts_at: {type: datetime, filterable: true, sortable: true, returnable: true}
      secret: {type: string, filterable: true}
      label: {type: string}
    scores:
      importance: {display: true}
      urgency: {display: true}
      hidden: {}
  - name: sx_extra
    version: 1
    active: true
    types: [note]
    keyed: false
    fields:
      channel: {type: string, filterable: true, sortable: true, returnable: true}
    scores:
      importance: {display: true}
  - name: sx_versioned
    version: 1
    types: [note]
    fields:
      label: {type: string, path: label, filterable: true, returnable: true}
  - name: sx_versioned
    version: 2
    active: true
    types: [note]
    fields:
      label: {type: string, path: meta.label, filterable: true, returnable: true}
      extra: {type: string, returnable: true}
  - name: sx_tagged
    version: 1
    active: true
    types: [note]
    enrichments: [sx_region, sx_rating]
  - name: sx_vec
    version: 1
    active: true
    types: [note, fact]
    keyed: any
    embedding: sx_embed
    fields:
      channel: {type: string, filterable: true, returnable: true}
    scores:
      importance: {display: true}
  - name: sx_links
    version: 1
    active: true
    types: [link]
    keyed: false
    fields:
      src: {type: string, filterable: true}
      dst: {type: string, filterable: true}
      rel: {type: string, filterable: true}
      confidence: {type: number}
  - name: sx_parts
    version: 1
    active: true
    types: [component]
    keyed: true
    fields:
      needs: {type: string_array}
    links:
      - {field: needs, predicate: needs, edges: sx_links}
"""

VIEWS = """
views:
  - name: sx_context
    version: 1
    active: true
    parameters:
      entity: {type: string, required: true}
      task: {type: string, required: true}
    query:
      q: "{{task}}"
      mode: text
      scope: {entities: ["{{entity}}"], collections: [sx_notes]}
      k: 20
      render: true
  - name: sx_context
    version: 2
    parameters:
      entity: {type: string, required: true}
    query:
      mode: recent
      scope: {entities: ["{{entity}}"], collections: [sx_notes]}
      k: 1
  - name: sx_dormant
    version: 1
    parameters:
      entity: {type: string, required: true}
    query:
      mode: recent
      scope: {entities: ["{{entity}}"], collections: [sx_notes]}
  - name: sx_contract
    version: 1
    active: true
    description: Every kind of parameter constraint.
    parameters:
      entity: {type: string, required: true, description: The contact this search is about.,
               min_length: 3, max_length: 12}
      horizon: {type: string, default: week, description: How far ahead to look., enum: [day, week, quarter]}
      channels: {type: string_array, item_enum: [email, call, note], min_items: 1, max_items: 2}
      k: {type: integer, default: 5, minimum: 1, maximum: 10}
      min_amount: {type: number, minimum: 0, maximum: 1000}
      vip: {type: boolean}
      after: {type: datetime}
    query:
      q: "{{horizon}}"
      mode: recent
      scope: {entities: ["{{entity}}"], collections: [sx_notes], occurred_after: "{{after}}"}
      where:
        channel: {in: "{{channels}}"}
        amount: {gte: "{{min_amount}}"}
        vip: {eq: "{{vip}}"}
      k: "{{k}}"
      include: [text]
  - name: sx_listing
    version: 1
    active: true
    parameters:
      entity: {type: string, required: true}
      start: {type: datetime, required: true}
      end: {type: datetime, required: true}
    required_capabilities: [structured]
    query:
      mode: structured
      scope: {entities: ["{{entity}}"], collections: [sx_notes]}
      where:
        starts_at: {gte: "{{start}}", lt: "{{end}}"}
      order_by:
        - {field: starts_at, direction: asc}
      k: 50
      render: true
  - name: sx_fused
    version: 1
    active: true
    parameters:
      task: {type: string, required: true}
    query:
      q: "{{task}}"
      sources:
        - {name: words, mode: text, scope: {collections: [sx_notes]}, k: 5}
        - {name: latest, mode: recent, scope: {collections: [sx_extra]}, k: 5, weight: 1.1}
      fuse: {kind: rrf, rank_constant: 60}
      k: 8
  - name: sx_boosted
    version: 1
    active: true
    parameters:
      anchor: {type: string, required: true}
    query:
      mode: recent
      scope: {collections: [sx_notes]}
      rank: [score, importance]
      graph_boost: {anchor: "{{anchor}}", weight: 1.0}
      k: 5
  - name: sx_judged
    version: 1
    active: true
    parameters:
      task: {type: string, required: true}
    query:
      q: "{{task}}"
      mode: text
      scope: {collections: [sx_notes]}
      rerank: {backend: llm_judge, top_n: 3}
  - name: sx_walk
    version: 1
    active: true
    kind: graph
    graph: {edges: sx_links, subject: src, object: dst, predicate: rel}
    parameters:
      seed: {type: string, required: true}
      predicates: {type: string_array, default: []}
      direction: {type: string, default: out}
      depth: {type: integer, default: 1}
      limit: {type: integer, default: 20}
  - name: sx_orphans
    version: 1
    active: true
    kind: graph_orphans
    graph: {edges: sx_links, subject: src, object: dst, predicate: rel, nodes: sx_parts}
    parameters:
      limit: {type: integer, default: 50}
"""

PACKAGES = """
package:
  name: sx_pkg
  views: {sx_context: 2, sx_walk: 1}
"""


def write_catalog(root: Path) -> Path:
    """The `sx_` catalog under `root` (the reference rank default, adding N(importance))."""
    files = {
        "collections/sx.yaml": COLLECTIONS,
        "views/sx.yaml": VIEWS,
        "conf/models.yaml": MODELS,
        "conf/enrichments.yaml": ENRICHMENTS,
        "packages/sx.yaml": PACKAGES,
    }
    return helpers.write_catalog(root, files)


def with_views(root: Path, views: str) -> Path:
    """The `sx_` catalog under `root` whose only views file holds `views`, without the package (it
    pins `sx_` views such a catalog replaces)."""
    write_catalog(root)
    (root / "packages" / "sx.yaml").unlink()
    (root / "views" / "sx.yaml").write_text(views)
    return root


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
