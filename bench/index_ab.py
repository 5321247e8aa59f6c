"""`python -m bench.index_ab HOME`: the service's structured and recent statements with and without
the start-up sort indexes, interleaved probe by probe on one kept database.

HOME is a `MEMSEEK_HOME` a `python -m bench latency --keep` run left. The runtime is built as
`memseek serve` builds it (so the catalog's start-up indexes exist), the probes are the latency
suite's, and each statement runs as the service runs it (workspace transaction, planner
settings). "without" runs the same statement in a transaction that first drops every
`records_sort*` index (catalog-only, rolled back afterwards, so nothing is rebuilt). The order
of the two alternates per probe; times are around execute + fetch (no HTTP, no Python
compilation: templates are built before timing). With `--explain`, one probe of each mode is
printed with `EXPLAIN (ANALYZE, BUFFERS)` both ways. The embedded server is stopped afterwards
unless it was already running.
"""

from __future__ import annotations

import argparse
import time
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any
from uuid import UUID

import sqlalchemy as sa

from bench.corpus import LINKS
from bench.latency import MODES
from bench.latency import LatencyOptions
from bench.latency import make_probes
from bench.latency import service_request
from bench.metrics import percentiles
from bench.report import summary
from bench.service import kept_runtime
from bench.vectors import VectorCache
from memseek.db import scope_settings
from memseek.db import set_local
from memseek.runtime import Runtime
from memseek.search.compile import CompiledSearch
from memseek.search.compile import Explain
from memseek.search.execute import planner_settings
from memseek.search.execute import runner
from memseek.search.execute import with_fallbacks
from memseek.search.prepare import prepare
from memseek.search.request import parse_search

SORT_INDEXES = (
    "SELECT indexname FROM pg_indexes WHERE tablename = 'records' AND indexname LIKE 'records\\_sort%'"
)


def _statement(
    conn: sa.Connection,
    compiled: CompiledSearch,
    pgvector: tuple[int, ...],
    drop: Sequence[str],
    explain: bool,
) -> Any:
    for name in drop:
        conn.execute(sa.text(f'DROP INDEX "{name}"'))
    planner = planner_settings(pgvector, compiled)
    if explain:
        set_local(conn, scope_settings(compiled.params["workspace_id"], planner))
        return "\n".join(conn.execute(Explain(compiled.statement, analyze=True), compiled.params).scalars())
    set_local(conn, scope_settings(compiled.params["workspace_id"]))
    started = time.perf_counter()  # each statement with its planner settings, as a combined search's share
    result = with_fallbacks(compiled, runner(conn, compiled, planner))
    return (time.perf_counter() - started) * 1000, [hit.id for hit in result.hits]


def run(home: Path, modes: Sequence[str], queries: int, warmup: int, explain: bool) -> None:
    with kept_runtime(home) as (runtime, ws):
        compare(runtime, ws, modes, queries, warmup, explain)


def compare(
    runtime: Runtime, ws: UUID, modes: Sequence[str], queries: int, warmup: int, explain: bool
) -> None:
    """Time every probe's statement both ways (module docstring) and print the percentiles."""
    engine = runtime.engine
    with engine.connect() as conn:
        entities = list(
            conn.execute(
                sa.text(
                    "SELECT entity FROM records WHERE workspace_id = :ws AND collection <> :l ORDER BY seq"
                ),
                {"ws": ws, "l": LINKS},
            ).scalars()
        )
        drop = list(conn.execute(sa.text(SORT_INDEXES)).scalars())
    print(f"{len(entities)} records, sort indexes: {', '.join(drop)}", flush=True)
    opts = LatencyOptions(records=len(entities), queries=queries, warmup=warmup)
    probes = make_probes(entities, opts, VectorCache())
    for mode in modes:
        bodies = [service_request(mode, p, opts.k)[1] for p in probes.per_mode[mode]]
        compiled = [prepare(runtime, ws, parse_search(body)).compiled[0] for body in bodies]
        samples: dict[str, list[float]] = {"with": [], "without": []}
        differ = 0
        for index, search in enumerate(compiled):
            order = [("with", []), ("without", drop)]
            outcome = {}
            for label, dropped in order if index % 2 else order[::-1]:
                with engine.connect() as conn, conn.begin() as transaction:
                    outcome[label] = _statement(conn, search, runtime.search.pgvector, dropped, False)
                    transaction.rollback()
            differ += outcome["with"][1] != outcome["without"][1]
            if index >= warmup:
                for label in samples:
                    samples[label].append(outcome[label][0])
        stats = {label: percentiles(values) for label, values in samples.items()}
        print(f"\n{mode}: {len(samples['with'])} probes, results differ in {differ}")
        for label, s in stats.items():
            print(f"  {label:8s} p50 {s['p50']:8.2f} ms  p95 {s['p95']:8.2f} ms  p99 {s['p99']:8.2f} ms")
        if explain:
            sizes = Counter(entities)
            big = max(range(len(bodies)), key=lambda i: sizes[bodies[i]["scope"]["entities"][0]])
            for label, dropped in (("with", []), ("without", drop)):
                with engine.connect() as conn, conn.begin() as transaction:
                    plan = _statement(conn, compiled[big], runtime.search.pgvector, dropped, True)
                    transaction.rollback()
                print(f"\n-- {mode}, largest probed entity, {label} the sort indexes\n{plan}")


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.index_ab", description=summary(__doc__))
    parser.add_argument("home", type=Path, help="a MEMSEEK_HOME kept by `python -m bench latency --keep`")
    parser.add_argument("--modes", default="structured,recent")
    parser.add_argument("--queries", type=int, default=100)
    parser.add_argument("--warmup", type=int, default=10)
    parser.add_argument("--explain", action="store_true")
    args = parser.parse_args()
    modes = [m for m in args.modes.split(",") if m]
    assert set(modes) <= set(MODES), f"modes are {MODES}"
    run(args.home, modes, args.queries, args.warmup, args.explain)


if __name__ == "__main__":
    main()
