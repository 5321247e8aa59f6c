"""Black-box conformance tests of the design (write side, auth, catalog, CLI): the `bw` catalog.

Everything runs over HTTP (Flask test client) or the `memseek` command in a subprocess, against a
database of its own (`memseek_bw`), so the design's examples can be loaded verbatim — the
`customer_events` v2 collection, the spec's `customer_context` and `upcoming_calendar` views, the
`support_agent` package — without clashing with the other suites' definitions. Conf files are the
design's and the spec's examples exactly as written.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from dataclasses import replace
from pathlib import Path
from typing import Any
from uuid import UUID

import pytest
import sqlalchemy as sa
from flask import Flask
from sqlalchemy.engine import Engine

from memseek import auth
from memseek import migrate
from memseek.app import create_app
from memseek.db import create_db_engine
from memseek.models.registry import ModelRegistry
from memseek.runtime import Runtime
from memseek.runtime import build_runtime
from memseek.settings import Settings
from memseek.write.worker import RetryPolicy
from memseek.write.worker import process_batch
from tests.conftest import Client
from tests.conftest import make_database

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


def write_files(root: Path, files: dict[str, str]) -> Path:
    """Write `files` (relative path → text) under `root`; returns `root`."""
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root


@dataclass(frozen=True)
class Workspace:
    """A workspace of the `bw` database and one of its keys."""

    id: UUID
    key: str

    @property
    def headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.key}"}


@pytest.fixture(scope="session")
def bw_url(pg_server_url: str) -> str:
    return make_database(pg_server_url, "memseek_bw")


@pytest.fixture(scope="session")
def bw_engine(bw_url: str) -> Iterator[Engine]:
    engine = create_db_engine(Settings(database_url=bw_url))
    migrate.upgrade(engine)
    yield engine
    engine.dispose()


@pytest.fixture(scope="session")
def bw_catalog(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_files(tmp_path_factory.mktemp("bw-catalog"), CATALOG)


@pytest.fixture(scope="session")
def bw_runtime(bw_url: str, bw_engine: Engine, bw_catalog: Path) -> Runtime:
    settings = Settings(database_url=bw_url, memseek_catalog=bw_catalog, run_worker=False)
    return build_runtime(settings, engine=bw_engine)


def with_models(runtime: Runtime, environ: dict[str, str]) -> Runtime:
    """`runtime` whose HTTP model providers read `environ` (e.g. the local OpenAI-protocol server)."""
    return replace(runtime, models=ModelRegistry(runtime.catalog.models, environ=environ))


def app_of(runtime: Runtime) -> Flask:
    app = create_app(shared=runtime)
    app.testing = True
    return app


@pytest.fixture(scope="session")
def bw_app(bw_runtime: Runtime) -> Flask:
    return app_of(bw_runtime)


def new_workspace(engine: Engine, name: str) -> Workspace:
    with engine.begin() as conn:
        workspace_id, key = auth.create_workspace(conn, name)
    return Workspace(workspace_id, key)


@pytest.fixture
def bw_db(bw_engine: Engine) -> Iterator[Engine]:
    """The `bw` engine; its tenant tables are emptied after the test."""
    yield bw_engine
    with bw_engine.begin() as conn:
        conn.execute(sa.text("TRUNCATE processing_queue, records, api_keys, workspaces CASCADE"))


@pytest.fixture
def bw_ws(bw_db: Engine) -> Workspace:
    return new_workspace(bw_db, "bw-a")


@pytest.fixture
def bw_ws_other(bw_db: Engine) -> Workspace:
    return new_workspace(bw_db, "bw-b")


def client_of(app: Flask, workspace: Workspace) -> Client:
    return Client(app.test_client(), workspace)  # type: ignore[arg-type]


@pytest.fixture
def bw(bw_app: Flask, bw_ws: Workspace) -> Client:
    """A client of the `bw` app for the `bw_ws` workspace."""
    return client_of(bw_app, bw_ws)


@pytest.fixture
def bw_other(bw_app: Flask, bw_ws_other: Workspace) -> Client:
    return client_of(bw_app, bw_ws_other)


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


def post(client: Client, *records: dict[str, Any], query: str = "") -> Any:
    return client.post(f"/records{query}", json={"records": list(records)})


def write(client: Client, *records: dict[str, Any], query: str = "") -> list[dict[str, Any]]:
    """POST the records; expect 201; the per-record results."""
    response = post(client, *records, query=query)
    assert response.status_code == 201, response.get_data(as_text=True)
    return response.get_json()["records"]  # type: ignore[no-any-return]


def ids(client: Client, *records: dict[str, Any]) -> list[str]:
    return [r["id"] for r in write(client, *records)]


def get(client: Client, record_id: str) -> dict[str, Any]:
    response = client.get(f"/records/{record_id}")
    assert response.status_code == 200, response.get_data(as_text=True)
    return response.get_json()  # type: ignore[no-any-return]


def error(response: Any, status: int, code: str | None = None) -> dict[str, Any]:
    """Assert the one error shape and `status` (and `code`); the `error` object."""
    assert response.status_code == status, response.get_data(as_text=True)
    assert response.mimetype == "application/json"
    body = response.get_json()
    assert set(body) == {"error"}, body
    err = body["error"]
    assert set(err) == {"code", "message", "details"}, err
    assert isinstance(err["code"], str) and err["code"]
    assert isinstance(err["message"], str) and err["message"]
    assert isinstance(err["details"], list)
    for detail in err["details"]:
        assert set(detail) == {"loc", "msg"}, detail
        assert isinstance(detail["loc"], list) and isinstance(detail["msg"], str)
    if code is not None:
        assert err["code"] == code, err
    return err  # type: ignore[no-any-return]


def locs(response: Any, status: int = 422) -> list[list[Any]]:
    """The `loc` of every detail of an error response."""
    return [d["loc"] for d in error(response, status)["details"]]


def count_records(engine: Engine, workspace: Workspace) -> int:
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
    response = client.post("/search", json=body)
    assert response.status_code == 200, response.get_data(as_text=True)
    return response.get_json()["hits"]  # type: ignore[no-any-return]


# --- the `memseek` command ----------------------------------------------------------------------


def memseek(
    env: dict[str, str], *args: str, stdin: str | None = None, timeout: float = 180
) -> subprocess.CompletedProcess[str]:
    """Run `python -m memseek ARGS` with `env`."""
    return subprocess.run(
        [sys.executable, "-m", "memseek", *args],
        env=env,
        input=stdin,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def cli_env(**values: str) -> dict[str, str]:
    """The test process's environment without Memseek's own variables, plus `values`."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MEMSEEK_", "DATABASE_URL"))}
    return {**env, **values}
