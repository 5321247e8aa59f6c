"""`python -m bench quality scifact|locomo`: retrieval quality of each search mode beside baselines.

The dataset's documents are written through `POST /records` with vectors from the local model
(the same model the service embeds queries with), then every query is asked through
`POST /search` in each mode, text mode ranked by `[bm25]` (`text_bm25`), and two views
(`POST /views/{name}/query`): vector + text merged with RRF (`fused`), and hybrid ranked by the
blended formula of docs/catalog.md (`blended`). Baselines run in-process on the same texts: BM25
(rank-bm25 over PostgreSQL's English lexemes), exact dense retrieval with the same model, and
their min–max sum (`bm25+dense`). Metrics come from
pytrec_eval. `TOUCH_ON_READ` is off so earlier queries cannot change later rankings through
`last_accessed`.

LoCoMo questions are asked within their own conversation (scope entity = conversation) and
scored per category; category 5 (adversarial) is reported separately from 1–4.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from dataclasses import replace
from typing import Any

import numpy as np
import yaml

from bench import CATALOG_DIR
from bench.baselines import BM25
from bench.baselines import Dense
from bench.baselines import english_tokens
from bench.baselines import minmax_sum
from bench.client import RouteMissing
from bench.client import check
from bench.datasets import Dataset
from bench.datasets import Doc
from bench.datasets import Query
from bench.datasets import load_locomo
from bench.datasets import load_scifact
from bench.load import analyze
from bench.load import processing_counts
from bench.load import wait_processed
from bench.load import write_records
from bench.metrics import evaluate
from bench.metrics import percentiles
from bench.report import database_versions
from bench.report import options_dict
from bench.report import table
from bench.service import Service
from bench.service import ServiceOptions
from bench.service import running_service
from bench.vectors import VectorCache

SERVICE_MODES = ("vector", "text", "text_bm25", "hybrid", "hybrid_weighted", "blended", "fused")


WEIGHTED_RANK: list[Any] = [
    "sum",
    [
        ["product", 0.7, ["normalize", ["similarity"]]],
        ["product", 0.3, ["normalize", ["text_match"]]],
        ["product", 1.0, ["decay", ["age_hours", "last_accessed"], {"midpoint": 24, "exponent": 1}]],
    ],
]
"""`hybrid_weighted`: hybrid mode with this formula as the request's `rank` (spec "Rank
expressions": a request's rank replaces the default; the bench catalog ships none, so plain
`hybrid` measures the service's built-in `N(max(similarity, text_match))`): 0.7 N(similarity) +
0.3 N(text_match) + D24(age(last_accessed)), the earlier blend docs/catalog.md still names
beside its BM25 formula (`blended`). 70 % meaning, 30 % keywords is a round split, fixed before
it was measured, not fitted."""
METRICS = {
    "scifact": ("ndcg@10", "recall@10", "recall@100"),
    "locomo": ("recall@5", "recall@10", "recall@20", "ndcg@10"),
}
DEPTH = {"scifact": 100, "locomo": 20}
FUSED_VIEW = {"scifact": "documents_fused", "locomo": "conversation_fused"}
"""Views in bench/catalog: vector + text merged with RRF, each source and the result cut to DEPTH."""
BLENDED_VIEW = {"scifact": "documents_blended", "locomo": "conversation_blended"}
"""Views in bench/catalog: a hybrid search ranked by docs/catalog.md's blended formula of `bm25`
and `similarity` (`blended`)."""


def blended_rank() -> Any:
    """The blended formula as the bench catalog's `documents_blended` view states it (the latency
    suite sends it as a request's `rank`), so that both suites measure one formula."""
    views = yaml.safe_load((CATALOG_DIR / "views" / "bench.yaml").read_text(encoding="utf-8"))["views"]
    return next(view["query"]["rank"] for view in views if view["name"] == BLENDED_VIEW["scifact"])


@dataclass(frozen=True, slots=True)
class QualityOptions:
    dataset: str = "scifact"
    queries: int | None = None
    corpus: int | None = None


