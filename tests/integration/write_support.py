"""Shared pieces of the write-path tests: a catalog of special collections, record bodies, row counts.

Its fixtures (`write_runtime`, `write_app`, `wclient`) are in this folder's conftest.

The definitions table keeps every (kind, name, version) ever loaded and refuses changed content,
so every test that needs special collections uses this ONE catalog (names prefixed `w_`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Engine

from tests import helpers

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
  - name: w_client_nodes
    version: 1
    active: true
    types: [node]
    keyed: true
    fields:
      owner: {type: string}
    links:
      - {field: owner, predicate: owned_by, edges: w_client_edges}
  - name: w_client_edges
    version: 1
    active: true
    types: [link]
    keyed: false
    enrichments: [w_region]
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
    files = {"collections/write.yaml": COLLECTIONS, "conf/enrichments.yaml": ENRICHMENTS}
    return helpers.write_catalog(root, files)


def count(engine: Engine, table: str = "records") -> int:
    with engine.connect() as conn:
        return int(conn.execute(sa.text(f"SELECT count(*) FROM {table}")).scalar_one())  # noqa: S608


def record_in(collection: str = "w_any", **values: Any) -> dict[str, Any]:
    """A valid record body for `collection` (defaults fit the `w_` catalog)."""
    types = {
        "w_events": "event",
        "w_facts": "fact",
        "w_nodes": "node",
        "w_client_nodes": "node",
        "w_edges": "link",
    }
    body: dict[str, Any] = {
        "collection": collection,
        "entity": "e1",
        "type": types.get(collection, "note"),
        "text": "some text",
    }
    if collection == "w_any":
        body["type"] = "fact"
    if collection in ("w_facts", "w_nodes", "w_client_nodes"):
        body["key"] = "k1"
    body.update(values)
    return body
