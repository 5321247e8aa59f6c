"""Golden SQL: the exact statements `POST /search` emits for a table of representative requests.

Each request goes the service's way — `parse_search` → `resolve` → `compile_search` — with the
service's output and plan adjustments restated in `compiled_request` (the service module also
runs statements; this tier needs no database). The golden file of a case holds, per search of
the request, every statement it may run (the first try, then each fallback) exactly as the
psycopg dialect renders it, the statement's own bound values, and the request values passed at
execution (the query vector is a fixed one). The SQL is compared byte for byte: a refactor of
the compiler must leave these files untouched.

`UPDATE_GOLDEN=1 pytest tests/compile/test_golden_sql.py` rewrites them (for a deliberate change
of the emitted SQL, reviewed in the diff).
"""

from __future__ import annotations

import os
import uuid
from dataclasses import replace
from datetime import UTC
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy.dialects.postgresql.psycopg import PGDialect_psycopg
from sqlalchemy.sql.selectable import Select

from memseek.catalog.catalog import Catalog
from memseek.catalog.conf import ClientEnrichment
from memseek.catalog.conf import PgProfile
from memseek.catalog.models import Collection
from memseek.catalog.models import View
from memseek.catalog.rank import load_rank_default
from memseek.models.config import ModelDecl
from memseek.paths import resource
from memseek.search.compile import CompiledSearch
from memseek.search.compile import Inputs
from memseek.search.compile import Output
from memseek.search.compile import compile_search
from memseek.search.request import parse_search
from memseek.search.resolve import RequestPlan
from memseek.search.resolve import SearchPlan
from memseek.search.resolve import resolve

GOLDEN = Path(__file__).resolve().parents[1] / "fixtures" / "golden_sql"
DIALECT = PGDialect_psycopg()  # type: ignore[no-untyped-call]
WS = uuid.UUID("00000000-0000-4000-8000-00000000d01d")
NOW = datetime(2026, 7, 1, 12, 0, tzinfo=UTC)
VECTOR = (0.6, 0.8, 0.0, 0.0)
"""The fixed query vector (its values are request values: they never reach the SQL text)."""
ROUTE = "POST /search"
MODEL = "all-MiniLM-L6-v2"

FIELDS = {
    "channel": {"type": "string", "filterable": True, "sortable": True, "returnable": True},
    "amount": {"type": "number", "filterable": True, "sortable": True, "returnable": True},
    "count": {"type": "integer", "filterable": True, "sortable": True},
    "vip": {"type": "boolean", "filterable": True, "sortable": True},
    "tags": {"type": "string_array", "filterable": True, "returnable": True},
    "starts_at": {"type": "datetime", "filterable": True, "sortable": True, "returnable": True},
}  # fmt: skip
LINK_FIELDS = {name: {"type": "string", "filterable": True} for name in ("src", "dst", "rel")}


def _collection(name: str, version: int, active: bool = True, **extra: Any) -> Collection:
    body = {
        "name": name, "version": version, "active": active, "types": ["event", "note", "fact"],
        "embedding": "default", "fields": FIELDS, "scores": {"importance": {"display": True}},
        "enrichments": ["region"], **extra,
    }  # fmt: skip
    return Collection.model_validate(body)


def _catalog() -> Catalog:
    """Two versions of `notes`, a German `journal`, and a graph view over the `links` edges."""
    collections = [
        _collection("notes", 1, active=False),
        _collection("notes", 2),
        _collection("journal", 1, text_language="german"),
        _collection("links", 1, fields=LINK_FIELDS),
    ]
    walk = View.model_validate(
        {
            "name": "walk", "version": 1, "active": True, "kind": "graph",
            "graph": {"edges": "links", "subject": "src", "object": "dst", "predicate": "rel"},
        }
    )  # fmt: skip
    by_name: dict[str, tuple[Collection, ...]] = {}
    for c in collections:
        by_name[c.name] = (*by_name.get(c.name, ()), c)
    return Catalog(
        collections=by_name,
        views={"walk": (walk,)},
        profiles={"pg_default": PgProfile(backend="pg")},
        models={
            "default": ModelDecl.model_validate({"kind": "embedding", "provider": "local", "model": MODEL})
        },
        enrichments={"region": ClientEnrichment(kind="client")},
        rank_default=load_rank_default(resource("conf") / "rank_default.yaml"),
    )


CATALOG = _catalog()


def _output(plan: RequestPlan) -> Output:
    """What the service fetches for the response (`service.prepare`, `service.shows_metadata`)."""
    metadata = bool(
        set(plan.include) - {"occurred_at"}
        or plan.fields
        or plan.annotations
        or plan.render
        or plan.boost is not None
        or plan.graph_boost is not None
    )
    return Output(
        text="text" in plan.include or plan.render or plan.rerank is not None,
        content=bool(plan.fields),
        annotations=bool(plan.annotations),
        metadata=metadata,
    )


