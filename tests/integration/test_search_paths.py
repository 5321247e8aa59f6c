"""Results do not depend on the access path the planner picks (HNSW, GIN, B-tree or exact scan),
nor on whether a statement template was built for this request or reused from an earlier one."""

from __future__ import annotations

import random
from collections.abc import Iterator
from collections.abc import Sequence
from dataclasses import replace
from datetime import datetime
from typing import Any
from uuid import UUID

import pytest
import sqlalchemy as sa
from sqlalchemy.engine import Connection
from sqlalchemy.engine import Engine

from memseek.db import scope_settings
from memseek.db import set_local
from memseek.db import workspace_transaction
from memseek.schema import records
from memseek.search.compile import CompiledSearch
from memseek.search.compile import Explain
from memseek.search.compile import Inputs
from memseek.search.compile import build_statement
from memseek.search.compile import candidates
from memseek.search.compile import compile_search
from memseek.search.compile import pool
from memseek.search.compile.candidates import Proposal
from memseek.search.compile.keywords import Keywords
from memseek.search.compile.query import Query
from memseek.search.compile.rank import Reading
from memseek.search.execute import planner_settings
from memseek.search.execute import runner
from memseek.search.execute import with_fallbacks
from memseek.write.touch import touch
from tests.conftest import Tenant
from tests.conftest import make_tenant
from tests.integration.searchdata import NOW
from tests.integration.searchdata import TEXT_OUTPUT
from tests.integration.searchdata import Rec
from tests.integration.searchdata import compiled
from tests.integration.searchdata import execute_compiled
from tests.integration.searchdata import hours_ago
from tests.integration.searchdata import insert
from tests.integration.searchdata import pgvector
from tests.integration.searchdata import plans
from tests.integration.searchdata import prepare_transaction
from tests.integration.searchdata import run_compiled
from tests.integration.searchdata import unit


def measure_in_pool(patch: pytest.MonkeyPatch) -> None:
    """Statements built under `patch` read `records` again in the pool and measure every signal
    there: no list carries columns, and no measured value or touch scan is reused."""

    def measured_in_pool(query: Query, keywords: Keywords | None, proposal: Proposal) -> Reading:
        return Reading(query, keywords, records, proposal.cte)

    patch.setattr(candidates, "carried_columns", lambda plan: ())
    patch.setattr(pool, "reading", measured_in_pool)


WORDS = [
    "budget",
    "meeting",
    "renewal",
    "invoice",
    "outage",
    "refund",
    "upgrade",
    "contract",
    "churn",
    "pricing",
]
PATHS = {
    "planner": {},
    "indexes": {"enable_seqscan": "off", "enable_sort": "off"},
    "exact": {"enable_indexscan": "off", "enable_bitmapscan": "off"},
}
ROWS = 240


def random_records(
    rng: random.Random,
    count: int,
    entities: int,
    hours: int,
    sparse_scores: bool = False,
    words: Sequence[str] = WORDS,
) -> list[Rec]:
    """Records of six random `words`, with entities, times within `hours`, vectors and importance
    scores (every third without one when `sparse_scores`)."""
    return [
        Rec(
            text=" ".join(rng.choices(words, k=6)),
            entity=f"e{i % entities}",
            occurred_at=hours_ago(rng.randint(0, hours)),
            created_at=hours_ago(rng.randint(0, hours)),
            embedding=unit(*(rng.gauss(0, 1) for _ in range(16))),
            scores={} if sparse_scores and i % 3 == 0 else {"importance": rng.randint(1, 10)},
        )
        for i in range(count)
    ]


def random_corpus(
    engine: Engine, name: str, seed: int, words: Sequence[str] = WORDS
) -> Iterator[tuple[Tenant, list[float]]]:
    """A module fixture's body: `ROWS` random records over 12 entities in a new workspace, and a
    random query vector; everything is emptied afterwards."""
    tenant = make_tenant(engine, name)
    rng = random.Random(seed)
    with engine.begin() as conn:
        insert(conn, tenant.id, *random_records(rng, ROWS, entities=12, hours=500, words=words))
        conn.execute(sa.text("ANALYZE records"))
    yield tenant, unit(*(rng.gauss(0, 1) for _ in range(16)))
    with engine.begin() as conn:
        conn.execute(sa.text("TRUNCATE processing_queue, records, api_keys, workspaces CASCADE"))


