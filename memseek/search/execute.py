"""Run compiled searches on pooled connections (IO), confined to their workspace.

A search on its own sends its scope and statement together, one round trip (`db.scoped_rows`).

A combined request's searches run concurrently (at most SEARCH_MAX_CONCURRENCY at once) and
read one exported snapshot; results are returned in request order, so which search finishes
first never changes anything. The request's own thread runs searches too, beside helpers from one
process-wide pool: starting threads per request cost little on an idle machine but up to
several milliseconds each when the cores are busy (a new thread must be scheduled before
`start()` returns), which is when a combined search can least afford it.

Filtered ANN: before a vector or hybrid statement, the transaction sets `hnsw.ef_search` a
quarter past the length of its semantic list, the candidate count or, in a hybrid search's first
statement, the shortened list's (default 40 would cap the proposal at 40 rows) and, on pgvector >= 0.8,
`hnsw.iterative_scan = relaxed_order` so that an HNSW scan keeps going until enough rows pass
the scope's filters. The planner chooses the path: for a selective scope its exact scan over
the B-tree-filtered rows is both correct and fastest (design §5); both paths rank the same
canonical rows with the same statement, so results do not depend on the path. Only where the
planner's own plan for a workspace read a broad semantic list (vector or hybrid) through HNSW
does a search keep a generic plan pinned to the index (`AnnPlans`), and a short list from it
runs again, planned.
"""

from __future__ import annotations

import contextvars
import logging
import math
import re
import threading
import time
from collections.abc import Callable
from collections.abc import Hashable
from collections.abc import Iterator
from collections.abc import Mapping
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import AbstractContextManager
from contextlib import ExitStack
from contextlib import contextmanager
from contextlib import nullcontext
from dataclasses import dataclass
from functools import lru_cache
from functools import partial
from typing import Any
from typing import TypeVar
from uuid import UUID
from weakref import WeakKeyDictionary

import sqlalchemy as sa
from sqlalchemy.engine import Connection
from sqlalchemy.engine import Dialect
from sqlalchemy.engine import Engine
from sqlalchemy.sql.compiler import Compiled
from sqlalchemy.sql.expression import Executable
from sqlalchemy.sql.expression import Select

from memseek.db import driver_rows
from memseek.db import local_rows
from memseek.db import scoped_connection
from memseek.db import scoped_rows
from memseek.db import set_local
from memseek.db import shared_snapshot
from memseek.db import workspace_transaction
from memseek.errors import Detail
from memseek.errors import RequestInvalid
from memseek.errors import SearchTimeout
from memseek.search.compile import TEMPLATE_CACHE
from memseek.search.compile import CompiledSearch
from memseek.search.compile import Explain
from memseek.search.fuse import Hit

log = logging.getLogger(__name__)

ITERATIVE_SCAN_SINCE = (0, 8)
EF_SEARCH_MARGIN = 1.25
"""`hnsw.ef_search` over the semantic list's length: a scope filters some of the rows HNSW finds
(other collections, superseded or draft values), and each time the first pass falls short,
the iterative scan searches again, at up to the first pass's cost. At 100k records with 12 %
of the index filtered out, ef_search 250 for 200 rows took 8.1-8.4 ms against 9.3-9.9; without
filtering, 240 against 200 cost nothing measurable (docs/search.md, also for 1M duplicated vectors)."""
EF_SEARCH_MAX = 1000
"""pgvector's largest `hnsw.ef_search`."""
_VERSIONS: WeakKeyDictionary[Engine, tuple[int, ...]] = WeakKeyDictionary()
T = TypeVar("T")
U = TypeVar("U")
HELPER_THREADS = 8
HELPERS = ThreadPoolExecutor(max_workers=HELPER_THREADS, thread_name_prefix="memseek-search")
"""Threads that run a request's further searches, started on first use and kept. More than the
database pool could serve at once would only queue for connections."""
OUT_OF_RANGE = "22003"
"""SQLSTATE numeric_value_out_of_range: a rank formula overflowed float8."""
QUERY_CANCELED = "57014"
"""SQLSTATE query_canceled: the statement outlived `statement_timeout` (SEARCH_TIMEOUT_MS)."""