def _effective(search: SearchPlan, q: str | None, plan: RequestPlan) -> SearchPlan:
    """The plan as the service compiles it: the request's q for sources; the whole pool when a
    graph boost re-sorts a single search."""
    effective = replace(search, q=search.q if search.q is not None else q)
    if plan.graph_boost is not None and not plan.combined:
        effective = replace(effective, k=max(search.k, search.candidates))
    return effective


def compiled_request(
    body: dict[str, Any], label: str = ROUTE, large_workspace: bool = False
) -> list[tuple[SearchPlan, CompiledSearch]]:
    """Every search of `body` compiled as the service compiles it."""
    spec = parse_search(body)
    plan = resolve(spec, CATALOG, None)
    vector, model = (VECTOR, "golden-model") if plan.needs_embedding else (None, None)
    inputs = Inputs(WS, NOW, vector, model, large_workspace=large_workspace)
    output = _output(plan)
    searches = [_effective(search, spec.q, plan) for search in plan.searches]
    return [(search, compile_search(search, inputs, output, label)) for search in searches]


def _statement_text(title: str, statement: Select[Any]) -> list[str]:
    compiled = statement.compile(dialect=DIALECT)
    values = [f"--   {name} = {value!r}" for name, value in compiled.params.items()]
    return [f"-- {title}", str(compiled), "-- statement values:", *values]


def golden_text(searches: list[tuple[SearchPlan, CompiledSearch]]) -> str:
    """The golden file's content for one request."""
    lines: list[str] = []
    for number, (plan, search) in enumerate(searches, 1):
        lines.append(f"-- ===== search {number} of {len(searches)}: source {plan.source!r}, mode {plan.mode}")
        lines.append(
            f"-- scored={search.scored} uses_vector={search.uses_vector} candidates={search.candidates} "
            f"list_size={search.list_size} reuses_plan={search.reuses_plan} learns_plan={search.learns_plan}"
        )
        lines.append("-- request values:")
        lines += [f"--   {name} = {value!r}" for name, value in search.params.items()]
        lines += _statement_text("first try", search.statement)
        for i, fallback in enumerate(search.fallbacks, 1):
            lines += _statement_text(f"fallback {i} of {len(search.fallbacks)}", fallback())
    return "\n".join(lines) + "\n"


AFTER = "2026-06-01T00:00:00Z"
BEFORE = "2026-06-30T12:00:00+02:00"
NOTES: dict[str, Any] = {"collections": ["notes"]}
ONE_ENTITY: dict[str, Any] = {**NOTES, "entities": ["a"]}
IMPORTANCE = ["score", "importance"]
NESTED = [
    "sum",
    [
        ["product", 0.5, ["normalize", ["max", [["similarity"], ["text_match"]]]]],
        ["normalize", ["sum", [["normalize", IMPORTANCE], ["const", 0.25]]]],
        ["product", 0.1, ["decay", ["age_hours", "last_accessed"], {"midpoint": 24, "exponent": 1}]],
    ],
]
CURVES = [
    "sum",
    [
        ["saturate", IMPORTANCE, {"midpoint": 5, "exponent": 2}],
        ["decay", ["age_hours", "created_at"], {"midpoint": 48, "exponent": 1.5}],
        ["decay", ["age_hours", "occurred_at"], {"midpoint": 12, "exponent": 1}],
        ["text_match"],
    ],
]
"""With `NESTED`: every rank node type, a normalize nested in a normalize, every age field."""

