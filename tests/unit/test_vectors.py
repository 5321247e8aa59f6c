"""What a vector must hold before it reaches a statement (pgvector keeps 4-byte floats)."""

from __future__ import annotations

import pytest

from memseek.models import ModelOutputInvalid
from memseek.models.vectors import REAL_MAX
from memseek.models.vectors import checked_vector
from memseek.models.vectors import values_problem
from memseek.schema import EMBEDDING_DIM


@pytest.mark.parametrize(
    ("value", "problem"),
    [
        pytest.param(0.5, None, id="ordinary"),
        pytest.param(REAL_MAX, None, id="largest-real"),
        pytest.param(-REAL_MAX, None, id="smallest-real"),
        pytest.param(1e-50, None, id="underflows-to-zero"),
        pytest.param(1e39, "within", id="past-real"),
        pytest.param(-1e39, "within", id="below-real"),
        pytest.param(1e308, "within", id="double-only"),
        pytest.param(float("nan"), "finite", id="nan"),
        pytest.param(float("-inf"), "finite", id="infinite"),
    ],
)
def test_values_problem(value: float, problem: str | None) -> None:
    for values in ([0.0, value], [value, 0.0], [0.5] * 200 + [value] + [-0.5] * 183):
        found = values_problem(values)
        assert found is None if problem is None else problem in (found or ""), values


@pytest.mark.parametrize(
    ("values", "problem"),
    [
        pytest.param([float("inf"), float("-inf")], "finite", id="both-infinities"),
        pytest.param([float("nan"), float("inf")], "finite", id="nan-and-infinity"),
        pytest.param([1e308, 1e308, -1.0], "within", id="finite-but-the-sum-overflows"),
        pytest.param([REAL_MAX] * EMBEDDING_DIM, None, id="every-value-the-largest-real"),
        pytest.param([], None, id="empty"),
    ],
)
def test_values_problem_of_mixed_values(values: list[float], problem: str | None) -> None:
    found = values_problem(values)
    assert found is None if problem is None else problem in (found or "")


def test_checked_vector_names_the_model_and_the_problem() -> None:
    assert checked_vector([0.25] * EMBEDDING_DIM, "default") == (0.25,) * EMBEDDING_DIM
    with pytest.raises(ModelOutputInvalid, match="'remote' returned a 3-dimensional vector"):
        checked_vector([0.1, 0.2, 0.3], "remote")
    with pytest.raises(ModelOutputInvalid, match="unusable vector: every value must lie"):
        checked_vector([1e39] * EMBEDDING_DIM, "remote")
