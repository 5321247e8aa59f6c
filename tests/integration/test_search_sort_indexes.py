"""Start-up sort indexes for declared sortable fields (`memseek.indexes.sort_indexes`).

A structured search must return what it returns without them: the property test of
`test_search_property` runs again with the indexes present and the planner pushed onto them
(no sequential scans, no sorts), against the same brute-force oracle. Fixed requests check that
the index really serves the ordered proposal and stops at its limit.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from typing import Any

import psycopg
import pytest
import sqlalchemy as sa
from hypothesis import HealthCheck
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st
from sqlalchemy.engine import Engine
from sqlalchemy.pool import NullPool

from memseek.db import scope_settings
from memseek.db import set_local
from memseek.db import workspace_transaction
from memseek.driver import native_placeholders
from memseek.driver import pyformat_form
from memseek.indexes import ensure_field_indexes
from memseek.indexes import sort_indexes
from memseek.runtime import Runtime
from memseek.search.compile import CompiledSearch
from memseek.search.compile import Explain
from tests.conftest import Tenant
from tests.conftest import make_tenant
from tests.integration.searchdata import Rec
from tests.integration.searchdata import catalog
from tests.integration.searchdata import compiled
from tests.integration.searchdata import execute_compiled
from tests.integration.searchdata import hours_ago
from tests.integration.searchdata import insert
from tests.integration.searchdata import prepare_transaction
from tests.integration.searchdata import run_compiled
from tests.integration.test_search_paths import PREPARED_RUNS
from tests.integration.test_search_paths import _prepared_runs
from tests.integration.test_search_property import assert_matches_oracle
from tests.integration.test_search_property import records as record_strategy
from tests.integration.test_search_property import requests

FORCED = {"enable_seqscan": "off", "enable_sort": "off", "enable_bitmapscan": "off"}
EXACT = {"enable_indexscan": "off", "enable_bitmapscan": "off"}


def index_names(engine: Engine) -> set[str]:
    with engine.connect() as conn:
        query = "SELECT indexname FROM pg_indexes WHERE tablename = 'records'"
        return set(conn.exec_driver_sql(query).scalars())


@pytest.fixture(scope="module")
def sort_indexed(engine: Engine) -> Iterator[list[str]]:
    """The sort indexes of the search tests' catalog (collection `main`), dropped afterwards."""
    names = [str(index.name) for index in sort_indexes(catalog())]
    with engine.begin() as conn:
        ensure_field_indexes(conn, catalog())
    yield names
    with engine.begin() as conn:
        for name in names:
            conn.execute(sa.text(f'DROP INDEX IF EXISTS "{name}"'))


def test_start_up_creates_sort_indexes_for_declared_sortable_fields(runtime: Runtime, engine: Engine) -> None:
    """The reference catalog declares `calendar_events.starts_at` and `ends_at` sortable, not `location`."""
    names = index_names(engine)
    for field in ("starts_at", "ends_at"):
        for kind in ("sort", "sortall"):
            wanted = {f"records_{kind}_calendar_events_{field}_{d}" for d in ("asc", "desc")}
            assert wanted <= names
    assert not any(name.startswith("records_sort") and "_location_" in name for name in names)


def test_creating_the_indexes_again_changes_nothing(engine: Engine, sort_indexed: list[str]) -> None:
    before = index_names(engine)
    assert set(sort_indexed) <= before
    with engine.begin() as conn:
        created = ensure_field_indexes(conn, catalog())
    assert set(sort_indexed) <= set(created)
    assert index_names(engine) == before


def test_index_expressions_are_the_sort_keys_of_a_structured_search(sort_indexed: list[str]) -> None:
    """Integers and datetimes sort as numbers: one index per typed value, named without the type."""
    assert "records_sort_main_starts_at_asc" in sort_indexed
    assert "records_sortall_main_vip_desc" in sort_indexed
    assert len(sort_indexed) == 5 * 4  # channel, amount, count, vip, starts_at × 2 scopes × 2 directions


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(recs=st.lists(record_strategy, max_size=24), body=requests())
def test_statement_through_the_sort_indexes_matches_brute_force(
    db: Engine, tenant: Tenant, sort_indexed: list[str], recs: list[Rec], body: dict[str, Any]
) -> None:
    assert_matches_oracle(db, tenant, recs, body, FORCED)


