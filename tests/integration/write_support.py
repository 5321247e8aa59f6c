"""Shared pieces of the write-path tests: a catalog of special collections, record bodies, row counts.

Its fixtures (`write_runtime`, `write_app`, `wclient`) are in this folder's conftest.

The definitions table keeps every (kind, name, version) ever loaded and refuses changed content,
so every test that needs special collections uses this ONE catalog, the test catalog `w` (names
prefixed `w_`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Engine

from tests import helpers


def write_catalog(root: Path) -> Path:
    """The `w_` test catalog under `root`."""
    return helpers.fixture_catalog(root, "w", rank_default=True)


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
