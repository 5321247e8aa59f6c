"""Compile tier: generated SQL checked without a database (assert_sql and golden rank files)."""

from __future__ import annotations

import json
import os
import re
import uuid
from dataclasses import replace
from datetime import UTC
from datetime import datetime
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa
from sqlalchemy.dialects import postgresql
from typing_extensions import get_protocol_members

from memseek.catalog.catalog import Catalog
from memseek.catalog.rank import OPERATORS
from memseek.catalog.rank import Const
from memseek.catalog.rank import Signal
from memseek.catalog.rank import parse_rank
from memseek.search import compile as comp
from memseek.search.request import CONDITION_OPERATORS
from memseek.search.request import Condition
from memseek.search.request import OrderBy
from memseek.search.request import Scope
from tests.integration.searchdata import NOW
from tests.integration.searchdata import TEXT_OUTPUT
from tests.integration.searchdata import catalog
from tests.integration.searchdata import collection
from tests.integration.searchdata import compiled
from tests.integration.searchdata import plans
from tests.integration.searchdata import unit

GOLDEN = Path(__file__).resolve().parents[1] / "fixtures" / "rank"
WS = uuid.UUID("00000000-0000-4000-8000-000000000001")
DIALECT = postgresql.dialect()  # type: ignore[no-untyped-call]


def render(element: Any, literal: bool = False) -> tuple[str, dict[str, Any]]:
    compiled = element.compile(dialect=DIALECT, compile_kwargs={"literal_binds": literal})
    return re.sub(r"\s+", " ", str(compiled)).strip(), dict(compiled.params)


def assert_sql(element: Any, expected_sql: str, expected_params: dict[str, Any] | None = None) -> None:
    """The normalised SQL (and, when given, the bound parameters) of `element`."""
    sql, params = render(element)
    assert sql == re.sub(r"\s+", " ", expected_sql).strip()
    if expected_params is not None:
        assert params == expected_params


# --- registries ------------------------------------------------------------------------------------


def test_every_operator_has_a_compile_rule() -> None:
    assert set(OPERATORS.values()) <= set(comp.compile_rank.registry)
    signals = {cls for cls in OPERATORS.values() if issubclass(cls, Signal)} - {Const}
    assert signals <= set(comp.signal_column.registry)


def test_missing_rule_raises() -> None:
    class Strange(Signal):
        op = "strange"

    with pytest.raises(comp.UnsupportedNode):
        comp.compile_rank(Strange(), comp.RankContext(sa.table("t"), {}))


def test_every_condition_operator_has_a_rule() -> None:
    assert set(CONDITION_OPERATORS) == set(comp.OPERATOR_RULES)


# --- scope and where -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("scope", "sql", "params"),
    [
        pytest.param(
            {},
            "records.status = 'active' AND records.is_current IS true",
            {},
            id="defaults",
        ),
        pytest.param({"status": "all", "versions": "all"}, "", {}, id="no-rules"),
        pytest.param(
            {"keyed": True, "status": "all", "versions": "all"}, "records.key IS NOT NULL", {}, id="keyed"
        ),
        pytest.param(
            {"entities": ["a", "b"], "status": "draft", "versions": "all", "depth_lte": 0},
            "records.entity IN (__[POSTCOMPILE_scope_entities]) AND records.status = 'draft' "
            "AND records.depth <= %(depth_1)s::INTEGER",
            {"scope_entities": None, "depth_1": 0},  # entities: a request value
            id="entities-draft-depth",
        ),
        pytest.param(
            {"occurred_after": "2026-01-01T00:00:00Z", "status": "all", "versions": "all"},
            "records.occurred_at > %(occurred_after)s::TIMESTAMP WITH TIME ZONE",
            {"occurred_after": None},  # a request value
            id="strict-time-bound",
        ),
    ],
)
def test_scope_rules(scope: dict[str, Any], sql: str, params: dict[str, Any]) -> None:
    assert_sql(sa.and_(sa.true(), *comp.scope_rules(Scope.model_validate(scope))), sql or "true", params)


GUARD = "CASE WHEN (jsonb_typeof(records.fields -> 'n') = 'number')"


