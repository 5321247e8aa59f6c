"""`python -m bench latency --records N`: search latency per mode, beside the bare engine, and throughput.

After loading the synthetic corpus through `POST /records` (vectors supplied), retracting its
flagged records and `VACUUM ANALYZE`, each mode is measured with one client, warm: the
server's own time from the `Server-Timing` header (`total`; client wall time when a route sends
none, and the result says so). The bare engine runs the matching raw statement on the same
database with the same query texts and vectors. Then hybrid searches run from 1, 2, 4, …
concurrent clients for a fixed time each (throughput and client-side p95), and the result
records index sizes and the service's resident memory.

`--reuse HOME` measures the database an earlier `--keep` run left in HOME instead of loading
(the probes' entities are read back from it in ingestion order); `--modes` measures only some
modes (their bare-engine statements with them; throughput only with hybrid, the fused
comparison only with fused).
"""

from __future__ import annotations

import itertools
import random
import threading
import time
from collections.abc import Iterable
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np

from bench.client import Response
from bench.client import RouteMissing
from bench.client import check
from bench.corpus import CHANNELS
from bench.corpus import LINKS
from bench.corpus import MEMORIES
from bench.corpus import REFLECTIONS
from bench.corpus import CorpusSpec
from bench.corpus import generate
from bench.corpus import queries as make_queries
from bench.engine import RAW_QUERIES
from bench.engine import RAW_SETTINGS
from bench.engine import raw_connection
from bench.engine import read_into_cache
from bench.engine import relation_sizes
from bench.engine import time_raw
from bench.ingest import corpus_vectors
from bench.load import analyze
from bench.load import processing_counts
from bench.load import retract
from bench.load import wait_processed
from bench.load import write_records
from bench.metrics import percentiles
from bench.quality import blended_rank
from bench.report import database_versions
from bench.report import options_dict
from bench.report import table
from bench.service import Service
from bench.service import ServiceOptions
from bench.service import libpq_url
from bench.service import running_service
from bench.vectors import VectorCache

GRAPH_VIEW = "account_graph"
MODES = ("vector", "text", "hybrid", "blended", "recent", "structured", "fused", "graph", "graph_boost")
THROUGHPUT_POOL = 5000
SECOND_BASELINE = {"vector": "vector_pool", "hybrid": "vector_pool"}
"""A further bare-engine figure per mode: the raw ANN query at the search's candidate count."""
BASELINE = {
    "vector": "vector",
    "text": "text",
    "hybrid": "hybrid",
    "blended": "hybrid",
    "recent": "recent",
    "structured": "structured",
    "fused": "hybrid",
    "graph_boost": "hybrid",
}


@dataclass(frozen=True, slots=True)
class LatencyOptions:
    records: int = 10_000
    queries: int = 200
    warmup: int = 30
    """Untimed requests first: a connection reaches its steady plan after ~10 executions of a
    statement (psycopg prepares on the 6th, PostgreSQL weighs a generic plan after 5 custom ones)."""
    k: int = 20
    seed: int = 7
    distinct_texts: int = 100_000
    concurrency: tuple[int, ...] = (1, 2, 4, 8)
    duration: float = 10.0
    p95_target_ms: float = 60.0
    modes: tuple[str, ...] = MODES


@dataclass(frozen=True, slots=True)
class Probe:
    """The i-th query's inputs: text, its vector, an entity (Zipf-weighted) and a channel."""

    q: str
    vector: np.ndarray | None
    entity: str
    channel: str


@dataclass(frozen=True, slots=True)
class Probes:
    """Distinct probes per mode (the service caches query vectors, so no text repeats within a
    mode), the same probes for that mode's bare-engine statement, and a pool for throughput."""

    per_mode: dict[str, list[Probe]]
    pool: list[Probe]


