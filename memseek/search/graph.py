"""Graph reads over link records: bounded walks, orphan reports and proximity distances (IO).

A link is a record of a graph's edges collection. Its subject, object and predicate are the
materialised declared fields (`records.fields`) the view's `graph` block names. A link is *live*
when it is fully processed, current, active and not retracted; an automatic link (one written
from a node record, `link_node_id` set) is live only while that exact node record is current and
not retracted, so an outdated node revision can never keep a relationship alive.

A walk is one statement: a recursive CTE that extends every path by one live link per level
(never revisiting a node already on that path) and stops expanding once the paths found so far
exceed `limit` — paths are ordered by depth first, so deeper paths could never be returned.
Paths are ordered by depth, then by their node names in the "C" collation (code point order,
the same on every deployment whatever its default collation), then by their link ids. Node
names are matched in the database's own collation so the expression indexes stay usable.

JSON keys and collection names go into the SQL text as inline literals (catalog-validated
identifiers only), so the expression indexes of `memseek.indexes` match under generic plans too.
"""

from __future__ import annotations

from collections.abc import Iterable
from collections.abc import Mapping
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any
from typing import Literal
from uuid import UUID

import sqlalchemy as sa
from sqlalchemy.dialects.postgresql import ARRAY
from sqlalchemy.dialects.postgresql import UUID as PG_UUID
from sqlalchemy.dialects.postgresql import array
from sqlalchemy.engine import Connection
from sqlalchemy.sql.elements import ColumnElement
from sqlalchemy.sql.selectable import CTE
from sqlalchemy.sql.selectable import Alias
from sqlalchemy.sql.selectable import Select

from memseek.catalog.models import GraphBlock
from memseek.errors import Detail
from memseek.errors import Loc
from memseek.errors import RequestInvalid
from memseek.schema import records

Direction = Literal["out", "in", "both"]
DIRECTIONS: tuple[Direction, ...] = ("out", "in", "both")
MAX_DEPTH = 16
MAX_PATHS = 500
MAX_SEED_CHARS = 128
NODE_COLLATION = "C"


def inline(value: str) -> ColumnElement[str]:
    """A catalog identifier rendered into the statement text (see the module docstring)."""
    return sa.bindparam(None, value, type_=sa.Text, literal_execute=True)


def field_text(table: Alias, name: str) -> ColumnElement[str]:
    """`table.fields ->> 'name'`: the materialised value of declared field `name` as text."""
    return table.c.fields.op("->>", return_type=sa.Text)(inline(name))


def live_link(link: Alias, workspace_id: UUID, graph: GraphBlock) -> ColumnElement[bool]:
    """Whether `link` is a live link of `graph` in the workspace (module docstring)."""
    node = records.alias("link_node")
    # A scalar subquery, not EXISTS: the planner may turn EXISTS into a hashed subplan that reads
    # every record of the workspace; this stays a primary-key lookup, run only for automatic links.
    node_current = (
        sa.select(sa.and_(node.c.is_current, node.c.retracted_at.is_(None)))
        .where(node.c.workspace_id == workspace_id, node.c.id == link.c.link_node_id)
        .scalar_subquery()
    )
    return sa.and_(
        link.c.workspace_id == workspace_id,
        link.c.collection == inline(graph.edges),
        link.c.processing == "ready",
        link.c.is_current,
        link.c.status == "active",
        link.c.retracted_at.is_(None),
        sa.or_(link.c.link_node_id.is_(None), sa.func.coalesce(node_current, False)),
    )


# --- walks ---------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class WalkSpec:
    """One bounded walk: where it starts, which links it follows, how far and how wide."""

    seed: str
    predicates: tuple[str, ...] = ()
    direction: Direction = "out"
    depth: int = 1
    limit: int = 20


@dataclass(frozen=True, slots=True)
class Path:
    """A walked path: `nodes` has one more entry than `edge_ids` (link record ids, in order)."""

    nodes: tuple[str, ...]
    edge_ids: tuple[UUID, ...]

    @property
    def depth(self) -> int:
        return len(self.edge_ids)


@dataclass(frozen=True, slots=True)
class WalkResult:
    """At most `limit` paths in the walk order, and whether at least one more existed."""

    paths: tuple[Path, ...]
    truncated: bool


def check_walk(spec: WalkSpec, max_depth: int, max_paths: int, loc: Loc = ()) -> None:
    """422 when a walk is outside the spec's ranges or the deployment's ceilings (named)."""
    _raise_problems(
        _range_problem(spec.depth, 1, MAX_DEPTH, max_depth, "MAX_GRAPH_DEPTH", loc + ("depth",)),
        _range_problem(spec.limit, 1, MAX_PATHS, max_paths, "MAX_GRAPH_PATHS", loc + ("limit",)),
    )


