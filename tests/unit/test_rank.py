"""Rank expressions: grammar, limits, mode rules, round trips and the shipped defaults."""

from __future__ import annotations

import dataclasses
import json
import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st

from memseek.catalog.rank import MAX_LEVELS
from memseek.catalog.rank import MAX_NODES
from memseek.catalog.rank import OPERATORS
from memseek.catalog.rank import SHIPPED_RANK_DEFAULT
from memseek.catalog.rank import AgeHours
from memseek.catalog.rank import Bm25
from memseek.catalog.rank import Const
from memseek.catalog.rank import Decay
from memseek.catalog.rank import Max
from memseek.catalog.rank import Normalize
from memseek.catalog.rank import Product
from memseek.catalog.rank import RankDefault
from memseek.catalog.rank import RankNode
from memseek.catalog.rank import Saturate
from memseek.catalog.rank import Score
from memseek.catalog.rank import Signal
from memseek.catalog.rank import Similarity
from memseek.catalog.rank import Sum
from memseek.catalog.rank import TextMatch
from memseek.catalog.rank import check_rank_for_mode
from memseek.catalog.rank import load_rank_default
from memseek.catalog.rank import parse_rank
from memseek.catalog.rank import rank_hash
from memseek.catalog.rank import score_names
from memseek.catalog.rank import signals
from memseek.catalog.rank import to_tree
from memseek.errors import RequestInvalid
from memseek.search.request import check_boost

RECENCY = ["product", 1.0, ["decay", ["age_hours", "last_accessed"], {"midpoint": 24, "exponent": 1}]]
RECIPE = [
    "sum",
    [
        ["product", 1.0, ["normalize", ["text_match"]]],
        ["product", 0.5, ["saturate", ["score", "importance"], {"midpoint": 5, "exponent": 1}]],
        ["product", 1.0, ["decay", ["age_hours", "occurred_at"], {"midpoint": 168, "exponent": 1}]],
    ],
]
HYBRID = ["sum", [["product", 1.0, ["normalize", ["max", [["similarity"], ["text_match"]]]]], RECENCY]]


def chain(levels: int) -> list[Any]:
    """`levels` nested normalize nodes around a const leaf (the leaf is the last level)."""
    tree: list[Any] = ["const", 1]
    for _ in range(levels - 1):
        tree = ["normalize", tree]
    return tree


def flat_sum(nodes: int) -> list[Any]:
    """A sum of consts with `nodes` nodes in total."""
    return ["sum", [["const", i] for i in range(nodes - 1)]]


# --- grammar -------------------------------------------------------------------------------


def test_spec_recipe_parses_into_typed_nodes() -> None:
    node = parse_rank(RECIPE)
    assert node == Sum(
        (
            Product(1.0, Normalize(TextMatch())),
            Product(0.5, Saturate(Score("importance"), midpoint=5.0, exponent=1.0)),
            Product(1.0, Decay(AgeHours("occurred_at"), midpoint=168.0, exponent=1.0)),
        )
    )


@pytest.mark.parametrize("tree", [RECIPE, HYBRID, chain(MAX_LEVELS), flat_sum(MAX_NODES)], ids=lambda t: t[0])
def test_to_tree_round_trips(tree: list[Any]) -> None:
    node = parse_rank(tree)
    assert parse_rank(to_tree(node)) == node
    assert hash(parse_rank(to_tree(node))) == hash(node)


def test_numbers_are_canonical_floats() -> None:
    assert parse_rank(["const", 1]) == parse_rank(["const", 1.0])
    assert to_tree(parse_rank(["product", 2, ["const", 1]])) == ["product", 2.0, ["const", 1.0]]


def test_registry_is_a_closed_set_of_frozen_described_nodes() -> None:
    assert set(OPERATORS) == {
        "similarity", "text_match", "bm25", "score", "age_hours", "const",
        "sum", "max", "product", "normalize", "saturate", "decay",
    }  # fmt: skip
    for name, cls in OPERATORS.items():
        assert cls.op == name
        assert cls.syntax.startswith(f"[{name}")
        assert cls.description and cls.__doc__
        assert dataclasses.is_dataclass(cls)
        assert cls.__dataclass_params__.frozen  # type: ignore[attr-defined]
        assert not hasattr(cls, "__dict__") or "__slots__" in vars(cls)


def test_nodes_are_immutable() -> None:
    node = parse_rank(["const", 1])
    with pytest.raises(dataclasses.FrozenInstanceError):
        node.value = 2  # type: ignore[attr-defined]


