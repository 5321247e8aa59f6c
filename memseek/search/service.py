"""One search request, end to end: resolve → embed → compile → execute → rerank → merge →
graph boost → response.

`run_search` is what `POST /search`, `GET /search`, `GET /context` and search views call. It
returns the response body plus the hit ids (for provenance) and stage timings (for the
`Server-Timing` header). This module only orchestrates; each stage is its own module. Only
`embed`, `execute`, the rerank judge and the graph boost's walk do IO; touch-on-read is handed
to the runtime's background `TouchQueue`.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any
from uuid import UUID

from memseek.db import workspace_transaction
from memseek.errors import FormulaOverflow
from memseek.errors import RankEvaluationFailed
from memseek.runtime import Runtime
from memseek.search import merge
from memseek.search.compile import RARITY_SCALE
from memseek.search.execute import SearchResult
from memseek.search.execute import run_searches
from memseek.search.explain import Script
from memseek.search.explain import add_search
from memseek.search.graph_boost import boost_by_graph
from memseek.search.prepare import ROUTE
from memseek.search.prepare import prepare
from memseek.search.request import CombinedSearch
from memseek.search.request import SearchSpec
from memseek.search.rerank import MODEL_ALIAS
from memseek.search.rerank import rerank_searches
from memseek.search.resolve import RequestPlan
from memseek.search.response import build_body
from memseek.search.response import encode

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class Timings:
    """Server-side milliseconds per stage."""

    embed: float
    search: float
    total: float

    def header(self) -> str:
        """The `Server-Timing` header value."""
        return f"embed;dur={self.embed:.2f}, search;dur={self.search:.2f}, total;dur={self.total:.2f}"


@dataclass(frozen=True, slots=True)
class SearchOutcome:
    """A finished search: the response body, the hit ids in order, and stage timings."""

    body: dict[str, Any]
    hit_ids: tuple[UUID, ...]
    timings: Timings


def _ms(since: float) -> float:
    return (time.perf_counter() - since) * 1000.0


def run_search(runtime: Runtime, workspace_id: UUID, spec: SearchSpec, label: str = ROUTE) -> SearchOutcome:
    """Run one search request and build its response body (callers touch the hits once they
    have encoded the response: `touch_on_read`). A formula that overflows is the caller's 422
    only where the request wrote one (`writes_formula`); the deployment's own formulas that
    overflow are its operator's problem, `RankEvaluationFailed`."""
    try:
        return _run_search(runtime, workspace_id, spec, label)
    except FormulaOverflow:
        if writes_formula(spec):
            raise
        raise RankEvaluationFailed(OVERFLOW_MESSAGE) from None


OVERFLOW_MESSAGE = (
    "a ranking formula of this deployment produced a value out of range for the stored records; "
    "the operator can see it in the service log"
)


def writes_formula(spec: SearchSpec) -> bool:
    """Whether the request brings a formula of its own (a rank, a source's rank, a boost)."""
    if isinstance(spec, CombinedSearch):
        return spec.boost is not None or any(source.rank is not None for source in spec.sources)
    return spec.rank is not None


def _run_search(runtime: Runtime, workspace_id: UUID, spec: SearchSpec, label: str) -> SearchOutcome:
    started = time.perf_counter()
    prepared = prepare(runtime, workspace_id, spec, label)
    plan, limits = prepared.plan, runtime.settings
    searched = time.perf_counter()
    concurrency, timeout_ms = limits.search_max_concurrency, limits.search_timeout_ms
    results = run_searches(runtime.search, workspace_id, prepared.compiled, concurrency, timeout_ms)
    note_workspace_size(runtime, workspace_id, results)
    results, judged = _rerank(runtime, plan, results)
    ranked, graph_info = _finish(runtime, workspace_id, plan, merge.rank(plan, results, prepared.now), label)
    search_ms = _ms(searched)
    diagnostics = {"rerank": judged, "graph_boost": graph_info}
    body = build_body(plan, results, ranked, runtime.catalog, limits.search_render_tokens, diagnostics)
    hit_ids = tuple(hit.id for hit in ranked.hits)
    return SearchOutcome(body, hit_ids, Timings(prepared.embed_ms, search_ms, _ms(started)))


def note_workspace_size(runtime: Runtime, workspace_id: UUID, results: Sequence[SearchResult]) -> None:
    """Remember a workspace its searches counted `RARITY_SCALE` records in
    (`SearchState.large_workspaces`)."""
    if any((result.counted_records or 0) >= RARITY_SCALE for result in results):
        runtime.search.large_workspaces.add(workspace_id)


def search_response(
    runtime: Runtime, workspace_id: UUID, spec: SearchSpec, label: str = ROUTE
) -> tuple[bytes, SearchOutcome]:
    """Run, encode (409 when too large), then touch the returned records."""
    outcome = run_search(runtime, workspace_id, spec, label)
    data = encode(outcome.body, runtime.settings.max_response_bytes)
    touch_on_read(runtime, workspace_id, outcome.hit_ids)
    return data, outcome


def _rerank(
    runtime: Runtime, plan: RequestPlan, results: Sequence[SearchResult]
) -> tuple[list[SearchResult], dict[str, Any] | None]:
    """Model reranking inside each search, before merging (the `rerank` diagnostics, or None)."""
    if plan.rerank is None:
        return list(results), None
    model = runtime.models.chat(MODEL_ALIAS)
    concurrency = runtime.settings.search_max_concurrency
    return rerank_searches(model, plan.rerank, plan.searches, results, runtime.search.helpers, concurrency)


def _finish(
    runtime: Runtime, workspace_id: UUID, plan: RequestPlan, ranked: merge.Ranked, label: str
) -> tuple[merge.Ranked, dict[str, Any] | None]:
    """Graph proximity over the whole pool (when asked), then the top-level k and score bounds."""
    boosted = boost_by_graph(runtime.engine, workspace_id, plan, ranked.hits, label)
    if boosted is None:
        return (merge.cut(ranked.hits, plan.k) if plan.combined else ranked), None
    return merge.cut(boosted.hits, plan.k), boosted.diagnostics


def explain_search(
    runtime: Runtime, workspace_id: UUID, spec: SearchSpec, label: str = ROUTE, analyze: bool = False
) -> str:
    """The script running each search of a request as the service does (`memseek.search.explain`): its
    statements (their comment naming `label`) with their planner settings; with `analyze`, also
    `EXPLAIN (ANALYZE, BUFFERS)` output."""
    script = Script(workspace_id)
    prepared = prepare(runtime, workspace_id, spec, label)
    for search, compiled in zip(prepared.plan.searches, prepared.compiled, strict=True):
        with workspace_transaction(runtime.engine, workspace_id) as conn:
            add_search(script, conn, runtime.search.pgvector, search, compiled, analyze)
    return script.text()


def touch_on_read(runtime: Runtime, workspace_id: UUID, ids: Sequence[UUID]) -> None:
    """Mark returned records as read, in the background (best-effort: never raises)."""
    if not ids or not runtime.settings.touch_on_read:
        return
    try:
        runtime.touches.add(workspace_id, ids)
    except Exception:  # e.g. no thread could be started; the search already succeeded
        log.exception("touch-on-read failed for %d records", len(ids))
