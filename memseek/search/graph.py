"""Graph reads over link records: bounded walks, orphan reports and proximity distances (IO).

A link is a record of a graph's edges collection. Its subject, object and predicate are the
materialised declared fields (`records.fields`) the view's `graph` block names. A link is *live*
when it is fully processed, current, active and not retracted; an automatic link (one written
from a node record, `link_node_id` set) is live only while that exact node record is current and
not retracted, so an outdated node revision can never keep a relationship alive.

Links are read through the `graph_records` view (migration 0007): the workspace's records,
filtered by the transaction's workspace setting exactly like the row-level security policy, but
with the view owner's rights. Under the policy, `fields ->> 'end' = node` is not leakproof, so
PostgreSQL may not use it as an index condition and every step read all of a workspace's links.

A walk is one statement with one CTE per level (depth <= 16). Paths are ordered by depth, then
by their node names in the "C" collation (code point order, the same on every deployment
whatever its default collation), then by their link ids; only the first `limit + 1` are wanted,
so each level keeps only the paths that can still be among them (`_next_level`) and every level
after the one that fills the room costs nothing. Node names are matched in the database's own
collation so the expression indexes stay usable.

JSON keys, collection names and the liveness constants go into the SQL text as inline literals
(catalog-validated identifiers only), so the partial expression indexes of `memseek.indexes`
match under generic plans too.
"""

from __future__ import annotations

from collections.abc import Iterable
from collections.abc import Iterator
from collections.abc import Mapping
from collections.abc import Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from functools import lru_cache
from typing import Any
from typing import Literal
from uuid import UUID

import sqlalchemy as sa
from sqlalchemy.dialects.postgresql import ARRAY
from sqlalchemy.dialects.postgresql import UUID as PG_UUID
from sqlalchemy.dialects.postgresql import array
from sqlalchemy.engine import Connection
from sqlalchemy.engine import Engine
from sqlalchemy.sql.elements import BindParameter
from sqlalchemy.sql.elements import ColumnElement
from sqlalchemy.sql.selectable import CTE
from sqlalchemy.sql.selectable import NamedFromClause
from sqlalchemy.sql.selectable import Select
from sqlalchemy.sql.selectable import Subquery

from memseek import citus
from memseek.catalog.models import GraphBlock
from memseek.db import run_statement
from memseek.db import workspace_transaction
from memseek.errors import Detail
from memseek.errors import Loc
from memseek.errors import RequestInvalid
from memseek.schema import field_text
from memseek.schema import inline
from memseek.schema import records

Direction = Literal["out", "in", "both"]
DIRECTIONS: tuple[Direction, ...] = ("out", "in", "both")
MAX_DEPTH = 16
MAX_PATHS = 500
MAX_SEED_CHARS = 128
NODE_COLLATION = "C"
GRAPH_COLUMNS = (
    "workspace_id", "id", "collection", "fields", "processing", "is_current", "status", "retracted_at",
    "link_node_id",
)  # fmt: skip
WALK_TEMPLATES = 256
Workspace = UUID | BindParameter[UUID]
Ends = list[tuple[str, str]]
Predicates = BindParameter[Sequence[str]] | None
graph_records = sa.table("graph_records", *(sa.column(name, records.c[name].type) for name in GRAPH_COLUMNS))
"""The records graph reads look links up in (module docstring; created by migration 0007)."""


@contextmanager
def graph_transaction(engine: Engine, workspace_id: UUID) -> Iterator[Connection]:
    """The workspace transaction graph reads run in: on Citus with the login role's rights
    (`citus.OWNER_RIGHTS` says why), elsewhere exactly `workspace_transaction`."""
    with workspace_transaction(engine, workspace_id, citus.graph_settings(engine)) as conn:
        yield conn


def live_in(table: NamedFromClause, collection: str) -> ColumnElement[bool]:
    """A ready, current, active, non-retracted record of `collection`: what every graph read
    requires of a link or a node, and the predicate of the partial indexes that serve them."""
    return sa.and_(
        table.c.collection == inline(collection),
        table.c.processing == inline("ready"),
        table.c.is_current,
        table.c.status == inline("active"),
        table.c.retracted_at.is_(None),
    )


