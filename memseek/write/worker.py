"""Processing workers (design "Processing and enrichments"): claim, compute, write, in ONE transaction.

`process_batch` claims due queue rows with `FOR UPDATE SKIP LOCKED` (so any number of workers can
run side by side), embeds all texts of the batch per model in batched calls, runs the missing
enrichments through the chat model, and writes the results, all inside one transaction. A worker
that dies at any point rolls back: its queue rows become claimable again and no half-written
record is visible. Work is only ever published by the commit.

Failures are per record: the attempt count goes up and the record waits `RetryPolicy.delay`
(exponential backoff); after `max_attempts` tries it is `failed` with the error and leaves the
queue. Partial results (an embedding computed before an enrichment failed) are kept, since the
record stays `pending` and invisible until everything succeeded.

Workers connect as the login role, not `memseek_scoped`: they serve every workspace. Every
statement still names the workspace of each row it touches.

The same loop runs the batched erasures (`erasures.work_once`: one batch of the oldest running
erasure per round) and, every `retention.SWEEP_SECONDS`, the retention sweep that logs them.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from dataclasses import field
from typing import Any
from uuid import UUID

import psycopg
import sqlalchemy as sa
from pgvector.sqlalchemy import Vector
from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.engine import Connection

from memseek import citus
from memseek.catalog.conf import LlmLabel
from memseek.catalog.conf import LlmScore
from memseek.catalog.models import Collection
from memseek.db import DATABASE_OUTAGES
from memseek.db import STATEMENT_LABEL
from memseek.errors import MemseekError
from memseek.jsontext import json_text
from memseek.logs import first_line
from memseek.logs import log_throttled
from memseek.models import ModelOutputInvalid
from memseek.models.vectors import checked_vector
from memseek.runtime import Runtime
from memseek.schema import EMBEDDING_DIM
from memseek.schema import processing_queue
from memseek.schema import records
from memseek.write import erasures
from memseek.write import retention
from memseek.write import store
from memseek.write import text_stats
from memseek.write.enrich import enrich
from memseek.write.prepare import missing_enrichments
from memseek.write.progress import BATCHES

log = logging.getLogger(__name__)

STOP_CHECK = 0.25
"""Seconds an idle worker waits for a notification before looking at its stop flag again."""
CLAIM = 256
"""Records claimed per transaction. The local embedder sorts a claim by length and pads each call
to its longest text, so the larger the claim, the closer in length the texts of one call and the
less model time goes to padding. A claim's records become ready together, one claim's model time
apart; a single new record is claimed on its own."""
IN_PROCESS_WORKERS = 2
"""Worker threads `memseek serve` runs. Batches compute one at a time (`_COMPUTING`), so two threads
overlap one batch's database writes with the next batch's model time instead of running the
model twice at once."""
_COMPUTING = threading.Lock()
"""One batch of this process computes at a time: the local model uses one core (design: Models)."""
CHAT_THREADS = 4
"""Concurrent chat calls per batch: enrichments are one call per record, mostly waiting on the network."""


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    """How often and how patiently a failing record is retried."""

    max_attempts: int = 5
    base_delay: float = 2.0
    max_delay: float = 600.0

    def delay(self, attempts: int) -> float:
        """Seconds to wait after the `attempts`-th failure: base · 2^(attempts-1), capped."""
        return float(min(self.max_delay, self.base_delay * 2 ** (attempts - 1)))


@dataclass(frozen=True, slots=True)
class Claimed:
    """One claimed queue row with what processing needs from its record."""

    workspace_id: UUID
    id: UUID
    attempts: int
    collection: str
    collection_version: int
    text: str
    has_vector: bool
    scores: dict[str, Any]
    annotations: dict[str, Any]


@dataclass(slots=True)
class Outcome:
    """What processing produced for one record; `error` set means this attempt failed."""

    embedding: list[float] | None = None
    embedding_model: str | None = None
    scores: dict[str, float] = field(default_factory=dict)
    annotations: dict[str, Any] = field(default_factory=dict)
    error: str | None = None

    def fail(self, message: str) -> None:
        self.error = message if self.error is None else f"{self.error}; {message}"


q = processing_queue.c
r = records.c


def claim(conn: Connection, limit: int) -> list[Claimed]:
    """Lock up to `limit` due queue rows no other worker holds, oldest due first (on Citus, those
    of the workspace of the oldest due row: `citus.claim_in_one_workspace`)."""
    stmt = citus.claim_in_one_workspace(
        conn, _claim_statement(limit), _OLDEST_DUE, q.workspace_id, r.workspace_id
    )
    return [] if stmt is None else [Claimed(*row) for row in conn.execute(stmt)]


_OLDEST_DUE = (
    sa.select(q.workspace_id)
    .where(q.next_attempt_at <= sa.func.now())
    .order_by(q.next_attempt_at, q.record_id)
    .limit(1)
    .prefix_with(store.COMMENT.format(route="worker due"), dialect="postgresql")
)


def _claim_statement(limit: int) -> sa.Select[Any]:
    return (
        sa.select(
            q.workspace_id,
            q.record_id,
            q.attempts,
            r.collection,
            r.collection_version,
            r.text,
            r.embedding.is_not(None).label("has_vector"),
            r.scores,
            r.annotations,
        )
        .join(records, sa.and_(r.workspace_id == q.workspace_id, r.id == q.record_id))
        .where(q.next_attempt_at <= sa.func.now())
        .order_by(q.next_attempt_at, q.record_id)
        .limit(limit)
        .with_for_update(of=processing_queue, skip_locked=True)
        .prefix_with(store.COMMENT.format(route="worker claim"), dialect="postgresql")
    )


def _collection(runtime: Runtime, item: Claimed) -> Collection:
    return runtime.catalog.collection(item.collection, item.collection_version)


def _embed(runtime: Runtime, batch: Sequence[Claimed], outcomes: dict[UUID, Outcome]) -> None:
    """One batched embedding call per model for the records without a vector."""
    by_alias: dict[str, list[Claimed]] = {}
    for item in batch:
        alias = _collection(runtime, item).embedding
        if alias is not None and not item.has_vector:
            by_alias.setdefault(alias, []).append(item)
    for alias, items in by_alias.items():
        try:
            embedder = runtime.models.embedder(alias)
            vectors = embedder.embed([item.text for item in items])
            if len(vectors) != len(items):
                raise ModelOutputInvalid(f"expected {len(items)} vectors, got {len(vectors)}")
        except MemseekError as exc:
            for item in items:
                outcomes[item.id].fail(f"embedding ({alias}): {exc.message}")
            continue
        for item, vector in zip(items, vectors, strict=True):
            try:  # an unusable vector fails its own record, not the batch's statement
                outcomes[item.id].embedding = list(checked_vector(vector, alias))
                outcomes[item.id].embedding_model = embedder.model_id
            except ModelOutputInvalid as exc:
                outcomes[item.id].fail(f"embedding ({alias}): {exc.message}")


def _enrich_all(runtime: Runtime, batch: Sequence[Claimed], outcomes: dict[UUID, Outcome]) -> None:
    """Run every missing model enrichment, a few chat calls at a time."""
    catalog = runtime.catalog
    jobs = [
        (item, name, decl)
        for item in batch
        for name in missing_enrichments(catalog, _collection(runtime, item), item.scores, item.annotations)
        if isinstance(decl := catalog.enrichments[name], LlmScore | LlmLabel)  # what models compute
    ]
    if not jobs:
        return
    with ThreadPoolExecutor(max_workers=CHAT_THREADS, thread_name_prefix="memseek-enrich") as pool:
        futures = [
            (item, name, pool.submit(enrich, runtime.models, name, decl, item.text))
            for item, name, decl in jobs
        ]
        for item, name, future in futures:
            try:
                target, key, value = future.result()
            except MemseekError as exc:
                outcomes[item.id].fail(f"enrichment {name!r}: {exc.message}")
                continue
            getattr(outcomes[item.id], target)[key] = value


def compute(runtime: Runtime, batch: Sequence[Claimed]) -> dict[UUID, Outcome]:
    """Embeddings and enrichments for a claimed batch; model failures become per-record errors."""
    outcomes = {item.id: Outcome() for item in batch}
    _embed(runtime, batch, outcomes)
    _enrich_all(runtime, batch, outcomes)
    return outcomes


def _lock_records(conn: Connection, batch: Sequence[Claimed]) -> None:
    """Row-lock the batch's records in (workspace, id) order, the order writers use too."""
    pairs = sa.tuple_(r.workspace_id, r.id).in_([(item.workspace_id, item.id) for item in batch])
    conn.execute(sa.select(r.id).where(pairs).order_by(r.workspace_id, r.id).with_for_update())