def make_probes(entities: list[str], opts: LatencyOptions, cache: VectorCache) -> Probes:
    per = opts.warmup + opts.queries
    texts = make_queries(opts.seed, per * len(MODES) + THROUGHPUT_POOL)
    vectors = list(cache.vectors(texts[: per * len(MODES)], progress="query vectors"))
    rng = random.Random(f"probes:{opts.seed}")
    items = [
        Probe(q, vec, rng.choice(entities), rng.choice(CHANNELS))
        for q, vec in zip(texts, vectors + [None] * THROUGHPUT_POOL, strict=True)
    ]
    return Probes(
        {mode: items[i * per : (i + 1) * per] for i, mode in enumerate(MODES)}, items[per * len(MODES) :]
    )


def _scope(p: Probe | None = None) -> dict[str, Any]:
    scope: dict[str, Any] = {"collections": [MEMORIES]}
    if p is not None:
        scope["entities"] = [p.entity]
    return scope


def service_request(mode: str, p: Probe, k: int) -> tuple[str, dict[str, Any]]:
    """(path, body) of the service request measured for `mode`."""
    if mode in ("vector", "text", "hybrid"):
        return "/search", {"q": p.q, "mode": mode, "k": k, "scope": _scope()}
    if mode == "blended":  # hybrid ranked by docs/catalog.md's formula of bm25 and similarity
        return "/search", {"q": p.q, "mode": "hybrid", "k": k, "scope": _scope(), "rank": blended_rank()}
    if mode == "recent":
        return "/search", {"mode": "recent", "k": k, "scope": _scope(p)}
    if mode == "structured":
        return "/search", {
            "mode": "structured",
            "k": k,
            "scope": _scope(p),
            "where": {"channel": {"eq": p.channel}},
            "order_by": [{"field": "starts_at", "direction": "asc"}],
        }
    if mode == "fused":
        fuse = {"kind": "rrf", "rank_constant": 60}
        return "/search", {"q": p.q, "sources": fused_sources(p), "fuse": fuse, "k": k}
    if mode == "graph":
        return f"/views/{GRAPH_VIEW}/query", {"seed": p.entity, "direction": "both", "depth": 2, "limit": k}
    body = {
        "q": p.q,
        "mode": "hybrid",
        "k": k,
        "scope": _scope(),
        "graph_boost": {"graph": GRAPH_VIEW, "anchor": p.entity, "depth": 2},
    }
    return "/search", body


def fused_sources(p: Probe) -> list[dict[str, Any]]:
    """The three sources of the `fused` mode."""
    return [
        {"name": "events", "mode": "hybrid", "scope": _scope(), "k": 30},
        {
            "name": "reflections",
            "mode": "vector",
            "scope": {"collections": [REFLECTIONS]},
            "k": 15,
            "weight": 1.1,
        },
        {"name": "latest", "mode": "recent", "scope": _scope(p), "k": 10, "weight": 0.5},
    ]


def source_alone(source: dict[str, Any], p: Probe) -> dict[str, Any]:
    """One fused source as a single search (its weight only matters when merging)."""
    body = {key: value for key, value in source.items() if key not in ("name", "weight")}
    return body if source["mode"] == "recent" else {"q": p.q, **body}


def raw_params(p: Probe, k: int, workspace: Any) -> dict[str, Any]:
    return {
        "vec": p.vector,
        "q": p.q,
        "k": k,
        "pool": min(1000, max(100, 10 * k)),  # the spec's default candidate count for k
        "ws": workspace,
        "collection": MEMORIES,
        "entity": p.entity,
        "channel": p.channel,
    }


def _hits(body: Any) -> int:
    return len(body.get("hits", [])) if isinstance(body, dict) else 0