@pytest.mark.parametrize(
    ("field_type", "condition", "sql", "params"),
    [
        pytest.param(
            "number",
            {"gte": 3},
            f"{GUARD} THEN CAST(records.fields -> 'n' AS NUMERIC) ELSE NULL END >= %(param_1)s",
            {"param_1": Decimal(3)},
            id="gte-number",
        ),
        pytest.param(  # every value NUMERIC, not typed by the first one (6.5 is no INTEGER)
            "number",
            {"in": [5, 6.5, 10**30]},
            f"{GUARD} THEN CAST(records.fields -> 'n' AS NUMERIC) ELSE NULL END IN "
            "(%(param_1)s, %(param_2)s, %(param_3)s)",
            {"param_1": Decimal(5), "param_2": Decimal("6.5"), "param_3": Decimal(10**30)},
            id="in-numbers-exact",
        ),
        pytest.param(  # a float by its shortest repr, as JSON wrote it
            "number",
            {"eq": 0.1},
            f"{GUARD} THEN CAST(records.fields -> 'n' AS NUMERIC) ELSE NULL END = %(param_1)s",
            {"param_1": Decimal("0.1")},
            id="eq-float-as-written",
        ),
        pytest.param(
            "datetime",
            {"lt": "2026-01-01T00:00:00Z"},
            f"{GUARD} THEN CAST(records.fields -> 'n' AS NUMERIC) ELSE NULL END < %(param_1)s",
            {"param_1": Decimal(1767225600000000)},
            id="datetime-as-epoch-micros",
        ),
        pytest.param(
            "string_array",
            {"eq": ["x", "y"]},
            "(records.fields -> 'n') = %(param_1)s::JSONB",
            {"param_1": ["x", "y"]},
            id="eq-list",
        ),
        pytest.param(
            "string",
            {"exists": False},
            "NOT (records.fields ? 'n')",
            {},
            id="exists-false",
        ),
        pytest.param(
            "string_array",
            {"contains_all": ["x"]},
            "jsonb_typeof(records.fields -> 'n') = 'array' AND "
            "((records.fields -> 'n') ?& %(param_1)s::TEXT[])",
            {"param_1": ["x"]},
            id="contains-all",
        ),
    ],
)
def test_where_rules(field_type: str, condition: dict[str, Any], sql: str, params: dict[str, Any]) -> None:
    (rule,) = comp.where_rules({"n": Condition.model_validate(condition)}, {"n": field_type})
    assert_sql(rule, sql, params)


def test_values_are_bound_never_inlined() -> None:
    evil = "x'); DROP TABLE records; --"
    search = compiled(
        {"mode": "text", "q": evil, "scope": {"entities": [evil]}, "where": {"channel": {"eq": evil}}}, WS
    )
    sql, params = render(search.statement)
    assert "DROP TABLE" not in sql and evil in params.values()  # the where value, part of the shape
    assert search.params["query_text"] == evil and search.params["scope_entities"] == [evil]
    assert "DROP TABLE" not in render(search.bound())[0]


# --- the statement --------------------------------------------------------------------------------


def test_statement_is_tagged() -> None:
    sql, _ = render(compiled({"mode": "recent"}, WS).statement)
    assert "SELECT /* memseek test */" in sql


@pytest.mark.parametrize("label", ["view x */ DROP", "", "a;b"])
def test_unsafe_labels_are_refused(label: str) -> None:
    with pytest.raises(ValueError):
        comp.tag(label)


@pytest.mark.parametrize(
    ("body", "ctes"),
    [
        pytest.param(
            {"mode": "recent"}, ["recent_candidates", "pool", "ranked_values", "ranked", "top"], id="recent"
        ),
        pytest.param(
            {"mode": "text", "q": "x"}, ["text_candidates", "pool", "rank_1_input", "rank_1"], id="text"
        ),
        pytest.param(
            {"mode": "hybrid", "q": "x"},
            ["vector_candidates", "text_candidates", "recent_candidates", "hybrid_candidates", "pool"],
            id="hybrid-interleaves-three-lists",
        ),
    ],
)
def test_statement_shape(body: dict[str, Any], ctes: list[str]) -> None:
    sql, _ = render(compiled(body, WS, vector=[0.0] * 384).statement)
    positions = [re.search(rf"\b{name} AS (MATERIALIZED )?\(", sql).start() for name in ctes]  # type: ignore[union-attr]
    assert positions == sorted(positions)
    assert "pool AS MATERIALIZED (" in sql  # signals are computed once, not at every reference


def test_a_structured_list_is_its_own_pool() -> None:
    """The list reads `records` with every rule and carries its keys; only the final select
    reads `records` again (for the response's columns)."""
    body = {"mode": "structured", "order_by": [{"field": "amount"}]}
    sql, _ = render(compiled(body, WS).statement)
    listed = re.search(r"structured_candidates AS \(SELECT (.*?) FROM records WHERE", sql)
    assert listed is not None
    assert listed.group(1).endswith("AS key_0")
    assert " pool " not in sql
    assert sql.index("top AS (") > sql.index("structured_candidates AS (")
    assert sql.count("JOIN records ON") == 1


