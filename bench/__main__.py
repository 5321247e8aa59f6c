"""`python -m bench http|ingest|latency|quality|soak|vector`: run one suite, print its tables and JSON."""

from __future__ import annotations

import argparse
import logging
import signal
import sys
import warnings
from collections.abc import Callable
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from bench import RESULTS_DIR
from bench import http_overhead
from bench import ingest
from bench import latency
from bench import quality
from bench import soak
from bench import vector_latency
from bench.report import machine
from bench.report import save
from bench.report import summary
from bench.service import ServiceOptions


def _ints(raw: str) -> tuple[int, ...]:
    return tuple(int(part) for part in raw.split(",") if part)


def _common(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--database-url",
        help="measure on a new database of this server (default: DATABASE_URL, "
        "else a new embedded PostgreSQL in a temporary MEMSEEK_HOME)",
    )
    parser.add_argument("--threads", type=int, default=8, help="memseek serve --threads (default 8)")
    parser.add_argument("--no-tune", action="store_true", help="do not ALTER SYSTEM the benchmark settings")
    parser.add_argument("--keep", action="store_true", help="keep the temporary MEMSEEK_HOME / database")
    parser.add_argument(
        "--reuse",
        type=Path,
        metavar="HOME",
        help="latency: measure the embedded database a --keep run left in MEMSEEK_HOME HOME (no loading)",
    )
    parser.add_argument("--out", type=Path, default=RESULTS_DIR, help="where the JSON result goes")


def _modes(raw: str) -> tuple[str, ...]:
    modes = tuple(part for part in raw.split(",") if part)
    unknown = sorted(set(modes) - set(latency.MODES))
    if unknown:
        raise argparse.ArgumentTypeError(f"unknown modes: {', '.join(unknown)}")
    return modes


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m bench", description=summary(__doc__))
    sub = parser.add_subparsers(dest="suite", required=True)

    ing = sub.add_parser("ingest", help="records/s through POST /records beside the bare engine")
    ing.add_argument("--records", type=int, default=10_000)
    ing.add_argument(
        "--embed-records",
        type=int,
        default=2_000,
        help="a corpus of N records written without vectors and embedded by the service, less its "
        "link records (about a fifth) (default 2,000)",
    )
    ing.add_argument(
        "--import-records",
        type=int,
        default=10_000,
        help="records of the bulk-path phase, written by `memseek import` (default 10,000; 0 skips it)",
    )
    ing.add_argument("--import-jobs", type=int, default=2, help="`memseek import --jobs` (default 2)")
    ing.add_argument("--seed", type=int, default=7)
    ing.add_argument(
        "--distinct-texts",
        type=int,
        default=100_000,
        help="cap on distinct texts (and so on vectors to compute); larger corpora reuse texts",
    )
    _common(ing)

    lat = sub.add_parser("latency", help="server-side latency per mode beside the bare engine, throughput")
    lat.add_argument("--records", type=int, default=10_000)
    lat.add_argument("--queries", type=int, default=200, help="timed requests per mode (default 200)")
    lat.add_argument("--warmup", type=int, default=30, help="untimed requests per mode first (default 30)")
    lat.add_argument("--k", type=int, default=20)
    lat.add_argument("--seed", type=int, default=7)
    lat.add_argument("--distinct-texts", type=int, default=100_000)
    lat.add_argument("--concurrency", type=_ints, default=(1, 2, 4, 8), help="client counts, e.g. 1,2,4,8")
    lat.add_argument("--duration", type=float, default=10.0, help="seconds per concurrency level")
    lat.add_argument(
        "--p95-target", type=float, default=60.0, help="p95 for 'throughput at a fixed p95' (ms)"
    )
    lat.add_argument(
        "--modes",
        type=_modes,
        default=latency.MODES,
        help=f"only these modes, e.g. structured,recent ({', '.join(latency.MODES)})",
    )
    _common(lat)

    qual = sub.add_parser("quality", help="retrieval quality on SciFact or LoCoMo beside BM25 and dense")
    qual.add_argument("dataset", choices=("scifact", "locomo"))
    qual.add_argument("--queries", type=int, help="only the first N queries (default: all)")
    qual.add_argument(
        "--corpus", type=int, help="only the first N documents plus the relevant ones (default: all)"
    )
    _common(qual)

    so = sub.add_parser("soak", help="minutes of mixed load, a flooding workspace and OpenAPI fuzzing")
    so.add_argument(
        "--minutes", type=float, default=10.0, help="length of the flooded mixed load (default 10)"
    )
    so.add_argument(
        "--quiet-minutes",
        type=float,
        default=2.0,
        help="the ordinary clients alone first, for their latency without the flood (default 2)",
    )
    so.add_argument("--clients", type=int, default=8, help="ordinary clients (default 8)")
    so.add_argument(
        "--workspaces", type=int, default=4, help="workspaces the clients spread over (default 4)"
    )
    so.add_argument("--flood-clients", type=int, default=10, help="clients of the flooding workspace")
    so.add_argument("--fuzz", type=int, default=10_000, help="requests fuzzed from the OpenAPI document")
    so.add_argument("--seed", type=int, default=7)
    _common(so)

    vec = sub.add_parser(
        "vector",
        help="SciFact vector search as the caller waits: Memseek beside bare pgvector, Chroma, the model",
    )
    vec.add_argument("--queries", type=int, default=300, help="timed queries per k (default 300)")
    vec.add_argument("--warmup", type=int, default=30, help="untimed queries per k first (default 30)")
    vec.add_argument("--k", type=_ints, default=(10, 100), help="result counts, e.g. 10,100 (the default)")
    vec.add_argument("--corpus", type=int, help="only the first N documents (default: all 5,183)")
    _common(vec)

    web = sub.add_parser(
        "http", help="HTTP overhead of Memseek's routes beside a bare waitress + Flask route"
    )
    web.add_argument("--requests", type=int, default=2000, help="timed requests per route (default 2,000)")
    web.add_argument("--warmup", type=int, default=200, help="untimed requests per route first (default 200)")
    web.add_argument("--docs", type=int, default=2000, help="records searched (default 2,000)")
    _common(web)
    return parser


