"""Search statements on real PostgreSQL: arithmetic, scopes, filters, versions, ordering."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any
from uuid import UUID

import numpy as np
import pytest
import sqlalchemy as sa
from sqlalchemy.engine import Engine

from memseek.catalog.fields import materialise_all
from memseek.db import workspace_transaction
from memseek.errors import RequestInvalid
from memseek.schema import EMBEDDING_DIM
from memseek.search.execute import SearchResult
from tests.conftest import Tenant
from tests.integration.searchdata import NOW
from tests.integration.searchdata import Rec
from tests.integration.searchdata import catalog
from tests.integration.searchdata import collection
from tests.integration.searchdata import compiled
from tests.integration.searchdata import execute_compiled
from tests.integration.searchdata import given
from tests.integration.searchdata import hours_ago
from tests.integration.searchdata import prepare_transaction
from tests.integration.searchdata import run_compiled
from tests.integration.searchdata import unit

MAIN = collection()
CONST = ["const", 1]


def run(db: Engine, tenant: Tenant, body: dict[str, Any], **kw: Any) -> SearchResult:
    with workspace_transaction(db, tenant.id) as conn:
        return run_compiled(conn, compiled(body, tenant.id, **kw))


def ids(result: SearchResult) -> list[UUID]:
    return [h.id for h in result.hits]


def values(result: SearchResult) -> list[float | None]:
    return [h.value for h in result.hits]


def listing(**query: Any) -> dict[str, Any]:
    """A recent search ranked by a constant: survivors come back newest first (ties: seq desc)."""
    return {"mode": "recent", "rank": CONST, "k": 100, **query}


def picked(record_ids: Sequence[UUID], result: SearchResult) -> set[int]:
    return {record_ids.index(i) for i in ids(result)}


# --- arithmetic (spec: Rank expressions) ---------------------------------------------------------


@pytest.mark.parametrize(
    ("rank", "rec", "expected"),
    [
        pytest.param(
            ["decay", ["age_hours", "occurred_at"], {"midpoint": 24, "exponent": 1}],
            Rec(occurred_at=hours_ago(24)),
            0.5,
            id="decay-midpoint",
        ),
        pytest.param(
            ["decay", ["age_hours", "occurred_at"], {"midpoint": 24, "exponent": 3}],
            Rec(occurred_at=hours_ago(24)),
            0.5,
            id="decay-midpoint-exponent-3",
        ),
        pytest.param(
            ["decay", ["age_hours", "occurred_at"], {"midpoint": 24, "exponent": 1}],
            Rec(occurred_at=hours_ago(0)),
            1.0,
            id="decay-at-zero",
        ),
        pytest.param(
            ["decay", ["age_hours", "occurred_at"], {"midpoint": 24, "exponent": 1}],
            Rec(occurred_at=hours_ago(-50)),
            1.0,
            id="decay-future-counts-as-0",
        ),
        pytest.param(
            ["decay", ["age_hours", "occurred_at"], {"midpoint": 24, "exponent": 1}],
            Rec(occurred_at=hours_ago(72)),
            0.25,
            id="decay-three-midpoints",
        ),
        pytest.param(
            ["saturate", ["score", "importance"], {"midpoint": 5, "exponent": 2}],
            Rec(scores={"importance": 5}),
            0.5,
            id="saturate-midpoint",
        ),
        pytest.param(
            ["saturate", ["score", "importance"], {"midpoint": 5, "exponent": 1}],
            Rec(scores={"importance": 15}),
            0.75,
            id="saturate-three-midpoints",
        ),
        pytest.param(
            ["saturate", ["score", "importance"], {"midpoint": 5, "exponent": 1}],
            Rec(scores={"importance": -4}),
            0.0,
            id="saturate-clamps-negative",
        ),
        pytest.param(
            ["saturate", ["score", "importance"], {"midpoint": 5, "exponent": 1000}],
            Rec(scores={"importance": 6}),
            1.0,
            id="saturate-steep-no-overflow",
        ),
        pytest.param(
            ["decay", ["score", "importance"], {"midpoint": 5, "exponent": 1000}],
            Rec(scores={"importance": 4}),
            1.0,
            id="decay-steep-no-overflow",
        ),
        pytest.param(["score", "importance"], Rec(scores={}), 0.0, id="missing-score-is-0"),
        pytest.param(
            ["score", "importance"], Rec(scores={"importance": "high"}), 0.0, id="non-number-score-is-0"
        ),
        pytest.param(
            ["sum", [["const", 2], ["product", -0.5, ["score", "importance"]]]],
            Rec(scores={"importance": 3}),
            0.5,
            id="sum-product",
        ),
        pytest.param(
            ["max", [["const", 2], ["score", "importance"]]], Rec(scores={"importance": 3}), 3.0, id="max"
        ),
        pytest.param(["age_hours", "created_at"], Rec(created_at=hours_ago(1.5)), 1.5, id="age-created"),
        pytest.param(
            ["age_hours", "last_accessed"], Rec(last_accessed=hours_ago(10)), 10.0, id="age-accessed"
        ),
    ],
)
def test_formula_values(db: Engine, tenant: Tenant, rank: list[Any], rec: Rec, expected: float) -> None:
    given(db, tenant, rec)
    result = run(db, tenant, {"mode": "recent", "rank": rank})
    assert values(result) == [pytest.approx(expected, abs=1e-12)]


def test_similarity_is_one_minus_the_cosine_distance_to_the_query_vector(db: Engine, tenant: Tenant) -> None:
    """The query vector travels in pgvector's binary form: the server must read the same floats."""
    stored, query = np.random.default_rng(3).normal(size=(2, EMBEDDING_DIM)).astype(np.float32)
    given(db, tenant, Rec(embedding=stored.tolist()))
    result = run(db, tenant, {"mode": "vector", "q": "x", "rank": ["similarity"]}, vector=query.tolist())
    a, b = stored.astype(np.float64), query.astype(np.float64)
    assert values(result) == [pytest.approx(a @ b / np.linalg.norm(a) / np.linalg.norm(b), abs=1e-6)]


