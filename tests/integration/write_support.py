"""Shared pieces of the write-path tests: a catalog of special collections, runtimes and row counts.

The definitions table keeps every (kind, name, version) ever loaded and refuses changed content,
so every test that needs special collections uses this ONE catalog (names prefixed `w_`).
"""

from __future__ import annotations

import shutil
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any
from uuid import UUID

import pytest
import sqlalchemy as sa
from flask import Flask
from sqlalchemy.engine import Engine

from memseek.app import create_app
from memseek.models.registry import ModelRegistry
from memseek.paths import reference_catalog
from memseek.runtime import Runtime
from memseek.runtime import build_runtime
from tests.conftest import Client
from tests.conftest import Tenant

COLLECTIONS = """
collections:
  - name: w_events
    version: 1
    types: [event]
    keyed: false
  - name: w_events
    version: 2
    active: true
    types: [event, note]
    keyed: false
    fields:
      s: {type: string, path: meta.s, fallback_paths: [s_old]}
      sa: {type: string_array}
      n: {type: number}
      i: {type: integer}
      b: {type: boolean}
      d: {type: datetime}
  - name: w_facts
    version: 1
    active: true
    types: [fact]
    keyed: true
  - name: w_any
    version: 1
    active: true
    types: [fact, event]
    scores:
      importance: {display: true}
  - name: w_local
    version: 1
    active: true
    types: [note]
    embedding: default
  - name: w_remote
    version: 1
    active: true
    types: [note]
    embedding: remote
    enrichments: [w_score, w_label]
  - name: w_chat
    version: 1
    active: true
    types: [note]
    enrichments: [w_score, w_label]
  - name: w_client
    version: 1
    active: true
    types: [note]
    enrichments: [w_region]
  - name: w_nodes
    version: 1
    active: true
    types: [node]
    keyed: true
    fields:
      needs: {type: string_array}
      owner: {type: string}
    links:
      - {field: needs, predicate: needs, edges: w_edges}
      - {field: owner, predicate: owned_by, edges: w_edges}
  - name: w_edges
    version: 1
    active: true
    types: [link]
    keyed: false
    fields:
      subject: {type: string}
      object: {type: string}
      predicate: {type: string}
"""

ENRICHMENTS = """
enrichments:
  w_score: {kind: llm_score, instructions: Rate how urgent this is., range: [1, 5]}
  w_label: {kind: llm_label, labels: [good, bad]}
  w_region: {kind: client}
"""


def write_catalog(root: Path) -> Path:
    """The `w_` test catalog under `root`."""
    (root / "collections").mkdir(parents=True, exist_ok=True)
    (root / "conf").mkdir(exist_ok=True)
    (root / "collections" / "write.yaml").write_text(COLLECTIONS)
    (root / "conf" / "enrichments.yaml").write_text(ENRICHMENTS)
    # the session database already holds the reference catalog's rank default (immutable)
    shutil.copy(reference_catalog() / "conf" / "rank_default.yaml", root / "conf" / "rank_default.yaml")
    return root


def runtime_for(base: Runtime, catalog: Path, environ: Mapping[str, str] | None = None) -> Runtime:
    """A runtime over `catalog` sharing `base`'s engine; `environ` feeds the HTTP model providers."""
    built = build_runtime(base.settings.with_overrides(memseek_catalog=catalog), engine=base.engine)
    return replace(built, models=ModelRegistry(built.catalog.models, environ=environ))


def app_for(runtime: Runtime) -> Flask:
    app = create_app(shared=runtime)
    app.testing = True
    return app


def count(engine: Engine, table: str = "records") -> int:
    with engine.connect() as conn:
        return int(conn.execute(sa.text(f"SELECT count(*) FROM {table}")).scalar_one())  # noqa: S608


def record_in(collection: str = "w_any", **values: Any) -> dict[str, Any]:
    """A valid record body for `collection` (defaults fit the `w_` catalog)."""
    types = {"w_events": "event", "w_facts": "fact", "w_nodes": "node", "w_edges": "link"}
    body: dict[str, Any] = {"collection": collection, "entity": "e1", "type": types.get(collection, "note"),
                            "text": "some text"}
    if collection == "w_any":
        body["type"] = "fact"
    if collection in ("w_facts", "w_nodes"):
        body["key"] = "k1"
    body.update(values)
    return body


def post(client: Client, *records: dict[str, Any], query: str = "") -> Any:
    return client.post(f"/records{query}", json={"records": list(records)})


def written(client: Client, *records: dict[str, Any]) -> list[dict[str, Any]]:
    """POST the records, expect 201, return the per-record results."""
    response = post(client, *records)
    assert response.status_code == 201, response.get_data(as_text=True)
    return response.get_json()["records"]  # type: ignore[no-any-return]


def fetch(client: Client, record_id: str | UUID) -> dict[str, Any]:
    response = client.get(f"/records/{record_id}")
    assert response.status_code == 200, response.get_data(as_text=True)
    return response.get_json()  # type: ignore[no-any-return]


@pytest.fixture(scope="module")
def write_runtime(runtime: Runtime, tmp_path_factory: pytest.TempPathFactory) -> Runtime:
    """A runtime over the `w_` catalog (local embedder, HTTP providers unconfigured)."""
    return runtime_for(runtime, write_catalog(tmp_path_factory.mktemp("write-catalog")))


@pytest.fixture(scope="module")
def write_app(write_runtime: Runtime) -> Flask:
    return app_for(write_runtime)


@pytest.fixture
def wclient(write_app: Flask, tenant: Tenant) -> Client:
    """A client of the `w_` app for the `tenant` workspace."""
    return Client(write_app.test_client(), tenant)