def _write_records(
    conn: Connection, batch: Sequence[Claimed], outcomes: dict[UUID, Outcome], states: dict[UUID, str]
) -> None:
    """Store results and the new processing state of every record of the batch (one statement)."""

    def values(get: Any, item_type: Any) -> tuple[list[Any], Any]:
        return [get(item, outcomes[item.id]) for item in batch], item_type

    u = store.unnest(
        {
            "ws": values(lambda i, o: i.workspace_id, store.UUID_T),
            "id": values(lambda i, o: i.id, store.UUID_T),
            "state": values(lambda i, o: states[i.id], sa.Text),
            "error": values(lambda i, o: o.error if states[i.id] == "failed" else None, sa.Text),
            "vector": values(lambda i, o: None if o.embedding is None else json_text(o.embedding), sa.Text),
            "model": values(lambda i, o: o.embedding_model, sa.Text),
            "scores": values(lambda i, o: json_text(o.scores), sa.Text),
            "annotations": values(lambda i, o: json_text(o.annotations), sa.Text),
        },
        "u",
    ).c
    stmt = (
        sa.update(records)
        .where(r.workspace_id == u.ws, r.id == u.id, r.workspace_id.in_(_workspaces(batch)))
        .values(
            processing=u.state,
            processing_error=u.error,
            embedding=sa.func.coalesce(sa.cast(u.vector, Vector(EMBEDDING_DIM)), r.embedding),
            embedding_model=sa.func.coalesce(u.model, r.embedding_model),
            scores=r.scores.op("||")(sa.cast(u.scores, JSONB)),
            annotations=r.annotations.op("||")(sa.cast(u.annotations, JSONB)),
        )
    )
    conn.execute(stmt)