ANN_INDEX = "records_embedding"
"""The HNSW index on `records.embedding` (alembic/versions/0001_initial.py)."""
PINNED_ANN = {"plan_cache_mode": "force_generic_plan", "enable_sort": "off"}
"""The settings a search's first statement runs with where its workspace's plan reads the list
through HNSW (`AnnPlans`): the prepared statement keeps one generic plan instead of planning each
request (0.8 of a 7.8 ms vector statement at 100k records, 2.5 of a 12 ms hybrid one), and with
sorts disabled that plan reads the list from the index, whatever a generic estimate of the
workspace's size would prefer: any other path to the nearest rows sorts them (PostgreSQL 18
ranks paths by disabled nodes first)."""
ANN_PLAN_SECONDS = 300.0
"""How long a learned plan choice holds before the next request asks PostgreSQL again."""


class AnnPlans:
    """Per template and workspace: whether PostgreSQL's own plan reads the semantic list through
    the HNSW index. Learned from one EXPLAIN (one planning more, once per `ANN_PLAN_SECONDS`)
    and kept for at most `size` templates and workspaces (the oldest go first)."""

    def __init__(self, size: int = 4096, seconds: float = ANN_PLAN_SECONDS) -> None:
        self._size = size
        self._seconds = seconds
        self._known: dict[Hashable, tuple[bool, float]] = {}
        self._lock = threading.Lock()

    def reads_index(self, key: Hashable, learn: Callable[[], bool]) -> bool:
        """The choice for `key`, learned (`learn()`) when unknown or expired."""
        with self._lock:
            known = self._known.get(key)
        if known is not None and known[1] > time.monotonic():
            return known[0]
        return self.learn(key, learn())

    def learn(self, key: Hashable, reads: bool) -> bool:
        """Remember `reads` for `key` (newest last, so the oldest is evicted first); returns it."""
        with self._lock:
            self._known.pop(key, None)
            self._known[key] = (reads, time.monotonic() + self._seconds)
            while len(self._known) > self._size:
                del self._known[next(iter(self._known))]
        return reads


ANN_PLANS = AnnPlans()


@dataclass(frozen=True, slots=True)
class SearchResult:
    """One executed search: its hits in rank order and its pool's diagnostics."""

    hits: tuple[Hit, ...]
    candidate_count: int
    ranked_count: int
    low: float | None
    high: float | None
    counted_records: int | None = None
    """The workspace's records as the rarity labels counted them (up to `RARITY_SCALE`), when
    the statement labels any."""


def pgvector_version(engine: Engine) -> tuple[int, ...]:
    """The installed pgvector version, read once per engine."""
    if engine not in _VERSIONS:
        query = sa.text("SELECT extversion FROM pg_extension WHERE extname = 'vector'")
        with engine.connect() as conn:
            raw = conn.execute(query).scalar()
        _VERSIONS[engine] = tuple(int(part) for part in str(raw or "0").split(".") if part.isdigit())
    return _VERSIONS[engine]


def planner_settings(engine: Engine, compiled: CompiledSearch) -> dict[str, str]:
    """The transaction-local settings one search runs with (see the module docstring)."""
    # psycopg prepares a statement after a few executions; only a shape that one plan serves
    # alike (`compile.reuses_plan`) lets PostgreSQL keep a generic plan, any other is planned
    # for each request's values.
    # No JIT: a scan over a large scope can pass the default jit_above_cost, and compiling
    # costs tens of milliseconds more than a millisecond statement can gain.
    plans = "auto" if compiled.reuses_plan else "force_custom_plan"
    wanted = {"plan_cache_mode": plans, "jit": "off"}
    if compiled.uses_vector:
        wanted["hnsw.ef_search"] = ef_search(compiled.list_size)
        if pgvector_version(engine) >= ITERATIVE_SCAN_SINCE:
            wanted["hnsw.iterative_scan"] = "relaxed_order"
    return wanted


def ef_search(list_size: int) -> str:
    """`hnsw.ef_search` for a semantic list of `list_size` rows: `EF_SEARCH_MARGIN` more, the
    default 40 at least, pgvector's maximum at most."""
    return str(min(EF_SEARCH_MAX, max(40, math.ceil(list_size * EF_SEARCH_MARGIN))))