def measure_mode(
    service: Service, mode: str, items: list[Probe], opts: LatencyOptions, bare: BareRuns
) -> dict[str, Any]:
    """Warm up, then time `opts.queries` requests of `mode` (server and client milliseconds).
    `bare` statements that use this mode's probes run beside each request on the same probe, the
    order rotating from probe to probe, so that each of them and the request runs first, second,
    ... equally often: whichever runs a probe first finds none of its pages in the CPU's caches
    and is slower, so a fixed order would bias the ratio. Those that rank every match (`SCANS`)
    run once every request of the run is done (`run`)."""
    calls = [service_request(mode, p, opts.k) for p in items]
    try:
        check(service.client.post(*calls[0]), f"{mode} ({calls[0][0]})")
    except RouteMissing as exc:
        return {"mode": mode, "missing": str(exc)}
    except RuntimeError as exc:
        return {"mode": mode, "error": str(exc)[:500]}
    responses: list[Response] = []
    failed: list[int] = []
    beside = bare.beside(mode)
    for index, (path, body) in enumerate(calls):
        ahead, after = _around(beside, index)
        for name in ahead:
            bare.once(name, items[index], index >= opts.warmup)
        response = service.client.post(path, body)
        for name in after:
            bare.once(name, items[index], index >= opts.warmup)
        if not response.ok():
            failed.append(response.status)
        elif index >= opts.warmup:
            responses.append(response)
    if not responses:
        return {"mode": mode, "error": f"every request failed: {sorted(set(failed))}"}
    server = [r.server_ms for r in responses if r.server_ms is not None]
    client = [r.client_ms for r in responses]
    timed = len(server) == len(responses)
    return {
        "mode": mode,
        "server": percentiles(server if timed else client),
        "searching": percentiles([_searching_ms(r) for r in responses] if timed else client),
        "client": percentiles(client),
        "timing_source": "Server-Timing total"
        if timed
        else "client wall time (route sends no Server-Timing)",
        "stages": {
            name: percentiles([r.timing.get(name, 0.0) for r in responses])["p50"]
            for name in responses[0].timing
        },
        "mean_hits": float(np.mean([_hits(r.body) for r in responses])),
        "errors": len(failed),
    }


REQUEST = ""
"""The request's own place in `_around`'s cycle (no bare statement has an empty name)."""


def _around(beside: list[str], turn: int) -> tuple[list[str], list[str]]:
    """The statements to run before and after the request of probe number `turn`: the request
    and `beside` in one cycle, started `turn` places further each probe."""
    cycle = [*beside, REQUEST]
    start = turn % len(cycle)
    order = cycle[start:] + cycle[:start]
    at = order.index(REQUEST)
    return order[:at], order[at + 1 :]


def _probes_of(raw_name: str) -> str:
    """The mode whose probes a bare statement runs with (`vector_pool`: the vector mode's)."""
    return "vector" if raw_name == "vector_pool" else raw_name


SCANS = frozenset({"text", "hybrid"})
"""Bare statements that rank every match of the query. Where the records table is too large to
stay cached beside the service's working set (`fits_in_cache`), each reads more of it than that
set, so before any request it would evict the set and the request would be measured on cold
caches (at 1M records, several times its p95): they then run last, after every request of the
run (the modes, the fused sources and throughput), on caches the requests warmed, a
conservative ratio for the service. Where it stays cached they run beside their mode's requests
like every other bare statement, so that a change in the machine's other load during the run
weighs on both alike."""

CACHE_SHARE = 4
"""The records table fits in the cache when it takes at most this fraction (1/n) of
`shared_buffers`: its indexes, the other tables and the service's own reads share the rest."""


def fits_in_cache(conn: Any) -> bool:
    """Whether the records table stays in `shared_buffers` whatever a bare scan reads (`SCANS`)."""
    row = conn.execute(
        "SELECT pg_table_size('records'), (SELECT setting::bigint * 8192 FROM pg_settings"
        " WHERE name = 'shared_buffers')"
    ).fetchone()
    return bool(row[0] * CACHE_SHARE <= row[1])


def placement(scan: bool, scans_beside: bool) -> str:
    """Where a bare statement ran (recorded with its result)."""
    return "after every request of the run" if scan and not scans_beside else "beside its mode's requests"


