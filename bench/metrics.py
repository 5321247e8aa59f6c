"""Retrieval metrics from pytrec_eval (the reference trec_eval), and latency percentiles.

Runs are ranked lists; they are handed to trec_eval as strictly decreasing scores so that its
own tie-breaking (by document id) can never reorder what a system returned.
"""

from __future__ import annotations

from collections.abc import Mapping
from collections.abc import Sequence

import numpy as np
import pytrec_eval

Qrels = Mapping[str, Mapping[str, int]]
Ranked = Mapping[str, Sequence[str]]

_MEASURES = {
    "ndcg@10": ("ndcg_cut", "10"),
    "recall@5": ("recall", "5"),
    "recall@10": ("recall", "10"),
    "recall@20": ("recall", "20"),
    "recall@100": ("recall", "100"),
}


def as_run(ranked: Ranked) -> dict[str, dict[str, float]]:
    """Ranked id lists → a trec run whose scores follow the list order (first = highest)."""
    run: dict[str, dict[str, float]] = {}
    for qid, docs in ranked.items():
        unique = list(dict.fromkeys(docs))
        run[qid] = {doc: float(len(unique) - position) for position, doc in enumerate(unique)}
    return run


def evaluate(qrels: Qrels, ranked: Ranked, metrics: Sequence[str]) -> dict[str, float]:
    """Mean of each metric (`ndcg@10`, `recall@k`) over the queries of `qrels` with a relevant doc.

    A query the system returned nothing for counts as 0 (trec_eval would skip it).
    """
    judged = {q: {d: int(r) for d, r in docs.items()} for q, docs in qrels.items() if any(docs.values())}
    families = {f"{_MEASURES[m][0]}.{_MEASURES[m][1]}" for m in metrics}
    evaluator = pytrec_eval.RelevanceEvaluator(judged, families)
    run = as_run({q: ranked.get(q, ()) for q in judged})
    per_query = evaluator.evaluate({q: docs for q, docs in run.items() if docs})
    means = {}
    for name in metrics:
        family, cut = _MEASURES[name]
        values = [per_query.get(q, {}).get(f"{family}_{cut}", 0.0) for q in judged]
        means[name] = float(np.mean(values)) if values else float("nan")
    return means


def percentiles(samples_ms: Sequence[float]) -> dict[str, float]:
    """p50/p95/p99 and the mean (numpy's linear interpolation), in milliseconds."""
    if not samples_ms:
        return {"n": 0, "p50": float("nan"), "p95": float("nan"), "p99": float("nan"), "mean": float("nan")}
    values = np.asarray(samples_ms, dtype=np.float64)
    p50, p95, p99 = np.percentile(values, [50, 95, 99])
    return {
        "n": len(values),
        "p50": float(p50),
        "p95": float(p95),
        "p99": float(p99),
        "mean": float(values.mean()),
    }