@pytest.fixture(scope="module")
def corpus(engine: Engine) -> Iterator[tuple[Tenant, list[float]]]:
    """240 records over 12 entities with random vectors and texts (module-scoped: read-only)."""
    yield from random_corpus(engine, "paths", 7)


def run_on(conn: Connection, path: str, body: dict[str, Any], tenant: Tenant, vector: list[float]) -> Any:
    for name, value in PATHS[path].items():
        conn.execute(sa.text("SELECT set_config(:n, :v, true)"), {"n": name, "v": value})
    search = compiled(body, tenant.id, vector=vector)
    plan = "\n".join(conn.execute(Explain(search.statement), search.params).scalars())
    result = run_compiled(conn, search)
    return plan, [(h.id, round(h.value or 0, 9)) for h in result.hits], result.candidate_count


def outcomes(engine: Engine, tenant: Tenant, *searches: CompiledSearch) -> list[tuple[Any, ...]]:
    """Each search's hits with their values, pool bounds and counts (one transaction)."""
    with workspace_transaction(engine, tenant.id) as conn:
        results = [run_compiled(conn, search) for search in searches]
    return [
        ([(h.id, h.value) for h in o.hits], o.low, o.high, o.candidate_count, o.ranked_count) for o in results
    ]


BODIES = [
    pytest.param({"mode": "vector", "q": "x", "k": 20}, id="vector"),
    pytest.param({"mode": "vector", "q": "x", "k": 10, "params": {"candidates": 60}}, id="vector-narrow"),
    pytest.param({"mode": "vector", "q": "x", "k": 5, "scope": {"entities": ["e3"]}}, id="vector-one-entity"),
    pytest.param({"mode": "text", "q": "refund outage", "k": 20}, id="text"),
    pytest.param({"mode": "hybrid", "q": "refund outage", "k": 20}, id="hybrid"),
    pytest.param(
        {"mode": "hybrid", "q": "pricing", "k": 5, "scope": {"entities": ["e1", "e2"]}}, id="hybrid-selective"
    ),
    pytest.param({"mode": "recent", "k": 20, "where": {}}, id="recent"),
    pytest.param(
        {"mode": "hybrid", "q": "refund", "k": 10, "scope": {"occurred_after": hours_ago(200).isoformat()}},
        id="hybrid-since",
    ),
]


@pytest.mark.parametrize("body", BODIES)
def test_every_access_path_gives_the_same_results(
    corpus: tuple[Tenant, list[float]], engine: Engine, body: dict[str, Any]
) -> None:
    tenant, vector = corpus
    outcomes = {}
    for path in PATHS:
        with workspace_transaction(engine, tenant.id) as conn:
            outcomes[path] = run_on(conn, path, body, tenant, vector)
    plans = {path: outcome[0] for path, outcome in outcomes.items()}
    assert "records_embedding" not in plans["exact"]
    if body["mode"] in ("vector", "hybrid"):
        # Broad scopes: the HNSW index really served a path. Entity scopes are always read exactly.
        entity_scope = "entities" in body.get("scope", {})
        assert ("records_embedding" in plans["indexes"]) is not entity_scope
    results = {path: outcome[1:] for path, outcome in outcomes.items()}
    assert results["planner"] == results["indexes"] == results["exact"]
    assert results["planner"][0]  # not vacuous


