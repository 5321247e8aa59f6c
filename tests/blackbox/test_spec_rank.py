"""Spec "Rank expressions": every signal and shaper evaluated exactly through `rank` on known data."""

from __future__ import annotations

from typing import Any

import pytest
import yaml

from memseek.paths import reference_catalog
from tests.blackbox.support import ago
from tests.blackbox.support import ids
from tests.blackbox.support import note
from tests.blackbox.support import rejects
from tests.blackbox.support import search
from tests.blackbox.support import vec
from tests.blackbox.support import write
from tests.conftest import Client

IMP = ["score", "importance"]


def importances(client: Client, *scores: float | None) -> None:
    write(
        client,
        *(note(f"n{i:02}", scores={} if s is None else {"importance": s}) for i, s in enumerate(scores)),
    )


def values(client: Client, rank: Any, mode: str = "recent", **extra: Any) -> list[float]:
    """rank_score of every hit, in written order of the `i` content field."""
    body = search(client, {"mode": mode, "rank": rank, "k": 100, "include": ["text"], **extra})
    return [hit["rank_score"] for hit in sorted(body["hits"], key=lambda h: h["text"])]


@pytest.mark.parametrize(
    ("rank", "expected"),
    [
        pytest.param(["const", 2.5], [2.5, 2.5, 2.5, 2.5], id="const"),
        pytest.param(["const", -1], [-1.0] * 4, id="const-negative"),
        pytest.param(IMP, [2.0, 5.0, 9.0, 0.0], id="score-missing-is-0"),
        pytest.param(["score", "urgency"], [0.0] * 4, id="score-nobody-has"),
        pytest.param(["score", "importanse"], [0.0] * 4, id="score-typo-at-runtime-is-0"),
        pytest.param(["sum", [IMP, ["const", 1]]], [3.0, 6.0, 10.0, 1.0], id="sum"),
        pytest.param(["max", [IMP, ["const", 4]]], [4.0, 5.0, 9.0, 4.0], id="max"),
        pytest.param(["product", 0.5, IMP], [1.0, 2.5, 4.5, 0.0], id="product"),
        pytest.param(["product", -2, IMP], [-4.0, -10.0, -18.0, -0.0], id="product-penalty"),
        pytest.param(["normalize", IMP], [2 / 9, 5 / 9, 1.0, 0.0], id="normalize"),
        pytest.param(["normalize", ["const", 3]], [0.0] * 4, id="normalize-ties-are-0"),
        pytest.param(
            ["saturate", IMP, {"midpoint": 5, "exponent": 1}], [2 / 7, 0.5, 9 / 14, 0.0], id="saturate"
        ),
        pytest.param(
            ["saturate", IMP, {"midpoint": 5, "exponent": 2}],
            [4 / 29, 0.5, 81 / 106, 0.0],
            id="saturate-exponent",
        ),
        pytest.param(["decay", IMP, {"midpoint": 5, "exponent": 1}], [5 / 7, 0.5, 5 / 14, 1.0], id="decay"),
        pytest.param(
            ["decay", IMP, {"midpoint": 5, "exponent": 2}], [25 / 29, 0.5, 25 / 106, 1.0], id="decay-exponent"
        ),
        pytest.param(
            ["decay", IMP, {"midpoint": 0.5, "exponent": 0.5}],
            [1 / 3, 1 / (1 + 10**0.5), 1 / (1 + 18**0.5), 1.0],
            id="decay-fractional",
        ),
    ],
)
def test_operators_evaluate_exactly(sx: Client, rank: Any, expected: list[float]) -> None:
    importances(sx, 2, 5, 9, None)
    assert values(sx, rank) == pytest.approx(expected)


def test_saturate_and_decay_clamp_their_input_at_0(sx: Client) -> None:
    importances(sx, -4, 0)
    assert values(sx, ["saturate", IMP, {"midpoint": 5, "exponent": 1}]) == [0.0, 0.0]
    assert values(sx, ["decay", IMP, {"midpoint": 5, "exponent": 1}]) == [1.0, 1.0]


def test_the_recipe(sx: Client) -> None:
    write(
        sx,
        note("budget budget", scores={"importance": 5}, occurred_at=ago(168)),
        note("budget", scores={"importance": 10}, occurred_at=ago(-1)),
    )
    rank = [
        "sum",
        [
            ["product", 1.0, ["normalize", ["text_match"]]],
            ["product", 0.5, ["saturate", IMP, {"midpoint": 5, "exponent": 1}]],
            ["product", 1.0, ["decay", ["age_hours", "occurred_at"], {"midpoint": 168, "exponent": 1}]],
        ],
    ]
    body = search(sx, {"mode": "text", "q": "budget", "rank": rank, "include": ["text"]})
    by_text = {h["text"]: h["rank_score"] for h in body["hits"]}
    assert by_text["budget budget"] == pytest.approx(1.0 + 0.25 + 0.5, abs=1e-4)
    assert by_text["budget"] == pytest.approx(0.0 + 0.5 * 2 / 3 + 1.0, abs=1e-9)


