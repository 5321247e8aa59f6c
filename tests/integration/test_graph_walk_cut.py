"""A walk's per-level cut returns exactly what an unbounded walk would return first.

The walk statement keeps, per level, only the paths that can still be among the first
`limit + 1` (`memseek.search.graph._next_level`). These tests compare it, on a small random graph
with parallel links, cycles, self-loops, a hub and names whose code point order differs from
any locale's, against a plain Python walk that enumerates every path and sorts them the way the
spec orders them. Walks run as the service runs them: in a workspace transaction, under row-level
security.
"""

from __future__ import annotations

import random
from uuid import UUID

import pytest
from sqlalchemy.engine import Engine

from memseek.catalog.models import GraphBlock
from memseek.db import workspace_transaction
from memseek.runtime import Runtime
from memseek.search.graph import Direction
from memseek.search.graph import WalkSpec
from memseek.search.graph import walk_paths
from memseek.search.graph import walk_statement
from memseek.search.graph import walk_values
from tests.integration.view_support import Graph

NAMES = ("a", "B", "Z", "aa", "a-b", "a_b", "é", "z", "10", "9", "hub", "Hub")
PREDICATES = ("advises", "owns")
Link = tuple[UUID, str, str, str]  # id, subject, object, predicate
Found = tuple[tuple[tuple[tuple[str, ...], tuple[UUID, ...]], ...], bool]


def random_links(graph: Graph) -> list[Link]:
    """~60 links: random pairs, parallel links, self-loops and a hub linked both ways."""
    rng = random.Random(11)
    pairs = [(rng.choice(NAMES), rng.choice(NAMES)) for _ in range(36)]
    pairs += pairs[:6]  # parallel links: the same ends, other ids
    pairs += [("a", "a"), ("hub", "hub")]
    pairs += [("hub", name) for name in NAMES[:8]] + [(name, "hub") for name in NAMES[4:12]]
    links = []
    for subject, obj in pairs:
        predicate = rng.choice(PREDICATES)
        links.append((UUID(graph.link(subject, predicate, obj)), subject, obj, predicate))
    return links


def expected(links: list[Link], spec: WalkSpec) -> Found:
    """Every path up to `depth`, ordered by depth, node names (code points), link ids; cut at `limit`."""
    ends = {"out": [(1, 2)], "in": [(2, 1)], "both": [(1, 2), (2, 1)]}[spec.direction]
    level: list[tuple[tuple[str, ...], tuple[UUID, ...]]] = [((spec.seed,), ())]
    paths = []
    for _ in range(spec.depth):
        level = sorted(
            (nodes + (str(link[far]),), edges + (link[0],))
            for nodes, edges in level
            for link in links
            if not spec.predicates or link[3] in spec.predicates
            for near, far in ends
            if link[near] == nodes[-1] and link[far] not in nodes
        )
        paths += level
    return tuple(paths[: spec.limit]), len(paths) > spec.limit


def direction_ends(direction: Direction) -> list[str]:
    return {"out": ["out"], "in": ["in"], "both": ["out", "in"]}[direction]


def walked(engine: Engine, workspace_id: UUID, graph: GraphBlock, spec: WalkSpec) -> Found:
    with workspace_transaction(engine, workspace_id) as conn:
        result = walk_paths(conn, workspace_id, graph, spec, "test")
    return tuple((p.nodes, p.edge_ids) for p in result.paths), result.truncated


SPECS = [
    WalkSpec(seed=seed, direction=direction, depth=depth, limit=limit)
    for seed in ("a", "hub", "é")
    for direction in ("out", "in", "both")
    for depth, limit in ((1, 3), (2, 7), (3, 25), (4, 60), (4, 500), (6, 140))
]


def test_walks_return_what_an_unbounded_walk_returns_first(
    view_runtime: Runtime, graph: Graph, db: Engine
) -> None:
    links = random_links(graph)
    block = view_runtime.catalog.view("g_walk").graph
    assert block is not None
    for spec in SPECS + [WalkSpec(seed="hub", predicates=("owns",), direction="both", depth=3, limit=40)]:
        assert walked(db, graph.workspace_id, block, spec) == expected(links, spec), spec


@pytest.mark.parametrize("direction", ["out", "in", "both"])
def test_a_step_reads_links_through_the_walk_index_under_row_level_security(
    view_runtime: Runtime, graph: Graph, db: Engine, direction: Direction
) -> None:
    """The end condition is an index condition (under the policy it could not be: not leakproof)."""
    random_links(graph)
    block = view_runtime.catalog.view("g_walk").graph
    assert block is not None
    spec = WalkSpec(seed="hub", direction=direction, depth=2, limit=20)
    statement = walk_statement(block, direction, spec.depth, False, "test")
    compiled = statement.compile(db)
    state = compiled.construct_expanded_state(walk_values(graph.workspace_id, spec))
    with workspace_transaction(db, graph.workspace_id, {"enable_seqscan": "off"}) as conn:
        cursor = conn.connection.driver_connection.cursor()  # type: ignore[union-attr]
        cursor.execute("EXPLAIN " + state.statement, state.parameters)
        plan = "\n".join(row[0] for row in cursor.fetchall())
    scans = plan.count("Index Scan using records_walk_g_links_")
    ends = [line for line in plan.splitlines() if "Index Cond:" in line and "_node'::text) = " in line]
    assert scans == len(ends) == 2 * len(direction_ends(direction)), plan  # 2 levels, each end
    assert "Bitmap Heap Scan" not in plan


def test_start_up_creates_the_walk_and_node_indexes_and_end_statistics(
    view_runtime: Runtime, db: Engine
) -> None:
    with db.connect() as conn:
        indexes = conn.exec_driver_sql(
            "SELECT indexname FROM pg_indexes WHERE tablename = 'records'"
        ).scalars()
        statistics = conn.exec_driver_sql("SELECT stxname FROM pg_statistic_ext").scalars()
        walk = {"records_walk_g_links_from_node_to_node", "records_walk_g_links_to_node_from_node"}
        assert walk | {"records_nodes_g_parts"} <= set(indexes)
        assert {"records_end_from_node", "records_end_to_node"} <= set(statistics)
