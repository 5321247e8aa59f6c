"""Error messages that say what to do: the valid options, and the nearest one to a typo.

An unknown name in a request (a collection, a field, an operator, a view) is answered with the
names that would have worked and, when one is close (difflib's ratio ≥ 0.6, the threshold of
`difflib.get_close_matches`), "did you mean …?". Only names from the loaded catalog or the
request language are listed: never another workspace's data.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable

MAX_LISTED = 30
"""Options listed in one message at most; past that the message says how many more there are."""


def nearest(name: str, options: Iterable[str]) -> str | None:
    """The option closest to `name`, if any is close enough to be a likely typo."""
    close = difflib.get_close_matches(name, list(options), n=1)
    return close[0] if close else None


def listed(options: Iterable[str]) -> str:
    """The options as `a, b, c` (sorted; at most `MAX_LISTED`), or `none`."""
    names = sorted(set(options))
    if not names:
        return "none"
    shown = ", ".join(names[:MAX_LISTED])
    return shown if len(names) <= MAX_LISTED else f"{shown} and {len(names) - MAX_LISTED} more"


def hint(name: str, options: Iterable[str], what: str) -> str:
    """`; did you mean 'x'? <what>: a, b, c` — appended to a message about the unknown `name`."""
    options = list(options)
    close = nearest(name, options)
    guess = f"; did you mean {close!r}?" if close is not None else ";"
    return f"{guess} {what}: {listed(options)}"