def test_text_match_is_plain_ts_rank_cd_with_no_ceiling(db: Engine, tenant: Tenant) -> None:
    """Spec, signal table: `text_match` is `ts_rank_cd` over English full text, "0 upward, no
    fixed ceiling" (a workspace this small labels no lexeme by rarity), each lexeme counted at
    most twice (`memseek_rank_positions`, sql/0010_rank_positions.sql)."""
    query = "budget review plan forecast quarter finance"
    texts = [f"{query} {query}", "the budget", "a long note " * 40 + "budget"]  # no word thrice
    given(db, tenant, *(Rec(text=t) for t in texts))
    result = run(db, tenant, {"mode": "text", "q": query, "rank": ["text_match"]})
    sql = sa.text(
        "SELECT ts_rank_cd(to_tsvector('english', t), memseek_any_lexeme('english', :q))"
        " FROM unnest(CAST(:texts AS text[])) AS t ORDER BY 1 DESC"
    )
    with db.connect() as conn:
        expected = conn.execute(sql, {"texts": texts, "q": query}).scalars().all()
    assert values(result) == pytest.approx(expected, rel=1e-6)
    assert expected[0] > 1 and all(v > 0 for v in expected)


def test_text_match_counts_each_query_word_at_most_twice(db: Engine, tenant: Tenant) -> None:
    """Repeating a word a third time adds nothing: the stored text keeps two positions per lexeme,
    so `ts_rank_cd` saturates (sql/0010_rank_positions.sql)."""
    twice, ten_times, once = given(
        db, tenant, *(Rec(text=t) for t in ("budget budget note", "budget " * 10 + "note", "budget note"))
    )
    result = run(db, tenant, {"mode": "text", "q": "budget", "rank": ["text_match"]})
    by_id = dict(zip(ids(result), values(result), strict=True))
    assert by_id[ten_times] == pytest.approx(by_id[twice]) and by_id[twice] > by_id[once] > 0