# --- fixed requests on a larger set ------------------------------------------------------------------

ROWS = 600


@pytest.fixture(scope="module")
def many(engine: Engine, sort_indexed: list[str]) -> Iterator[Tenant]:
    """600 records over 6 entities: values of every type, missing and mistyped, many ties."""
    tenant = make_tenant(engine, "sorted")
    rng = random.Random(5)

    def fields() -> dict[str, Any]:
        out: dict[str, Any] = {}
        if rng.random() < 0.8:
            out["channel"] = rng.choice(["email", "Email", "call", "é", "chat"])
        if rng.random() < 0.8:
            out["amount"] = rng.choice([rng.randint(-3, 3), rng.random() * 10, "12"])
        if rng.random() < 0.7:
            out["starts_at"] = rng.randint(0, 20) * 3_600_000_000
        if rng.random() < 0.6:
            out["vip"] = rng.random() < 0.5
        return out

    recs = [
        Rec(
            entity=f"e{rng.randint(0, 5)}",
            fields=fields(),
            occurred_at=hours_ago(rng.randint(0, 300)),
            processing=rng.choice(["ready"] * 9 + ["pending"]),
            retracted=rng.random() < 0.05,
            status=rng.choice(["active"] * 5 + ["draft"]),
        )
        for _ in range(ROWS)
    ]
    with engine.begin() as conn:
        insert(conn, tenant.id, *recs)
        conn.execute(sa.text("ANALYZE records"))
    yield tenant
    with engine.begin() as conn:
        conn.execute(sa.text("TRUNCATE processing_queue, records, api_keys, workspaces CASCADE"))


def _run(engine: Engine, tenant: Tenant, body: dict[str, Any], forced: dict[str, str]) -> tuple[str, Any]:
    with workspace_transaction(engine, tenant.id, forced) as conn:
        search = compiled(body, tenant.id)
        plan = "\n".join(conn.execute(Explain(search.statement), search.params).scalars())
        result = run_compiled(conn, search)
    return plan, ([h.id for h in result.hits], result.candidate_count)


ORDERS = [
    [{"field": field, "direction": direction}]
    for field in ("channel", "amount", "starts_at", "vip")
    for direction in ("asc", "desc")
] + [[{"field": "starts_at", "direction": "desc"}, {"field": "channel", "direction": "asc"}]]
SCOPES = [{}, {"entities": ["e2"]}, {"entities": ["e1", "e3"]}, {"status": "all", "entities": ["e4"]}]


def _order_id(order_by: list[dict[str, str]]) -> str:
    return ",".join(f"{o['field']}-{o['direction']}" for o in order_by)


@pytest.mark.parametrize("order_by", ORDERS, ids=_order_id)
@pytest.mark.parametrize("scope", SCOPES, ids=["workspace", "entity", "two-entities", "entity-all-statuses"])
def test_the_sort_indexes_serve_a_structured_search_with_the_same_results(
    engine: Engine, many: Tenant, order_by: list[dict[str, str]], scope: dict[str, Any]
) -> None:
    body = {"mode": "structured", "k": 15, "scope": scope, "order_by": order_by, "params": {"candidates": 40}}
    forced_plan, through_index = _run(engine, many, body, FORCED)
    exact_plan, exact = _run(engine, many, body, EXACT)
    _, planned = _run(engine, many, body, {})
    assert through_index == exact == planned
    assert len(exact[0]) == 15
    assert "records_sort" not in exact_plan
    if len(scope.get("entities", ())) <= 1:  # one entity (an equality) or none: the index orders the scope
        kind = "sort" if scope.get("entities") else "sortall"
        first = order_by[0]
        assert f"records_{kind}_main_{first['field']}_{first['direction']} " in forced_plan, forced_plan