def _write_queue(
    conn: Connection,
    batch: Sequence[Claimed],
    outcomes: dict[UUID, Outcome],
    states: dict[UUID, str],
    policy: RetryPolicy,
) -> None:
    """Finished records leave the queue; the rest wait their backoff."""
    done = [item for item in batch if states[item.id] != "pending"]
    retry = [item for item in batch if states[item.id] == "pending"]
    if done:
        pairs = sa.tuple_(q.workspace_id, q.record_id).in_([(i.workspace_id, i.id) for i in done])
        conn.execute(sa.delete(processing_queue).where(pairs))
    if retry:
        _reschedule(conn, retry, [outcomes[i.id].error or "" for i in retry], policy)


def _workspaces(items: Sequence[Claimed]) -> list[UUID]:
    """The workspaces of `items`, named as constants beside the per-row join: Citus routes an
    UPDATE by the workspaces it can read from the statement (one, from a Citus claim)."""
    return sorted({item.workspace_id for item in items})


def _reschedule(
    conn: Connection, items: Sequence[Claimed], errors: Sequence[str], policy: RetryPolicy
) -> None:
    u = store.unnest(
        {
            "ws": ([i.workspace_id for i in items], store.UUID_T),
            "id": ([i.id for i in items], store.UUID_T),
            "attempts": ([i.attempts + 1 for i in items], sa.Integer),
            "delay": ([policy.delay(i.attempts + 1) for i in items], sa.Float),
            "error": (list(errors), sa.Text),
        },
        "u",
    ).c
    stmt = (
        sa.update(processing_queue)
        .where(q.workspace_id == u.ws, q.record_id == u.id, q.workspace_id.in_(_workspaces(items)))
        .values(
            attempts=u.attempts,
            # now() alone, then only immutable steps: Citus runs no STABLE function over a
            # column in an UPDATE on its shards, and evaluates a bare now() first.
            next_attempt_at=sa.func.to_timestamp(sa.extract("epoch", sa.func.now()) + u.delay),
            last_error=u.error,
        )
    )
    conn.execute(stmt)


def _states(batch: Sequence[Claimed], outcomes: dict[UUID, Outcome], policy: RetryPolicy) -> dict[UUID, str]:
    def state(item: Claimed) -> str:
        if outcomes[item.id].error is None:
            return "ready"
        return "failed" if item.attempts + 1 >= policy.max_attempts else "pending"

    return {item.id: state(item) for item in batch}