def subset(data: Dataset, queries: int | None, corpus: int | None) -> Dataset:
    """The first `queries` queries, and their relevant docs plus the first `corpus` docs (smoke runs)."""
    if queries is None and corpus is None:
        return data
    chosen = data.queries[:queries] if queries is not None else data.queries
    needed = {d for q in chosen for d in q.relevant}
    keep = {d.doc_id for d in data.docs[: corpus if corpus is not None else len(data.docs)]} | needed
    return replace(data, docs=tuple(d for d in data.docs if d.doc_id in keep), queries=tuple(chosen))


def _scope(data: Dataset, query: Query) -> dict[str, Any]:
    scope: dict[str, Any] = {"collections": [data.docs[0].collection]}
    if query.entity is not None:
        scope["entities"] = [query.entity]
    return scope


def service_call(mode: str, data: Dataset, query: Query) -> tuple[str, dict[str, Any]]:
    """(path, body) asking `query` in `mode`; `fused` calls the dataset's fused view."""
    if mode == "hybrid_weighted":
        path, body = service_call("hybrid", data, query)
        return path, body | {"rank": WEIGHTED_RANK}
    if mode == "text_bm25":
        path, body = service_call("text", data, query)
        return path, body | {"rank": ["bm25"]}
    if mode not in ("fused", "blended"):
        return "/search", {"q": query.text, "mode": mode, "k": DEPTH[data.name], "scope": _scope(data, query)}
    view = (FUSED_VIEW if mode == "fused" else BLENDED_VIEW)[data.name]
    if query.entity is None:
        return f"/views/{view}/query", {"q": query.text}
    return f"/views/{view}/query", {"q": query.text, "conversation": query.entity}


def ask_service(service: Service, data: Dataset, doc_of: dict[str, str], mode: str) -> dict[str, Any]:
    """Every query in `mode`: ranked doc ids per query, and the server's (else client's) milliseconds."""
    ranked: dict[str, list[str]] = {}
    times: list[float] = []
    for query in data.queries:
        path, body = service_call(mode, data, query)
        response = service.client.post(path, body)
        hits = check(response, f"POST {path}")["hits"]
        ranked[query.query_id] = [doc_of[hit["id"]] for hit in hits]
        times.append(response.server_ms if response.server_ms is not None else response.client_ms)
    source = "Server-Timing total" if response.server_ms is not None else "client wall time"
    return {"ranked": ranked, "latency": percentiles(times), "timing_source": source}


def _groups(docs: tuple[Doc, ...]) -> dict[str, list[int]]:
    groups: dict[str, list[int]] = defaultdict(list)
    for index, doc in enumerate(docs):
        groups[doc.entity].append(index)
    return groups


def run_baselines(
    data: Dataset,
    doc_tokens: list[list[str]],
    query_tokens: list[list[str]],
    doc_vectors: np.ndarray,
    query_vectors: np.ndarray,
) -> dict[str, dict[str, list[str]]]:
    """BM25, exact dense retrieval and their min–max sum, each searching only the query's entity
    (as the service does)."""
    bm25: dict[str, BM25] = {}
    dense: dict[str, Dense] = {}
    for entity, rows in _groups(data.docs).items():
        ids = [data.docs[i].doc_id for i in rows]
        bm25[entity] = BM25(ids, [doc_tokens[i] for i in rows])
        dense[entity] = Dense(ids, doc_vectors[rows])
    depth = DEPTH[data.name]
    out: dict[str, dict[str, list[str]]] = {"bm25": {}, "dense": {}, "bm25+dense": {}}
    for query, tokens, vector in zip(data.queries, query_tokens, query_vectors, strict=True):
        entity = query.entity or data.docs[0].entity
        out["bm25"][query.query_id] = bm25[entity].search(tokens, depth)
        out["dense"][query.query_id] = dense[entity].search(vector, depth)
        out["bm25+dense"][query.query_id] = minmax_sum(bm25[entity], dense[entity], tokens, vector, depth)
    return out


