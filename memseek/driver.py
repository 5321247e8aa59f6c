"""A SQLAlchemy Core statement sent on the psycopg connection underneath, as `Connection.execute`
would send it: the part of `db.run_statement` that relies on SQLAlchemy beyond its public API.

The statements `run_statement` runs (a search's, a graph read's) are templates, each executed
many times with new values. `Connection.execute` would build an execution context, result
metadata and a row object per row for every execution, and psycopg would convert its `%(name)s`
placeholders again for every execution of a statement past psycopg's 4 kB conversion cache (a
search's statement is several times that). So each statement is compiled once (`_compiled`,
kept as long as the statement object lives) and each execution sends PostgreSQL's own `$n`
placeholders with the values converted per type, on a raw cursor returning plain dicts.

What this relies on, pinned by SQLAlchemy's minor version in pyproject.toml and checked by
tests/unit/test_driver.py, which fails loudly when an upgrade changes any of it:

* `SQLCompiler.construct_expanded_state(params)`: the SQL with IN lists expanded (one
  placeholder per value) and every value by placeholder name;
* `SQLCompiler._bind_processors` (private): each placeholder's conversion for the driver, e.g.
  the query vector to pgvector's `Vector` (expanded IN lists bring their own, `.processors`);
* the psycopg dialect's placeholders: `%(name)s`, and `%%` for a literal `%`;
* `Connection.dispatch.before_cursor_execute`: the engine's listeners, called as
  `Connection.execute` calls them (the statement label is one, tests listen with others).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from collections.abc import Iterator
from collections.abc import Mapping
from collections.abc import Sequence
from contextlib import contextmanager
from functools import lru_cache
from typing import Any
from typing import cast
from weakref import WeakKeyDictionary

import psycopg
import sqlalchemy as sa
from psycopg.rows import dict_row
from sqlalchemy.engine import Connection
from sqlalchemy.engine import Dialect
from sqlalchemy.sql.compiler import SQLCompiler
from sqlalchemy.sql.elements import ClauseElement
from sqlalchemy.sql.expression import Executable

NATIVE_TEXTS = 512
"""Statement texts kept converted to `$n` placeholders: more than the search templates' (128
shapes, each a first statement and up to two fallbacks) beside the graph walks' in use."""
_COMPILED: WeakKeyDictionary[Executable, dict[Dialect, SQLCompiler]] = WeakKeyDictionary()
"""Each statement's compiled form per dialect, dropped with the statement: the templates keep
theirs as long as their caches keep them, a statement built for one call compiles once."""
_PLACEHOLDER = re.compile(r"%\((?P<name>[^)]+)\)s|%%")
_Processors = Mapping[str, Callable[[Any], Any]]


def native_form(statement: Executable, params: Mapping[str, Any], dialect: Dialect) -> tuple[str, list[Any]]:
    """`statement` as psycopg's raw cursor takes it: SQL with `$n` placeholders, and the values
    converted per type, in placeholder order."""
    sql, values = pyformat_form(statement, params, dialect)
    native, names = native_placeholders(sql)
    return native, [values[name] for name in names]


def pyformat_form(
    statement: Executable, params: Mapping[str, Any], dialect: Dialect
) -> tuple[str, dict[str, Any]]:
    """`statement` as SQLAlchemy's execution hands it to psycopg: SQL with `%(name)s`
    placeholders (IN lists expanded, one per value), and the values by name, converted per type."""
    compiled = _compiled(statement, dialect)
    expanded = compiled.construct_expanded_state(dict(params))
    # A tuple-typed parameter (a processor per element) is only ever an expanded IN list here,
    # whose values the expansion's own processors convert: as `Connection.execute` calls them.
    processors = cast(_Processors, {**compiled._bind_processors, **expanded.processors})
    values = {
        name: processors[name](value) if name in processors else value
        for name, value in expanded.parameters.items()
    }
    return expanded.statement, values


def _compiled(statement: Executable, dialect: Dialect) -> SQLCompiler:
    forms = _COMPILED.get(statement)
    if forms is None:
        forms = _COMPILED.setdefault(statement, {})
    if dialect not in forms:
        forms[dialect] = cast(SQLCompiler, cast(ClauseElement, statement).compile(dialect=dialect))
    return forms[dialect]


@lru_cache(maxsize=NATIVE_TEXTS)
def native_placeholders(sql: str) -> tuple[str, tuple[str, ...]]:
    """`sql` as SQLAlchemy compiles it for psycopg (`%(name)s`, `%%`) with PostgreSQL's own `$n`
    placeholders, and the parameter each number stands for (a name used twice keeps its number,
    as psycopg's own conversion numbers them)."""
    numbers: dict[str, int] = {}

    def native(match: re.Match[str]) -> str:
        name = match["name"]
        return "%" if name is None else f"${numbers.setdefault(name, len(numbers) + 1)}"

    return _PLACEHOLDER.sub(native, sql), tuple(numbers)


def psycopg_connection(conn: Connection) -> psycopg.Connection[Any]:
    """The psycopg connection under `conn`."""
    return cast(psycopg.Connection[Any], conn.connection.driver_connection)


def raw_cursor(conn: Connection) -> psycopg.RawCursor[dict[str, Any]]:
    """A cursor taking `$n` placeholders, returning rows as dicts."""
    return psycopg.RawCursor(psycopg_connection(conn), row_factory=dict_row)


def listened(conn: Connection, cursor: Any, sql: str, args: Sequence[Any]) -> tuple[str, Any]:
    """`sql` and `args` as the engine's `before_cursor_execute` listeners return them."""
    for listener in conn.dispatch.before_cursor_execute:
        sql, args = listener(conn, cursor, sql, args, None, False)
    return sql, args


@contextmanager
def driver_errors(conn: Connection, sql: str, args: Sequence[Any]) -> Iterator[None]:
    """psycopg's errors as SQLAlchemy's own, invalidating a lost connection, as
    `Connection.execute` does: the app answers a lost database 503, and the pool never hands a
    dead connection out again."""
    try:
        yield
    except psycopg.Error as exc:
        lost = conn.dialect.is_disconnect(cast(Any, exc), conn.connection.dbapi_connection, None)
        if lost:
            conn.invalidate(exc)
        raise sa.exc.DBAPIError.instance(
            sql, args, exc, psycopg.Error, connection_invalidated=lost, dialect=conn.dialect
        ) from exc


def literal_sql(conn: Connection, statement: Executable, params: Mapping[str, Any]) -> str:
    """`statement` with `params` inlined by psycopg's own client-side quoting: each value as the
    literal the server would read it as (execution sends the same values bound to `$n`, the
    query vector in binary)."""
    sql, values = pyformat_form(statement, params, conn.dialect)
    return psycopg.ClientCursor(psycopg_connection(conn)).mogrify(sql, values)
