"""Run compiled searches (IO), confined to their workspace, through `db.run_statement`.

A search on its own sends its scope and statement together, one round trip (`run_statement`
with a `workspace_id`).

A combined request's searches run concurrently (at most SEARCH_MAX_CONCURRENCY at once) and
read one exported snapshot; results are returned in request order, so which search finishes
first never changes anything. The request's own thread runs searches too, beside the runtime's
helper threads (`SearchState.helpers`). On Citus, where an exported snapshot does not reach the
workers, they run one after another in one transaction (`citus.snapshot_readers`).

Filtered ANN: before a vector or hybrid statement, the transaction sets `hnsw.ef_search` a
quarter past the length of its semantic list, the candidate count or, in a hybrid search's first
statement, the shortened list's (default 40 would cap the proposal at 40 rows) and, on pgvector >= 0.8,
`hnsw.iterative_scan = relaxed_order` so that an HNSW scan keeps going until enough rows pass
the scope's filters. The planner chooses the path: for a selective scope its exact scan over
the B-tree-filtered rows is both correct and fastest (design §5); both paths rank the same
canonical rows with the same statement, so results do not depend on the path. Only where the
planner's own plan for a workspace read a broad semantic list (vector or hybrid) through HNSW
does a search keep a generic plan pinned to the index (`SearchState.ann_plans`), and a short
list from it runs again, planned.
"""

from __future__ import annotations

import contextvars
import math
import threading
from collections.abc import Callable
from collections.abc import Iterator
from collections.abc import Mapping
from collections.abc import Sequence
from concurrent.futures import Executor
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

import sqlalchemy as sa
from sqlalchemy.engine import Connection
from sqlalchemy.sql.expression import Executable
from sqlalchemy.sql.expression import Select

from memseek import citus
from memseek.db import run_statement
from memseek.db import scoped_connection
from memseek.db import shared_snapshot
from memseek.db import workspace_transaction
from memseek.errors import Detail
from memseek.errors import FormulaOverflow
from memseek.errors import SearchTimeout
from memseek.search.compile import TEMPLATE_CACHE
from memseek.search.compile import CompiledSearch
from memseek.search.compile import Explain
from memseek.search.fuse import Hit
from memseek.search_state import SearchState

ITERATIVE_SCAN_SINCE = (0, 8)
EF_SEARCH_MARGIN = 1.25
"""`hnsw.ef_search` over the semantic list's length: a scope filters some of the rows HNSW finds
(other collections, superseded or draft values), and each time the first pass falls short, the
iterative scan searches again, at up to the first pass's cost; a pass a quarter wider than the
list usually yields the whole list, and costs little more than one exactly as wide."""
EF_SEARCH_MAX = 1000
"""pgvector's largest `hnsw.ef_search`."""
T = TypeVar("T")
U = TypeVar("U")
OUT_OF_RANGE = "22003"
"""SQLSTATE numeric_value_out_of_range: a rank formula overflowed float8."""
QUERY_CANCELED = "57014"
"""SQLSTATE query_canceled: the statement outlived `statement_timeout` (SEARCH_TIMEOUT_MS)."""
LOCK_NOT_AVAILABLE = "55P03"
"""SQLSTATE lock_not_available: the statement waited on another session's lock past `lock_timeout`,
which the request's deadline sets (`memseek.db.deadline_settings`): a search as slow as any other
that outlived its time, not an outage."""


ANN_INDEX = "records_embedding"
"""The HNSW index on `records.embedding` (alembic/versions/0001_initial.py)."""
PINNED_ANN = {"plan_cache_mode": "force_generic_plan", "enable_sort": "off"}
"""The settings a search's first statement runs with where its workspace's plan reads the list
through HNSW (`SearchState.ann_plans`): the prepared statement keeps one generic plan instead of
planning each request (planning is a large share of a vector or hybrid statement's time), and
with sorts disabled that plan reads the list from the index, whatever a generic estimate of the
workspace's size would prefer: any other path to the nearest rows sorts them (PostgreSQL 18
ranks paths by disabled nodes first)."""


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