def _service_options(args: argparse.Namespace) -> ServiceOptions:
    return ServiceOptions(
        database_url=args.database_url,
        threads=args.threads,
        tune=not args.no_tune,
        keep=args.keep,
        reuse=getattr(args, "reuse", None),
    )


def _suite(
    args: argparse.Namespace,
) -> tuple[str, Callable[[], dict[str, Any]], Callable[[dict[str, Any]], str]]:
    """(result name, run, render) for the chosen suite."""
    service = _service_options(args)
    if args.suite == "ingest":
        opts = ingest.IngestOptions(
            args.records,
            args.embed_records,
            args.seed,
            args.distinct_texts,
            import_records=args.import_records,
            import_jobs=args.import_jobs,
        )
        return "ingest", lambda: ingest.run(opts, service), ingest.render
    if args.suite == "latency":
        lopts = latency.LatencyOptions(
            args.records,
            args.queries,
            args.warmup,
            args.k,
            args.seed,
            args.distinct_texts,
            args.concurrency,
            args.duration,
            args.p95_target,
            args.modes,
        )
        return "latency", lambda: latency.run(lopts, service), latency.render
    if args.suite == "soak":
        named = ("minutes", "quiet_minutes", "clients", "workspaces", "flood_clients", "fuzz", "seed")
        sopts = soak.SoakOptions(**{name: getattr(args, name) for name in named})
        return "soak", lambda: soak.run(sopts, service), soak.render
    if args.suite == "http":
        hopts = http_overhead.HttpOptions(args.requests, args.warmup, args.docs)
        return "http", lambda: http_overhead.run(hopts, service), http_overhead.render
    if args.suite == "vector":
        vopts = vector_latency.VectorOptions(args.queries, args.warmup, args.k, args.corpus)
        return "vector", lambda: vector_latency.run(vopts, service), vector_latency.render
    qopts = quality.QualityOptions(args.dataset, args.queries, args.corpus)
    return f"quality-{args.dataset}", lambda: quality.run(qopts, service), quality.render


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    logging.basicConfig(level=logging.WARNING)
    warnings.filterwarnings("ignore", message="XDG_RUNTIME_DIR")
    name, run, render = _suite(args)
    info = machine()
    print(
        f"{name}: {info['cpu_model']}, {info['nproc']} cores, {(info['ram_bytes'] or 0) / 2**30:.0f} GiB",
        flush=True,
    )
    result = {"loadavg_at_start": info["loadavg_1_5_15"], **run()}
    print(render(result))
    print(f"\nwritten {save(name, result, args.out)}")
    return 0


if __name__ == "__main__":
    # A terminated run still stops the service and PostgreSQL it started (the context managers' finally).
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    sys.exit(main())