INVALID = [
    pytest.param("sum", ("rank",), "expected an expression", id="not-a-list"),
    pytest.param([], ("rank",), "expected an expression", id="empty-list"),
    pytest.param(["foo"], ("rank", 0), "unknown operator 'foo'", id="unknown-operator"),
    pytest.param([3], ("rank", 0), "unknown operator", id="operator-not-a-string"),
    pytest.param(["similarity", 1], ("rank",), "similarity takes 0 arguments", id="similarity-arity"),
    pytest.param(["text_match", "q"], ("rank",), "takes 0 arguments", id="text-match-arity"),
    pytest.param(["score"], ("rank",), "score takes 1 argument", id="score-arity"),
    pytest.param(["score", 3], ("rank", 1), "score name", id="score-name-type"),
    pytest.param(["score", "has space"], ("rank", 1), "score name", id="score-name-pattern"),
    pytest.param(
        ["age_hours", "updated_at"], ("rank", 1), "created_at, occurred_at, last_accessed", id="age-field"
    ),
    pytest.param(["age_hours"], ("rank",), "takes 1 argument", id="age-arity"),
    pytest.param(["const", True], ("rank", 1), "finite number", id="const-bool"),
    pytest.param(["const", "1"], ("rank", 1), "finite number", id="const-string"),
    pytest.param(["const", math.nan], ("rank", 1), "finite number", id="const-nan"),
    pytest.param(["const", math.inf], ("rank", 1), "finite number", id="const-inf"),
    pytest.param(["const", 10**400], ("rank", 1), "finite number", id="const-huge-int"),
    pytest.param(["sum", []], ("rank", 1), "non-empty list", id="sum-empty"),
    pytest.param(
        ["max", [["const", 1], 2]], ("rank", 1, 1), "expected an expression", id="max-item-not-a-node"
    ),
    pytest.param(["sum", ["const", 1], ["const", 2]], ("rank",), "sum takes 1 argument", id="sum-flat"),
    pytest.param(["max", "x"], ("rank", 1), "non-empty list", id="max-not-a-list"),
    pytest.param(["product", 1.0], ("rank",), "product takes 2 arguments", id="product-arity"),
    pytest.param(["product", "2", ["const", 1]], ("rank", 1), "finite number", id="product-factor-string"),
    pytest.param(["product", False, ["const", 1]], ("rank", 1), "finite number", id="product-factor-bool"),
    pytest.param(["product", math.inf, ["const", 1]], ("rank", 1), "finite number", id="product-factor-inf"),
    pytest.param(["normalize"], ("rank",), "normalize takes 1 argument", id="normalize-arity"),
    pytest.param(["normalize", 1], ("rank", 1), "expected an expression", id="normalize-child"),
    pytest.param(
        ["saturate", ["const", 1]], ("rank",), "saturate takes 2 arguments", id="saturate-no-options"
    ),
    pytest.param(["decay", ["const", 1], [24, 1]], ("rank", 2), "must be an object", id="decay-options-list"),
    pytest.param(
        ["decay", ["const", 1], {"exponent": 1}], ("rank", 2), "midpoint is required", id="decay-midpoint"
    ),
    pytest.param(
        ["saturate", ["const", 1], {"midpoint": 1}], ("rank", 2), "exponent is required", id="exponent"
    ),
    pytest.param(
        ["decay", ["const", 1], {"midpoint": 0, "exponent": 1}],
        ("rank", 2, "midpoint"),
        "greater than 0",
        id="midpoint-zero",
    ),
    pytest.param(
        ["saturate", ["const", 1], {"midpoint": 5, "exponent": -1}],
        ("rank", 2, "exponent"),
        "greater than 0",
        id="exponent-negative",
    ),
    pytest.param(
        ["decay", ["const", 1], {"midpoint": math.inf, "exponent": 1}],
        ("rank", 2, "midpoint"),
        "finite number",
        id="midpoint-inf",
    ),
    pytest.param(
        ["decay", ["const", 1], {"midpoint": True, "exponent": 1}],
        ("rank", 2, "midpoint"),
        "finite number",
        id="midpoint-bool",
    ),
    pytest.param(
        ["decay", ["const", 1], {"midpoint": 1, "exponent": 1, "scale": 2}],
        ("rank", 2, "scale"),
        "unknown option",
        id="option-unknown",
    ),
    pytest.param(["bm25", {}, {}], ("rank",), "bm25 takes 0 to 1 argument", id="bm25-arity"),
    pytest.param(["bm25", [1.2, 0.75]], ("rank", 1), "must be an object", id="bm25-options-list"),
    pytest.param(["bm25", {"k1": -0.1}], ("rank", 1, "k1"), "at least 0", id="bm25-k1-negative"),
    pytest.param(["bm25", {"k1": math.inf}], ("rank", 1, "k1"), "finite number", id="bm25-k1-inf"),
    pytest.param(["bm25", {"b": 1.5}], ("rank", 1, "b"), "at most 1", id="bm25-b-above-1"),
    pytest.param(["bm25", {"b": -1}], ("rank", 1, "b"), "at least 0", id="bm25-b-negative"),
    pytest.param(["bm25", {"b": "0.5"}], ("rank", 1, "b"), "finite number", id="bm25-b-string"),
    pytest.param(["bm25", {"k3": 8}], ("rank", 1, "k3"), "unknown option", id="bm25-option-unknown"),
    pytest.param(
        ["sum", [["product", 1.0, ["bm25", {"k1": True}]]]],
        ("rank", 1, 0, 2, 1, "k1"),
        "finite",
        id="bm25-nested",
    ),
    pytest.param(
        ["sum", [["product", 1.0, ["foo"]]]], ("rank", 1, 0, 2, 0), "unknown operator", id="nested-loc"
    ),
    pytest.param(flat_sum(MAX_NODES + 1), ("rank", 1, MAX_NODES - 1), "at most 16 nodes", id="17-nodes"),
    pytest.param(chain(MAX_LEVELS + 1), ("rank",) + (1,) * MAX_LEVELS, "at most 5 levels", id="6-levels"),
]


