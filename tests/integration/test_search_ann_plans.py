"""A broad vector or hybrid search keeps a generic plan pinned to the HNSW index where PostgreSQL's
own plan for the workspace reads the list through it (`SearchState.ann_plans`), and never answers
differently for it: a list that comes back short runs again, planned for the request."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest
import sqlalchemy as sa
from sqlalchemy.engine import Engine

from memseek.db import create_db_engine
from memseek.db import workspace_transaction
from memseek.search.compile import CompiledSearch
from memseek.search.compile import Explain
from memseek.search.execute import SearchResult
from memseek.search.execute import run_searches
from memseek.search_state import SearchState
from memseek.settings import Settings
from tests.conftest import Tenant
from tests.integration.searchdata import compiled
from tests.integration.searchdata import prepare_transaction
from tests.integration.searchdata import run_compiled
from tests.integration.test_search_paths import ROWS
from tests.integration.test_search_paths import random_corpus

BROAD = {"mode": "vector", "q": "x", "k": 20}
BROAD_HYBRID = {"mode": "hybrid", "q": "refund outage", "k": 20}


@pytest.fixture(scope="module")
def corpus(engine: Engine) -> Iterator[tuple[Tenant, list[float]]]:
    yield from random_corpus(engine, "ann-plans", 11)


@pytest.fixture
def state(engine: Engine) -> Iterator[SearchState]:
    """A fresh search state for the test (no plan choice learned yet)."""
    fresh = SearchState.open(engine)
    yield fresh
    fresh.close()


@contextmanager
def scopes_sent(engine: Engine) -> Iterator[list[dict[str, Any]]]:
    """The settings of every scoped statement `engine` runs, with "explain" for an EXPLAIN after it."""
    sent: list[dict[str, Any]] = []

    def listen(conn: Any, cursor: Any, statement: str, parameters: Any, *args: Any) -> None:
        if "set_config" in statement:
            sent.append(dict(zip(parameters[::2], parameters[1::2], strict=True)))
        elif statement.startswith("EXPLAIN"):
            sent[-1]["explain"] = True

    sa.event.listen(engine, "before_cursor_execute", listen)
    try:
        yield sent
    finally:
        sa.event.remove(engine, "before_cursor_execute", listen)


def alone(state: SearchState, tenant: Tenant, search: CompiledSearch) -> SearchResult:
    [result] = run_searches(state, tenant.id, [search], 1, 10_000)
    return result


def planned(engine: Engine, tenant: Tenant, search: CompiledSearch) -> tuple[Any, ...]:
    """The search's outcome with PostgreSQL planning it for the request (in a transaction)."""
    with workspace_transaction(engine, tenant.id) as conn:
        return outcome(run_compiled(conn, search))


def outcome(result: SearchResult) -> tuple[Any, ...]:
    hits = [(hit.id, round(hit.value or 0.0, 9)) for hit in result.hits]
    return hits, result.low, result.high, result.candidate_count


def generic_plans(engine: Engine, cte: str) -> int:
    """How many times PostgreSQL ran a kept generic plan of the statements naming `cte`, on the
    pool's most recent connection: the one that ran the searches."""
    with engine.connect() as conn:
        return int(
            conn.execute(
                sa.text(
                    "SELECT coalesce(sum(generic_plans), 0) FROM pg_prepared_statements"
                    " WHERE statement LIKE :named AND statement NOT LIKE 'EXPLAIN%'"
                ),
                {"named": f"%{cte}%"},
            ).scalar_one()
        )


def known(state: SearchState, search: CompiledSearch, tenant: Tenant) -> bool:
    return state.ann_plans.reads_index((search.statement, tenant.id), lambda: pytest.fail("learned again"))


@pytest.fixture
def prefers_hnsw(settings: Settings, engine: Engine) -> Iterator[SearchState]:
    """A fresh search state over an engine whose sessions plan nearest rows through the HNSW index
    (any other path sorts), as PostgreSQL does for a large workspace."""
    url = engine.url.update_query_dict({"options": "-c enable_seqscan=off -c enable_sort=off"})
    pinned = create_db_engine(settings, url.render_as_string(hide_password=False))
    state = SearchState.open(pinned)
    yield state
    state.close()
    pinned.dispose()


def test_a_workspace_read_through_hnsw_runs_a_generic_plan_pinned_to_it(
    corpus: tuple[Tenant, list[float]], engine: Engine, prefers_hnsw: SearchState
) -> None:
    tenant, vector = corpus
    search = compiled(BROAD, tenant.id, vector=vector)
    with scopes_sent(prefers_hnsw.engine) as sent:
        results = [outcome(alone(prefers_hnsw, tenant, search)) for _ in range(8)]
    generic = generic_plans(prefers_hnsw.engine, "vector_candidates")
    assert known(prefers_hnsw, search, tenant) is True
    assert sent[0]["plan_cache_mode"] == "force_custom_plan" and sent[0]["explain"]  # learned once
    assert all(s["plan_cache_mode"] == "force_generic_plan" and s["enable_sort"] == "off" for s in sent[1:])
    assert len(sent) == 9 and generic >= 1  # psycopg prepared it; PostgreSQL kept one plan
    assert results == [planned(engine, tenant, search)] * 8
    assert len(results[0][0]) == 20


