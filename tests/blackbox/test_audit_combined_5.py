"""A fifth adversarial audit, from the angle of combined searches: weighted RRF arithmetic with
sources that find different records, deduplication, the public score over the merged (and
boosted) pool, `source_ranks`, per-source `k` and `params.candidates` against the top-level `k`,
`backend` diagnostics per source, reranking inside sources, the embedding shared by the sources,
render on a combined search, views that combine searches, and where errors point.

Every test quotes the sentence of views-and-search.md it checks; expected values come from the
spec's formulas, never from the service's output.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

import pytest

from tests.blackbox.conftest import ClientFactory
from tests.blackbox.fusion_support import by_id
from tests.blackbox.fusion_support import chat_calls
from tests.blackbox.fusion_support import combined
from tests.blackbox.fusion_support import extra
from tests.blackbox.fusion_support import ranked_by
from tests.blackbox.support import SCORED_RANKING
from tests.blackbox.support import ids
from tests.blackbox.support import invalid
from tests.blackbox.support import link
from tests.blackbox.support import note
from tests.blackbox.support import rejects
from tests.blackbox.support import search
from tests.blackbox.support import vec
from tests.blackbox.support import write
from tests.conftest import Client
from tests.helpers import error
from tests.helpers import listed_views
from tests.helpers import ok
from tests.helpers import view_query
from tests.openai_server import OpenAIServer

# --- the RRF arithmetic ---------------------------------------------------------------------------


def min_max(values: list[float]) -> list[float]:
    """The spec's public score of each value over the pool `values`."""
    low, high = min(values), max(values)
    return [1.0 if high == low else (v - low) / (high - low) for v in values]


def test_three_weighted_sources_that_each_find_different_records(sx: Client) -> None:
    """ "RRF(record) = sum over sources that found it of weight / (rank_constant + rank_in_source)"
    and "A source that did not find the record contributes nothing at all": three sources with
    weights 0.5, 2 and 3 and rank_constant 10, each cut to its own k."""
    a, b, c, d = write(
        sx,
        note("a", scores={"importance": 4, "urgency": 1, "hidden": 9}),
        note("b", scores={"importance": 3, "urgency": 4}),
        note("c", scores={"importance": 2, "urgency": 3, "hidden": 8}),
        note("d", scores={"importance": 1, "urgency": 2}),
    )
    body = search(
        sx,
        {
            **combined(
                ranked_by("i", "importance", 0.5, k=4),
                ranked_by("u", "urgency", 2, k=2),
                ranked_by("h", "hidden", 3, k=1),
            ),
            "fuse": {"kind": "rrf", "rank_constant": 10},
        },
    )
    expected = {
        a: ({"i": 1, "h": 1}, 0.5 / 11 + 3 / 11),
        b: ({"i": 2, "u": 1}, 0.5 / 12 + 2 / 11),
        c: ({"i": 3, "u": 2}, 0.5 / 13 + 2 / 12),
        d: ({"i": 4}, 0.5 / 14),
    }
    hits = by_id(body)
    assert {i: (h["source_ranks"], h["rank_score"]) for i, h in hits.items()} == {
        i: (ranks, pytest.approx(value)) for i, (ranks, value) in expected.items()
    }
    assert ids(body) == [a, b, c, d]
    values = [expected[i][1] for i in (a, b, c, d)]
    assert [h["score"] for h in body["hits"]] == pytest.approx(min_max(values))
    assert [h["rank"] for h in body["hits"]] == [1, 2, 3, 4]


def test_a_record_found_by_every_source_comes_back_once(sx: Client) -> None:
    """ "Every merged result includes source_ranks: an object mapping each source name to the
    record's position in that source's list": a record all three sources found is one result, its
    value the sum of three contributions."""
    first, second = write(
        sx, note(scores={"importance": 2, "urgency": 1}), note(scores={"importance": 1, "urgency": 2})
    )
    body = search(
        sx, combined(ranked_by("x", "importance"), ranked_by("y", "urgency"), ranked_by("z", "importance"))
    )
    assert sorted(ids(body)) == sorted([first, second])
    hits = by_id(body)
    assert hits[first]["source_ranks"] == {"x": 1, "y": 2, "z": 1}
    assert hits[first]["rank_score"] == pytest.approx(1 / 61 + 1 / 62 + 1 / 61)
    assert hits[second]["source_ranks"] == {"x": 2, "y": 1, "z": 2}
    assert hits[second]["rank_score"] == pytest.approx(1 / 62 + 1 / 61 + 1 / 62)
    assert ids(body) == [first, second]


EXTRA = {"collections": ["sx_extra"]}