def planner_settings(pgvector: tuple[int, ...], compiled: CompiledSearch) -> dict[str, str]:
    """The transaction-local settings one search runs with on `pgvector` (see the module docstring)."""
    # psycopg prepares a statement after a few executions; only a shape that one plan serves
    # alike (`compile.reuses_plan`) lets PostgreSQL keep a generic plan, any other is planned
    # for each request's values.
    # No JIT: a scan over a large scope can pass the default jit_above_cost, and compiling
    # costs far more than a statement that runs in milliseconds can gain.
    plans = "auto" if compiled.reuses_plan else "force_custom_plan"
    wanted = {"plan_cache_mode": plans, "jit": "off"}
    if compiled.uses_vector:
        wanted["hnsw.ef_search"] = ef_search(compiled.list_size)
        if pgvector >= ITERATIVE_SCAN_SINCE:
            wanted["hnsw.iterative_scan"] = "relaxed_order"
    return wanted


def ef_search(list_size: int) -> str:
    """`hnsw.ef_search` for a semantic list of `list_size` rows: `EF_SEARCH_MARGIN` more, the
    default 40 at least, pgvector's maximum at most."""
    return str(min(EF_SEARCH_MAX, max(40, math.ceil(list_size * EF_SEARCH_MARGIN))))


def fallback_settings(compiled: CompiledSearch) -> dict[str, str]:
    """The settings a fallback runs with beyond the first statement's: it is planned for its
    request's values (an exact keyword list ranks every match, which a generic plan cannot
    size), and its semantic list is full length (`compile.hybrid_list_size`)."""
    widen = {"plan_cache_mode": "force_custom_plan"}
    if compiled.uses_vector and compiled.list_size < compiled.candidates:
        widen["hnsw.ef_search"] = ef_search(compiled.candidates)
    return widen


def search_settings(pgvector: tuple[int, ...], compiled: CompiledSearch, timeout_ms: int) -> dict[str, str]:
    """`planner_settings` plus the statement timeout (SEARCH_TIMEOUT_MS): a search that outlives
    it is cancelled by PostgreSQL and answered `503 search_timeout`, so one runaway search cannot
    hold a connection and a server thread indefinitely."""
    return planner_settings(pgvector, compiled) | {"statement_timeout": str(timeout_ms)}


Run = Callable[[Executable, Mapping[str, str]], Sequence[Any]]
"""Runs a statement of a search with these settings beyond the search's own; its rows."""