@pytest.mark.parametrize(
    ("body", "states_it"),
    [
        ({"mode": "structured", "order_by": [{"field": "amount"}]}, True),
        ({"mode": "structured", "order_by": [{"field": "amount"}], "scope": {"entities": ["e1"]}}, True),
        ({"mode": "hybrid", "q": "x"}, False),
        ({"mode": "vector", "q": "x"}, False),
        ({"mode": "text", "q": "x"}, False),
        ({"mode": "recent"}, False),
    ],
    ids=["structured", "structured-one-entity", "hybrid", "vector", "text", "recent"],
)
def test_only_a_structured_list_states_the_sort_indexes_clause(body: dict[str, Any], states_it: bool) -> None:
    """Every sort index's predicate requires `records.seq > 0` (`memseek.indexes.sort_index`):
    a structured list must state it to read them, and no scored list may, or the planner weighs
    every sort index for it."""
    sql, _ = render(compiled(body, WS, vector=[0.0] * 384).statement)
    assert ("records.seq > 0" in sql) is states_it


def test_vector_proposal_orders_by_distance_alone() -> None:
    sql, _ = render(compiled({"mode": "vector", "q": "x"}, WS, vector=[0.0] * 384).statement)
    assert "ORDER BY records.embedding <=> %(query_vector)s LIMIT" in sql


# --- golden rank expressions -------------------------------------------------------------------------


def load_fixture_pairs(path: Path) -> list[tuple[dict[str, str], str, str]]:
    """`# key: value` metadata lines, a JSON rank tree, `---`, the expected SQL; entries split by `===`."""
    pairs = []
    for block in path.read_text().split("===\n"):
        if not block.strip():
            continue
        head, expected = block.split("---\n")
        meta = dict(line[2:].split(": ", 1) for line in head.splitlines() if line.startswith("# "))
        tree = "\n".join(line for line in head.splitlines() if not line.startswith("#"))
        pairs.append((meta, tree.strip(), expected.strip()))
    return pairs


def rank_sql(tree: str) -> str:
    root = parse_rank(json.loads(tree))
    labels = comp.rank_inputs(root)
    stage = sa.table("stage", *(sa.column(label) for label in labels.values()))
    sql, _ = render(comp.compile_rank(root, comp.RankContext(stage, labels)), literal=True)
    return sql


def _defaults() -> Catalog:
    return catalog()


CASES = [(path, case) for path in sorted(GOLDEN.glob("*.txt")) for case in load_fixture_pairs(path)]


@pytest.mark.parametrize(("path", "case"), CASES, ids=[c[1][0]["id"] for c in CASES])
def test_golden_rank_sql(path: Path, case: tuple[dict[str, str], str, str]) -> None:
    meta, tree, expected = case
    actual = rank_sql(tree)
    if os.environ.get("UPDATE_GOLDEN"):
        path.write_text(path.read_text().replace(expected, actual))
    assert actual == expected, meta["id"]


def test_golden_covers_the_shipped_defaults() -> None:
    shipped = _defaults().rank_default
    assert shipped is not None
    golden = {meta["id"]: tree for meta, tree, _ in (case for _, case in CASES)}
    for mode, node in shipped.variants.items():
        assert parse_rank(json.loads(golden[f"default-{mode}"])) == node


# --- statement templates (one build per shape) -------------------------------------------------------

OTHER_WS = uuid.UUID("00000000-0000-4000-8000-000000000002")
SAME_SHAPE = [
    pytest.param({"mode": "recent", "scope": {"entities": ["a"]}},
                 {"mode": "recent", "scope": {"entities": ["b", "c"]}}, id="recent-entities"),
    pytest.param({"mode": "text", "q": "budget"}, {"mode": "text", "q": "refund outage"}, id="text-q"),
    pytest.param({"mode": "recent", "scope": {"occurred_after": "2026-06-30T12:00:00Z"}},
                 {"mode": "recent", "scope": {"occurred_after": "2026-06-30T13:00:00Z"}}, id="recent-since"),
    pytest.param({"mode": "hybrid", "q": "budget", "scope": {"entities": ["a"]}},
                 {"mode": "hybrid", "q": "other words", "scope": {"entities": ["b"]}}, id="hybrid"),
    pytest.param({"mode": "structured", "order_by": [{"field": "amount"}], "scope": {"entities": ["a"]}},
                 {"mode": "structured", "order_by": [{"field": "amount"}], "scope": {"entities": ["z"]}},
                 id="structured"),
]  # fmt: skip


