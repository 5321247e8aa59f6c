"""Combined search requests (spec "Combining several searches", "What is checked, and when"):
1 to 8 sources, the rules of `fuse`, `weight` and `rank_constant` with their bounds and defaults,
problems located inside the source at fault, and views whose fusion takes parameters.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.blackbox.fusion_support import by_id
from tests.blackbox.fusion_support import combined
from tests.blackbox.fusion_support import extra
from tests.blackbox.fusion_support import ranked_by
from tests.blackbox.fusion_support import source
from tests.blackbox.support import SCORED_RANKING
from tests.blackbox.support import fused
from tests.blackbox.support import ids
from tests.blackbox.support import invalid
from tests.blackbox.support import note
from tests.blackbox.support import rejects
from tests.blackbox.support import search
from tests.blackbox.support import write
from tests.conftest import Client
from tests.helpers import listed_views
from tests.helpers import ok
from tests.helpers import view_query

# --- validation -----------------------------------------------------------------------------------


NOTES = {"collections": ["sx_notes"]}


def combined_request(**overrides: Any) -> dict[str, Any]:
    body: dict[str, Any] = {
        "q": "x",
        "sources": [{"name": "a", "mode": "recent", "scope": NOTES}],
        "fuse": {"kind": "rrf"},
    }
    return {**body, **overrides}


def many(count: int) -> list[dict[str, Any]]:
    return [{"name": f"s{i}", "mode": "recent", "scope": NOTES} for i in range(count)]


def test_one_to_eight_sources(sx: Client) -> None:
    assert len(search(sx, combined_request(sources=many(8)))["backend"]) == 8
    rejects(sx, combined_request(sources=many(9)), "sources")
    rejects(sx, combined_request(sources=[]), "sources")


@pytest.mark.parametrize(
    ("overrides", "loc"),
    [
        pytest.param({"sources": [*many(1), *many(1)]}, ("sources", 1, "name"), id="duplicate-name"),
        pytest.param({"fuse": None}, ("fuse",), id="fuse-null"),
        pytest.param({"fuse": {"kind": "linear"}}, ("fuse", "kind"), id="fuse-kind"),
        pytest.param(
            {"fuse": {"kind": "rrf", "rank_constant": 0}}, ("fuse", "rank_constant"), id="constant-0"
        ),
        pytest.param(
            {"fuse": {"kind": "rrf", "rank_constant": 1001}}, ("fuse", "rank_constant"), id="constant-1001"
        ),
        pytest.param({"fuse": {"kind": "rrf", "k": 60}}, ("fuse", "k"), id="fuse-unknown-key"),
        pytest.param({"mode": "recent"}, ("mode",), id="top-level-mode"),
        pytest.param({"scope": NOTES}, ("scope",), id="top-level-scope"),
        pytest.param({"where": {"channel": {"eq": "x"}}}, ("where",), id="top-level-where"),
        pytest.param({"order_by": [{"field": "amount"}]}, ("order_by",), id="top-level-order-by"),
        pytest.param({"rank": ["const", 1]}, ("rank",), id="top-level-rank"),
        pytest.param({"params": {"candidates": 10}}, ("params",), id="top-level-params"),
        pytest.param({"k": 0}, ("k",), id="k-0"),
        pytest.param({"k": 101}, ("k",), id="k-101"),
    ],
)
def test_combined_rules(sx: Client, overrides: dict[str, Any], loc: tuple[Any, ...]) -> None:
    body = combined_request(**overrides)
    if body.get("fuse") is None:
        del body["fuse"]
    rejects(sx, body, *loc)


@pytest.mark.parametrize(
    ("change", "loc"),
    [
        pytest.param({"weight": 0}, ("weight",), id="weight-0"),
        pytest.param({"weight": -1}, ("weight",), id="weight-negative"),
        pytest.param({"weight": 100.5}, ("weight",), id="weight-over-100"),
        pytest.param({"k": 0}, ("k",), id="k-0"),
        pytest.param({"k": 101}, ("k",), id="k-101"),
        pytest.param({"scope": {}}, ("scope", "collections"), id="collections-required"),
        pytest.param({"name": None}, ("name",), id="name-required"),
        pytest.param({"fuse": {"kind": "rrf"}}, ("fuse",), id="unknown-key"),
        pytest.param({"mode": "structured"}, ("order_by",), id="structured-needs-order-by"),
        pytest.param({"mode": "text", "rank": ["similarity"]}, ("rank",), id="rank-signal-for-mode"),
    ],
)
def test_source_rules(sx: Client, change: dict[str, Any], loc: tuple[Any, ...]) -> None:
    one = {"name": "a", "mode": "recent", "scope": NOTES, **change}
    one = {key: value for key, value in one.items() if value is not None}
    err = rejects(sx, combined_request(sources=[one]))
    assert any(d["loc"][: 2 + len(loc)] == ["sources", 0, *loc] for d in err["details"]), err


def test_weight_100_and_rank_constant_bounds_are_inclusive(sx: Client) -> None:
    body = combined_request(
        sources=[{"name": "a", "mode": "recent", "scope": NOTES, "weight": 100, "k": 100}],
        fuse={"kind": "rrf", "rank_constant": 1000},
    )
    search(sx, body)
    search(sx, combined_request(fuse={"kind": "rrf", "rank_constant": 1}))


def test_weight_defaults_to_1_and_rank_constant_to_60(sx: Client) -> None:
    write(sx, note())
    (hit,) = search(sx, combined_request())["hits"]
    assert hit["rank_score"] == pytest.approx(1 / 61)


def test_q_is_required_when_a_source_needs_it(sx: Client) -> None:
    body = combined_request(sources=[{"name": "a", "mode": "text", "scope": NOTES}])
    del body["q"]
    rejects(sx, body, "q")
    body = combined_request()
    del body["q"]
    search(sx, body)


HUGE = 10**400
"""An integer no float holds: JSON allows it, so it must be answered as a value, never a 500."""
PAST_64_BITS = 2**70


@pytest.mark.parametrize(
    ("change", "loc"),
    [
        pytest.param({"weight": True}, ("sources", 0, "weight"), id="weight-true"),
        pytest.param({"weight": "1"}, ("sources", 0, "weight"), id="weight-digits"),
        pytest.param({"weight": HUGE}, ("sources", 0, "weight"), id="weight-huge"),
        pytest.param({"weight": -HUGE}, ("sources", 0, "weight"), id="weight-huge-negative"),
        pytest.param({"k": True}, ("sources", 0, "k"), id="k-true"),
        pytest.param({"k": PAST_64_BITS}, ("sources", 0, "k"), id="k-past-64-bits"),
    ],
)
def test_source_numbers_are_numbers_in_range(
    sx: Client, change: dict[str, Any], loc: tuple[Any, ...]
) -> None:
    """ "plus a weight (default 1.0) …" "The accepted range is greater than 0 and at most 100" and
    "k (1–100)": each refused at the source's own key."""
    rejects(sx, fused({**source("a", "importance"), **change}), *loc)


