"""Catalog problems: every one names the file, the definition, the YAML path and what is wrong."""

from __future__ import annotations

import copy
from collections.abc import Callable
from collections.abc import Iterable
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any
from typing import TypeVar

from memseek.errors import Loc
from memseek.errors import StartupError


def format_loc(loc: Loc) -> str:
    """A YAML path as people write it: `views[0].query.scope.collections[1]`."""
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else f".{part}" if out else str(part)
    return out


T = TypeVar("T")
Found = list[tuple[Loc, str]]
CHECK_PASSES = 4
"""How often a definition is checked again without the parts found wrong (`check_pruned`)."""


def check_pruned(
    data: Any,
    attempt: Callable[[Any], tuple[T | None, Found]],
    prunable: Callable[[list[Loc]], bool] = lambda locs: True,
) -> tuple[T | None, Found]:
    """`attempt(data)` → (result or None, problems); while it fails, again on `data` `pruned` of
    what it found wrong, so that later checks run too: every problem at once, not just the
    first stage's (design §2). Returns the result (None if no pass succeeded) and every problem,
    each once: one inside, around or at an earlier pass's problem is that problem seen again."""
    found: Found = []
    for _ in range(CHECK_PASSES):
        result, problems = attempt(data)
        earlier = [loc for loc, _ in found]
        found += [(loc, msg) for loc, msg in problems if not overlaps(loc, earlier)]
        locs = [loc for loc, _ in problems]
        if result is not None or not locs or not prunable(locs):
            return result, found
        data = pruned(data, locs)
        if data is None:
            break
    return None, found


def pruned(data: Any, locs: Iterable[Loc]) -> Any | None:
    """A copy of `data` without the values at `locs` (mapping keys, list items); None when some
    loc names nothing to remove or a removal empties its list or mapping. Checking goes on with
    what is left, so that a definition's later checks run too: every problem at once, not just
    the first stage's (design §2)."""
    wanted = set(locs)
    if not wanted:
        return data
    out = copy.deepcopy(data)
    for loc in sorted(wanted, key=_deepest_last_item_first):
        parent = out
        for part in loc[:-1]:
            try:
                parent = parent[part]
            except (KeyError, IndexError, TypeError):
                return None
        if not loc or not _removable(parent, loc[-1]):
            return None
        del parent[loc[-1]]
        if not parent:  # an emptied list or mapping would mean something else (all collections)
            return None
    return out


def _deepest_last_item_first(loc: Loc) -> tuple[int, tuple[Any, ...]]:
    # Items of one list go from the last, so the earlier indexes still name theirs.
    return (-len(loc), tuple((0, -part) if isinstance(part, int) else (1, part) for part in loc))


def _removable(parent: Any, key: str | int) -> bool:
    if isinstance(parent, dict):
        return key in parent
    return isinstance(parent, list) and isinstance(key, int) and 0 <= key < len(parent)


def overlaps(loc: Loc, reported: Iterable[Loc]) -> bool:
    """Whether `loc` is, contains or lies inside a loc already reported: a later check's view of
    a value an earlier one reported (or removed), not a problem of its own."""
    return any(loc[: len(other)] == other or other[: len(loc)] == loc for other in reported)


@dataclass(frozen=True, slots=True)
class Problem:
    """One thing wrong with a catalog."""

    file: str
    loc: Loc
    msg: str
    definition: str = ""
    """`kind name vN` (or `kind name` for unversioned conf entries); empty for file-level problems."""

    def __str__(self) -> str:
        parts = [self.file, self.definition, format_loc(self.loc), self.msg]
        return ": ".join(part for part in parts if part)


class CatalogError(StartupError):
    """The catalog is invalid; `problems` lists every problem found, not just the first."""

    def __init__(self, summary: str, problems: Sequence[Problem]) -> None:
        self.problems = tuple(problems)
        lines = "\n".join(f"  {problem}" for problem in self.problems)
        count = len(self.problems)
        super().__init__(f"{summary} ({count} problem{'s' * (count != 1)}):\n{lines}")
