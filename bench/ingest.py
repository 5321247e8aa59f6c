"""`python -m bench ingest --records N`: write throughput through `POST /records`, beside the bare engine.

One run measures, on one fresh database:
1. the service with precomputed vectors (embedding excluded): N records in batches of 1,000;
2. interleaved with it batch by batch, the bare engine on tables shaped like `records` with the
   same indexes: the same rows by batched INSERT, by COPY straight into the table, and by COPY
   through a stage, batches of 1,000, one transaction each, and by batched INSERT into such a
   table without its HNSW index (how much of the bound is the vector index);
3. the service embedding itself (embedding included): `--embed-records` new records without
   vectors, from the first POST until the in-process worker has made every one `ready`;
4. the raw model (`LocalEmbedder`, one thread) on those same texts sorted by length, at batch 64
   and at the service's default batch (8), before the service starts so nothing competes with it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import psycopg

from bench.corpus import LINKS
from bench.corpus import Corpus
from bench.corpus import CorpusSpec
from bench.corpus import generate
from bench.engine import BARE_PATHS
from bench.engine import bare_rows
from bench.engine import raw_connection
from bench.load import processing_counts
from bench.load import wait_processed
from bench.load import write_records
from bench.metrics import percentiles
from bench.report import database_versions
from bench.report import options_dict
from bench.report import table
from bench.service import Service
from bench.service import ServiceOptions
from bench.service import libpq_url
from bench.service import running_service
from bench.vectors import VectorCache
from bench.vectors import model_throughput
from memseek.models.config import ModelDecl

SERVICE_BATCH = ModelDecl.model_validate(
    {"kind": "embedding", "provider": "local", "model": "all-MiniLM-L6-v2"}
).batch_size
"""Texts per model call the service's local embedder uses by default."""


@dataclass(frozen=True, slots=True)
class IngestOptions:
    records: int = 10_000
    embed_records: int = 2_000
    seed: int = 7
    distinct_texts: int = 100_000
    batch: int = 1000


def corpus_vectors(corpus: Corpus, cache: VectorCache) -> list[np.ndarray | None]:
    """One vector per record (None for links, whose collection declares no embedding)."""
    embedded = [i for i, r in enumerate(corpus.records) if r.collection != LINKS]
    matrix = cache.vectors([corpus.records[i].text for i in embedded], progress="corpus vectors")
    vectors: list[np.ndarray | None] = [None] * len(corpus.records)
    for row, index in enumerate(embedded):
        vectors[index] = matrix[row]
    return vectors


def _rate_row(name: str, records: int, seconds: float, batch_ms: tuple[float, ...] = ()) -> dict[str, Any]:
    stats = percentiles(batch_ms)
    return {
        "path": name,
        "records": records,
        "seconds": seconds,
        "per_second": records / seconds,
        "batch_p50_ms": stats["p50"],
        "batch_p95_ms": stats["p95"],
    }


SERVICE_PATH = "service POST /records, vectors supplied"


def interleaved_loads(
    service: Service,
    conn: psycopg.Connection,
    corpus: Corpus,
    vectors: Sequence[np.ndarray | None],
    batch: int,
) -> dict[str, list[float]]:
    """Batch by batch, the service and every bare path write the same records, each into its own
    table, in an order that rotates per batch: every path sees the same table sizes and the same
    machine load (the cores are shared), so their ratios hold even when the load drifts."""
    bodies = [r.record_in() for r in corpus.records]
    bare = bare_rows(corpus, vectors, service.workspace_id)
    for path in BARE_PATHS:
        path.create(conn)

    def service_batch(start: int) -> float:
        part = slice(start, start + batch)
        return write_records(service, bodies[part], vectors[part], batch).batch_ms[0]

    writers = [(SERVICE_PATH, service_batch)] + [
        (
            f"bare engine: {path.method}",
            lambda start, path=path: path.write(conn, bare[start : start + batch]),
        )
        for path in BARE_PATHS
    ]
    batch_ms: dict[str, list[float]] = {name: [] for name, _ in writers}
    for number, start in enumerate(range(0, len(bodies), batch)):
        turn = number % len(writers)
        for name, write in writers[turn:] + writers[:turn]:
            batch_ms[name].append(write(start))
        if (number + 1) % 10 == 0 or start + batch >= len(bodies):
            rates = ", ".join(
                f"{name} {len(ms) * batch / sum(ms) * 1000:.0f}/s" for name, ms in batch_ms.items()
            )
            print(f"  {min(start + batch, len(bodies))}/{len(bodies)} records: {rates}", flush=True)
    for path in BARE_PATHS:
        path.drop(conn)
    return batch_ms


