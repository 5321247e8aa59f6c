"""Black-box conformance tests of the design (write side, auth, catalog, CLI): the `bw` catalog.

Everything runs over HTTP (Flask test client) or the `memseek` command in a subprocess, against a
database of its own (`memseek_bw`), so the design's examples can be loaded verbatim — the
`customer_events` v2 collection, the spec's `customer_context` and `upcoming_calendar` views, the
`support_agent` package — without clashing with the other suites' definitions. Conf files are the
design's and the spec's examples exactly as written. The `bw_*` fixtures are in this folder's
conftest; requests go through `tests.helpers`.
"""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Engine

from memseek.runtime import Runtime
from memseek.write.worker import RetryPolicy
from memseek.write.worker import process_batch
from tests.conftest import Client
from tests.conftest import Tenant
from tests.helpers import fetch
from tests.helpers import ok
from tests.helpers import view_query

SEARCH_PROFILES = """\
profiles:
  pg_default:
    backend: pg                    # built-in PostgreSQL search
  memory_tpuf:
    backend: turbopuffer           # external vector index
    layout: shared                 # shared | per_collection
    consistency: strong            # strong | eventual
    enabled_if_credentials: true   # only active when credentials exist
"""

MODELS = """\
models:
  default:  {kind: embedding, provider: local, model: all-MiniLM-L6-v2}    # packaged weights, offline
  remote:   {kind: embedding, provider: openai, model: text-embedding-3-small, base_url_env: OPENAI_BASE_URL, api_key_env: OPENAI_API_KEY}
  cheap:    {kind: chat, provider: openai, model: gpt-4o-mini, base_url_env: OPENAI_BASE_URL, api_key_env: OPENAI_API_KEY}
"""  # noqa: E501 (verbatim from the design)

ENRICHMENTS = """\
enrichments:
  importance:
    kind: llm_score            # the cheap model rates the text → scores.importance
    instructions: Rate from 1 to 10 how important this is to remember.
    range: [1, 10]
  sentiment:
    kind: llm_label            # → annotations.sentiment = {"label": ...}
    labels: [positive, neutral, negative]
  region:
    kind: client               # the writer must supply annotations.region
"""

DESIGN_COLLECTION = """\
  - name: customer_events
    version: 2
    active: true
    description: What happened with each customer.
    types: [event, note, reflection]
    keyed: any                 # true: key required | false: key forbidden | any (default)
    search_profile: pg_default
    allowed_search_profiles: [pg_default, memory_tpuf]
    embedding: default         # a model alias from conf/models.yaml; omit = no vectors
    text_language: english     # full-text configuration
    fields:
      channel:
        type: string           # string | string_array | number | integer | boolean | datetime
        path: channel          # dot path inside `content`
        fallback_paths: [meta.channel]   # tried in order when `path` is absent
        filterable: true
        sortable: false
        returnable: true
    scores:
      importance: {display: true}       # shown in rendered rows
    enrichments: [importance, sentiment] # processors every record must have run
"""

CUSTOMERS = (
    "collections:\n"
    + DESIGN_COLLECTION
    + """\
  - name: customer_events
    version: 1
    types: [event]
    embedding: default
    fields:
      channel: {type: integer}
  - name: calendar_events
    version: 1
    active: true
    types: [event]
    fields:
      starts_at: {type: datetime, filterable: true, sortable: true, returnable: true}
"""
)

BW_COLLECTIONS = """\
collections:
  - name: bw_plain
    version: 1
    active: true
    types: [event, note, fact]
    fields:
      s: {type: string, path: meta.s, fallback_paths: [old.s, s], filterable: true, returnable: true}
      sa: {type: string_array, filterable: true}
      n: {type: number, sortable: true}
      i: {type: integer, sortable: true}
      b: {type: boolean, filterable: true}
      d: {type: datetime, sortable: true, returnable: true}
    scores:
      importance: {display: true}
  - name: bw_facts
    version: 1
    active: true
    types: [fact]
    keyed: true
  - name: bw_events
    version: 1
    active: true
    types: [event]
    keyed: false
  - name: bw_vec
    version: 1
    active: true
    types: [note, fact]
    embedding: default
  - name: bw_retired
    version: 1
    types: [note]
  - name: bw_remote
    version: 1
    active: true
    types: [note]
    embedding: remote
  - name: bw_client
    version: 1
    active: true
    types: [note]
    enrichments: [region]
  - name: bw_enriched
    version: 1
    active: true
    types: [note, fact]
    enrichments: [importance, sentiment]
  - name: bw_nodes
    version: 1
    active: true
    types: [node]
    keyed: true
    fields:
      depends_on: {type: string_array}
    links:
      - field: depends_on        # a declared string or string_array field of the node
        predicate: depends_on
        edges: bw_edges          # the edges collection the links are written to
  - name: bw_edges
    version: 1
    active: true
    types: [link]
    keyed: false
    fields:
      src: {type: string, filterable: true, sortable: true, returnable: true}
      dst: {type: string, filterable: true, sortable: true, returnable: true}
      rel: {type: string, filterable: true, sortable: true, returnable: true}
"""

