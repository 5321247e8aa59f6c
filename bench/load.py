"""Loading data through the real write path: `POST /records` in batches, then wait until ready."""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from bench.client import check
from bench.service import Service
from bench.vectors import as_json_vector
from memseek.models.local import MODEL_ID

BATCH = 1000


@dataclass(frozen=True, slots=True)
class Written:
    """Ids in input order, and how long each `POST /records` took (client wall time)."""

    ids: tuple[str, ...]
    batch_ms: tuple[float, ...]

    @property
    def seconds(self) -> float:
        return sum(self.batch_ms) / 1000

    @property
    def per_second(self) -> float:
        return len(self.ids) / self.seconds if self.batch_ms else float("nan")


def with_vector(body: dict[str, Any], vector: np.ndarray | None) -> dict[str, Any]:
    """`body` plus a precomputed embedding (design §3) when `vector` is given."""
    if vector is None:
        return body
    return {**body, "embedding": as_json_vector(vector), "embedding_model": MODEL_ID}


def write_records(
    service: Service,
    bodies: Sequence[dict[str, Any]],
    vectors: Sequence[np.ndarray | None] | None = None,
    batch: int = BATCH,
    progress: str = "",
) -> Written:
    """POST `bodies` (with `vectors` where given) in batches; JSON encoding is not timed."""
    ids: list[str] = []
    timings: list[float] = []
    for start in range(0, len(bodies), batch):
        part = [
            with_vector(b, vectors[start + i] if vectors is not None else None)
            for i, b in enumerate(bodies[start : start + batch])
        ]
        payload = json.dumps({"records": part}).encode()
        response = service.client.post("/records", payload)
        created = check(response, "POST /records")
        ids += [item["id"] for item in created["records"]]
        timings.append(response.client_ms)
        if progress and (len(timings) % 10 == 0 or start + batch >= len(bodies)):
            rate = len(ids) / (sum(timings) / 1000)
            print(f"  {progress}: {len(ids)}/{len(bodies)} records ({rate:.0f}/s)", flush=True)
    return Written(tuple(ids), tuple(timings))


def processing_counts(service: Service) -> dict[str, int]:
    """How many records of the workspace are `pending`, `ready` and `failed`."""
    with service.connect() as conn:
        rows = conn.execute(
            "SELECT processing, count(*) FROM records WHERE workspace_id = %s GROUP BY processing",
            (service.workspace_id,),
        ).fetchall()
    return {"pending": 0, "ready": 0, "failed": 0} | {state: int(n) for state, n in rows}


def wait_processed(service: Service, timeout: float = 3600.0, poll: float = 0.25) -> float:
    """Seconds until no record of the workspace is pending (raises after `timeout`)."""
    started = time.perf_counter()
    while processing_counts(service)["pending"]:
        if time.perf_counter() - started > timeout:
            raise TimeoutError(f"records still pending after {timeout:.0f} s")
        time.sleep(poll)
    return time.perf_counter() - started


def retract(service: Service, ids: Sequence[str]) -> float:
    """Retract each record through `POST /records/{id}/retract`; returns seconds taken."""
    started = time.perf_counter()
    for record_id in ids:
        check(
            service.client.post(f"/records/{record_id}/retract", {"reason": "bench: retracted"}),
            "POST /records/{id}/retract",
        )
    return time.perf_counter() - started


LOADED_TABLES = ("records", "record_postings", "text_corpus", "text_lexemes")
"""The tables a load writes (the postings and BM25 statistics beside each record)."""


def analyze(service: Service) -> None:
    """VACUUM ANALYZE the tables a load wrote, as autovacuum would after a bulk load: measured
    before autovacuum got to them, the first mode would run on postings without statistics and
    beside the autovacuum workers that start meanwhile (docs/search.md, "BM25")."""
    with service.connect() as conn:
        conn.execute(f"VACUUM ANALYZE {', '.join(LOADED_TABLES)}")
