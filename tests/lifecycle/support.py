"""Shared pieces of the lifecycle tests: the `lc_` catalog, record bodies, and what the database
holds (rows counted, and every table searched for an id, a text or a vector).

The lifecycle tests share ONE catalog, `tests/fixtures/catalogs/lc` (names prefixed `lc_`):
`lc_notes` embeds with the packaged local model; `lc_nodes` writes automatic links into
`lc_edges`, which the graph view `lc_walk` reads; `lc_expiring` and `lc_written` declare
retention.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any
from uuid import UUID

import sqlalchemy as sa
from sqlalchemy.engine import Connection
from sqlalchemy.engine import Engine

from memseek.runtime import Runtime
from memseek.write.worker import run_worker
from tests import helpers


def write_catalog(root: Path) -> Path:
    """The `lc` test catalog (tests/fixtures/catalogs/lc) under `root`."""
    return helpers.fixture_catalog(root, "lc", rank_default=True)


def note(entity: str, text: str, **values: Any) -> dict[str, Any]:
    """An `lc_notes` note (embedded by the worker)."""
    return {"collection": "lc_notes", "entity": entity, "type": "note", "text": text, **values}


def fact(entity: str, key: str, text: str, **values: Any) -> dict[str, Any]:
    """An `lc_notes` keyed fact."""
    return note(entity, text, type="fact", key=key, **values)


def node(entity: str, key: str, depends_on: Sequence[str] = ()) -> dict[str, Any]:
    """An `lc_nodes` node; each `depends_on` value becomes an automatic link in `lc_edges`."""
    content = {"depends_on": list(depends_on)}
    return {
        "collection": "lc_nodes",
        "entity": entity,
        "type": "node",
        "key": key,
        "text": key,
        "content": content,
    }


def edge(entity: str, subject: str, obj: str, predicate: str = "calls") -> dict[str, Any]:
    """An `lc_edges` link written directly."""
    content = {"from_node": subject, "to_node": obj, "relationship": predicate}
    text = f"{subject} {predicate} {obj}"
    return {"collection": "lc_edges", "entity": entity, "type": "link", "text": text, "content": content}


def event(collection: str, entity: str, text: str, **values: Any) -> dict[str, Any]:
    return {"collection": collection, "entity": entity, "type": "event", "text": text, **values}


def processed(runtime: Runtime) -> None:
    """Run the worker until nothing is due: records processed, erasures finished, expired swept."""
    run_worker(runtime, once=True)


def rows(engine: Engine, sql: str, **params: Any) -> list[dict[str, Any]]:
    with engine.connect() as conn:
        return [dict(row._mapping) for row in conn.execute(sa.text(sql), params)]


def texts(engine: Engine, workspace_id: UUID) -> list[str]:
    """The text of every record of the workspace still stored, in write order."""
    found = rows(engine, "SELECT text FROM records WHERE workspace_id = :ws ORDER BY seq", ws=workspace_id)
    return [row["text"] for row in found]


def hold(conn: Connection, table: str, column: str, value: Any) -> None:
    """Lock the rows of `table` whose `column` is `value` (FOR UPDATE) until `conn`'s transaction
    ends, as a worker busy with them does. The statement names their workspace too: Citus locks
    rows only in a statement routed to one shard."""
    found = sa.text(f"SELECT DISTINCT workspace_id FROM {table} WHERE {column} = :value")
    (workspace_id,) = conn.execute(found, {"value": value}).scalars()
    lock = f"SELECT 1 FROM {table} WHERE workspace_id = :ws AND {column} = :value FOR UPDATE"
    conn.execute(sa.text(lock), {"ws": workspace_id, "value": value})


def count(engine: Engine, table: str, **where: Any) -> int:
    """Rows of `table` matching every `column = value` of `where`."""
    condition = " AND ".join(f"{column} = :{column}" for column in where) or "true"
    return int(rows(engine, f"SELECT count(*) AS n FROM {table} WHERE {condition}", **where)[0]["n"])


def tables(engine: Engine) -> list[str]:
    """Every table of the schema (information_schema), so a table added later is searched too."""
    found = rows(
        engine,
        "SELECT table_name FROM information_schema.tables "
        "WHERE table_schema = current_schema() AND table_type = 'BASE TABLE' ORDER BY table_name",
    )
    return [row["table_name"] for row in found]


def vector_columns(engine: Engine) -> list[tuple[str, str]]:
    found = rows(
        engine,
        "SELECT table_name, column_name FROM information_schema.columns "
        "WHERE table_schema = current_schema() AND udt_name = 'vector' ORDER BY table_name",
    )
    return [(row["table_name"], row["column_name"]) for row in found]


def holding(engine: Engine, needles: Sequence[str], vector: str | None = None) -> dict[str, int]:
    """Per table, the rows whose text form holds any of `needles` (case-insensitive) or whose
    vector column equals `vector` (pgvector's text form); tables holding none are left out.
    A row's text form covers every column: text, JSON, arrays, ids, the full-text vector."""
    found: dict[str, int] = {}
    patterns = [f"%{needle}%" for needle in needles]
    for table in tables(engine):
        sql = f'SELECT count(*) AS n FROM "{table}" t WHERE t::text ILIKE ANY (:patterns)'
        n = int(rows(engine, sql, patterns=patterns)[0]["n"])
        if n:
            found[table] = n
    for table, column in vector_columns(engine) if vector is not None else []:
        sql = f'SELECT count(*) AS n FROM "{table}" WHERE "{column}" = CAST(:vector AS vector)'
        n = int(rows(engine, sql, vector=vector)[0]["n"])
        if n:
            found[f"{table}.{column}"] = n
    return found


def delete(client: Any, path: str, body: Any = None) -> Any:
    """`DELETE path` with a JSON body when given."""
    return client.request("DELETE", path, json=body)