def process_batch(runtime: Runtime, limit: int = CLAIM, policy: RetryPolicy | None = None) -> int:
    """Claim, process and settle up to `limit` due records in one transaction; returns how many."""
    policy = policy or RetryPolicy()
    claimed: list[Claimed] = []
    try:
        with runtime.engine.begin() as conn:
            claimed = claim(conn, limit)
            if not claimed:
                return 0
            with _COMPUTING:
                outcomes = compute(runtime, claimed)
            states = _states(claimed, outcomes, policy)
            _lock_records(conn, claimed)
            _write_records(conn, claimed, outcomes, states)
            _write_queue(conn, claimed, outcomes, states, policy)
    except Exception as exc:
        if not claimed:
            raise
        _log_failed_batch(exc, len(claimed))
        _batch_failed(runtime, claimed, _public_error(exc), policy)
    BATCHES.settled()
    return len(claimed)


def _log_failed_batch(exc: Exception, count: int) -> None:
    """A database outage fails every batch the same way: one line per interval, no traceback;
    anything else is a defect, logged in full."""
    if not _database_outage(exc):
        log.exception("processing batch of %d records failed; it will be retried", count)


def _database_outage(exc: Exception) -> bool:
    """Whether `exc` is a database outage (then logged once per interval, without a traceback)."""
    if not isinstance(exc, DATABASE_OUTAGES):
        return False
    log_throttled(
        log,
        logging.WARNING,
        "worker-database",
        "processing paused, database unavailable: %s",
        first_line(exc),
    )
    return True


def _public_error(exc: Exception) -> str:
    """What a record's `processing_error` may say of a failed batch: our own errors' messages,
    never a driver's text (it quotes the statement, its parameters and the workspace id)."""
    if isinstance(exc, MemseekError):
        return exc.message
    return "the batch could not be stored (an internal error; the service log has the details)"


def _batch_failed(runtime: Runtime, batch: Sequence[Claimed], error: str, policy: RetryPolicy) -> None:
    """After a rolled-back batch: count the attempt, so a poison batch cannot loop forever."""
    outcomes = {item.id: Outcome(error=error[:2000]) for item in batch}
    states = _states(batch, outcomes, policy)
    with runtime.engine.begin() as conn:
        still_queued = _reclaim(conn, batch)
        if still_queued:
            _lock_records(conn, still_queued)
            failed = [item for item in still_queued if states[item.id] == "failed"]
            if failed:
                _write_records(conn, failed, outcomes, states)
            _write_queue(conn, still_queued, outcomes, states, policy)


def _reclaim(conn: Connection, batch: Sequence[Claimed]) -> list[Claimed]:
    """The batch's queue rows that still exist and no other worker has claimed since."""
    pairs = sa.tuple_(q.workspace_id, q.record_id).in_([(i.workspace_id, i.id) for i in batch])
    stmt = sa.select(q.record_id).where(pairs).with_for_update(skip_locked=True)
    held = set(conn.scalars(stmt))
    return [item for item in batch if item.id in held]