def test_the_sweep_threshold_decides_whether_a_weighted_source_sweeps(sx: Client) -> None:
    """ "a source A sweeps every record that only source B found once weight_A / weight_B >=
    (rank_constant + k_A) / (rank_constant + 1)": with k_A 3 and constant 60 the threshold is
    63/61; just above it A's worst record beats B's best, just below it does not."""
    b_best = write(sx, note("b", scores={"urgency": 9}))[0]
    a_records = write(sx, *(extra(f"a{i}", scores={"importance": 3 - i}) for i in range(3)))
    a_worst = a_records[-1]

    def order(weight_a: float) -> list[str]:
        body = search(
            sx,
            combined(
                {
                    "name": "a",
                    "mode": "recent",
                    "scope": EXTRA,
                    "rank": ["score", "importance"],
                    "k": 3,
                    "weight": weight_a,
                },
                ranked_by("b", "urgency", 1.0, k=1),
            ),
        )
        return ids(body)

    above = order(63 / 61 * 1.001)
    assert above.index(a_worst) < above.index(b_best)
    below = order(63 / 61 * 0.999)
    assert below.index(b_best) < below.index(a_worst)


# --- the public score over the merged pool --------------------------------------------------------


def test_score_is_rescaled_over_the_boosted_values(sx: Client) -> None:
    """ "The final value is RRF(record) * max(0, boost(record))" and the public score's input is
    "Final values, after ranking, merging, reranking, and boosts": values 4/62, 1/61 and 0 score
    1, (1/61)/(4/62) and 0."""
    first, second, third = write(
        sx,
        note("a", scores={"importance": 9, "urgency": 1}),
        note("b", scores={"importance": 5, "urgency": 4}),
        note("c", scores={"importance": 1, "urgency": -2}),
    )
    body = search(sx, combined(ranked_by("s", "importance"), boost=["score", "urgency"]))
    assert ids(body) == [second, first, third]
    assert [h["score"] for h in body["hits"]] == pytest.approx([1.0, (1 / 61) / (4 / 62), 0.0])


def test_a_boost_normalizes_over_the_merged_pool_before_the_top_level_k(sx: Client) -> None:
    """ "boost is an optional expression applied after merging", normalize is "(x - min) / (max -
    min) across the current candidates", and "The top-level k applies only after the lists have
    been merged": with k 1, the unreturned records still set normalize's bounds (urgency 0..10 →
    5 reads 0.5) and the public score's lower bound."""
    write(
        sx,
        note("low", scores={"importance": 3, "urgency": 0}),
        note("mid", scores={"importance": 2, "urgency": 5}),
        note("top", scores={"importance": 1, "urgency": 10}),
    )
    boost = ["sum", [["const", 1], ["normalize", ["score", "urgency"]]]]
    body = search(sx, combined(ranked_by("s", "importance"), boost=boost, k=1))
    (hit,) = body["hits"]
    assert hit["source_ranks"] == {"s": 3}
    assert hit["rank_score"] == pytest.approx(2 / 63)
    assert hit["score"] == 1.0
    body = search(sx, combined(ranked_by("s", "importance"), boost=boost, k=2))
    values = [1 / 61, 1.5 / 62, 2 / 63]
    assert [h["rank_score"] for h in body["hits"]] == pytest.approx([2 / 63, 1.5 / 62])
    assert [h["score"] for h in body["hits"]] == pytest.approx(min_max(values)[::-1][:2])


def test_a_single_merged_result_scores_1(sx: Client) -> None:
    """ "score = 1 if high == low": a merged pool of one record."""
    write(sx, note(scores={"importance": 1}))
    body = search(sx, combined(ranked_by("a", "importance", 3), ranked_by("b", "importance", 0.2)))
    (hit,) = body["hits"]
    assert hit["score"] == 1.0 and hit["rank_score"] == pytest.approx(3 / 61 + 0.2 / 61)


RRF_RANKING = {"kind": "rrf", **SCORED_RANKING}
"""The spec's ranking contract of a combined search: "ranking.kind is rrf"."""


def test_graph_boost_on_a_combined_search_rescales_over_the_whole_boosted_pool(sx: Client) -> None:
    """ "With graph_boost | The same pools, but measured after the boost is added" (combined: "Every
    record the merge produced, before the top-level k") and "boosted = previous + weight /
    (distance + 1)": the last-ranked anchor record rises to the top; the unreturned last record
    still sets the lower bound."""
    write(sx, link("people/maya", "advises", "companies/acme"))
    first, second, third, maya = write(
        sx,
        note("a", scores={"importance": 4}),
        note("b", scores={"importance": 3}),
        note("c", scores={"importance": 2}),
        note("m", entity="people/maya", scores={"importance": 1}),
    )
    body = search(
        sx, combined(ranked_by("s", "importance"), graph_boost={"anchor": "people/maya", "weight": 0.01}, k=2)
    )
    values = {first: 1 / 61, second: 1 / 62, third: 1 / 63, maya: 1 / 64 + 0.01}
    assert ids(body) == [maya, first]
    assert [h["rank_score"] for h in body["hits"]] == pytest.approx([values[maya], values[first]])
    low, high = values[third], values[maya]
    assert [h["score"] for h in body["hits"]] == pytest.approx([1.0, (values[first] - low) / (high - low)])
    assert body["hits"][0]["source_ranks"] == {"s": 4}
    assert body["ranking"] == RRF_RANKING
    assert body["graph_boost"]["matched_records"] == 1