@pytest.mark.parametrize(("tree", "loc", "fragment"), INVALID)
def test_invalid_trees_name_the_problem_and_its_path(tree: Any, loc: tuple[Any, ...], fragment: str) -> None:
    with pytest.raises(RequestInvalid) as caught:
        parse_rank(tree)
    assert caught.value.status == 422
    assert [(d.loc, fragment in d.msg) for d in caught.value.details] == [(loc, True)]


def test_every_problem_is_reported_once() -> None:
    tree = ["sum", [["foo"], ["const", "x"], ["decay", ["age_hours", "now"], {"midpoint": -1}]]]
    with pytest.raises(RequestInvalid) as caught:
        parse_rank(tree)
    assert [d.loc for d in caught.value.details] == [
        ("rank", 1, 0, 0),
        ("rank", 1, 1, 1),
        ("rank", 1, 2, 1, 1),
        ("rank", 1, 2, 2, "midpoint"),
        ("rank", 1, 2, 2),
    ]


def test_limits_are_reported_once_and_count_only_nodes() -> None:
    options = {"midpoint": 1, "exponent": 1}
    # Numbers and option objects are not nodes: 16 nodes here, with many more list items.
    parse_rank(["sum", [["decay", ["const", i], options] for i in range(7)] + [["const", 1]]])
    with pytest.raises(RequestInvalid) as caught:
        parse_rank(["sum", [chain(MAX_LEVELS), chain(MAX_LEVELS), *[["const", 1]] * 6]])
    assert [d.msg for d in caught.value.details] == [
        "at most 5 levels of nesting",
        "at most 16 nodes in a rank expression",
    ]


def test_custom_loc_prefix() -> None:
    with pytest.raises(RequestInvalid) as caught:
        parse_rank(["foo"], loc=("sources", 1, "rank"))
    assert caught.value.details[0].loc == ("sources", 1, "rank", 0)


# --- what a tree reads, and where it may be used ------------------------------------------


def test_signals_and_score_names() -> None:
    node = parse_rank(RECIPE)
    assert signals(node) == {TextMatch, Score, AgeHours}
    assert score_names(node) == {"importance"}
    assert score_names(parse_rank(HYBRID)) == frozenset()
    assert all(issubclass(cls, Signal) for cls in signals(parse_rank(HYBRID)))