class BackgroundWorker:
    """Daemon threads running batches (processing, erasures), the retention sweep every
    `retention.SWEEP_SECONDS` (and at once when a write asks, `retention.SWEEP_NOW`) and the
    compaction of BM25 statistics (`text_stats`) when idle or every `text_stats.COMPACT_SECONDS`;
    each sleeps when idle and wakes on NOTIFY or after `idle_seconds`."""

    def __init__(
        self,
        runtime: Runtime,
        batch: int = CLAIM,
        policy: RetryPolicy | None = None,
        idle_seconds: float = 1.0,
        threads: int = 1,
    ) -> None:
        self.runtime, self.batch, self.policy, self.idle_seconds = runtime, batch, policy, idle_seconds
        self._stop = threading.Event()
        self._next_sweep = time.monotonic()  # the first round sweeps
        self._next_compaction = time.monotonic() + text_stats.COMPACT_SECONDS
        self._threads = [
            threading.Thread(target=self.run, name="memseek-worker", daemon=True) for _ in range(threads)
        ]

    def start(self) -> BackgroundWorker:
        for thread in self._threads:
            thread.start()
        return self

    def stop(self, timeout: float = 10.0) -> None:
        """Ask the loops to finish their current batches and exit."""
        self._stop.set()
        deadline = time.monotonic() + timeout
        for thread in self._threads:
            if thread.is_alive():
                thread.join(max(0.0, deadline - time.monotonic()))

    def run(self) -> None:
        """Process until stopped; errors are logged and retried after a pause."""
        STATEMENT_LABEL.set("worker")
        with _Listener(self.runtime) as listener:
            while not self._stop.is_set():
                try:
                    busy = self._step()
                except Exception as exc:
                    if not _database_outage(exc):
                        log.exception("worker loop error")
                    busy = False
                if not busy and retention.SWEEP_NOW in listener.wait(self.idle_seconds, self._stop):
                    self._next_sweep = time.monotonic()

    def _step(self) -> bool:
        """One round: a processing batch, a batch of the oldest erasure, and the retention sweep
        when it is due; whether there was work."""
        busy = process_batch(self.runtime, self.batch, self.policy) > 0
        busy = erasures.work_once(self.runtime) or busy
        if time.monotonic() >= self._next_sweep:
            self._next_sweep = time.monotonic() + retention.SWEEP_SECONDS
            busy = bool(retention.sweep(self.runtime)) or busy
        if not busy or time.monotonic() >= self._next_compaction:  # idle, or busy for long
            self._next_compaction = time.monotonic() + text_stats.COMPACT_SECONDS
            text_stats.compact_due(self.runtime.engine)
        return busy


class _Listener:
    """LISTEN on the queue channel, so idle workers wake as soon as records are enqueued."""

    def __init__(self, runtime: Runtime) -> None:
        self.url = runtime.engine.url.set(drivername="postgresql").render_as_string(hide_password=False)
        self.conn: psycopg.Connection[Any] | None = None

    def __enter__(self) -> _Listener:
        try:
            self.conn = psycopg.connect(self.url, autocommit=True, application_name="memseek-worker")
            self.conn.execute(f"LISTEN {store.QUEUE_CHANNEL}")
        except psycopg.Error as exc:
            log_throttled(
                log, logging.WARNING, "worker-listen", "LISTEN unavailable; polling: %s", first_line(exc)
            )
            self.conn = None
        return self

    def __exit__(self, *exc: object) -> None:
        if self.conn is not None:
            self.conn.close()

    def wait(self, seconds: float, stop: threading.Event) -> set[str]:
        """Return after `seconds`, on notifications (their payloads), or soon after `stop` is set.
        The generator is read to its end: one commit's notifications arrive together, and those
        after a `return` from inside it would be dropped."""
        deadline = time.monotonic() + seconds
        while not stop.is_set() and (left := deadline - time.monotonic()) > 0:
            if self.conn is None:
                stop.wait(left)
                return set()
            try:
                payloads = {
                    n.payload for n in self.conn.notifies(timeout=min(left, STOP_CHECK), stop_after=1)
                }
                if payloads:
                    return payloads
            except psycopg.Error as exc:
                log_throttled(
                    log,
                    logging.WARNING,
                    "worker-listen",
                    "lost the LISTEN connection; polling: %s",
                    first_line(exc),
                )
                self.conn = None
        return set()


def start_background_worker(runtime: Runtime, batch: int = CLAIM) -> BackgroundWorker:
    """Start the in-process worker `memseek serve` runs (`IN_PROCESS_WORKERS` daemon threads)."""
    return BackgroundWorker(runtime, batch, threads=IN_PROCESS_WORKERS).start()


def run_worker(
    runtime: Runtime, batch: int | None = None, once: bool = False, policy: RetryPolicy | None = None
) -> int:
    """`memseek worker`: process records and erasures in the foreground, sweeping for expired
    records; `once` sweeps once and stops when nothing is due (returns the records processed).
    `batch` defaults to `CLAIM`."""
    batch = batch or CLAIM
    if not once:
        BackgroundWorker(runtime, batch, policy).run()
        return 0
    STATEMENT_LABEL.set("worker")
    retention.sweep(runtime)
    total = 0
    while (count := process_batch(runtime, batch, policy)) > 0 or erasures.work_once(runtime):
        total += count
    return total