def score(data: Dataset, ranked: dict[str, list[str]]) -> dict[str, dict[str, float]]:
    """Metrics per query group: `all` (SciFact) or categories 1–4, `1-4` and 5 (LoCoMo)."""
    metrics = METRICS[data.name]
    if data.name != "locomo":
        return {"all": evaluate({q.query_id: q.relevant for q in data.queries}, ranked, metrics)}
    groups: dict[str, list[Query]] = defaultdict(list)
    for q in data.queries:
        groups[str(q.category)].append(q)
        if q.category != 5:
            groups["1-4"].append(q)
    return {
        name: evaluate({q.query_id: q.relevant for q in qs}, ranked, metrics) | {"queries": len(qs)}
        for name, qs in sorted(groups.items(), key=_category_order)
    }


def _category_order(group: tuple[str, list[Query]]) -> tuple[bool, bool, str]:
    """Categories 1 to 4, then their union `1-4`, then the adversarial 5."""
    name = group[0]
    return name == "5", name == "1-4", name


def _load(service: Service, data: Dataset, doc_vectors: np.ndarray) -> tuple[dict[str, str], str | None]:
    """Write the docs; (record id → doc id, None) or ({}, why not)."""
    try:
        written = write_records(
            service,
            [d.record_in() for d in data.docs],
            list(doc_vectors),
            progress=f"POST /records ({data.name})",
        )
    except RouteMissing as exc:
        return {}, str(exc)
    wait_processed(service)
    analyze(service)
    return dict(zip(written.ids, (d.doc_id for d in data.docs), strict=True)), None


def run(options: QualityOptions, service_options: ServiceOptions) -> dict[str, Any]:
    """Load, ask every query in every mode, run the baselines, score everything."""
    loader = {"scifact": load_scifact, "locomo": load_locomo}[options.dataset]
    data = subset(loader(), options.queries, options.corpus)
    cache = VectorCache()
    doc_vectors = cache.vectors([d.text for d in data.docs], progress=f"{data.name} doc vectors")
    query_vectors = cache.vectors([q.text for q in data.queries], progress=f"{data.name} query vectors")
    systems: dict[str, dict[str, Any]] = {}
    with running_service(replace(service_options, touch_on_read=False)) as service:
        doc_of, missing = _load(service, data, doc_vectors)
        for mode in SERVICE_MODES:
            try:
                systems[mode] = {"missing": missing} if missing else ask_service(service, data, doc_of, mode)
            except RouteMissing as exc:
                systems[mode] = {"missing": str(exc)}
        states = processing_counts(service)
        with service.connect() as conn:
            doc_tokens = english_tokens(conn, [d.text for d in data.docs])
            query_tokens = english_tokens(conn, [q.text for q in data.queries])
            versions = database_versions(conn)
    for name, ranked in run_baselines(data, doc_tokens, query_tokens, doc_vectors, query_vectors).items():
        systems[name] = {"ranked": ranked}
    for system in systems.values():
        if "ranked" in system:
            system["metrics"] = score(data, system.pop("ranked"))
    return {
        "options": options_dict(options),
        "database": versions,
        "dataset": data.name,
        "docs": len(data.docs),
        "queries": len(data.queries),
        "skipped_evidence": data.skipped_evidence,
        "processing_states": states,
        "systems": systems,
    }


def render(result: dict[str, Any]) -> str:
    """One row per system (and per LoCoMo category group)."""
    metrics = METRICS[result["dataset"]]
    rows = []
    for name, system in result["systems"].items():
        if "metrics" not in system:
            rows.append([name, "—", *(["—"] * len(metrics)), "—", system.get("missing", "")])
            continue
        latency = system.get("latency", {}).get("p50")
        for group, values in system["metrics"].items():
            rows.append([name, group, *(values[m] for m in metrics), latency, ""])
    return table(["system", "group", *metrics, "p50 ms", "note"], rows, digits=3)
