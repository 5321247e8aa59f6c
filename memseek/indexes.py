"""Catalog-driven indexes and statistics: what serves graph walks and orphan reports.

A walk step reads a parent node's live links of the edges collection by one end (`fields ->>
'subject'` going out, `fields ->> 'object'` coming in) in the order the walk needs them: by the
other end in code point order, then by link id. For every graph view loaded, each end gets a
partial B-tree `records_walk_<edges>_<near>_<far>` on `(workspace_id, (fields ->> 'near'),
(fields ->> 'far') COLLATE "C", id)` over the live rows of the edges collection (`live_in`),
so a step reads only the first links it can use, however many a hub has, and never a dead row;
an orphan report checks its nodes' links through the first two columns. An orphan report reads
its nodes collection through `records_nodes_<nodes>` on `(workspace_id, entity COLLATE "C", key
COLLATE "C", id)` over the live keyed nodes, in report order, so it stops after `limit + 1`
orphans instead of sorting every node. Each end field also gets expression statistics
(`records_end_<field>`): PostgreSQL reads no statistics of partial-index expressions, so without
them it guesses that a node has hundreds of links and may read every link once instead of
looking a few up per node; the table is analysed once when one is added.

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
from memseek.search.graph import NODE_COLLATION
from memseek.search.graph import inline
from memseek.search.graph import live_in

MAX_IDENTIFIER = 63
LOCK_KEY = 0x6D656D7365656B  # "memseek": one advisory lock id for every schema-side start-up step


def graph_index_targets(catalog: Catalog) -> list[tuple[str, str, str]]:
    """Every (edges collection, near end, far end) a loaded graph view walks, sorted and unique."""
    targets = {
        (view.graph.edges, near, far)
        for view in catalog.all_views()
        if view.graph is not None
        for near, far in ((view.graph.subject, view.graph.object), (view.graph.object, view.graph.subject))
    }
    return sorted(targets)


def graph_node_collections(catalog: Catalog) -> list[str]:
    """Every nodes collection a loaded orphan report reads, sorted and unique."""
    return sorted({view.graph.nodes for view in catalog.all_views() if view.graph and view.graph.nodes})


def object_name(kind: str, *parts: str) -> str:
    """`records_<kind>_<part>_…`, shortened with a digest when over 63 characters."""
    name = "_".join(("records", kind, *parts))
    if len(name) <= MAX_IDENTIFIER:
        return name
    digest = hashlib.sha256(name.encode()).hexdigest()[:8]
    return f"{name[: MAX_IDENTIFIER - 9]}_{digest}"


def walk_index(edges: str, near: str, far: str) -> sa.Index:
    """The partial expression index a walk step reads from `near` to `far` (module docstring)."""
    end = records.c.fields.op("->>", return_type=sa.Text)
    return sa.Index(
        object_name("walk", edges, near, far),
        records.c.workspace_id,
        end(inline(near)),
        end(inline(far)).collate(NODE_COLLATION),
        records.c.id,
        postgresql_where=live_in(records, edges),
        _table=records,
    )


def node_index(nodes: str) -> sa.Index:
    """The partial index an orphan report reads a nodes collection through, in report order."""
    return sa.Index(
        object_name("nodes", nodes),
        records.c.workspace_id,
        records.c.entity.collate(NODE_COLLATION),
        records.c.key.collate(NODE_COLLATION),
        records.c.id,
        postgresql_where=sa.and_(live_in(records, nodes), records.c.key.is_not(None)),
        _table=records,
    )


def end_statistics(conn: Connection, field: str) -> tuple[str, bool]:
    """Create the expression statistics of one end field unless they exist: (name, created)."""
    name = object_name("end", field)
    exists = (
        sa.select(sa.func.count())
        .select_from(sa.table("pg_statistic_ext"))
        .where(sa.column("stxname") == name)
    )
    if conn.execute(exists).scalar_one():
        return name, False
    end = sa.column("fields", records.c.fields.type).op("->>", return_type=sa.Text)(inline(field))
    expression = end.compile(dialect=conn.dialect, compile_kwargs={"render_postcompile": True})
    quoted = conn.dialect.identifier_preparer.quote(name)
    conn.execute(sa.DDL(f"CREATE STATISTICS {quoted} ON (({expression})) FROM records"))
    return name, True


def ensure_field_indexes(conn: Connection, catalog: Catalog) -> list[str]:
    """Create the graph indexes and statistics the catalog needs (module docstring); their names."""
    conn.execute(sa.select(sa.func.pg_advisory_xact_lock(LOCK_KEY)))
    targets = graph_index_targets(catalog)
    names = []
    node_indexes = [node_index(nodes) for nodes in graph_node_collections(catalog)]
    for index in [walk_index(edges, near, far) for edges, near, far in targets] + node_indexes:
        conn.execute(CreateIndex(index, if_not_exists=True))
        names.append(str(index.name))
    statistics = [end_statistics(conn, field) for field in sorted({near for _, near, _ in targets})]
    if any(created for _, created in statistics):
        conn.execute(sa.text("ANALYZE records"))
    return names + [name for name, _ in statistics]