def fallback_settings(compiled: CompiledSearch) -> dict[str, str]:
    """The settings a fallback runs with beyond the first statement's: its semantic list is
    full length (`compile.hybrid_list_size`)."""
    if compiled.uses_vector and compiled.list_size < compiled.candidates:
        return {"hnsw.ef_search": ef_search(compiled.candidates)}
    return {}


def prepare_transaction(conn: Connection, compiled: CompiledSearch) -> dict[str, str]:
    """Apply `planner_settings` to the caller's transaction in one round trip; returns them."""
    return _apply(conn, planner_settings(conn.engine, compiled))


def _apply(conn: Connection, wanted: dict[str, str]) -> dict[str, str]:
    set_local(conn, wanted)
    return wanted


def run_compiled(conn: Connection, compiled: CompiledSearch) -> SearchResult:
    """Execute one compiled search in the caller's transaction as a combined search's share runs
    (`_runner`: each statement with the planner settings for it alone), without the timeout and
    the learned plan choice of a request."""
    return _with_fallbacks(compiled, _runner(conn, compiled, planner_settings(conn.engine, compiled)))


def execute_compiled(conn: Connection, compiled: CompiledSearch) -> SearchResult:
    """Execute one compiled search in a transaction that already has its planner settings."""

    def run(statement: Executable, widen: Mapping[str, str]) -> Sequence[Any]:
        _apply(conn, dict(widen))
        return _execute(conn, statement, compiled.params)

    return _with_fallbacks(compiled, run)


Run = Callable[[Executable, Mapping[str, str]], Sequence[Any]]
"""Runs a statement of a search with these settings beyond the search's own; its rows."""


def _with_fallbacks(
    compiled: CompiledSearch, run: Run, first: Mapping[str, str] | None = None
) -> SearchResult:
    """The search's statement (with the settings `first`, if any), then, while the statement that
    ran reports `short`, its next fallback (with full lists, `hnsw.ef_search` follows the
    candidate count)."""
    rows = run(compiled.statement, first or {})
    widen = fallback_settings(compiled)
    for fallback in compiled.fallbacks:
        if not (rows and rows[0].get("short")):
            break
        rows = run(fallback(), widen)
    return to_result(rows)


def _execute(
    conn: Connection,
    statement: Executable,
    params: Mapping[str, Any],
    settings: Mapping[str, str] | None = None,
    workspace_id: UUID | None = None,
) -> Sequence[Any]:
    """Run one search statement through the driver (`db.driver_rows`, `native_placeholders`);
    rows as dicts. The template is compiled once (`_compiled`); SQLAlchemy's per-execution
    machinery cost ~0.5 ms a statement, a third of a newest-first search's (docs/search.md,
    "Executing a template"). With `settings`, they hold for this statement alone: in a
    transaction of its own confined to `workspace_id` (`db.scoped_rows`), or without one inside
    the connection's transaction (`db.local_rows`); else it runs as the transaction stands."""
    sql, values = driver_statement(conn, statement, params)
    sql, names = native_placeholders(sql)
    args = [values[name] for name in names]
    try:
        if settings is None:
            return driver_rows(conn, sql, args)
        if workspace_id is None:
            return local_rows(conn, settings, sql, args)
        return scoped_rows(conn, workspace_id, settings, sql, args)
    except sa.exc.DBAPIError as exc:
        state = getattr(exc.orig, "sqlstate", None)
        if state == OUT_OF_RANGE:
            raise RequestInvalid(
                "the rank formula produced a value out of range",
                [Detail(("rank",), "every value a formula produces must be finite")],
            ) from None
        if state == QUERY_CANCELED:
            raise SearchTimeout(
                "the search ran longer than this deployment allows (SEARCH_TIMEOUT_MS); "
                "narrow its scope or lower params.candidates"
            ) from None
        raise


def driver_statement(
    conn: Connection, statement: Executable, params: Mapping[str, Any]
) -> tuple[str, dict[str, Any]]:
    """The SQL text psycopg receives for `statement` with `params` (IN lists expanded, one value
    each) and its values, converted per type as SQLAlchemy's execution converts them."""
    compiled = _compiled(statement, conn.dialect)
    expanded = compiled.construct_expanded_state(dict(params))
    processors = {**compiled._bind_processors, **expanded.processors}
    values = {
        name: processors[name](value) if name in processors else value
        for name, value in expanded.parameters.items()
    }
    return expanded.statement, values