def test_the_default_graph_weight_makes_proximity_the_sort_key_of_a_combined_search(sx: Client) -> None:
    """ "The default 0.05 on a combined search is not a nudge: it is larger than any RRF value in
    the response, so it stops being a tie-breaker and becomes the sort key — you get "everything
    near the anchor, then everything else."\""""
    write(sx, link("people/maya", "advises", "companies/acme"))
    plain = write(sx, *(note(f"n{i}", scores={"importance": 10 - i}) for i in range(5)))
    (acme,) = write(sx, note("acme", entity="companies/acme", scores={"importance": 0}))
    body = search(
        sx,
        combined(
            ranked_by("a", "importance"), ranked_by("b", "importance"), graph_boost={"anchor": "people/maya"}
        ),
    )
    assert ids(body) == [acme, *plain]
    assert body["hits"][0]["rank_score"] == pytest.approx(2 / 66 + 0.05 / 2)


# --- per-source k, candidates and the backend diagnostics -----------------------------------------


def test_backend_reports_each_sources_proposals_not_its_cut(sx: Client) -> None:
    """ "backend: Diagnostics per search: {name, layout, candidate_count}, plus source when combining
    searches. candidate_count is how many candidates the search engine proposed before
    re-checking — not a result count": a source cut to k 1 still proposed all five records, and
    entries follow the sources as requested."""
    write(sx, *(note(f"n{i}", scores={"importance": i}) for i in range(5)))
    write(sx, extra("e"))
    body = search(
        sx,
        combined(
            ranked_by("zeta", "importance", k=1),
            {"name": "alpha", "mode": "recent", "scope": EXTRA, "k": 3},
        ),
    )
    assert body["backend"] == [
        {"source": "zeta", "name": "pg", "layout": None, "candidate_count": 5},
        {"source": "alpha", "name": "pg", "layout": None, "candidate_count": 1},
    ]
    assert len(body["hits"]) == 2


def test_a_sources_candidates_bound_what_it_can_contribute(sx: Client) -> None:
    """ "Each source takes its own … params" and "params.candidates … how many records the search
    engine proposes before ranking": recent proposes the newest first, so candidates 2 lets only
    the two newest records into that source."""
    old, newer, newest = write(
        sx,
        note("old", occurred_at="2026-07-01T00:00:00Z", scores={"importance": 9}),
        note("newer", occurred_at="2026-07-02T00:00:00Z", scores={"importance": 1}),
        note("newest", occurred_at="2026-07-03T00:00:00Z", scores={"importance": 2}),
    )
    body = search(sx, combined(ranked_by("s", "importance", k=5, params={"candidates": 2})))
    assert ids(body) == [newest, newer]
    assert old not in ids(body)
    assert body["backend"][0]["candidate_count"] == 2


def test_the_top_level_k_may_exceed_what_the_sources_found(sx: Client) -> None:
    """ "hits: The final ordered list, at most k long" with "Each source is ranked and cut to its
    own k before merging": two sources of k 2 over four distinct records give four hits under a
    top-level k of 100."""
    write(sx, *(note(f"n{i}", scores={"importance": i}) for i in range(4)))
    write(sx, *(extra(f"e{i}") for i in range(4)))
    body = search(
        sx,
        combined(
            ranked_by("n", "importance", k=2),
            {"name": "e", "mode": "recent", "scope": EXTRA, "k": 2},
            k=100,
        ),
    )
    assert len(body["hits"]) == 4
    assert [h["rank"] for h in body["hits"]] == [1, 2, 3, 4]


def test_eight_sources_of_k_100_and_a_top_level_k_of_100(sx: Client) -> None:
    """ "1 to 8 sources", "k (1–100)" per source, top-level "k (default 20, between 1 and 100)":
    120 records, every source of k 100 — the merge holds 100 records (each found by all 8) and
    the top-level k returns 100, ranks 1..100, the last scoring 0 (the pool is exactly them)."""
    write(sx, *(note(f"n{i}", scores={"importance": i}) for i in range(120)))
    sources = [ranked_by(f"s{i}", "importance", k=100) for i in range(8)]
    body = search(sx, combined(*sources, k=100))
    assert len(body["hits"]) == 100
    assert [h["rank"] for h in body["hits"]] == list(range(1, 101))
    assert body["hits"][0]["rank_score"] == pytest.approx(8 / 61)
    assert body["hits"][-1]["source_ranks"] == {f"s{i}": 100 for i in range(8)}
    assert body["hits"][-1]["score"] == 0.0


NOTES = {"collections": ["sx_notes"]}


def test_an_empty_combined_search_is_a_success(sx: Client) -> None:
    """ "An empty list is a successful search that matched nothing" — and the contract and the
    per-source diagnostics are still there."""
    body = search(
        sx,
        combined(
            {"name": "t", "mode": "text", "scope": NOTES},
            {"name": "r", "mode": "recent", "scope": EXTRA},
            q="nothing matches",
        ),
    )
    assert body["hits"] == []
    assert body["ranking"] == RRF_RANKING
    assert [(b["source"], b["candidate_count"]) for b in body["backend"]] == [("t", 0), ("r", 0)]
    assert body["rendered"] is None and body["truncated"] is False