@pytest.mark.parametrize(("body", "other"), SAME_SHAPE)
def test_requests_of_one_shape_share_a_template(body: dict[str, Any], other: dict[str, Any]) -> None:
    first = compiled(body, WS, vector=unit(1.0))
    second = compiled(other, OTHER_WS, vector=unit(0.0, 1.0))
    assert second.statement is first.statement and second.params != first.params
    (plan,) = plans(other)
    inputs = comp.Inputs(OTHER_WS, NOW, unit(0.0, 1.0), "test-model")
    fresh = comp.build_statement(plan, inputs, TEXT_OUTPUT, "test")
    assert repr(render(second.statement)) == repr(render(fresh))  # repr: the NaN literal equals itself
    assert repr(render(second.bound())) == repr(render(fresh.params(dict(second.params))))


def test_templates_hold_no_request_value() -> None:
    bounds = {"occurred_after": "2026-01-01T00:00:00Z", "occurred_before": "2026-02-01T00:00:00+01:00"}
    search = compiled(
        {"mode": "hybrid", "q": "budget", "scope": {"entities": ["a"], **bounds}}, WS, vector=unit(1.0)
    )
    _, params = render(search.statement)
    assert set(search.params) == set(comp.REQUEST_VALUES)
    assert all(params[name] is None for name in comp.REQUEST_VALUES)
    assert search.params["occurred_after"] == datetime(2026, 1, 1, tzinfo=UTC)
    assert search.params["occurred_before"] == datetime(2026, 1, 31, 23, tzinfo=UTC)


def test_shapes_that_differ_get_their_own_template() -> None:
    base = {"mode": "text", "q": "x"}
    bodies = [
        base,
        {**base, "k": 5},
        {**base, "params": {"candidates": 150}},
        {**base, "where": {"channel": {"eq": "a"}}},
        {**base, "where": {"channel": {"eq": "b"}}},
        {**base, "where": {"amount": {"eq": 1}}},
        {**base, "where": {"amount": {"eq": 1.0}}},
        {**base, "scope": {"status": "draft"}},
        {**base, "scope": {"entities": ["a"]}},
        {**base, "scope": {"occurred_after": "2026-06-30T12:00:00Z"}},
        {**base, "scope": {"occurred_before": "2026-06-30T12:00:00Z"}},
        {**base, "rank": ["const", 1]},
    ]
    searches = [compiled(body, WS) for body in bodies]
    searches.append(comp.compile_search(plans(base)[0], comp.Inputs(WS, NOW), TEXT_OUTPUT, "other label"))
    searches.append(comp.compile_search(plans(base)[0], comp.Inputs(WS, NOW), comp.Output(), "test"))
    assert len({id(search.statement) for search in searches}) == len(searches)


def test_shape_key_covers_every_attribute_compilation_reads() -> None:
    (plan,) = plans({"mode": "text", "q": "x"})
    inputs = comp.Inputs(WS, NOW)
    base = comp.shape_key(plan, inputs, TEXT_OUTPUT, "test")
    changes: dict[str, Any] = {
        "mode": "recent",
        "scope": Scope(status="draft"),
        "where": {"channel": Condition(eq="a")},
        "field_types": {"channel": "string"},
        "order_by": (OrderBy(field="amount"),),
        "collections": (collection(version=2),),
        "rank": Const(1.0),
        "k": 7,
        "candidates": 150,
    }
    assert set(changes) == get_protocol_members(comp.CompilablePlan) - {"q"}
    for name, value in changes.items():
        assert comp.shape_key(replace(plan, **{name: value}), inputs, TEXT_OUTPUT, "test") != base, name
    assert comp.shape_key(replace(plan, q="other"), inputs, TEXT_OUTPUT, "test") == base
    with_vector = comp.Inputs(WS, NOW, unit(1.0), "test-model")
    assert comp.shape_key(plan, with_vector, TEXT_OUTPUT, "test") != base


ONE = {"collections": ["main"], "entities": ["a"]}
BY_AMOUNT = [{"field": "amount"}]