_PLACEHOLDER = re.compile(r"%\((?P<name>[^)]+)\)s|%%")


@lru_cache(maxsize=TEMPLATE_CACHE * 3)
def native_placeholders(sql: str) -> tuple[str, tuple[str, ...]]:
    """`sql` as SQLAlchemy compiles it for psycopg (`%(name)s`, `%%`) with PostgreSQL's own `$n`
    placeholders, and the parameter each number stands for (a name used twice keeps its number).
    psycopg caches this conversion only for statements up to 4 kB; a hybrid statement is ~13 kB
    and would be converted again on every execution (0.7 ms)."""
    numbers: dict[str, int] = {}

    def native(match: re.Match[str]) -> str:
        name = match["name"]
        return "%" if name is None else f"${numbers.setdefault(name, len(numbers) + 1)}"

    return _PLACEHOLDER.sub(native, sql), tuple(numbers)


@lru_cache(maxsize=TEMPLATE_CACHE * 3)  # a shape's first statement and its two fallbacks
def _compiled(statement: Executable, dialect: Dialect) -> Compiled:
    return statement.compile(dialect=dialect)


def to_result(rows: Sequence[Any]) -> SearchResult:
    """Statement rows → hits; a single row with a NULL id means nothing survived."""
    candidate_count = int(rows[0]["candidate_count"]) if rows else 0
    found = [row for row in rows if row["id"] is not None]
    hits = tuple(
        Hit(id=row["id"], value=row["value"], occurred_at=row["occurred_at"], seq=row["seq"], record=row)
        for row in found
    )
    first = found[0] if found else None
    return SearchResult(
        hits=hits,
        candidate_count=candidate_count,
        ranked_count=int(first["ranked_count"]) if first else 0,
        low=first["pool_low"] if first else None,
        high=first["pool_high"] if first else None,
        counted_records=rows[0].get("counted_records") if rows else None,
    )


def search_settings(engine: Engine, compiled: CompiledSearch, timeout_ms: int) -> dict[str, str]:
    """`planner_settings` plus the statement timeout (SEARCH_TIMEOUT_MS): a search that outlives
    it is cancelled by PostgreSQL and answered `503 search_timeout`, so one runaway search cannot
    hold a connection and a server thread indefinitely."""
    return planner_settings(engine, compiled) | {"statement_timeout": str(timeout_ms)}


def run_searches(
    engine: Engine,
    workspace_id: UUID,
    searches: Sequence[CompiledSearch],
    max_concurrency: int,
    timeout_ms: int,
) -> list[SearchResult]:
    """Run every search; results in request order. One search runs in one workspace transaction
    (scope, planner settings and timeout in one round trip). Several all read one snapshot: the
    calling thread's transaction exports it and runs its share, each helper's transaction imports
    it, so a write that commits while they run is in every source's answer or in none."""
    if len(searches) <= 1:
        return [_alone(engine, workspace_id, compiled, timeout_ms) for compiled in searches]
    with shared_snapshot(engine, workspace_id) as (lead, snapshot):

        @contextmanager
        def importing() -> Iterator[Callable[[CompiledSearch], SearchResult]]:
            with workspace_transaction(engine, workspace_id, snapshot=snapshot) as conn:
                yield partial(_run_in, conn, workspace_id, timeout_ms)

        job = partial(_run_in, lead, workspace_id, timeout_ms)
        return run_parallel(job, searches, max_concurrency, importing)


def _alone(engine: Engine, workspace_id: UUID, compiled: CompiledSearch, timeout_ms: int) -> SearchResult:
    """A search on its own: each statement in a transaction of its own with the search's settings
    (`db.scoped_rows`: one round trip)."""
    settings = search_settings(engine, compiled, timeout_ms)
    with scoped_connection(engine) as conn:
        return _searched(engine, workspace_id, compiled, _runner(conn, compiled, settings, workspace_id))


def _run_in(conn: Connection, workspace_id: UUID, timeout_ms: int, compiled: CompiledSearch) -> SearchResult:
    """One of several searches in a transaction they share: each statement with the search's
    settings for it alone (`db.local_rows`: one round trip)."""
    run = _runner(conn, compiled, search_settings(conn.engine, compiled, timeout_ms))
    return _searched(conn.engine, workspace_id, compiled, run)


