"""What `memseek explain` (and `POST /search/explain`, `POST /views/{name}/explain`) prints: a
script a DBA can paste into psql, which runs each statement exactly as the service does.

    BEGIN;
    SET LOCAL role = 'memseek_scoped';
    SET LOCAL memseek.workspace_id = '…';
    SET LOCAL memseek.query_vector = '[…]';       -- only when a statement reads the query vector
    -- search (single): hybrid, profile pg_default
    SET LOCAL plan_cache_mode = '…';              -- the search's planner settings
    PREPARE memseek_1(vector) AS
    /* memseek POST /search */ WITH … $1 …;
    EXECUTE memseek_1(current_setting('memseek.query_vector')::vector);
    DEALLOCATE memseek_1;
    ROLLBACK;

* One transaction, so the `SET LOCAL`s hold for the statements (outside one, psql would run
  each `SET LOCAL` on its own and drop it), and `ROLLBACK` leaves nothing behind.
* The role and workspace the service's transactions run as: row-level security and the
  `graph_records` view depend on them, and a superuser's plan for the same text can differ.
* Every request value inlined by psycopg's own quoting, except the query vector: a statement
  reads it several times, so it is set once and each statement that reads it is prepared with
  it as `$1`. `EXECUTE` hands the value in before planning, so with the service's own
  `plan_cache_mode` PostgreSQL plans exactly the statement the service sends, value for value.
  Put `EXPLAIN (ANALYZE, BUFFERS)` before an `EXECUTE` (or a plain statement) to see its plan.
* With `analyze`, the service's own `EXPLAIN (ANALYZE, BUFFERS)` of each statement follows it,
  as `--` comment lines, so the script still runs as pasted.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any
from uuid import UUID

import psycopg
from psycopg.adapt import Dumper
from sqlalchemy.engine import Connection
from sqlalchemy.sql.expression import Select

from memseek.db import SCOPED_ROLE
from memseek.db import WORKSPACE_SETTING
from memseek.db import run_statement
from memseek.db import set_local
from memseek.driver import psycopg_connection
from memseek.driver import pyformat_form
from memseek.search.compile import CompiledSearch
from memseek.search.compile import Explain
from memseek.search.execute import fallback_settings
from memseek.search.execute import planner_settings
from memseek.search.resolve import SearchPlan

VECTOR = "query_vector"
"""The request value every semantic statement reads (`compile.query`), bound once."""
VECTOR_SETTING = "memseek.query_vector"
READ_VECTOR = f"current_setting('{VECTOR_SETTING}')::vector"


class _Parameter:
    """Stands for the query vector in a statement printed for PREPARE: it prints as `$1`."""


class _ParameterDumper(Dumper):
    def dump(self, obj: Any) -> bytes:
        return b"$1"

    def quote(self, obj: Any) -> bytes:
        return b"$1"


class Script:
    """The script, built statement by statement; `text()` wraps it in its transaction."""

    def __init__(self, workspace_id: UUID) -> None:
        self.workspace_id = workspace_id
        self.body: list[str] = []
        self.vector: str | None = None
        self.prepared: list[str] = []

    def comment(self, text: str) -> None:
        self.body.append(f"-- {text}")

    def settings(self, settings: Mapping[str, str]) -> None:
        """`SET LOCAL` lines (names come from code, values are plain settings)."""
        self.body += [f"SET LOCAL {name} = {_quoted(value)};" for name, value in settings.items()]

    def statement(
        self, conn: Connection, statement: Select[Any], params: Mapping[str, Any], analyze: bool
    ) -> None:
        """One statement as the service sends it, values inlined (the query vector prepared as
        `$1`); with `analyze`, PostgreSQL's `EXPLAIN (ANALYZE, BUFFERS)` of it, which runs it in
        `conn`'s transaction with the settings applied there."""
        sql, values = pyformat_form(statement, params, conn.dialect)
        cursor = psycopg.ClientCursor(psycopg_connection(conn))
        if VECTOR not in values:
            self.body.append(cursor.mogrify(sql, values) + ";")
        else:
            self._prepared(cursor, sql, values)
        if analyze:
            plan = run_statement(conn, Explain(statement, analyze=True), params)
            self.body += ["-- EXPLAIN (ANALYZE, BUFFERS)", *(f"--   {row['QUERY PLAN']}" for row in plan)]

    def _prepared(self, cursor: psycopg.ClientCursor[Any], sql: str, values: dict[str, Any]) -> None:
        vector = cursor.mogrify("%s", [values[VECTOR].to_text()])
        if self.vector is None:
            self.vector = vector
        assert vector == self.vector, "one request embeds its query once"
        cursor.adapters.register_dumper(_Parameter, _ParameterDumper)
        name = f"memseek_{len(self.prepared) + 1}"
        self.prepared.append(name)
        self.body += [
            f"PREPARE {name}(vector) AS",
            cursor.mogrify(sql, {**values, VECTOR: _Parameter()}) + ";",
            f"EXECUTE {name}({READ_VECTOR});",
        ]

    def text(self) -> str:
        """The whole script (see the module docstring)."""
        head = [
            "BEGIN;",
            f"SET LOCAL role = {_quoted(SCOPED_ROLE)};",
            f"SET LOCAL {WORKSPACE_SETTING} = {_quoted(str(self.workspace_id))};",
        ]
        if self.vector is not None:
            head += [
                "-- the query vector, set once: each statement reading it is prepared with it as $1",
                f"SET LOCAL {VECTOR_SETTING} = {self.vector};",
            ]
        tail = [f"DEALLOCATE {name};" for name in self.prepared] + ["ROLLBACK;"]
        return "\n".join(head + self.body + tail)


def add_search(
    script: Script,
    conn: Connection,
    pgvector: tuple[int, ...],
    search: SearchPlan,
    compiled: CompiledSearch,
    analyze: bool,
) -> None:
    """One search's statement preceded by its planner settings (applied to `conn`'s transaction
    too, so an analyzed statement runs with them), then each fallback with the settings it adds."""
    applied = planner_settings(pgvector, compiled)
    set_local(conn, applied)
    script.comment(f"search {search.source or '(single)'}: {search.mode}, profile {search.profile}")
    script.settings(applied)
    script.statement(conn, compiled.statement, compiled.params, analyze)
    for fallback in compiled.fallbacks:
        script.comment("run instead when the statement above reports short:")
        script.settings(fallback_settings(compiled))
        script.statement(conn, fallback(), compiled.params, analyze=False)


def _quoted(value: str) -> str:
    return "'" + value.replace("'", "''") + "'"
