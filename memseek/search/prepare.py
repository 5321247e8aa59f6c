"""A search request's plan and statements: resolve → embed → compile (`prepare`).

What `run_search` executes and `memseek explain` prints. Resolving checks the request against
the catalog; the query is embedded once, only when a vector or hybrid search needs it; each
search compiles to its statement (`compile.compile_search`) with the request's one `now`.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from dataclasses import replace
from datetime import UTC
from datetime import datetime
from uuid import UUID

from memseek.catalog.catalog import Catalog
from memseek.errors import BackendUnavailable
from memseek.models.query_cache import QueryVector
from memseek.runtime import Runtime
from memseek.search.compile import CompiledSearch
from memseek.search.compile import Inputs
from memseek.search.compile import Output
from memseek.search.compile import compile_search
from memseek.search.embed import embed_query
from memseek.search.request import SearchSpec
from memseek.search.resolve import RequestPlan
from memseek.search.resolve import SearchPlan
from memseek.search.resolve import resolve

ROUTE = "POST /search"
"""The statements' label unless a view or another route names its own."""


@dataclass(frozen=True, slots=True)
class Prepared:
    """A resolved request with its compiled statements (what `memseek explain` prints)."""

    plan: RequestPlan
    compiled: tuple[CompiledSearch, ...]
    now: datetime
    embed_ms: float


def prepare(runtime: Runtime, workspace_id: UUID, spec: SearchSpec, label: str = ROUTE) -> Prepared:
    """Resolve, embed (once, if needed) and compile every search of a request."""
    plan = resolve(spec, runtime.catalog, runtime.settings)
    _check_backends(plan, runtime.catalog)
    started = time.perf_counter()
    vector = _embed(runtime, plan, spec.q, workspace_id)
    embed_ms = (time.perf_counter() - started) * 1000.0
    now = datetime.now(UTC)
    inputs = Inputs(
        workspace_id,
        now,
        vector.values if vector else None,
        vector.model_id if vector else None,
        large_workspace=workspace_id in runtime.search.large_workspaces,
    )
    # The judge reads each record's text, so reranking fetches it even when no hit shows it.
    output = Output(
        text="text" in plan.include or plan.render or plan.rerank is not None,
        content=bool(plan.fields),
        annotations=bool(plan.annotations),
        metadata=shows_metadata(plan),
    )
    compiled = tuple(compile_search(_as_compiled(p, plan), inputs, output, label) for p in plan.searches)
    return Prepared(plan, compiled, now, embed_ms)


def shows_metadata(plan: RequestPlan) -> bool:
    """Whether the response or the merge reads stored record columns beyond the ranked ones
    (id, occurred_at, seq): an `include` of any other, fields, annotations, the rendered rows,
    a combined `boost` (scores and ages) or a graph boost (key and entity)."""
    return bool(
        set(plan.include) - {"occurred_at"}
        or plan.fields
        or plan.annotations
        or plan.render
        or plan.boost is not None
        or plan.graph_boost is not None
    )


def _as_compiled(search: SearchPlan, plan: RequestPlan) -> SearchPlan:
    """The search as compiled: a single search whose pool a graph boost re-sorts returns it whole."""
    if plan.graph_boost is not None and not plan.combined:
        return replace(search, k=max(search.k, search.candidates))
    return search


def _check_backends(plan: RequestPlan, catalog: Catalog) -> None:
    for search in plan.searches:
        backend = catalog.profiles[search.profile].backend
        if backend != "pg":
            raise BackendUnavailable(f"search profile {search.profile!r} ({backend}) is not available here")


def _embed(runtime: Runtime, plan: RequestPlan, q: str | None, workspace_id: UUID) -> QueryVector | None:
    if not plan.needs_embedding or plan.embedding_model is None:
        return None
    return embed_query(runtime.models, plan.embedding_model, q or "", workspace_id)