@pytest.mark.parametrize(
    ("body", "reuses"),
    [
        pytest.param({"mode": "recent", "scope": ONE}, True, id="recent-one-entity"),
        pytest.param({"mode": "recent", "q": "x", "scope": ONE}, True, id="recent-with-q"),
        pytest.param(
            {"mode": "recent", "scope": {**ONE, "occurred_after": "2026-01-01T00:00:00Z"}},
            True,
            id="recent-since",
        ),
        pytest.param({"mode": "recent"}, False, id="recent-broad"),
        pytest.param(
            {"mode": "recent", "scope": {**ONE, "entities": ["a", "b"]}}, False, id="recent-two-entities"
        ),
        pytest.param({"mode": "recent", "scope": {"entities": ["a"]}}, False, id="recent-every-collection"),
        pytest.param(
            {"mode": "recent", "scope": ONE, "where": {"amount": {"gte": 3}}}, True, id="recent-where"
        ),
        pytest.param({"mode": "structured", "order_by": BY_AMOUNT, "scope": ONE}, True, id="structured"),
        pytest.param(
            {"mode": "structured", "order_by": BY_AMOUNT, "where": {"amount": {"gte": 3}}, "scope": ONE},
            True,
            id="structured-where",
        ),
        pytest.param(
            {"mode": "structured", "order_by": BY_AMOUNT, "scope": {"collections": ["main"]}},
            False,
            id="structured-broad",
        ),
        pytest.param(
            {"mode": "structured", "order_by": BY_AMOUNT, "scope": {**ONE, "entities": ["a", "b"]}},
            False,
            id="structured-two-entities",
        ),
        pytest.param({"mode": "text", "q": "x", "scope": ONE}, False, id="text"),
        pytest.param({"mode": "vector", "q": "x", "scope": ONE}, False, id="vector"),
        pytest.param({"mode": "hybrid", "q": "x", "scope": ONE}, False, id="hybrid"),
    ],
)
def test_only_shapes_one_plan_serves_alike_may_keep_a_generic_plan(
    body: dict[str, Any], reuses: bool
) -> None:
    two_collections = catalog(collection("main"), collection("other"))
    assert compiled(body, WS, vector=[0.0] * 384, cat=two_collections).reuses_plan is reuses


AT = NOW.isoformat()


@pytest.mark.parametrize(
    ("body", "learns"),
    [
        pytest.param({"mode": "vector", "q": "x"}, True, id="vector"),
        pytest.param({"mode": "vector", "q": "x", "scope": {"types": ["note"]}}, True, id="vector-types"),
        pytest.param({"mode": "vector", "q": "x", "where": {"amount": {"gte": 3}}}, True, id="vector-where"),
        pytest.param({"mode": "vector", "q": "x", "scope": {"entities": ["a"]}}, False, id="vector-entity"),
        pytest.param({"mode": "vector", "q": "x", "scope": {"occurred_after": AT}}, False, id="vector-since"),
        pytest.param({"mode": "vector", "q": "x", "scope": {"occurred_before": AT}}, False, id="vector-to"),
        pytest.param({"mode": "hybrid", "q": "x y"}, True, id="hybrid"),
        pytest.param({"mode": "hybrid", "q": "x", "scope": {"entities": ["a"]}}, False, id="hybrid-entity"),
        pytest.param({"mode": "hybrid", "q": "x", "scope": {"occurred_after": AT}}, False, id="hybrid-since"),
        pytest.param({"mode": "text", "q": "x"}, False, id="text"),
        pytest.param({"mode": "recent"}, False, id="recent"),
    ],
)
def test_only_a_broad_vector_or_hybrid_search_learns_its_plan_per_workspace(
    body: dict[str, Any], learns: bool
) -> None:
    assert compiled(body, WS, vector=[0.0] * 384).learns_plan is learns


@pytest.mark.parametrize(
    ("body", "once"),
    [
        pytest.param({"mode": "hybrid", "q": "x y"}, True, id="hybrid"),
        pytest.param({"mode": "hybrid", "q": "x", "scope": {"entities": ["a"]}}, False, id="hybrid-entity"),
        pytest.param({"mode": "text", "q": "x y"}, True, id="text"),
        pytest.param({"mode": "text", "q": "x", "scope": {"entities": ["a"]}}, False, id="text-entity"),
        pytest.param({"mode": "hybrid", "q": "x", "rank": ["text_match"]}, True, id="hybrid-text-match"),
        pytest.param({"mode": "hybrid", "q": "x", "scope": {"occurred_after": AT}}, False, id="hybrid-since"),
        pytest.param({"mode": "text", "q": "x", "rank": ["text_match"]}, True, id="text-match"),
    ],
)
def test_the_querys_tsquery_is_computed_once_only_where_a_generic_plan_may_run(
    body: dict[str, Any], once: bool
) -> None:
    """A generic plan would call `memseek_any_lexeme` per row; a plan made for the request folds
    the call into a constant and estimates its matches from it."""
    sql = str(compiled(body, WS, vector=[0.0] * 384).statement)
    assert "memseek_any_lexeme(" in sql
    assert ("(SELECT memseek_any_lexeme(" in sql) is once
