"""Rank expressions evaluated (spec "Rank expressions", "How to read score", "Ordering and ties"):
every operator on signals the test controls, and the default formulas of each mode.

Expected values are computed by hand from the spec's formulas. Ages come from `occurred_at` far in
the past with midpoints of the same size, so the seconds a test takes move a value by less than 1e-7.
"""

from __future__ import annotations

from datetime import UTC
from datetime import datetime
from typing import Any

import pytest

from tests.blackbox.support import ago
from tests.blackbox.support import at
from tests.blackbox.support import ids
from tests.blackbox.support import note
from tests.blackbox.support import recent_body
from tests.blackbox.support import rejects
from tests.blackbox.support import search
from tests.blackbox.support import values
from tests.blackbox.support import vec
from tests.blackbox.support import write
from tests.conftest import Client

# --- operators ------------------------------------------------------------------------------------


IMP = ["score", "importance"]


def importances(client: Client, *scores: float | None) -> None:
    write(
        client,
        *(note(f"n{i:02}", scores={} if s is None else {"importance": s}) for i, s in enumerate(scores)),
    )


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


def test_rank_replaces_the_default_formula_entirely(sx: Client) -> None:
    low, high = write(
        sx,
        note(scores={"importance": 1}, occurred_at=ago(1)),
        note(scores={"importance": 2}, occurred_at=ago(500)),
    )
    assert ids(search(sx, {"mode": "recent"})) == [low, high]  # default: newest wins
    assert ids(search(sx, {"mode": "recent", "rank": IMP})) == [high, low]


# --- signals --------------------------------------------------------------------------------------


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


# --- the default formulas -------------------------------------------------------------------------


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


# --- decay and saturate of real ages --------------------------------------------------------------


HOURS = 100_000.0
"""A midpoint in hours (about 11 years): a few seconds of test time change nothing visible."""
NOTES = {"collections": ["sx_notes"]}


def by_text(client: Client, body: dict[str, Any]) -> dict[str, float]:
    """rank_score of every hit of `body` (a search asking for `text`), keyed by text."""
    answer = search(client, {"k": 100, "include": ["text"], **body})
    return {hit["text"]: hit["rank_score"] for hit in answer["hits"]}


def ranked_recent(client: Client, rank: Any, **extra: Any) -> dict[str, float]:
    """rank_score by text of a recent search over sx_notes ranked by `rank`."""
    return by_text(client, {"mode": "recent", "scope": NOTES, "rank": rank, **extra})


@pytest.mark.parametrize(
    ("shaper", "exponent", "age", "expected"),
    [
        pytest.param("decay", 1, HOURS, 0.5, id="decay-midpoint-e1"),
        pytest.param("decay", 2, HOURS, 0.5, id="decay-midpoint-e2"),
        pytest.param("decay", 1, 2 * HOURS, 1 / 3, id="decay-2m-e1"),
        pytest.param("decay", 2, 2 * HOURS, 1 / 5, id="decay-2m-e2"),
        pytest.param("decay", 3, HOURS / 2, 8 / 9, id="decay-half-m-e3"),
        pytest.param("decay", 0.5, 2 * HOURS, 1 / (1 + 2**0.5), id="decay-2m-e0.5"),
        pytest.param("saturate", 1, HOURS, 0.5, id="saturate-midpoint-e1"),
        pytest.param("saturate", 1, 2 * HOURS, 2 / 3, id="saturate-2m-e1"),
        pytest.param("saturate", 2, 2 * HOURS, 4 / 5, id="saturate-2m-e2"),
        pytest.param("saturate", 0.5, 4 * HOURS, 2 / 3, id="saturate-4m-e0.5"),
    ],
)
def test_decay_and_saturate_of_age_hours(
    sx: Client, shaper: str, exponent: float, age: float, expected: float
) -> None:
    """ "`[decay, a, {midpoint: m, exponent: e}]` | `1 / (1 + x^e / m^e)` → 1 down to 0, passing 0.5
    at `x = m`" and "`[saturate, a, {midpoint: m, exponent: e}]` | `x^e / (x^e + m^e)`", with
    "`[age_hours, field]` | Hours since `created_at`, `occurred_at`, or `last_accessed`"."""
    write(sx, note("old", occurred_at=ago(age)))
    rank = [shaper, ["age_hours", "occurred_at"], {"midpoint": HOURS, "exponent": exponent}]
    assert ranked_recent(sx, rank) == {"old": pytest.approx(expected, abs=1e-7)}


