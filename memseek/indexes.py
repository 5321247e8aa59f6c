"""Catalog-driven expression indexes: the B-trees that serve graph walks and orphan reports.

A walk looks links up by one end: `fields ->> 'subject'` (out) or `fields ->> 'object'` (in) of
the edges collection. For every graph view loaded, each end gets a partial B-tree on
`(workspace_id, (fields ->> 'field')) WHERE collection = 'edges'`, created once at start-up.
Names and expressions come only from catalog-validated identifiers. A transaction-level advisory
lock serialises concurrent start-ups, so two processes never race to create the same index.
Creation is not CONCURRENTLY: it runs inside the start-up transaction, which on a large existing
table holds writes to `records` while the index builds (document new graph views accordingly).
"""

from __future__ import annotations

import hashlib

import sqlalchemy as sa
from sqlalchemy.engine import Connection
from sqlalchemy.schema import CreateIndex

from memseek.catalog.catalog import Catalog
from memseek.schema import records
from memseek.search.graph import inline

MAX_IDENTIFIER = 63
LOCK_KEY = 0x6D656D7365656B  # "memseek": one advisory lock id for every schema-side start-up step


def graph_index_targets(catalog: Catalog) -> list[tuple[str, str]]:
    """Every (edges collection, end field) a loaded graph view walks, sorted and unique."""
    targets = {
        (view.graph.edges, end)
        for view in catalog.all_views()
        if view.graph is not None
        for end in (view.graph.subject, view.graph.object)
    }
    return sorted(targets)


def index_name(edges: str, field: str) -> str:
    """`records_graph_<edges>_<field>`, shortened with a digest when over 63 characters."""
    name = f"records_graph_{edges}_{field}"
    if len(name) <= MAX_IDENTIFIER:
        return name
    digest = hashlib.sha256(name.encode()).hexdigest()[:8]
    return f"{name[: MAX_IDENTIFIER - 9]}_{digest}"


def field_index(edges: str, field: str) -> sa.Index:
    """The partial expression index for one end of one edges collection."""
    end = records.c.fields.op("->>", return_type=sa.Text)(inline(field))
    return sa.Index(
        index_name(edges, field),
        records.c.workspace_id,
        end,
        postgresql_where=records.c.collection == inline(edges),
        _table=records,
    )


def ensure_field_indexes(conn: Connection, catalog: Catalog) -> list[str]:
    """Create the graph indexes the catalog needs (IF NOT EXISTS); returns their names."""
    conn.execute(sa.select(sa.func.pg_advisory_xact_lock(LOCK_KEY)))
    names = []
    for edges, field in graph_index_targets(catalog):
        index = field_index(edges, field)
        conn.execute(CreateIndex(index, if_not_exists=True))
        names.append(str(index.name))
    return names