@pytest.mark.parametrize(
    "fuse",
    [
        pytest.param({"kind": "rrf", "rank_constant": True}, id="true"),
        pytest.param({"kind": "rrf", "rank_constant": "60"}, id="digits"),
        pytest.param({"kind": "rrf", "rank_constant": PAST_64_BITS}, id="past-64-bits"),
        pytest.param({"kind": "rrf", "rank_constant": -1}, id="negative"),
    ],
)
def test_rank_constant_is_an_integer_1_to_1000(sx: Client, fuse: dict[str, Any]) -> None:
    """ "rank_constant defaults to 60 and must be 1–1000"."""
    rejects(sx, {**fused(source("a", "importance")), "fuse": fuse}, "fuse", "rank_constant")


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


@pytest.mark.parametrize(
    ("change", "loc"),
    [
        pytest.param(
            {"where": {"amount": {"gt": "soon"}}}, ("sources", 0, "where", "amount", "gt"), id="where"
        ),
        pytest.param({"where": {"nope": {"eq": 1}}}, ("sources", 0, "where", "nope"), id="where-undeclared"),
        pytest.param(
            {"order_by": [{"field": "amount"}]}, ("sources", 0, "order_by"), id="order-by-not-structured"
        ),
        pytest.param(
            {"params": {"candidates": 0}}, ("sources", 0, "params", "candidates"), id="candidates-0"
        ),
        pytest.param(
            {"scope": {**NOTES, "depth_lte": -1}}, ("sources", 0, "scope", "depth_lte"), id="depth-lte"
        ),
    ],
)
def test_problems_inside_a_source_are_located_there(
    sx: Client, change: dict[str, Any], loc: tuple[Any, ...]
) -> None:
    """ "Each source takes its own mode, scope, where, order_by, rank, params, and k (1–100) — the
    same options as a single search": a problem in one is reported at that source's key."""
    rejects(
        sx, fused(source("ok", "urgency"), {**source("a", "importance"), **change}), *loc[:1], 1, *loc[2:]
    )


def test_rerank_next_to_a_recent_source_is_refused_at_rerank(sx: Client) -> None:
    """ "It is allowed only when every search uses text, vector, or hybrid mode.\""""
    text = {"name": "t", "mode": "text", "scope": NOTES}
    body = fused(text, source("r", "importance"), q="x", rerank={"backend": "llm_judge", "top_n": 1})
    rejects(sx, body, "rerank")


# --- views that combine searches ------------------------------------------------------------------


RRF_RANKING = {"kind": "rrf", **SCORED_RANKING}
"""The spec's ranking contract of a combined search: "ranking.kind is rrf"."""


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
