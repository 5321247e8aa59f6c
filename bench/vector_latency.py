"""`python -m bench vector`: a vector search on SciFact as its caller waits for it, beside its peers.

The 5,183 SciFact abstracts are written through `POST /records` with vectors from the local
model. Then, for each k (10 and 100), every query is asked of every system, the order rotating
from query to query (whichever runs first finds none of its pages in the CPU's caches, so a fixed order would
bias the ratios), each k with query texts of its own (the service caches query
vectors by text):

* bare pgvector (top k, and at the spec's candidate count), Chroma and the raw model
  in-process (`bench.peers`);
* Memseek over HTTP with the caller's own vector (`vector` + `embedding_model`);
* Memseek over HTTP with the query text (the service embeds it).

Reported per system: what the caller waits (p50 / p95 client milliseconds), and for Memseek its
`Server-Timing` stages and the HTTP overhead (client wait − the service's `total`, per request).
The ratios the targets are stated in come from the same run.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import Any

import numpy as np
import psycopg

from bench.client import Response
from bench.client import check
from bench.datasets import Dataset
from bench.datasets import load_scifact
from bench.engine import raw_connection
from bench.engine import read_into_cache
from bench.load import analyze
from bench.load import wait_processed
from bench.load import write_records
from bench.metrics import percentiles
from bench.peers import ChromaPeer
from bench.peers import RawModel
from bench.peers import bare_ef_search
from bench.peers import bare_top_k
from bench.peers import candidate_settings
from bench.peers import chroma_available
from bench.peers import spec_candidates
from bench.quality import subset
from bench.report import database_versions
from bench.report import options_dict
from bench.report import table
from bench.service import Service
from bench.service import ServiceOptions
from bench.service import libpq_url
from bench.service import running_service
from bench.vectors import VectorCache
from bench.vectors import as_json_vector
from memseek.models.local import MODEL_ID

COLLECTION = "documents"
RAW_MODELS = {"raw_model": 0, "raw_model_1_thread": 1}
"""The raw model's sessions by intra-op threads (0: onnxruntime's defaults); ratios use the faster."""
SERVICE = ("memseek_vector", "memseek_text")
STAGES = ("embed", "search", "total")
TARGETS = {
    "memseek_vector ÷ chroma": 2.0,
    "memseek_text ÷ (raw model + 2 × bare)": 1.0,
    "embed ÷ raw model": 1.2,
    "search ÷ bare": 1.5,
    "search ÷ bare at the candidate count": 1.5,
    "HTTP overhead, ms": 1.0,
}


@dataclass(frozen=True, slots=True)
class VectorOptions:
    queries: int = 300
    warmup: int = 30
    ks: tuple[int, ...] = (10, 100)
    corpus: int | None = None
    """Only the first N documents (smoke runs); default all 5,183."""


@dataclass(frozen=True, slots=True)
class Probe:
    text: str
    vector: np.ndarray


@dataclass
class Peers:
    """What each system is asked with, on one connection to the service's database."""

    service: Service
    conn: psycopg.Connection
    candidates_conn: psycopg.Connection
    """The bare statement at the candidate count runs here, with the service's settings for it."""
    models: dict[str, RawModel]
    chroma: ChromaPeer | None

    def calls(self, probe: Probe, k: int) -> dict[str, Callable[[], Any]]:
        """One call per system for `probe` at `k` (Chroma only when installed)."""
        vector = as_json_vector(probe.vector)
        search = {"mode": "vector", "k": k, "scope": {"collections": [COLLECTION]}}
        calls: dict[str, Callable[[], Any]] = {
            "bare": lambda: bare_top_k(self.conn, probe.vector, k),
            "bare_candidates": lambda: bare_top_k(self.candidates_conn, probe.vector, spec_candidates(k)),
            "memseek_vector": lambda: self.service.client.post(
                "/search", {**search, "vector": vector, "embedding_model": MODEL_ID}
            ),
            "memseek_text": lambda: self.service.client.post("/search", {**search, "q": probe.text}),
        }
        for name, model in self.models.items():
            calls[name] = partial(model.embed, probe.text)
        if self.chroma is not None:
            chroma = self.chroma
            calls["chroma"] = lambda: chroma.search(probe.vector, k)
        return calls


