"""`python -m bench.bm25_cost HOME`: what `[bm25]` adds to a hybrid search, interleaved query by
query on one kept database.

HOME is a `MEMSEEK_HOME` a `python -m bench latency --keep` run left. Each query runs as a hybrid
search twice, in-process (no HTTP), the order alternating per query: ranked by the spec's default
hybrid formula written out, and by the same formula plus `0.3 · N(bm25)`. A formula that reads
`bm25` also proposes its keyword candidates in BM25 order, so the difference is the signal's whole
cost: the workspace's statistics, the IDF-weighted postings and the score of every candidate.
Times are the search stage (`Server-Timing` `total − embed`); touch-on-read is off, so queries
cannot influence each other. The embedded server is stopped afterwards unless it was already
running.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from bench.corpus import MEMORIES
from bench.corpus import queries as make_queries
from bench.metrics import percentiles
from bench.report import summary
from bench.service import kept_runtime
from memseek.db import hold_for_request
from memseek.db import release_held
from memseek.runtime import Runtime
from memseek.search.request import parse_search
from memseek.search.service import search_response

DEFAULT_HYBRID: list[Any] = [
    "sum",
    [
        ["product", 1.0, ["normalize", ["max", [["similarity"], ["text_match"]]]]],
        ["product", 1.0, ["decay", ["age_hours", "last_accessed"], {"midpoint": 24, "exponent": 1}]],
    ],
]
"""The spec's default hybrid formula, `N(max(similarity, text_match)) + D24(age(last_accessed))`."""
WITH_BM25: list[Any] = ["sum", [*DEFAULT_HYBRID[1], ["product", 0.3, ["normalize", ["bm25"]]]]]
FORMULAS = {"hybrid": DEFAULT_HYBRID, "hybrid + bm25": WITH_BM25}


def search_ms(runtime: Runtime, workspace: Any, body: dict[str, Any]) -> float:
    """One search as a request runs it; its search stage in milliseconds."""
    hold_for_request(runtime.engine.connect())
    try:
        _, outcome = search_response(runtime, workspace, parse_search(body))
    finally:
        release_held()
    return outcome.timings.total - outcome.timings.embed


def run(home: Path, queries: int, warmup: int, seed: int) -> dict[str, Any]:
    samples: dict[str, list[float]] = {name: [] for name in FORMULAS}
    with kept_runtime(home, touch_on_read=False) as (runtime, workspace):
        for index, text in enumerate(make_queries(seed, warmup + queries)):
            names = list(FORMULAS) if index % 2 else list(reversed(FORMULAS))
            for name in names:
                body = {"q": text, "mode": "hybrid", "k": 20, "scope": {"collections": [MEMORIES]}}
                took = search_ms(runtime, workspace, body | {"rank": FORMULAS[name]})
                if index >= warmup:
                    samples[name].append(took)
    result = {name: percentiles(values) for name, values in samples.items()}
    base, added = result["hybrid"], result["hybrid + bm25"]
    return result | {"added_ms": {p: added[p] - base[p] for p in ("p50", "p95")}}


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.bm25_cost", description=summary(__doc__))
    parser.add_argument("home", type=Path, help="a MEMSEEK_HOME kept by `python -m bench latency --keep`")
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--warmup", type=int, default=20)
    parser.add_argument("--seed", type=int, default=31)
    args = parser.parse_args()
    result = run(args.home, args.queries, args.warmup, args.seed)
    for name in FORMULAS:
        print(f"{name}: search p50 {result[name]['p50']:.2f} ms, p95 {result[name]['p95']:.2f} ms")
    added = result["added_ms"]
    print(f"[bm25] adds {added['p50']:+.2f} ms at p50, {added['p95']:+.2f} ms at p95")


if __name__ == "__main__":
    main()
