"""The processing queue and workers (design "Processing and enrichments"), against real PostgreSQL.

Models are real: the packaged local embedder, and HTTP providers talking to a local server that
speaks the OpenAI protocol (tests/openai_server.py).
"""

from __future__ import annotations

import json
import math
import signal
import subprocess
import threading
import time
from collections.abc import Iterator
from datetime import UTC
from datetime import datetime
from typing import Any
from uuid import UUID

import pytest
import sqlalchemy as sa
from flask import Flask
from sqlalchemy.engine import Engine

from memseek.db import workspace_transaction
from memseek.runtime import Runtime
from memseek.write.touch import touch
from memseek.write.worker import BackgroundWorker
from memseek.write.worker import RetryPolicy
from memseek.write.worker import process_batch
from tests.conftest import Client
from tests.conftest import Tenant
from tests.conftest import client_for
from tests.helpers import cli_env
from tests.helpers import fetch
from tests.helpers import last_line
from tests.helpers import memseek
from tests.helpers import start_memseek
from tests.helpers import with_models
from tests.helpers import written
from tests.integration.write_support import count
from tests.integration.write_support import record_in
from tests.openai_server import OpenAIServer

NOW = RetryPolicy(max_attempts=3, base_delay=0.0)
"""Retries due immediately, so a test can run attempt after attempt."""


def queue(engine: Engine) -> list[Any]:
    with engine.connect() as conn:
        return conn.execute(
            sa.text(
                "SELECT record_id, attempts, last_error, next_attempt_at - now() AS wait"
                " FROM processing_queue"
            )
        ).all()


def vector_of(engine: Engine, record_id: str) -> list[float] | None:
    with engine.connect() as conn:
        value = conn.execute(
            sa.text("SELECT embedding::text FROM records WHERE id = :id"), {"id": record_id}
        ).scalar_one()
    return None if value is None else [float(x) for x in value.strip("[]").split(",")]


def answer_enrichments(score: Any = 4, label: Any = "good") -> Any:
    """A chat reply that answers each enrichment prompt by what its system prompt asks for."""

    def reply(messages: list[dict[str, Any]]) -> str:
        asked_score = '"score"' in messages[0]["content"]
        return json.dumps({"score": score} if asked_score else {"label": label})

    return reply


def worker_env(runtime: Runtime) -> dict[str, str]:
    """The environment of a `memseek worker` command over `runtime`'s database and catalog."""
    settings = runtime.settings
    return cli_env(DATABASE_URL=str(settings.database_url), MEMSEEK_CATALOG=str(settings.memseek_catalog))


@pytest.fixture
def remote(write_runtime: Runtime, openai_server: OpenAIServer) -> Runtime:
    """The `w_` runtime whose HTTP models talk to the local OpenAI-protocol server."""
    return with_models(write_runtime, openai_server.environ())


@pytest.fixture
def rclient(remote: Runtime, tenant: Tenant) -> Client:
    return client_for(remote, tenant)


class TestLocalEmbedder:
    def test_batch_embeds_and_readies(self, write_runtime: Runtime, wclient: Client, db: Engine) -> None:
        texts = ["the cat sat on the mat", "a kitten on a rug", "quarterly revenue grew"]
        results = written(wclient, *(record_in("w_local", text=t) for t in texts))
        assert [r["processing"] for r in results] == ["pending"] * 3
        assert process_batch(write_runtime, 10) == 3
        assert queue(db) == []
        records = [fetch(wclient, r["id"]) for r in results]
        assert [(r["processing"], r["processing_error"]) for r in records] == [("ready", None)] * 3
        vectors = [vector_of(db, r["id"]) for r in results]
        expected = write_runtime.models.embedder("default").embed(texts)
        for got, want in zip(vectors, expected, strict=True):
            assert got is not None and max(abs(a - b) for a, b in zip(got, want, strict=True)) < 1e-6
        cat, kitten, revenue = vectors
        assert _cosine(cat, kitten) > _cosine(cat, revenue)

    def test_nothing_due_is_zero(self, write_runtime: Runtime, db: Engine) -> None:
        assert process_batch(write_runtime, 10) == 0


