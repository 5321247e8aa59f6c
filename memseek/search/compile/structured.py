"""A structured search: the eligible records in their `order_by` order, no formula."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import sqlalchemy as sa
from sqlalchemy.sql.elements import ColumnElement

from memseek.schema import inline
from memseek.schema import records
from memseek.search.compile.final import Top
from memseek.search.compile.query import CompilablePlan
from memseek.search.compile.query import Query
from memseek.search.compile.query import R
from memseek.search.compile.rules import eligible
from memseek.search.compile.rules import typed_field
from memseek.search.request import OrderBy

SORTED_LIST = R.seq > inline(0)
"""True of every record. Only a structured list states it, and every sort index's predicate
requires it (`memseek.indexes.sort_index`): otherwise each list of a scored search, which states
the rest of that predicate (collection, ready, not retracted), proves it too, and the planner
weighs every sort index for every such reference of `records` although none can serve a scored
list, which lengthens the planning of every scored search by each sort index (docs/search.md)."""


def sort_key(value: ColumnElement[Any], order: OrderBy, field_type: str) -> ColumnElement[Any]:
    """One structured sort key: its direction, missing values last; strings by code point."""
    if field_type == "string":
        value = sa.collate(value, "C")
    return (value.desc() if order.direction == "desc" else value.asc()).nulls_last()


def structured_order(plan: CompilablePlan, keys: Sequence[ColumnElement[Any]], source: Any) -> list[Any]:
    """The plan's sort keys over `keys` (one column per `order_by` entry), then `seq` and `id`."""
    orders = plan.order_by or ()
    directed = [sort_key(key, o, plan.field_types[o.field]) for key, o in zip(keys, orders, strict=True)]
    return [*directed, source.c.seq, source.c.id]


def _key_columns(plan: CompilablePlan, source: Any) -> list[ColumnElement[Any]]:
    """The sort keys a structured list carries (`key_0`, `key_1`, ...) as columns of `source`."""
    return [source.c[f"key_{i}"] for i in range(len(plan.order_by or ()))]


def structured_top(query: Query) -> Top:
    """The structured list is its own pool: it reads `records` with every rule applied and
    carries its sort keys, so nothing reads those rows again (a re-read would be planned, with
    every index on `records`, for nothing)."""
    plan = query.plan
    keys = [typed_field(o.field, plan.field_types[o.field]) for o in plan.order_by or ()]
    carried = [R.occurred_at, R.seq, *(key.label(f"key_{i}") for i, key in enumerate(keys))]
    listed = eligible(query, SORTED_LIST).add_columns(*carried)
    listed = listed.order_by(*structured_order(plan, keys, records))
    proposed = listed.limit(plan.candidates).cte("structured_candidates")
    ranked = sa.select(
        proposed,
        sa.null().label("value"),
        sa.null().label("pool_low"),
        sa.null().label("pool_high"),
        sa.func.count().over().label("ranked_count"),
    )
    top = ranked.order_by(*structured_order(plan, _key_columns(plan, proposed), proposed)).limit(plan.k)
    order = lambda rows: structured_order(plan, _key_columns(plan, rows), rows)  # noqa: E731
    return Top(proposed, top.cte("top"), order)
