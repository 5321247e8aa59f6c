"""The eligibility rules: workspace, readiness, retraction, collections, scope and the typed
filters over `records.fields`. Every list applies them while proposing, and the canonical
re-check applies them again (`pool.pool`)."""

from __future__ import annotations

from collections.abc import Callable
from collections.abc import Mapping
from collections.abc import Sequence
from datetime import datetime
from decimal import Decimal
from typing import Any

import sqlalchemy as sa
from sqlalchemy.dialects.postgresql import ARRAY
from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.sql.elements import ColumnElement
from sqlalchemy.sql.selectable import Select

from memseek.catalog.fields import epoch_micros
from memseek.catalog.fields import parse_datetime
from memseek.schema import field_text
from memseek.schema import inline
from memseek.schema import records
from memseek.search.compile.query import TS
from memseek.search.compile.query import PlanCollection
from memseek.search.compile.query import Query
from memseek.search.compile.query import R
from memseek.search.compile.query import request_value
from memseek.search.request import Condition
from memseek.search.request import Scope

INT4_MAX = 2**31 - 1
"""The largest `records.depth` (an `integer` column)."""


def rules(query: Query) -> list[ColumnElement[bool]]:
    """Every eligibility rule, applied to `records` (unaliased)."""
    plan = query.plan
    return [
        R.workspace_id == query.ws,
        R.processing == inline("ready"),
        R.retracted_at.is_(None),
        _collections_rule(plan.collections),
        *scope_rules(plan.scope),
        *where_rules(plan.where, plan.field_types),
    ]


def eligible(query: Query, *extra: ColumnElement[bool]) -> Select[Any]:
    """The ids of the eligible records (among `extra`): where every list starts."""
    return sa.select(R.id).where(*rules(query), *extra)


def _collections_rule(collections: Sequence[PlanCollection]) -> ColumnElement[bool]:
    pairs = sorted({(c.name, c.version) for c in collections})
    if not pairs:
        return sa.false()
    listed = [sa.tuple_(inline(name), inline(version)) for name, version in pairs]
    return sa.tuple_(R.collection, R.collection_version).in_(listed)


def scope_rules(scope: Scope) -> list[ColumnElement[bool]]:
    """The scope's predicates (collections are resolved into the plan's collection versions)."""
    out: list[ColumnElement[bool]] = []
    if scope.entities:
        out.append(R.entity.in_(request_value("scope_entities", sa.Text, expanding=True)))
    if scope.types:
        out.append(R.type.in_(list(scope.types)))
    if scope.status != "all":
        out.append(R.status == inline(scope.status))
    if scope.keyed != "any":
        out.append(R.key.isnot(None) if scope.keyed else R.key.is_(None))
    if scope.versions == "current":
        out.append(R.is_current.is_(True))
    if scope.occurred_after is not None:
        out.append(R.occurred_at > request_value("occurred_after", TS))
    if scope.occurred_before is not None:
        out.append(R.occurred_at < request_value("occurred_before", TS))
    if scope.depth_lte is not None:  # depth is an int4: a larger bound keeps every record
        out.append(R.depth <= min(scope.depth_lte, INT4_MAX))
    return out


# --- typed filters over records.fields ------------------------------------------------------

_JSON_TYPE = {"string": "string", "number": "number", "integer": "number", "datetime": "number",
              "boolean": "boolean", "string_array": "array"}  # fmt: skip


def field_json(name: str) -> ColumnElement[Any]:
    """`fields -> 'name'` (the materialised value, NULL when absent)."""
    return R.fields.op("->", return_type=JSONB)(inline(name))


def typed_field(name: str, field_type: str) -> ColumnElement[Any]:
    """The field as a comparable SQL value; NULL when absent or of another JSON type.

    The type guard makes the cast safe whatever order Postgres evaluates predicates in (a
    same-named field of another collection may hold another type)."""
    value = field_json(name)
    if field_type == "string":
        typed: ColumnElement[Any] = field_text(records, name)
    elif field_type == "boolean":
        typed = sa.cast(value, sa.Boolean)
    elif field_type == "string_array":
        typed = value
    else:  # numbers and datetimes (epoch microseconds)
        typed = sa.cast(value, sa.Numeric)
    guard = sa.func.jsonb_typeof(value) == inline(_JSON_TYPE[field_type])
    return sa.case((guard, typed), else_=sa.null())


def bind_value(field_type: str, value: Any) -> Any:
    """A request value in the materialised form of `field_type` (datetimes → epoch µs).

    Numbers (and epoch µs) are bound as exact NUMERIC, the type the stored field is cast to.
    Left to itself SQLAlchemy would type each bind by its Python value: an IN list by its first
    value (so 6.5 after a 5 became INTEGER) and an integer past 64 bits as an overflowing BIGINT.
    """
    if isinstance(value, datetime):
        value = epoch_micros(value)
    elif field_type == "datetime" and isinstance(value, str):
        moment = parse_datetime(value)
        if moment is None:
            raise ValueError(f"not a timestamp with a timezone: {value!r}")
        value = epoch_micros(moment)
    if _JSON_TYPE[field_type] != "number":
        return value
    # repr: a float's shortest exact form, the one JSON carried (Decimal(0.1) would be binary noise)
    exact = Decimal(repr(value)) if isinstance(value, float) else Decimal(value)
    return sa.bindparam(None, exact, type_=sa.Numeric)


OperatorRule = Callable[[str, str, Any], ColumnElement[bool]]


def _eq(name: str, field_type: str, value: Any) -> ColumnElement[bool]:
    if isinstance(value, tuple | list):  # an exact, ordered list match
        return field_json(name) == sa.bindparam(None, list(value), type_=JSONB)
    matches: ColumnElement[bool] = typed_field(name, field_type) == bind_value(field_type, value)
    return matches


def _in(name: str, field_type: str, values: Any) -> ColumnElement[bool]:
    return typed_field(name, field_type).in_([bind_value(field_type, v) for v in values])


def _compare(op: str) -> OperatorRule:
    def rule(name: str, field_type: str, value: Any) -> ColumnElement[bool]:
        return typed_field(name, field_type).bool_op(op)(bind_value(field_type, value))

    return rule


def _exists(name: str, field_type: str, value: Any) -> ColumnElement[bool]:
    present: ColumnElement[bool] = R.fields.has_key(inline(name))
    return present if value else sa.not_(present)


def _contains(method: str) -> OperatorRule:
    def rule(name: str, field_type: str, values: Any) -> ColumnElement[bool]:
        items = sa.bindparam(None, list(values), type_=ARRAY(sa.Text))
        value = field_json(name)
        is_list = sa.func.jsonb_typeof(value) == inline("array")
        return sa.and_(is_list, value.bool_op(method)(items))

    return rule


OPERATOR_RULES: dict[str, OperatorRule] = {
    "eq": _eq,
    "in": _in,
    "gt": _compare(">"),
    "gte": _compare(">="),
    "lt": _compare("<"),
    "lte": _compare("<="),
    "exists": _exists,
    "contains_any": _contains("?|"),
    "contains_all": _contains("?&"),
}
"""Condition operator (request name) → SQL predicate, one rule each."""


def where_rules(where: Mapping[str, Condition], field_types: Mapping[str, str]) -> list[ColumnElement[bool]]:
    """Every condition of every field, ANDed (field order, then operator order)."""
    return [
        OPERATOR_RULES[op](name, field_types[name], value)
        for name, condition in where.items()
        for op, value in condition.operators().items()
    ]