def test_a_pinned_list_that_comes_back_short_runs_again_planned_for_the_request(
    corpus: tuple[Tenant, list[float]], engine: Engine, state: SearchState
) -> None:
    """A scope with fewer rows than the list (or an HNSW scan that stopped short) is never cut."""
    tenant, vector = corpus
    search = compiled({**BROAD, "params": {"candidates": 300}}, tenant.id, vector=vector)
    state.ann_plans.learn((search.statement, tenant.id), True)  # as if the workspace had been large
    with scopes_sent(engine) as sent:
        result = alone(state, tenant, search)
    assert [s["plan_cache_mode"] for s in sent] == ["force_generic_plan", "force_custom_plan"]
    assert known(state, search, tenant) is False
    assert outcome(result) == planned(engine, tenant, search)
    assert result.candidate_count == ROWS


def test_the_choice_learned_is_the_planners_own_for_the_workspace(
    corpus: tuple[Tenant, list[float]], engine: Engine, state: SearchState
) -> None:
    tenant, vector = corpus
    search = compiled(BROAD, tenant.id, vector=vector)
    with workspace_transaction(engine, tenant.id) as conn:
        prepare_transaction(conn, search)
        plan = "\n".join(conn.execute(Explain(search.statement), search.params).scalars())
    with scopes_sent(engine) as sent:
        result = alone(state, tenant, search)
        again = alone(state, tenant, search)
    reads = "records_embedding" in plan
    assert known(state, search, tenant) is reads
    assert [s.get("explain", False) for s in sent] == [True, False, False]  # asked once, then remembered
    pinned = {True: "force_generic_plan", False: "force_custom_plan"}[reads]
    assert [s["plan_cache_mode"] for s in sent[1:]] == [pinned, pinned]
    assert outcome(result) == outcome(again) == planned(engine, tenant, search)


@pytest.mark.parametrize(
    "scope",
    [{"entities": ["e3"]}, {"occurred_after": "2020-01-01T00:00:00Z"}],
    ids=["entity", "time-bound"],
)
def test_a_scope_whose_plan_depends_on_its_values_is_planned_for_each_request(
    corpus: tuple[Tenant, list[float]], prefers_hnsw: SearchState, scope: dict[str, Any]
) -> None:
    tenant, vector = corpus
    search = compiled({**BROAD, "scope": scope}, tenant.id, vector=vector)
    with scopes_sent(prefers_hnsw.engine) as sent:
        alone(prefers_hnsw, tenant, search)
    assert [s["plan_cache_mode"] for s in sent] == ["force_custom_plan"] and "explain" not in sent[0]


def test_a_hybrid_search_pins_its_first_statement_and_plans_its_fallbacks(
    corpus: tuple[Tenant, list[float]], engine: Engine, prefers_hnsw: SearchState
) -> None:
    """The first statement's shortened lists come from the pinned plan; a fallback (full lists,
    or every keyword match) reads other paths, so PostgreSQL plans it for the request."""
    tenant, vector = corpus
    words = ("refund outage", "budget", "x y")
    searches = [compiled({**BROAD_HYBRID, "q": q}, tenant.id, vector=vector) for q in words]
    assert all(search.learns_plan and search.fallbacks for search in searches)
    assert len({search.statement for search in searches}) == 1  # the words are values of one template
    with scopes_sent(prefers_hnsw.engine) as sent:
        results = [outcome(alone(prefers_hnsw, tenant, search)) for search in searches * 2]
    generic = generic_plans(prefers_hnsw.engine, "hybrid_candidates")
    assert sent[0]["plan_cache_mode"] == "force_custom_plan" and sent[0]["explain"]  # learned once
    statements = sent[1:]
    pinned = [s for s in statements if s["plan_cache_mode"] == "force_generic_plan"]
    assert len(pinned) == 6 and all(s["enable_sort"] == "off" for s in pinned)  # each search's first
    fallbacks = [s for s in statements if s not in pinned]
    assert fallbacks
    assert all(s["plan_cache_mode"] == "force_custom_plan" and "enable_sort" not in s for s in fallbacks)
    assert generic >= 1
    assert results == [planned(engine, tenant, search) for search in searches] * 2
    assert all(len(hits) == 20 for hits, *_ in results)


def test_searches_sharing_a_transaction_pin_their_first_statements_too(
    corpus: tuple[Tenant, list[float]], engine: Engine, prefers_hnsw: SearchState
) -> None:
    """A fused request's sources share one snapshot's transactions; each statement's settings are
    its own (`db.run_statement`), so a pinned one's end with it."""
    tenant, vector = corpus
    searches = [compiled(BROAD_HYBRID, tenant.id, vector=vector), compiled(BROAD, tenant.id, vector=vector)]
    with scopes_sent(prefers_hnsw.engine) as sent:
        # one at a time: both in the lead's transaction, one after the other
        runs = [run_searches(prefers_hnsw, tenant.id, searches, 1, 10_000) for _ in range(2)]
    assert [known(prefers_hnsw, search, tenant) for search in searches] == [True, True]
    stated = [s for s in sent if "plan_cache_mode" in s]
    pinned = [s for s in stated if s["plan_cache_mode"] == "force_generic_plan"]
    assert len(pinned) == 4 and all(s["enable_sort"] == "off" for s in pinned)  # both searches, twice
    planned_here = [s for s in stated if s not in pinned]
    assert len([s for s in planned_here if s.get("explain")]) == 2  # each learned once
    assert all("enable_sort" not in s for s in planned_here)
    expected = [planned(engine, tenant, search) for search in searches]
    assert [[outcome(result) for result in run] for run in runs] == [expected, expected]