def live_link(
    link: NamedFromClause, workspace_id: Workspace, graph: GraphBlock, node_workspace: Workspace | None = None
) -> ColumnElement[bool]:
    """Whether `link` (a `graph_records` alias) is a live link of `graph` (module docstring); the
    node record of an automatic link is looked up in `node_workspace` (default `workspace_id`:
    one value, a parameter of its own where the statement gives it one)."""
    node = records.alias("link_node")
    # A scalar subquery, not EXISTS: the planner may turn EXISTS into a hashed subplan that reads
    # every record of the workspace; this stays a primary-key lookup, run only for automatic links.
    node_current = (
        sa.select(sa.and_(node.c.is_current, node.c.retracted_at.is_(None)))
        .where(node.c.workspace_id == _or(node_workspace, workspace_id), node.c.id == link.c.link_node_id)
        .scalar_subquery()
    )
    return sa.and_(
        link.c.workspace_id == workspace_id,
        live_in(link, graph.edges),
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


@lru_cache(maxsize=WALK_TEMPLATES)
def walk_statement(
    graph: GraphBlock, direction: Direction, depth: int, filtered: bool, label: str
) -> Select[Any]:
    """The walk as one statement: up to `:wanted` (= limit + 1) rows of (nodes, edge_ids, depth).

    Built once per shape and reused (building it costs more than running it); the request's
    values are the named parameters `workspace_id`, `seed`, `wanted` and, when `filtered`,
    `predicates` (`walk_values`). The statement text stays the same for one shape, so the driver
    prepares it after a few runs and PostgreSQL can skip planning it."""
    workspace_id = sa.bindparam("workspace_id", type_=PG_UUID(as_uuid=True))
    predicates = sa.bindparam("predicates", type_=ARRAY(sa.Text)) if filtered else None
    ends = {"out": [(graph.subject, graph.object)], "in": [(graph.object, graph.subject)]}
    pairs = ends.get(direction, ends["out"] + ends["in"])
    level = _seed_level().cte("level_0")
    found = []
    for distance in range(1, depth + 1):
        level = _next_level(level, workspace_id, graph, pairs, predicates).cte(f"level_{distance}")
        found.append(
            sa.select(level.c.nodes, level.c.edge_ids, sa.literal_column(str(distance)).label("depth"))
        )
    walked = sa.union_all(*found).subquery("walked")
    return (
        sa.select(walked.c.nodes, walked.c.edge_ids, walked.c.depth)
        .order_by(walked.c.depth, _by_names(walked.c.nodes), walked.c.edge_ids)
        .limit(sa.bindparam("wanted", type_=sa.Integer))
        .prefix_with(f"/* memseek {label} */")
    )


def walk_values(workspace_id: UUID, spec: WalkSpec) -> dict[str, Any]:
    """The named parameters of `walk_statement` for one walk."""
    values = {"workspace_id": workspace_id, "seed": spec.seed, "wanted": spec.limit + 1}
    return values | ({"predicates": list(spec.predicates)} if spec.predicates else {})


def _by_names(nodes: ColumnElement[Any]) -> ColumnElement[Any]:
    """A path's node names in code point order (`text[]` sorts element-wise)."""
    return sa.type_coerce(nodes, sa.Text).collate(NODE_COLLATION)


def _seed_level() -> Select[*tuple[Any, ...]]:
    """The seed as a path of no links; `room` is how many paths the walk may still use."""
    node = sa.bindparam("seed", type_=sa.Text)
    no_links = sa.cast(sa.literal([], ARRAY(PG_UUID(as_uuid=True))), ARRAY(PG_UUID(as_uuid=True)))
    room = sa.bindparam("wanted", type_=sa.Integer)
    return sa.select(
        node.label("node"), array([node]).label("nodes"), no_links.label("edge_ids"), room.label("room")
    )


def _next_level(
    parent: CTE, workspace_id: Workspace, graph: GraphBlock, pairs: Ends, predicates: Predicates
) -> Select[Any]:
    """The paths one link longer than `parent`'s that can still be among the walk's first rows.

    A path sorts by its parent's node names before its own last node, so the parents are read in
    that order and the level stops after the parent whose paths fill the room left; WITH TIES
    keeps every parent with the same node names (their paths interleave by link id). Each parent
    offers at most `room` paths, its first in the walk order (`_step`), however many links a hub
    has. The room left for the next level is the room minus the paths kept here."""
    parents = sa.select(parent).order_by(_by_names(parent.c.nodes)).subquery("parent")
    step = _step(parents, workspace_id, graph, pairs, predicates).lateral("step")
    nodes = parents.c.nodes.op("||", return_type=parents.c.nodes.type)(step.c.next)
    edge_ids = parents.c.edge_ids.op("||", return_type=parents.c.edge_ids.type)(step.c.edge_id)
    grown = (
        sa.select(step.c.next.label("node"), nodes.label("nodes"), edge_ids.label("edge_ids"), parents.c.room)
        .select_from(parents.join(step, sa.true()))
        .order_by(_by_names(parents.c.nodes))
        .fetch(sa.select(sa.func.max(parent.c.room)).scalar_subquery(), with_ties=True)
        .subquery("grown")
    )
    room = sa.func.greatest(grown.c.room - sa.func.count().over(), 0)
    return sa.select(grown.c.node, grown.c.nodes, grown.c.edge_ids, room.label("room"))


def _step(
    parents: Subquery, workspace_id: Workspace, graph: GraphBlock, pairs: Ends, predicates: Predicates
) -> Select[Any]:
    """A parent's first `room` live links onward along `pairs` (near end, far end), by far end, then id."""
    branches = [_branch(parents, workspace_id, graph, predicates, near, far) for near, far in pairs]
    if len(branches) == 1:
        return branches[0]
    # Two ordered index scans merged, not one scan under an OR.
    links = sa.union_all(*branches).subquery("links")
    return (
        sa.select(links.c.next, links.c.edge_id)
        .order_by(links.c.next.collate(NODE_COLLATION), links.c.edge_id)
        .limit(parents.c.room)
    )


def _branch(
    parents: Subquery, workspace_id: Workspace, graph: GraphBlock, predicates: Predicates, near: str, far: str
) -> Select[Any]:
    """The first `room` live links from a parent's last node `near` to a node not yet on its path.

    The order is that of the `memseek.indexes` walk index, so a hub's links stop being read there."""
    link = graph_records.alias("link")
    onward = field_text(link, far)
    query = sa.select(onward.label("next"), link.c.id.label("edge_id")).where(
        live_link(link, workspace_id, graph),
        field_text(link, near) == parents.c.node,
        sa.not_(onward == sa.any_(parents.c.nodes)),
    )
    if predicates is not None:
        query = query.where(field_text(link, graph.predicate) == sa.any_(predicates))
    return query.order_by(onward.collate(NODE_COLLATION), link.c.id).limit(parents.c.room).correlate(parents)


def _or(given: Workspace | None, default: Workspace) -> Workspace:
    return default if given is None else given


def walk_paths(
    conn: Connection, workspace_id: UUID, graph: GraphBlock, spec: WalkSpec, label: str
) -> WalkResult:
    """Run one walk (checked beforehand with `check_walk`)."""
    statement = walk_statement(graph, spec.direction, spec.depth, bool(spec.predicates), label)
    rows = run_statement(conn, statement, walk_values(workspace_id, spec))
    paths = tuple(Path(tuple(row["nodes"]), tuple(row["edge_ids"])) for row in rows[: spec.limit])
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
    rows = run_statement(conn, citations_statement(graph, label), citation_values(workspace_id, ids))
    found = {row["id"]: _citation(row) for row in rows}
    return [found[i] for i in ids if i in found]


@lru_cache(maxsize=WALK_TEMPLATES)
def citations_statement(graph: GraphBlock, label: str) -> Select[Any]:
    """The link records `:ids` of workspace `:workspace_id` with their normalised ends (any
    order; `link_citations` orders them). Built once per graph and label, like a walk."""
    link = records.alias("link")
    return (
        sa.select(
            link.c.id,
            link.c.text,
            field_text(link, graph.subject).label("subject"),
            field_text(link, graph.object).label("object"),
            field_text(link, graph.predicate).label("predicate"),
            link.c.content,
        )
        .where(
            link.c.workspace_id == sa.bindparam("workspace_id", type_=PG_UUID(as_uuid=True)),
            link.c.id == sa.any_(sa.bindparam("ids", type_=ARRAY(PG_UUID(as_uuid=True)))),
        )
        .prefix_with(f"/* memseek {label} */")
    )


def citation_values(workspace_id: UUID, ids: Sequence[UUID]) -> dict[str, Any]:
    """The named parameters of `citations_statement` for these links."""
    return {"workspace_id": workspace_id, "ids": list(ids)}


def _citation(row: Mapping[str, Any]) -> dict[str, Any]:
    keys = ("text", "subject", "object", "predicate", "content")
    return {"id": str(row["id"]), **{key: row[key] for key in keys}}


# --- orphan reports ------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class OrphanReport:
    """Unlinked nodes ordered by entity then key, and whether more existed beyond `limit`."""

    orphans: tuple[dict[str, Any], ...]
    truncated: bool


@lru_cache(maxsize=WALK_TEMPLATES)
def orphans_statement(graph: GraphBlock, label: str) -> Select[Any]:
    """Current, active, ready, non-retracted nodes with no live link at either end: up to
    `:wanted` of them (`orphan_values`). Built once per graph and label, like a walk; the
    workspace is a parameter of its own at each of its five uses (`ORPHAN_WORKSPACES`)."""
    assert graph.nodes is not None, "orphan reports need graph.nodes (checked when the catalog loads)"
    node = records.alias("node")
    return (
        sa.select(node.c.id, node.c.entity, node.c.key, node.c.text, node.c.content)
        .where(
            node.c.workspace_id == _workspace("workspace_id"),
            live_in(node, graph.nodes),
            node.c.key.is_not(None),
            ~_linked(node, graph, "subject"),
            ~_linked(node, graph, "object"),
        )
        .order_by(node.c.entity.collate(NODE_COLLATION), node.c.key.collate(NODE_COLLATION), node.c.id)
        .limit(sa.bindparam("wanted", type_=sa.Integer))
        .prefix_with(f"/* memseek {label} */")
    )


ORPHAN_WORKSPACES = (
    "workspace_id", "workspace_id_subject", "workspace_id_subject_node", "workspace_id_object",
    "workspace_id_object_node",
)  # fmt: skip
"""The names `orphans_statement` gives the workspace at each of its uses."""


def orphan_values(workspace_id: UUID, limit: int) -> dict[str, Any]:
    """The named parameters of `orphans_statement` for one report."""
    return dict.fromkeys(ORPHAN_WORKSPACES, workspace_id) | {"wanted": limit + 1}


def _workspace(name: str) -> BindParameter[UUID]:
    return sa.bindparam(name, type_=PG_UUID(as_uuid=True))


def _linked(
    node: NamedFromClause, graph: GraphBlock, end: Literal["subject", "object"]
) -> ColumnElement[bool]:
    field = graph.subject if end == "subject" else graph.object
    link = graph_records.alias(f"link_{field}")
    own = _workspace(f"workspace_id_{end}"), _workspace(f"workspace_id_{end}_node")
    return sa.exists().where(live_link(link, own[0], graph, own[1]), field_text(link, field) == node.c.key)


def find_orphans(
    conn: Connection, workspace_id: UUID, graph: GraphBlock, limit: int, label: str
) -> OrphanReport:
    """Run one orphan report (limit checked beforehand)."""
    rows = run_statement(conn, orphans_statement(graph, label), orphan_values(workspace_id, limit))
    keys = ("entity", "key", "text", "content")
    orphans = tuple({"id": str(row["id"]), **{key: row[key] for key in keys}} for row in rows[:limit])
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