@pytest.mark.parametrize(
    ("hours", "expected"),
    [
        pytest.param(24, 0.5, id="midpoint"),
        pytest.param(72, 0.25, id="three-midpoints"),
        pytest.param(-48, 1.0, id="future-counts-as-0"),
    ],
)
def test_age_hours_of_occurred_at(sx: Client, hours: float, expected: float) -> None:
    write(sx, note(occurred_at=ago(hours)))
    (decayed,) = values(sx, ["decay", ["age_hours", "occurred_at"], {"midpoint": 24, "exponent": 1}])
    assert decayed == pytest.approx(expected, abs=1e-4)
    (age,) = values(sx, ["age_hours", "occurred_at"])
    assert age == pytest.approx(max(0.0, hours), abs=0.05)


@pytest.mark.parametrize("field", ["created_at", "last_accessed"])
def test_age_hours_of_fresh_records_is_near_0(sx: Client, field: str) -> None:
    write(sx, note(occurred_at=ago(1000)))
    (age,) = values(sx, ["age_hours", field])
    assert 0.0 <= age < 0.05


def test_text_match_is_ts_rank_cd_and_0_without_a_match_in_hybrid(sx: Client) -> None:
    write(sx, vec("budget budget budget"), vec("budget and more words here"), vec("unrelated"))
    body = search(
        sx,
        {
            "mode": "hybrid",
            "q": "budget",
            "rank": ["text_match"],
            "include": ["text"],
            "scope": {"collections": ["sx_vec"]},
        },
    )
    by_text = {h["text"]: h["rank_score"] for h in body["hits"]}
    assert by_text["budget budget budget"] > by_text["budget and more words here"] > 0
    assert by_text.get("unrelated", 0.0) == 0.0


def test_similarity_is_one_minus_cosine_distance(sx: Client) -> None:
    write(sx, vec("alpha beta"), vec("gamma delta"))
    body = search(
        sx,
        {
            "mode": "vector",
            "q": "alpha beta",
            "rank": ["similarity"],
            "include": ["text"],
            "scope": {"collections": ["sx_vec"]},
        },
    )
    by_text = {h["text"]: h["rank_score"] for h in body["hits"]}
    assert by_text["alpha beta"] == pytest.approx(1.0, abs=1e-6)
    assert abs(by_text["gamma delta"]) < 0.5


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


def test_rank_replaces_the_default_formula_entirely(sx: Client) -> None:
    low, high = write(
        sx,
        note(scores={"importance": 1}, occurred_at=ago(1)),
        note(scores={"importance": 2}, occurred_at=ago(500)),
    )
    assert ids(search(sx, {"mode": "recent"})) == [low, high]  # default: newest wins
    assert ids(search(sx, {"mode": "recent", "rank": IMP})) == [high, low]


def test_recent_default_is_d24_of_occurred_at(sx: Client) -> None:
    write(sx, note(occurred_at=ago(24)))
    (hit,) = search(sx, {"mode": "recent"})["hits"]
    assert hit["rank_score"] == pytest.approx(0.5, abs=1e-4)


def test_text_default_of_the_reference_catalog_adds_normalized_importance(sx: Client) -> None:
    write(sx, note("budget", scores={"importance": 9}), note("budget", scores={"importance": 1}))
    body = search(sx, {"mode": "text", "q": "budget", "include": ["scores"]})
    # equal text_match normalizes to 0; fresh last_accessed decays to ~1; N(importance) is 1 and 0
    assert [h["scores"]["importance"] for h in body["hits"]] == [9, 1]
    assert [h["rank_score"] for h in body["hits"]] == [
        pytest.approx(2.0, abs=1e-3),
        pytest.approx(1.0, abs=1e-3),
    ]


def test_rank_schema(sx: Client) -> None:
    schema = sx.get("/rank/schema").get_json()
    assert {"grammar", "defaults"} <= schema.keys()
    names = {op["name"] for op in schema["grammar"]["operators"]}
    assert names == {
        "similarity",
        "text_match",
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
    assert schema["limits"] == {"max_nodes": 16, "max_levels": 5}
    shipped = yaml.safe_load((reference_catalog() / "conf" / "rank_default.yaml").read_text())
    for mode in ("hybrid", "vector", "text", "recent"):
        assert schema["defaults"]["variants"][mode] == shipped["variants"][mode]
    assert schema["defaults"]["hash"]
    assert "pg_default" in schema["engines"]