def check_limit(limit: int, max_paths: int, loc: Loc = ()) -> None:
    """422 when an orphan report's limit is outside 1-500 or the deployment's MAX_GRAPH_PATHS."""
    _raise_problems(_range_problem(limit, 1, MAX_PATHS, max_paths, "MAX_GRAPH_PATHS", loc + ("limit",)))


def _raise_problems(*problems: Detail | None) -> None:
    details = [p for p in problems if p is not None]
    if details:
        raise RequestInvalid("the graph read is outside the allowed limits", details)


def _range_problem(value: int, low: int, high: int, ceiling: int, setting: str, loc: Loc) -> Detail | None:
    if not low <= value <= high:
        return Detail(loc, f"must be between {low} and {high}")
    if value > ceiling:
        return Detail(loc, f"must be at most {ceiling}, this deployment's {setting}")
    return None


def walk_statement(workspace_id: UUID, graph: GraphBlock, spec: WalkSpec, label: str) -> Select[Any]:
    """The walk as one statement: up to `limit + 1` rows of (nodes, edge_ids, depth)."""
    walk = _anchor(spec.seed).cte("walk", recursive=True)
    step = _step(walk, workspace_id, graph, spec).lateral("step")
    grow = (
        sa.select(
            step.c.next,
            walk.c.nodes.op("||", return_type=walk.c.nodes.type)(step.c.next),
            walk.c.edge_ids.op("||", return_type=walk.c.edge_ids.type)(step.c.edge_id),
            walk.c.depth + 1,
            walk.c.reached + sa.func.count().over(),
        )
        .select_from(walk.join(step, sa.true()))
        .where(walk.c.depth < spec.depth, walk.c.reached <= spec.limit)
        .where(sa.not_(step.c.next == sa.any_(walk.c.nodes)))
    )
    walk = walk.union_all(grow)
    by_names = sa.type_coerce(walk.c.nodes, sa.Text).collate(NODE_COLLATION)  # text[] sorts element-wise
    return (
        sa.select(walk.c.nodes, walk.c.edge_ids, walk.c.depth)
        .where(walk.c.depth > 0)
        .order_by(walk.c.depth, by_names, walk.c.edge_ids)
        .limit(spec.limit + 1)
        .prefix_with(f"/* memseek {label} */")
    )


def _anchor(seed: str) -> Select[Any]:
    node = sa.cast(sa.literal(seed, sa.Text), sa.Text)
    return sa.select(
        node.label("node"),
        array([node]).label("nodes"),
        sa.cast(sa.literal([], ARRAY(PG_UUID(as_uuid=True))), ARRAY(PG_UUID(as_uuid=True))).label("edge_ids"),
        sa.literal(0, sa.Integer).label("depth"),
        sa.cast(sa.literal(0, sa.Integer), sa.BigInteger).label("reached"),
    )


def _step(walk: CTE, workspace_id: UUID, graph: GraphBlock, spec: WalkSpec) -> Any:
    """Every live link leaving the path's last node in the walk's direction(s)."""
    ends = {"out": [(graph.subject, graph.object)], "in": [(graph.object, graph.subject)]}
    pairs = ends.get(spec.direction, ends["out"] + ends["in"])
    branches = [_branch(walk, workspace_id, graph, spec.predicates, near, far) for near, far in pairs]
    return branches[0] if len(branches) == 1 else sa.union_all(*branches)


def _branch(
    walk: CTE, workspace_id: UUID, graph: GraphBlock, predicates: tuple[str, ...], near: str, far: str
) -> Select[Any]:
    link = records.alias("link")
    query = sa.select(field_text(link, far).label("next"), link.c.id.label("edge_id")).where(
        live_link(link, workspace_id, graph), field_text(link, near) == walk.c.node
    )
    if predicates:
        query = query.where(
            field_text(link, graph.predicate) == sa.any_(sa.literal(list(predicates), ARRAY(sa.Text)))
        )
    return query


def walk_paths(
    conn: Connection, workspace_id: UUID, graph: GraphBlock, spec: WalkSpec, label: str
) -> WalkResult:
    """Run one walk (checked beforehand with `check_walk`)."""
    rows = conn.execute(walk_statement(workspace_id, graph, spec, label)).all()
    paths = tuple(Path(tuple(row.nodes), tuple(row.edge_ids)) for row in rows[: spec.limit])
    return WalkResult(paths, truncated=len(rows) > spec.limit)


