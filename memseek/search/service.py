"""One search request, end to end: resolve → embed → compile → execute → fuse → render.

`run_search` is what `POST /search`, `GET /search`, `GET /context` and search views call. It
returns the response body plus the hit ids (for provenance) and stage timings (for the
`Server-Timing` header). Only `embed` and `execute` (and the graph walk, through its own module)
do IO; touch-on-read is handed to the runtime's background `TouchQueue`; everything else here is
plumbing between pure stages.

Boost (combined searches) is evaluated in Python (`fuse.evaluate_rank`) from the stored values
each source statement returns: it is defined over the merged pool, which no single statement
sees. Ages are measured from the request's one `now`, the same instant the SQL used.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Mapping
from collections.abc import Sequence
from dataclasses import dataclass
from dataclasses import replace
from datetime import UTC
from datetime import datetime
from typing import Any
from typing import get_args
from uuid import UUID

from memseek.catalog.catalog import Catalog
from memseek.catalog.conf import LlmScore
from memseek.catalog.fields import MISSING
from memseek.catalog.fields import read_field
from memseek.catalog.rank import AgeField
from memseek.catalog.rank import age_fields
from memseek.db import workspace_transaction
from memseek.errors import BackendUnavailable
from memseek.errors import ResponseTooLarge
from memseek.models.query_cache import QueryVector
from memseek.runtime import Runtime
from memseek.search import fuse
from memseek.search.boost import apply_graph_boost
from memseek.search.compile import RARITY_SCALE
from memseek.search.compile import CompiledSearch
from memseek.search.compile import Inputs
from memseek.search.compile import Output
from memseek.search.compile import compile_search
from memseek.search.embed import embed_query
from memseek.search.execute import SearchResult
from memseek.search.execute import fallback_settings
from memseek.search.execute import prepare_transaction
from memseek.search.execute import run_parallel
from memseek.search.execute import run_searches
from memseek.search.explain_script import Script
from memseek.search.fuse import Hit
from memseek.search.fuse import RankedList
from memseek.search.graph import proximity
from memseek.search.render import RenderRow
from memseek.search.render import json_text
from memseek.search.render import render_block
from memseek.search.request import SearchSpec
from memseek.search.rerank import MODEL_ALIAS
from memseek.search.rerank import diagnostics as rerank_diagnostics
from memseek.search.rerank import llm_judge
from memseek.search.resolve import RequestPlan
from memseek.search.resolve import SearchPlan
from memseek.search.resolve import resolve

log = logging.getLogger(__name__)

ROUTE = "POST /search"
SCORED_RANKING = {
    "scored": True,
    "score_semantics": "query_relative",
    "score_range": [0.0, 1.0],
    "normalization": "min_max",
    "normalization_scope": "ranked_candidates",
    "calibrated": False,
    "higher_is_better": True,
    "native_score_field": "rank_score",
}
INCLUDE_ORDER = (
    "text", "collection", "collection_version", "entity", "type", "key", "status", "depth",
    "occurred_at", "created_at", "run_id", "scores",
)  # fmt: skip
"""The order include values appear in on a hit (the spec's example order)."""


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


@dataclass(frozen=True, slots=True)
class Prepared:
    """A resolved request with its compiled statements (what `memseek explain` prints)."""

    plan: RequestPlan
    searches: tuple[SearchPlan, ...]
    compiled: tuple[CompiledSearch, ...]
    now: datetime
    embed_ms: float


@dataclass(frozen=True, slots=True)
class Ranked:
    """The final order (cut to k) and the bounds of the pool the public score is scaled over."""

    hits: tuple[Hit, ...]
    low: float | None
    high: float | None


def _ms(since: float) -> float:
    return (time.perf_counter() - since) * 1000.0


def prepare(runtime: Runtime, workspace_id: UUID, spec: SearchSpec, label: str = ROUTE) -> Prepared:
    """Resolve, embed (once, if needed) and compile every search of a request."""
    plan = resolve(spec, runtime.catalog, runtime.settings)
    _check_backends(plan, runtime.catalog)
    started = time.perf_counter()
    vector = _embed(runtime, plan, spec.q, workspace_id)
    embed_ms = _ms(started)
    now = datetime.now(UTC)
    inputs = Inputs(
        workspace_id,
        now,
        vector.values if vector else None,
        vector.model_id if vector else None,
        large_workspace=workspace_id in runtime.large_workspaces,
    )
    # The judge reads each record's text, so reranking fetches it even when no hit shows it.
    output = Output(
        text="text" in plan.include or plan.render or plan.rerank is not None,
        content=bool(plan.fields),
        annotations=bool(plan.annotations),
        metadata=shows_metadata(plan),
    )
    searches = tuple(_effective(p, spec.q, plan) for p in plan.searches)
    compiled = tuple(compile_search(p, inputs, output, label) for p in searches)
    return Prepared(plan, searches, compiled, now, embed_ms)


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


def _effective(search: SearchPlan, q: str | None, plan: RequestPlan) -> SearchPlan:
    """The plan as compiled: the request's q for sources; the whole pool when graph boost re-sorts it."""
    effective = replace(search, q=search.q if search.q is not None else q)
    if plan.graph_boost is not None and not plan.combined:
        effective = replace(effective, k=max(search.k, search.candidates))
    return effective


def _check_backends(plan: RequestPlan, catalog: Catalog) -> None:
    for search in plan.searches:
        backend = catalog.profiles[search.profile].backend
        if backend != "pg":
            raise BackendUnavailable(f"search profile {search.profile!r} ({backend}) is not available here")


def _embed(runtime: Runtime, plan: RequestPlan, q: str | None, workspace_id: UUID) -> QueryVector | None:
    if not plan.needs_embedding or plan.embedding_model is None:
        return None
    return embed_query(runtime.models, plan.embedding_model, q or "", workspace_id)


def run_search(runtime: Runtime, workspace_id: UUID, spec: SearchSpec, label: str = ROUTE) -> SearchOutcome:
    """Run one search request and build its response body (callers touch the hits once they
    have encoded the response: `touch_on_read`)."""
    started = time.perf_counter()
    prepared = prepare(runtime, workspace_id, spec, label)
    if reads_last_accessed(prepared.plan):
        runtime.touches.settle(workspace_id)  # rank on the last_accessed earlier searches set
    searched = time.perf_counter()
    limits = runtime.settings
    concurrency, timeout_ms = limits.search_max_concurrency, limits.search_timeout_ms
    results = run_searches(runtime.engine, workspace_id, prepared.compiled, concurrency, timeout_ms)
    note_workspace_size(runtime, workspace_id, results)
    results, judged = _rerank(runtime, prepared, results)
    ranked, graph_info = _finish(runtime, workspace_id, prepared, _rank(prepared, results), label)
    search_ms = _ms(searched)
    body = build_body(prepared, results, ranked, runtime, {"rerank": judged, "graph_boost": graph_info})
    hit_ids = tuple(hit.id for hit in ranked.hits)
    return SearchOutcome(body, hit_ids, Timings(prepared.embed_ms, search_ms, _ms(started)))


def note_workspace_size(runtime: Runtime, workspace_id: UUID, results: Sequence[SearchResult]) -> None:
    """Remember a workspace its searches counted `RARITY_SCALE` records in (`Runtime.large_workspaces`)."""
    if any((result.counted_records or 0) >= RARITY_SCALE for result in results):
        runtime.large_workspaces.add(workspace_id)


def reads_last_accessed(plan: RequestPlan) -> bool:
    """Whether the request's order can depend on `last_accessed`: a search's rank formula or the
    combined boost ages it. Only then does the search wait for the workspace's queued touches
    (no other part of a search reads the column, and the response never shows it)."""
    formulas = [search.rank for search in plan.searches] + [plan.boost]
    return any("last_accessed" in age_fields(formula) for formula in formulas if formula is not None)


def search_response(
    runtime: Runtime, workspace_id: UUID, spec: SearchSpec, label: str = ROUTE
) -> tuple[bytes, SearchOutcome]:
    """Run, encode (409 when too large), then touch the returned records."""
    outcome = run_search(runtime, workspace_id, spec, label)
    data = encode(outcome.body, runtime.settings.max_response_bytes)
    touch_on_read(runtime, workspace_id, outcome.hit_ids)
    return data, outcome


# --- ranking across searches ------------------------------------------------------------------


def _rerank(
    runtime: Runtime, prepared: Prepared, results: Sequence[SearchResult]
) -> tuple[list[SearchResult], dict[str, Any] | None]:
    """Model reranking inside each search, before merging (the `rerank` diagnostics, or None)."""
    rerank = prepared.plan.rerank
    if rerank is None:
        return list(results), None
    model = runtime.models.chat(MODEL_ALIAS)
    # A search's "first N results" are among its own k: a graph boost widens what the statement
    # returns (`_effective`), never what the model judges.
    pairs = list(zip(prepared.plan.searches, prepared.searches, results, strict=True))
    judged = run_parallel(
        lambda parts: llm_judge(model, parts[1].q or "", parts[2].hits, min(rerank.top_n, parts[0].k)),
        pairs,
        runtime.settings.search_max_concurrency,
    )
    reranked = [_with_hits(result, outcome.hits) for result, outcome in zip(results, judged, strict=True)]
    return reranked, rerank_diagnostics(rerank.top_n, sum(outcome.judged for outcome in judged))


def _with_hits(result: SearchResult, hits: Sequence[Hit]) -> SearchResult:
    """A result re-ordered by the judge: its pool is now the judged list (spec: scores rescaled)."""
    low, high = fuse.pool_bounds([hit.value or 0.0 for hit in hits])
    return replace(result, hits=tuple(hits), low=low, high=high)


def _rank(prepared: Prepared, results: Sequence[SearchResult]) -> Ranked:
    """A single search's hits as the statement ordered and cut them; combined searches merged."""
    plan = prepared.plan
    if not plan.combined:
        (result,) = results
        return Ranked(result.hits, result.low, result.high)
    lists = [
        RankedList(s.source or "", s.weight, r.hits, r.low, r.high, r.candidate_count)
        for s, r in zip(prepared.searches, results, strict=True)
    ]
    merged = fuse.rrf(lists, plan.rank_constant)
    if plan.boost is not None:
        signals = [record_signals(hit.record, prepared.now) for hit in merged]
        merged = fuse.apply_boost(merged, fuse.evaluate_rank(plan.boost, signals))
    return Ranked(tuple(fuse.order_hits(merged)), None, None)


def _cut(ordered: Sequence[Hit], k: int) -> Ranked:
    """The top `k` of a whole ordered pool, with the pool's bounds."""
    low, high = fuse.pool_bounds([hit.value or 0.0 for hit in ordered])
    return Ranked(tuple(ordered[:k]), low, high)


def record_signals(record: Mapping[str, Any], now: datetime) -> fuse.Signals:
    """The query-independent signals of a fetched record (what a boost may read)."""
    ages = {name: fuse.age_hours(record[name], now) for name in get_args(AgeField)}
    return fuse.Signals(scores=record["scores"], ages=ages)


def _finish(
    runtime: Runtime, workspace_id: UUID, prepared: Prepared, ranked: Ranked, label: str
) -> tuple[Ranked, dict[str, Any] | None]:
    """Graph proximity over the whole pool (when asked), then the top-level k and score bounds."""
    plan = prepared.plan
    boost, view = plan.graph_boost, plan.graph_view
    if boost is None or view is None or view.graph is None:
        return (_cut(ranked.hits, plan.k) if plan.combined else ranked), None
    with workspace_transaction(runtime.engine, workspace_id) as conn:
        near = proximity(conn, workspace_id, view.graph, boost.anchor, boost.depth, boost.limit, label)
    structured = not plan.combined and prepared.searches[0].mode == "structured"
    boosted = apply_graph_boost(ranked.hits, near, boost, structured=structured)
    return _cut(boosted.hits, plan.k), boosted.diagnostics


# --- the response -------------------------------------------------------------------------------


def build_body(
    prepared: Prepared,
    results: Sequence[SearchResult],
    ranked: Ranked,
    runtime: Runtime,
    diagnostics: Mapping[str, dict[str, Any] | None],
) -> dict[str, Any]:
    """The spec's "What comes back" shape; `diagnostics` (rerank, graph_boost) appear when set."""
    plan, catalog = prepared.plan, runtime.catalog
    scored = plan.combined or prepared.searches[0].mode != "structured"
    hits = [_hit_json(hit, rank, ranked, plan, catalog, scored) for rank, hit in enumerate(ranked.hits, 1)]
    rendered, truncated = None, False
    # No rows and no fence, nothing rendered: the spec's view wrapper example answers
    # `render: true` with `"hits": []` and `"rendered": null`. A fence is the element even empty.
    if plan.render and (ranked.hits or plan.fence is not None):
        rows = [_render_row(hit.record, catalog) for hit in ranked.hits]
        rendered, truncated = render_block(rows, plan.fence, runtime.settings.search_render_tokens)
    body: dict[str, Any] = {
        "hits": hits,
        "ranking": _ranking(plan, scored),
        "rendered": rendered,
        "truncated": truncated,
        "backend": _backend(prepared, results, catalog),
        "profiles": list(plan.profiles),
    }
    body.update({name: value for name, value in diagnostics.items() if value is not None})
    return body


def _ranking(plan: RequestPlan, scored: bool) -> dict[str, Any]:
    if not scored:
        return {"kind": "structured", "scored": False}
    kind = "rrf" if plan.combined else "llm_judge" if plan.rerank is not None else "rank_expression"
    return {"kind": kind, **SCORED_RANKING}


def _backend(prepared: Prepared, results: Sequence[SearchResult], catalog: Catalog) -> Any:
    entries = []
    for search, result in zip(prepared.searches, results, strict=True):
        profile = catalog.profiles[search.profile]
        entry = {
            "name": profile.backend,
            "layout": getattr(profile, "layout", None),
            "candidate_count": result.candidate_count,
        }
        entries.append({"source": search.source, **entry} if prepared.plan.combined else entry)
    return entries if prepared.plan.combined else entries[0]


def _hit_json(
    hit: Hit, rank: int, ranked: Ranked, plan: RequestPlan, catalog: Catalog, scored: bool
) -> dict[str, Any]:
    out: dict[str, Any] = {"id": str(hit.id), "rank": rank, "score": None}
    if scored:
        value = hit.value or 0.0
        out["score"] = fuse.public_score(value, ranked.low or 0.0, ranked.high or 0.0)
        out["rank_score"] = value
    if plan.combined:
        out["source_ranks"] = dict(hit.source_ranks)
    record = hit.record
    out.update({name: include_value(name, record) for name in INCLUDE_ORDER if name in plan.include})
    if plan.fields:
        collection = catalog.collection(record["collection"], record["collection_version"])
        values = {name: read_field(collection, name, record["content"]) for name in plan.fields}
        out["fields"] = {name: None if value is MISSING else value for name, value in values.items()}
    if plan.annotations:
        out["annotations"] = {name: enrichment_value(catalog, name, record) for name in plan.annotations}
    return out


def enrichment_value(catalog: Catalog, name: str, record: Mapping[str, Any]) -> Any:
    """An enrichment's stored value, or None: an `llm_score` is kept in `scores`, the other
    kinds in `annotations` (design §1, "Processing and enrichments")."""
    stored = record["scores"] if isinstance(catalog.enrichments[name], LlmScore) else record["annotations"]
    return stored.get(name)


def include_value(name: str, record: Mapping[str, Any]) -> Any:
    """One `include` value of a fetched record, in its JSON form."""
    value = record[name]
    if name == "text":
        return json_text(value)
    if isinstance(value, datetime):
        return value.astimezone(UTC).isoformat()
    return value


def _render_row(record: Mapping[str, Any], catalog: Catalog) -> RenderRow:
    collection = catalog.collection(record["collection"], record["collection_version"])
    displayed = [name for name, decl in collection.scores.items() if decl.display]
    values = {name: fuse.numeric_score(record["scores"], name) for name in displayed}
    shown = tuple((name, value) for name, value in values.items() if value is not None)
    return RenderRow(
        id=record["id"],
        occurred_at=record["occurred_at"],
        collection=record["collection"],
        type=record["type"],
        key=record["key"],
        text=record["text"],
        display_scores=shown,
    )


def encode(body: Mapping[str, Any], max_bytes: int) -> bytes:
    """The JSON response bytes; 409 response_too_large past MAX_RESPONSE_BYTES (nothing is dropped)."""
    data = json.dumps(body, ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode()
    if len(data) > max_bytes:
        raise ResponseTooLarge(
            f"the response is {len(data)} bytes, over MAX_RESPONSE_BYTES ({max_bytes}); "
            "reduce k, include, fields or annotations"
        )
    return data


# --- memseek explain ----------------------------------------------------------------------------


def explain_search(
    runtime: Runtime, workspace_id: UUID, spec: SearchSpec, label: str = ROUTE, analyze: bool = False
) -> str:
    """The script running each search of a request as the service does (`explain_script`): its
    statements (their comment naming `label`) with their planner settings; with `analyze`, also
    `EXPLAIN (ANALYZE, BUFFERS)` output."""
    script = Script(workspace_id)
    prepared = prepare(runtime, workspace_id, spec, label)
    for search, compiled in zip(prepared.searches, prepared.compiled, strict=True):
        with workspace_transaction(runtime.engine, workspace_id) as conn:
            script.comment(f"search {search.source or '(single)'}: {search.mode}, profile {search.profile}")
            script.settings(prepare_transaction(conn, compiled))
            script.statement(conn, compiled.statement, compiled.params, analyze)
            for fallback in compiled.fallbacks:
                script.comment("run instead when the statement above reports short:")
                script.settings(fallback_settings(compiled))
                script.statement(conn, fallback(), compiled.params, analyze=False)
    return script.text()


# --- touch on read ------------------------------------------------------------------------------


def touch_on_read(runtime: Runtime, workspace_id: UUID, ids: Sequence[UUID]) -> None:
    """Mark returned records as read, in the background (best-effort: never raises)."""
    if not ids or not runtime.settings.touch_on_read:
        return
    try:
        runtime.touches.add(workspace_id, ids)
    except Exception:  # e.g. no thread could be started; the search already succeeded
        log.exception("touch-on-read failed for %d records", len(ids))