def run(options: IngestOptions, service_options: ServiceOptions) -> dict[str, Any]:
    """Measure every write path of the module docstring; returns the JSON result."""
    spec = CorpusSpec(options.records, seed=options.seed, distinct_texts=options.distinct_texts)
    corpus = generate(spec)
    cache = VectorCache()
    vectors = corpus_vectors(corpus, cache)
    embed_corpus = generate(CorpusSpec(options.embed_records, seed=options.seed + 1000))
    embed_bodies = [r.record_in() for r in embed_corpus.records if r.collection != LINKS]
    rows: list[dict[str, Any]] = []
    for batch in dict.fromkeys((64, SERVICE_BATCH)):
        model = model_throughput([b["text"] for b in embed_bodies], batch_size=batch)
        rows.append(
            _rate_row(f"raw model (LocalEmbedder, batch {batch}, 1 thread)", model.texts, model.seconds)
        )
    with running_service(service_options) as service:
        with raw_connection(libpq_url(service.database_url)) as conn:
            versions = database_versions(conn)
            batch_ms = interleaved_loads(service, conn, corpus, vectors, options.batch)
        settle = wait_processed(service)
        # the service's figure runs until every record is `ready` (supplied vectors are written ready;
        # the settle time, normally ~0, counts anyway); the bare paths have no processing state
        rows += [
            _rate_row(
                name,
                len(corpus.records),
                (sum(ms) / 1000) + (settle if name == SERVICE_PATH else 0),
                tuple(ms),
            )
            for name, ms in batch_ms.items()
        ]
        embedded = write_records(
            service, embed_bodies, None, options.batch, progress="POST /records (no vectors)"
        )
        processed = embedded.seconds + wait_processed(service)
        states = processing_counts(service)
        rows.append(
            _rate_row(
                "service POST /records, embedding included (until ready)",
                len(embedded.ids),
                processed,
                embedded.batch_ms,
            )
        )
        tuning = service.tuning
    base = next(r for r in rows if r["path"] == "bare engine: batched INSERT")["per_second"]
    copy = next(r for r in rows if r["path"] == "bare engine: COPY")["per_second"]
    for row in rows:
        model = row["path"].startswith("raw model")
        row["vs_bare_insert"] = None if model else row["per_second"] / base
        row["vs_bare_copy"] = None if model else row["per_second"] / copy
    embedding = rows[-1]["per_second"]
    vs_model = {r["path"]: embedding / r["per_second"] for r in rows if r["path"].startswith("raw model")}
    return {
        "options": options_dict(options),
        "database": versions,
        "tuning": tuning,
        "rows": rows,
        "embedding_included_vs_raw_model": vs_model,
        "settle_seconds_after_vector_load": settle,
        "processing_states": states,
        "vectors_computed_now": cache.computed,
        "corpus": {"records": len(corpus.records), "distinct_texts": len({r.text for r in corpus.records})},
    }


def render(result: dict[str, Any]) -> str:
    headers = [
        "path",
        "records",
        "seconds",
        "records/s",
        "batch p50 ms",
        "batch p95 ms",
        "× bare INSERT",
        "× bare COPY",
    ]
    body = [
        [
            r["path"],
            r["records"],
            r["seconds"],
            r["per_second"],
            r["batch_p50_ms"],
            r["batch_p95_ms"],
            r["vs_bare_insert"],
            r.get("vs_bare_copy"),
        ]
        for r in result["rows"]
    ]
    ratios = "".join(
        f"\nembedding included ÷ {path}: {ratio:.2f}"
        for path, ratio in result["embedding_included_vs_raw_model"].items()
    )
    return table(headers, body, digits=2) + "\n" + ratios
