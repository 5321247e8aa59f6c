"""The rank expression language (spec "The expression language"): each operator at its documented
arity, the node and depth limits, query signals only in their modes, every value finite, and
`GET /rank/schema` with the formulas actually active.
"""

from __future__ import annotations

from typing import Any

import pytest
import yaml
from flask import Flask

from memseek.paths import reference_catalog
from tests.blackbox.support import COMBINED
from tests.blackbox.support import ids
from tests.blackbox.support import invalid
from tests.blackbox.support import note
from tests.blackbox.support import rejected_at
from tests.blackbox.support import rejects
from tests.blackbox.support import search
from tests.blackbox.support import values
from tests.blackbox.support import vec
from tests.blackbox.support import write
from tests.conftest import Client
from tests.helpers import error
from tests.helpers import ok

# --- the grammar ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("mode", "signal"),
    [("text", "similarity"), ("recent", "similarity"), ("vector", "text_match"), ("recent", "text_match")],
)
def test_query_signals_only_in_their_modes(sx: Client, mode: str, signal: str) -> None:
    rejects(sx, {"mode": mode, "q": "x", "scope": {"collections": ["sx_vec"]}, "rank": [signal]}, "rank")


def test_sixteen_nodes_and_five_levels(sx: Client) -> None:
    fifteen_leaves = ["sum", [["const", 1]] * 15]
    assert values(sx, fifteen_leaves) == []
    write(sx, note())
    assert values(sx, fifteen_leaves) == [15.0]
    err = rejects(sx, {"mode": "recent", "rank": ["sum", [["const", 1]] * 16]})
    assert err["details"][0]["loc"][0] == "rank"
    five = ["sum", [["max", [["product", 1, ["normalize", ["const", 1]]]]]]]
    assert values(sx, five) == [0.0]
    six = ["sum", [["max", [["product", 1, ["normalize", ["product", 1, ["const", 1]]]]]]]]
    err = rejects(sx, {"mode": "recent", "rank": six})
    assert err["details"][0]["loc"][0] == "rank"


IMP = ["score", "importance"]


@pytest.mark.parametrize(
    "rank",
    [
        pytest.param(["pow", IMP, 2], id="unknown-operator"),
        pytest.param([], id="empty"),
        pytest.param("const", id="not-a-list"),
        pytest.param(["const"], id="missing-argument"),
        pytest.param(["const", 1, 2], id="extra-argument"),
        pytest.param(["const", "1"], id="number-as-string"),
        pytest.param(["const", True], id="boolean"),
        pytest.param(["sum", []], id="empty-sum"),
        pytest.param(["sum", IMP], id="sum-of-a-signal"),
        pytest.param(["product", "x", IMP], id="factor"),
        pytest.param(["saturate", IMP], id="options-required"),
        pytest.param(["saturate", IMP, {"midpoint": 5}], id="exponent-required"),
        pytest.param(["decay", IMP, {"exponent": 1}], id="midpoint-required"),
        pytest.param(["decay", IMP, {"midpoint": 0, "exponent": 1}], id="midpoint-positive"),
        pytest.param(["decay", IMP, {"midpoint": 5, "exponent": -1}], id="exponent-positive"),
        pytest.param(["decay", IMP, {"midpoint": 5, "exponent": 1, "floor": 0}], id="unknown-option"),
        pytest.param(["age_hours", "updated_at"], id="age-field"),
        pytest.param(["score"], id="score-name-missing"),
    ],
)
def test_invalid_expressions(sx: Client, rank: Any) -> None:
    rejects(sx, {"mode": "recent", "scope": {"collections": ["sx_notes"]}, "rank": rank})


def test_every_value_must_be_finite(sx: Client) -> None:
    write(sx, note(scores={"importance": 1e308}))
    rejects(sx, {"mode": "recent", "rank": ["product", 1e308, IMP]})