# --- models: one embedding, reranking per source --------------------------------------------------


VEC = {"collections": ["sx_vec"]}


def embedding_calls(server: OpenAIServer) -> int:
    return len([r for r in server.requests if r.path == "/v1/embeddings"])


def test_the_query_is_embedded_once_for_every_source(sx: Client, server: OpenAIServer) -> None:
    """ "If any search is vector or hybrid, the query is embedded once and that vector is shared."\""""
    first, second = write(sx, vec("budget review"), vec("budget plan"))
    body = search(
        sx,
        combined(
            {"name": "v", "mode": "vector", "scope": VEC},
            {"name": "h", "mode": "hybrid", "scope": VEC, "weight": 2},
            q="budget",
        ),
    )
    assert sorted(ids(body)) == sorted([first, second])
    assert embedding_calls(server) == 1


def test_text_and_recent_sources_never_call_the_embedding_provider(
    sx_with: ClientFactory, sx: Client
) -> None:
    """ "Text, recent, and structured searches never call the embedding provider": a combined
    search of those answers without any embedding model configured."""
    (record,) = write(sx, note("budget"))
    offline = sx_with(environ={})
    body = ok(
        offline.post(
            "/search",
            json=combined(
                {"name": "t", "mode": "text", "scope": NOTES},
                {"name": "r", "mode": "recent", "scope": NOTES},
                {"name": "s", "mode": "structured", "scope": NOTES, "order_by": [{"field": "amount"}]},
                q="budget",
            ),
        )
    )
    assert ids(body) == [record]
    assert body["hits"][0]["source_ranks"] == {"t": 1, "r": 1, "s": 1}


def test_a_vector_source_without_embeddings_is_503(sx_with: ClientFactory) -> None:
    """ "Embeddings, search credentials, or the reranking model are unavailable | 503"."""
    body = combined(
        {"name": "t", "mode": "text", "scope": NOTES}, {"name": "v", "mode": "vector", "scope": VEC}, q="x"
    )
    error(sx_with(environ={}).post("/search", json=body), 503)


RECORD = re.compile(r'<record id="([^"]+)">(.*?)</record>')
"""One record of the judge's prompt: its prompt id and text."""


def judge_by_text(scores: dict[str, float]) -> Callable[[list[dict[str, Any]]], str]:
    """A judge reply scoring each record sent by its text."""

    def reply(messages: list[dict[str, Any]]) -> str:
        sent = dict(RECORD.findall(messages[-1]["content"]))
        return json.dumps({"judgments": [{"id": rid, "score": scores[text]} for rid, text in sent.items()]})

    return reply


def test_reranking_inside_sources_feeds_the_merge_and_keeps_the_rrf_contract(
    sx: Client, server: OpenAIServer
) -> None:
    """ "When several searches are combined, reranking happens independently inside each one before
    merging. judged_records is then the total across them, and ranking.kind stays rrf": the
    judge reverses a source's first two, and the RRF value follows the new positions."""
    a, b = write(sx, note("budget a", scores={"importance": 2}), note("budget b", scores={"importance": 1}))
    (other,) = write(sx, extra("budget x"))
    scores = {"budget a": 0.1, "budget b": 0.9, "budget x": 0.5}
    server.reply_with(judge_by_text(scores), judge_by_text(scores))
    body = search(
        sx,
        combined(
            {"name": "n", "mode": "text", "scope": NOTES, "rank": ["score", "importance"]},
            {"name": "x", "mode": "text", "scope": EXTRA, "weight": 0.5},
            q="budget",
            rerank={"backend": "llm_judge", "top_n": 5},
        ),
    )
    assert ids(body) == [b, a, other]
    hits = by_id(body)
    assert hits[b]["source_ranks"] == {"n": 1} and hits[b]["rank_score"] == pytest.approx(1 / 61)
    assert hits[a]["source_ranks"] == {"n": 2} and hits[a]["rank_score"] == pytest.approx(1 / 62)
    assert hits[other]["rank_score"] == pytest.approx(0.5 / 61)
    assert body["ranking"] == RRF_RANKING
    assert body["rerank"] == {"backend": "llm_judge", "top_n": 5, "model": "cheap", "judged_records": 3}
    assert len(chat_calls(server)) == 2


def test_a_failed_judgment_in_one_source_fails_the_combined_search(sx: Client, server: OpenAIServer) -> None:
    """ "A missing, extra, duplicate, or invalid judgment fails the search instead of quietly
    falling back, so you always know whether reranking happened."\""""
    write(sx, note("budget a"))
    write(sx, extra("budget x"))
    server.reply_with(json.dumps({"judgments": []}), json.dumps({"judgments": []}))
    body = combined(
        {"name": "n", "mode": "text", "scope": NOTES},
        {"name": "x", "mode": "text", "scope": EXTRA},
        q="budget",
        rerank={"backend": "llm_judge", "top_n": 5},
    )
    error(sx.post("/search", json=body), 503)


