"""`python -m bench ingest --records N`: write throughput through `POST /records`, beside the bare engine.

One run measures, on one fresh database:
1. the service with precomputed vectors (embedding excluded): N records in batches of 1,000;
2. interleaved with it batch by batch, the bare engine on tables shaped like `records` with the
   same indexes: the same rows by batched INSERT, by COPY straight into the table, and by COPY
   through a stage, batches of 1,000, one transaction each, and by batched INSERT into such a
   table without its HNSW index (how much of the bound is the vector index);
3. the service embedding itself (embedding included): the records of a corpus generated with
   `--embed-records` records, less its link records (about a fifth: their collection embeds
   nothing), written without vectors, from the first POST until the in-process worker has made
   every one `ready`;
4. the raw model (`LocalEmbedder`, one thread) on those same texts sorted by length, at batch 64
   and at the service's default batch (8), before the service starts so nothing competes with it;
5. the bulk path: `--import-records` more records (another seed and entities of their own: new
   texts, new lanes, as a bare table with one current row per lane can take them) with vectors,
   as a JSON Lines file written by `memseek import --jobs 2` (a subprocess, timed end to end:
   start-up, the check pass, the write pass), beside bare COPY of the same rows from one session
   and from two, each into its own table holding the first phase's rows; in two halves, the
   second in the reverse order.
"""

from __future__ import annotations

import json
import re
import tempfile
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import psycopg

from bench.corpus import LINKS
from bench.corpus import Corpus
from bench.corpus import CorpusSpec
from bench.corpus import generate
from bench.engine import BARE_PATHS
from bench.engine import BarePath
from bench.engine import bare_rows
from bench.engine import raw_connection
from bench.load import processing_counts
from bench.load import wait_processed
from bench.load import with_vector
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
    import_records: int = 10_000
    import_jobs: int = 2


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
    bare: Sequence[Any],
    batch: int,
) -> dict[str, list[float]]:
    """Batch by batch, the service and every bare path write the same records, each into its own
    table, in an order that rotates per batch: every path sees the same table sizes and the same
    machine load (the cores are shared), so their ratios hold even when the load drifts."""
    bodies = [r.record_in() for r in corpus.records]
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


def _renamed(corpus: Corpus, prefix: str = "bulk-") -> Corpus:
    """`corpus` about entities of its own: none of its lanes is one the first phase wrote."""
    records = tuple(replace(r, entity=prefix + r.entity) for r in corpus.records)
    return replace(corpus, records=records, entities=tuple(prefix + e for e in corpus.entities))


IMPORTED = re.compile(r"imported (\d+) records in ([0-9.]+) s")
CHECKED = re.compile(r"records checked in ([0-9.]+) s")
BULK_COPY = {
    sessions: BarePath("COPY", f"bench_bulk_copy_{sessions}", copy=True, direct=True) for sessions in (1, 2)
}
"""Bare COPY straight into a table shaped like `records`, from one session and from two."""


def _bare_copy(path: BarePath, conns: Sequence[psycopg.Connection], rows: Sequence[Any], batch: int) -> float:
    """Seconds for `rows` in batches of `batch`, dealt in turn to `conns`, one thread each."""
    starts = range(0, len(rows), batch)

    def session(n: int) -> None:
        for start in starts[n :: len(conns)]:
            path.write(conns[n], rows[start : start + batch])

    started = time.perf_counter()
    with ThreadPoolExecutor(len(conns)) as pool:
        for done in [pool.submit(session, n) for n in range(len(conns))]:
            done.result()
    return time.perf_counter() - started


def _import(service: Service, bodies: Sequence[dict[str, Any]], jobs: int) -> tuple[float, float, float]:
    """(seconds end to end, of the check pass, of the write pass) of `memseek import` of `bodies`."""
    with tempfile.TemporaryDirectory(prefix="memseek-import-") as folder:
        source = Path(folder) / "records.jsonl"
        source.write_text("".join(json.dumps(body) + "\n" for body in bodies), encoding="utf-8")
        started = time.perf_counter()
        done = service.command("import", str(source), "--jobs", str(jobs))
        seconds = time.perf_counter() - started
    written, checked = IMPORTED.search(done.stdout), CHECKED.search(done.stdout)
    if written is None or checked is None or int(written.group(1)) != len(bodies):
        raise RuntimeError(f"memseek import wrote other than {len(bodies)} records: {done.stdout}")
    return seconds, float(checked.group(1)), float(written.group(2))


