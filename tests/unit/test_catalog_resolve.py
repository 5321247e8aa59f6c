"""Resolving requests against the reference catalog (the checks `POST /search` runs), no database."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from memseek.catalog.catalog import Catalog
from memseek.catalog.load import load_catalog
from memseek.errors import RequestInvalid
from memseek.paths import reference_catalog
from memseek.search.request import parse_search
from memseek.search.resolve import RequestPlan
from memseek.search.resolve import resolve
from memseek.search.view_checks import VIEW_CHECKS
from memseek.settings import Settings
from tests.helpers import build_catalog

EVENTS = {"collections": ["customer_events"]}


@pytest.fixture(scope="module")
def catalog() -> Catalog:
    return load_catalog(reference_catalog(), view_checks=VIEW_CHECKS)


def plan_of(body: dict[str, Any], catalog: Catalog, settings: Settings | None = None) -> RequestPlan:
    return resolve(parse_search(body), catalog, settings)


@pytest.mark.parametrize(
    ("body", "loc", "fragment"),
    [
        pytest.param(
            {"mode": "recent", "scope": {"collections": ["customer_events", "orders"]}},
            ("scope", "collections", 1),
            "unknown collection 'orders'",
            id="unknown-collection",
        ),
        pytest.param(
            {
                "mode": "recent",
                "scope": {"collections": ["reflections"], "collection_versions": {"reflections": [2]}},
            },
            ("scope", "collection_versions", "reflections", 0),
            "no version 2",
            id="unknown-version",
        ),
        pytest.param(
            {"mode": "recent", "scope": EVENTS, "where": {"starts_at": {"exists": True}}},
            ("where", "starts_at"),
            "customer_events v1 does not declare it",
            id="field-not-declared",
        ),
        pytest.param(
            {
                "mode": "recent",
                "scope": {"collections": ["calendar_events"]},
                "where": {"starts_at": {"gt": 5}},
            },
            ("where", "starts_at", "gt"),
            "timestamp",
            id="datetime-compared-with-number",
        ),
        pytest.param(
            {
                "mode": "recent",
                "scope": {"collections": ["calendar_events"]},
                "where": {"starts_at": {"eq": "tomorrow"}},
            },
            ("where", "starts_at", "eq"),
            "timezone",
            id="datetime-eq-not-a-timestamp",
        ),
        pytest.param(
            {
                "mode": "recent",
                "scope": {"collections": ["calendar_events"]},
                "where": {"title": {"eq": "x"}},
            },
            ("where", "title"),
            "not declare it filterable",
            id="field-not-filterable",
        ),
        pytest.param(
            {"mode": "recent", "scope": EVENTS, "where": {"channel": {"lte": "m"}}},
            ("where", "channel", "lte"),
            "must be a number or an ISO 8601",
            id="string-bound-rejected-by-parser",
        ),
        pytest.param(
            {"mode": "recent", "scope": EVENTS, "where": {"tags": {"eq": "vip"}}},
            ("where", "tags", "eq"),
            "expected string array",
            id="list-eq-with-scalar",
        ),
        pytest.param(
            {"mode": "recent", "scope": EVENTS, "where": {"channel": {"in": ["email", 3]}}},
            ("where", "channel", "in"),
            "value 3",
            id="in-value-wrong-type",
        ),
        pytest.param(
            {"mode": "structured", "scope": EVENTS, "order_by": [{"field": "external_id"}]},
            ("order_by", 0, "field"),
            "sortable",
            id="order-by-not-sortable",
        ),
        pytest.param(
            {"mode": "recent", "fields": ["channel"]},
            ("fields", 0),
            "not returnable in calendar_events v1",
            id="fields-everywhere-empty-scope",
        ),
        pytest.param(
            {"mode": "recent", "scope": EVENTS, "annotations": ["region"]},
            ("annotations", 0),
            "not required by customer_events v1",
            id="annotation-not-required",
        ),
        pytest.param(
            {"mode": "recent", "scope": EVENTS, "graph_boost": {"graph": "orphan_pages", "anchor": "a"}},
            ("graph_boost", "graph"),
            "not an active graph view",
            id="graph-boost-orphans",
        ),
        pytest.param(
            {"mode": "recent", "scope": EVENTS, "graph_boost": {"graph": "nope", "anchor": "a"}},
            ("graph_boost", "graph"),
            "not an active graph view",
            id="graph-boost-unknown",
        ),
        pytest.param(
            {
                "q": "x",
                "sources": [{"name": "a", "mode": "recent", "scope": {"collections": ["nope"]}}],
                "fuse": {"kind": "rrf"},
                "boost": ["score", "nope"],
            },
            ("sources", 0, "scope", "collections", 0),
            "unknown collection",
            id="source-unknown-collection",
        ),
    ],
)
def test_request_problems(
    catalog: Catalog, body: dict[str, Any], loc: tuple[Any, ...], fragment: str
) -> None:
    with pytest.raises(RequestInvalid) as caught:
        plan_of(body, catalog)
    assert caught.value.status == 422
    assert any(d.loc == loc and fragment in d.msg for d in caught.value.details), caught.value.details


@pytest.mark.parametrize(
    "body",
    [
        pytest.param({"q": "x", "mode": "text", "scope": EVENTS, "rank": ["score", "importanse"]}, id="rank"),
        pytest.param(
            {
                "q": "x",
                "sources": [{"name": "a", "mode": "recent", "scope": EVENTS}],
                "fuse": {"kind": "rrf"},
                "boost": ["score", "nope"],
            },
            id="boost",
        ),
    ],
)
def test_an_ad_hoc_scorer_typo_is_not_a_request_error(catalog: Catalog, body: dict[str, Any]) -> None:
    """Spec: "a typo'd scorer name at runtime" evaluates to 0; names are checked when definitions
    load (tests/unit/test_catalog_load.py: rank-score-typo, boost-score-typo)."""
    plan_of(body, catalog)


def test_empty_scope_reads_every_ordinary_collection_the_mode_can(catalog: Catalog) -> None:
    text = plan_of({"q": "budget", "mode": "text"}, catalog).searches[0]
    assert [c.name for c in text.collections] == [  # not the edges collection `dependencies`
        "calendar_events",
        "components",
        "customer_events",
        "memories",
        "reflections",
    ]
    plan = plan_of({"q": "budget", "mode": "hybrid"}, catalog)
    (search,) = plan.searches  # the links collection has no embedding
    assert [c.name for c in search.collections] == [
        "calendar_events",
        "components",
        "customer_events",
        "memories",
        "reflections",
    ]
    assert (search.profile, plan.profiles) == ("pg_default", ("pg_default",))
    assert search.rank == catalog.default_rank("hybrid")
    assert (search.k, search.candidates, search.weight, search.q) == (20, 200, 1.0, "budget")
    assert (plan.needs_embedding, plan.embedding_model, search.embedding_model) == (
        True,
        "default",
        "default",
    )
    assert (plan.combined, plan.graph_view, plan.rerank) == (False, None, None)


def test_structured_plan(catalog: Catalog) -> None:
    body = {
        "mode": "structured",
        "scope": {"collections": ["calendar_events"]},
        "where": {"starts_at": {"gte": "2026-07-01T00:00:00Z"}, "location": {"in": ["HQ"]}},
        "order_by": [{"field": "ends_at", "direction": "desc"}],
        "k": 5,
        "fields": ["title"],
    }
    (search,) = plan_of(body, catalog).searches
    assert search.rank is None
    assert dict(search.field_types) == {"starts_at": "datetime", "location": "string", "ends_at": "datetime"}
    assert [o.field for o in search.order_by] == ["ends_at"]
    assert plan_of(body, catalog).needs_embedding is False


def test_combined_plan_follows_the_spec_example(catalog: Catalog) -> None:
    query = catalog.view("customer_context_fused").query or {}
    body = {**query, "q": "prepare Q3 update"}
    for source in body["sources"]:
        source["scope"]["entities"] = ["contact.maria"]
    plan = plan_of(body, catalog)
    assert (plan.combined, plan.rank_constant, plan.k, plan.render) == (True, 60, 24, True)
    assert [(s.source, s.mode, s.k, s.weight, s.q) for s in plan.searches] == [
        ("events", "hybrid", 30, 1.0, "prepare Q3 update"),
        ("reflections", "vector", 15, 1.1, "prepare Q3 update"),
    ]
    assert [s.rank for s in plan.searches] == [catalog.default_rank("hybrid"), catalog.default_rank("vector")]


def test_pinned_versions_narrow_the_read(tmp_path: Path) -> None:
    root = build_catalog(
        tmp_path,
        {
            "collections/v2.yaml": "collections:\n  - {name: notes, version: 2, types: [note], "
            "embedding: default, fields: {channel: {type: string, filterable: true}}}\n"
        },
    )
    catalog = load_catalog(root, view_checks=VIEW_CHECKS)
    body: dict[str, Any] = {"mode": "recent", "scope": {"collections": ["notes"]}}
    assert [c.version for c in plan_of(body, catalog).searches[0].collections] == [1, 2]
    body["scope"]["collection_versions"] = {"notes": [2]}
    assert [c.version for c in plan_of(body, catalog).searches[0].collections] == [2]
    with pytest.raises(RequestInvalid, match="catalog"):
        plan_of(
            {"mode": "recent", "scope": {"collections": ["notes"]}, "where": {"tags": {"exists": True}}},
            catalog,
        )


def test_graph_boost_defaults_to_the_one_active_graph_view(catalog: Catalog) -> None:
    plan = plan_of({"mode": "recent", "scope": EVENTS, "graph_boost": {"anchor": "people/maya"}}, catalog)
    assert plan.graph_view is not None and plan.graph_view.name == "graph_query"


def test_graph_boost_respects_deployment_ceilings(catalog: Catalog) -> None:
    body = {"mode": "recent", "scope": EVENTS, "graph_boost": {"anchor": "a", "depth": 3, "limit": 100}}
    with pytest.raises(RequestInvalid) as caught:
        plan_of(body, catalog, Settings(max_graph_depth=2, max_graph_paths=50))
    assert {d.loc for d in caught.value.details} == {("graph_boost", "depth"), ("graph_boost", "limit")}
    assert plan_of(body, catalog, Settings()).graph_boost is not None


def test_rerank_none_does_nothing(catalog: Catalog) -> None:
    plan = plan_of({"q": "x", "mode": "text", "scope": EVENTS, "rerank": {"backend": "none"}}, catalog)
    assert plan.rerank is None and plan.searches[0].rerank is None
    plan = plan_of(
        {"q": "x", "mode": "text", "scope": EVENTS, "rerank": {"backend": "llm_judge", "top_n": 5}}, catalog
    )
    assert plan.rerank is not None and plan.searches[0].rerank == plan.rerank


def test_llm_score_enrichments_count_as_scores(tmp_path: Path) -> None:
    root = build_catalog(
        tmp_path,
        {
            "collections/scored.yaml": "collections:\n  - {name: scored, version: 1, active: true, "
            "types: [note], enrichments: [importance]}\n"
        },
    )
    body = {
        "q": "x",
        "mode": "text",
        "scope": {"collections": ["scored"]},
        "rank": ["score", "importance"],
        "annotations": ["importance"],
    }
    assert plan_of(body, load_catalog(root, view_checks=VIEW_CHECKS)).annotations == ("importance",)
