"""What one runtime's searches share and learn (`Runtime.search`): helper threads, the plan
choices learned per workspace, the pgvector version, the workspaces known to be large.

It is created with the runtime (`SearchState.open`) and closed with it (`close`), never at
import: two runtimes in one process (the tests, a command beside a server) share none of it, and
nothing of it outlives its runtime.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from collections.abc import Hashable
from concurrent.futures import ThreadPoolExecutor
from uuid import UUID

import sqlalchemy as sa
from sqlalchemy.engine import Engine

HELPER_THREADS = 8
"""Threads that run a request's further searches (and model rerank calls). More than the
database pool could serve at once would only queue for connections."""
ANN_PLAN_SECONDS = 300.0
"""How long a learned plan choice holds before the next request asks PostgreSQL again."""
_PGVECTOR_VERSION = sa.text("SELECT extversion FROM pg_extension WHERE extname = 'vector'")


class AnnPlans:
    """Per template and workspace: whether PostgreSQL's own plan reads the semantic list through
    the HNSW index (`execute`). Learned from one EXPLAIN (one planning more, once per
    `ANN_PLAN_SECONDS`) and kept for at most `size` templates and workspaces (the oldest go first)."""

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


class LargeWorkspaces:
    """Workspaces a search found holding at least `RARITY_SCALE` records: their keyword searches
    skip counting them (`memseek.search.compile.rarity_bounds`). Erasure can shrink a workspace,
    so an entry holds for `seconds` and the next search counts again; an erasure run by this
    process drops its workspace at once (`discard`). Until then a shrunken workspace's keyword
    rarity labels use the larger count, which changes how matches rank, never which records
    match."""

    def __init__(self, seconds: float = ANN_PLAN_SECONDS) -> None:
        self._seconds = seconds
        self._until: dict[UUID, float] = {}
        self._lock = threading.Lock()

    def add(self, workspace_id: UUID) -> None:
        with self._lock:
            self._until[workspace_id] = time.monotonic() + self._seconds

    def discard(self, workspace_id: UUID) -> None:
        with self._lock:
            self._until.pop(workspace_id, None)

    def __contains__(self, workspace_id: object) -> bool:
        with self._lock:
            until = self._until.get(workspace_id)  # type: ignore[call-overload]
            if until is not None and until <= time.monotonic():
                del self._until[workspace_id]  # type: ignore[arg-type]
                until = None
        return until is not None


class SearchState:
    """The search state of one runtime, over one database (see the module docstring)."""

    def __init__(self, engine: Engine, pgvector: tuple[int, ...], helpers: int = HELPER_THREADS) -> None:
        self.engine = engine
        self.pgvector = pgvector
        """The installed pgvector version (`(0,)` without the extension)."""
        self.helpers = ThreadPoolExecutor(max_workers=helpers, thread_name_prefix="memseek-search")
        """Started on first use and kept: a thread started per request must be scheduled before
        it runs, which takes longest when the cores are busy, when a combined search can least
        afford it."""
        self.ann_plans = AnnPlans()
        self.large_workspaces = LargeWorkspaces()
        """Workspaces known to hold at least `RARITY_SCALE` records (`LargeWorkspaces`)."""

    @classmethod
    def open(cls, engine: Engine) -> SearchState:
        """The state for searches of `engine`'s database (reads its pgvector version: the
        database must be migrated)."""
        with engine.connect() as conn:
            raw = conn.execute(_PGVECTOR_VERSION).scalar()
        return cls(engine, tuple(int(part) for part in str(raw or "0").split(".") if part.isdigit()))

    def close(self) -> None:
        """Stop the helper threads once the searches they run have finished."""
        self.helpers.shutdown(wait=True)
