"""The search response body (pure; no IO): the spec's "What comes back" shape, and its bytes.

A hit shows its id, rank and public score (`fuse.public_score`, scaled over the ranked pool;
null for a structured search, which has no values), then the `include` values in the spec's
order, the declared fields and the annotations asked for. The ranking contract says how the
scores were made; the backend entry (one per source of a combined search) what each search
proposed. The rendered block is `render.py`'s. `encode` refuses a body past MAX_RESPONSE_BYTES
rather than drop anything from it.
"""

from __future__ import annotations

from collections.abc import Mapping
from collections.abc import Sequence
from datetime import UTC
from datetime import datetime
from typing import Any

from memseek.catalog.catalog import Catalog
from memseek.catalog.conf import LlmScore
from memseek.catalog.fields import MISSING
from memseek.catalog.fields import read_field
from memseek.errors import ResponseTooLarge
from memseek.jsontext import json_answer
from memseek.search import fuse
from memseek.search.execute import SearchResult
from memseek.search.fuse import Hit
from memseek.search.merge import Ranked
from memseek.search.render import RenderRow
from memseek.search.render import json_text
from memseek.search.render import render_block
from memseek.search.resolve import RequestPlan

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


def build_body(
    plan: RequestPlan,
    results: Sequence[SearchResult],
    ranked: Ranked,
    catalog: Catalog,
    render_tokens: int,
    diagnostics: Mapping[str, dict[str, Any] | None],
) -> dict[str, Any]:
    """The body for `plan`'s `results` ranked as `ranked`; `diagnostics` (rerank, graph_boost)
    appear when set, the rendered block within `render_tokens`."""
    scored = plan.combined or plan.searches[0].mode != "structured"
    hits = [_hit_json(hit, rank, ranked, plan, catalog, scored) for rank, hit in enumerate(ranked.hits, 1)]
    rendered, truncated = None, False
    # No rows and no fence, nothing rendered: the spec's view wrapper example answers
    # `render: true` with `"hits": []` and `"rendered": null`. A fence is the element even empty.
    if plan.render and (ranked.hits or plan.fence is not None):
        rows = [_render_row(hit.record, catalog) for hit in ranked.hits]
        rendered, truncated = render_block(rows, plan.fence, render_tokens)
    body: dict[str, Any] = {
        "hits": hits,
        "ranking": _ranking(plan, scored),
        "rendered": rendered,
        "truncated": truncated,
        "backend": _backend(plan, results, catalog),
        "profiles": list(plan.profiles),
    }
    body.update({name: value for name, value in diagnostics.items() if value is not None})
    return body


def _ranking(plan: RequestPlan, scored: bool) -> dict[str, Any]:
    if not scored:
        return {"kind": "structured", "scored": False}
    kind = "rrf" if plan.combined else "llm_judge" if plan.rerank is not None else "rank_expression"
    return {"kind": kind, **SCORED_RANKING}


def _backend(plan: RequestPlan, results: Sequence[SearchResult], catalog: Catalog) -> Any:
    entries = []
    for search, result in zip(plan.searches, results, strict=True):
        profile = catalog.profiles[search.profile]
        entry = {
            "name": profile.backend,
            "layout": getattr(profile, "layout", None),
            "candidate_count": result.candidate_count,
        }
        entries.append({"source": search.source, **entry} if plan.combined else entry)
    return entries if plan.combined else entries[0]


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
    """The JSON response bytes (`json_answer`); 409 response_too_large past MAX_RESPONSE_BYTES,
    the closing line break counted (nothing is dropped)."""
    data = json_answer(body)
    if len(data) > max_bytes:
        raise ResponseTooLarge(
            f"the response is {len(data)} bytes, over MAX_RESPONSE_BYTES ({max_bytes}); "
            "reduce k, include, fields or annotations"
        )
    return data