def test_a_filter_on_another_field_still_stops_at_the_limit(engine: Engine, many: Tenant) -> None:
    """The bench's shape: one entity, an equality on a field, sorted by another."""
    body = {
        "mode": "structured",
        "k": 5,
        "scope": {"entities": ["e2"]},
        "where": {"channel": {"eq": "call"}},
        "order_by": [{"field": "starts_at", "direction": "asc"}],
        "params": {"candidates": 10},
    }
    forced_plan, through_index = _run(engine, many, body, FORCED)
    _, exact = _run(engine, many, body, EXACT)
    assert through_index == exact and len(exact[0]) == 5
    assert "records_sort_main_starts_at_asc " in forced_plan
    proposal = forced_plan.split("CTE structured_candidates")[1].split("CTE pool")[0]
    assert "Sort Key" not in proposal, forced_plan


# --- generic plans (`compile.reuses_plan`) --------------------------------------------------------


def kept_plan(engine: Engine, tenant: Tenant, search: CompiledSearch) -> str:
    """`EXPLAIN EXECUTE` of the generic plan PostgreSQL keeps for `search`'s prepared statement
    (under the FORCED settings, so that only an index can order the rows without a sort), on a
    connection of its own: no other statement is prepared there."""
    own = sa.create_engine(engine.url, poolclass=NullPool)
    with own.connect() as conn, conn.begin():
        set_local(conn, scope_settings(tenant.id))
        prepare_transaction(conn, search)
        for name, value in {**FORCED, "plan_cache_mode": "force_generic_plan"}.items():
            conn.execute(sa.text("SELECT set_config(:n, :v, true)"), {"n": name, "v": value})
        for _ in range(PREPARED_RUNS):
            execute_compiled(conn, search)
        prepared = sa.text("SELECT name FROM pg_prepared_statements WHERE statement LIKE :tag")
        name = conn.execute(prepared, {"tag": "%/* memseek test */%"}).scalar_one()
        sql, values = pyformat_form(search.statement, search.params, conn.dialect)
        _, order = native_placeholders(sql)  # the $n order the statement was prepared with
        cursor = psycopg.ClientCursor(conn.connection.driver_connection)
        args = cursor.mogrify(", ".join(f"%({n})s" for n in order), values)
        plan = "\n".join(conn.exec_driver_sql(f"EXPLAIN EXECUTE {name}({args})").scalars())
    own.dispose()
    return plan


@pytest.mark.parametrize(
    "body",
    [
        pytest.param(
            {"where": {"channel": {"eq": "call"}}, "order_by": [{"field": "starts_at", "direction": "asc"}]},
            id="filtered",
        ),
        pytest.param({"order_by": [{"field": "amount", "direction": "desc"}]}, id="numbers-desc"),
        pytest.param({"scope": {"status": "all"}, "order_by": [{"field": "channel"}]}, id="all-statuses"),
    ],
)
def test_a_one_entity_structured_search_keeps_a_generic_plan_through_its_sort_index(
    engine: Engine, many: Tenant, body: dict[str, Any]
) -> None:
    """The collection, JSON key and type guard are literals in the statement, so the partial
    expression index matches a plan made without the request's values; that plan finds what
    per-request plans find, and `auto` keeps it."""
    scope = {"collections": ["main"], "entities": ["e2"], **body.get("scope", {})}
    search = compiled({"mode": "structured", "k": 10, **body, "scope": scope}, many.id)
    assert search.reuses_plan
    first = body["order_by"][0]
    index = f"records_sort_main_{first['field']}_{first.get('direction', 'asc')} "
    assert index in kept_plan(engine, many, search)
    custom, _ = _prepared_runs(engine, many, search, "force_custom_plan")
    generic, _ = _prepared_runs(engine, many, search, "force_generic_plan")
    _, (generic_made, _) = _prepared_runs(engine, many, search, None)
    assert custom == generic and len(set(map(str, custom))) == 1 and len(custom[0][0]) == 10
    assert generic_made > 0