def _runner(
    conn: Connection, compiled: CompiledSearch, settings: Mapping[str, str], workspace_id: UUID | None = None
) -> Run:
    """Runs each statement of `compiled` with `settings` and the statement's own for it alone
    (`_execute`): in a transaction of its own in `workspace_id`, else in the connection's."""

    def run(statement: Executable, extra: Mapping[str, str]) -> Sequence[Any]:
        return _execute(conn, statement, compiled.params, {**settings, **extra}, workspace_id)

    return run


def _searched(engine: Engine, workspace_id: UUID, compiled: CompiledSearch, run: Run) -> SearchResult:
    """The search, with its fallbacks, through `run`. The first statement of a search that
    `learns_plan` runs on a generic plan pinned to the HNSW index where PostgreSQL's own plan for
    the workspace reads the list through it (`AnnPlans`); its fallbacks, which read other lists,
    are planned for the request, and so is the search again if its lists come back short."""
    key = (engine, compiled.statement, workspace_id)
    if compiled.learns_plan and ANN_PLANS.reads_index(key, partial(_plan_reads_ann, run, compiled)):
        result = _with_fallbacks(compiled, run, PINNED_ANN)
        if result.candidate_count >= compiled.list_size:
            return result
        ANN_PLANS.learn(key, False)  # a smaller scope than the plan's, or HNSW stopped short
    return _with_fallbacks(compiled, run)


def _plan_reads_ann(run: Run, compiled: CompiledSearch) -> bool:
    """Whether PostgreSQL's plan for this request (EXPLAIN, planned for its values) reads the
    semantic list through the HNSW index."""
    [row] = run(_json_explain(compiled.statement), {})
    return ANN_INDEX in _index_names(row["QUERY PLAN"])


@lru_cache(maxsize=TEMPLATE_CACHE)
def _json_explain(statement: Select[Any]) -> Explain:
    """One `EXPLAIN (FORMAT JSON)` per template, so its compiled form is cached like the template's."""
    return Explain(statement, as_json=True)


def _index_names(node: Any) -> set[str]:
    """Every index an EXPLAIN (FORMAT JSON) plan reads."""
    if isinstance(node, list):
        return set().union(*(_index_names(item) for item in node))
    if not isinstance(node, dict):
        return set()
    own = {node["Index Name"]} if "Index Name" in node else set()
    return own.union(*(_index_names(value) for value in node.values() if isinstance(value, list | dict)))


def run_parallel(
    job: Callable[[T], U],
    items: Sequence[T],
    max_concurrency: int,
    helper_job: Callable[[], AbstractContextManager[Callable[[T], U]]] | None = None,
) -> list[U]:
    """`job` over `items`, at most `max_concurrency` at once; results (or the first error) in
    input order. The calling thread takes part: with every helper busy it runs them all itself.
    A helper runs `job` or, given `helper_job`, the job that context yields, entered when the
    helper claims its first item and left when no item is left (or its job failed)."""
    if len(items) <= 1 or max_concurrency <= 1:
        return [job(item) for item in items]
    results: list[Any] = [None] * len(items)
    errors: list[tuple[int, BaseException]] = []
    claim = iter(range(len(items)))
    claimed = threading.Lock()

    def drain(seat: Callable[[], AbstractContextManager[Callable[[T], U]]]) -> None:
        index = len(items)  # an error after the last item (leaving the seat) sorts last
        try:
            with ExitStack() as stack:
                run: Callable[[T], U] | None = None
                while (index := _next(claim, claimed, len(items))) < len(items):
                    run = run or stack.enter_context(seat())
                    results[index] = run(items[index])
        except BaseException as exc:  # re-raised below, in input order, on the calling thread
            errors.append((index, exc))

    own = helper_job or (lambda: nullcontext(job))
    # A helper runs in a copy of the caller's context, so the statement label travels with it.
    helpers = [
        HELPERS.submit(contextvars.copy_context().run, drain, own)
        for _ in range(min(len(items), max_concurrency) - 1)
    ]
    drain(lambda: nullcontext(job))
    for helper in helpers:
        if not helper.cancel():  # one that never started has nothing left to do
            helper.result()
    if errors:
        raise min(errors, key=lambda error: error[0])[1]
    return results


def _next(claim: Iterator[int], lock: threading.Lock, done: int) -> int:
    with lock:
        return next(claim, done)