# --- render on a combined search ------------------------------------------------------------------


def test_rendered_rows_follow_the_merged_order_and_the_top_level_k(sx: Client) -> None:
    """ "Setting render: true also returns a compact text block of the same results": the rows are
    the merged hits, in rank order, cut to the top-level k."""
    written = write(sx, *(note(f"row {i}", scores={"importance": 10 - i}) for i in range(4)))
    body = search(sx, combined(ranked_by("s", "importance"), render=True, k=3))
    rows = body["rendered"].splitlines()
    assert [row.split("]", 1)[0] for row in rows] == [f"[id={i}" for i in written[:3]]
    assert ids(body) == written[:3]
    assert body["truncated"] is False


# --- views that combine searches ------------------------------------------------------------------


def test_a_combined_view_reports_the_merge(sx: Client) -> None:
    """ "POST /views/{name}/query on a search view runs the same engine, so its results, ordering,
    scores, rendering, and diagnostics mean exactly what they mean above" and "a view always
    reports backend as a list with one entry per search executed" (sx_fused: words text k 5 weight
    1.0, latest recent k 5 weight 1.1, constant 60)."""
    (word,) = write(sx, note("budget"))
    (latest,) = write(sx, extra("later"))
    body = ok(view_query(sx, "sx_fused", {"task": "budget"}))
    assert ids(body) == [latest, word]
    hits = by_id(body)
    assert hits[latest]["source_ranks"] == {"latest": 1}
    assert hits[latest]["rank_score"] == pytest.approx(1.1 / 61)
    assert hits[word]["source_ranks"] == {"words": 1}
    assert hits[word]["rank_score"] == pytest.approx(1 / 61)
    assert [h["score"] for h in body["hits"]] == [1.0, 0.0]
    assert body["ranking"] == RRF_RANKING
    assert [(b["source"], b["candidate_count"]) for b in body["backend"]] == [("words", 1), ("latest", 1)]
    assert body["input_record_ids"] == [latest, word]
    assert body["profiles"] == ["pg_default"]


def test_get_views_shows_the_profiles_of_a_combined_view(sx: Client) -> None:
    """ "profiles shows which search setups it resolved to" and "collections lists the collections
    the view can be seen to read"."""
    listed = ok(sx.get("/views"))["views"]
    (fused,) = [v for v in listed if v["name"] == "sx_fused" and v["version"] == 1]
    assert fused["profiles"] == ["pg_default"]
    assert sorted(fused["collections"]) == ["sx_extra", "sx_notes"]
    assert fused["kind"] == "search"


# --- where errors point ---------------------------------------------------------------------------


RRF = {"kind": "rrf"}


@pytest.mark.parametrize(
    ("body", "loc"),
    [
        pytest.param(
            {"mode": "recent", "scope": NOTES, "boost": ["const", 2]},
            ("boost",),
            id="boost-on-a-single-search",
        ),
        pytest.param(
            {"mode": "recent", "scope": NOTES, "fuse": RRF}, ("fuse",), id="fuse-on-a-single-search"
        ),
        pytest.param(
            {"mode": "recent", "scope": NOTES, "weight": 1.0}, ("weight",), id="weight-on-a-single-search"
        ),
        pytest.param(
            {"mode": "recent", "scope": NOTES, "name": "a"}, ("name",), id="name-on-a-single-search"
        ),
        pytest.param(
            combined(ranked_by("a", "importance"), boost=["similarity"]),
            ("boost",),
            id="boost-similarity-alone",
        ),
        pytest.param(
            combined(ranked_by("a", "importance"), boost=["sum", [["const", 1]] * 16]),
            ("boost",),
            id="boost-17-nodes",
        ),
        pytest.param(
            combined(
                ranked_by("a", "importance"), boost=["decay", ["const", 1], {"midpoint": 0, "exponent": 1}]
            ),
            ("boost",),
            id="boost-bad-option",
        ),
        pytest.param(
            combined(ranked_by("a", "importance"), boost=["nope", 1]), ("boost",), id="boost-unknown-operator"
        ),
        pytest.param(
            combined(
                ranked_by("a", "importance"),
                {**ranked_by("b", "urgency"), "rank": ["sum", [["const", 1]] * 16]},
            ),
            ("sources", 1, "rank"),
            id="source-rank-17-nodes",
        ),
        pytest.param(
            combined(ranked_by("a", "importance"), {"name": "b", "mode": "text", "scope": NOTES}),
            ("q",),
            id="q-missing-for-the-second-source",
        ),
        pytest.param(
            combined(ranked_by("a", "importance"), {"name": "b", "mode": "vector", "scope": NOTES}, q="x"),
            ("sources", 1),
            id="vector-source-over-a-collection-without-embeddings",
        ),
        pytest.param(
            combined(
                ranked_by("a", "importance"),
                {"name": "b", "mode": "recent", "scope": {"collections": ["sx_nope"]}},
            ),
            ("sources", 1, "scope", "collections"),
            id="unknown-collection-in-the-second-source",
        ),
        pytest.param(
            combined(ranked_by("a", "importance"), fields=["secret"]),
            ("fields", 0),
            id="fields-not-returnable",
        ),
        pytest.param(
            combined(ranked_by("a", "importance"), fence={"tag": "records"}),
            ("fence",),
            id="fence-without-render",
        ),
    ],
)
def test_errors_are_located_at_the_key_at_fault(
    sx: Client, body: dict[str, Any], loc: tuple[Any, ...]
) -> None:
    """ "The request or a catalog reference is invalid | 422", the query language being a strict
    request ("an unknown key is an error, not something silently ignored"): boost, fuse, weight and
    name belong to combined searches only; a source's own problems are reported inside it."""
    err = rejects(sx, body)
    assert any(d["loc"][: len(loc)] == list(loc) for d in err["details"]), err["details"]