CASES = [
    # --- every mode, default formula, broad scope
    pytest.param({"mode": "hybrid", "q": "refund budget"}, {}, id="hybrid"),
    pytest.param({"mode": "vector", "q": "refund budget"}, {}, id="vector"),
    pytest.param({"mode": "text", "q": "refund budget"}, {}, id="text"),
    pytest.param({"mode": "recent"}, {}, id="recent"),
    pytest.param({"mode": "structured", "order_by": [{"field": "amount"}]}, {}, id="structured"),
    pytest.param(
        {"mode": "text", "q": "refund budget"}, {"large_workspace": True}, id="text-large-workspace"
    ),
    pytest.param({"mode": "hybrid", "q": "refund"}, {"large_workspace": True}, id="hybrid-large-workspace"),
    pytest.param({"mode": "recent", "q": "words unused"}, {}, id="recent-with-q"),
    # --- scope shapes
    pytest.param(
        {"mode": "hybrid", "q": "refund", "scope": {"entities": ["a", "b"]}}, {}, id="hybrid-entities"
    ),
    pytest.param({"mode": "vector", "q": "refund", "scope": {"entities": ["a"]}}, {}, id="vector-entity"),
    pytest.param({"mode": "text", "q": "refund", "scope": {"entities": ["a"]}}, {}, id="text-entity"),
    pytest.param({"mode": "recent", "scope": ONE_ENTITY}, {}, id="recent-one-entity-one-collection"),
    pytest.param(
        {"mode": "vector", "q": "refund", "scope": {"types": ["note", "fact"]}}, {}, id="vector-types"
    ),
    pytest.param({"mode": "recent", "scope": {"status": "draft"}}, {}, id="recent-draft"),
    pytest.param(
        {"mode": "recent", "scope": {"status": "all", "versions": "all"}},
        {},
        id="recent-all-status-all-versions",
    ),
    pytest.param({"mode": "recent", "scope": {"keyed": True}}, {}, id="recent-keyed"),
    pytest.param({"mode": "text", "q": "refund", "scope": {"keyed": False}}, {}, id="text-unkeyed"),
    pytest.param(
        {"mode": "hybrid", "q": "refund", "scope": {"occurred_after": AFTER}}, {}, id="hybrid-after"
    ),
    pytest.param(
        {"mode": "vector", "q": "refund", "scope": {"occurred_before": BEFORE}}, {}, id="vector-before"
    ),
    pytest.param(
        {"mode": "recent", "scope": {"occurred_after": AFTER, "occurred_before": BEFORE}},
        {},
        id="recent-between",
    ),
    pytest.param({"mode": "recent", "scope": {"depth_lte": 1}}, {}, id="recent-depth"),
    pytest.param({"mode": "recent", "scope": {"depth_lte": 2**40}}, {}, id="recent-depth-past-int4"),
    pytest.param(
        {"mode": "text", "q": "refund", "scope": {"collections": ["notes", "journal"]}},
        {},
        id="text-two-languages",
    ),
    pytest.param(
        {"mode": "vector", "q": "refund", "scope": {**NOTES, "collection_versions": {"notes": [2]}}},
        {},
        id="vector-collection-version",
    ),
    pytest.param(
        {"mode": "text", "q": "refund", "scope": {"collections": ["journal"]}}, {}, id="text-german"
    ),
    # --- where operators
    pytest.param(
        {
            "mode": "vector",
            "q": "refund",
            "where": {"channel": {"eq": "email"}, "amount": {"gte": 3, "lt": 10.5}},
        },
        {},
        id="where-eq-string-number-range",
    ),
    pytest.param(
        {
            "mode": "text",
            "q": "refund",
            "where": {"amount": {"in": [5, 6.5, 10**30]}, "count": {"gt": 2, "lte": 9}},
        },
        {},
        id="where-in-numbers-integer-bounds",
    ),
    pytest.param(
        {"mode": "recent", "where": {"starts_at": {"gte": AFTER, "lt": BEFORE}, "vip": {"eq": True}}},
        {},
        id="where-datetime-boolean",
    ),
    pytest.param(
        {
            "mode": "recent",
            "where": {"tags": {"eq": ["x", "y"]}, "channel": {"exists": True}, "count": {"exists": False}},
        },
        {},
        id="where-list-eq-exists",
    ),
    pytest.param(
        {
            "mode": "hybrid",
            "q": "refund",
            "where": {"tags": {"contains_any": ["a", "b"], "contains_all": ["c"]}},
        },
        {},
        id="where-contains",
    ),
    pytest.param(
        {"mode": "recent", "where": {"channel": {"in": ["email", "call"]}}}, {}, id="where-in-strings"
    ),
    # --- structured order_by
    pytest.param(
        {
            "mode": "structured",
            "order_by": [{"field": "channel", "direction": "desc"}, {"field": "starts_at"}, {"field": "vip"}],
            "where": {"starts_at": {"gte": AFTER}},
            "k": 7,
        },
        {},
        id="structured-three-keys",
    ),
    pytest.param(
        {
            "mode": "structured",
            "order_by": [{"field": "count", "direction": "desc"}],
            "scope": ONE_ENTITY,
        },
        {},
        id="structured-one-entity-one-collection",
    ),
    # --- rank overrides and sizes
    pytest.param({"mode": "hybrid", "q": "refund", "rank": NESTED}, {}, id="hybrid-nested-normalize"),
    pytest.param({"mode": "text", "q": "refund", "rank": CURVES}, {}, id="text-curves-ages"),
    pytest.param(
        {"mode": "vector", "q": "refund", "rank": ["sum", [["similarity"], IMPORTANCE]]},
        {},
        id="vector-raw-similarity",
    ),
    pytest.param({"mode": "text", "q": "refund", "rank": ["text_match"]}, {}, id="text-raw-match"),
    pytest.param({"mode": "hybrid", "q": "refund", "rank": ["text_match"]}, {}, id="hybrid-text-match-only"),
    pytest.param({"mode": "hybrid", "q": "refund", "rank": ["similarity"]}, {}, id="hybrid-similarity-only"),
    pytest.param({"mode": "recent", "rank": ["normalize", IMPORTANCE]}, {}, id="recent-normalize-score"),
    pytest.param({"mode": "recent", "rank": ["const", 1]}, {}, id="recent-const"),
    pytest.param(
        {
            "mode": "recent",
            "rank": ["decay", ["age_hours", "last_accessed"], {"midpoint": 24, "exponent": 1}],
        },
        {},
        id="recent-last-accessed",
    ),
    pytest.param(
        {"mode": "text", "q": "refund", "k": 5, "params": {"candidates": 150}}, {}, id="text-k-candidates"
    ),
    pytest.param(
        {"mode": "hybrid", "q": "refund", "k": 3, "params": {"candidates": 1}}, {}, id="hybrid-one-candidate"
    ),
    # --- output: what the final select reads
    pytest.param({"mode": "vector", "q": "refund", "include": ["occurred_at"]}, {}, id="output-ids-only"),
    pytest.param(
        {
            "mode": "text",
            "q": "refund",
            "include": ["text", "scores"],
            "fields": ["amount"],
            "annotations": ["region"],
        },
        {},
        id="output-text-content-annotations",
    ),
    pytest.param({"mode": "hybrid", "q": "refund", "render": True}, {}, id="output-render"),
    pytest.param({"mode": "text", "q": "refund", "rerank": {"backend": "llm_judge"}}, {}, id="output-rerank"),
    # --- combined searches, boosts, graph boost
    pytest.param(
        {
            "q": "refund budget",
            "sources": [
                {"name": "words", "mode": "text", "scope": NOTES, "k": 5},
                {"name": "meaning", "mode": "vector", "scope": {"collections": ["journal"]}, "weight": 2},
                {"name": "latest", "mode": "recent", "scope": NOTES, "rank": IMPORTANCE, "weight": 0.5},
                {"name": "listed", "mode": "structured", "scope": NOTES, "order_by": [{"field": "amount"}]},
            ],
            "fuse": {"kind": "rrf", "rank_constant": 30},
            "k": 8,
        },
        {},
        id="combined-four-modes",
    ),
    pytest.param(
        {
            "q": "refund",
            "sources": [
                {"name": "both", "mode": "hybrid", "scope": NOTES},
                {"name": "recent", "mode": "recent", "scope": {"collections": ["journal"]}},
            ],
            "fuse": {"kind": "rrf"},
            "boost": ["decay", ["age_hours", "occurred_at"], {"midpoint": 24, "exponent": 1}],
        },
        {},
        id="combined-boost",
    ),
    pytest.param(
        {
            "q": "refund",
            "sources": [{"name": "words", "mode": "text", "scope": NOTES}],
            "fuse": {"kind": "rrf"},
            "graph_boost": {"anchor": "people/maya"},
        },
        {},
        id="combined-graph-boost",
    ),
    pytest.param(
        {
            "mode": "recent",
            "scope": NOTES,
            "rank": IMPORTANCE,
            "graph_boost": {"graph": "walk", "anchor": "x"},
        },
        {},
        id="recent-graph-boost",
    ),
    pytest.param(
        {
            "mode": "structured",
            "order_by": [{"field": "amount"}],
            "graph_boost": {"anchor": "x", "weight": 1.0},
        },
        {},
        id="structured-graph-boost",
    ),
    # --- a view's label
    pytest.param(
        {"mode": "recent", "scope": {"entities": ["a"]}}, {"label": "view context"}, id="view-label"
    ),
]


@pytest.mark.parametrize(("body", "options"), CASES)
def test_golden_sql(body: dict[str, Any], options: dict[str, Any], request: pytest.FixtureRequest) -> None:
    path = GOLDEN / f"{request.node.callspec.id}.sql"
    actual = golden_text(compiled_request(body, **options))
    if os.environ.get("UPDATE_GOLDEN"):
        path.write_text(actual)
    assert actual == path.read_text()


def test_every_golden_file_has_a_case() -> None:
    """A case removed from the table must take its file with it (no stale golden SQL)."""
    assert {path.stem for path in GOLDEN.glob("*.sql")} == {case.id for case in CASES}
