"""A search request's plan and statements: resolve → embed → compile (`prepare`).

What `run_search` executes and `memseek explain` prints. Resolving checks the request against
the catalog; the query is embedded once, only when a vector or hybrid search needs it; each
search compiles to its statement (`compile.compile_search`) with the request's one `now`.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from collections.abc import Sequence
from dataclasses import dataclass
from dataclasses import replace
from datetime import UTC
from datetime import datetime
from uuid import UUID

from memseek.catalog.catalog import Catalog
from memseek.catalog.rank import age_fields
from memseek.errors import BackendUnavailable
from memseek.errors import Detail
from memseek.errors import RequestInvalid
from memseek.models.config import accepted_model_names
from memseek.models.query_cache import QueryVector
from memseek.models.registry import ModelRegistry
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
    supplied = caller_vectors(runtime.models, plan.searches)
    started = time.perf_counter()
    embedded = _embed(runtime, plan, spec.q, workspace_id)
    embed_ms = (time.perf_counter() - started) * 1000.0
    now = datetime.now(UTC)
    large = workspace_id in runtime.search.large_workspaces
    queued = runtime.touches.queued(workspace_id) if reads_last_accessed(plan) else {}
    # The judge reads each record's text, so reranking fetches it even when no hit shows it.
    output = Output(
        text="text" in plan.include or plan.render or plan.rerank is not None,
        content=bool(plan.fields),
        annotations=bool(plan.annotations),
        metadata=shows_metadata(plan),
    )
    compiled = tuple(
        compile_search(
            _as_compiled(p, plan), _inputs(workspace_id, now, own or embedded, large, queued), output, label
        )
        for p, own in zip(plan.searches, supplied, strict=True)
    )
    return Prepared(plan, compiled, now, embed_ms)


def _inputs(
    workspace_id: UUID,
    now: datetime,
    vector: QueryVector | None,
    large: bool,
    queued: Mapping[UUID, datetime],
) -> Inputs:
    values, model = (vector.values, vector.model_id) if vector else (None, None)
    return Inputs(workspace_id, now, values, model, large_workspace=large, queued_touches=queued)


def reads_last_accessed(plan: RequestPlan) -> bool:
    """Whether the request's order can depend on `last_accessed`: a search's rank formula or the
    combined boost ages it. Only then does the search bind this process's touches of the
    workspace not yet written (`Inputs.queued_touches`): read-your-touches without waiting for
    them to commit. No other part of a search reads the column, and the response never shows it."""
    formulas = [search.rank for search in plan.searches] + [plan.boost]
    return any("last_accessed" in age_fields(formula) for formula in formulas if formula is not None)


def caller_vectors(models: ModelRegistry, searches: Sequence[SearchPlan]) -> tuple[QueryVector | None, ...]:
    """Each search's query vector as the caller supplied it (None where it supplied none), checked
    like a written record's `embedding`: the model must be the searched collections' embedding
    model (its id, or the catalog's model name, stored as the id) and the width its dimensions.
    The model itself is never called; all problems are one 422 at the vector's place."""
    problems: list[Detail] = []
    vectors = tuple(_caller_vector(models, search, problems) for search in searches)
    if problems:
        raise RequestInvalid("the query vector does not fit the collections searched", _unique(problems))
    return vectors


def _caller_vector(models: ModelRegistry, search: SearchPlan, problems: list[Detail]) -> QueryVector | None:
    given = search.caller_vector
    if given is None or search.embedding_model is None:
        return None
    embedder = models.embedder(search.embedding_model)
    decl = models.decls.get(search.embedding_model)
    names = accepted_model_names(embedder.model_id, decl)
    if given.model not in names:
        read = ", ".join(sorted({c.name for c in search.collections}))
        named = " or ".join(map(repr, names))
        msg = f"{read} embed with {named} (alias {search.embedding_model!r}), not {given.model!r}"
        problems.append(Detail((*given.loc, "embedding_model"), msg))
    if len(given.values) != embedder.dimensions:
        msg = f"expected {embedder.dimensions} dimensions, got {len(given.values)}"
        problems.append(Detail((*given.loc, "vector"), msg))
    return QueryVector(given.values, embedder.model_id)


def _unique(details: list[Detail]) -> list[Detail]:
    """A combined search's shared vector is checked once per source reading it: report each once."""
    return list(dict.fromkeys(details))


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