MODE_RULES = [
    pytest.param(HYBRID, "hybrid", [], id="hybrid-reads-both"),
    pytest.param(HYBRID, "text", [("rank", 1, 0, 2, 1, 1, 0)], id="similarity-in-text"),
    pytest.param(HYBRID, "vector", [("rank", 1, 0, 2, 1, 1, 1)], id="text-match-in-vector"),
    pytest.param(
        HYBRID, "recent", [("rank", 1, 0, 2, 1, 1, 0), ("rank", 1, 0, 2, 1, 1, 1)], id="both-in-recent"
    ),
    pytest.param(RECIPE, "text", [], id="recipe-in-text"),
    pytest.param(RECIPE, "vector", [("rank", 1, 0, 2, 1)], id="recipe-in-vector"),
    pytest.param(["score", "importance"], "recent", [], id="score-in-recent"),
    pytest.param(["const", 1], "structured", [("rank",)], id="structured-takes-no-rank"),
    pytest.param(["bm25"], "text", [], id="bm25-in-text"),
    pytest.param(["max", [["similarity"], ["bm25"]]], "hybrid", [], id="bm25-in-hybrid"),
    pytest.param(["bm25"], "vector", [], id="bm25-in-vector-reads-0"),
    pytest.param(["bm25", {"k1": 2}], "recent", [], id="bm25-in-recent-reads-0"),
    pytest.param(["bm25"], "structured", [("rank",)], id="bm25-not-in-structured"),
]


@pytest.mark.parametrize(("tree", "mode", "locs"), MODE_RULES)
def test_query_signals_need_a_mode_that_computes_them(tree: Any, mode: Any, locs: list[Any]) -> None:
    assert [d.loc for d in check_rank_for_mode(parse_rank(tree), mode)] == locs


@pytest.mark.parametrize(
    ("tree", "node", "canonical"),
    [
        pytest.param(["bm25"], Bm25(1.2, 0.75), ["bm25"], id="defaults"),
        pytest.param(["bm25", {}], Bm25(1.2, 0.75), ["bm25"], id="empty-options"),
        pytest.param(["bm25", {"k1": 1.2, "b": 0.75}], Bm25(1.2, 0.75), ["bm25"], id="defaults-spelled"),
        pytest.param(["bm25", {"b": 0}], Bm25(1.2, 0.0), ["bm25", {"k1": 1.2, "b": 0.0}], id="b-only"),
        pytest.param(
            ["bm25", {"k1": 0, "b": 1}], Bm25(0.0, 1.0), ["bm25", {"k1": 0.0, "b": 1.0}], id="edges"
        ),
    ],
)
def test_bm25_options_are_optional_and_written_canonically(tree: Any, node: Bm25, canonical: Any) -> None:
    assert parse_rank(tree) == node
    assert to_tree(node) == canonical
    assert rank_hash(parse_rank(tree)) == rank_hash(parse_rank(canonical))


def test_boost_may_not_read_query_signals() -> None:
    assert "bm25" in check_boost(parse_rank(["bm25"]))[0].msg
    assert [d.loc for d in check_boost(parse_rank(RECIPE))] == [("boost", 1, 0, 2, 1)]
    assert (
        check_boost(parse_rank(["saturate", ["score", "importance"], {"midpoint": 5, "exponent": 1}])) == []
    )
    assert "similarity" in check_boost(parse_rank(["similarity"]))[0].msg


# --- hashing ---------------------------------------------------------------------------------


def test_rank_hash_is_stable_and_discriminating() -> None:
    digest = rank_hash(parse_rank(RECIPE))
    assert digest.startswith("sha256:") and len(digest) == len("sha256:") + 64
    decay = ["decay", ["age_hours", "occurred_at"], {"midpoint": 24, "exponent": 1}]
    reordered = ["decay", ["age_hours", "occurred_at"], {"exponent": 1.0, "midpoint": 24}]
    assert rank_hash(parse_rank(reordered)) == rank_hash(parse_rank(decay))
    assert rank_hash(parse_rank(["const", 1])) != rank_hash(parse_rank(["const", 2]))


# --- property: any valid tree round-trips ---------------------------------------------------

LEAVES = st.one_of(
    st.sampled_from([["similarity"], ["text_match"]]),
    st.builds(lambda n: ["score", n], st.from_regex(r"[a-z_][a-z0-9_]{0,8}", fullmatch=True)),
    st.builds(lambda f: ["age_hours", f], st.sampled_from(["created_at", "occurred_at", "last_accessed"])),
    st.builds(lambda x: ["const", x], st.floats(-1e6, 1e6) | st.integers(-1000, 1000)),
)
POSITIVE = st.floats(min_value=1e-3, max_value=1e4)


