"""Values PostgreSQL can store: text without NUL characters or unpaired surrogates, finite numbers.

PostgreSQL `text` and `jsonb` refuse NUL, psycopg cannot encode a lone surrogate, and JSONB has no
NaN or Infinity (which Python's JSON parser accepts), so such a value reaching a statement would
fail as a 500. Requests (reads and writes) are checked at the boundary instead.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator
from typing import Any

from memseek.errors import Detail
from memseek.errors import Loc

UNSTORABLE = "text must not contain NUL characters or unpaired surrogates"
NOT_FINITE = "must be a finite number (NaN and Infinity are not JSON)"
_UNSTORABLE_CHARS = re.compile("[\x00\ud800-\udfff]")
_SCALARS = frozenset({int, bool, type(None)})
"""JSON values PostgreSQL always stores."""


def storable(text: str) -> bool:
    """Whether PostgreSQL can store `text`."""
    return _UNSTORABLE_CHARS.search(text) is None


def unstorable_values(value: Any, loc: Loc = ()) -> Iterator[Detail]:
    """A detail for every string (object keys included) and number in a JSON value that
    PostgreSQL refuses."""
    if isinstance(value, float) and not math.isfinite(value):
        yield Detail(loc, NOT_FINITE)
    elif isinstance(value, str):
        if not storable(value):
            yield Detail(loc, UNSTORABLE)
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from unstorable_values(key, (*loc, key))
            yield from unstorable_values(item, (*loc, key))
    elif isinstance(value, list):
        for position, item in enumerate(value):
            # Numbers inline: a query vector's hundreds of floats would cost a generator each.
            if type(item) is float:
                if not math.isfinite(item):
                    yield Detail((*loc, position), NOT_FINITE)
            elif type(item) not in _SCALARS:
                yield from unstorable_values(item, (*loc, position))