@pytest.mark.parametrize(
    ("occurred_at", "utc"),
    [
        pytest.param("2000-01-01T00:00:00Z", datetime(2000, 1, 1, tzinfo=UTC), id="utc"),
        pytest.param("2000-01-01T00:00:00+05:30", datetime(1999, 12, 31, 18, 30, tzinfo=UTC), id="offset"),
        pytest.param("1970-01-01T00:00:00.5Z", datetime(1970, 1, 1, 0, 0, 0, 500000, tzinfo=UTC), id="epoch"),
    ],
)
def test_age_hours_is_hours_since_the_instant(sx: Client, occurred_at: str, utc: datetime) -> None:
    """ "`[age_hours, field]` | Hours since `created_at`, `occurred_at`, or `last_accessed`": the age
    of a fixed past instant lies between the hours counted before and after the request."""
    write(sx, note("fixed", occurred_at=occurred_at))
    before = (datetime.now(UTC) - utc).total_seconds() / 3600
    age = ranked_recent(sx, ["age_hours", "occurred_at"])["fixed"]
    after = (datetime.now(UTC) - utc).total_seconds() / 3600
    assert before - 1e-6 <= age <= after + 1e-6


def test_a_future_occurred_at_decays_from_exactly_1(sx: Client) -> None:
    """ "A future timestamp counts as 0" and decay "→ 1 down to 0": decay of age 0 is exactly 1,
    saturate of it exactly 0, whatever the options."""
    write(sx, note("future", occurred_at=ago(-10 * HOURS)))
    age = ["age_hours", "occurred_at"]
    assert ranked_recent(sx, ["decay", age, {"midpoint": 0.001, "exponent": 7}]) == {"future": 1.0}
    assert ranked_recent(sx, ["saturate", age, {"midpoint": 0.001, "exponent": 0.1}]) == {"future": 0.0}


# --- normalize over the ranked candidate pool -----------------------------------------------------


def scored(client: Client, *scores: dict[str, float]) -> None:
    """One note per `scores` mapping, texts r0, r1, …, oldest first (occurred_at July 1, 2, …)."""
    write(client, *(note(f"r{i}", scores=s, occurred_at=at(i + 1)) for i, s in enumerate(scores)))


def test_normalize_of_a_single_candidate_is_0_and_its_score_1(sx: Client) -> None:
    """ "`[normalize, a]` | … If every candidate ties, all become 0" — one candidate ties with
    itself — and "if every candidate ties, every result scores 1.0"."""
    scored(sx, {"importance": 7})
    body = search(sx, {"mode": "recent", "scope": NOTES, "rank": ["normalize", IMP]})
    assert [(h["rank_score"], h["score"]) for h in body["hits"]] == [(0.0, 1.0)]


def test_normalize_reads_only_the_candidates_params_candidates_proposes(sx: Client) -> None:
    """ "`[normalize, a]` | `(x - min) / (max - min)` across the current candidates" with recent's
    "Newest first, then reordered by the formula": with candidates 2 the oldest record (importance
    1) is never a candidate, so min is 5, not 1."""
    scored(sx, {"importance": 1}, {"importance": 9}, {"importance": 5})
    values = ranked_recent(sx, ["normalize", IMP], params={"candidates": 2})
    assert values == {"r1": 1.0, "r2": 0.0}


def test_normalize_reads_only_records_the_filters_keep(sx: Client) -> None:
    """ "across the current candidates": a record `where` excludes sets neither bound."""
    write(
        sx,
        note("low", scores={"importance": -100}, content={"channel": "b"}),
        note("mid", scores={"importance": 4}, content={"channel": "a"}),
        note("top", scores={"importance": 10}, content={"channel": "a"}),
        note("none", content={"channel": "a"}),
    )
    values = ranked_recent(sx, ["normalize", IMP], where={"channel": {"eq": "a"}})
    assert values == {"mid": pytest.approx(0.4), "top": 1.0, "none": 0.0}


def test_normalize_with_negative_and_missing_scores(sx: Client) -> None:
    """ "Any missing signal is 0" — inside normalize too, so a record without the score sits at 0
    between a negative and a positive one: (x - (-3)) / (5 - (-3))."""
    scored(sx, {"importance": -3}, {"importance": 5}, {})
    assert ranked_recent(sx, ["normalize", IMP]) == {"r0": 0.0, "r1": 1.0, "r2": pytest.approx(3 / 8)}


