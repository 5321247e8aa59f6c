"""The fixed parameter contracts of graph views (spec: Graph views, Orphan reports).

A graph view takes exactly `seed`, `predicates`, `direction`, `depth` and `limit`; an orphan
report exactly `limit` — with the spec's types, required flags and defaults. A view may add
descriptions and tighten constraints (a smaller range, an `item_enum` of allowed predicates, a
subset of directions); anything else is refused. The loaded view carries its *effective*
contract — the spec's limits merged into the declared ones — so call-time checks and the input
schema agents read both show the real bounds.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from memseek.catalog.base import FieldType
from memseek.catalog.models import View
from memseek.catalog.parameters import Parameter
from memseek.catalog.parameters import input_schema
from memseek.errors import Detail


@dataclass(frozen=True, slots=True)
class Fixed:
    """One parameter of a fixed contract and the widest constraints it may have."""

    type: FieldType
    required: bool = False
    default: Any = None
    enum: tuple[str, ...] | None = None
    minimum: int | None = None
    maximum: int | None = None
    min_length: int | None = None
    max_length: int | None = None


GRAPH_CONTRACTS: dict[str, dict[str, Fixed]] = {
    "graph": {
        "seed": Fixed("string", required=True, min_length=1, max_length=128),
        "predicates": Fixed("string_array", default=[]),
        "direction": Fixed("string", default="out", enum=("out", "in", "both")),
        "depth": Fixed("integer", default=1, minimum=1, maximum=16),
        "limit": Fixed("integer", default=20, minimum=1, maximum=500),
    },
    "graph_orphans": {
        "limit": Fixed("integer", default=50, minimum=1, maximum=500),
    },
}


def published_input_schema(view: View, max_depth: int, max_paths: int) -> dict[str, Any]:
    """The view's input schema as this deployment accepts calls (`deployed_parameters`)."""
    return input_schema(deployed_parameters(view, max_depth, max_paths))


def deployed_parameters(view: View, max_depth: int, max_paths: int) -> dict[str, Parameter]:
    """The view's parameters as this deployment takes them: a graph view's `depth` and `limit`
    capped at MAX_GRAPH_DEPTH and MAX_GRAPH_PATHS, maximum and default alike ("Your deployment
    may impose lower ceilings"; a default "must satisfy ... every constraint")."""
    ceilings = {"depth": max_depth, "limit": max_paths} if view.kind in GRAPH_CONTRACTS else {}
    return {name: _capped(p, ceilings.get(name)) for name, p in view.parameters.items()}


def lowered_defaults(view: View, max_depth: int, max_paths: int) -> dict[str, Any]:
    """The defaults `deployed_parameters` lowered, by parameter name: what a call that omits
    one of them gets."""
    deployed = deployed_parameters(view, max_depth, max_paths)
    return {name: p.default for name, p in deployed.items() if p.default != view.parameters[name].default}


def _capped(parameter: Parameter, ceiling: int | None) -> Parameter:
    if ceiling is None:
        return parameter
    update = {
        bound: ceiling
        for bound, value in (("maximum", parameter.maximum), ("default", parameter.default))
        if isinstance(value, int) and value > ceiling
    }
    return parameter.model_copy(update=update) if update else parameter


def graph_contract(view: View) -> tuple[View, list[Detail]]:
    """The view with its effective contract, and every departure from the fixed one."""
    contract = GRAPH_CONTRACTS.get(view.kind)
    if contract is None:
        return view, []
    details = [
        Detail(
            ("parameters",),
            f"missing parameter {name!r}; a {view.kind} view takes exactly: {', '.join(contract)}",
        )
        for name in contract
        if name not in view.parameters
    ]
    effective: dict[str, Parameter] = {}
    for name, parameter in view.parameters.items():
        fixed = contract.get(name)
        if fixed is None:
            details.append(
                Detail(("parameters", name), f"not part of the {view.kind} contract ({', '.join(contract)})")
            )
            continue
        found = _departures(parameter, fixed)
        details += [Detail(("parameters", name, key), msg) for key, msg in found]
        effective[name] = _tightened(parameter, fixed) if not found else parameter
    if details:
        return view, details
    return view.model_copy(update={"parameters": effective}), []


def _departures(parameter: Parameter, fixed: Fixed) -> list[tuple[str, str]]:
    found = []
    if parameter.type != fixed.type:
        found.append(("type", f"must be {fixed.type}"))
    if parameter.required != fixed.required:
        found.append(("required", f"must be {str(fixed.required).lower()}"))
    if not fixed.required and (not parameter.has_default or parameter.default != fixed.default):
        found.append(("default", f"must be {fixed.default!r}"))
    if fixed.enum is not None and parameter.enum is not None and not set(parameter.enum) <= set(fixed.enum):
        found.append(("enum", f"may only narrow {list(fixed.enum)}"))
    for key, widest, looser in _bounds(parameter, fixed):
        if looser:
            found.append((key, f"may not go beyond {widest}"))
    return found


def _bounds(parameter: Parameter, fixed: Fixed) -> list[tuple[str, int, bool]]:
    out = []
    for low in ("minimum", "min_length"):
        widest, declared = getattr(fixed, low), getattr(parameter, low)
        if widest is not None and declared is not None:
            out.append((low, widest, declared < widest))
    for high in ("maximum", "max_length"):
        widest, declared = getattr(fixed, high), getattr(parameter, high)
        if widest is not None and declared is not None:
            out.append((high, widest, declared > widest))
    return out


def _tightened(parameter: Parameter, fixed: Fixed) -> Parameter:
    """The declared parameter with the fixed limits filled in where it declared none."""
    fill = {
        key: getattr(fixed, key)
        for key in ("enum", "minimum", "maximum", "min_length", "max_length")
        if getattr(parameter, key) is None and getattr(fixed, key) is not None
    }
    return parameter.model_copy(update=fill) if fill else parameter