@pytest.mark.parametrize(
    ("source", "loc"),
    [
        pytest.param(
            {
                "name": "b",
                "mode": "recent",
                "scope": {"collections": ["sx_notes"], "collection_versions": {"sx_notes": [9]}},
            },
            ("sources", 1, "scope", "collection_versions"),
            id="unknown-pinned-version",
        ),
        pytest.param("not a source", ("sources", 1), id="not-an-object"),
        pytest.param(
            {"name": "b", "mode": "structured", "scope": NOTES, "order_by": [{"field": "tags"}]},
            ("sources", 1, "order_by"),
            id="order-by-not-sortable",
        ),
        pytest.param(
            {
                "name": "b",
                "mode": "structured",
                "scope": NOTES,
                "order_by": [{"field": "amount"}],
                "rank": ["const", 1],
            },
            ("sources", 1, "rank"),
            id="rank-in-a-structured-source",
        ),
    ],
)
def test_the_second_sources_problems_are_located_in_it(sx: Client, source: Any, loc: tuple[Any, ...]) -> None:
    """ "Each source takes its own mode, scope, where, order_by, rank, params, and k (1–100) — the
    same options as a single search": the single search's rules (pinned versions resolve,
    order_by on sortable fields, no custom ranking in structured mode) hold inside each source."""
    err = rejects(sx, combined(ranked_by("a", "importance"), source))
    assert any(d["loc"][: len(loc)] == list(loc) for d in err["details"]), err["details"]


# --- candidates per source, concurrency, size -----------------------------------------------------


@pytest.mark.parametrize(
    ("source_k", "top_k", "expected"),
    [pytest.param(15, 1, 150, id="source-k-15"), pytest.param(5, 100, 100, id="source-k-5")],
)
def test_a_sources_default_candidates_follow_its_own_k(
    sx: Client, source_k: int, top_k: int, expected: int
) -> None:
    """ "params.candidates (1–1000, default min(1000, max(100, 10 * k)) per search)" and "Each source
    takes its own … k": the default net of a source is computed from the source's k, not the
    top-level k; candidate_count is "how many candidates the search engine proposed"."""
    write(sx, *(note(f"n{i}") for i in range(160)))
    body = search(sx, combined({"name": "s", "mode": "recent", "scope": NOTES, "k": source_k}, k=top_k))
    assert body["backend"][0]["candidate_count"] == expected
    assert len(body["hits"]) == min(source_k, top_k)


# --- a view whose fusion takes parameters ---------------------------------------------------------


@pytest.fixture
def four_events(c5: Client) -> list[str]:
    """x: events 1st, reflections 4th (the worked example); a, b, c: reflections 1st to 3rd."""
    return write(
        c5,
        note("budget x", scores={"importance": 10, "urgency": 6}),
        note("budget a", scores={"importance": 3, "urgency": 9}),
        note("budget b", scores={"importance": 2, "urgency": 8}),
        note("budget c", scores={"importance": 1, "urgency": 7}),
    )


def test_the_worked_example_through_a_view(c5: Client, four_events: list[str]) -> None:
    """ "Take the view above — weights 1.0 (events) and 1.1 (reflections), constant 60. A record
    ranked 1st by events and 4th by reflections scores 1.0/(60 + 1) + 1.1/(60 + 4) = 0.033581"."""
    x = four_events[0]
    body = ok(view_query(c5, "c5_blend", {"task": "budget"}))
    hits = by_id(body)
    assert hits[x]["source_ranks"] == {"events": 1, "reflections": 4}
    assert round(hits[x]["rank_score"], 6) == 0.033581
    assert body["parameters"] == {"task": "budget", "w": 1.1, "c": 60, "n": 15}
    assert body["ranking"] == RRF_RANKING
    assert [b["source"] for b in body["backend"]] == ["events", "reflections"]
    assert body["rendered"] is not None


def test_view_parameters_reach_the_weight_the_constant_and_the_sources_k(
    c5: Client, four_events: list[str]
) -> None:
    """ "When the view is called, Memseek … fills the placeholders": weight 2, constant 10 and the
    reflections source cut to k 1 — x scores 1/11 and a 1/12 + 2/11."""
    x, a, b, c = four_events
    body = ok(view_query(c5, "c5_blend", {"task": "budget", "w": 2, "c": 10, "n": 1}))
    hits = by_id(body)
    assert hits[x]["source_ranks"] == {"events": 1}
    assert hits[x]["rank_score"] == pytest.approx(1 / 11)
    assert hits[a]["source_ranks"] == {"events": 2, "reflections": 1}
    assert hits[a]["rank_score"] == pytest.approx(1 / 12 + 2 / 11)
    assert ids(body) == [a, x, b, c]