def rotated(names: list[str], turn: int) -> list[str]:
    """`names` started `turn` places further: over len(names) probes each runs in each place once."""
    start = turn % len(names)
    return names[start:] + names[:start]


def _timed(call: Callable[[], Any]) -> tuple[float, Any]:
    started = time.perf_counter()
    answer = call()
    return (time.perf_counter() - started) * 1000, answer


def measure_k(peers: Peers, probes: list[Probe], k: int, warmup: int) -> dict[str, Any]:
    """Every probe asked of every system at `k`, the order rotating; the first `warmup` untimed."""
    peers.conn.execute("SELECT set_config('hnsw.ef_search', %s, false)", (str(bare_ef_search(k)),))
    peers.candidates_conn.execute(
        "SELECT set_config('hnsw.ef_search', %s, false), set_config('hnsw.iterative_scan', %s, false)",
        candidate_settings(k),
    )
    times: dict[str, list[float]] = {}
    responses: dict[str, list[Response]] = {name: [] for name in SERVICE}
    for index, probe in enumerate(probes):
        calls = peers.calls(probe, k)
        for name in rotated(list(calls), index):
            ms, answer = _timed(calls[name])
            if name in SERVICE:
                check(answer, f"{name} POST /search")
            if index >= warmup:
                times.setdefault(name, []).append(ms)
                if name in SERVICE:
                    responses[name].append(answer)
    return summarise(k, times, responses)


def _service_stats(responses: list[Response]) -> dict[str, Any]:
    """Client wait, each `Server-Timing` stage, total − embed and the HTTP overhead per request."""
    stats = {stage: percentiles([r.timing.get(stage, 0.0) for r in responses]) for stage in STAGES}
    stats["client"] = percentiles([r.client_ms for r in responses])
    stats["total_minus_embed"] = percentiles([r.timing["total"] - r.timing["embed"] for r in responses])
    stats["http"] = percentiles([r.client_ms - r.timing["total"] for r in responses])
    return stats


def summarise(k: int, times: dict[str, list[float]], responses: dict[str, list[Response]]) -> dict[str, Any]:
    """Per-system percentiles and the ratios the targets are stated in (p50 and p95 each)."""
    systems = {name: percentiles(samples) for name, samples in times.items()}
    service = {name: _service_stats(found) for name, found in responses.items()}
    return {
        "k": k,
        "bare_ef_search": bare_ef_search(k),
        "systems": systems,
        "service": service,
        "ratios": ratios(systems, service),
    }


def ratios(systems: dict[str, Any], service: dict[str, Any]) -> dict[str, dict[str, float]]:
    """Each target's measured figure at p50 and p95 (the HTTP overhead in ms, the rest ratios)."""
    bare = systems["bare"]
    raw = {p: min(systems[name][p] for name in RAW_MODELS) for p in ("p50", "p95")}
    own, text = service["memseek_vector"], service["memseek_text"]
    out = {
        "memseek_text ÷ (raw model + 2 × bare)": {
            p: text["client"][p] / (raw[p] + 2 * bare[p]) for p in ("p50", "p95")
        },
        "embed ÷ raw model": {p: text["embed"][p] / raw[p] for p in ("p50", "p95")},
        "search ÷ bare": {p: own["search"][p] / bare[p] for p in ("p50", "p95")},
        "search ÷ bare at the candidate count": {
            p: own["search"][p] / systems["bare_candidates"][p] for p in ("p50", "p95")
        },
        "bare at the candidate count ÷ bare": {
            p: systems["bare_candidates"][p] / bare[p] for p in ("p50", "p95")
        },
        "total − embed ÷ bare": {p: own["total_minus_embed"][p] / bare[p] for p in ("p50", "p95")},
        "HTTP overhead, ms": {p: own["http"][p] for p in ("p50", "p95")},
        "HTTP overhead with text, ms": {p: text["http"][p] for p in ("p50", "p95")},
    }
    if "chroma" in systems:
        chroma = systems["chroma"]
        out["memseek_vector ÷ chroma"] = {p: own["client"][p] / chroma[p] for p in ("p50", "p95")}
    return out


