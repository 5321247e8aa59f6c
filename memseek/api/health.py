"""`GET /health`: no authentication; database reachability and the catalog hash.

It answers within `ANSWER_WITHIN` seconds whatever the database does: the probe runs on its own
connection (never waiting for the pool behind slow requests), in a thread of its own, and its
result is reused for `FRESH_FOR` seconds, so a flood of health checks costs one probe a second.
A probe that has not answered in time (a frozen or partitioned database) reads as unreachable;
`memseek serve` also gives `/health` threads of its own (`memseek.server`).
"""

from __future__ import annotations

import threading
import time
from typing import Any

import psycopg
from flask import Blueprint
from flask import Response
from flask import current_app
from flask import jsonify
from sqlalchemy.engine import Engine

from memseek import deadline
from memseek.api.common import runtime
from memseek.db import direct_connection

bp = Blueprint("health", __name__)

ANSWER_WITHIN = 0.8
"""Seconds a health request waits for a probe before it reads the database as unreachable."""
FRESH_FOR = 1.0
"""Seconds a probe's result answers later health requests."""
PROBE_SECONDS = 1.5
"""The probe's own deadline: past it, its connection is closed and the next probe opens another."""


class HealthProbe:
    """`SELECT 1` on a dedicated connection, at most one at a time, its result cached briefly."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        self._lock = threading.Lock()
        self._conn: psycopg.Connection[Any] | None = None
        self._result: tuple[float, bool] | None = None
        self._running: tuple[float, threading.Event] | None = None

    def database_ok(self) -> bool:
        """Whether the database answered a probe (a cached one, or one started now) in time."""
        with self._lock:
            now = time.monotonic()
            if self._result is not None and now - self._result[0] < FRESH_FOR:
                return self._result[1]
            if self._running is None:
                self._running = (now, threading.Event())
                threading.Thread(target=self._probe, args=(self._running[1],), daemon=True).start()
            started, done = self._running
        # a probe already late (a frozen database) is not waited for again
        done.wait(max(0.0, started + ANSWER_WITHIN - time.monotonic()))
        with self._lock:
            return done.is_set() and self._result is not None and self._result[1]

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


@bp.get("/health")
def health() -> tuple[Response, int]:
    probe: HealthProbe = current_app.extensions["memseek_health"]
    database = "ok" if probe.database_ok() else "unreachable"
    status = 200 if database == "ok" else 503
    body = {
        "status": "ok" if status == 200 else "degraded",
        "database": database,
        "catalog_hash": runtime().catalog.hash,
    }
    return jsonify(body), status
