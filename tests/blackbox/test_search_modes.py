"""The five modes and the query, field by field (spec "Modes", "The query, field by field",
"Advanced query knobs"): what each mode ranks by, `q`, `k` and `params.candidates` with their
bounds and defaults, and the request's strictness.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.blackbox.conftest import ClientFactory
from tests.blackbox.support import SCORED_RANKING
from tests.blackbox.support import ago
from tests.blackbox.support import at
from tests.blackbox.support import ids
from tests.blackbox.support import note
from tests.blackbox.support import recent
from tests.blackbox.support import recent_body
from tests.blackbox.support import rejected_at
from tests.blackbox.support import rejects
from tests.blackbox.support import search
from tests.blackbox.support import vec
from tests.blackbox.support import write
from tests.conftest import Client
from tests.openai_server import hashed_embedding

# --- the five modes -------------------------------------------------------------------------------


NOTES = {"collections": ["sx_notes"]}


@pytest.mark.parametrize("mode", ["vector", "text", "hybrid", "recent", "structured"])
def test_the_five_modes(sx: Client, mode: str) -> None:
    body: dict[str, Any] = {"mode": mode}
    if mode in ("vector", "text", "hybrid"):
        body["q"] = "budget"
    if mode == "structured":
        body["order_by"] = [{"field": "amount"}]
        body["scope"] = NOTES
    if mode in ("vector", "hybrid"):
        body["scope"] = {"collections": ["sx_vec"]}
    assert search(sx, body)["hits"] == []


def test_text_mode_ranks_more_distinct_query_words_higher(sx: Client) -> None:
    """`text`: "Find records containing these words." Matching full-text rows only; the top hit
    scores 1.0, and the lowest candidate of the pool sets score 0."""
    one, two, three, _none = write(
        sx, note("apple pie"), note("apple and banana"), note("apple banana cherry"), note("durian only")
    )
    body = search(sx, {"mode": "text", "q": "apple banana cherry", "scope": NOTES})
    assert ids(body) == [three, two, one]
    scores = [hit["score"] for hit in body["hits"]]
    assert scores[0] == 1.0 and scores[-1] == 0.0
    assert scores[0] > scores[1] > scores[2]
    assert body["ranking"] == {"kind": "rank_expression", **SCORED_RANKING}


VEC = {"collections": ["sx_vec"]}


def cosine(a: list[float], b: list[float]) -> float:
    return sum(x * y for x, y in zip(a, b, strict=True))


def test_vector_mode_orders_by_similarity_and_scores_min_max(sx: Client) -> None:
    """`vector`: N(similarity) + D24(age(last_accessed)) (+ N(importance), all missing here); the
    public score is (u - low) / (high - low) over the ranked pool."""
    texts = ["alpha beta", "alpha gamma", "delta epsilon"]
    written = write(sx, *(vec(t) for t in texts))
    query = hashed_embedding("alpha beta", 384)
    sims = [cosine(query, hashed_embedding(t, 384)) for t in texts]
    body = search(sx, {"mode": "vector", "q": "alpha beta", "scope": VEC})
    order = sorted(range(3), key=lambda i: -sims[i])
    assert ids(body) == [written[i] for i in order]
    low, high = min(sims), max(sims)
    for hit, i in zip(body["hits"], order, strict=True):
        assert hit["score"] == pytest.approx((sims[i] - low) / (high - low), abs=1e-3)
    # The top record: normalized similarity 1 plus a recency term of ~1 (just written).
    assert body["hits"][0]["rank_score"] == pytest.approx(2.0, abs=1e-3)


def test_hybrid_mode_blends_meaning_and_words(sx: Client) -> None:
    """`hybrid`: N(max(similarity, text_match)) + D24(...): the record holding every query word comes
    first, one holding some of them next."""
    both, some, _other = write(sx, vec("alpha beta"), vec("alpha zeta"), vec("omega"))
    body = search(sx, {"mode": "hybrid", "q": "alpha beta", "scope": VEC})
    assert ids(body)[:2] == [both, some]
    assert body["ranking"] == {"kind": "rank_expression", **SCORED_RANKING}


def test_recent_mode_scores_by_occurred_at_decay(sx: Client) -> None:
    """`recent`: D24(age(occurred_at)); "A future timestamp counts as 0." Values 1, ~1, 0.5, 0.25
    give public scores 1, ~1, 1/3, 0."""
    old, day, now, future = write(
        sx,
        note("old", occurred_at=ago(72)),
        note("day", occurred_at=ago(24)),
        note("now"),
        note("f", occurred_at=ago(-5)),
    )
    body = recent(sx)
    assert ids(body) == [future, now, day, old]
    raw = [hit["rank_score"] for hit in body["hits"]]
    assert raw[0] == 1.0
    assert raw[1] == pytest.approx(1.0, abs=1e-3)
    assert raw[2] == pytest.approx(0.5, abs=1e-3)
    assert raw[3] == pytest.approx(0.25, abs=1e-3)
    scores = [hit["score"] for hit in body["hits"]]
    assert scores[0] == 1.0 and scores[3] == 0.0
    assert scores[2] == pytest.approx(1 / 3, abs=1e-3)


def test_structured_mode_returns_no_scores(sx: Client) -> None:
    """Structured: `{"ranking": {"kind": "structured", "scored": false}}`, score null, and "There is
    no rank_score either"."""
    write(sx, note(content={"amount": 1}), note(content={"amount": 2}))
    body = search(sx, {"mode": "structured", "scope": NOTES, "order_by": [{"field": "amount"}]})
    assert body["ranking"] == {"kind": "structured", "scored": False}
    for hit in body["hits"]:
        assert hit["score"] is None
        assert "rank_score" not in hit