URG = ["score", "urgency"]
NESTED = [
    pytest.param(
        ["normalize", ["sum", [["normalize", IMP], ["normalize", URG]]]],
        {"r0": 1.0, "r1": 0.2, "r2": 0.0, "r3": 0.6},
        id="normalize-of-a-sum-of-normalized",
    ),
    pytest.param(
        ["sum", [["product", 2, ["normalize", IMP]], ["product", -1, ["normalize", URG]]]],
        {"r0": -1 / 3, "r1": 4 / 3, "r2": -0.5, "r3": 2.0},
        id="weighted-difference",
    ),
    pytest.param(
        ["max", [["normalize", IMP], ["normalize", URG]]],
        {"r0": 1.0, "r1": 2 / 3, "r2": 0.5, "r3": 1.0},
        id="max-of-normalized",
    ),
    pytest.param(
        ["decay", ["product", 3, ["normalize", IMP]], {"midpoint": 1, "exponent": 2}],
        {"r0": 1 / 2, "r1": 1 / 5, "r2": 1.0, "r3": 1 / 10},
        id="decay-of-a-weighted-normalize",
    ),
]


@pytest.mark.parametrize(("rank", "expected"), NESTED)
def test_nested_normalize(sx: Client, rank: Any, expected: dict[str, float]) -> None:
    """ "`[normalize, a]` | `(x - min) / (max - min)` across the current candidates", nested inside
    sum, product, max and decay and around them. importance 2, 4, —, 6 normalize to 1/3, 2/3, 0, 1;
    urgency 10, 0, 5, — to 1, 0, 1/2, 0."""
    scored(
        sx,
        {"importance": 2, "urgency": 10},
        {"importance": 4, "urgency": 0},
        {"urgency": 5},
        {"importance": 6},
    )
    assert ranked_recent(sx, rank) == pytest.approx(expected, abs=1e-12)


# --- max, sum and product with missing signals and negative values --------------------------------


@pytest.mark.parametrize(
    ("rank", "expected"),
    [
        pytest.param(
            ["max", [["product", -1, IMP], ["const", -5]]],
            {"r0": -2.0, "r1": 0.0, "r2": -5.0},
            id="max-missing-beats-negative",
        ),
        pytest.param(["max", [URG, ["const", -1]]], {"r0": 0.0, "r1": 0.0, "r2": 0.0}, id="max-nobody-has"),
        pytest.param(["max", [IMP]], {"r0": 2.0, "r1": 0.0, "r2": 7.0}, id="max-of-one"),
        pytest.param(["sum", [IMP]], {"r0": 2.0, "r1": 0.0, "r2": 7.0}, id="sum-of-one"),
        pytest.param(
            ["sum", [IMP, ["const", -2.5], ["product", -0.5, IMP]]],
            {"r0": -1.5, "r1": -2.5, "r2": 1.0},
            id="sum-negative-terms",
        ),
        pytest.param(
            ["product", -1, ["max", [IMP, ["const", 3]]]],
            {"r0": -3.0, "r1": -3.0, "r2": -7.0},
            id="penalty-of-a-max",
        ),
        pytest.param(
            ["saturate", ["sum", [IMP, ["const", -4]]], {"midpoint": 3, "exponent": 1}],
            {"r0": 0.0, "r1": 0.0, "r2": 0.5},
            id="saturate-clamps-a-negative-sum",
        ),
        pytest.param(
            ["decay", ["product", -1, IMP], {"midpoint": 3, "exponent": 1}],
            {"r0": 1.0, "r1": 1.0, "r2": 1.0},
            id="decay-clamps-a-penalty",
        ),
    ],
)
def test_shapers_with_missing_and_negative_values(sx: Client, rank: Any, expected: dict[str, float]) -> None:
    """ "Any missing signal is 0 … rather than dropping the record", "`[max, [a, b, ...]]` | Takes
    the largest child", "`[sum, …]` | Adds the children", "a negative factor makes it a penalty",
    "saturate and decay clamp their input at 0 first". importance 2, —, 7."""
    scored(sx, {"importance": 2}, {}, {"importance": 7})
    assert ranked_recent(sx, rank) == pytest.approx(expected, abs=1e-12)


