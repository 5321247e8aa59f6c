"""Property test: the compiled statement agrees with a brute-force Python evaluation of the spec.

Hypothesis draws small record sets (statuses, lanes, readiness, retraction, fields, scores,
timestamps) and requests (scope, typed filters, rank trees, k, candidates) for recent and
structured searches; the oracle below applies every rule in plain Python, ranks with
`fuse.evaluate_rank` and orders with the spec's tie-breakers. Each example runs in a transaction
that is rolled back.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from datetime import timedelta
from typing import Any
from uuid import UUID

from hypothesis import HealthCheck
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st
from sqlalchemy.engine import Engine

from memseek.catalog.fields import epoch_micros
from memseek.catalog.fields import materialise_all
from memseek.catalog.fields import parse_datetime
from memseek.catalog.rank import AgeHours
from memseek.catalog.rank import Const
from memseek.catalog.rank import Decay
from memseek.catalog.rank import Max
from memseek.catalog.rank import Normalize
from memseek.catalog.rank import Product
from memseek.catalog.rank import RankNode
from memseek.catalog.rank import Saturate
from memseek.catalog.rank import Score
from memseek.catalog.rank import Sum
from memseek.catalog.rank import iter_nodes
from memseek.catalog.rank import to_tree
from memseek.db import scope_settings
from memseek.db import set_local
from memseek.search import fuse
from memseek.search.resolve import SearchPlan
from tests.conftest import Tenant
from tests.integration.searchdata import NOW
from tests.integration.searchdata import Rec
from tests.integration.searchdata import collection
from tests.integration.searchdata import compiled
from tests.integration.searchdata import insert
from tests.integration.searchdata import plans
from tests.integration.searchdata import run_compiled

MAIN = collection()
minutes = st.integers(min_value=-60, max_value=4000).map(lambda m: NOW - timedelta(minutes=m))

contents = st.fixed_dictionaries({}, optional={
    "channel": st.sampled_from(["a", "b", "B", "ab"]),
    "amount": st.integers(-5, 5),
    "vip": st.booleans(),
    "tags": st.lists(st.sampled_from(["x", "y", "z"]), max_size=3),
    "starts_at": st.sampled_from(["2026-01-01T00:00:00Z", "2026-03-01T00:00:00Z", "2026-06-01T00:00:00Z"]),
})  # fmt: skip

records = st.builds(
    Rec,
    entity=st.sampled_from(["a", "b", "c"]),
    type=st.sampled_from(["event", "note"]),
    key=st.sampled_from([None, "k1", "k2"]),
    status=st.sampled_from(["active", "active", "draft"]),
    depth=st.integers(0, 2),
    occurred_at=minutes,
    last_accessed=minutes,
    processing=st.sampled_from(["ready", "ready", "ready", "pending", "failed"]),
    retracted=st.sampled_from([False, False, False, True]),
    scores=st.fixed_dictionaries({}, optional={"importance": st.integers(-2, 10)}),
    content=contents,
)

signals = st.one_of(
    st.just(Score("importance")),
    st.sampled_from([AgeHours("occurred_at"), AgeHours("last_accessed"), AgeHours("created_at")]),
    st.sampled_from([Const(0.0), Const(1.0), Const(2.5)]),
)


def _shapers(children: st.SearchStrategy[RankNode]) -> st.SearchStrategy[RankNode]:
    pairs = st.lists(children, min_size=1, max_size=3).map(tuple)
    return st.one_of(
        pairs.map(Sum),
        pairs.map(Max),
        children.map(Normalize),
        st.builds(Product, st.sampled_from([-1.0, 0.5, 2.0]), children),
        st.builds(Saturate, children, st.sampled_from([1.0, 5.0, 24.0]), st.sampled_from([1.0, 2.0])),
        st.builds(Decay, children, st.sampled_from([1.0, 5.0, 24.0]), st.sampled_from([1.0, 3.0])),
    )


ranks = st.recursive(signals, _shapers, max_leaves=6).filter(lambda n: sum(1 for _ in iter_nodes(n)) <= 16)

conditions = st.one_of(
    st.just({"channel": {"in": ["a", "B"]}}),
    st.just({"channel": {"eq": "b"}}),
    st.just({"channel": {"exists": False}}),
    st.integers(-5, 5).map(lambda v: {"amount": {"gte": v}}),
    st.integers(-5, 5).map(lambda v: {"amount": {"lt": v, "gt": -3}}),
    st.booleans().map(lambda v: {"vip": {"eq": v}}),
    st.just({"tags": {"contains_any": ["x", "z"]}}),
    st.just({"tags": {"contains_all": ["x", "y"]}}),
    st.just({"tags": {"eq": ["x", "y"]}}),
    st.just({"starts_at": {"gt": "2026-02-01T00:00:00Z"}}),
)
scopes = st.fixed_dictionaries({}, optional={
    "entities": st.lists(st.sampled_from(["a", "b", "c"]), min_size=1, max_size=2, unique=True),
    "types": st.just(["note"]),
    "status": st.sampled_from(["active", "draft", "all"]),
    "keyed": st.sampled_from([True, False, "any"]),
    "versions": st.sampled_from(["current", "all"]),
    "depth_lte": st.integers(0, 2),
    "occurred_after": st.just((NOW - timedelta(hours=30)).isoformat()),
})  # fmt: skip
orders = st.lists(
    st.fixed_dictionaries(
        {
            "field": st.sampled_from(["channel", "amount", "vip", "starts_at"]),
            "direction": st.sampled_from(["asc", "desc"]),
        }
    ),
    min_size=1,
    max_size=2,
    unique_by=lambda o: o["field"],
)


@st.composite
def requests(draw: st.DrawFn) -> dict[str, Any]:
    body: dict[str, Any] = {
        "scope": draw(scopes),
        "where": draw(
            st.lists(conditions, max_size=2).map(lambda cs: {k: v for c in cs for k, v in c.items()})
        ),
        "k": draw(st.integers(1, 8)),
        "params": {"candidates": draw(st.integers(1, 30))},
    }
    if draw(st.booleans()):
        return {**body, "mode": "structured", "order_by": draw(orders)}
    return {**body, "mode": "recent", "rank": to_tree(draw(ranks))}


# --- the oracle -------------------------------------------------------------------------------------


def eligible(rec: Rec, fields: Mapping[str, Any], plan: SearchPlan) -> bool:
    scope = plan.scope
    checks = [
        rec.processing == "ready" and not rec.retracted,
        not scope.entities or rec.entity in scope.entities,
        not scope.types or rec.type in scope.types,
        scope.status == "all" or rec.status == scope.status,
        scope.keyed == "any" or (rec.key is not None) == scope.keyed,
        scope.versions == "all" or rec.is_current,
        scope.occurred_after is None or rec.occurred_at > scope.occurred_after,
        scope.depth_lte is None or rec.depth <= scope.depth_lte,
    ]
    return all(checks) and all(
        holds(op, fields.get(name), value)
        for name, condition in plan.where.items()
        for op, value in condition.operators().items()
    )


def _as_stored(value: Any) -> Any:
    if isinstance(value, datetime):
        return epoch_micros(value)
    moment = parse_datetime(value) if isinstance(value, str) else None
    return epoch_micros(moment) if moment is not None and "T" in value else value


def holds(op: str, stored: Any, wanted: Any) -> bool:
    if op == "exists":
        return (stored is not None) == wanted
    if stored is None:
        return False
    if op == "eq":
        return stored == (list(wanted) if isinstance(wanted, tuple) else _as_stored(wanted))
    if op == "in":
        return stored in [_as_stored(v) for v in wanted]
    if op in ("contains_any", "contains_all"):
        return bool(set(stored) & set(wanted)) if op == "contains_any" else set(wanted) <= set(stored)
    bound = _as_stored(wanted)
    return {"gt": stored > bound, "gte": stored >= bound, "lt": stored < bound, "lte": stored <= bound}[op]


def sort_value(value: Any) -> Any:
    return value.encode() if isinstance(value, str) else value  # code point order, like COLLATE "C"


def structured_order(pool: list[tuple[int, UUID, Rec, dict[str, Any]]], plan: SearchPlan) -> list[Any]:
    ordered = sorted(pool, key=lambda item: (item[0], item[1]))  # seq asc, id asc
    for order in reversed(plan.order_by):
        present = [item for item in ordered if order.field in item[3]]
        missing = [item for item in ordered if order.field not in item[3]]
        present.sort(key=lambda item: sort_value(item[3][order.field]), reverse=order.direction == "desc")
        ordered = present + missing
    return ordered


def oracle(stored: list[tuple[UUID, Rec]], plan: SearchPlan) -> list[tuple[UUID, float | None]]:
    pool = [
        (seq, rid, rec, materialise_all(MAIN, dict(rec.content or {})))
        for seq, (rid, rec) in enumerate(stored)
    ]
    pool = [item for item in pool if eligible(item[2], item[3], plan)]
    if plan.mode == "structured":
        return [(item[1], None) for item in structured_order(pool, plan)[: plan.candidates][: plan.k]]
    newest = sorted(pool, key=lambda item: item[1])
    newest.sort(key=lambda item: (item[2].occurred_at, item[0]), reverse=True)
    candidates = newest[: plan.candidates]
    signals = [
        fuse.Signals(
            scores=item[2].scores or {},
            ages={
                "occurred_at": fuse.age_hours(item[2].occurred_at, NOW),
                "created_at": fuse.age_hours(item[2].occurred_at, NOW),
                "last_accessed": fuse.age_hours(item[2].last_accessed or item[2].occurred_at, NOW),
            },
        )
        for item in candidates
    ]
    assert plan.rank is not None
    hits = [
        fuse.Hit(item[1], value, item[2].occurred_at, item[0])
        for item, value in zip(candidates, fuse.evaluate_rank(plan.rank, signals), strict=True)
    ]
    return [(hit.id, hit.value) for hit in fuse.order_hits(hits)[: plan.k]]


def written(recs: list[Rec]) -> list[Rec]:
    """As the write path leaves them: fields materialised, only the newest of a lane current."""
    lanes = {(r.entity, r.key, r.status): i for i, r in enumerate(recs) if r.key is not None}
    return [
        Rec(
            **{
                **rec.__dict__,
                "fields": materialise_all(MAIN, dict(rec.content or {})),
                "is_current": rec.key is None or lanes[(rec.entity, rec.key, rec.status)] == i,
            }
        )
        for i, rec in enumerate(recs)
    ]


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(recs=st.lists(records, max_size=24), body=requests())
def test_statement_matches_brute_force(
    db: Engine, tenant: Tenant, recs: list[Rec], body: dict[str, Any]
) -> None:
    assert_matches_oracle(db, tenant, recs, body)


def assert_matches_oracle(
    db: Engine, tenant: Tenant, recs: list[Rec], body: dict[str, Any], planner: dict[str, str] | None = None
) -> None:
    """The compiled statement, run on `recs` (rolled back) under `planner` settings, returns the
    oracle's hits."""
    recs = written(recs)
    (plan,) = plans(body)
    with db.connect() as conn, conn.begin() as transaction:
        record_ids = insert(conn, tenant.id, *recs)
        set_local(conn, scope_settings(tenant.id, planner))
        result = run_compiled(conn, compiled(body, tenant.id))
        transaction.rollback()
    expected = oracle(list(zip(record_ids, recs, strict=True)), plan)
    assert [(h.id, h.value) for h in result.hits] == expected