def first_use_order(paths: Iterable[Path]) -> list[UUID]:
    """Each link id the paths use, once, in order of first use."""
    return list(dict.fromkeys(edge for path in paths for edge in path.edge_ids))


def reached_nodes(paths: Iterable[Path]) -> list[str]:
    """The sorted set of every node on the paths (code point order, like the walk)."""
    return sorted({node for path in paths for node in path.nodes})


# --- links as citations --------------------------------------------------------------------


def link_citations(
    conn: Connection, workspace_id: UUID, graph: GraphBlock, ids: Sequence[UUID], label: str
) -> list[dict[str, Any]]:
    """The link records `ids` as citations, in the order given: normalised ends plus content."""
    if not ids:
        return []
    link = records.alias("link")
    query = (
        sa.select(
            link.c.id,
            link.c.text,
            field_text(link, graph.subject).label("subject"),
            field_text(link, graph.object).label("object"),
            field_text(link, graph.predicate).label("predicate"),
            link.c.content,
        )
        .where(
            link.c.workspace_id == workspace_id,
            link.c.id == sa.any_(sa.literal(list(ids), ARRAY(PG_UUID(as_uuid=True)))),
        )
        .prefix_with(f"/* memseek {label} */")
    )
    found = {row.id: _citation(row._mapping) for row in conn.execute(query)}
    return [found[i] for i in ids if i in found]


def _citation(row: Mapping[str, Any]) -> dict[str, Any]:
    keys = ("text", "subject", "object", "predicate", "content")
    return {"id": str(row["id"]), **{key: row[key] for key in keys}}


# --- orphan reports ------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class OrphanReport:
    """Unlinked nodes ordered by entity then key, and whether more existed beyond `limit`."""

    orphans: tuple[dict[str, Any], ...]
    truncated: bool


def orphans_statement(workspace_id: UUID, graph: GraphBlock, limit: int, label: str) -> Select[Any]:
    """Current, active, ready, non-retracted nodes with no live link at either end."""
    assert graph.nodes is not None, "orphan reports need graph.nodes (checked when the catalog loads)"
    node = records.alias("node")
    return (
        sa.select(node.c.id, node.c.entity, node.c.key, node.c.text, node.c.content)
        .where(
            node.c.workspace_id == workspace_id,
            node.c.collection == inline(graph.nodes),
            node.c.is_current,
            node.c.key.is_not(None),
            node.c.status == "active",
            node.c.processing == "ready",
            node.c.retracted_at.is_(None),
            ~_linked(node, workspace_id, graph, graph.subject),
            ~_linked(node, workspace_id, graph, graph.object),
        )
        .order_by(node.c.entity.collate(NODE_COLLATION), node.c.key.collate(NODE_COLLATION), node.c.id)
        .limit(limit + 1)
        .prefix_with(f"/* memseek {label} */")
    )


def _linked(node: Alias, workspace_id: UUID, graph: GraphBlock, end: str) -> ColumnElement[bool]:
    link = records.alias(f"link_{end}")
    return sa.exists().where(live_link(link, workspace_id, graph), field_text(link, end) == node.c.key)


def find_orphans(
    conn: Connection, workspace_id: UUID, graph: GraphBlock, limit: int, label: str
) -> OrphanReport:
    """Run one orphan report (limit checked beforehand)."""
    rows = conn.execute(orphans_statement(workspace_id, graph, limit, label)).all()
    orphans = tuple(
        {"id": str(r.id), "entity": r.entity, "key": r.key, "text": r.text, "content": r.content}
        for r in rows[:limit]
    )
    return OrphanReport(orphans, truncated=len(rows) > limit)


# --- proximity (graph_boost) ---------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Proximity:
    """Shortest walked distance per reached node (the anchor at 0) and the links the walk used."""

    distances: Mapping[str, int]
    edge_count: int


def proximity(
    conn: Connection, workspace_id: UUID, graph: GraphBlock, anchor: str, depth: int, limit: int, label: str
) -> Proximity:
    """Walk both directions from `anchor` (at most `limit` paths) and measure distances."""
    spec = WalkSpec(seed=anchor, direction="both", depth=depth, limit=limit)
    return measure(anchor, walk_paths(conn, workspace_id, graph, spec, label).paths)


def measure(anchor: str, paths: Sequence[Path]) -> Proximity:
    """Distances along `paths` (a node's position on a path is its distance along it)."""
    distances: dict[str, int] = {anchor: 0}
    for path in paths:
        for position, node in enumerate(path.nodes):
            distances[node] = min(position, distances.get(node, position))
    return Proximity(distances, edge_count=len(first_use_order(paths)))