class BareRuns:
    """The bare engine's statements on one connection: each runs on a mode's probes, beside that
    mode's requests (`measure_mode`), or on its own (`run_alone`) when the mode itself is not
    measured or the statement is one of `SCANS`; timed samples are kept per statement."""

    def __init__(self, conn: Any, names: Iterable[str], opts: LatencyOptions, workspace: Any) -> None:
        self.conn, self.opts, self.workspace = conn, opts, workspace
        self.samples: dict[str, list[tuple[float, int]]] = {name: [] for name in names}
        self.scans_beside = fits_in_cache(conn)

    def runs_last(self, name: str) -> bool:
        """Whether `name` runs after every request of the run (`SCANS`)."""
        return name in SCANS and not self.scans_beside

    def beside(self, mode: str) -> list[str]:
        """The statements that use `mode`'s probes and run beside its requests."""
        return [name for name in self.samples if _probes_of(name) == mode and not self.runs_last(name)]

    def run_alone(self, name: str, items: list[Probe]) -> None:
        for index, probe in enumerate(items):
            self.once(name, probe, index >= self.opts.warmup)

    def once(self, name: str, probe: Probe, timed: bool) -> None:
        params = raw_params(probe, self.opts.k, self.workspace)
        settings = RAW_SETTINGS.get(name, lambda _: {})(params)
        for setting, value in settings.items():  # session-wide until reset below
            self.conn.execute("SELECT set_config(%s, %s, false)", (setting, value))
        sample = time_raw(self.conn, RAW_QUERIES[name], params)
        for setting in settings:
            self.conn.execute(
                "SELECT set_config(%s, reset_val, false) FROM pg_settings WHERE name = %s", (setting, setting)
            )
        if timed:
            self.samples[name].append(sample)

    def results(self) -> dict[str, dict[str, Any]]:
        return {
            name: {
                "raw": name,
                "placement": placement(name in SCANS, self.scans_beside),
                "latency": percentiles([ms for ms, _ in samples]),
                "mean_rows": float(np.mean([rows for _, rows in samples])),
            }
            for name, samples in self.samples.items()
        }


def _searching_ms(response: Response) -> float:
    """Server time without the query embedding (a source alone reuses the fused request's cached vector)."""
    return (response.server_ms or 0.0) - response.timing.get("embed", 0.0)


def measure_fused_sources(service: Service, items: list[Probe], opts: LatencyOptions) -> dict[str, Any]:
    """The fused search and each of its sources alone, interleaved probe by probe (the order
    alternates), so the ratio fused p95 ÷ slowest source p95 compares the same moments."""
    samples: dict[str, list[float]] = {}
    for index, p in enumerate(items):
        calls = [("fused", service_request("fused", p, opts.k)[1])]
        calls += [(s["name"], source_alone(s, p)) for s in fused_sources(p)]
        for name, body in calls if index % 2 else calls[::-1]:
            response = service.client.post("/search", body)
            if response.ok() and index >= opts.warmup:
                samples.setdefault(name, []).append(_searching_ms(response))
    stats = {name: percentiles(values) for name, values in samples.items()}
    if "fused" not in stats:
        return {"error": "every fused request failed"}
    slowest = {p: max(v[p] for name, v in stats.items() if name != "fused") for p in ("p50", "p95")}
    return {"server_minus_embed": stats, "ratio": {p: stats["fused"][p] / slowest[p] for p in slowest}}


def _worker(
    service: Service,
    calls: list[tuple[str, dict[str, Any]]],
    counter: Iterator[int],
    deadline: float,
    out: list[float],
    errors: list[int],
) -> None:
    while time.perf_counter() < deadline:
        response = service.client.post(*calls[next(counter) % len(calls)])
        if response.ok():
            out.append(response.client_ms)
        else:
            errors.append(response.status)