def test_rank_expression_limits(sx: Client) -> None:
    """ "At most 16 nodes and 5 levels deep\""""
    deep: Any = ["const", 1]
    for _ in range(5):
        deep = ["sum", [deep]]
    rejected_at(sx, {"mode": "recent", "rank": deep}, "rank")
    wide = ["sum", [["const", i] for i in range(16)]]
    rejected_at(sx, {"mode": "recent", "rank": wide}, "rank")
    rejected_at(
        sx,
        {"mode": "recent", "rank": ["decay", ["age_hours", "occurred_at"], {"midpoint": 0, "exponent": 1}]},
        "rank",
    )


CURVE = {"midpoint": 5, "exponent": 1}
X = ["const", 1]
ACCEPTED = [
    pytest.param(["similarity"], id="similarity"),
    pytest.param(["text_match"], id="text_match"),
    pytest.param(["score", "importance"], id="score"),
    pytest.param(["age_hours", "created_at"], id="age_hours-created_at"),
    pytest.param(["age_hours", "occurred_at"], id="age_hours-occurred_at"),
    pytest.param(["age_hours", "last_accessed"], id="age_hours-last_accessed"),
    pytest.param(["const", -2.5], id="const"),
    pytest.param(["sum", [X]], id="sum-of-one"),
    pytest.param(["sum", [X, X, X]], id="sum-of-three"),
    pytest.param(["max", [X, ["score", "importance"]]], id="max"),
    pytest.param(["product", -0.5, X], id="product"),
    pytest.param(["normalize", ["score", "importance"]], id="normalize"),
    pytest.param(["saturate", X, CURVE], id="saturate"),
    pytest.param(["decay", ["age_hours", "occurred_at"], {"midpoint": 168, "exponent": 2}], id="decay"),
]


def hybrid(rank: Any) -> dict[str, Any]:
    """A hybrid search of `sx_vec` (both query signals computed) ranked by `rank`."""
    return {"mode": "hybrid", "q": "alpha", "scope": {"collections": ["sx_vec"]}, "rank": rank}


@pytest.mark.parametrize("node", ACCEPTED)
def test_each_operator_is_accepted_at_its_documented_arity(sx: Client, node: list[Any]) -> None:
    """Spec, "The expression language": every node is `[operator, argument, ...]`, with the
    signals `[similarity]`, `[text_match]`, `[score, name]`, `[age_hours, field]` (created_at,
    occurred_at or last_accessed), `[const, n]` and the shapers `[sum, [a, b, ...]]`,
    `[max, [a, b, ...]]`, `[product, factor, a]`, `[normalize, a]`,
    `[saturate, a, {midpoint: m, exponent: e}]`, `[decay, a, {midpoint: m, exponent: e}]`."""
    write(sx, vec("alpha beta"))
    body = search(sx, hybrid(["sum", [["const", 0], node]]))
    assert len(body["hits"]) == 1 and body["ranking"]["kind"] == "rank_expression"


NODE = ["rank", 1, 1]
"""Where the operator under test sits: `[sum, [[const, 0], <node>]]`."""
REJECTED = [
    pytest.param(["similarity", 1], id="similarity-with-an-argument"),
    pytest.param(["text_match", "budget"], id="text_match-with-an-argument"),
    pytest.param(["score"], id="score-without-a-name"),
    pytest.param(["score", "importance", "urgency"], id="score-with-two-names"),
    pytest.param(["age_hours"], id="age_hours-without-a-field"),
    pytest.param(["age_hours", "occurred_at", "created_at"], id="age_hours-with-two-fields"),
    pytest.param(["const"], id="const-without-a-number"),
    pytest.param(["const", 1, 2], id="const-with-two-numbers"),
    pytest.param(["sum"], id="sum-without-children"),
    pytest.param(["sum", [X], [X]], id="sum-with-two-lists"),
    pytest.param(["sum", X, X], id="sum-of-bare-nodes"),
    pytest.param(["max"], id="max-without-children"),
    pytest.param(["max", []], id="max-of-an-empty-list"),
    pytest.param(["product", 2], id="product-without-a-child"),
    pytest.param(["product", 2, X, X], id="product-with-two-children"),
    pytest.param(["product", X, 2], id="product-arguments-swapped"),
    pytest.param(["normalize"], id="normalize-without-a-child"),
    pytest.param(["normalize", X, X], id="normalize-with-two-children"),
    pytest.param(["saturate", X], id="saturate-without-options"),
    pytest.param(["saturate", X, CURVE, CURVE], id="saturate-with-extra-options"),
    pytest.param(["saturate", X, {"midpoint": 5, "exponent": 0}], id="saturate-exponent-0"),
    pytest.param(["decay", X], id="decay-without-options"),
    pytest.param(["decay", CURVE, X], id="decay-arguments-swapped"),
    pytest.param(["decay", X, {"midpoint": -1, "exponent": 1}], id="decay-midpoint-negative"),
    pytest.param(["decay", X, {"exponent": 1}], id="decay-midpoint-missing"),
]


