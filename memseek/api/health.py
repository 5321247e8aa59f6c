"""`GET /health`: no authentication; database reachability and the catalog hash.

It answers within `ANSWER_WITHIN` seconds whatever the database does: the probe runs on its own
connection (never waiting for the pool behind slow requests), in a thread of its own, and its
result is reused for `FRESH_FOR` seconds, so a flood of health checks costs one probe a second.
A probe that has not answered in time (a frozen or partitioned database) reads as unreachable.

`memseek serve` answers `GET /health` without a request thread (`memseek.server`): from the
connection's own I/O loop, with `answer(wait=False)`, while a thread of the server's keeps the
probe's result fresh (`HealthProbe.keep_fresh`), so the answer waits for nothing at all.
"""

from __future__ import annotations

import threading
import time
from typing import Any

import psycopg
from flask import Blueprint
from flask import Flask
from flask import Response
from flask import current_app
from flask import jsonify
from sqlalchemy.engine import Engine

from memseek import deadline
from memseek.db import direct_connection
from memseek.errors import BackendUnavailable
from memseek.errors import error_body

bp = Blueprint("health", __name__)

ANSWER_WITHIN = 0.8
"""Seconds a health request waits for a probe before it reads the database as unreachable."""
FRESH_FOR = 1.0
"""Seconds a probe's result answers later health requests."""
PROBE_SECONDS = 1.5
"""The probe's own deadline: past it, its connection is closed and the next probe opens another."""
REFRESH_EVERY = 0.2
"""Seconds between two probes of `keep_fresh`: well under `FRESH_FOR`, so its result never goes
stale while the database answers, and a database that stops answering reads as unreachable
within `REFRESH_EVERY + ANSWER_WITHIN` (the first probe it leaves unanswered is then late)."""


class HealthProbe:
    """`SELECT 1` on a dedicated connection, at most one at a time, its result cached briefly."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        self._lock = threading.Lock()
        self._conn: psycopg.Connection[Any] | None = None
        self._result: tuple[float, bool] | None = None
        self._running: tuple[float, threading.Event] | None = None

    def database_ok(self, wait: bool = True) -> bool:
        """Whether the database answered a probe (a cached one, or one started now) in time.
        Without `wait`, a probe still running and not yet late leaves the last result standing."""
        with self._lock:
            now = time.monotonic()
            if self._result is not None and now - self._result[0] < FRESH_FOR:
                return self._result[1]
            started, done = self._start(now)
            if not wait and now - started < ANSWER_WITHIN:
                return self._result is not None and self._result[1]
        # a probe already late (a frozen database) is not waited for again
        done.wait(max(0.0, started + ANSWER_WITHIN - time.monotonic()) if wait else 0.0)
        with self._lock:
            return done.is_set() and self._result is not None and self._result[1]

    def _start(self, now: float) -> tuple[float, threading.Event]:
        """The probe running (one started now in a thread if none is); the caller holds the lock."""
        running, mine = self._claim(now)
        if mine:
            threading.Thread(target=self._probe, args=(running[1],), daemon=True).start()
        return running

    def _claim(self, now: float) -> tuple[tuple[float, threading.Event], bool]:
        """The probe running, and whether it is one claimed now, which the caller must run
        (`_probe`); the caller holds the lock."""
        if self._running is not None:
            return self._running, False
        self._running = (now, threading.Event())
        return self._running, True

    def keep_fresh(self) -> threading.Event:
        """Probe every `REFRESH_EVERY` seconds in a thread of its own until the returned event is
        set: a caller that cannot wait (`database_ok(wait=False)`) then reads a fresh result."""
        stop = threading.Event()
        self.database_ok()  # the first result before any answer reads it

        def refresh() -> None:
            while not stop.wait(REFRESH_EVERY):
                with self._lock:
                    (_, done), mine = self._claim(time.monotonic())
                if mine:
                    self._probe(done)

        threading.Thread(target=refresh, name="memseek-health", daemon=True).start()
        return stop

    def _probe(self, done: threading.Event) -> None:
        ok = self._ping()
        with self._lock:
            self._result, self._running = (time.monotonic(), ok), None
        done.set()

    def _ping(self) -> bool:
        try:
            with deadline.within(PROBE_SECONDS):
                if self._conn is None or self._conn.closed:
                    self._conn = direct_connection(self.engine, "memseek-health")
                self._conn.execute("SELECT 1")
            return True
        except psycopg.Error:
            if self._conn is not None:
                self._conn.close()
            self._conn = None
            return False


UNREACHABLE = "the database did not answer the health probe; retry after the Retry-After seconds"


def answer(app: Flask, wait: bool = True) -> tuple[int, dict[str, Any]]:
    """`GET /health`'s status and body for `app` (`wait`: as `HealthProbe.database_ok`). A 503
    also carries the one error shape's `error` (`backend_unavailable`, as every request meeting
    the outage answers), so a client reading errors one way reads this one too; its answer
    gets `Retry-After: 1` like theirs (`BackendUnavailable.retry_after`)."""
    probe: HealthProbe = app.extensions["memseek_health"]
    ok = probe.database_ok(wait)
    body: dict[str, Any] = {
        "status": "ok" if ok else "degraded",
        "database": "ok" if ok else "unreachable",
        "catalog_hash": app.extensions["memseek"].catalog.hash,
    }
    if ok:
        return 200, body
    return BackendUnavailable.status, body | error_body(BackendUnavailable.code, UNREACHABLE)


@bp.get("/health")
def health() -> Response:
    status, body = answer(current_app._get_current_object())  # type: ignore[attr-defined]
    response = jsonify(body)
    response.status_code = status
    if status != 200:
        response.headers["Retry-After"] = str(BackendUnavailable.retry_after)
    return response