def throughput(
    service: Service, items: list[Probe], opts: LatencyOptions, mode: str = "hybrid"
) -> list[dict[str, Any]]:
    """`mode` searches from N concurrent clients for `opts.duration` seconds per level. All levels
    draw from one counter over `items`, so a query text repeats only after the pool is used up."""
    calls = [service_request(mode, p, opts.k) for p in items]
    counter = itertools.count()
    levels = []
    for clients in opts.concurrency:
        samples: list[list[float]] = [[] for _ in range(clients)]
        errors: list[int] = []
        deadline = time.perf_counter() + opts.duration
        threads = [
            threading.Thread(target=_worker, args=(service, calls, counter, deadline, samples[c], errors))
            for c in range(clients)
        ]
        started = time.perf_counter()
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        elapsed = time.perf_counter() - started
        flat = [s for per in samples for s in per]
        levels.append(
            {
                "clients": clients,
                "requests": len(flat),
                "errors": len(errors),
                "seconds": elapsed,
                "per_second": len(flat) / elapsed,
                "client": percentiles(flat),
            }
        )
    return levels


def load_corpus(service: Service, opts: LatencyOptions) -> dict[str, Any]:
    """Write the corpus (vectors supplied), retract its flagged records, analyze; returns the timings."""
    corpus = generate(CorpusSpec(opts.records, seed=opts.seed, distinct_texts=opts.distinct_texts))
    vectors = corpus_vectors(corpus, VectorCache())
    written = write_records(
        service, [r.record_in() for r in corpus.records], vectors, progress="POST /records (vectors supplied)"
    )
    wait_processed(service)
    doomed = [written.ids[r.index] for r in corpus.records if r.retract]
    seconds = retract(service, doomed)
    analyze(service)
    return {
        "records": len(written.ids),
        "load_per_second": written.per_second,
        "retracted": len(doomed),
        "retract_seconds": seconds,
        "processing_states": processing_counts(service),
        "entities": [r.entity for r in corpus.records if r.collection != LINKS],
    }


def reused_corpus(service: Service) -> dict[str, Any]:
    """What `load_corpus` returns, read back from a database loaded by an earlier run."""
    with service.connect() as conn:
        entities = conn.execute(
            "SELECT entity FROM records WHERE workspace_id = %s AND collection <> %s ORDER BY seq",
            (service.workspace_id, LINKS),
        ).fetchall()
    return {
        "reused": True,
        "processing_states": processing_counts(service),
        "entities": [e for (e,) in entities],
    }


def run(options: LatencyOptions, service_options: ServiceOptions) -> dict[str, Any]:
    """Load, then measure every mode, its bare-engine statement, throughput, sizes and memory."""
    cache = VectorCache()
    with running_service(service_options) as service:
        loaded = reused_corpus(service) if service_options.reuse else load_corpus(service, options)
        with service.connect() as conn:
            started = time.perf_counter()
            warmed = read_into_cache(conn)
        loaded["cache_warmed"] = {"bytes": warmed, "seconds": time.perf_counter() - started}
        probes = make_probes(loaded.pop("entities"), options, cache)
        wanted_raw = {BASELINE[mode] for mode in options.modes if mode in BASELINE}
        wanted_raw |= {SECOND_BASELINE[mode] for mode in options.modes if mode in SECOND_BASELINE}
        with raw_connection(libpq_url(service.database_url)) as conn:
            bare = BareRuns(
                conn, [name for name in RAW_QUERIES if name in wanted_raw], options, service.workspace_id
            )
            modes = [
                measure_mode(service, mode, probes.per_mode[mode], options, bare) for mode in options.modes
            ]
            for name in bare.samples:
                if _probes_of(name) not in options.modes and not bare.runs_last(name):
                    bare.run_alone(name, probes.per_mode[_probes_of(name)])
            fused_sources_result = (
                measure_fused_sources(service, probes.per_mode["fused"], options)
                if "fused" in options.modes
                else {}
            )
            hybrid_ok = any(m["mode"] == "hybrid" and "server" in m for m in modes)  # measured and working
            levels = throughput(service, probes.pool, options) if hybrid_ok else []
            rss = service.rss_bytes()
            for name in bare.samples:  # last: each evicts the requests' working set (`SCANS`)
                if bare.runs_last(name):
                    bare.run_alone(name, probes.per_mode[_probes_of(name)])
            raw = bare.results()
            sizes = relation_sizes(conn)
            versions = database_versions(conn)
        tuning = service.tuning
    for row in modes:
        if "server" not in row:
            continue
        for key, baselines in (("vs_raw", BASELINE), ("vs_raw_pool", SECOND_BASELINE)):
            if base := raw.get(baselines.get(row["mode"], "")):
                row[key] = {p: row["searching"][p] / base["latency"][p] for p in ("p50", "p95", "p99")}
    return {
        "options": options_dict(options),
        "database": versions,
        "tuning": tuning,
        "load": loaded,
        "modes": modes,
        "raw": raw,
        "fused_sources": fused_sources_result,
        "throughput": levels,
        "p95_target_ms": options.p95_target_ms,
        "throughput_at_target": max(
            (lv["per_second"] for lv in levels if lv["client"]["p95"] <= options.p95_target_ms), default=None
        ),
        "relation_sizes": sizes,
        "service_rss_bytes": rss,
    }


