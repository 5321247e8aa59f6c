"""Combined searches, the sources (spec "Combining several searches", "What comes back"): each
source cut to its own `k` and candidates before merging, `backend` and `source_ranks` per
source, one query embedding for every source, reranking inside sources, and the response.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.blackbox.conftest import ClientFactory
from tests.blackbox.fusion_support import by_id
from tests.blackbox.fusion_support import chat_calls
from tests.blackbox.fusion_support import combined
from tests.blackbox.fusion_support import extra
from tests.blackbox.fusion_support import ranked_by
from tests.blackbox.fusion_support import source
from tests.blackbox.support import SCORED_RANKING
from tests.blackbox.support import fused
from tests.blackbox.support import ids
from tests.blackbox.support import note
from tests.blackbox.support import rejects
from tests.blackbox.support import search
from tests.blackbox.support import vec
from tests.blackbox.support import write
from tests.conftest import Client
from tests.helpers import error
from tests.helpers import ok
from tests.openai_server import OpenAIServer
from tests.openai_server import judge_by_text

# --- per-source k, candidates and the backend diagnostics -----------------------------------------


def test_each_source_is_cut_to_its_own_k_before_merging(sx: Client) -> None:
    write(sx, *(note(f"n{i}", scores={"importance": i}) for i in range(10)))
    body = search(sx, {"sources": [source("a", "importance", k=3)], "fuse": {"kind": "rrf"}, "k": 10})
    assert len(body["hits"]) == 3
    assert [h["source_ranks"] for h in body["hits"]] == [{"a": 1}, {"a": 2}, {"a": 3}]


EXTRA = {"collections": ["sx_extra"]}
NOTES = {"collections": ["sx_notes"]}


def test_top_level_k_defaults_to_20_after_merging(sx: Client) -> None:
    write(sx, *(note(f"n{i}") for i in range(15)))
    write(sx, *(extra(f"x{i}") for i in range(15)))
    body = search(
        sx,
        {
            "sources": [
                {"name": "a", "mode": "recent", "scope": NOTES},
                {"name": "b", "mode": "recent", "scope": EXTRA},
            ],
            "fuse": {"kind": "rrf"},
        },
    )
    assert len(body["hits"]) == 20


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


RRF_RANKING = {"kind": "rrf", **SCORED_RANKING}
"""The spec's ranking contract of a combined search: "ranking.kind is rrf"."""


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


IMP = ["score", "importance"]


def test_a_sources_k_defaults_to_20(sx: Client) -> None:
    """ "Each source takes its own … k (1–100) — the same options as a single search" (k default 20),
    and "Each source is ranked and cut to its own k before merging"."""
    write(sx, *(note(f"n{i}", scores={"importance": i}) for i in range(25)))
    plain = {"name": "a", "mode": "recent", "scope": NOTES, "rank": IMP}
    body = search(sx, fused(plain, k=100))
    assert len(body["hits"]) == 20
    assert sorted(hit["source_ranks"]["a"] for hit in body["hits"]) == list(range(1, 21))


def test_a_record_cut_by_a_sources_own_k_has_no_rank_there(sx: Client) -> None:
    """Spec: "Each source is ranked and cut to its own k before merging"; source_ranks maps "each
    source name to the record's position in that source's list. Sources that did not find the
    record are omitted"."""
    first, second, third = write(sx, *(note(f"n{i}", scores={"importance": 3 - i}) for i in range(3)))
    ranked = {"mode": "recent", "scope": NOTES, "rank": ["score", "importance"]}
    body = search(
        sx,
        {
            "sources": [{"name": "short", **ranked, "k": 1}, {"name": "long", **ranked, "k": 3}],
            "fuse": {"kind": "rrf"},
        },
    )
    assert ids(body) == [first, second, third]
    assert [h["source_ranks"] for h in body["hits"]] == [{"short": 1, "long": 1}, {"long": 2}, {"long": 3}]
    assert all(type(rank) is int for h in body["hits"] for rank in h["source_ranks"].values())


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


# --- the response of a combined search ------------------------------------------------------------


SCORED = {"kind": "rrf", **SCORED_RANKING}


def test_combined_response_shape(sx: Client) -> None:
    write(sx, note("budget"), extra("budget"))
    body = search(
        sx,
        {
            "q": "budget",
            "sources": [
                {"name": "events", "mode": "text", "scope": NOTES},
                {"name": "latest", "mode": "recent", "scope": EXTRA},
            ],
            "fuse": {"kind": "rrf"},
        },
    )
    assert body.keys() == {"hits", "ranking", "rendered", "truncated", "backend", "profiles"}
    assert body["backend"] == [
        {"source": "events", "name": "pg", "layout": None, "candidate_count": 1},
        {"source": "latest", "name": "pg", "layout": None, "candidate_count": 1},
    ]
    for hit in body["hits"]:
        assert hit.keys() == {"id", "rank", "score", "rank_score", "source_ranks"}
    assert body["ranking"] == SCORED