@pytest.mark.parametrize(
    ("extra", "loc"),
    [
        pytest.param({}, ("order_by",), id="order-by-required"),
        pytest.param({"order_by": [{"field": "tags"}]}, None, id="not-sortable"),
        pytest.param({"order_by": [{"field": "nope"}]}, None, id="undeclared"),
        pytest.param({"order_by": [{"field": "amount", "direction": "up"}]}, None, id="bad-direction"),
        pytest.param(
            {"order_by": [{"field": "amount"}], "rank": ["const", 1]}, ("rank",), id="rank-not-allowed"
        ),
    ],
)
def test_structured_mode_needs_order_by_and_no_custom_ranking(
    sx: Client, extra: dict[str, Any], loc: tuple[str, ...] | None
) -> None:
    """ "`structured` ... `order_by` is required and custom ranking is not allowed"; "The field must
    be declared sortable in the collection.\""""
    body = {"mode": "structured", "scope": NOTES, **extra}
    if loc is None:
        rejects(sx, body)
    else:
        rejects(sx, body, *loc)


def test_hybrid_takes_the_stronger_of_similarity_and_text_match(sx: Client) -> None:
    """hybrid: `N(max(similarity, text_match)) + D24(age(last_accessed))`. "alpha" vs itself has
    similarity 1; "alpha gamma" 1/sqrt(2) (above its keyword rank); "omega" shares nothing."""
    texts = ["alpha", "alpha gamma", "omega"]
    written_ids = write(sx, *(vec(t) for t in texts))
    query = hashed_embedding("alpha", 384)
    strengths = [max(cosine(query, hashed_embedding(t, 384)), 0.0) for t in texts]
    body = search(sx, {"mode": "hybrid", "q": "alpha", "scope": VEC})
    assert ids(body) == written_ids
    low, high = min(strengths), max(strengths)
    for hit, value in zip(body["hits"], strengths, strict=True):
        assert hit["score"] == pytest.approx((value - low) / (high - low), abs=1e-3)


@pytest.mark.parametrize("mode", ["vector", "hybrid"])
def test_meaning_modes_need_embeddings_on_the_collection(sx: Client, mode: str) -> None:
    """ "`vector` ... Needs: Embeddings generated on the collection"; hybrid needs "Both of the above".
    sx_notes declares no embedding."""
    rejects(sx, {"mode": mode, "q": "alpha", "scope": NOTES})


def test_text_mode_is_english_full_text(sx: Client) -> None:
    """text_match is "PostgreSQL ts_rank_cd over English full-text search": stems match."""
    (runs,) = write(sx, note("she runs every morning"))
    assert ids(search(sx, {"mode": "text", "q": "running", "scope": NOTES})) == [runs]