def with_fallbacks(
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


def runner(
    conn: Connection, compiled: CompiledSearch, settings: Mapping[str, str], workspace_id: UUID | None = None
) -> Run:
    """Runs each statement of `compiled` with `settings` and the statement's own for it alone
    (`run_statement`): in a transaction of its own in `workspace_id`, else in the connection's.
    A formula that overflows float8 is a 422 on `rank`, a statement cancelled by its timeout a
    503 `search_timeout`."""

    def run(statement: Executable, extra: Mapping[str, str]) -> Sequence[Any]:
        try:
            return run_statement(
                conn, statement, compiled.params, settings={**settings, **extra}, workspace_id=workspace_id
            )
        except sa.exc.DBAPIError as exc:
            answer = _search_error(exc)
            if answer is None:
                raise
            raise answer from None

    return run


def _search_error(exc: sa.exc.DBAPIError) -> Exception | None:
    """The error a failed search statement is answered with, when not the database's own."""
    state = getattr(exc.orig, "sqlstate", None)
    if state == OUT_OF_RANGE:
        return FormulaOverflow(
            "the rank formula produced a value out of range",
            [Detail(("rank",), "every value a formula produces must be finite")],
        )
    if state in (QUERY_CANCELED, LOCK_NOT_AVAILABLE):
        return SearchTimeout(
            "the search ran longer than this deployment allows (SEARCH_TIMEOUT_MS); "
            "narrow its scope or lower params.candidates"
        )
    return None


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


def run_searches(
    state: SearchState,
    workspace_id: UUID,
    searches: Sequence[CompiledSearch],
    max_concurrency: int,
    timeout_ms: int,
) -> list[SearchResult]:
    """Run every search; results in request order. One search runs in one workspace transaction
    (scope, planner settings and timeout in one round trip). Several all read one snapshot: the
    calling thread's transaction exports it and runs its share, each helper's transaction imports
    it, so a write that commits while they run is in every source's answer or in none. On Citus
    they all run in the calling thread's transaction (`citus.snapshot_readers`)."""
    engine = state.engine
    if len(searches) <= 1:
        return [_alone(state, workspace_id, compiled, timeout_ms) for compiled in searches]
    with shared_snapshot(engine, workspace_id) as (lead, snapshot):

        @contextmanager
        def importing() -> Iterator[Callable[[CompiledSearch], SearchResult]]:
            with workspace_transaction(engine, workspace_id, snapshot=snapshot) as conn:
                yield partial(_run_in, conn, state, workspace_id, timeout_ms)

        job = partial(_run_in, lead, state, workspace_id, timeout_ms)
        readers = citus.snapshot_readers(engine, max_concurrency)
        return run_parallel(state.helpers, job, searches, readers, importing)


def _alone(state: SearchState, workspace_id: UUID, compiled: CompiledSearch, timeout_ms: int) -> SearchResult:
    """A search on its own: each statement in a transaction of its own with the search's settings
    (one round trip)."""
    settings = search_settings(state.pgvector, compiled, timeout_ms)
    with scoped_connection(state.engine) as conn:
        return _searched(state, workspace_id, compiled, runner(conn, compiled, settings, workspace_id))


def _run_in(
    conn: Connection, state: SearchState, workspace_id: UUID, timeout_ms: int, compiled: CompiledSearch
) -> SearchResult:
    """One of several searches in a transaction they share: each statement with the search's
    settings for it alone (one round trip)."""
    run = runner(conn, compiled, search_settings(state.pgvector, compiled, timeout_ms))
    return _searched(state, workspace_id, compiled, run)


def _searched(state: SearchState, workspace_id: UUID, compiled: CompiledSearch, run: Run) -> SearchResult:
    """The search, with its fallbacks, through `run`. The first statement of a search that
    `learns_plan` runs on a generic plan pinned to the HNSW index where PostgreSQL's own plan for
    the workspace reads the list through it (`SearchState.ann_plans`); its fallbacks, which read
    other lists, are planned for the request, and so is the search again if its lists come back
    short."""
    plans, key = state.ann_plans, (compiled.statement, workspace_id)
    if compiled.learns_plan and plans.reads_index(key, partial(_plan_reads_ann, run, compiled)):
        result = with_fallbacks(compiled, run, PINNED_ANN)
        if result.candidate_count >= compiled.list_size:
            return result
        plans.learn(key, False)  # a smaller scope than the plan's, or HNSW stopped short
    return with_fallbacks(compiled, run)


def _plan_reads_ann(run: Run, compiled: CompiledSearch) -> bool:
    """Whether PostgreSQL's plan for this request (EXPLAIN, planned for its values) reads the
    semantic list through the HNSW index."""
    [row] = run(_json_explain(compiled.statement), {})
    return ANN_INDEX in _index_names(row["QUERY PLAN"])


@lru_cache(maxsize=TEMPLATE_CACHE)
def _json_explain(statement: Select[Any]) -> Explain:
    """One `EXPLAIN (FORMAT JSON)` per template, so its compiled form is kept like the template's."""
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
    helpers: Executor,
    job: Callable[[T], U],
    items: Sequence[T],
    max_concurrency: int,
    helper_job: Callable[[], AbstractContextManager[Callable[[T], U]]] | None = None,
) -> list[U]:
    """`job` over `items`, at most `max_concurrency` at once; results (or the first error) in
    input order. The calling thread takes part beside threads of `helpers`: with every helper
    busy it runs them all itself. A helper runs `job` or, given `helper_job`, the job that
    context yields, entered when the helper claims its first item and left when no item is left
    (or its job failed)."""
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
    started = [
        helpers.submit(contextvars.copy_context().run, drain, own)
        for _ in range(min(len(items), max_concurrency) - 1)
    ]
    drain(lambda: nullcontext(job))
    for helper in started:
        if not helper.cancel():  # one that never started has nothing left to do
            helper.result()
    if errors:
        raise min(errors, key=lambda error: error[0])[1]
    return results


def _next(claim: Iterator[int], lock: threading.Lock, done: int) -> int:
    with lock:
        return next(claim, done)
