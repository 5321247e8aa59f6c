"""A hybrid search in a broad scope first proposes from shortened semantic and keyword lists
(`compile.HYBRID_LIST_SHARE`); when the interleaving reached past one, the statement reports
`short` and the search runs with full-length lists. Either way the results must be those of
full-length lists where those lists are exact: here the vector lists are exact scans (HNSW
disabled) and no query lexeme has more postings than a list is long, so the bounded keyword
list is the exact one."""

from __future__ import annotations

from collections.abc import Iterator
from collections.abc import Mapping
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

import pytest
import sqlalchemy as sa
from sqlalchemy.engine import Engine
from sqlalchemy.sql.expression import Executable

from memseek.db import workspace_transaction
from memseek.search import execute
from tests.conftest import Tenant
from tests.integration import test_search_paths as paths
from tests.integration.searchdata import compiled
from tests.integration.searchdata import hours_ago
from tests.integration.searchdata import pgvector
from tests.integration.searchdata import prepare_transaction
from tests.integration.searchdata import run_compiled

STEMS = ("alpha", "bravo", "delta", "kilo", "lima", "oscar", "tango", "zulu")
WORDS = [
    f"{stem}{end}"
    for stem in STEMS
    for end in ("bird", "fish", "tree", "rock", "wind", "star", "moon", "leaf", "road", "ship")
]
"""80 words, 6 per record: each lexeme has about 18 postings among 240 records."""


@pytest.fixture(scope="module")
def corpus(engine: Engine) -> Iterator[tuple[Tenant, list[float]]]:
    """240 records of six of `WORDS` over 12 entities with random vectors (read-only)."""
    yield from paths.random_corpus(engine, "hybrid-lists", 11, WORDS)


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


HYBRID_BODIES = [
    pytest.param({"q": "alphabird deltafish", "k": 20}, id="default-candidates"),
    pytest.param({"q": "kilotree", "k": 5, "params": {"candidates": 60}}, id="sixty"),
    pytest.param({"q": "zebra", "k": 5, "params": {"candidates": 40}}, id="no-keyword"),
    pytest.param({"q": "zebra", "k": 3, "params": {"candidates": 7}}, id="seven"),
    pytest.param(
        {"q": "oscarwind tangostar", "k": 10, "params": {"candidates": 50},
         "scope": {"occurred_after": hours_ago(300).isoformat()}},
        id="since",
    ),
]  # fmt: skip


@pytest.mark.parametrize("body", HYBRID_BODIES)
def test_a_hybrid_search_finds_what_full_length_lists_find(
    corpus: tuple[Tenant, list[float]], engine: Engine, body: dict[str, Any]
) -> None:
    """The first try's shortened lists, with the `short` fallback, give exactly the hits,
    values, candidate count and pool bounds of full-length lists. (Where HNSW serves the
    semantic list, or a lexeme has more postings than the keyword list is long, both are
    approximations whose depth follows the list's length: measured by the benchmarks.)"""
    tenant, vector = corpus
    _, found, expected = first_and_full(engine, tenant, {"mode": "hybrid", **body}, vector)
    assert found == expected and found[0]


@pytest.mark.parametrize(
    ("body", "short"),
    [
        # 60 candidates: every list's first 30 positions already hold 60 different records.
        ({"q": "kilotree", "k": 5, "params": {"candidates": 60}}, False),
        # 200 of 240 records: the first 100 positions of the lists overlap too much to fill 200.
        ({"q": "alphabird deltafish", "k": 20}, True),
        # A time bound leaving fewer than 200 records: the newest-first list holds all of them.
        ({"q": "alphabird", "k": 20, "scope": {"occurred_after": hours_ago(300).isoformat()}}, False),
    ],
)
def test_the_first_try_is_short_only_when_the_interleaving_went_past_a_cut_list(
    corpus: tuple[Tenant, list[float]], engine: Engine, body: dict[str, Any], short: bool
) -> None:
    tenant, vector = corpus
    assert first_and_full(engine, tenant, {"mode": "hybrid", **body}, vector)[0] is short


def test_a_narrow_candidate_count_is_not_short_of_k(
    corpus: tuple[Tenant, list[float]], engine: Engine
) -> None:
    """30 candidates for k 20: a bounded keyword list of 15 rows (its lexeme's ~18 postings cut at
    15) is full at 15, not short of 20."""
    tenant, vector = corpus
    body = {"mode": "hybrid", "q": "alphabird", "k": 20, "params": {"candidates": 30}}
    search = compiled(body, tenant.id, vector=vector)
    with workspace_transaction(engine, tenant.id) as conn:
        prepare_transaction(conn, search)
        assert conn.execute(search.statement, search.params).mappings().first()["short"] is False


def test_an_entity_scope_is_never_shortened(corpus: tuple[Tenant, list[float]], engine: Engine) -> None:
    """Its lists measure every row of the scope anyway: shortening would only risk a second statement."""
    tenant, vector = corpus
    body = {"mode": "hybrid", "q": "kilotree", "scope": {"entities": ["e1"]}}
    search = compiled(body, tenant.id, vector=vector)
    assert (search.list_size, search.fallbacks) == (search.candidates, ())


def test_ef_search_follows_a_hybrid_first_tries_list(
    corpus: tuple[Tenant, list[float]], engine: Engine
) -> None:
    tenant, vector = corpus
    body = {"mode": "hybrid", "q": "x", "params": {"candidates": 321}}
    search = compiled(body, tenant.id, vector=vector)
    assert (search.list_size, search.candidates, len(search.fallbacks)) == (161, 321, 2)
    with workspace_transaction(engine, tenant.id) as conn:
        prepare_transaction(conn, search)
        assert conn.execute(sa.text("SHOW hnsw.ef_search")).scalar() == "202"  # 161 × 1.25, rounded up


@pytest.mark.parametrize(
    ("body", "ef"),
    [
        pytest.param({"q": "alphabird deltafish", "k": 20}, "250", id="short-widens"),
        pytest.param({"q": "kilotree", "k": 5, "params": {"candidates": 60}}, "40", id="not-short-keeps"),
    ],
)
def test_a_short_first_try_widens_ef_search_before_its_fallback(
    corpus: tuple[Tenant, list[float]], engine: Engine, body: dict[str, Any], ef: str
) -> None:
    """The `hnsw.ef_search` the search's last statement ran with: each statement's settings hold
    for it alone (`execute.runner`), so they are recorded as each statement is run."""
    tenant, vector = corpus
    search = compiled({"mode": "hybrid", **body}, tenant.id, vector=vector)
    settings = execute.planner_settings(pgvector(engine), search)
    ran_with: list[str] = []
    with workspace_transaction(engine, tenant.id) as conn:
        runner = execute.runner(conn, search, settings)

        def run(statement: Executable, extra: Mapping[str, str]) -> Sequence[Any]:
            ran_with.append({**settings, **extra}["hnsw.ef_search"])
            return runner(statement, extra)

        execute.with_fallbacks(search, run)
    assert ran_with[-1] == ef
