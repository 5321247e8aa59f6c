"""What `memseek explain` prints: the exact SQL a search or a view runs, its values inlined,
and with `analyze` PostgreSQL's `EXPLAIN (ANALYZE, BUFFERS)` of it (which runs it: IO).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from sqlalchemy.engine import Connection
from sqlalchemy.sql.expression import Select

from memseek.db import run_statement
from memseek.db import set_local
from memseek.driver import literal_sql
from memseek.search.compile import CompiledSearch
from memseek.search.compile import Explain
from memseek.search.execute import fallback_settings
from memseek.search.execute import planner_settings
from memseek.search.resolve import SearchPlan


def explained(
    conn: Connection, statement: Select[Any], params: Mapping[str, Any], analyze: bool
) -> list[str]:
    """The lines printed for one statement: its SQL with values inlined and, with `analyze`,
    PostgreSQL's `EXPLAIN (ANALYZE, BUFFERS)` of it."""
    lines = [literal_sql(conn, statement, params) + ";"]
    if analyze:
        plan = run_statement(conn, Explain(statement, analyze=True), params)
        lines += ["-- EXPLAIN (ANALYZE, BUFFERS)", *(row["QUERY PLAN"] for row in plan)]
    return lines


def search_lines(
    conn: Connection, pgvector: tuple[int, ...], search: SearchPlan, compiled: CompiledSearch, analyze: bool
) -> list[str]:
    """One search's statement preceded by its planner settings (applied to `conn`'s transaction,
    so an analyzed statement runs with them), then each fallback with the settings it adds."""
    applied = planner_settings(pgvector, compiled)
    set_local(conn, applied)
    lines = [f"-- search {search.source or '(single)'}: {search.mode}, profile {search.profile}"]
    lines += _set_local_lines(applied)
    lines += explained(conn, compiled.statement, compiled.params, analyze)
    for fallback in compiled.fallbacks:
        lines.append("-- run instead when the statement above reports short:")
        lines += _set_local_lines(fallback_settings(compiled))
        lines.append(literal_sql(conn, fallback(), compiled.params) + ";")
    return lines


def _set_local_lines(settings: Mapping[str, str]) -> list[str]:
    return [f"SET LOCAL {name} = '{value}';" for name, value in settings.items()]