def _mode_rows(m: dict[str, Any], raw: dict[str, Any]) -> list[list[Any]]:
    """A mode's row beside its bare engine, then a row beside the raw ANN at the candidate count
    (vector, hybrid). "search" is the server's time without the query embedding; ratios use it."""
    if "server" not in m:
        return [[m["mode"], *["—"] * 6, m.get("missing") or m.get("error"), *["—"] * 4]]
    server, search = m["server"], m["searching"]
    own = [
        m["mode"],
        server["p50"],
        server["p95"],
        server["p99"],
        search["p50"],
        search["p95"],
        m["client"]["p95"],
    ]
    beside = [
        [
            f"raw {name}",
            raw[name]["latency"]["p50"],
            raw[name]["latency"]["p95"],
            m[key]["p50"],
            m[key]["p95"],
        ]
        for key, baselines in (("vs_raw", BASELINE), ("vs_raw_pool", SECOND_BASELINE))
        if (name := baselines.get(m["mode"])) in raw
    ] or [["—"] * 5]
    return [own + beside[0], *([""] * len(own) + more for more in beside[1:])]


def render(result: dict[str, Any]) -> str:
    """The tables: per mode beside the bare engine, fused sources, throughput (and the rate at
    the p95 target), sizes."""
    headers = [
        "mode",
        "server p50",
        "server p95",
        "server p99",
        "search p50",
        "search p95",
        "client p95",
        "bare engine",
        "raw p50",
        "raw p95",
        "search p50 × raw",
        "search p95 × raw",
    ]
    rows = [row for m in result["modes"] for row in _mode_rows(m, result["raw"])]
    out = [table(headers, rows, digits=2)]
    fused = result.get("fused_sources", {})
    if "ratio" in fused:
        stats = fused["server_minus_embed"]
        rows = [[name, v["p50"], v["p95"], v["p99"]] for name, v in stats.items()]
        rows.append(["fused ÷ slowest source", fused["ratio"]["p50"], fused["ratio"]["p95"], "—"])
        out.append(table(["fused, interleaved (server − embed)", "p50", "p95", "p99"], rows, digits=2))
    if result["throughput"]:
        out.append(
            table(
                ["clients", "requests", "req/s", "client p50 ms", "client p95 ms", "errors"],
                [
                    [
                        lv["clients"],
                        lv["requests"],
                        lv["per_second"],
                        lv["client"]["p50"],
                        lv["client"]["p95"],
                        lv["errors"],
                    ]
                    for lv in result["throughput"]
                ],
                digits=1,
            )
        )
        at_target = result["throughput_at_target"]
        out.append(
            f"throughput at client p95 ≤ {result['p95_target_ms']:g} ms: "
            + (f"{at_target:.1f} requests/s" if at_target is not None else "no client count stayed within it")
        )
    out.append(
        table(
            ["relation (≥ 64 KiB)", "MiB"],
            [[name, size / 2**20] for name, size in result["relation_sizes"].items() if size >= 65536],
        )
    )
    out.append(f"service RSS: {result['service_rss_bytes'] / 2**20:.0f} MiB")
    return "\n\n".join(out)
