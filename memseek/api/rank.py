"""`GET /rank/schema`: the ranking contract of this deployment, for tooling and diagnostics.

Generated from the operator registry and the loaded catalog: the grammar, the limits, the
active default formulas (trees, hash, candidates) and what each search profile's engine can do.
"""

from __future__ import annotations

from typing import Any

from flask import Blueprint
from flask import Response
from flask import jsonify

from memseek.api.common import runtime
from memseek.api.openapi import Operation
from memseek.api.openapi import document
from memseek.catalog.catalog import Catalog
from memseek.catalog.rank import MAX_LEVELS
from memseek.catalog.rank import MAX_NODES
from memseek.catalog.rank import OPERATORS
from memseek.catalog.rank import QUERY_SIGNALS
from memseek.catalog.rank import ZERO_ELSEWHERE
from memseek.catalog.rank import RankedMode
from memseek.catalog.rank import RankNode
from memseek.catalog.rank import rank_hash
from memseek.catalog.rank import to_tree
from memseek.search.resolve import MODE_NEEDS

bp = Blueprint("rank", __name__)

RANKED_MODES: tuple[RankedMode, ...] = ("hybrid", "vector", "text", "recent")


def syntax_args(syntax: str) -> list[str]:
    """The argument slots of an operator's syntax: `[product, factor, a]` → `[factor, a]`."""
    parts, depth, current = [], 0, ""
    for char in syntax.strip()[1:-1]:
        depth += (char in "[{") - (char in "]}")
        if char == "," and depth == 0:
            parts.append(current.strip())
            current = ""
        else:
            current += char
    parts.append(current.strip())
    return parts[1:]


def describe_operator(name: str, node: type[RankNode]) -> dict[str, Any]:
    """One grammar entry: name, kind, arguments, description and the modes it is allowed in."""
    args = syntax_args(node.syntax)
    computed = QUERY_SIGNALS.get(node, frozenset(RANKED_MODES))
    modes = sorted(RANKED_MODES if node in ZERO_ELSEWHERE else computed)  # read as 0 where not computed
    return {
        "name": name,
        "kind": node.kind,
        "syntax": node.syntax,
        "args": args,
        "arity": len(args),
        "description": node.description,
        "modes": modes,
        "in_boost": node not in QUERY_SIGNALS,
    }


def describe_defaults(catalog: Catalog) -> dict[str, Any]:
    """The active default formulas: one tree per scored mode, their hash and candidates."""
    default = catalog.rank_default
    assert default is not None  # every loaded catalog has one (shipped or its own)
    variants: dict[str, Any] = {mode: to_tree(default.variants[mode]) for mode in RANKED_MODES}
    return {
        "hash": rank_hash(default),
        "candidates": default.candidates,
        "variants": variants | {"structured": None},
    }


def describe_engines(catalog: Catalog) -> dict[str, Any]:
    """Per search profile: its backend, options, capabilities and the modes it can run."""
    engines = {}
    for name in sorted(catalog.profiles):
        profile = catalog.profiles[name]
        capabilities = catalog.capabilities(name)
        engines[name] = profile.model_dump() | {
            "capabilities": sorted(capabilities),
            "modes": [mode for mode, needs in MODE_NEEDS.items() if needs <= capabilities],
        }
    return engines


@bp.get("/rank/schema")
def rank_schema() -> Response:
    catalog = runtime().catalog
    return jsonify(
        {
            "grammar": {
                "form": "[operator, argument, ...]",
                "operators": [describe_operator(name, node) for name, node in OPERATORS.items()],
            },
            "limits": {"max_nodes": MAX_NODES, "max_levels": MAX_LEVELS},
            "defaults": describe_defaults(catalog),
            "engines": describe_engines(catalog),
        }
    )


document(Operation("GET", "/rank/schema", "The ranking grammar, active defaults and engine capabilities"))
