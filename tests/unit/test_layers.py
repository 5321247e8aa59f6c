"""The package's layers import downward only, and its packages import each other without cycles.

Every `import` in every module counts: at module level, inside functions (a lazy import is still
a dependency) and under `TYPE_CHECKING` (so is a type). A unit is a subpackage (`memseek.search`)
or a top-level module (`memseek.db`); each unit belongs to one layer of `LAYERS`, lowest first, and
may import units of its own layer or of lower ones. A new module must be placed in the table.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

import memseek

ROOT = Path(memseek.__file__).resolve().parent

LAYERS: tuple[tuple[str, frozenset[str]], ...] = (
    # the SDK stands alone below everything: it talks to the service over HTTP only
    ("sdk", frozenset({"client"})),
    # the framework adapters stand on the SDK alone (they are clients like any other)
    ("adapters", frozenset({"integrations"})),
    (
        "base",
        frozenset(
            {"memseek", "errors", "settings", "schema", "paths", "jsontext", "storable", "suggest"}
            | {"deadline", "logs"}
        ),
    ),
    (
        "resources",
        frozenset({"db", "driver", "citus", "auth", "migrate", "catalog", "models", "search_state"}),
    ),
    ("services", frozenset({"search", "write", "runtime", "indexes", "overview"})),
    ("interfaces", frozenset({"api"})),
    (
        "entry points",
        frozenset({"app", "boot", "cli", "__main__", "serving", "server", "dbctl", "terminal", "progress"}),
    ),
)
"""Lowest first. Units are named without the `memseek.` prefix (`memseek` is the package itself)."""
LAYER_OF = {unit: rank for rank, (_, units) in enumerate(LAYERS) for unit in units}


def module_names() -> dict[str, Path]:
    """Every module of the package by dotted name (a package by its `__init__.py`)."""
    found = {}
    for path in sorted(ROOT.rglob("*.py")):
        parts = ("memseek", *path.relative_to(ROOT).with_suffix("").parts)
        found[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return found


MODULES = module_names()


def imported(module: str, path: Path) -> Iterator[tuple[int, str]]:
    """(line, module) for every memseek module `module` imports, wherever the import statement is."""
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            yield from ((node.lineno, alias.name) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = _absolute(package, node.module, node.level)
            # `from memseek import auth` imports the module memseek.auth, not only the package
            names = [f"{base}.{alias.name}" for alias in node.names if f"{base}.{alias.name}" in MODULES]
            yield from ((node.lineno, name) for name in names or [base])


def _absolute(package: str, module: str | None, level: int) -> str:
    if not level:
        return module or ""
    parts = package.split(".")[: len(package.split(".")) - level + 1]
    return ".".join(parts + ([module] if module else []))


def unit(module: str) -> str:
    """The subpackage or top-level module `module` belongs to (`memseek` for the package itself)."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else parts[0]


def edges() -> Iterator[tuple[str, int, str]]:
    """(importing module, line, imported module) for every import of a memseek module."""
    for module, path in MODULES.items():
        for line, target in imported(module, path):
            if target == "memseek" or target.startswith("memseek."):
                yield module, line, target


EDGES = list(edges())


def test_every_unit_has_a_layer() -> None:
    unplaced = sorted({unit(module) for module in MODULES} - set(LAYER_OF))
    assert not unplaced, f"place these in LAYERS: {unplaced}"


@pytest.mark.parametrize(("rank", "units"), [pytest.param(r, u, id=n) for r, (n, u) in enumerate(LAYERS)])
def test_a_layer_imports_only_its_own_or_lower_layers(rank: int, units: frozenset[str]) -> None:
    upward = [
        f"{module}:{line} imports {target} ({LAYERS[LAYER_OF[unit(target)]][0]})"
        for module, line, target in EDGES
        if unit(module) in units and LAYER_OF.get(unit(target), -1) > rank
    ]
    assert not upward, "\n".join(upward)


def unit_graph() -> dict[str, set[str]]:
    """Unit → the other units it imports."""
    graph: dict[str, set[str]] = {name: set() for name in LAYER_OF}
    for module, _, target in EDGES:
        if unit(module) != unit(target):
            graph.setdefault(unit(module), set()).add(unit(target))
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Cycles of `graph`, found depth first; a unit on a cycle already found is not explored again."""
    found: list[list[str]] = []
    seen: set[str] = set()

    def visit(node: str, path: list[str]) -> None:
        for nxt in sorted(graph.get(node, ())):
            if nxt in path:
                cycle = path[path.index(nxt) :]
                if not seen.intersection(cycle):
                    found.append([*cycle, nxt])
                    seen.update(cycle)
            elif nxt not in seen:
                visit(nxt, [*path, nxt])

    for start in sorted(graph):
        visit(start, [start])
    return found


def test_packages_import_each_other_without_cycles() -> None:
    found = cycles(unit_graph())
    assert not found, "\n".join(" -> ".join(cycle) for cycle in found)


@pytest.mark.parametrize(
    ("graph", "expected"),
    [
        pytest.param({"a": {"b"}, "b": set()}, [], id="acyclic"),
        pytest.param({"a": {"b"}, "b": {"a"}}, [["a", "b", "a"]], id="two-units"),
        pytest.param({"a": {"b"}, "b": {"c"}, "c": {"a"}}, [["a", "b", "c", "a"]], id="three-units"),
    ],
)
def test_cycles_are_found(graph: dict[str, set[str]], expected: list[list[str]]) -> None:
    """The cycle search itself: a test that cannot fail proves nothing."""
    assert cycles(graph) == expected


def test_imports_inside_functions_and_relative_imports_are_read(tmp_path: Path) -> None:
    source = tmp_path / "probe.py"
    source.write_text("def f():\n    from memseek.search import service\n    from ..write import store\n")
    found = sorted(target for _, target in imported("memseek.catalog.probe", source))
    assert found == ["memseek.search.service", "memseek.write.store"]