@pytest.mark.parametrize("node", REJECTED)
def test_each_operator_outside_its_arity_is_refused_at_the_node(sx: Client, node: list[Any]) -> None:
    """Spec: the operators' forms as in the tables; "both options are required and must be
    positive". Design §3: `details` items carry "a `loc` (JSON path)" — the path of the node
    that is wrong (or of its argument)."""
    err = invalid(sx.post("/search", json=hybrid(["sum", [["const", 0], node]])))
    locs = [d["loc"] for d in err["details"]]
    assert locs and all(loc[: len(NODE)] == NODE for loc in locs), locs


def test_the_spec_recipe_is_one_valid_tree(sx: Client) -> None:
    """Spec, "The recipe": the three-term formula (relevance, half an importance term, freshness)
    is a valid `rank` for a text search, as written."""
    recipe = [
        "sum",
        [
            ["product", 1.0, ["normalize", ["text_match"]]],
            ["product", 0.5, ["saturate", ["score", "importance"], {"midpoint": 5, "exponent": 1}]],
            ["product", 1.0, ["decay", ["age_hours", "occurred_at"], {"midpoint": 168, "exponent": 1}]],
        ],
    ]
    (record,) = write(sx, note("budget", scores={"importance": 5}))
    assert ids(search(sx, {"mode": "text", "q": "budget", "rank": recipe})) == [record]


@pytest.mark.parametrize("signal", ["similarity", "text_match"])
def test_a_boost_reading_a_query_signal_is_refused_at_that_node(sx: Client, signal: str) -> None:
    """Spec: "boost is an optional expression applied after merging. It may use stored scores,
    record age, and constants, but not query-specific signals like similarity"."""
    boost = ["sum", [["const", 1], ["product", 2, [signal]]]]
    err = invalid(sx.post("/search", json={**COMBINED, "boost": boost}))
    assert [d["loc"][:4] for d in err["details"]] == [["boost", 1, 1, 2]], err["details"]


def test_a_boost_of_scores_ages_and_constants_runs(sx: Client) -> None:
    """Spec: boost "may use stored scores, record age, and constants"; "The final value is
    RRF(record) * max(0, boost(record))"."""
    (record,) = write(sx, note(scores={"importance": 3}))
    boost = ["sum", [["score", "importance"], ["decay", ["age_hours", "occurred_at"], CURVE], ["const", 1]]]
    body = search(sx, {**COMBINED, "boost": boost})
    assert ids(body) == [record] and body["ranking"]["kind"] == "rrf"


def test_a_source_rank_problem_is_located_inside_that_source(sx: Client) -> None:
    """Spec: "Each source takes its own mode, scope, where, order_by, rank, params, and k";
    design §3: `loc` is the JSON path of the problem."""
    sources = [COMBINED["sources"][0], {**COMBINED["sources"][1], "rank": ["sum", [X, ["normalize"]]]}]
    err = invalid(sx.post("/search", json={**COMBINED, "sources": sources}))
    assert [d["loc"][:5] for d in err["details"]] == [["sources", 1, "rank", 1, 1]], err["details"]


NOTES = {"collections": ["sx_notes"]}