def test_structured_source_inside_a_combined_search(sx: Client) -> None:
    small, big = write(sx, note(content={"amount": 1}), note(content={"amount": 2}))
    body = search(
        sx,
        {
            "sources": [
                {
                    "name": "s",
                    "mode": "structured",
                    "scope": NOTES,
                    "order_by": [{"field": "amount", "direction": "desc"}],
                }
            ],
            "fuse": {"kind": "rrf"},
        },
    )
    assert ids(body) == [big, small]
    assert body["ranking"]["kind"] == "rrf"
    assert [h["rank_score"] for h in body["hits"]] == [pytest.approx(1 / 61), pytest.approx(1 / 62)]


def test_output_controls_apply_to_combined_searches(sx: Client) -> None:
    write(sx, note("hello", content={"channel": "email"}))
    body = search(
        sx,
        {
            "sources": [{"name": "s", "mode": "recent", "scope": NOTES}],
            "fuse": {"kind": "rrf"},
            "include": ["text"],
            "fields": ["channel"],
            "render": True,
            "fence": {"tag": "records"},
        },
    )
    (hit,) = body["hits"]
    assert hit["text"] == "hello" and hit["fields"] == {"channel": "email"}
    assert body["rendered"].startswith('<records untrusted="true">\n[id=')


PLAN_Q = "budget plan review"
SCORED_HIT = {"id", "rank", "score", "rank_score"}
DOWN = [{"field": "amount", "direction": "desc"}]
EITHER = ["max", [["similarity"], ["text_match"]]]
SOURCES = [
    {"name": "sem", "mode": "vector", "scope": VEC, "rank": ["similarity"], "k": 3},
    {"name": "words", "mode": "text", "scope": NOTES, "rank": ["text_match"], "k": 2},
    {
        "name": "both",
        "mode": "hybrid",
        "scope": VEC,
        "rank": EITHER,
        "k": 4,
    },
    {"name": "latest", "mode": "recent", "scope": NOTES, "rank": ["score", "importance"], "k": 3},
    {
        "name": "listed",
        "mode": "structured",
        "scope": NOTES,
        "order_by": DOWN,
    },
]
"""One source per mode, each ranked by a formula that reads no time."""
TOP_KEYS = {"hits", "ranking", "rendered", "truncated", "backend", "profiles"}


def alone(source: dict[str, Any]) -> dict[str, Any]:
    """The single search a source runs."""
    return {key: value for key, value in source.items() if key not in ("name", "weight")}


@pytest.mark.usefixtures("mode_corpus")
def test_combined_contract_with_a_source_of_every_mode(sx: Client) -> None:
    """ "`source_ranks` object of source name → positive integer; only when combining searches —
    Position in each source list containing the record. A missing key means that source did not
    find it"; "`backend` … plus `source` when combining searches"; "ranking.kind is rrf"; "This
    value is what you get back as rank_score": RRF(record) = Σ weight / (60 + rank_in_source)."""
    body = search(sx, {"q": PLAN_Q, "sources": SOURCES, "fuse": {"kind": "rrf"}, "k": 100})
    assert body.keys() == TOP_KEYS
    assert body["ranking"] == RRF_RANKING
    assert body["profiles"] == ["pg_default"]
    assert body["rendered"] is None and body["truncated"] is False
    lists = {s["name"]: search(sx, {"q": PLAN_Q, **alone(s)}) for s in SOURCES}
    assert body["backend"] == [{"source": s["name"], **lists[s["name"]]["backend"]} for s in SOURCES]
    expected: dict[str, dict[str, int]] = {}
    for name, single in lists.items():
        for position, record in enumerate(ids(single), start=1):
            expected.setdefault(record, {})[name] = position
    hits = body["hits"]
    assert {h["id"] for h in hits} == expected.keys()
    for hit in hits:
        assert hit.keys() == SCORED_HIT | {"source_ranks"}
        assert hit["source_ranks"] == expected[hit["id"]]
        assert hit["rank_score"] == pytest.approx(sum(1.0 / (60 + r) for r in hit["source_ranks"].values()))
    values = [h["rank_score"] for h in hits]
    low, high = min(values), max(values)
    assert [h["score"] for h in hits] == pytest.approx([(u - low) / (high - low) for u in values])
    assert [h["rank"] for h in hits] == list(range(1, len(hits) + 1))


BY_AMOUNT = [{"field": "amount"}]


