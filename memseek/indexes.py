"""Catalog-driven indexes and statistics: what serves graph walks, orphan reports and structured sorts.

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

A structured search reads the first `candidates` eligible records of its scope in `order_by`
order. For every field a loaded collection version declares `sortable: true`, start-up creates
partial B-trees over the collection's ready, non-retracted records (the rules every search
applies; the predicate also states `compile.SORTED_LIST`, which only a structured list states, so
that scored searches never weigh these indexes), keyed exactly as `memseek.search.compile`
orders by that field alone — the typed value (`typed_field`; strings by code point) in the
sort's direction with missing values last, then ingestion order and id ascending (spec
"Ordering and ties"):

* `records_sort_<collection>_<field>_<asc|desc>` on `(workspace_id, entity, <value>, seq, id)`,
  for searches scoped to one entity;
* `records_sortall_<collection>_<field>_<asc|desc>` on `(workspace_id, <value>, seq, id)`, for
  searches over the whole collection.

So a structured search of one collection reads its records in order and stops at its limit
instead of reading and sorting every record of the scope; a search ordered by several fields is
presorted by the first (an incremental sort orders the rest). Whether reading in order and
stopping early is cheaper than reading the scope and sorting depends on how many rows pass the
search's filters: every scalar field declared filterable or sortable gets expression statistics
on its typed value (`records_value_<field>_<type>`), without which PostgreSQL guesses that an
equality keeps 0.5 % of the rows and prefers reading them all. Filters, scope rules and a
search over several collections or entities are still correct, only not served this way. The
indexes follow declarations: changing a field's type or dropping `sortable` leaves the old
index in place (unused) until dropped by hand.

Names and expressions come only from catalog-validated identifiers. A transaction-level advisory
lock serialises concurrent start-ups, so two processes never race to create the same index.
Creation is not CONCURRENTLY: it runs inside the start-up transaction, which on a large existing
table holds writes to `records` while the index builds (document new graph views and sortable
fields accordingly).
"""

from __future__ import annotations

import hashlib
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection
from sqlalchemy.schema import CreateIndex
from sqlalchemy.sql.elements import Grouping

from memseek.catalog.catalog import Catalog
from memseek.schema import inline
from memseek.schema import records
from memseek.search.compile import SORTED_LIST
from memseek.search.compile import sort_key
from memseek.search.compile import typed_field
from memseek.search.graph import NODE_COLLATION
from memseek.search.graph import live_in
from memseek.search.request import OrderBy

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


SORT_DIRECTIONS = ("asc", "desc")
SAME_SORT_VALUE = {"integer": "number", "datetime": "number"}
"""Declared types whose typed value (`typed_field`) is the same expression as another's."""


def sort_index_targets(catalog: Catalog) -> list[tuple[str, str, str]]:
    """Every (collection, field, type) a loaded collection version declares sortable, sorted and
    unique by typed value (integers and datetimes sort as numbers)."""
    return sorted(
        {
            (collection.name, name, SAME_SORT_VALUE.get(decl.type, decl.type))
            for versions in catalog.collections.values()
            for collection in versions
            for name, decl in collection.fields.items()
            if decl.sortable
        }
    )


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


def sort_index(
    collection: str, field: str, field_type: str, direction: str, per_entity: bool, typed_name: bool = False
) -> sa.Index:
    """The partial index a structured search of `collection` sorted by `field` reads (module
    docstring); `typed_name` adds the type to the name (a field declared with two types)."""
    value = sort_key(
        Grouping(typed_field(field, field_type)), OrderBy(field=field, direction=direction), field_type
    )
    parts = (collection, field, field_type) if typed_name else (collection, field)
    return sa.Index(
        object_name("sort" if per_entity else "sortall", *parts, direction),
        records.c.workspace_id,
        *([records.c.entity] if per_entity else []),
        value,
        records.c.seq,
        records.c.id,
        postgresql_where=sa.and_(
            SORTED_LIST,  # first: proving a predicate stops at its first clause a list does not state
            records.c.collection == inline(collection),
            records.c.processing == inline("ready"),
            records.c.retracted_at.is_(None),
        ),
        _table=records,
    )


def sort_indexes(catalog: Catalog) -> list[sa.Index]:
    """Every structured-sort index the catalog's sortable fields need."""
    targets = sort_index_targets(catalog)
    kinds: dict[tuple[str, str], int] = {}
    for collection, field, _ in targets:
        kinds[(collection, field)] = kinds.get((collection, field), 0) + 1
    return [
        sort_index(collection, field, field_type, direction, per_entity, kinds[(collection, field)] > 1)
        for collection, field, field_type in targets
        for per_entity in (True, False)
        for direction in SORT_DIRECTIONS
    ]


def _statistics(conn: Connection, name: str, expression: sa.ColumnElement[Any]) -> tuple[str, bool]:
    """Create expression statistics `name` on `records` unless they exist: (name, created)."""
    exists = (
        sa.select(sa.func.count())
        .select_from(sa.table("pg_statistic_ext"))
        .where(sa.column("stxname") == name)
    )
    if conn.execute(exists).scalar_one():
        return name, False
    kwargs = {"render_postcompile": True, "literal_binds": True, "include_table": False}
    rendered = expression.compile(dialect=conn.dialect, compile_kwargs=kwargs)
    quoted = conn.dialect.identifier_preparer.quote(name)
    ddl = sa.DDL(f"CREATE STATISTICS {quoted} ON (({rendered})) FROM records")  # type: ignore[no-untyped-call]
    conn.execute(ddl)
    return name, True


def end_statistics(conn: Connection, field: str) -> tuple[str, bool]:
    """Create the expression statistics of one end field unless they exist: (name, created)."""
    end = sa.column("fields", records.c.fields.type).op("->>", return_type=sa.Text)(inline(field))
    return _statistics(conn, object_name("end", field), end)


def value_statistics_targets(catalog: Catalog) -> list[tuple[str, str]]:
    """Every (field, type) with a scalar typed value that a loaded collection version declares
    filterable or sortable, sorted and unique by typed value."""
    return sorted(
        {
            (name, SAME_SORT_VALUE.get(decl.type, decl.type))
            for versions in catalog.collections.values()
            for collection in versions
            for name, decl in collection.fields.items()
            if (decl.filterable or decl.sortable) and decl.type != "string_array"
        }
    )


def value_statistics(conn: Connection, field: str, field_type: str) -> tuple[str, bool]:
    """Create the statistics of one field's typed value (module docstring) unless they exist."""
    return _statistics(conn, object_name("value", field, field_type), typed_field(field, field_type))


def ensure_field_indexes(conn: Connection, catalog: Catalog) -> list[str]:
    """Create the graph and sort indexes and statistics the catalog needs (module docstring); their names."""
    conn.execute(sa.select(sa.func.pg_advisory_xact_lock(LOCK_KEY)))
    targets = graph_index_targets(catalog)
    names = []
    node_indexes = [node_index(nodes) for nodes in graph_node_collections(catalog)]
    walk_indexes = [walk_index(edges, near, far) for edges, near, far in targets]
    for index in walk_indexes + node_indexes + sort_indexes(catalog):
        conn.execute(CreateIndex(index, if_not_exists=True))
        names.append(str(index.name))
    statistics = [end_statistics(conn, field) for field in sorted({near for _, near, _ in targets})]
    statistics += [value_statistics(conn, field, kind) for field, kind in value_statistics_targets(catalog)]
    if any(created for _, created in statistics):
        conn.execute(sa.text("ANALYZE records"))
    return names + [name for name, _ in statistics]