@pytest.mark.parametrize(
    "rank",
    [
        pytest.param(["sum", [["const", 1e308], ["const", 1e308]]], id="sum-overflows"),
        pytest.param(["sum", [IMP, IMP]], id="sum-of-scores-overflows"),
        pytest.param(["max", [["const", 0], ["product", -10, ["const", 1e308]]]], id="hidden-by-max"),
    ],
)
def test_a_value_that_is_not_finite_is_refused(sx: Client, rank: Any) -> None:
    """ "Every value produced must be finite" with the error table's "The request … is invalid |
    `422`" — never a 500, never a silently clamped value."""
    write(sx, note(scores={"importance": 1.5e308}))
    err = rejects(sx, {"mode": "recent", "scope": NOTES, "rank": rank})
    assert err["details"][0]["loc"][0] == "rank"


# --- GET /rank/schema -----------------------------------------------------------------------------


def test_rank_schema(sx: Client) -> None:
    schema = sx.get("/rank/schema").get_json()
    assert {"grammar", "defaults"} <= schema.keys()
    names = {op["name"] for op in schema["grammar"]["operators"]}
    assert names == {
        "similarity",
        "text_match",
        "bm25",  # beside the spec's signals (docs/search.md, "BM25")
        "score",
        "age_hours",
        "const",
        "sum",
        "max",
        "product",
        "normalize",
        "saturate",
        "decay",
    }
    bm25 = next(op for op in schema["grammar"]["operators"] if op["name"] == "bm25")
    assert bm25["syntax"] == "[bm25, {k1: 1.2, b: 0.75}]"
    assert bm25["modes"] == ["hybrid", "recent", "text", "vector"]  # 0 outside text and hybrid
    assert not bm25["in_boost"]
    assert schema["limits"] == {"max_nodes": 16, "max_levels": 5}
    shipped = yaml.safe_load((reference_catalog() / "conf" / "rank_default.yaml").read_text())
    for mode in ("hybrid", "vector", "text", "recent"):
        assert schema["defaults"]["variants"][mode] == shipped["variants"][mode]
    assert schema["defaults"]["hash"]
    assert "pg_default" in schema["engines"]


# the variants of the `ag6` test catalog's conf/rank_default.yaml
AG6_VARIANTS = {
    "hybrid": ["max", [["similarity"], ["text_match"]]],
    "vector": ["similarity"],
    "text": ["text_match"],
    "recent": ["sum", [["product", 2.0, ["score", "importance"]], ["const", 1]]],
}


def test_rank_schema_reports_the_catalogs_own_default_and_search_uses_it(ag6: Client, sx: Client) -> None:
    """Spec: "A catalog can publish its own conf/rank_default.yaml and replace these ... Check
    GET /rank/schema for the formulas actually active on your deployment"; it "returns the
    grammar, the active defaults and their hash". Design §3: the file "holds `candidates` and one
    tree per mode under `variants`"."""
    mine, reference = ok(ag6.get("/rank/schema")), ok(sx.get("/rank/schema"))
    defaults = mine["defaults"]
    assert {mode: defaults["variants"][mode] for mode in AG6_VARIANTS} == AG6_VARIANTS
    assert defaults["candidates"] == 150
    assert defaults["hash"] and defaults["hash"] != reference["defaults"]["hash"]
    assert mine["grammar"] == reference["grammar"] and mine["limits"] == reference["limits"]
    write(ag6, note(scores={"importance": 3}))
    (hit,) = search(ag6, {"mode": "recent", "scope": {"collections": ["sx_notes"]}})["hits"]
    assert hit["rank_score"] == pytest.approx(2.0 * 3 + 1)


def test_rank_schema_is_stable_between_calls(sx: Client) -> None:
    """Spec: GET /rank/schema returns "the active defaults and their hash" — one hash for one
    loaded default."""
    assert ok(sx.get("/rank/schema")) == ok(sx.get("/rank/schema"))


def test_rank_schema_route(bv: Client, bv_app: Flask) -> None:
    """ "Inspect the deployment's ranking contract — GET /rank/schema", authenticated."""
    assert isinstance(ok(bv.get("/rank/schema")), dict)
    error(bv_app.test_client().get("/rank/schema"), 401)