def bulk_loads(
    service: Service,
    conn: psycopg.Connection,
    first: Sequence[Any],
    corpus: Corpus,
    vectors: Sequence[np.ndarray | None],
    options: IngestOptions,
) -> list[dict[str, Any]]:
    """Step 5 of the module docstring: rows of records/s, each with its ratio to bare COPY from
    one session in the same phase."""
    bodies = [with_vector(r.record_in(), v) for r, v in zip(corpus.records, vectors, strict=True)]
    bare = bare_rows(corpus, vectors, service.workspace_id)
    sessions = {n: [raw_connection(libpq_url(service.database_url)) for _ in range(n)] for n in BULK_COPY}
    for path in BULK_COPY.values():
        path.create(conn)
        _bare_copy(path, [conn], first, options.batch)  # the first phase's rows, untimed
    seconds = {"import": 0.0, "check pass": 0.0, "write pass": 0.0, 1: 0.0, 2: 0.0}
    half = len(bodies) // 2
    for part, order in ((slice(0, half), (1, 2, "import")), (slice(half, None), ("import", 2, 1))):
        for step in order:
            if step == "import":
                whole, check, write = _import(service, bodies[part], options.import_jobs)
                seconds["import"] += whole
                seconds["check pass"] += check
                seconds["write pass"] += write
            else:
                seconds[step] += _bare_copy(BULK_COPY[step], sessions[step], bare[part], options.batch)
        print(f"  bulk path: {part.stop or len(bodies)}/{len(bodies)} records", flush=True)
    for path in BULK_COPY.values():
        path.drop(conn)
    for conns in sessions.values():
        for session in conns:
            session.close()
    names = {
        "import": f"memseek import --jobs {options.import_jobs}, vectors supplied (end to end)",
        "write pass": f"memseek import --jobs {options.import_jobs}: its write pass",
        1: "bare engine: COPY, 1 session",
        2: "bare engine: COPY, 2 sessions",
    }
    rows = [
        _rate_row(name, len(bodies), seconds[step]) | {"vs_bare_copy_1_session": seconds[1] / seconds[step]}
        for step, name in names.items()
    ]
    rows[0]["check_pass_seconds"] = seconds["check pass"]  # of the end-to-end time, as the import printed it
    return rows


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
            bare = bare_rows(corpus, vectors, service.workspace_id)  # `corpus` as the bare tables take it
            batch_ms = interleaved_loads(service, conn, corpus, vectors, bare, options.batch)
            bulk = []
            if options.import_records:
                more = _renamed(
                    generate(replace(spec, records=options.import_records, seed=options.seed + 2000))
                )
                bulk = bulk_loads(service, conn, bare, more, corpus_vectors(more, cache), options)
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
        "bulk_rows": bulk,
        "embedding_included_vs_raw_model": vs_model,
        "settle_seconds_after_vector_load": settle,
        "processing_states": states,
        "vectors_computed_now": cache.computed,
        "corpus": {"records": len(corpus.records), "distinct_texts": len({r.text for r in corpus.records})},
    }


def render(result: dict[str, Any]) -> str:
    headers_main = [
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
    bulk = [
        [r["path"], r["records"], r["seconds"], r["per_second"], r["vs_bare_copy_1_session"]]
        for r in result.get("bulk_rows", [])
    ]
    bulk_table = ""
    if bulk:
        headers = ["bulk path (its own phase)", "records", "seconds", "records/s", "× bare COPY, 1 session"]
        check = result["bulk_rows"][0]["check_pass_seconds"]
        bulk_table = (
            "\n\n"
            + table(headers, bulk, digits=2)
            + f"\nof the end-to-end time, the check pass: {check:.1f} s"
        )
    return table(headers_main, body, digits=2) + "\n" + ratios + bulk_table