def test_post_search_text_mode_over_post_records(sx: Client) -> None:
    (record,) = write(sx, note("budget talk"))
    assert ids(sx.post("/search", json={"q": "budget", "mode": "text"}).get_json()) == [record]


def test_text_mode_matches_any_english_lexeme(sx: Client) -> None:
    budget, _other = write(sx, note("Maria confirmed the Q3 budgets."), note("Nothing relevant here."))
    assert ids(sx.post("/search", json={"q": "budget elephants", "mode": "text"}).get_json()) == [budget]
    assert ids(sx.post("/search", json={"q": "confirming", "mode": "text"}).get_json()) == [budget]
    assert sx.post("/search", json={"q": "the", "mode": "text"}).get_json()["hits"] == []


def test_hybrid_candidates_include_the_newest_records(sx: Client) -> None:
    match, newest = write(sx, vec("budget review", occurred_at="2026-01-01T00:00:00Z"), vec("lunch plans"))
    body = sx.post("/search", json={"q": "budget", "mode": "hybrid"}).get_json()
    assert ids(body)[0] == match and set(ids(body)) == {match, newest}


IMP = ["score", "importance"]


def test_recent_proposes_the_newest_first(sx: Client) -> None:
    """ "`recent` | Newest first, then reordered by the formula" and "params.candidates … how many
    records the search engine proposes before ranking": with one candidate, the newest record is
    the only one ranked, though an older one scores higher."""
    _, newest = write(
        sx,
        note(scores={"importance": 9}, occurred_at=at(1)),
        note(scores={"importance": 1}, occurred_at=at(3)),
    )
    assert ids(search(sx, recent_body(rank=IMP, params={"candidates": 1}))) == [newest]


# --- the query, field by field --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("body", "loc"),
    [
        pytest.param({}, ("mode",), id="mode-required"),
        pytest.param({"mode": "semantic"}, ("mode",), id="unknown-mode"),
        pytest.param({"mode": "recent", "limit": 3}, ("limit",), id="unknown-key"),
        pytest.param(
            {"mode": "recent", "scope": {"collection": ["sx_notes"]}},
            ("scope", "collection"),
            id="unknown-scope-key",
        ),
        pytest.param({"mode": "recent", "Mode": "recent"}, ("Mode",), id="keys-are-case-sensitive"),
    ],
)
def test_the_request_is_strict(sx: Client, body: dict[str, Any], loc: tuple[str, ...]) -> None:
    rejects(sx, body, *loc)


def test_a_body_that_is_not_an_object_is_rejected(sx: Client) -> None:
    rejects(sx, [{"mode": "recent"}])  # type: ignore[arg-type]
    response = sx.post("/search", data="not json", headers={"Content-Type": "application/json"})
    assert response.status_code in (400, 422)


@pytest.mark.parametrize("mode", ["vector", "text", "hybrid"])
@pytest.mark.parametrize("q", [None, "", "   "], ids=["absent", "empty", "blank"])
def test_q_is_required_and_non_empty_for_query_modes(sx: Client, mode: str, q: str | None) -> None:
    body: dict[str, Any] = {"mode": mode, "scope": {"collections": ["sx_vec"]}}
    if q is not None:
        body["q"] = q
    rejects(sx, body, "q")


def test_q_is_ignored_by_recent_and_structured(sx: Client) -> None:
    (record,) = write(sx, note("something else", content={"amount": 1}))
    assert ids(search(sx, {"mode": "recent", "q": "unrelated words", "scope": NOTES})) == [record]
    body = {"mode": "structured", "q": "unrelated", "order_by": [{"field": "amount"}], "scope": NOTES}
    assert ids(search(sx, body)) == [record]


def test_q_is_at_most_max_query_chars(sx: Client, sx_with: ClientFactory) -> None:
    assert search(sx, {"mode": "text", "q": "a" * 8192})["hits"] == []
    rejects(sx, {"mode": "text", "q": "a" * 8193}, "q")
    small = sx_with(max_query_chars=10)
    assert search(small, {"mode": "text", "q": "b" * 10})["hits"] == []
    rejects(small, {"mode": "text", "q": "b" * 11}, "q")
    rejects(small, {"mode": "recent", "q": "b" * 11}, "q")


