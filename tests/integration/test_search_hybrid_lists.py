"""A hybrid search first proposes from shortened semantic and keyword lists
(`compile.HYBRID_LIST_SHARE`); when the interleaving reached past one, the statement reports
`short` and the search runs with full-length lists. Either way the results must be those of
full-length lists."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest
import sqlalchemy as sa
from sqlalchemy.engine import Engine

from memseek.db import workspace_transaction
from memseek.search.execute import prepare_transaction
from memseek.search.execute import run_compiled
from tests.conftest import Tenant
from tests.integration import test_search_paths as paths
from tests.integration.searchdata import compiled
from tests.integration.searchdata import hours_ago

corpus = paths.corpus
"""The access-path tests' 240 random records (module-scoped: set up again for this module)."""


def first_and_full(
    engine: Engine, tenant: Tenant, body: dict[str, Any], vector: list[float]
) -> tuple[bool, Any, Any]:
    """Whether the first try reported `short`, then the outcome of the search as it runs and
    that of the same search started at full-length lists (exact scans: no HNSW approximation)."""
    search = compiled(body, tenant.id, vector=vector)
    full = replace(
        search, statement=search.fallbacks[0](), list_size=search.candidates, fallbacks=search.fallbacks[1:]
    )
    with workspace_transaction(engine, tenant.id) as conn:
        for name, value in paths.PATHS["exact"].items():
            conn.execute(sa.text("SELECT set_config(:n, :v, true)"), {"n": name, "v": value})
        prepare_transaction(conn, search)
        short = conn.execute(search.statement, search.params).mappings().first()["short"]
        ran = [run_compiled(conn, s) for s in (search, full)]
    found, expected = ([(h.id, h.value) for h in r.hits] + [r.candidate_count, r.low, r.high] for r in ran)
    return short, found, expected


EVERY_ENTITY = {"entities": paths.ALL_ENTITIES}
"""The whole corpus, read exactly (an entity scope): no HNSW, no postings bound."""
HYBRID_BODIES = [
    pytest.param({"q": "refund outage", "k": 20, "scope": EVERY_ENTITY}, id="default-candidates"),
    pytest.param({"q": "pricing", "k": 5, "params": {"candidates": 60}, "scope": EVERY_ENTITY}, id="sixty"),
    pytest.param(
        {"q": "zebra", "k": 5, "params": {"candidates": 30}, "scope": EVERY_ENTITY}, id="no-keyword"
    ),
    pytest.param(
        {"q": "churn", "k": 3, "params": {"candidates": 7}, "scope": {"entities": ["e1", "e2"]}}, id="seven"
    ),
    pytest.param(
        {"q": "budget", "k": 5, "params": {"candidates": 40}, "scope": {"entities": ["e1", "e2"]}},
        id="two-entities",
    ),
    pytest.param(
        {
            "q": "invoice contract",
            "k": 10,
            "params": {"candidates": 50},
            "scope": {**EVERY_ENTITY, "occurred_after": hours_ago(300).isoformat()},
        },
        id="since",
    ),
]


@pytest.mark.parametrize("body", HYBRID_BODIES)
def test_a_hybrid_search_finds_what_full_length_lists_find(
    corpus: tuple[Tenant, list[float]], engine: Engine, body: dict[str, Any]
) -> None:
    """The first try's shortened semantic and keyword lists, with the `short` fallback, give
    exactly the hits, values, candidate count and pool bounds of full-length lists where lists
    are exact. (In a broad scope the semantic list is HNSW's and the keyword list the best by
    postings, approximations whose depth follows the list's length: there the cost is measured
    by the quality benchmarks, not tested.)"""
    tenant, vector = corpus
    _, found, expected = first_and_full(engine, tenant, {"mode": "hybrid", **body}, vector)
    assert found == expected and found[0]


@pytest.mark.parametrize(
    ("body", "short"),
    [
        # 60 candidates: every list's first 30 positions already hold 60 different records.
        ({"q": "pricing", "k": 5, "params": {"candidates": 60}, "scope": EVERY_ENTITY}, False),
        # 30 candidates for k 20: the bounded keyword list of 15 rows is full, not short of 20.
        ({"q": "refund", "k": 20, "params": {"candidates": 30}}, False),
        # 200 of 240 records: the first 100 positions of three lists overlap too much to fill 200.
        ({"q": "refund outage", "k": 20, "scope": EVERY_ENTITY}, True),
        # An entity's 20 records: the newest-first list holds all of them, nothing more to find.
        ({"q": "budget", "k": 5, "params": {"candidates": 30}, "scope": {"entities": ["e1"]}}, False),
    ],
)
def test_the_first_try_is_short_only_when_the_interleaving_went_past_a_cut_list(
    corpus: tuple[Tenant, list[float]], engine: Engine, body: dict[str, Any], short: bool
) -> None:
    tenant, vector = corpus
    assert first_and_full(engine, tenant, {"mode": "hybrid", **body}, vector)[0] is short


def test_ef_search_follows_a_hybrid_first_tries_list(
    corpus: tuple[Tenant, list[float]], engine: Engine
) -> None:
    tenant, vector = corpus
    body = {"mode": "hybrid", "q": "x", "params": {"candidates": 321}}
    search = compiled(body, tenant.id, vector=vector)
    assert (search.list_size, search.candidates, len(search.fallbacks)) == (161, 321, 2)
    with workspace_transaction(engine, tenant.id) as conn:
        prepare_transaction(conn, search)
        assert conn.execute(sa.text("SHOW hnsw.ef_search")).scalar() == "161"
