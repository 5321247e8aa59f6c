"""Text PostgreSQL can store: no NUL characters and no unpaired surrogates.

PostgreSQL `text` and `jsonb` refuse NUL, and psycopg cannot encode a lone surrogate, so such a
string reaching a statement would fail as a 500. Requests are checked at the boundary instead.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from memseek.errors import Detail
from memseek.errors import Loc

UNSTORABLE = "text must not contain NUL characters or unpaired surrogates"
_UNSTORABLE_CHARS = re.compile("[\x00\ud800-\udfff]")


def storable(text: str) -> bool:
    """Whether PostgreSQL can store `text`."""
    return _UNSTORABLE_CHARS.search(text) is None


def unstorable_strings(value: Any, loc: Loc = ()) -> Iterator[Detail]:
    """A detail for every string in a JSON value (object keys included) that PostgreSQL refuses."""
    if isinstance(value, str):
        if not storable(value):
            yield Detail(loc, UNSTORABLE)
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from unstorable_strings(key, (*loc, key))
            yield from unstorable_strings(item, (*loc, key))
    elif isinstance(value, list):
        for position, item in enumerate(value):
            yield from unstorable_strings(item, (*loc, position))