def make_probes(
    texts: list[str], vectors: np.ndarray, ks: tuple[int, ...], per: int
) -> dict[int, list[Probe]]:
    """Distinct query texts per k (`per` each) while the dataset has enough, then repeating."""
    probes = [Probe(text, vector) for text, vector in zip(texts, vectors, strict=True)]
    return {k: [probes[(i * per + j) % len(probes)] for j in range(per)] for i, k in enumerate(ks)}


def load(service: Service, data: Dataset, doc_vectors: np.ndarray) -> None:
    """The documents through `POST /records`, vectors supplied, processed and analysed."""
    write_records(service, [d.record_in() for d in data.docs], list(doc_vectors), progress="POST /records")
    wait_processed(service)
    analyze(service)


def run(options: VectorOptions, service_options: ServiceOptions) -> dict[str, Any]:
    """Load SciFact, then measure every system at every k."""
    per = options.warmup + options.queries
    data = subset(load_scifact(), per * len(options.ks), options.corpus)
    cache = VectorCache()
    doc_vectors = cache.vectors([d.text for d in data.docs], progress="scifact doc vectors")
    query_vectors = cache.vectors([q.text for q in data.queries], progress="scifact query vectors")
    probes = make_probes([q.text for q in data.queries], query_vectors, options.ks, per)
    chroma = ChromaPeer([d.doc_id for d in data.docs], doc_vectors) if chroma_available() else None
    models = {name: RawModel(threads) for name, threads in RAW_MODELS.items()}
    with running_service(service_options) as service:
        if not service_options.reuse:  # a kept home (`--keep`, then `--reuse HOME`) holds them already
            load(service, data, doc_vectors)
        with service.connect() as conn:
            read_into_cache(conn)
            versions = database_versions(conn)
        url = libpq_url(service.database_url)
        with raw_connection(url) as conn, raw_connection(url) as candidates_conn:
            peers = Peers(service, conn, candidates_conn, models, chroma)
            results = [measure_k(peers, probes[k], k, options.warmup) for k in options.ks]
    return {
        "options": options_dict(options),
        "database": versions,
        "docs": len(data.docs),
        "chroma": "in-process" if chroma is not None else "not installed (pip install chromadb)",
        "results": results,
        "targets": TARGETS,
    }


def _system_rows(result: dict[str, Any]) -> list[list[Any]]:
    rows = [[name, v["p50"], v["p95"], "—", "—", "—", "—"] for name, v in result["systems"].items()]
    for name, stats in result["service"].items():
        rows.append(
            [
                f"{name} (client)",
                stats["client"]["p50"],
                stats["client"]["p95"],
                *(f"{stats[stage]['p50']:.2f} / {stats[stage]['p95']:.2f}" for stage in STAGES),
                f"{stats['http']['p50']:.2f} / {stats['http']['p95']:.2f}",
            ]
        )
    return rows


def render(result: dict[str, Any]) -> str:
    """Per k: each system's wait and Memseek's stages, then the ratios beside their targets."""
    out = [f"SciFact, {result['docs']} documents; Chroma: {result['chroma']}"]
    for found in result["results"]:
        headers = [
            f"k = {found['k']}",
            "p50 ms",
            "p95 ms",
            *(f"{s} p50 / p95" for s in STAGES),
            "HTTP p50 / p95",
        ]
        out.append(table(headers, _system_rows(found), digits=2))
        rows = [
            [name, v["p50"], v["p95"], result["targets"].get(name, "—")]
            for name, v in found["ratios"].items()
        ]
        out.append(table([f"k = {found['k']}", "p50", "p95", "target"], rows, digits=2))
    return "\n\n".join(out)