@pytest.mark.parametrize(
    ("collections", "q", "expected"),
    [
        pytest.param(["en", "de"], "Häusern meetings", {0, 1}, id="both-each-by-its-own-stemmer"),
        pytest.param(["de"], "Häusern", {1}, id="german-stems-the-plural"),
        pytest.param(["en"], "Häusern", set(), id="english-does-not"),
        pytest.param(["en", "de"], "meeting", {0}, id="english-stems-the-plural"),
    ],
)
def test_text_matches_each_collection_in_its_own_language(
    db: Engine, tenant: Tenant, collections: list[str], q: str, expected: set[int]
) -> None:
    """`text_language` (design §1): the query is read with every reached collection's
    configuration, and each record matches by the lexemes of its own."""
    cat = catalog(collection("en"), collection("de", text_language="german"))
    record_ids = given(
        db,
        tenant,
        Rec(text="The meetings ran late", collection="en"),
        Rec(text="Die Häuser sind alt", collection="de", language="german"),
    )
    body = {"mode": "text", "q": q, "scope": {"collections": collections}, "rank": ["text_match"]}
    result = run(db, tenant, body, cat=cat)
    assert picked(record_ids, result) == expected
    assert all(v is not None and v > 0 for v in values(result))


def test_hybrid_text_match_of_rows_the_keyword_list_did_not_propose(db: Engine, tenant: Tenant) -> None:
    """The pool ranks the other lists' rows itself: a matching one gets its ts_rank_cd, one holding
    no query lexeme 0. The newest-first list brings in matches the shortened keyword list left out;
    the nearest embeddings belong to records that do not match."""
    words = [
        "budget",
        "review",
        "plan",
        "forecast",
        "quarter",
        "finance",
        "revenue",
        "margin",
        "invoice",
        "audit",
    ]
    matching = [" ".join(words[: i + 1] + ["note"] * (10 - i)) for i in range(10)]  # ranks 0.1 … 1.0
    others = [f"unrelated memo {i}" for i in range(6)]
    recs = [Rec(text=t, occurred_at=hours_ago(i), embedding=unit(0, 1)) for i, t in enumerate(matching)]
    recs += [Rec(text=t, occurred_at=hours_ago(100 + i), embedding=unit(1, 0)) for i, t in enumerate(others)]
    record_ids = given(db, tenant, *recs)
    query = " ".join(words)
    body = {"mode": "hybrid", "q": query, "k": 10, "rank": ["text_match"], "params": {"candidates": 10}}
    result = run(db, tenant, body, vector=unit(1, 0))
    sql = sa.text(
        "SELECT ts_rank_cd(to_tsvector('english', t), memseek_any_lexeme('english', :q))"
        " FROM unnest(CAST(:texts AS text[])) WITH ORDINALITY AS texts(t, n) ORDER BY n"
    )
    with db.connect() as conn:
        ranks = conn.execute(sql, {"texts": matching + others, "q": query}).scalars().all()
    expected = dict(zip(record_ids, ranks, strict=True))
    assert [h.value for h in result.hits] == [pytest.approx(expected[h.id], rel=1e-6) for h in result.hits]
    keyword_list = sorted(record_ids[:10], key=expected.__getitem__, reverse=True)[:5]
    unproposed = [h for h in result.hits if h.id in record_ids[:10] and h.id not in keyword_list]
    assert unproposed and all(h.value > 0 for h in unproposed)
    assert any(h.id in record_ids[10:] and h.value == 0 for h in result.hits)


def test_normalize_rescales_across_the_pool(db: Engine, tenant: Tenant) -> None:
    low, mid, high = given(db, tenant, *(Rec(scores={"importance": v}) for v in (1, 3, 5)))
    result = run(db, tenant, {"mode": "recent", "rank": ["normalize", ["score", "importance"]]})
    assert ids(result) == [high, mid, low]
    assert values(result) == [1.0, 0.5, 0.0]