def _cosine(a: Any, b: Any) -> float:
    dot = sum(x * y for x, y in zip(a, b, strict=True))
    return dot / math.sqrt(sum(x * x for x in a) * sum(y * y for y in b))


class TestHttpModels:
    def test_one_embedding_call_per_batch_and_enrichments(
        self, remote: Runtime, rclient: Client, db: Engine, openai_server: OpenAIServer
    ) -> None:
        openai_server.reply_with(*[answer_enrichments()] * 10)
        results = written(rclient, *(record_in("w_remote", text=f"note {i}") for i in range(5)))
        assert process_batch(remote, 50) == 5
        paths = [r.path for r in openai_server.requests]
        assert paths.count("/v1/embeddings") == 1 and paths.count("/v1/chat/completions") == 10
        record = fetch(rclient, results[0]["id"])
        assert record["processing"] == "ready"
        assert record["scores"] == {"w_score": 4} and record["annotations"] == {"w_label": {"label": "good"}}
        with db.connect() as conn:
            models = set(conn.scalars(sa.text("SELECT embedding_model FROM records")))
        assert models == {"text-embedding-3-small"}

    def test_only_missing_enrichments_run(
        self, remote: Runtime, rclient: Client, db: Engine, openai_server: OpenAIServer
    ) -> None:
        openai_server.reply_with(answer_enrichments())
        [result] = written(rclient, record_in("w_chat", scores={"w_score": 1.5}))
        process_batch(remote, 10)
        assert [r.path for r in openai_server.requests] == ["/v1/chat/completions"]
        assert "good" in openai_server.requests[0].body["messages"][0]["content"]
        record = fetch(rclient, result["id"])
        assert record["scores"] == {"w_score": 1.5}
        assert record["annotations"] == {"w_label": {"label": "good"}}

    @pytest.mark.parametrize(
        ("reply", "invalid"),
        [
            pytest.param(answer_enrichments(score=9), {"w_score"}, id="score-out-of-range"),
            pytest.param(answer_enrichments(score="4"), {"w_score"}, id="score-string"),
            pytest.param(answer_enrichments(label="great"), {"w_label"}, id="unknown-label"),
            pytest.param(lambda _messages: "not json", {"w_score", "w_label"}, id="not-json"),
            pytest.param(lambda _messages: "[4]", {"w_score", "w_label"}, id="wrong-shape"),
        ],
    )
    def test_invalid_output_retries_then_fails(
        self,
        remote: Runtime,
        rclient: Client,
        db: Engine,
        openai_server: OpenAIServer,
        reply: Any,
        invalid: set[str],
    ) -> None:
        openai_server.reply_with(*[reply] * 6)
        [result] = written(rclient, record_in("w_chat"))
        for attempt in (1, 2):
            assert process_batch(remote, 10, NOW) == 1
            [row] = queue(db)
            assert row.attempts == attempt and "enrichment" in row.last_error
            assert fetch(rclient, result["id"])["processing"] == "pending"
        assert process_batch(remote, 10, NOW) == 1
        assert queue(db) == []
        record = fetch(rclient, result["id"])
        assert record["processing"] == "failed" and "enrichment" in record["processing_error"]
        assert not invalid & (set(record["scores"]) | set(record["annotations"]))  # never a guessed value
        assert all(name in record["processing_error"] for name in invalid)

    @pytest.mark.parametrize(
        ("embedding", "problem"),
        [
            pytest.param("[0.1]", "1 dimensions, expected 384", id="short"),
            pytest.param("[NaN" + ", 0.1" * 383 + "]", "finite number", id="nan"),
        ],
    )
    def test_invalid_embedding_output_retries_then_fails_with_no_vector(
        self,
        remote: Runtime,
        rclient: Client,
        db: Engine,
        openai_server: OpenAIServer,
        embedding: str,
        problem: str,
    ) -> None:
        """Every request of the three attempts gets the same broken answer (chat ones too)."""
        openai_server.respond_next(f'{{"data": [{{"index": 0, "embedding": {embedding}}}]}}'.encode(), 9)
        [result] = written(rclient, record_in("w_remote"))
        for attempt in (1, 2, 3):
            assert process_batch(remote, 10, NOW) == 1
            assert [row.attempts for row in queue(db)] == ([attempt] if attempt < 3 else [])
        record = fetch(rclient, result["id"])
        assert record["processing"] == "failed" and problem in record["processing_error"]
        assert vector_of(db, result["id"]) is None

    def test_unconfigured_provider_keeps_record_pending_with_backoff(
        self, write_runtime: Runtime, wclient: Client, db: Engine
    ) -> None:
        [result] = written(wclient, record_in("w_remote"))
        assert process_batch(write_runtime, 10) == 1
        [row] = queue(db)
        assert row.attempts == 1 and "OPENAI_BASE_URL" in row.last_error
        assert 1.5 < row.wait.total_seconds() <= 2.0
        assert process_batch(write_runtime, 10) == 0  # not due yet
        assert vector_of(db, result["id"]) is None

    def test_partial_results_are_kept_while_pending(
        self, remote: Runtime, rclient: Client, db: Engine, openai_server: OpenAIServer
    ) -> None:
        openai_server.reply_with(answer_enrichments(score=99), answer_enrichments(score=99))
        [result] = written(rclient, record_in("w_remote"))
        process_batch(remote, 10, NOW)
        assert fetch(rclient, result["id"])["processing"] == "pending"
        assert vector_of(db, result["id"]) is not None
        openai_server.reply_with(answer_enrichments(), answer_enrichments())
        process_batch(remote, 10, NOW)
        assert [r.path for r in openai_server.requests].count("/v1/embeddings") == 1
        assert fetch(rclient, result["id"])["processing"] == "ready"