@pytest.mark.parametrize(
    "parameters",
    [
        pytest.param({"w": 2.5}, id="weight-over-its-maximum"),
        pytest.param({"c": 0}, id="constant-under-its-minimum"),
        pytest.param({"n": 101}, id="k-over-its-maximum"),
        pytest.param({"w": "1.1"}, id="weight-as-a-string"),
    ],
)
def test_out_of_range_fusion_parameters_are_refused(c5: Client, parameters: dict[str, Any]) -> None:
    """ "Memseek rejects unknown, missing, wrongly typed, or out-of-range parameters"."""
    (name,) = parameters
    invalid(view_query(c5, "c5_blend", {"task": "budget", **parameters}), "parameters", name)


def test_get_views_lists_the_combined_views_contract(c5: Client) -> None:
    """ "input_schema is the complete machine-readable contract, including … numeric and length
    limits, and defaults", "collections lists the collections the view can be seen to read, and
    profiles shows which search setups it resolved to"."""
    entry = listed_views(c5)[("c5_blend", 1)]
    assert entry["collections"] == ["sx_notes"]
    assert entry["profiles"] == ["pg_default"]
    assert entry["input_schema"]["properties"]["w"] == {
        **entry["input_schema"]["properties"]["w"],
        "minimum": 0.5,
        "maximum": 2,
        "default": 1.1,
    }
    assert entry["input_schema"]["required"] == ["task"]


# --- ties after fusion ----------------------------------------------------------------------------


def test_a_pool_that_ties_on_rrf_scores_1_and_falls_to_the_tie_order(sx: Client) -> None:
    """ "RRF(record) = sum over sources that found it of weight / (rank_constant + rank_in_source)",
    "if every candidate ties, every result scores 1.0" and "results are ordered by internal value
    descending, then by occurred_at descending": four sources rank four records as a Latin square,
    so every record's RRF is 1/3 + 1/4 + 1/5 + 1/6 — a tie, whatever order the terms are added in."""
    newest, second, third, oldest = write(
        sx,
        note("x", occurred_at="2026-07-04T00:00:00Z", scores={"importance": 4, "urgency": 3, "hidden": 2}),
        note("y", occurred_at="2026-07-03T00:00:00Z", scores={"importance": 3, "urgency": 4, "hidden": 1}),
        note("z", occurred_at="2026-07-02T00:00:00Z", scores={"importance": 2, "urgency": 1, "hidden": 4}),
        note("w", occurred_at="2026-07-01T00:00:00Z", scores={"importance": 1, "urgency": 2, "hidden": 3}),
    )
    reversed_importance = ["product", -1, ["score", "importance"]]
    body = search(
        sx,
        {
            **combined(
                ranked_by("i", "importance"),
                ranked_by("u", "urgency"),
                ranked_by("h", "hidden"),
                {**ranked_by("r", "importance"), "rank": reversed_importance},
            ),
            "fuse": {"kind": "rrf", "rank_constant": 2},
        },
    )
    assert by_id(body)[newest]["source_ranks"] == {"i": 1, "u": 2, "h": 3, "r": 4}
    assert [h["rank_score"] for h in body["hits"]] == [pytest.approx(1 / 3 + 1 / 4 + 1 / 5 + 1 / 6)] * 4
    assert [h["score"] for h in body["hits"]] == [1.0, 1.0, 1.0, 1.0]
    assert ids(body) == [newest, second, third, oldest]


def test_equal_rrf_sums_tie_at_the_default_constant(sx: Client) -> None:
    """ "results are ordered by internal value descending, then by occurred_at descending … These
    tie-breakers affect rank but not rank_score or score": with the default constant 60, ranks
    (1, 2, 7) and (7, 1, 2) in three sources both sum to 1/61 + 1/62 + 1/67, so the newer record
    comes first and both show the same rank_score and score."""
    older, newer, *_fillers = write(
        sx,
        note("x", occurred_at="2026-07-01T00:00:00Z", scores={"importance": 7, "urgency": 6, "hidden": 1}),
        note("y", occurred_at="2026-07-02T00:00:00Z", scores={"importance": 1, "urgency": 7, "hidden": 6}),
        *(
            note(
                f"f{i}",
                occurred_at="2026-06-01T00:00:00Z",
                scores={"importance": 7 - i, "urgency": 6 - i, "hidden": 8 - i - (i > 1)},
            )
            for i in range(1, 6)
        ),
    )
    body = search(
        sx, combined(ranked_by("a", "importance"), ranked_by("b", "urgency"), ranked_by("c", "hidden"))
    )
    hits = by_id(body)
    assert hits[older]["source_ranks"] == {"a": 1, "b": 2, "c": 7}
    assert hits[newer]["source_ranks"] == {"a": 7, "b": 1, "c": 2}
    order = ids(body)
    assert order.index(newer) == order.index(older) - 1
    assert hits[newer]["rank_score"] == hits[older]["rank_score"]
    assert hits[newer]["score"] == hits[older]["score"]