def test_k_defaults_to_20(sx: Client) -> None:
    write(sx, *(note(f"n{i}") for i in range(25)))
    assert len(search(sx, {"mode": "recent"})["hits"]) == 20


@pytest.mark.parametrize("k", [1, 7, 100])
def test_k_between_1_and_100(sx: Client, k: int) -> None:
    write(sx, *(note(f"n{i}") for i in range(min(k + 2, 102))))
    body = search(sx, {"mode": "recent", "k": k})
    assert len(body["hits"]) == k
    assert [h["rank"] for h in body["hits"]] == list(range(1, k + 1))


@pytest.mark.parametrize("k", [0, -1, 101, 1.5, "5", True, None])
def test_k_out_of_range_or_not_an_integer(sx: Client, k: Any) -> None:
    rejects(sx, {"mode": "recent", "k": k}, "k")


def test_render_defaults_to_false(sx: Client) -> None:
    write(sx, note())
    body = search(sx, {"mode": "recent"})
    assert body["rendered"] is None and body["truncated"] is False


@pytest.mark.parametrize("render", [False, None])
def test_fence_needs_render(sx: Client, render: bool | None) -> None:
    body: dict[str, Any] = {"mode": "recent", "fence": {"tag": "records"}}
    if render is not None:
        body["render"] = render
    rejects(sx, body, "fence")


@pytest.mark.parametrize(
    ("extra", "loc"),
    [
        pytest.param({}, ("order_by",), id="order-by-required"),
        pytest.param({"order_by": []}, ("order_by",), id="order-by-non-empty"),
        pytest.param({"order_by": [{"field": "amount"}], "rank": ["const", 1]}, ("rank",), id="no-rank"),
        pytest.param(
            {"order_by": [{"field": "amount", "direction": "up"}]},
            ("order_by", 0, "direction"),
            id="direction",
        ),
        pytest.param({"order_by": [{"field": "tags"}]}, ("order_by", 0, "field"), id="not-sortable"),
        pytest.param({"order_by": [{"field": "nope"}]}, ("order_by", 0, "field"), id="undeclared"),
    ],
)
def test_structured_mode_rules(sx: Client, extra: dict[str, Any], loc: tuple[Any, ...]) -> None:
    rejects(sx, {"mode": "structured", "scope": NOTES, **extra}, *loc)


@pytest.mark.parametrize("mode", ["text", "recent"])
def test_order_by_belongs_to_structured_mode(sx: Client, mode: str) -> None:
    rejects(sx, {"mode": mode, "q": "x", "scope": NOTES, "order_by": [{"field": "amount"}]}, "order_by")


def test_order_by_direction_defaults_to_asc(sx: Client) -> None:
    big, small = write(sx, note(content={"amount": 9}), note(content={"amount": 1}))
    body = {"mode": "structured", "scope": NOTES, "order_by": [{"field": "amount"}]}
    assert ids(search(sx, body)) == [small, big]


@pytest.mark.parametrize("mode", ["vector", "text", "hybrid"])
@pytest.mark.parametrize("q", [None, ""], ids=["absent", "empty"])
def test_query_modes_need_a_non_empty_q(sx: Client, mode: str, q: str | None) -> None:
    """ "vector, text, and hybrid all require a non-empty query string q.\""""
    body: dict[str, Any] = {"mode": mode, "scope": VEC}
    if q is not None:
        body["q"] = q
    rejects(sx, body, "q")


@pytest.mark.parametrize("body", [{}, {"mode": "fuzzy"}, {"mode": None}], ids=["absent", "unknown", "null"])
def test_mode_is_required_and_one_of_the_five(sx: Client, body: dict[str, Any]) -> None:
    """ "mode (required) — one of the modes above.\""""
    rejects(sx, body, "mode")