VIEWS = """\
views:
  - name: customer_context
    version: 1
    active: true
    parameters:                       # the caller must supply these
      entity: {type: string, required: true}
      task: {type: string, required: true}
    query:
      q: "{{task}}"                   # search for text relevant to the task
      mode: hybrid                    # meaning + keyword relevance
      scope:
        entities: ["{{entity}}"]      # only this customer's records
        collections: [customer_events]
      k: 20                           # return at most 20 results
      render: true                    # include prompt-ready text
  - name: upcoming_calendar
    version: 1
    active: true
    parameters:
      entity: {type: string, required: true}
      start: {type: datetime, required: true}
      end: {type: datetime, required: true}
    required_capabilities: [structured]
    query:
      mode: structured                # filter + sort, no relevance scoring
      scope:
        entities: ["{{entity}}"]
        collections: [calendar_events]
      where:
        starts_at: {gte: "{{start}}", lt: "{{end}}"}
      order_by:
        - {field: starts_at, direction: asc}
      k: 50
      render: true
  - name: upcoming_calendar
    version: 2
    parameters:
      entity: {type: string, required: true}
      start: {type: datetime, required: true}
      end: {type: datetime, required: true}
    query:
      mode: structured
      scope:
        entities: ["{{entity}}"]
        collections: [calendar_events]
      where:
        starts_at: {gte: "{{start}}", lt: "{{end}}"}
      order_by:
        - {field: starts_at, direction: desc}
      k: 10
  - name: bw_graph
    version: 1
    active: true
    kind: graph
    graph: {edges: bw_edges, subject: src, object: dst, predicate: rel}
    parameters:
      seed: {type: string, required: true}
      predicates: {type: string_array, default: []}
      direction: {type: string, default: out}
      depth: {type: integer, default: 1}
      limit: {type: integer, default: 20}
"""

PACKAGE = """\
package:
  name: support_agent
  views: {customer_context: 1, upcoming_calendar: 2}   # exact versions this deployment exposes
  mcp:
    tools: [customer_context]                          # which of those become agent tools
"""

CATALOG = {
    "conf/search_profiles.yaml": SEARCH_PROFILES,
    "conf/models.yaml": MODELS,
    "conf/enrichments.yaml": ENRICHMENTS,
    "collections/customers.yaml": CUSTOMERS,
    "collections/bw.yaml": BW_COLLECTIONS,
    "views/views.yaml": VIEWS,
    "packages/support_agent.yaml": PACKAGE,
}


# --- request helpers ----------------------------------------------------------------------------


def rec(collection: str = "bw_plain", text: str = "a note", **values: Any) -> dict[str, Any]:
    """A valid RecordIn for `collection`."""
    kinds = {
        "bw_facts": "fact",
        "bw_events": "event",
        "bw_nodes": "node",
        "bw_edges": "link",
        "customer_events": "event",
        "calendar_events": "event",
    }
    body: dict[str, Any] = {
        "collection": collection,
        "entity": "cust-1",
        "type": kinds.get(collection, "note"),
        "text": text,
    }
    if collection in ("bw_facts", "bw_nodes"):
        body["key"] = "slot"
    body.update(values)
    return body


def fact(text: str, key: str = "plan", **values: Any) -> dict[str, Any]:
    """A record of the keyed `bw_facts` in slot `key`."""
    return rec("bw_facts", text=text, key=key, **values)


VECTOR = [0.05] * 384
"""A vector a writer supplies for `bw_vec` (with the local model's id), so it is ready at once."""
RECORD_FIELDS = {
    "id", "collection", "collection_version", "entity", "type", "key", "text", "content", "scores",
    "annotations", "status", "depth", "derived_from", "run_id", "occurred_at", "created_at",
    "last_accessed", "processing", "processing_error", "current", "retracted_at", "retraction_reason",
}  # fmt: skip
"""The keys of a whole record (`GET /records/{id}`, the record actions' answers)."""


def current_flags(client: Client, *record_ids: str) -> list[bool]:
    """`current` of each record, in order."""
    return [fetch(client, i)["current"] for i in record_ids]


def retract(client: Client, record_id: str, reason: str = "wrong") -> Any:
    """`POST /records/{record_id}/retract` (the response)."""
    return client.post(f"/records/{record_id}/retract", json={"reason": reason})


def walk(client: Client, seed: str, **parameters: Any) -> dict[str, Any]:
    """`bw_graph` from `seed`, expecting 200."""
    return ok(view_query(client, "bw_graph", {"seed": seed, **parameters}))


def count_records(engine: Engine, workspace: Tenant) -> int:
    with engine.connect() as conn:
        query = sa.text("SELECT count(*) FROM records WHERE workspace_id = :ws")
        return int(conn.execute(query, {"ws": workspace.id}).scalar_one())


def process(runtime: Runtime, max_attempts: int = 5) -> int:
    """Run the worker until nothing is due (retries are due at once); how many were processed."""
    policy = RetryPolicy(max_attempts=max_attempts, base_delay=0.0)
    total = 0
    while (done := process_batch(runtime, 64, policy)) > 0:
        total += done
    return total


def recent(client: Client, collection: str, **scope: Any) -> list[dict[str, Any]]:
    """The hits of a `recent` search over `collection` (with `text`, `key` and `entity`)."""
    body = {
        "mode": "recent",
        "scope": {"collections": [collection], **scope},
        "k": 100,
        "include": ["text", "key", "entity", "status"],
    }
    return ok(client.post("/search", json=body))["hits"]  # type: ignore[no-any-return]