@pytest.mark.usefixtures("mode_corpus")
def test_structured_sources_alone_still_merge_into_a_scored_rrf_response(sx: Client) -> None:
    """A combined search is ranked by its merge: "This value is what you get back as rank_score;
    the score field is it normalized to 0–1 across the merged pool, and ranking.kind is rrf" —
    even when every source is structured (the scoreless contract is "for structured mode")."""
    body = search(
        sx,
        {
            "sources": [
                {"name": "up", "mode": "structured", "scope": NOTES, "order_by": BY_AMOUNT, "k": 2},
                {
                    "name": "down",
                    "mode": "structured",
                    "scope": NOTES,
                    "order_by": DOWN,
                    "k": 1,
                },
            ],
            "fuse": {"kind": "rrf"},
        },
    )
    assert body["ranking"] == RRF_RANKING
    hits = body["hits"]
    assert [h.keys() for h in hits] == [SCORED_HIT | {"source_ranks"}] * 3
    # up: amounts 1, 2; down: amount 4. Ranks 1 tie at 1/61 (newer occurred_at first), then 1/62.
    assert [h["source_ranks"] for h in hits] == [{"down": 1}, {"up": 1}, {"up": 2}]
    assert [h["rank_score"] for h in hits] == pytest.approx([1 / 61, 1 / 61, 1 / 62])
    assert [h["score"] for h in hits] == pytest.approx([1.0, 1.0, 0.0])
    assert [(b["source"], b["candidate_count"]) for b in body["backend"]] == [("up", 4), ("down", 4)]


@pytest.mark.usefixtures("mode_corpus")
def test_a_single_source_still_reports_a_combined_response(sx: Client) -> None:
    """ "Every merged result includes source_ranks"; `backend` carries `source` "when combining
    searches" — one source is still a combined search (`sources` + `fuse`), a list of one entry."""
    body = search(sx, {"q": PLAN_Q, "sources": [SOURCES[1]], "fuse": {"kind": "rrf", "rank_constant": 10}})
    assert body["ranking"] == RRF_RANKING
    assert body["backend"] == [{"source": "words", "name": "pg", "layout": None, "candidate_count": 3}]
    assert [h["source_ranks"] for h in body["hits"]] == [{"words": 1}, {"words": 2}]
    assert [h["rank_score"] for h in body["hits"]] == pytest.approx([1 / 11, 1 / 12])


@pytest.mark.usefixtures("mode_corpus")
def test_combined_output_controls_add_only_what_was_asked(sx: Client) -> None:
    """ "The output controls at the end (k, include, fields, annotations, render, fence) also apply
    when you combine several searches"; each optional value "appears only when you asked for it"."""
    body = search(
        sx,
        {
            "q": PLAN_Q,
            "sources": [SOURCES[1], SOURCES[4]],
            "fuse": {"kind": "rrf"},
            "include": ["collection", "key"],
            "fields": ["amount"],
            "render": True,
            "k": 2,
        },
    )
    assert len(body["hits"]) == 2 and isinstance(body["rendered"], str)
    assert body["rendered"].count("[id=") == 2 and body["truncated"] is False
    for hit in body["hits"]:
        assert hit.keys() == SCORED_HIT | {"source_ranks", "collection", "key", "fields"}
        assert hit["collection"] == "sx_notes" and hit["key"] is None
        assert set(hit["fields"]) == {"amount"} and isinstance(hit["fields"]["amount"], int | float)


def test_rendered_rows_follow_the_merged_order_and_the_top_level_k(sx: Client) -> None:
    """ "Setting render: true also returns a compact text block of the same results": the rows are
    the merged hits, in rank order, cut to the top-level k."""
    written = write(sx, *(note(f"row {i}", scores={"importance": 10 - i}) for i in range(4)))
    body = search(sx, combined(ranked_by("s", "importance"), render=True, k=3))
    rows = body["rendered"].splitlines()
    assert [row.split("]", 1)[0] for row in rows] == [f"[id={i}" for i in written[:3]]
    assert ids(body) == written[:3]
    assert body["truncated"] is False


def test_unicode_source_names_key_source_ranks(sx: Client) -> None:
    """ "1 to 8 sources, each with a unique name" and "source_ranks: an object mapping each source
    name to the record's position in that source's list": any text is a name."""
    (record,) = write(sx, note(scores={"importance": 1, "urgency": 1}))
    body = search(sx, fused(source("événements", "importance"), source("🧠 reflections", "urgency")))
    assert body["hits"][0]["id"] == record
    assert body["hits"][0]["source_ranks"] == {"événements": 1, "🧠 reflections": 1}
    assert {entry["source"] for entry in body["backend"]} == {"événements", "🧠 reflections"}


def test_combined_fields_and_annotations_hold_for_every_source(sx: Client) -> None:
    """Spec: fields — "The field must be marked returnable in every collection in scope";
    annotations — "The enrichment must be required by every collection in scope" (the output
    controls "also apply when you combine several searches")."""
    sources = [
        {"name": "notes", "mode": "text", "scope": NOTES},
        {"name": "tagged", "mode": "text", "scope": {"collections": ["sx_tagged"]}},
    ]
    combined = {"q": "budget", "sources": sources, "fuse": {"kind": "rrf"}}
    rejects(sx, {**combined, "fields": ["channel"]}, "fields", 0)
    rejects(sx, {**combined, "annotations": ["sx_region"]}, "annotations", 0)