def test_min_is_not_an_operator(sx: Client) -> None:
    """The shapers are sum, max, product, normalize, saturate and decay ("Two kinds of node"); a
    `min` node is an invalid request."""
    write(sx, note())
    err = rejects(sx, {"mode": "recent", "scope": NOTES, "rank": ["min", [IMP, ["const", 1]]]})
    assert err["details"][0]["loc"][0] == "rank"


def test_a_zero_factor_ties_every_record_at_the_top(sx: Client) -> None:
    """ "`[product, factor, a]` | Multiplies by a fixed number" and "if every candidate ties, every
    result scores 1.0"; the order then falls to "occurred_at descending"."""
    scored(sx, {"importance": 3}, {"importance": -8}, {})
    body = search(sx, {"mode": "recent", "scope": NOTES, "rank": ["product", 0, IMP], "include": ["text"]})
    assert [(h["text"], h["rank_score"], h["score"]) for h in body["hits"]] == [
        ("r2", 0.0, 1.0),
        ("r1", 0.0, 1.0),
        ("r0", 0.0, 1.0),
    ]


def test_order_and_score_follow_negative_values(sx: Client) -> None:
    """ "results are ordered by internal value descending" and "score = (u - low) / (high - low)":
    values -1, -4, -10 (a penalty on importance) score 1, 6/9 … 0."""
    scored(sx, {"importance": 10}, {"importance": 1}, {"importance": 4})
    body = search(
        sx, {"mode": "recent", "scope": NOTES, "rank": ["product", -1, IMP], "include": ["text"], "k": 2}
    )
    assert [(h["text"], h["rank_score"], h["score"]) for h in body["hits"]] == [
        ("r1", -1.0, 1.0),
        ("r2", -4.0, pytest.approx(6 / 9)),
    ]


# --- query signals: each shaper applied -----------------------------------------------------------


def raw(client: Client, body: dict[str, Any], signal: str) -> dict[str, float]:
    return by_text(client, {**body, "rank": [signal]})


