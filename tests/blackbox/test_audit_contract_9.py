"""Audit round 9: the response's contract objects in every mode (spec "What comes back", "How to read
score", "How a search actually runs").

Pins, per mode (vector, text, hybrid, recent, structured) and for combined searches, the exact key
sets of the response, of `ranking`, of `backend` and of each hit, the values the documents give
(`candidate_count`, `profiles`, `rendered`, `truncated`), `source_ranks` against each source's own
list, the min–max `score` over the pool a `k` cut hides, and the same objects through `GET /search`
and the view wrapper. The corners `test_spec_response.py`, `test_spec_scores.py` and
`test_spec_combined.py` leave unpinned.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.blackbox.support import MODES
from tests.blackbox.support import SCORED_RANKING
from tests.blackbox.support import ids
from tests.blackbox.support import search
from tests.conftest import Client
from tests.helpers import ok

RANK_EXPRESSION = {"kind": "rank_expression", **SCORED_RANKING}
SCORED_HIT = {"id", "rank", "score", "rank_score"}
STRUCTURED = {"kind": "structured", "scored": False}
STRUCTURED_HIT = {"id", "rank", "score"}
TOP_KEYS = {"hits", "ranking", "rendered", "truncated", "backend", "profiles"}


def is_structured(body: dict[str, Any]) -> bool:
    return body.get("mode") == "structured"


@pytest.mark.usefixtures("mode_corpus")
@pytest.mark.parametrize(("query", "proposed"), MODES)
def test_single_search_contract_per_mode(sx: Client, query: dict[str, Any], proposed: int) -> None:
    """ "`score` … `null` for structured mode"; "`rank_score` … absent for structured mode";
    "`source_ranks` … only when combining searches"; "`ranking` … `kind` is `rank_expression`,
    `llm_judge`, `rrf`, or `structured`"; "`backend` Diagnostics per search: `{name, layout,
    candidate_count}`, plus `source` when combining searches"; "`rendered` `null` when `render:
    false`"; "`truncated` … stays `false` when you did not ask for rendering"; "`profiles` The
    search setups actually used". Hybrid's three proposal lists are "interleaved and deduplicated",
    so its count is the distinct records, not the sum of the lists."""
    body = search(sx, query)
    assert body.keys() == TOP_KEYS
    structured = is_structured(query)
    assert body["ranking"] == (STRUCTURED if structured else RANK_EXPRESSION)
    assert body["backend"] == {"name": "pg", "layout": None, "candidate_count": proposed}
    assert body["profiles"] == ["pg_default"]
    assert body["rendered"] is None and body["truncated"] is False
    assert [h["rank"] for h in body["hits"]] == list(range(1, len(body["hits"]) + 1))
    for hit in body["hits"]:
        assert hit.keys() == (STRUCTURED_HIT if structured else SCORED_HIT)
        assert isinstance(hit["rank"], int) and not isinstance(hit["rank"], bool)
        if structured:
            assert hit["score"] is None
        else:
            assert 0.0 <= hit["score"] <= 1.0 and isinstance(hit["rank_score"], float)
    if not structured:
        assert body["hits"][0]["score"] == 1.0


@pytest.mark.usefixtures("mode_corpus")
@pytest.mark.parametrize(("query", "proposed"), MODES)
def test_render_turns_rendered_into_a_string_in_every_mode(
    sx: Client, query: dict[str, Any], proposed: int
) -> None:
    """ "`rendered` `null` when `render: false`; otherwise the compact rows"; "Separate from
    `hits`": rendering changes neither the hits nor the ranking contract."""
    plain = search(sx, query)
    body = search(sx, {**query, "render": True})
    assert isinstance(body["rendered"], str) and body["truncated"] is False
    assert body["rendered"].count("[id=") == len(body["hits"]) == len(plain["hits"])
    assert ids(body) == ids(plain) and body["ranking"] == plain["ranking"]
    assert [h.keys() for h in body["hits"]] == [h.keys() for h in plain["hits"]]
    assert body["backend"]["candidate_count"] == proposed