def test_q_length_default_and_deployment_limit(sx: Client, sx_with: ClientFactory) -> None:
    """ "q — the query text, up to 8,192 characters by default"; MAX_QUERY_CHARS governs it."""
    assert search(sx, {"mode": "text", "q": "x" * 8192, "scope": NOTES})["hits"] == []
    rejects(sx, {"mode": "text", "q": "x" * 8193, "scope": NOTES}, "q")
    small = sx_with(max_query_chars=5)
    assert search(small, {"mode": "text", "q": "abcde", "scope": NOTES})["hits"] == []
    rejects(small, {"mode": "text", "q": "abcdef", "scope": NOTES}, "q")


def test_q_is_ignored_by_a_structured_listing(sx: Client) -> None:
    """ "ignored by a pure structured listing"."""
    (record,) = write(sx, note("nothing alike", content={"count": 1}))
    body = search(sx, {"mode": "structured", "q": "zebra", "scope": NOTES, "order_by": [{"field": "count"}]})
    assert ids(body) == [record]


def test_k_default_20(sx: Client) -> None:
    """ "k (default 20, between 1 and 100)"."""
    write(sx, *(note(f"n{i}") for i in range(23)))
    body = recent(sx)
    assert len(body["hits"]) == 20
    assert [hit["rank"] for hit in body["hits"]] == list(range(1, 21))


@pytest.mark.parametrize(("k", "good"), [(1, True), (100, True), (0, False), (101, False), (-3, False)])
def test_k_bounds(sx: Client, k: int, good: bool) -> None:
    """ "k (default 20, between 1 and 100) — how many results to return.\""""
    write(sx, note("a"), note("b"))
    if good:
        assert len(recent(sx, k=k)["hits"]) == min(k, 2)
    else:
        rejects(sx, {"mode": "recent", "k": k}, "k")


def test_unknown_keys_are_rejected(sx: Client) -> None:
    """ "the result is parsed as a strict search request — an unknown key is an error\""""
    rejects(sx, {"mode": "recent", "limit": 5}, "limit")


def test_order_by_must_be_sortable_in_every_collection_in_scope(sx: Client) -> None:
    """ "The field must be declared sortable in the collection": channel is sortable in both, amount
    only in sx_notes."""
    both = {"collections": ["sx_notes", "sx_extra"]}
    extra = {
        "collection": "sx_extra",
        "entity": "e1",
        "type": "note",
        "text": "x",
        "content": {"channel": "a"},
    }
    first, second = write(sx, note(content={"channel": "b"}), extra)
    body = search(sx, {"mode": "structured", "scope": both, "order_by": [{"field": "channel"}]})
    assert ids(body) == [second, first]
    rejects(sx, {"mode": "structured", "scope": both, "order_by": [{"field": "amount"}]})


HUGE = 10**400
"""An integer no float holds: JSON allows it, so it must be answered as a value, never a 500."""
PAST_64_BITS = 2**70


def boosted(**values: Any) -> dict[str, Any]:
    """A recent search with a graph boost of anchor "a" and `values`."""
    return recent_body(graph_boost={"anchor": "a", **values})


def judged(top_n: Any) -> dict[str, Any]:
    """A text search reranked by the judge with `top_n`."""
    return {"q": "x", "mode": "text", "rerank": {"backend": "llm_judge", "top_n": top_n}}


