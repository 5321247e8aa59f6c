"""Conformance audit, the rank expression language's arithmetic: every operator evaluated on signals
the test controls, against the spec's "Rank expressions", "How to read score" and "Ordering and ties".

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
from tests.blackbox.support import note
from tests.blackbox.support import rejects
from tests.blackbox.support import search
from tests.blackbox.support import vec
from tests.blackbox.support import write
from tests.conftest import Client

NOTES = {"collections": ["sx_notes"]}
VEC = {"collections": ["sx_vec"]}
IMP = ["score", "importance"]
URG = ["score", "urgency"]
HOURS = 100_000.0
"""A midpoint in hours (about 11 years): a few seconds of test time change nothing visible."""


def by_text(client: Client, body: dict[str, Any]) -> dict[str, float]:
    """rank_score of every hit of `body` (a search asking for `text`), keyed by text."""
    answer = search(client, {"k": 100, "include": ["text"], **body})
    return {hit["text"]: hit["rank_score"] for hit in answer["hits"]}


def recent(client: Client, rank: Any, **extra: Any) -> dict[str, float]:
    """rank_score by text of a recent search over sx_notes ranked by `rank`."""
    return by_text(client, {"mode": "recent", "scope": NOTES, "rank": rank, **extra})


def scored(client: Client, *scores: dict[str, float]) -> None:
    """One note per `scores` mapping, texts r0, r1, …, oldest first (occurred_at July 1, 2, …)."""
    write(client, *(note(f"r{i}", scores=s, occurred_at=at(i + 1)) for i, s in enumerate(scores)))


# --- decay and saturate of real ages -----------------------------------------------------------------


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
    assert recent(sx, rank) == {"old": pytest.approx(expected, abs=1e-7)}


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
    age = recent(sx, ["age_hours", "occurred_at"])["fixed"]
    after = (datetime.now(UTC) - utc).total_seconds() / 3600
    assert before - 1e-6 <= age <= after + 1e-6


def test_a_future_occurred_at_decays_from_exactly_1(sx: Client) -> None:
    """ "A future timestamp counts as 0" and decay "→ 1 down to 0": decay of age 0 is exactly 1,
    saturate of it exactly 0, whatever the options."""
    write(sx, note("future", occurred_at=ago(-10 * HOURS)))
    age = ["age_hours", "occurred_at"]
    assert recent(sx, ["decay", age, {"midpoint": 0.001, "exponent": 7}]) == {"future": 1.0}
    assert recent(sx, ["saturate", age, {"midpoint": 0.001, "exponent": 0.1}]) == {"future": 0.0}


# --- normalize over the ranked candidate pool ------------------------------------------------------


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
    values = recent(sx, ["normalize", IMP], params={"candidates": 2})
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
    values = recent(sx, ["normalize", IMP], where={"channel": {"eq": "a"}})
    assert values == {"mid": pytest.approx(0.4), "top": 1.0, "none": 0.0}


def test_normalize_with_negative_and_missing_scores(sx: Client) -> None:
    """ "Any missing signal is 0" — inside normalize too, so a record without the score sits at 0
    between a negative and a positive one: (x - (-3)) / (5 - (-3))."""
    scored(sx, {"importance": -3}, {"importance": 5}, {})
    assert recent(sx, ["normalize", IMP]) == {"r0": 0.0, "r1": 1.0, "r2": pytest.approx(3 / 8)}


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
    assert recent(sx, rank) == pytest.approx(expected, abs=1e-12)


# --- max, sum and product with missing signals and negative values ----------------------------------


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
    assert recent(sx, rank) == pytest.approx(expected, abs=1e-12)


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


# --- query signals: each shaper applied to the values the signal reads -----------------------------


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


# --- the finite-value rule ------------------------------------------------------------------------


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


# --- the same tree in SQL (rank) and in Python (combined boost) ------------------------------------


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
    direct = recent(sx, tree)
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
    ranked = search(sx, {"mode": "recent", "scope": NOTES, "rank": ["normalize", IMP]})["hits"]
    assert [(hit["id"], hit["rank_score"]) for hit in ranked] == [(up, 1.0), (down, 0.0)]
    body = {
        "sources": [{"name": "s", "mode": "recent", "scope": NOTES}],
        "fuse": {"kind": "rrf"},
        "boost": ["normalize", IMP],
    }
    assert [hit["id"] for hit in search(sx, body)["hits"]][0] == up