@pytest.mark.usefixtures("mode_corpus")
@pytest.mark.parametrize(("query", "proposed"), MODES)
def test_include_fields_and_render_add_only_what_was_asked(
    sx: Client, query: dict[str, Any], proposed: int
) -> None:
    """ "Optional per-result values … each appears only when you asked for it"; "There is no
    rank_score either [in structured mode]" — asking for values adds them, never `rank_score` or
    `source_ranks`."""
    name = "channel"  # returnable in both sx_notes and sx_vec
    body = search(sx, {**query, "include": ["entity", "type"], "fields": [name], "render": True})
    base = STRUCTURED_HIT if is_structured(query) else SCORED_HIT
    for hit in body["hits"]:
        assert hit.keys() == base | {"entity", "type", "fields"}
        assert hit["fields"] == {name: None} and hit["entity"] == "e1" and hit["type"] == "note"
    assert body["backend"]["candidate_count"] == proposed


# --- the pool behind score, per scored mode -------------------------------------------------------


EITHER = ["max", [["similarity"], ["text_match"]]]
NOTES = {"collections": ["sx_notes"]}
PLAN_Q = "budget plan review"
VEC = {"collections": ["sx_vec"]}
RANKED = [
    pytest.param({"mode": "vector", "q": PLAN_Q, "scope": VEC, "rank": ["similarity"]}, id="vector"),
    pytest.param({"mode": "text", "q": PLAN_Q, "scope": NOTES, "rank": ["text_match"]}, id="text"),
    pytest.param(
        {"mode": "hybrid", "q": PLAN_Q, "scope": VEC, "rank": EITHER},
        id="hybrid",
    ),
]


@pytest.mark.usefixtures("mode_corpus")
@pytest.mark.parametrize("query", RANKED)
def test_score_is_min_max_over_the_ranked_candidates_before_k(sx: Client, query: dict[str, Any]) -> None:
    """ "score = (u - low) / (high - low)" where low/high are "the smallest and largest values in the
    ranked candidate pool" — "Every candidate the search ranked, before `k` cut the response". The
    formulas read no time, so the full list (k 20) gives the pool's bounds for the cut one (k 2)."""
    whole = search(sx, query)
    values = [h["rank_score"] for h in whole["hits"]]
    assert len(values) >= 3 and values == sorted(values, reverse=True)
    low, high = values[-1], values[0]
    assert high > low
    cut = search(sx, {**query, "k": 2})
    assert ids(cut) == ids(whole)[:2]
    assert [h["rank_score"] for h in cut["hits"]] == values[:2]
    assert [h["score"] for h in cut["hits"]] == pytest.approx([1.0, (values[1] - low) / (high - low)])
    assert [h["score"] for h in whole["hits"]] == pytest.approx([(u - low) / (high - low) for u in values])
    assert whole["hits"][-1]["score"] == 0.0


# --- combined searches ----------------------------------------------------------------------------


RRF_RANKING = {"kind": "rrf", **SCORED_RANKING}
"""The spec's ranking contract of a combined search: "ranking.kind is rrf"."""
DOWN = [{"field": "amount", "direction": "desc"}]
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


# --- GET /search ----------------------------------------------------------------------------------


@pytest.mark.usefixtures("mode_corpus")
def test_get_search_reports_the_whole_single_search_contract(sx: Client) -> None:
    """ "GET /search translates your request into a hybrid (meaning + keyword) search, returns text,
    collection, type, and occurred_at, and turns on prompt-ready rendering" — the response is the
    single-search shape: a `rank_expression` ranking, one `backend` object, `profiles`."""
    body = ok(sx.get("/search?q=budget%20plan%20review&collection=sx_vec"))
    assert body.keys() == TOP_KEYS
    assert body["ranking"] == RANK_EXPRESSION
    assert body["backend"] == {"name": "pg", "layout": None, "candidate_count": 4}
    assert body["profiles"] == ["pg_default"]
    assert isinstance(body["rendered"], str) and body["truncated"] is False
    keys = SCORED_HIT | {"text", "collection", "type", "occurred_at"}
    assert [h.keys() for h in body["hits"]] == [keys] * 4
    assert body["hits"][0]["score"] == 1.0 and body["hits"][0]["text"] == "budget plan review"


def test_get_search_with_no_match_is_an_empty_rendered_success(sx: Client) -> None:
    """ "An empty list is a successful search that matched nothing"; rendering is on, but with no
    rows `rendered` is `null`, as in the view wrapper example (`render: true`, `"hits": []`,
    `"rendered": null`); the search still reports its diagnostics."""
    body = ok(sx.get("/search?q=nothing&collection=sx_vec"))
    assert body["hits"] == [] and body["rendered"] is None and body["truncated"] is False
    assert body["ranking"] == RANK_EXPRESSION
    assert body["backend"] == {"name": "pg", "layout": None, "candidate_count": 0}
    assert body["profiles"] == ["pg_default"]