@pytest.mark.parametrize(
    ("body", "loc"),
    [
        pytest.param(recent_body(k=True), ("k",), id="k-true"),
        pytest.param(recent_body(k="5"), ("k",), id="k-digits"),
        pytest.param(recent_body(k=PAST_64_BITS), ("k",), id="k-past-64-bits"),
        pytest.param(
            recent_body(params={"candidates": True}), ("params", "candidates"), id="candidates-true"
        ),
        pytest.param(
            recent_body(params={"candidates": "100"}), ("params", "candidates"), id="candidates-digits"
        ),
        pytest.param(
            recent_body(params={"candidates": HUGE}), ("params", "candidates"), id="candidates-huge"
        ),
        pytest.param(recent_body(scope={"depth_lte": True}), ("scope", "depth_lte"), id="depth-lte-true"),
        pytest.param(recent_body(scope={"depth_lte": "2"}), ("scope", "depth_lte"), id="depth-lte-digits"),
        pytest.param(
            recent_body(scope={"collections": ["sx_notes"], "collection_versions": {"sx_notes": [True]}}),
            ("scope", "collection_versions", "sx_notes", 0),
            id="collection-version-true",
        ),
        pytest.param(recent_body(rank=["const", HUGE]), ("rank",), id="const-huge"),
        pytest.param(recent_body(rank=["product", HUGE, IMP]), ("rank",), id="factor-huge"),
        pytest.param(
            recent_body(rank=["decay", IMP, {"midpoint": HUGE, "exponent": 1}]), ("rank",), id="midpoint-huge"
        ),
        pytest.param(
            recent_body(rank=["saturate", IMP, {"midpoint": 1, "exponent": True}]),
            ("rank",),
            id="exponent-true",
        ),
        pytest.param(
            recent_body(rank=["decay", IMP, {"midpoint": "5", "exponent": 1}]),
            ("rank",),
            id="midpoint-digits",
        ),
        pytest.param(recent_body(rank=["product", True, IMP]), ("rank",), id="factor-true"),
        pytest.param(boosted(weight=True), ("graph_boost", "weight"), id="boost-weight-true"),
        pytest.param(boosted(weight=HUGE), ("graph_boost", "weight"), id="boost-weight-huge"),
        pytest.param(boosted(depth=True), ("graph_boost", "depth"), id="boost-depth-true"),
        pytest.param(boosted(limit=PAST_64_BITS), ("graph_boost", "limit"), id="boost-limit-past-64-bits"),
        pytest.param(judged(True), ("rerank", "top_n"), id="top-n-true"),
        pytest.param(judged(HUGE), ("rerank", "top_n"), id="top-n-huge"),
    ],
)
def test_numbers_are_numbers_in_range(sx: Client, body: dict[str, Any], loc: tuple[Any, ...]) -> None:
    """ "k (default 20, between 1 and 100)", "params.candidates (1–1000 …)", "depth_lte", "top_n is
    1–20", "weight: … above 0 and at most 1", "Every value produced must be finite" and "both
    options are required and must be positive": a boolean, a string of digits or an integer no
    float holds is a 422 at its own key, never a 500."""
    err = rejects(sx, body)
    assert any(detail["loc"][: len(loc)] == list(loc) for detail in err["details"]), err["details"]


# --- candidates -----------------------------------------------------------------------------------


@pytest.mark.parametrize("candidates", [0, 1001, 2.5, "100"])
def test_params_candidates_is_1_to_1000(sx: Client, candidates: Any) -> None:
    rejects(sx, {"mode": "recent", "params": {"candidates": candidates}}, "params", "candidates")


def test_params_take_no_other_knob(sx: Client) -> None:
    rejects(sx, {"mode": "recent", "params": {"ef_search": 10}}, "params", "ef_search")


@pytest.mark.parametrize(
    ("k", "expected"),
    [
        pytest.param(5, 100, id="at-least-100"),
        pytest.param(20, 200, id="10k"),
        pytest.param(15, 150, id="10k-150"),
    ],
)
def test_candidates_default_is_min_1000_max_100_10k(sx: Client, k: int, expected: int) -> None:
    write(sx, *(note(f"n{i}", entity=f"e{i}") for i in range(260)))
    body = search(sx, {"mode": "recent", "scope": NOTES, "k": k})
    assert body["backend"]["candidate_count"] == expected
    assert len(body["hits"]) == k


def test_params_candidates_sets_how_many_are_proposed(sx: Client) -> None:
    write(sx, *(note(f"n{i}") for i in range(30)))
    body = search(sx, {"mode": "recent", "k": 5, "params": {"candidates": 12}})
    assert body["backend"]["candidate_count"] == 12 and len(body["hits"]) == 5
    body = search(sx, {"mode": "recent", "k": 20, "params": {"candidates": 3}})
    assert body["backend"]["candidate_count"] == 3 and len(body["hits"]) == 3


