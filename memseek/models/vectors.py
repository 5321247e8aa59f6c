"""What a stored or compared vector must be: 384 finite values, each within PostgreSQL's `real`.

pgvector keeps every element as a 4-byte float and refuses a statement holding a value past
`REAL_MAX` ("value out of range: overflow"), so a vector is checked here, before it reaches a
statement: a model's vector as `ModelOutputInvalid` (503, or its record alone failing), a
writer's supplied vector as a 422.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from memseek.models import ModelOutputInvalid
from memseek.schema import EMBEDDING_DIM

REAL_MAX = 3.4028234663852886e38
"""The largest magnitude a PostgreSQL `real` (a pgvector element) holds."""


def values_problem(values: Sequence[float]) -> str | None:
    """Why the elements of `values` cannot be stored, or None when they can.

    Three C-speed passes instead of a Python loop (a write checks 384 values per record): the
    sum is NaN when any value is NaN (or both infinities are there), and an infinity is the
    minimum or the maximum. Finite values cannot overflow the sum before they fail the range.
    """
    if not values:
        return None
    low, high, total = min(values), max(values), sum(values)
    if math.isnan(total) or math.isinf(low) or math.isinf(high):
        return "every value must be finite"
    if low < -REAL_MAX or high > REAL_MAX:
        return f"every value must lie within ±{REAL_MAX:.7g} (a vector holds 4-byte floats)"
    return None


def checked_vector(values: Sequence[float], alias: str) -> tuple[float, ...]:
    """A model's vector as a tuple, or `ModelOutputInvalid` when its width or values are unusable."""
    if len(values) != EMBEDDING_DIM:
        raise ModelOutputInvalid(
            f"model {alias!r} returned a {len(values)}-dimensional vector; records hold {EMBEDDING_DIM}"
        )
    problem = values_problem(values)
    if problem is not None:
        raise ModelOutputInvalid(f"model {alias!r} returned an unusable vector: {problem}")
    return tuple(float(x) for x in values)
