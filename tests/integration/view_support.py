"""Shared pieces of the view and graph tests: the `g_` catalog, record bodies and row writers.

Its fixtures (`view_runtime`, `vclient`, `graph`, `statements`, ...) are in this folder's conftest.

The definitions table keeps every (kind, name, version) ever loaded and refuses changed content,
so every view test uses this ONE catalog, the test catalog `g` (names prefixed `g_`). Its collections need no
processing (no embedding, no enrichments), so records written through `POST /records` are
searchable at once. `Graph` writes rows straight into the table for the lifecycle states the
write API cannot produce directly (pending, failed, superseded without a successor).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any
from uuid import UUID
from uuid import uuid4

import sqlalchemy as sa
from sqlalchemy.engine import Engine

from memseek.schema import lane_seq
from memseek.schema import records
from memseek.write.store import text_columns
from tests import helpers

EDGES = "g_links"
NODES = "g_parts"
NOTES = "g_notes"


def write_catalog(root: Path) -> Path:
    """The `g_` test catalog under `root`."""
    return helpers.fixture_catalog(root, "g", rank_default=True)


def link_body(subject: str, predicate: str, obj: str, **content: Any) -> dict[str, Any]:
    """A link record of `g_links` (its content carries the mapped fields)."""
    text = f"{subject} {predicate} {obj}"
    body = {"text": text, "from_node": subject, "to_node": obj, "relationship": predicate, **content}
    return {"collection": EDGES, "entity": subject, "type": "link", "text": text, "content": body}


SPEC_GRAPH_CONTENT = {
    "text": "people/maya advises companies/acme",
    "from_node": "people/maya",
    "to_node": "companies/acme",
    "relationship": "advises",
    "confidence": 0.92,
}
"""The content of the edge in the spec's `graph_query` example ("Graph views")."""
SPEC_GRAPH_PARAMETERS = {
    "seed": "people/maya",
    "predicates": ["advises"],
    "direction": "out",
    "depth": 2,
    "limit": 20,
}
"""The parameters of the spec's `graph_query` example."""


def spec_graph_response(view: dict[str, Any], edge: str) -> dict[str, Any]:
    """The spec's `graph_query` example response, field for field, from `view` (its `{name,
    version, hash}`) whose walk found the one edge `edge` holding SPEC_GRAPH_CONTENT."""
    hit = {
        "id": edge,
        "text": "people/maya advises companies/acme",
        "subject": "people/maya",
        "object": "companies/acme",
        "predicate": "advises",
        "content": SPEC_GRAPH_CONTENT,
    }
    return {
        "view": view,
        "parameters": SPEC_GRAPH_PARAMETERS,
        "hits": [hit],
        "input_record_ids": [edge],
        "nodes": ["companies/acme", "people/maya"],
        "paths": [{"nodes": ["people/maya", "companies/acme"], "edge_ids": [edge], "depth": 1}],
        "citations": [hit],
        "truncated": False,
        "profiles": ["pg_default"],
        "backend": [{"kind": "graph", "name": "postgresql"}],
    }


def part_body(entity: str, key: str, depends_on: list[str] | None = None, **values: Any) -> dict[str, Any]:
    """A node record of `g_parts`; `depends_on` values become automatic links."""
    content = {} if depends_on is None else {"depends_on": depends_on}
    return {"collection": NODES, "entity": entity, "type": "component", "key": key,
            "text": f"component {key}", "content": content, **values}  # fmt: skip


def note_body(entity: str, text: str, **values: Any) -> dict[str, Any]:
    return {"collection": NOTES, "entity": entity, "type": "note", "text": text, **values}


@dataclass(frozen=True)
class Graph:
    """Writes rows of one workspace straight into the records table (see the module docstring)."""

    engine: Engine
    workspace_id: UUID

    def record(self, collection: str, entity: str, text: str, **values: Any) -> str:
        """Insert one record; `values` override any column (defaults: a ready, current event)."""
        record_id = values.pop("id", None) or uuid4()
        row = {
            "workspace_id": self.workspace_id, "id": record_id, "lane_seq": lane_seq.next_value(),
            "collection": collection, "collection_version": 1, "entity": entity, "type": "link",
            "key": None, "text": text, "content": {"text": text}, "scores": {}, "annotations": {},
            "fields": {}, "status": "active", "depth": 0, "derived_from": [],
            "occurred_at": sa.func.now(), "created_at": sa.func.now(), "last_accessed": sa.func.now(),
            "processing": "ready", "is_current": True, **text_columns("english", text),
            **values,
        }  # fmt: skip
        with self.engine.begin() as conn:
            conn.execute(records.insert().values(**row))
        return str(record_id)

    def link(self, subject: str, predicate: str, obj: str, **values: Any) -> str:
        """A link row of `g_links` with its materialised fields."""
        text = f"{subject} {predicate} {obj}"
        fields = {"from_node": subject, "to_node": obj, "relationship": predicate}
        collection = values.pop("collection", EDGES)
        return self.record(
            collection, subject, text, content={"text": text, **fields}, fields=fields, **values
        )

    def node(self, entity: str, key: str, **values: Any) -> str:
        """A keyed node row of `g_parts`."""
        return self.record(NODES, entity, f"component {key}", key=key, type="component", **values)

    def update(self, record_id: str, **values: Any) -> None:
        with self.engine.begin() as conn:
            conn.execute(
                records.update()
                .where(records.c.workspace_id == self.workspace_id, records.c.id == UUID(record_id))
                .values(**values)
            )


@dataclass
class Statements:
    """SQL text the engine sent during the test (see `tests.helpers.statements_sent`)."""

    texts: list[str]