def test_normalize_all_ties_become_zero(db: Engine, tenant: Tenant) -> None:
    given(db, tenant, *(Rec(scores={"importance": 4}) for _ in range(3)))
    result = run(db, tenant, {"mode": "recent", "rank": ["normalize", ["score", "importance"]]})
    assert values(result) == [0.0, 0.0, 0.0]


def test_nested_normalize(db: Engine, tenant: Tenant) -> None:
    given(db, tenant, *(Rec(scores={"importance": v, "urgency": 10 - v}) for v in (0, 2, 10)))
    rank = ["normalize", ["sum", [["normalize", ["score", "importance"]], ["score", "urgency"]]]]
    result = run(
        db,
        tenant,
        {"mode": "recent", "rank": rank},
        cat=catalog(collection(scores={"importance": {"display": True}, "urgency": {}})),
    )
    # inner: 0, 0.2, 1 → plus urgency 10, 8, 0 → 10, 8.2, 1 → normalized 1, 0.8, 0
    assert values(result) == pytest.approx([1.0, 0.8, 0.0])


def test_pool_bounds_cover_the_candidates_not_just_k(db: Engine, tenant: Tenant) -> None:
    given(db, tenant, *(Rec(scores={"importance": v}) for v in (9, 5, 2)))
    result = run(db, tenant, {"mode": "recent", "rank": ["score", "importance"], "k": 2})
    assert values(result) == [9.0, 5.0]
    assert (result.low, result.high, result.ranked_count, result.candidate_count) == (2.0, 9.0, 3, 3)


def test_recent_default_formula_orders_newest_first(db: Engine, tenant: Tenant) -> None:
    old, new, mid = given(
        db,
        tenant,
        Rec(occurred_at=hours_ago(48)),
        Rec(occurred_at=hours_ago(0)),
        Rec(occurred_at=hours_ago(24)),
    )
    result = run(db, tenant, {"mode": "recent", "k": 2})
    assert ids(result) == [new, mid]
    assert values(result) == pytest.approx([1.0, 0.5])
    assert result.low == pytest.approx(1 / 3) and result.high == pytest.approx(1.0)


def test_text_default_formula_range(db: Engine, tenant: Tenant) -> None:
    given(
        db,
        tenant,
        Rec(text="budget budget budget confirmed"),
        Rec(text="the budget"),
        Rec(text="nothing relevant", last_accessed=hours_ago(24)),
    )
    result = run(db, tenant, {"mode": "text", "q": "confirmed budget"})
    assert len(result.hits) == 2  # only records sharing a lexeme are proposed
    assert all(0.0 <= (v or 0) <= 2.0 for v in values(result))
    assert values(result)[0] == pytest.approx(2.0)  # best match, just read


# --- ties (spec: Ordering and ties) ----------------------------------------------------------------


def test_ties_break_by_occurred_at_then_ingestion_order(db: Engine, tenant: Tenant) -> None:
    first, second, older = given(db, tenant, Rec(), Rec(), Rec(occurred_at=hours_ago(1)))
    result = run(db, tenant, listing())
    assert ids(result) == [second, first, older]


# --- scopes ------------------------------------------------------------------------------------------