def trees(level: int = 1) -> st.SearchStrategy[list[Any]]:
    """Random valid trees at most 5 levels deep (node count filtered by the caller)."""
    if level == MAX_LEVELS:
        return LEAVES
    child = st.deferred(lambda: trees(level + 1))
    options = st.fixed_dictionaries({"midpoint": POSITIVE, "exponent": POSITIVE})
    return st.one_of(
        LEAVES,
        st.builds(
            lambda op, items: [op, items],
            st.sampled_from(["sum", "max"]),
            st.lists(child, min_size=1, max_size=3),
        ),
        st.builds(lambda f, c: ["product", f, c], st.floats(-10, 10), child),
        st.builds(lambda c: ["normalize", c], child),
        st.builds(lambda op, c, o: [op, c, o], st.sampled_from(["saturate", "decay"]), child, options),
    )


def count_nodes(tree: list[Any]) -> int:
    if tree[0] in ("sum", "max"):
        return 1 + sum(count_nodes(c) for c in tree[1])
    return 1 + sum(count_nodes(a) for a in tree[1:] if isinstance(a, list))


@settings(max_examples=150, deadline=None)
@given(trees().filter(lambda t: count_nodes(t) <= MAX_NODES))
def test_valid_trees_round_trip(tree: list[Any]) -> None:
    node = parse_rank(tree)
    assert parse_rank(to_tree(node)) == node
    assert rank_hash(parse_rank(to_tree(node))) == rank_hash(node)


# --- the shipped defaults -------------------------------------------------------------------

Pool = list[dict[str, float]]


def evaluate(node: RankNode, pool: Pool) -> list[float]:
    """A tiny reference evaluator of the spec's formulas (missing signals read as 0)."""
    return EVALUATORS[type(node)](node, pool)


def _normalize(node: Normalize, pool: Pool) -> list[float]:
    values = evaluate(node.child, pool)
    low, high = min(values), max(values)
    return [0.0 if high == low else (v - low) / (high - low) for v in values]


def _curve(shape: Callable[[float, float], float]) -> Callable[[Any, Pool], list[float]]:
    """`shape(x^e, m^e)` with x clamped at 0 first."""
    return lambda n, pool: [
        shape(max(0.0, x) ** n.exponent, n.midpoint**n.exponent) for x in evaluate(n.child, pool)
    ]


EVALUATORS: dict[type[RankNode], Callable[[Any, Pool], list[float]]] = {
    Similarity: lambda n, pool: [r.get("similarity", 0.0) for r in pool],
    TextMatch: lambda n, pool: [r.get("text_match", 0.0) for r in pool],
    Bm25: lambda n, pool: [r.get("bm25", 0.0) for r in pool],
    Score: lambda n, pool: [r.get(f"score:{n.name}", 0.0) for r in pool],
    AgeHours: lambda n, pool: [max(0.0, r.get(n.field, 0.0)) for r in pool],
    Const: lambda n, pool: [n.value] * len(pool),
    Sum: lambda n, pool: [sum(v) for v in zip(*(evaluate(c, pool) for c in n.children), strict=True)],
    Max: lambda n, pool: [max(v) for v in zip(*(evaluate(c, pool) for c in n.children), strict=True)],
    Product: lambda n, pool: [n.factor * v for v in evaluate(n.child, pool)],
    Normalize: _normalize,
    Saturate: _curve(lambda xe, me: xe / (xe + me)),
    Decay: _curve(lambda xe, me: 1 / (1 + xe / me)),
}


def test_every_operator_has_a_reference_evaluator() -> None:
    assert set(EVALUATORS) == set(OPERATORS.values())


def test_shipped_default_is_the_spec_default() -> None:
    default = load_rank_default(SHIPPED_RANK_DEFAULT)
    assert default.candidates == 200
    assert {mode: to_tree(node) for mode, node in default.variants.items()} == {
        "text": to_tree(parse_rank(["sum", [["product", 1.0, ["normalize", ["text_match"]]], RECENCY]])),
        "vector": to_tree(parse_rank(["sum", [["product", 1.0, ["normalize", ["similarity"]]], RECENCY]])),
        "hybrid": to_tree(parse_rank(HYBRID)),
        "recent": to_tree(
            parse_rank(["decay", ["age_hours", "occurred_at"], {"midpoint": 24, "exponent": 1}])
        ),
    }
    assert rank_hash(default) == rank_hash(RankDefault.model_validate(default.to_json()))


RECORD = st.fixed_dictionaries(
    {
        "similarity": st.floats(-1, 1),
        "text_match": st.floats(0, 50),
        "last_accessed": st.floats(0, 1e5),
        "occurred_at": st.floats(-100, 1e5),  # a future timestamp has a negative age: counts as 0
    }
)
# The spec's table: mode → the formula's own scale.
RANGES = [
    pytest.param(mode, high, id=mode)
    for mode, high in [("text", 2), ("vector", 2), ("hybrid", 2), ("recent", 1)]
]


