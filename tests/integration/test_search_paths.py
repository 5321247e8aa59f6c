"""Results do not depend on the access path the planner picks (HNSW, GIN, B-tree or exact scan)."""

from __future__ import annotations

import random
from collections.abc import Iterator
from typing import Any

import pytest
import sqlalchemy as sa
from sqlalchemy.engine import Connection
from sqlalchemy.engine import Engine

from memseek.db import workspace_transaction
from memseek.search.compile import Explain
from memseek.search.execute import prepare_transaction
from memseek.search.execute import run_compiled
from tests.conftest import Tenant
from tests.conftest import make_tenant
from tests.integration.searchdata import Rec
from tests.integration.searchdata import compiled
from tests.integration.searchdata import hours_ago
from tests.integration.searchdata import insert
from tests.integration.searchdata import unit

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


@pytest.fixture(scope="module")
def corpus(engine: Engine) -> Iterator[tuple[Tenant, list[float]]]:
    """240 records over 12 entities with random vectors and texts (module-scoped: read-only)."""
    tenant = make_tenant(engine, "paths")
    rng = random.Random(7)
    recs = [
        Rec(
            text=" ".join(rng.choices(WORDS, k=6)),
            entity=f"e{i % 12}",
            occurred_at=hours_ago(rng.randint(0, 500)),
            embedding=unit(*(rng.gauss(0, 1) for _ in range(16))),
            scores={"importance": rng.randint(1, 10)},
        )
        for i in range(ROWS)
    ]
    with engine.begin() as conn:
        insert(conn, tenant.id, *recs)
        conn.execute(sa.text("ANALYZE records"))
    yield tenant, unit(*(rng.gauss(0, 1) for _ in range(16)))
    with engine.begin() as conn:
        conn.execute(sa.text("TRUNCATE processing_queue, records, api_keys, workspaces CASCADE"))


def run_on(conn: Connection, path: str, body: dict[str, Any], tenant: Tenant, vector: list[float]) -> Any:
    for name, value in PATHS[path].items():
        conn.execute(sa.text("SELECT set_config(:n, :v, true)"), {"n": name, "v": value})
    search = compiled(body, tenant.id, vector=vector)
    plan = "\n".join(conn.execute(Explain(search.statement)).scalars())
    result = run_compiled(conn, search)
    return plan, [(h.id, round(h.value or 0, 9)) for h in result.hits], result.candidate_count


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
        assert "records_embedding" in plans["indexes"]  # the HNSW index really served a path
    results = {path: outcome[1:] for path, outcome in outcomes.items()}
    assert results["planner"] == results["indexes"] == results["exact"]
    assert results["planner"][0]  # not vacuous


def test_selective_scope_still_fills_k_through_hnsw(
    corpus: tuple[Tenant, list[float]], engine: Engine
) -> None:
    """ef_search follows the candidate count and the scan iterates past filtered-out rows."""
    tenant, vector = corpus
    body = {"mode": "vector", "q": "x", "k": 20, "scope": {"entities": ["e5"]}}
    with workspace_transaction(engine, tenant.id) as conn:
        _, hits, proposed = run_on(conn, "indexes", body, tenant, vector)
    assert len(hits) == 20 and proposed == ROWS // 12


def test_ef_search_follows_the_candidate_count(corpus: tuple[Tenant, list[float]], engine: Engine) -> None:
    tenant, vector = corpus
    search = compiled({"mode": "vector", "q": "x", "params": {"candidates": 321}}, tenant.id, vector=vector)
    with workspace_transaction(engine, tenant.id) as conn:
        prepare_transaction(conn, search)
        assert conn.execute(sa.text("SHOW hnsw.ef_search")).scalar() == "321"
        assert conn.execute(sa.text("SHOW hnsw.iterative_scan")).scalar() == "relaxed_order"


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
    assert "record_postings" in broad_plan and "record_postings" not in plan
    assert broad == exact and broad_count == exact_count


def postings(engine: Engine, record: Any) -> dict[str, float]:
    query = sa.text("SELECT lexeme, impact FROM record_postings WHERE record_id = :id")
    with engine.connect() as conn:
        return {row.lexeme: row.impact for row in conn.execute(query, {"id": record})}


def test_postings_follow_the_records_table(engine: Engine, db: Engine, tenant: Tenant) -> None:
    with db.begin() as conn:
        (record,) = insert(conn, tenant.id, Rec(text="refund refund refund outage"))
    first = postings(db, record)
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
