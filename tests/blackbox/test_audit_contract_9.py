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

from tests.blackbox.support import SCORED_RANKING
from tests.blackbox.support import ids
from tests.blackbox.support import search
from tests.conftest import Client

# --- combined searches ----------------------------------------------------------------------------


PLAN_Q = "budget plan review"
RRF_RANKING = {"kind": "rrf", **SCORED_RANKING}
"""The spec's ranking contract of a combined search: "ranking.kind is rrf"."""
SCORED_HIT = {"id", "rank", "score", "rank_score"}
DOWN = [{"field": "amount", "direction": "desc"}]
EITHER = ["max", [["similarity"], ["text_match"]]]
NOTES = {"collections": ["sx_notes"]}
VEC = {"collections": ["sx_vec"]}
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