def test_selective_scope_still_fills_k_through_hnsw(
    corpus: tuple[Tenant, list[float]], engine: Engine
) -> None:
    """ef_search follows the candidate count and the scan iterates past filtered-out rows."""
    tenant, vector = corpus
    after = hours_ago(80)
    body = {"mode": "vector", "q": "x", "k": 20, "scope": {"occurred_after": after.isoformat()}}
    with workspace_transaction(engine, tenant.id) as conn:
        plan, hits, proposed = run_on(conn, "indexes", body, tenant, vector)
        recent = sa.text("SELECT count(*) FROM records WHERE workspace_id = :ws AND occurred_at > :after")
        in_scope = conn.execute(recent, {"ws": tenant.id, "after": after}).scalar()
    assert "records_embedding" in plan
    assert 20 < in_scope < ROWS // 2 and len(hits) == 20 and proposed == in_scope


def test_an_entity_scope_is_read_exactly(corpus: tuple[Tenant, list[float]], engine: Engine) -> None:
    """Whatever the planner would prefer, an entity scope never proposes through HNSW."""
    tenant, vector = corpus
    body = {"mode": "vector", "q": "x", "k": 20, "scope": {"entities": ["e5"]}}
    with workspace_transaction(engine, tenant.id) as conn:
        plan, hits, proposed = run_on(conn, "indexes", body, tenant, vector)
    assert "records_embedding" not in plan
    assert len(hits) == 20 and proposed == ROWS // 12


def test_ef_search_follows_the_candidate_count(corpus: tuple[Tenant, list[float]], engine: Engine) -> None:
    tenant, vector = corpus
    search = compiled({"mode": "vector", "q": "x", "params": {"candidates": 321}}, tenant.id, vector=vector)
    with workspace_transaction(engine, tenant.id) as conn:
        prepare_transaction(conn, search)
        assert conn.execute(sa.text("SHOW hnsw.ef_search")).scalar() == "402"  # 321 × 1.25, rounded up
        assert conn.execute(sa.text("SHOW hnsw.iterative_scan")).scalar() == "relaxed_order"
        assert conn.execute(sa.text("SHOW jit")).scalar() == "off"


