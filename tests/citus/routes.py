"""A pytest plugin (`-p tests.citus.routes`) for a run on a Citus cluster: every distinct statement
the service sends is EXPLAINed, once, with the values it was sent with, and how Citus plans it is
written to the file `MEMSEEK_TEST_ROUTES` names, one JSON object a line (`Route`).

Listening on the `Engine` class sees every statement of every engine, those `db.run_statement`
sends on the raw cursor included (it calls the engine's `before_cursor_execute` listeners).
"""

from __future__ import annotations

import json
import os
import re
import sys
import threading
from collections.abc import Mapping
from dataclasses import asdict
from dataclasses import dataclass
from dataclasses import replace
from pathlib import Path
from typing import Any

import psycopg
import sqlalchemy as sa
from pgvector import Vector
from pgvector.psycopg.vector import VectorBinaryDumper
from sqlalchemy.engine import Engine

from memseek.db import STATEMENT_LABEL

REPORT = "MEMSEEK_TEST_ROUTES"
TESTS = Path(__file__).resolve().parents[1]
SERVICE = TESTS.parent / "memseek"
_EXPLAINED = re.compile(r"^\s*(/\*.*?\*/\s*)?(SELECT|WITH|INSERT|UPDATE|DELETE)\b", re.S | re.I)
_TASKS = re.compile(r"Task Count: (\d+)")
_LABEL = re.compile(r"/\* memseek (.*?) \*/")


@dataclass(frozen=True)
class Route:
    """How Citus plans one statement: the task count of each distributed scan (one each for a
    statement routed to one shard), whether it runs subplans first, or why it was not explained."""

    label: str
    sql: str
    tasks: list[int]
    subplans: bool
    error: str | None = None
    service: bool = True
    """Sent by the service's own code (not by a test's setup, checks or clean-up)."""

    @property
    def single_shard(self) -> bool:
        return self.error is None and not self.subplans and all(count == 1 for count in self.tasks)


class Recorder:
    """A `before_cursor_execute` listener writing each distinct statement's `Route` to `path`."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.seen: set[str] = set()
        self.lock = threading.Lock()
        self.connections: dict[str, psycopg.Connection[Any]] = {}

    def __call__(self, conn: Any, cursor: Any, sql: str, args: Any, context: Any, many: bool) -> None:
        if not _EXPLAINED.match(sql):
            return
        with self.lock:
            if sql in self.seen:
                return
            self.seen.add(sql)
            route = self._explain(conn.engine, sql, args[0] if many and args else args)
            route = replace(route, service=_from_service())
            with open(self.path, "a") as out:
                out.write(json.dumps(asdict(route)) + "\n")

    def _explain(self, engine: Engine, sql: str, args: Any) -> Route:
        found = _LABEL.search(sql)
        label = found.group(1) if found else STATEMENT_LABEL.get()
        try:
            plan = self._plan(engine, sql, args)
        except psycopg.Error as exc:  # a temporary table of the sending transaction, a DDL statement
            return Route(label, sql, [], False, str(exc).splitlines()[0])
        tasks = [int(count) for count in _TASKS.findall(plan)]
        return Route(label, sql, tasks, "Distributed Subplan" in plan)

    def _plan(self, engine: Engine, sql: str, args: Any) -> str:
        conn = self._connection(engine)
        raw = not isinstance(args, Mapping)
        cursor = psycopg.RawCursor(conn) if raw else conn.cursor()
        with conn.transaction(force_rollback=True), cursor:
            cursor.execute(f"EXPLAIN {sql}", args or None)
            return "\n".join(row[0] for row in cursor.fetchall())

    def _connection(self, engine: Engine) -> psycopg.Connection[Any]:
        url = engine.url.set(drivername="postgresql").render_as_string(hide_password=False)
        if url not in self.connections:
            conn = psycopg.connect(url, autocommit=True)
            conn.adapters.register_dumper(Vector, VectorBinaryDumper)
            self.connections[url] = conn
        return self.connections[url]


def _from_service() -> bool:
    """Whether the nearest caller in Memseek's code or the tests (past SQLAlchemy, psycopg and
    this plugin) is Memseek's code."""
    frame = sys._getframe(2)
    while frame is not None:
        path = Path(frame.f_code.co_filename)
        if SERVICE in path.parents:
            return True
        if TESTS in path.parents and path != Path(__file__):
            return False
        frame = frame.f_back  # type: ignore[assignment]
    return False


def pytest_configure(config: Any) -> None:
    path = os.environ.get(REPORT)
    if path:
        sa.event.listen(Engine, "before_cursor_execute", Recorder(path))


def read(path: str) -> list[Route]:
    """The routes a run wrote to `path`."""
    with open(path) as lines:
        return [Route(**json.loads(line)) for line in lines]