@pytest.mark.parametrize(("mode", "high"), RANGES)
@settings(max_examples=60, deadline=None)
@given(pool=st.lists(RECORD, min_size=1, max_size=12))
def test_default_formulas_stay_in_the_spec_range(mode: str, high: float, pool: Pool) -> None:
    values = evaluate(load_rank_default(SHIPPED_RANK_DEFAULT).variants[mode], pool)  # type: ignore[index]
    assert all(-1e-9 <= v <= high + 1e-9 for v in values)


@pytest.mark.parametrize(("mode", "high"), RANGES)
def test_default_formulas_reach_both_ends_and_half_at_24_hours(mode: str, high: float) -> None:
    formula = load_rank_default(SHIPPED_RANK_DEFAULT).variants[mode]  # type: ignore[index]
    best = {"similarity": 0.9, "text_match": 3.0, "last_accessed": 0.0, "occurred_at": 0.0}
    day_old = {"similarity": 0.9, "text_match": 3.0, "last_accessed": 24.0, "occurred_at": 24.0}
    worst = {"similarity": -0.2, "text_match": 0.0, "last_accessed": 1e9, "occurred_at": 1e9}
    top, day, bottom = evaluate(formula, [best, day_old, worst])
    assert top == pytest.approx(high)
    assert day == pytest.approx(high - 0.5)  # the recency term is worth 0.5 after 24 hours
    assert bottom == pytest.approx(0, abs=1e-6)


def test_hybrid_default_uses_all_five_levels() -> None:
    hybrid = load_rank_default(SHIPPED_RANK_DEFAULT).variants["hybrid"]
    assert max(len(path) for path in _paths(hybrid)) == MAX_LEVELS


def _paths(node: RankNode, path: tuple[RankNode, ...] = ()) -> list[tuple[RankNode, ...]]:
    """Every root-to-node path of the tree."""
    path = (*path, node)
    return [path] + [p for _, child in node.parts() for p in _paths(child, path)]


# --- invalid defaults -----------------------------------------------------------------------

TEXT_ONLY = ["normalize", ["text_match"]]
INVALID_DEFAULTS = [
    pytest.param(
        {"candidates": 200, "variants": {"text": TEXT_ONLY}}, ("variants", "vector"), id="variant-missing"
    ),
    pytest.param(
        {"candidates": 0, "variants": dict.fromkeys(["text", "vector", "hybrid", "recent"], ["const", 1])},
        ("candidates",),
        id="candidates-zero",
    ),
    pytest.param(
        {"candidates": 1001, "variants": dict.fromkeys(["text", "vector", "hybrid", "recent"], ["const", 1])},
        ("candidates",),
        id="candidates-1001",
    ),
    pytest.param(
        {
            "candidates": 200,
            "variants": {
                "text": ["similarity"],
                "vector": ["similarity"],
                "hybrid": ["similarity"],
                "recent": ["const", 1],
            },
        },
        ("variants", "text"),
        id="similarity-in-text-default",
    ),  # fmt: skip
    pytest.param(
        {
            "candidates": 200,
            "variants": {
                "text": ["foo"],
                "vector": ["const", 1],
                "hybrid": ["const", 1],
                "recent": ["const", 1],
            },
        },
        ("variants", "text", 0),
        id="unknown-operator-in-default",
    ),  # fmt: skip
    pytest.param(
        {
            "candidates": 200,
            "weights": {},
            "variants": dict.fromkeys(["text", "vector", "hybrid", "recent"], ["const", 1]),
        },
        ("weights",),
        id="unknown-key",
    ),
]


@pytest.mark.parametrize(("data", "loc"), INVALID_DEFAULTS)
def test_invalid_rank_defaults(tmp_path: Path, data: dict[str, Any], loc: tuple[Any, ...]) -> None:
    path = tmp_path / "rank_default.yaml"
    path.write_text(json.dumps(data))
    with pytest.raises(RequestInvalid) as caught:
        load_rank_default(path)
    assert loc in [d.loc for d in caught.value.details]
    assert str(path) in caught.value.message


def test_rank_default_that_is_not_yaml(tmp_path: Path) -> None:
    path = tmp_path / "rank_default.yaml"
    path.write_text("variants: [unclosed")
    with pytest.raises(RequestInvalid, match="not valid YAML"):
        load_rank_default(path)
