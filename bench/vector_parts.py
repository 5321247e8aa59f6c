"""`python -m bench.vector_parts HOME`: what each part of a vector search costs, from the bare
top-k statement up to the service's search stage, interleaved query by query on one kept database.

HOME is a `MEMSEEK_HOME` a `python -m bench vector --keep` run left (SciFact in collection
`documents`). Each part adds one thing to the one before (the order rotates per query, times are
around execute + fetch, in-process, no HTTP):

* bare top-k: `ORDER BY embedding <=> q LIMIT k`, `hnsw.ef_search` max(40, k);
* bare candidates: LIMIT the candidate count n (`min(1000, max(100, 10·k))`), with the
  `hnsw.ef_search` the service sets for n;
* + iterative scan: `hnsw.iterative_scan = relaxed_order`;
* + eligibility: the service's `WHERE` (workspace, ready, not retracted, collection, active,
  current, the query's model);
* service statement: the pool, the canonical re-check, signals, ranking and the top k, as the
  service runs it (scope and planner settings in the statement's round trip);
* service search stage: `run_search`'s `search` timing, the statement plus merging, cutting and
  the hits in Python;

and two variants of the service statement: `hnsw.ef_search` exactly n (no margin), and no
iterative scan. The embedded server is stopped afterwards unless it was already running.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from uuid import UUID

import numpy as np

from bench.datasets import load_scifact
from bench.engine import raw_connection
from bench.metrics import percentiles
from bench.peers import BARE_TOP_K
from bench.peers import bare_ef_search
from bench.peers import spec_candidates
from bench.report import summary
from bench.service import kept_runtime
from bench.service import libpq_url
from bench.vector_latency import COLLECTION
from bench.vectors import VectorCache
from bench.vectors import as_json_vector
from memseek.db import hold_for_request
from memseek.db import release_held
from memseek.models.local import MODEL_ID
from memseek.runtime import Runtime
from memseek.search import execute
from memseek.search.execute import ef_search
from memseek.search.prepare import prepare
from memseek.search.request import parse_search
from memseek.search.service import run_search

ELIGIBLE = (
    "SELECT id FROM records WHERE workspace_id = %(ws)s AND processing = 'ready' "
    "AND retracted_at IS NULL AND collection = %(collection)s AND status = 'active' AND is_current "
    "AND embedding IS NOT NULL AND embedding_model = %(model)s "
    "ORDER BY embedding <=> %(vec)s LIMIT %(n)s"
)
FIXED = {"collection": COLLECTION, "model": MODEL_ID}
SESSION = "SELECT set_config('hnsw.ef_search', %s, false), set_config('hnsw.iterative_scan', %s, false)"
Part = Callable[[np.ndarray], float]


@contextmanager
def planner_patched(extra: dict[str, str]) -> Iterator[None]:
    """The service's planner settings with `extra` over them, for one variant's statements."""
    original = execute.planner_settings
    execute.planner_settings = lambda pgvector, compiled: {**original(pgvector, compiled), **extra}
    try:
        yield
    finally:
        execute.planner_settings = original


class Parts:
    """Every part at one k, on one superuser connection and the service's runtime."""

    def __init__(self, runtime: Runtime, workspace: UUID, k: int) -> None:
        self.runtime, self.workspace, self.k, self.n = runtime, workspace, k, spec_candidates(k)
        self.conn = raw_connection(libpq_url(runtime.engine.url.render_as_string(hide_password=False)))

    def bare(self, sql: str, limit: int, ef: int, iterative: bool) -> Part:
        def part(vector: np.ndarray) -> float:
            settings = (str(ef), "relaxed_order" if iterative else "off")
            self.conn.execute(SESSION, settings)
            params = {"vec": vector, "k": limit, "n": limit, "ws": self.workspace, **FIXED}
            started = time.perf_counter()
            self.conn.execute(sql, params, prepare=True).fetchall()
            return (time.perf_counter() - started) * 1000

        return part

    def service(self, stage: bool, extra: dict[str, str] | None = None) -> Part:
        """The service's search stage, or (`stage` False) its statement alone."""

        def part(vector: np.ndarray) -> float:
            body = {"mode": "vector", "k": self.k, "scope": {"collections": [COLLECTION]}}
            spec = parse_search(body | {"vector": as_json_vector(vector), "embedding_model": MODEL_ID})
            with planner_patched(extra or {}), self._held():
                if stage:
                    return run_search(self.runtime, self.workspace, spec).timings.search
                return self._statement(spec)

        return part

    @contextmanager
    def _held(self) -> Iterator[None]:
        """A connection checked out (and pinged) before the clock starts, as a request's
        authentication leaves one for its search (`db.hold_for_request`)."""
        hold_for_request(self.runtime.engine.connect().execution_options(isolation_level="AUTOCOMMIT"))
        try:
            yield
        finally:
            release_held()

    def _statement(self, spec: Any) -> float:
        compiled = prepare(self.runtime, self.workspace, spec).compiled
        started = time.perf_counter()
        execute.run_searches(self.runtime.search, self.workspace, compiled, 1, 30_000)
        return (time.perf_counter() - started) * 1000

    def all(self) -> dict[str, Part]:
        ef = int(ef_search(self.n))
        return {
            "bare top-k": self.bare(BARE_TOP_K, self.k, bare_ef_search(self.k), False),
            "bare candidates": self.bare(BARE_TOP_K, self.n, ef, False),
            "+ iterative scan": self.bare(BARE_TOP_K, self.n, ef, True),
            "+ eligibility": self.bare(ELIGIBLE, self.n, ef, True),
            "service statement": self.service(False),
            "service search stage": self.service(True),
            "statement, ef_search = n": self.service(False, {"hnsw.ef_search": str(self.n)}),
            "statement, no iterative scan": self.service(False, {"hnsw.iterative_scan": "off"}),
        }


def measure(parts: dict[str, Part], vectors: np.ndarray, warmup: int) -> dict[str, dict[str, float]]:
    names = list(parts)
    samples: dict[str, list[float]] = {name: [] for name in names}
    for index, vector in enumerate(vectors):
        start = index % len(names)
        for name in names[start:] + names[:start]:
            ms = parts[name](vector)
            if index >= warmup:
                samples[name].append(ms)
    return {name: percentiles(values) for name, values in samples.items()}


def run(home: Path, ks: list[int], queries: int, warmup: int) -> None:
    with kept_runtime(home, touch_on_read=False) as (runtime, ws):
        texts = [q.text for q in load_scifact().queries[: warmup + queries]]
        vectors = VectorCache().vectors(texts)
        for k in ks:
            stats = measure(Parts(runtime, ws, k).all(), vectors, warmup)
            base = stats["bare top-k"]
            print(f"\nk = {k}, {spec_candidates(k)} candidates, {queries} queries (ms; × bare top-k)")
            for name, s in stats.items():
                ratio = f"{s['p50'] / base['p50']:.2f} / {s['p95'] / base['p95']:.2f}"
                print(f"  {name:30s} p50 {s['p50']:7.2f}  p95 {s['p95']:7.2f}   × {ratio}")


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.vector_parts", description=summary(__doc__))
    parser.add_argument("home", type=Path, help="a MEMSEEK_HOME kept by `python -m bench vector --keep`")
    parser.add_argument("--k", default="10,100")
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--warmup", type=int, default=20)
    args = parser.parse_args()
    run(args.home, [int(k) for k in args.k.split(",") if k], args.queries, args.warmup)


if __name__ == "__main__":
    main()
