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
STORABLE = "^[^\\u0000\\ud800-\\udfff]*$"
"""`storable` as a JSON Schema pattern (what the OpenAPI document states of such a text)."""
STORABLE_NON_BLANK = "^[^\\u0000\\ud800-\\udfff]*[^\\s\\u0000\\ud800-\\udfff][^\\u0000\\ud800-\\udfff]*$"
"""A storable text that is not blank (a non-space character), as a JSON Schema pattern."""
PATTERN_FORMS = {
    STORABLE: "text without NUL characters or unpaired surrogates",
    STORABLE_NON_BLANK: "non-blank text without NUL characters or unpaired surrogates",
}
"""What each pattern above admits, in words: the message a value that fails it gets."""


def storable(text: str) -> bool:
    """Whether PostgreSQL can store `text`."""
    return _UNSTORABLE_CHARS.search(text) is None


def unstorable_values(value: Any, loc: Loc = ()) -> Iterator[Detail]:
    """A detail for every string (object keys included) and number in a JSON value that
    PostgreSQL refuses, in document order. Walked with a stack of its own, not by recursion: a
    request's nesting depth is the caller's to choose."""
    stack: list[tuple[Any, Loc]] = [(value, loc)]
    while stack:
        value, loc = stack.pop()
        if isinstance(value, float) and not math.isfinite(value):
            yield Detail(loc, NOT_FINITE)
        elif isinstance(value, str):
            if not storable(value):
                yield Detail(loc, UNSTORABLE)
        elif isinstance(value, dict):
            children = [
                part for key, item in value.items() for part in ((key, (*loc, key)), (item, (*loc, key)))
            ]
            stack.extend(reversed(children))
        elif isinstance(value, list):
            stack.extend(reversed(list(_list_children(value, loc))))


def _list_children(values: list[Any], loc: Loc) -> Iterator[tuple[Any, Loc]]:
    """A list's items still to walk: finite numbers and other scalars are passed over here, so a
    query vector's hundreds of floats are not stacked."""
    for position, item in enumerate(values):
        kind = type(item)
        if kind not in _SCALARS and not (kind is float and math.isfinite(item)):
            yield item, (*loc, position)