SCOPES = [
    pytest.param(
        [Rec(entity="a"), Rec(entity="b"), Rec(entity="c")], {"entities": ["a", "c"]}, {0, 2}, id="entities"
    ),
    pytest.param(
        [Rec(type="event"), Rec(type="note"), Rec(type="fact")], {"types": ["note"]}, {1}, id="types"
    ),
    pytest.param([Rec(status="active"), Rec(status="draft")], {}, {0}, id="status-active-default"),
    pytest.param([Rec(status="active"), Rec(status="draft")], {"status": "draft"}, {1}, id="status-draft"),
    pytest.param([Rec(status="active"), Rec(status="draft")], {"status": "all"}, {0, 1}, id="status-all"),
    pytest.param([Rec(key="k"), Rec()], {"keyed": True}, {0}, id="keyed-true"),
    pytest.param([Rec(key="k"), Rec()], {"keyed": False}, {1}, id="keyed-false"),
    pytest.param([Rec(key="k"), Rec()], {"keyed": "any"}, {0, 1}, id="keyed-any"),
    pytest.param([Rec(key="k", is_current=False), Rec(key="k")], {}, {1}, id="versions-current"),
    pytest.param(
        [Rec(key="k", is_current=False), Rec(key="k")], {"versions": "all"}, {0, 1}, id="versions-all"
    ),
    pytest.param(
        [Rec(key="k", is_current=False), Rec(key="k", processing="pending")],
        {},
        set(),
        id="pending-newer-value-no-stale-fallback",
    ),
    pytest.param(
        [Rec(key="k", is_current=False), Rec(key="k", processing="pending")],
        {"versions": "all"},
        {0},
        id="pending-newer-value-history",
    ),
    pytest.param(
        [Rec(key="k", status="active"), Rec(key="k", status="draft")],
        {"status": "all"},
        {0, 1},
        id="current-active-and-draft",
    ),
    pytest.param(
        [Rec(retracted=True), Rec(processing="failed"), Rec(processing="pending"), Rec()],
        {"versions": "all", "status": "all"},
        {3},
        id="ready-and-not-retracted-only",
    ),
    pytest.param(
        [Rec(occurred_at=hours_ago(2)), Rec(occurred_at=hours_ago(1)), Rec(occurred_at=hours_ago(0))],
        {"occurred_after": hours_ago(2).isoformat(), "occurred_before": NOW.isoformat()},
        {1},
        id="time-bounds-are-strict",
    ),
    pytest.param([Rec(depth=0), Rec(depth=1), Rec(depth=2)], {"depth_lte": 1}, {0, 1}, id="depth-lte"),
    pytest.param([Rec(depth=0), Rec(depth=1)], {"depth_lte": 0}, {0}, id="depth-lte-0-original-evidence"),
    pytest.param(
        [Rec(collection="main"), Rec(collection="other")], {"collections": ["main"]}, {0}, id="collections"
    ),
    pytest.param(
        [Rec(collection_version=1), Rec(collection_version=2)],
        {"collections": ["main"], "collection_versions": {"main": [2]}},
        {1},
        id="collection-versions",
    ),
    pytest.param(
        [Rec(collection_version=1), Rec(collection_version=2)],
        {"collections": ["main"]},
        {0, 1},
        id="every-version-of-a-collection",
    ),
]


@pytest.mark.parametrize(("recs", "scope", "expected"), SCOPES)
def test_scope(
    db: Engine, tenant: Tenant, recs: list[Rec], scope: dict[str, Any], expected: set[int]
) -> None:
    cat = catalog(collection(), collection(version=2), collection("other"))
    record_ids = given(db, tenant, *recs)
    assert picked(record_ids, run(db, tenant, listing(scope=scope), cat=cat)) == expected


def test_other_workspaces_are_invisible(db: Engine, tenant: Tenant, other_tenant: Tenant) -> None:
    (mine,) = given(db, tenant, Rec(text="budget"))
    given(db, other_tenant, Rec(text="budget"), Rec(text="budget"))
    for body in (listing(), {"mode": "text", "q": "budget"}):
        result = run(db, tenant, body)
        assert ids(result) == [mine] and result.candidate_count == 1


# --- typed filters -------------------------------------------------------------------------------------

CONTENTS: list[dict[str, Any]] = [
    {"channel": "email", "amount": 10, "count": 1, "vip": True, "tags": ["vip", "at-risk"],
     "starts_at": "2026-01-01T00:00:00Z"},
    {"channel": "call", "amount": 20.5, "count": 2, "vip": False, "tags": ["vip"],
     "meta": {"start": "2026-02-01T00:00:00+00:00"}},
    {"channel": "note", "amount": -3, "tags": []},
    {},
    {"channel": "Email"},
]  # fmt: skip