def test_default_candidate_pool_is_min_1000_max_100_10k(sx: Client) -> None:
    """params.candidates "default min(1000, max(100, 10 * k))"; the score pool is "Every candidate the
    search ranked". 105 records, importance i, newest = highest i: with k=2 recent proposes the 100
    newest (importance 6..105), so the second scores (104-6)/(105-6); with k=20 all 105 are ranked."""
    write(sx, *(note(str(i), scores={"importance": i}, occurred_at=ago(200 - i)) for i in range(1, 106)))
    body = recent(sx, rank=["score", "importance"], k=2)
    assert [hit["rank_score"] for hit in body["hits"]] == [105, 104]
    assert body["hits"][1]["score"] == pytest.approx(98 / 99)
    body = recent(sx, rank=["score", "importance"], k=20)
    assert body["hits"][1]["score"] == pytest.approx(103 / 104)
    body = recent(sx, rank=["score", "importance"], k=2, params={"candidates": 105})
    assert body["hits"][1]["score"] == pytest.approx(103 / 104)


@pytest.mark.parametrize("candidates", [0, 1001, 2.5])
def test_params_candidates_bounds(sx: Client, candidates: Any) -> None:
    """ "params.candidates (1–1000 ...)\""""
    rejected_at(sx, {"mode": "recent", "params": {"candidates": candidates}}, "params")


def test_params_candidates_1_and_1000_are_accepted(sx: Client) -> None:
    """ "params.candidates (1–1000 ...)\""""
    write(sx, note("a"), note("b"))
    assert len(recent(sx, params={"candidates": 1})["hits"]) == 1
    assert len(recent(sx, params={"candidates": 1000})["hits"]) == 2


def test_default_candidate_pool_is_at_most_1000(sx: Client) -> None:
    """ "by default at least 100 and at most 1,000": k=100 ranks the 1,000 newest of 1,005 records
    (importance 6..1005), so the second hit scores (1004-6)/(1005-6), not 1003/1004."""
    for start in (1, 501, 1001):
        batch = range(start, min(start + 500, 1006))
        write(sx, *(note(str(i), scores={"importance": i}, occurred_at=ago(2000 - i)) for i in batch))
    body = recent(sx, rank=["score", "importance"], k=100)
    assert [hit["rank_score"] for hit in body["hits"][:2]] == [1005, 1004]
    assert body["hits"][1]["score"] == pytest.approx(998 / 999, rel=1e-9)


def test_one_candidate_means_at_most_one_result(sx: Client) -> None:
    """ "params.candidates (1–1000 …) — how many records the search engine proposes before
    ranking": with 1 proposed, k: 20 returns at most one, which scores 1."""
    write(sx, *(note(f"n{i}", occurred_at=at(i + 1)) for i in range(3)))
    body = search(sx, recent_body(k=20, params={"candidates": 1}))
    assert len(body["hits"]) == 1
    assert body["hits"][0]["score"] == 1.0


def test_k_1_and_100_with_1000_candidates(sx: Client) -> None:
    """ "k (default 20, between 1 and 100)" and "params.candidates (1–1000 …)": both bounds are
    inclusive."""
    first, second = write(sx, note("a", occurred_at=at(2)), note("b", occurred_at=at(1)))
    assert ids(search(sx, recent_body(k=1, params={"candidates": 1000}))) == [first]
    assert ids(search(sx, recent_body(k=100, params={"candidates": 1000}))) == [first, second]


RECENT: dict[str, Any] = {"mode": "recent", "scope": NOTES}


def test_k_100_proposes_1000_candidates_by_default(sx: Client) -> None:
    """Spec: "params.candidates (1–1000, default min(1000, max(100, 10 * k)) per search)" and
    "`candidate_count` is how many candidates the search engine proposed": at k 100 the default is
    1,000, so of 1,001 eligible records 1,000 are proposed and 100 returned."""
    write(sx, *(note(f"n{i}", entity=f"e{i % 7}") for i in range(1000)))
    write(sx, note("one more"))
    body = search(sx, {**RECENT, "k": 100})
    assert body["backend"]["candidate_count"] == 1000 and len(body["hits"]) == 100
    explicit = search(sx, {**RECENT, "k": 100, "params": {"candidates": 1000}})
    assert explicit["backend"]["candidate_count"] == 1000 and ids(explicit) == ids(body)