def test_boost_multiplies_before_graph_proximity_adds(sx: Client) -> None:
    """ "The final value is RRF(record) * max(0, boost(record)). boost multiplies; the separate
    graph_boost adds" and "Merge multiple searches with weighted RRF and the optional multiplying
    boost, then add any graph proximity and sort again": 3/61 for the plain record against
    3/62 + 0.01 for the anchor's (not (1/62 + 0.01) * 3)."""
    write(sx, link("people/maya", "advises", "companies/acme"))
    plain, maya = write(
        sx, note("p", scores={"importance": 2}), note("m", entity="people/maya", scores={"importance": 1})
    )
    body = search(
        sx,
        combined(
            ranked_by("s", "importance"),
            boost=["const", 3],
            graph_boost={"anchor": "people/maya", "weight": 0.01},
        ),
    )
    hits = by_id(body)
    assert hits[plain]["rank_score"] == pytest.approx(3 / 61)
    assert hits[maya]["rank_score"] == pytest.approx(3 / 62 + 0.01)
    assert ids(body) == [maya, plain]
    assert body["graph_boost"] == {
        "anchor": "people/maya",
        "depth": 2,
        "weight": 0.01,
        "matched_records": 1,
        "edge_count": 1,
    }


def test_a_source_with_nothing_to_judge_adds_no_judgments(sx: Client, server: OpenAIServer) -> None:
    """ "Each search sends at most its first N results to the catalog's cheap model" and
    "judged_records is then the total across them": a source that found nothing sends nothing."""
    (record,) = write(sx, note("budget a"))
    server.reply_with(judge_by_text({"budget a": 0.4}))
    body = search(
        sx,
        combined(
            {"name": "n", "mode": "text", "scope": NOTES},
            {"name": "x", "mode": "text", "scope": EXTRA},
            q="budget",
            rerank={"backend": "llm_judge", "top_n": 3},
        ),
    )
    assert ids(body) == [record]
    assert body["rerank"]["judged_records"] == 1
    assert len(chat_calls(server)) == 1


# --- more of the merge ----------------------------------------------------------------------------


def test_truncated_rendering_leaves_the_merged_json_whole(sx_with: ClientFactory, sx: Client) -> None:
    """ "When the next complete row would exceed the budget, rendering stops, appends a [...]
    truncated row, and sets truncated: true in the response. The JSON results are unaffected."\""""
    write(sx, *(note(f"row {i} " + "word " * 40, scores={"importance": i}) for i in range(6)))
    body = ok(
        sx_with(search_render_tokens=300).post(
            "/search", json=combined(ranked_by("a", "importance"), ranked_by("b", "importance"), render=True)
        )
    )
    assert len(body["hits"]) == 6
    assert body["truncated"] is True
    assert body["rendered"].splitlines()[-1] == "[...] truncated"
    assert [h["rank"] for h in body["hits"]] == [1, 2, 3, 4, 5, 6]


def test_a_boost_over_a_missing_or_tied_signal_zeroes_every_value(sx: Client) -> None:
    """ "Any missing signal is 0", normalize: "If every candidate ties, all become 0", "The final
    value is RRF(record) * max(0, boost(record))" and "if every candidate ties, every result scores
    1.0": every value becomes 0, so the order falls to occurred_at descending."""
    early, late = write(
        sx,
        note("a", occurred_at="2026-07-01T00:00:00Z", scores={"importance": 9, "urgency": 3}),
        note("b", occurred_at="2026-07-02T00:00:00Z", scores={"importance": 1, "urgency": 3}),
    )
    for boost in (["normalize", ["score", "urgency"]], ["score", "c5_nobody_wrote_this"]):
        body = search(sx, combined(ranked_by("s", "importance"), boost=boost))
        assert ids(body) == [late, early]
        assert [h["rank_score"] for h in body["hits"]] == [0, 0]
        assert [h["score"] for h in body["hits"]] == [1.0, 1.0]
        assert [h["source_ranks"] for h in body["hits"]] == [{"s": 2}, {"s": 1}]


@pytest.mark.parametrize(
    ("body", "loc"),
    [
        pytest.param(
            combined({"name": "t", "mode": "text", "scope": NOTES}, q="   "),
            ("q",),
            id="blank-q-for-a-text-source",
        ),
        pytest.param(
            combined(ranked_by("r", "importance"), q="x" * 8193), ("q",), id="q-over-8192-characters"
        ),
    ],
)
def test_q_rules_hold_for_combined_searches(sx: Client, body: dict[str, Any], loc: tuple[Any, ...]) -> None:
    """ "vector, text, and hybrid all require a non-empty query string q" and "q — the query text,
    up to 8,192 characters by default"."""
    rejects(sx, body, *loc)
