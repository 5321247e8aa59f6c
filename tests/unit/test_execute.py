"""The driver-level form of a search statement: native placeholders and the HNSW scan width it
runs with (the query vector's form: tests/integration/test_database.py)."""

from __future__ import annotations

import pytest

from memseek.search.execute import ef_search


@pytest.mark.parametrize(
    ("list_size", "ef"),
    [
        pytest.param(1, "40", id="floor"),
        pytest.param(32, "40", id="floor-edge"),
        pytest.param(33, "42", id="past-floor"),
        pytest.param(100, "125", id="hybrid-first-try"),
        pytest.param(161, "202", id="rounds-up"),
        pytest.param(200, "250", id="vector-default"),
        pytest.param(800, "1000", id="cap"),
        pytest.param(1000, "1000", id="max-candidates"),
    ],
)
def test_ef_search_is_a_quarter_past_the_list_within_pgvectors_bounds(list_size: int, ef: str) -> None:
    """A quarter more than the list (40 at least, pgvector's 1000 at most), so that a first HNSW
    pass usually yields the whole list past the scope's filters."""
    assert ef_search(list_size) == ef