WHERE = [
    pytest.param({"channel": {"eq": "email"}}, {0}, id="eq-string"),
    pytest.param({"channel": {"in": ["email", "call"]}}, {0, 1}, id="in"),
    pytest.param({"amount": {"gt": 10}}, {1}, id="gt"),
    pytest.param({"amount": {"gte": 10}}, {0, 1}, id="gte"),
    pytest.param({"amount": {"lt": 10}}, {2}, id="lt"),
    pytest.param({"amount": {"lte": 10}}, {0, 2}, id="lte"),
    pytest.param({"amount": {"gt": 0, "lt": 15}}, {0}, id="range-and"),
    pytest.param({"amount": {"eq": 20.5}}, {1}, id="eq-number"),
    pytest.param({"count": {"eq": 2}}, {1}, id="eq-integer"),
    pytest.param({"vip": {"eq": False}}, {1}, id="eq-boolean"),
    pytest.param({"tags": {"eq": ["vip", "at-risk"]}}, {0}, id="eq-list-exact"),
    pytest.param({"tags": {"eq": ["at-risk", "vip"]}}, set(), id="eq-list-ordered"),
    pytest.param({"tags": {"contains_any": ["at-risk", "x"]}}, {0}, id="contains-any"),
    pytest.param({"tags": {"contains_all": ["vip"]}}, {0, 1}, id="contains-all-one"),
    pytest.param({"tags": {"contains_all": ["vip", "at-risk"]}}, {0}, id="contains-all-two"),
    pytest.param({"starts_at": {"gte": "2026-01-15T00:00:00Z"}}, {1}, id="datetime-gte-fallback-path"),
    pytest.param({"starts_at": {"lt": "2026-01-15T01:00:00+01:00"}}, {0}, id="datetime-lt-offset"),
    pytest.param({"starts_at": {"eq": "2026-01-01T00:00:00Z"}}, {0}, id="datetime-eq"),
    pytest.param(
        {"starts_at": {"in": ["2026-02-01T00:00:00Z", "2027-01-01T00:00:00Z"]}}, {1}, id="datetime-in"
    ),
    pytest.param({"channel": {"exists": True}}, {0, 1, 2, 4}, id="exists-true"),
    pytest.param({"channel": {"exists": False}}, {3}, id="exists-false"),
    pytest.param({"channel": {"in": ["email", "call"]}, "vip": {"eq": True}}, {0}, id="fields-and"),
]


@pytest.mark.parametrize(("where", "expected"), WHERE)
def test_where(db: Engine, tenant: Tenant, where: dict[str, Any], expected: set[int]) -> None:
    record_ids = given(db, tenant, *(Rec(content=c, fields=materialise_all(MAIN, c)) for c in CONTENTS))
    assert picked(record_ids, run(db, tenant, listing(where=where))) == expected


# --- structured ordering ----------------------------------------------------------------------------


def structured(*order: dict[str, str], k: int = 100) -> dict[str, Any]:
    return {"mode": "structured", "order_by": list(order), "k": k}


@pytest.mark.parametrize(
    ("order", "expected"),
    [
        pytest.param([{"field": "amount"}], [2, 0, 1, 3, 4], id="asc-missing-last"),
        pytest.param([{"field": "amount", "direction": "desc"}], [1, 0, 2, 3, 4], id="desc-missing-last"),
        pytest.param([{"field": "channel"}], [4, 1, 0, 2, 3], id="strings-by-code-point"),
        pytest.param(
            [{"field": "starts_at", "direction": "desc"}, {"field": "channel", "direction": "desc"}],
            [1, 0, 2, 4, 3],
            id="two-keys",
        ),
        pytest.param([{"field": "vip"}], [1, 0, 2, 3, 4], id="boolean"),
    ],
)
def test_structured_order(
    db: Engine, tenant: Tenant, order: list[dict[str, str]], expected: list[int]
) -> None:
    record_ids = given(db, tenant, *(Rec(content=c, fields=materialise_all(MAIN, c)) for c in CONTENTS))
    result = run(db, tenant, structured(*order))
    assert ids(result) == [record_ids[i] for i in expected]
    assert values(result) == [None] * 5 and result.low is None


