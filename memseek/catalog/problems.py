"""Catalog problems: every one names the file, the definition, the YAML path and what is wrong."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from memseek.errors import Loc
from memseek.errors import StartupError


def format_loc(loc: Loc) -> str:
    """A YAML path as people write it: `views[0].query.scope.collections[1]`."""
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else f".{part}" if out else str(part)
    return out


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