@pytest.mark.parametrize(("attempts", "delay"), [(1, 2.0), (2, 4.0), (5, 32.0), (12, 600.0)])
def test_backoff_doubles_and_is_capped(attempts: int, delay: float) -> None:
    assert RetryPolicy().delay(attempts) == delay


def test_parallel_workers_process_each_record_once(
    remote: Runtime, rclient: Client, db: Engine, openai_server: OpenAIServer
) -> None:
    results = written(
        rclient,
        *(
            record_in(
                "w_remote", text=f"note {i}", scores={"w_score": 1}, annotations={"w_label": {"label": "bad"}}
            )
            for i in range(40)
        ),
    )
    openai_server.delay_next(0.2, times=4)
    totals: list[int] = []

    def drain() -> None:
        while (n := process_batch(remote, 10)) > 0:
            totals.append(n)

    threads = [threading.Thread(target=drain) for _ in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert sum(totals) == 40
    embedded = [text for r in openai_server.requests for text in r.body["input"]]
    assert sorted(embedded) == sorted(f"note {i}" for i in range(40))
    assert {fetch(rclient, r["id"])["processing"] for r in results} == {"ready"}


def test_batch_that_raises_rolls_back_and_counts_an_attempt(
    runtime: Runtime, wclient: Client, db: Engine, caplog: pytest.LogCaptureFixture
) -> None:
    """A worker whose catalog lacks the record's collection: the batch raises mid-transaction.
    The record's error says so without the exception's text, which the service log keeps."""
    [result] = written(wclient, record_in("w_local"))
    assert process_batch(runtime, 10, NOW) == 1
    [row] = queue(db)
    assert row.attempts == 1 and row.last_error.startswith("the batch could not be stored")
    assert "w_local" not in row.last_error and "w_local" in caplog.text
    assert fetch(wclient, result["id"])["processing"] == "pending" and vector_of(db, result["id"]) is None


def _blocked_worker_pid(engine: Engine, deadline: float) -> int:
    query = sa.text("""SELECT pid FROM pg_stat_activity
                       WHERE wait_event_type = 'Lock' AND query LIKE '%FOR UPDATE%'
                         AND pid <> pg_backend_pid()""")
    while time.monotonic() < deadline:
        with engine.connect() as conn:
            pid = conn.execute(query).scalar()
        if pid is not None:
            return int(pid)
        time.sleep(0.1)
    raise AssertionError("the worker never reached its write step")


def _gone(engine: Engine, pid: int, deadline: float) -> None:
    while time.monotonic() < deadline:
        with engine.connect() as conn:
            alive = conn.execute(sa.text("SELECT count(*) FROM pg_stat_activity WHERE pid = :p"), {"p": pid})
            if alive.scalar() == 0:
                return
        time.sleep(0.1)
    raise AssertionError(f"backend {pid} of the killed worker is still there")


@pytest.fixture
def held_record(write_runtime: Runtime, wclient: Client, db: Engine) -> Iterator[tuple[str, Any]]:
    """A pending record whose row a test transaction keeps locked, so a worker blocks mid-batch."""
    [result] = written(wclient, record_in("w_local", text="survives a crash"))
    conn = db.connect()
    transaction = conn.begin()
    conn.execute(sa.text("SELECT 1 FROM records WHERE id = :id FOR UPDATE"), {"id": result["id"]})
    yield result["id"], transaction
    if transaction.is_active:
        transaction.rollback()
    conn.close()


def test_killed_worker_loses_nothing(
    write_runtime: Runtime, wclient: Client, db: Engine, held_record: tuple[str, Any]
) -> None:
    record_id, lock = held_record
    worker = start_memseek(worker_env(write_runtime), "worker", "--once", output=subprocess.DEVNULL)
    try:
        pid = _blocked_worker_pid(db, time.monotonic() + 60)  # claimed, embedded, now writing
        worker.send_signal(signal.SIGKILL)
        worker.wait(10)
    finally:
        if worker.poll() is None:
            worker.kill()
    lock.rollback()
    _gone(db, pid, time.monotonic() + 30)
    [row] = queue(db)
    assert (str(row.record_id), row.attempts, row.last_error) == (record_id, 0, None)
    assert fetch(wclient, record_id)["processing"] == "pending" and vector_of(db, record_id) is None
    assert process_batch(write_runtime, 10) == 1
    assert fetch(wclient, record_id)["processing"] == "ready"


def test_background_worker_wakes_on_notify(write_runtime: Runtime, wclient: Client, db: Engine) -> None:
    worker = BackgroundWorker(write_runtime, idle_seconds=60).start()
    try:
        time.sleep(0.5)  # the worker is now idle, waiting for a notification
        started = time.monotonic()
        [result] = written(wclient, record_in("w_local"), query="?wait=true&timeout=30")
        elapsed = time.monotonic() - started
    finally:
        worker.stop()
    assert result["processing"] == "ready"
    assert elapsed < 20


def test_touch_sets_last_accessed_in_own_workspace(
    write_app: Flask, wclient: Client, other_tenant: Tenant, db: Engine, tenant: Tenant
) -> None:
    [mine] = written(wclient, record_in())
    their_client = Client(write_app.test_client(), other_tenant)
    [theirs] = written(their_client, record_in())
    time.sleep(0.01)
    with workspace_transaction(db, tenant.id) as conn:
        touch(conn, tenant.id, [UUID(mine["id"]), UUID(theirs["id"])], datetime.now(UTC))
    record = fetch(wclient, mine["id"])
    assert record["last_accessed"] > record["created_at"]
    untouched = fetch(their_client, theirs["id"])
    assert untouched["last_accessed"] == untouched["created_at"]
    foreign = sa.text("INSERT INTO record_touches VALUES (:ws, :id, now())")
    refused = pytest.raises(sa.exc.ProgrammingError, match="row-level security")
    with refused, workspace_transaction(db, tenant.id) as conn:  # a touch writes its own workspace only
        conn.execute(foreign, {"ws": other_tenant.id, "id": theirs["id"]})
    assert count(db) == 2


def test_worker_command_once(write_runtime: Runtime, wclient: Client, db: Engine) -> None:
    results = written(wclient, record_in("w_local", text="one"), record_in("w_local", text="two"))
    done = memseek(worker_env(write_runtime), "worker", "--once", "--batch", "1", timeout=120)
    assert last_line(done) == "processed 2 records"
    assert {fetch(wclient, r["id"])["processing"] for r in results} == {"ready"}