@pytest.mark.parametrize(("direction", "expected"), [("asc", [2, 0, 4, 1, 3]), ("desc", [1, 4, 0, 2, 3])])
def test_structured_order_by_a_list_field(
    db: Engine, tenant: Tenant, direction: str, expected: list[int]
) -> None:
    """A sortable `string_array` orders as PostgreSQL orders JSON arrays: fewer items first, then
    item by item; a record without the field is last in both directions (docs/search.md)."""
    fields = {**MAIN.fields, "tags": MAIN.fields["tags"].model_copy(update={"sortable": True})}
    listed = collection(fields={name: decl.model_dump() for name, decl in fields.items()})
    contents = [{"tags": ["b"]}, {"tags": ["a", "z"]}, {"tags": ["a"]}, {}, {"tags": ["a", "b"]}]
    record_ids = given(db, tenant, *(Rec(content=c, fields=materialise_all(listed, c)) for c in contents))
    result = run(db, tenant, structured({"field": "tags", "direction": direction}), cat=catalog(listed))
    assert ids(result) == [record_ids[i] for i in expected]


def test_structured_k_and_candidates(db: Engine, tenant: Tenant) -> None:
    record_ids = given(db, tenant, *(Rec(content={"amount": v}, fields={"amount": v}) for v in (5, 1, 3)))
    result = run(db, tenant, {**structured({"field": "amount"}, k=2), "params": {"candidates": 100}})
    assert ids(result) == [record_ids[1], record_ids[2]]
    assert (result.candidate_count, result.ranked_count) == (3, 3)


def test_empty_result_reports_candidates(db: Engine, tenant: Tenant) -> None:
    given(db, tenant, Rec(text="budget"))
    result = run(db, tenant, {"mode": "text", "q": "weather"})
    assert (result.hits, result.candidate_count) == ((), 0)


# --- the driver cursor (`db.run_statement`) ------------------------------------------------------------


def test_a_formula_that_overflows_float8_is_a_422_on_rank(db: Engine, tenant: Tenant) -> None:
    """PostgreSQL refuses the product (SQLSTATE 22003): the request is invalid, not the server."""
    given(db, tenant, Rec())
    with pytest.raises(RequestInvalid) as caught:
        run(db, tenant, listing(rank=["product", 1e300, ["const", 1e300]]))
    assert caught.value.details[0].loc == ("rank",)


def test_a_lost_connection_is_a_wrapped_error_and_the_connection_is_invalidated(
    db: Engine, tenant: Tenant
) -> None:
    """As `Connection.execute` would: SQLAlchemy's OperationalError (the app's 503), and the pool
    never hands the dead connection out again."""
    search = compiled(listing(), tenant.id)
    seen = []
    with pytest.raises(sa.exc.OperationalError), workspace_transaction(db, tenant.id) as conn:
        prepare_transaction(conn, search)  # the last statement through SQLAlchemy's own path
        pid = conn.connection.driver_connection.info.backend_pid
        with db.connect() as other:
            other.execute(sa.text("SELECT pg_terminate_backend(:pid)"), {"pid": pid})
        try:
            execute_compiled(conn, search)
        except sa.exc.OperationalError as exc:  # the search's own error, before the rollback's
            seen.append((exc.connection_invalidated, conn.invalidated))
            raise
    assert seen == [(True, True)]
    with db.connect() as fresh:
        assert fresh.execute(sa.text("SELECT pg_backend_pid()")).scalar() != pid