@pytest.mark.parametrize(
    "body",
    [
        *BODIES,
        pytest.param(
            {"mode": "vector", "q": "x", "k": 10, "rank": ["sum", [["similarity"], ["score", "importance"]]]},
            id="vector-raw-similarity",
        ),
        pytest.param(
            {"mode": "hybrid", "q": "refund", "k": 30, "rank": ["similarity"]}, id="hybrid-similarity"
        ),
        pytest.param(
            {"mode": "hybrid", "q": "refund budget", "k": 30, "rank": ["text_match"]}, id="hybrid-text"
        ),
        pytest.param(
            {"mode": "text", "q": "invoice churn", "k": 10, "rank": ["sum", [["text_match"], ["const", 1]]]},
            id="text-raw-match",
        ),
        pytest.param(
            {"mode": "text", "q": "invoice churn", "k": 10, "scope": {"entities": ["e4"]}},
            id="text-one-entity",
        ),
    ],
)
def test_signals_reused_from_the_candidate_lists_equal_the_pools_own(
    corpus: tuple[Tenant, list[float]], engine: Engine, body: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The pool takes a proposed row's distance or keyword match from the list that proposed it
    instead of measuring again: every value, bound and count must be what measuring in the pool
    gives."""
    tenant, vector = corpus
    (plan,) = plans(body)
    inputs = Inputs(tenant.id, NOW, vector, "test-model")
    reusing = compiled(body, tenant.id, vector=vector)
    with monkeypatch.context() as patch:
        measure_in_pool(patch)
        measuring = replace(reusing, statement=build_statement(plan, inputs, TEXT_OUTPUT, "test"))
    sql = [str(search.statement) for search in (reusing, measuring)]
    rank = str(body.get("rank", ""))
    uses = {
        # A hybrid pool reads what its lists measured from the interleaving, not from each list.
        "coalesce(hybrid_candidates.distance": body["mode"] == "hybrid" and "text_match" not in rank,
        # A single list's pool is its list: its own measure is the signal, and the column it
        # would be measured from again (embedding, tsv) is not carried.
        "- vector_candidates.distance": body["mode"] == "vector",
        "text_candidates.match AS sig_": body["mode"] == "text",
        "coalesce(hybrid_candidates.match": body["mode"] == "hybrid" and "similarity" not in rank,
        # The default vector and text formulas age last_accessed: one scan reads every touch.
        "touches ON touches.record_id": body["mode"] in ("vector", "text") and "rank" not in body,
    }
    assert "vector_candidates_raw.embedding" not in sql[0]
    assert "text_candidates_raw.tsv" not in sql[0]
    for reuse, expected in uses.items():
        assert (reuse in sql[0]) is expected, reuse
        assert reuse not in sql[1]
    results = outcomes(engine, tenant, reusing, measuring)
    assert results[0] == results[1] and results[0][0]


# --- statement templates -------------------------------------------------------------------------------


def _another_request(body: dict[str, Any]) -> dict[str, Any]:
    """The same shape with other request values: other words, entities, time bound."""
    other = {**body, "q": "contract upgrade"} if "q" in body else dict(body)
    scope = body.get("scope", {})
    if "entities" in scope:
        other["scope"] = {**scope, "entities": ["e7", "e8"]}
    if "occurred_after" in scope:
        other["scope"] = {**scope, "occurred_after": hours_ago(100).isoformat()}
    return other


@pytest.mark.parametrize("body", BODIES)
def test_a_reused_template_gives_the_results_of_a_fresh_statement(
    corpus: tuple[Tenant, list[float]], engine: Engine, body: dict[str, Any]
) -> None:
    tenant, vector = corpus
    other_vector = unit(*reversed(vector[:16]))
    first = compiled(body, tenant.id, vector=vector)
    other = _another_request(body)
    reused = compiled(other, tenant.id, vector=other_vector)
    assert reused.statement is first.statement
    (plan,) = plans(other)
    inputs = Inputs(tenant.id, NOW, other_vector, "test-model")
    fresh = replace(reused, statement=build_statement(plan, inputs, TEXT_OUTPUT, "test"))
    with workspace_transaction(engine, tenant.id) as conn:
        outcomes = [run_compiled(conn, search) for search in (reused, fresh, first)]
    ranked = [[(h.id, h.value) for h in outcome.hits] for outcome in outcomes]
    assert ranked[0] == ranked[1] and ranked[0]
    assert outcomes[0].candidate_count == outcomes[1].candidate_count
    if body["mode"] != "recent" or "scope" in body:
        assert ranked[0] != ranked[2]  # the request values really changed the outcome


def test_a_template_never_runs_without_its_request_values(
    corpus: tuple[Tenant, list[float]], engine: Engine
) -> None:
    tenant, vector = corpus
    search = compiled({"mode": "hybrid", "q": "budget", "k": 5}, tenant.id, vector=vector)
    with workspace_transaction(engine, tenant.id) as conn, pytest.raises(sa.exc.StatementError):
        conn.execute(search.statement)


PREPARED_RUNS = 12
"""psycopg prepares a statement on its 6th execution on a connection, and PostgreSQL weighs a
generic plan after 5 custom ones: 12 runs reach the generic plan if it is ever chosen."""


def _prepared_runs(
    engine: Engine, tenant: Tenant, search: CompiledSearch, plans: str | None
) -> tuple[list[Any], tuple[int, int]]:
    """`PREPARED_RUNS` runs of `search` on one connection (`plans`: a forced plan_cache_mode),
    each outcome with its hits and values; then the plans PostgreSQL made for its statement."""
    runs = []
    with engine.connect() as conn:
        conn.exec_driver_sql("DEALLOCATE ALL")  # the pooled connection's earlier tests' statements
        conn.commit()
        for _ in range(PREPARED_RUNS):
            with conn.begin():
                set_local(conn, scope_settings(tenant.id))
                prepare_transaction(conn, search)
                if plans is not None:
                    conn.execute(sa.text("SELECT set_config('plan_cache_mode', :v, true)"), {"v": plans})
                result = execute_compiled(conn, search)
            runs.append(([(h.id, h.value) for h in result.hits], result.candidate_count))
        made = conn.execute(
            sa.text(
                "SELECT generic_plans, custom_plans FROM pg_prepared_statements WHERE statement LIKE :tag"
            ),
            {"tag": "%/* memseek test */%"},
        ).one()
    return runs, (made.generic_plans, made.custom_plans)


def assert_keeps_a_generic_plan(engine: Engine, tenant: Tenant, search: CompiledSearch) -> None:
    """`search` may keep a generic plan, finds on one what it finds on a plan made for the
    request, and PostgreSQL does take the generic plan."""
    assert search.reuses_plan
    custom, _ = _prepared_runs(engine, tenant, search, "force_custom_plan")
    generic, (generic_made, _) = _prepared_runs(engine, tenant, search, "force_generic_plan")
    _, made = _prepared_runs(engine, tenant, search, None)
    assert custom == generic and len(set(map(str, custom))) == 1 and custom[0][0]
    assert generic_made > 0 and made[0] > 0  # psycopg prepared it, and auto chose the generic plan


@pytest.mark.parametrize(
    "scope",
    [
        pytest.param({"entities": ["e3"]}, id="one-entity"),
        pytest.param({"entities": ["e4"], "occurred_after": hours_ago(200).isoformat()}, id="since"),
        pytest.param({"entities": ["e5"], "status": "all", "versions": "all"}, id="every-status"),
    ],
)
def test_a_newest_first_list_of_one_entity_keeps_a_generic_plan(
    corpus: tuple[Tenant, list[float]], engine: Engine, scope: dict[str, Any]
) -> None:
    """Such a statement may be planned once per connection (`compile.reuses_plan`): what it
    finds does not change, and PostgreSQL does take the generic plan here."""
    tenant, vector = corpus
    search = compiled({"mode": "recent", "k": 10, "scope": {"collections": ["main"], **scope}}, tenant.id)
    assert_keeps_a_generic_plan(engine, tenant, search)


@pytest.mark.parametrize(
    "body",
    [
        pytest.param({"mode": "text", "q": "refund outage", "k": 10}, id="text"),
        pytest.param(
            {"mode": "text", "q": "refund", "k": 10, "scope": {"occurred_after": hours_ago(200).isoformat()}},
            id="since",
        ),
        pytest.param({"mode": "text", "q": "refund outage", "k": 3, "rank": ["text_match"]}, id="text-match"),
    ],
)
def test_a_broad_text_search_keeps_a_generic_plan(
    corpus: tuple[Tenant, list[float]], engine: Engine, body: dict[str, Any]
) -> None:
    """Its keyword list walks a bounded number of postings whatever the words (`compile.reuses_plan`):
    what it finds on a generic plan is what a plan made for the request finds, and PostgreSQL
    does take the generic plan."""
    tenant, vector = corpus
    search = compiled(body, tenant.id, vector=vector)
    assert_keeps_a_generic_plan(engine, tenant, search)


@pytest.mark.parametrize(
    "body",
    [
        pytest.param(
            {"mode": "text", "q": "refund outage", "k": 10, "scope": {"entities": ["e3"]}}, id="text-entity"
        ),
        pytest.param(
            {"mode": "recent", "k": 10, "scope": {"entities": ["e3", "e4"]}}, id="recent-two-entities"
        ),
    ],
)
def test_other_shapes_are_planned_for_each_request(
    corpus: tuple[Tenant, list[float]], engine: Engine, body: dict[str, Any]
) -> None:
    tenant, vector = corpus
    search = compiled(body, tenant.id, vector=vector)
    _, (generic_made, custom_made) = _prepared_runs(engine, tenant, search, None)
    assert generic_made == 0 and custom_made >= PREPARED_RUNS - 5


# --- lexeme postings (bounded keyword candidates) ------------------------------------------------------

ALL_ENTITIES = [f"e{i}" for i in range(12)]


@pytest.mark.parametrize(
    "body",
    [
        pytest.param({"mode": "text", "q": "refund outage budget", "k": 30}, id="text"),
        pytest.param({"mode": "hybrid", "q": "pricing churn", "k": 30}, id="hybrid"),
    ],
)
def test_postings_propose_what_the_exact_path_proposes(
    corpus: tuple[Tenant, list[float]], engine: Engine, body: dict[str, Any]
) -> None:
    """Naming every entity switches to the exact path. While each query lexeme has at most
    `candidates` postings (small data), both paths must agree exactly."""
    tenant, vector = corpus
    with workspace_transaction(engine, tenant.id) as conn:
        broad_plan, broad, broad_count = run_on(conn, "planner", body, tenant, vector)
        exact_body = {**body, "scope": {"entities": ALL_ENTITIES}}
        plan, exact, exact_count = run_on(conn, "planner", exact_body, tenant, vector)
    assert "CTE text_postings" in broad_plan and "text_postings" not in plan
    assert broad == exact and broad_count == exact_count


def postings(engine: Engine, record: Any) -> dict[str, float]:
    query = sa.text("SELECT lexeme, impact FROM record_postings WHERE record_id = :id")
    with engine.connect() as conn:
        return {row.lexeme: row.impact for row in conn.execute(query, {"id": record})}


def test_postings_follow_the_records_table(engine: Engine, db: Engine, tenant: Tenant) -> None:
    with db.begin() as conn:
        record, neighbour = insert(
            conn, tenant.id, Rec(text="refund refund refund outage"), Rec(text="refund")
        )
    first, theirs = postings(db, record), postings(db, neighbour)
    assert set(first) == {"refund", "outag"} and first["refund"] > first["outag"]
    with db.begin() as conn:
        conn.execute(sa.text("UPDATE records SET last_accessed = now() WHERE id = :id"), {"id": record})
        assert postings(db, record) == first  # an update that keeps tsv leaves postings alone
        conn.execute(
            sa.text("UPDATE records SET tsv = to_tsvector('english', 'pricing') WHERE id = :id"),
            {"id": record},
        )
    assert set(postings(db, record)) == {"price"}
    with db.begin() as conn:
        conn.execute(sa.text("DELETE FROM records WHERE id = :id"), {"id": record})
    assert postings(db, record) == {}
    assert postings(db, neighbour) == theirs == {"refund": theirs["refund"]}  # same lexeme, kept


def test_postings_have_one_index_over_bytewise_lexemes(db: Engine) -> None:
    """sql/0012_postings_key.sql: no primary key beside the top index, lexemes in collation "C"."""
    with db.connect() as conn:
        indexes = conn.execute(
            sa.text("SELECT indexname FROM pg_indexes WHERE tablename = 'record_postings'")
        )
        collation = conn.execute(
            sa.text(
                "SELECT collname FROM pg_attribute JOIN pg_collation c ON c.oid = attcollation "
                "WHERE attrelid = 'record_postings'::regclass AND attname = 'lexeme'"
            )
        )
        assert indexes.scalars().all() == ["record_postings_top"]
        assert collation.scalar_one() == "C"


@pytest.mark.parametrize("mode", ["text", "hybrid"])
def test_a_short_bounded_keyword_list_runs_the_exact_statement(db: Engine, tenant: Tenant, mode: str) -> None:
    """Out-of-scope records hold every best posting of `refund`: the bounded list keeps none of
    them, the statement reports `short`, and the search runs its exact statement (the last
    fallback), which finds the scope's own matches."""
    events = [
        Rec(text="refund refund refund refund", type="event", occurred_at=hours_ago(i)) for i in range(30)
    ]
    notes = [
        Rec(text=f"refund policy note {i}", type="note", occurred_at=hours_ago(100 + i)) for i in range(3)
    ]
    with db.begin() as conn:
        insert(conn, tenant.id, *events)
        wanted = set(insert(conn, tenant.id, *notes))
    body = {"mode": mode, "q": "refund", "k": 5, "scope": {"types": ["note"]}, "params": {"candidates": 10}}
    search = compiled(body, tenant.id, vector=unit(1.0))
    assert len(search.fallbacks) == {"text": 1, "hybrid": 2}[mode]
    with workspace_transaction(db, tenant.id) as conn:
        prepare_transaction(conn, search)
        (first, *_) = conn.execute(search.statement, search.params).mappings().all()
        found = run_compiled(conn, search)
        exact = run_compiled(conn, replace(search, statement=search.fallbacks[-1](), fallbacks=()))
    assert first["short"] is True
    assert {h.id for h in found.hits} == wanted
    assert [(h.id, h.value) for h in found.hits] == [(h.id, h.value) for h in exact.hits]
    assert found.candidate_count == exact.candidate_count


def test_a_filled_bounded_keyword_list_needs_no_second_statement(db: Engine, tenant: Tenant) -> None:
    with db.begin() as conn:
        insert(conn, tenant.id, *(Rec(text=f"refund request {i}") for i in range(12)))
    search = compiled({"mode": "text", "q": "refund", "k": 5, "params": {"candidates": 10}}, tenant.id)
    with workspace_transaction(db, tenant.id) as conn:
        prepare_transaction(conn, search)
        rows = conn.execute(search.statement, search.params).mappings().all()
    assert len(rows) == 5 and not rows[0]["short"]
    entity_scoped = compiled({"mode": "text", "q": "refund", "scope": {"entities": ["e1"]}}, tenant.id)
    assert entity_scoped.fallbacks == ()  # an entity scope always ranks its matches exactly


AGES = [["age_hours", "created_at"], ["age_hours", "last_accessed"], ["age_hours", "occurred_at"]]
SCORE = ["score", "importance"]
SIM, MATCH = ["similarity"], ["text_match"]
EVERY_SIGNAL = {"vector": [SIM], "text": [MATCH], "recent": []}
CARRYING_BODIES = [
    *(
        pytest.param({"mode": mode, "q": "refund outage", "k": 20}, id=mode)
        for mode in ("vector", "text", "recent")
    ),
    *(
        pytest.param({"mode": m, "q": "pricing", "k": 5, "scope": {"entities": ["e2"]}}, id=f"{m}-entity")
        for m in ("vector", "text")
    ),
    *(
        pytest.param(
            {"mode": mode, "q": "pricing churn", "k": 20, "rank": ["sum", [*signals, SCORE, *AGES]]},
            id=f"{mode}-every-signal",
        )
        for mode, signals in EVERY_SIGNAL.items()
    ),
]


@pytest.mark.parametrize("body", CARRYING_BODIES)
def test_a_pool_of_carried_columns_equals_one_that_reads_records_again(
    db: Engine, tenant: Tenant, body: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A vector, text or recent pool computes from the columns its one list carried and reads
    the candidates' touches in one scan: every value, bound and count must be what a pool that
    reads `records` again and looks each touch up by its key gives (as a hybrid pool does)."""
    rng = random.Random(11)
    with db.begin() as conn:
        ids = insert(conn, tenant.id, *random_records(rng, 60, entities=4, hours=300, sparse_scores=True))
        touches = [{"w": tenant.id, "r": i, "t": hours_ago(rng.randint(0, 50))} for i in ids[::2]]
        conn.execute(sa.text("INSERT INTO record_touches VALUES (:w, :r, :t)"), touches)
    vector = unit(*(rng.gauss(0, 1) for _ in range(16)))
    (plan,) = plans(body)
    carried = compiled(body, tenant.id, vector=vector)
    with monkeypatch.context() as patch:
        measure_in_pool(patch)  # and measures every signal, each touch looked up by its own key
        inputs = Inputs(tenant.id, NOW, vector, "test-model")
        reading = replace(carried, statement=build_statement(plan, inputs, TEXT_OUTPUT, "test"))
    joins = [str(search.statement).count("JOIN records ON") for search in (carried, reading)]
    assert joins == [1, 2]  # the final rows only, against the pool's read and the final rows
    results = outcomes(db, tenant, carried, reading)
    assert results[0] == results[1] and len(results[0][0]) >= 5


QUEUED_BODIES = [
    pytest.param({"mode": mode, "q": "pricing churn", "k": 20, "rank": ["sum", [*signals, AGES[1]]]}, id=mode)
    for mode, signals in {**EVERY_SIGNAL, "hybrid": [SIM, MATCH]}.items()
]


@pytest.mark.parametrize("body", QUEUED_BODIES)
def test_touches_still_queued_rank_as_written_ones(db: Engine, tenant: Tenant, body: dict[str, Any]) -> None:
    """A search ranks on this process's touches not yet written (`Inputs.queued_touches`): its
    values, pool bounds and each row's `last_accessed` are those of the same search once the
    touch writer has written them, and of one that finds them both queued and written (a touch
    committed while the search was being prepared)."""
    rng = random.Random(5)
    with db.begin() as conn:
        ids = insert(conn, tenant.id, *random_records(rng, 60, entities=4, hours=300))
        stored = [{"w": tenant.id, "r": i, "t": hours_ago(rng.randint(10, 50))} for i in ids[::2]]
        conn.execute(sa.text("INSERT INTO record_touches VALUES (:w, :r, :t)"), stored)
    queued = {i: hours_ago(rng.randint(0, 20)) for i in ids[::3]}  # some older than a stored touch
    vector = unit(*(rng.gauss(0, 1) for _ in range(16)))
    (plan,) = plans(body)

    def ranked(touches: dict[UUID, datetime]) -> list[tuple[Any, ...]]:
        inputs = Inputs(tenant.id, NOW, vector, "test-model", queued_touches=touches)
        with workspace_transaction(db, tenant.id) as conn:
            result = run_compiled(conn, compile_search(plan, inputs, TEXT_OUTPUT, "test"))
        rows = [(h.id, h.value, h.record["last_accessed"]) for h in result.hits]
        return [rows, result.low, result.high, result.candidate_count]

    unaware, before = ranked({}), ranked(queued)
    with workspace_transaction(db, tenant.id) as conn:
        for record_id, at in queued.items():
            touch(conn, tenant.id, [record_id], at)
    assert before == ranked({}) == ranked(queued)
    assert before != unaware and len(before[0]) >= 5


def test_a_vector_list_the_index_left_short_is_measured_exactly(engine: Engine) -> None:
    """An HNSW scan can stop before it reaches the scope's rows: here 200 nearer drafts fill its
    first pass (`hnsw.ef_search` 40) and `hnsw.max_scan_tuples` ends its iterations. The statement
    reports its list short, and the exact fallback (`Lists.EXACT_VECTORS`) finds the scope's rows;
    a scan let run finds them itself, and its list is not short."""
    tenant = make_tenant(engine, "short-vector-list")
    query = unit(1.0)
    drafts = [Rec(text="draft", status="draft", embedding=unit(1.0, i / 1000)) for i in range(200)]
    visible = [Rec(text=f"far {i}", embedding=unit(1.0, 1.0 + i)) for i in range(3)]
    with engine.begin() as conn:
        insert(conn, tenant.id, *drafts)
        wanted = insert(conn, tenant.id, *visible)
    body = {"mode": "vector", "q": "x", "k": 3, "params": {"candidates": 20}}
    search = compiled(body, tenant.id, vector=query)
    firsts, found = [], []
    try:
        for stop_after in ("1", "20000"):
            with workspace_transaction(engine, tenant.id) as conn:
                set_local(conn, {**PATHS["indexes"], "hnsw.max_scan_tuples": stop_after})
                run = runner(conn, search, planner_settings(pgvector(engine), search))
                firsts.append(run(search.statement, {}))
                found.append([hit.id for hit in with_fallbacks(search, run).hits])
    finally:
        with engine.begin() as conn:
            conn.execute(sa.delete(records).where(records.c.workspace_id == tenant.id))
    stopped, let_run = firsts
    assert stopped[0]["short"] and stopped[0]["id"] is None  # the index alone proposed none of them
    assert [row["id"] for row in let_run] == wanted and let_run[0]["short"] is False
    assert found == [wanted, wanted]