def test_text_match_shaped_in_text_mode(sx: Client) -> None:
    """ "`[normalize, a]` | `(x - min) / (max - min)` across the current candidates" and
    "`[saturate …]` | `x^e / (x^e + m^e)`" applied to "`[text_match]`" of the same candidates."""
    write(
        sx,
        note("budget report draft"),
        note("budget notes"),
        note("quarterly budget report review"),
        note("report"),
    )
    body = {"mode": "text", "q": "budget report", "scope": NOTES}
    tm = raw(sx, body, "text_match")
    assert len(set(tm.values())) >= 2, tm
    low, high = min(tm.values()), max(tm.values())
    assert by_text(sx, {**body, "rank": ["normalize", ["text_match"]]}) == pytest.approx(
        {t: (x - low) / (high - low) for t, x in tm.items()}, abs=1e-6
    )
    m = sorted(tm.values())[len(tm) // 2]
    shaped = by_text(sx, {**body, "rank": ["saturate", ["text_match"], {"midpoint": m, "exponent": 2}]})
    # ts_rank_cd is a float4: allow its precision, not more
    assert shaped == pytest.approx({t: x**2 / (x**2 + m**2) for t, x in tm.items()}, abs=1e-6)


VEC = {"collections": ["sx_vec"]}


def test_hybrid_signals_shaped(sx: Client) -> None:
    """ "hybrid takes whichever of the two is stronger per record": `[max, [[similarity],
    [text_match]]]` is the larger of the two signals per record, `normalize` spans the hybrid pool
    (where a record proposed without a keyword match reads text_match 0), and decay clamps a
    negative similarity at 0."""
    write(
        sx,
        vec("alpha beta gamma"),
        vec("alpha alpha delta"),
        vec("epsilon zeta"),
        vec("omega theta alpha beta"),
    )
    body = {"mode": "hybrid", "q": "alpha beta", "scope": VEC}
    sim, tm = raw(sx, body, "similarity"), raw(sx, body, "text_match")
    assert sim.keys() == tm.keys() and len(sim) == 4
    both = by_text(sx, {**body, "rank": ["max", [["similarity"], ["text_match"]]]})
    assert both == pytest.approx({t: max(sim[t], tm[t]) for t in sim}, abs=1e-9)
    low, high = min(tm.values()), max(tm.values())
    normalized = by_text(sx, {**body, "rank": ["normalize", ["text_match"]]})
    assert normalized == pytest.approx({t: (x - low) / (high - low) for t, x in tm.items()}, abs=1e-9)
    decayed = by_text(sx, {**body, "rank": ["decay", ["similarity"], {"midpoint": 0.5, "exponent": 1}]})
    assert decayed == pytest.approx({t: 1 / (1 + max(0.0, x) / 0.5) for t, x in sim.items()}, abs=1e-9)


# --- the same tree in SQL (rank) and in Python (combined boost) -----------------------------------


BOOST_TREES = [
    pytest.param(
        [
            "sum",
            [
                ["product", 0.5, ["normalize", IMP]],
                ["saturate", URG, {"midpoint": 4, "exponent": 2}],
                ["decay", ["age_hours", "occurred_at"], {"midpoint": HOURS, "exponent": 1}],
                ["max", [["score", "nobody_has_this"], ["const", 0.25]]],
            ],
        ],
        id="recipe-like",
    ),
    pytest.param(["normalize", ["sum", [["normalize", IMP], ["normalize", URG]]]], id="nested-normalize"),
    pytest.param(["max", [["product", -1, IMP], ["const", 0.5], URG]], id="max-with-missing"),
    pytest.param(["decay", ["product", -1, IMP], {"midpoint": 2, "exponent": 3}], id="decay-clamped"),
]


@pytest.mark.parametrize("tree", BOOST_TREES)
def test_boost_evaluates_a_tree_like_rank_does(sx: Client, tree: Any) -> None:
    """Combined searches: "boost is an optional expression applied after merging. It may use stored
    scores, record age, and constants" and "The final value is RRF(record) * max(0, boost(record))",
    with RRF = weight / (rank_constant + rank_in_source). The boost's node semantics are those of a
    rank expression, so boost = rank_score · (60 + source rank) equals the same tree's rank_score in
    a recent search over the same records (every tree here is non-negative)."""
    write(
        sx,
        note("a", scores={"importance": 2, "urgency": 8}, occurred_at=ago(HOURS)),
        note("b", scores={"importance": -3}, occurred_at=ago(2 * HOURS)),
        note("c", scores={"urgency": 1}, occurred_at=ago(HOURS / 3)),
        note("d", scores={"importance": 6, "urgency": 4}, occurred_at=ago(5 * HOURS)),
    )
    direct = ranked_recent(sx, tree)
    assert len(direct) == 4
    body = search(
        sx,
        {
            "sources": [{"name": "s", "mode": "recent", "scope": NOTES, "rank": ["const", 1]}],
            "fuse": {"kind": "rrf", "rank_constant": 60},
            "boost": tree,
            "include": ["text"],
        },
    )
    boosted = {h["text"]: h["rank_score"] * (60 + h["source_ranks"]["s"]) for h in body["hits"]}
    assert boosted == pytest.approx(direct, abs=1e-7)


@pytest.mark.parametrize(
    "boost",
    [
        pytest.param(
            ["max", [["const", 1], ["product", -10, ["const", 1e308]]]],
            id="minus-inf-hidden-by-max",
        ),
        pytest.param(
            ["sum", [["product", 10, ["const", 1e308]], ["product", -10, ["const", 1e308]], ["const", 1]]],
            id="inf-minus-inf",
        ),
        pytest.param(["sum", [["const", 1e308], ["const", 1e308], ["const", -1e308]]], id="sum-overflows"),
    ],
)
def test_a_boost_producing_a_value_that_is_not_finite_is_refused(sx: Client, boost: Any) -> None:
    """ "Every value produced must be finite" applies to a boost as to a rank (the error table's
    `422`): the same tree is refused at `rank` in a single search, so it is refused at `boost` —
    not clamped to 0 by max(0, …) nor hidden by a max node."""
    write(sx, note())
    rejects(sx, {"mode": "recent", "scope": NOTES, "rank": boost}, "rank")
    body = {
        "sources": [{"name": "s", "mode": "recent", "scope": NOTES}],
        "fuse": {"kind": "rrf"},
        "boost": boost,
    }
    rejects(sx, body, "boost")


def test_a_normalize_over_an_unspannable_range_still_runs_0_to_1(sx: Client) -> None:
    """docs/search.md "Values a float cannot hold" (issue 45: two valid writes must not deny search
    to a workspace): scores of ±1e308 are finite, so `normalize` spans them, in a rank as in a
    boost, on halved values; the top record normalises to 1 and the bottom one to 0."""
    up, down = write(
        sx, note("up", scores={"importance": 1e308}), note("down", scores={"importance": -1e308})
    )
    hits = search(sx, {"mode": "recent", "scope": NOTES, "rank": ["normalize", IMP]})["hits"]
    assert [(hit["id"], hit["rank_score"]) for hit in hits] == [(up, 1.0), (down, 0.0)]
    body = {
        "sources": [{"name": "s", "mode": "recent", "scope": NOTES}],
        "fuse": {"kind": "rrf"},
        "boost": ["normalize", IMP],
    }
    assert [hit["id"] for hit in search(sx, body)["hits"]][0] == up


# --- extreme values -------------------------------------------------------------------------------


def ranked(client: Client, rank: Any) -> list[float]:
    """The rank_score of each hit of a recent search ranked by `rank`."""
    return [hit["rank_score"] for hit in search(client, recent_body(rank=rank))["hits"]]


def test_const_keeps_tiny_and_huge_finite_values(sx: Client) -> None:
    """ "`[const, n]` | A fixed number": a tiny and a huge finite n come back as rank_score."""
    write(sx, note())
    assert ranked(sx, ["const", 1e-300]) == [1e-300]
    assert ranked(sx, ["const", 1e308]) == [1e308]
    assert ranked(sx, ["const", -(2**70)]) == [float(-(2**70))]


def test_decay_at_its_midpoint_is_half_whatever_the_exponent(sx: Client) -> None:
    """ "`[decay, a, {midpoint: m, exponent: e}]` | `1 / (1 + x^e / m^e)` → 1 down to 0, passing 0.5
    at `x = m`": with a huge exponent x^e alone would overflow, the value is still 0.5."""
    write(sx, note(scores={"importance": 5}))
    assert ranked(sx, ["decay", IMP, {"midpoint": 5, "exponent": 1000}]) == [pytest.approx(0.5)]
    assert ranked(sx, ["saturate", IMP, {"midpoint": 5, "exponent": 1000}]) == [pytest.approx(0.5)]


def test_a_tiny_midpoint_and_exponent(sx: Client) -> None:
    """ "`[saturate, a, {midpoint: m, exponent: e}]` | `x^e / (x^e + m^e)`" and "saturate and decay
    clamp their input at 0 first, and both options are required and must be positive": tiny
    positive options are valid; x = 0 saturates to 0, any x far above m to ~1."""
    write(sx, note(scores={"importance": 1}, occurred_at=at(2)), note(scores={}, occurred_at=at(1)))
    values = ranked(sx, ["saturate", IMP, {"midpoint": 1e-300, "exponent": 2}])
    assert values == [pytest.approx(1.0), 0.0]
    values = ranked(sx, ["decay", IMP, {"midpoint": 1, "exponent": 1e-300}])
    assert values == [1.0, pytest.approx(0.5)]


def test_min_max_over_the_widest_finite_range_tops_at_1(sx: Client) -> None:
    """ "score = (u - low) / (high - low)" and "the top hit always scores 1.0": rank_scores of
    1e308 and -1e308 are both finite; the top one scores 1 and the bottom one 0."""
    write(sx, note(scores={"importance": 1}), note(scores={"importance": -1}))
    body = search(sx, recent_body(rank=["product", 1e308, IMP]))
    assert [hit["rank_score"] for hit in body["hits"]] == [1e308, -1e308]
    assert [hit["score"] for hit in body["hits"]] == [1.0, 0.0]


@pytest.mark.parametrize(
    ("rank", "expected"),
    [
        pytest.param(["saturate", IMP, {"midpoint": 1, "exponent": 2}], [1.0, 0.0], id="saturate-huge-x"),
        pytest.param(["decay", IMP, {"midpoint": 1, "exponent": 2}], [1.0, 0.0], id="decay-huge-x"),
    ],
)
def test_shapers_at_the_edges_of_the_float_range(sx: Client, rank: Any, expected: list[float]) -> None:
    """ "`[normalize, a]` | `(x - min) / (max - min)` across the current candidates → 0–1" (whose
    results, 1 and 0, are finite: "Every value produced must be finite"),
    "`[saturate …]` | `x^e / (x^e + m^e)` → 0 up to 1" and "`[decay …]` | `1 / (1 + x^e / m^e)` → 1
    down to 0": with inputs of ±1e300 the values are (close to) the ends of 0–1."""
    write(
        sx,
        note(scores={"importance": 1e300}, occurred_at=at(2)),
        note(scores={"importance": -1e300}, occurred_at=at(1)),
    )
    assert sorted(ranked(sx, rank), reverse=True) == [pytest.approx(v) for v in expected]
