"""The final select: the `top` rows joined back to `records` for the values the response needs.

One row with a NULL id (and the candidate count) means nothing survived."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import sqlalchemy as sa
from sqlalchemy.sql.elements import ColumnElement
from sqlalchemy.sql.selectable import CTE
from sqlalchemy.sql.selectable import Select

from memseek.schema import record_columns
from memseek.schema import records
from memseek.search.compile.query import Output
from memseek.search.compile.query import Query
from memseek.search.compile.query import R

OUTPUT_COLUMNS = (
    "collection", "collection_version", "entity", "type", "key", "status", "depth",
    "created_at", "last_accessed", "run_id", "scores",
)  # fmt: skip


@dataclass(frozen=True, slots=True)
class Top:
    """A search's best `k` rows, ready for the final select."""

    proposed: CTE
    """The candidates (the statement reports how many there were)."""
    rows: CTE
    """The top rows: `id`, `occurred_at`, `seq`, `value`, `pool_low`, `pool_high`,
    `ranked_count` (and a structured search's sort keys)."""
    order: Callable[[Any], list[Any]]
    """The rows' order, applied to any select carrying their columns."""
    short: tuple[ColumnElement[bool], ...] = ()
    """When the candidate lists were too short to be trusted (`candidates.Proposal.short`)."""


def final_select(query: Query, top: Top, output: Output, counted: ColumnElement[int] | None) -> Select[Any]:
    """The statement's rows: the candidate count, the record count the rarity labels used
    (`counted`, when they label), whether the lists were `short`, and each top row with the
    stored columns `output` asks for."""
    meta = sa.select(sa.func.count().label("candidate_count")).select_from(top.proposed).subquery("meta")
    rows = _hits(query, top.rows, output)
    outer = meta.outerjoin(rows, sa.true())
    extra: list[ColumnElement[Any]] = [] if counted is None else [counted.label("counted_records")]
    if top.short:
        extra.append(sa.or_(*top.short).label("short"))
    return sa.select(meta.c.candidate_count, *extra, rows).select_from(outer).order_by(*top.order(rows))


def _hits(query: Query, top: CTE, output: Output) -> Any:
    """The top rows with the stored values `output` asks for; a response that shows none reads
    no `records` row (the top rows by key, with their touches and columns, are a cost of their
    own)."""
    if not output.reads_records():
        return sa.select(top).subquery("hits")
    wanted = record_columns(OUTPUT_COLUMNS, query.ws, query.queued_touch())
    wanted += [R.text] if output.text else []
    wanted += [R.content] if output.content else []
    wanted += [R.annotations] if output.annotations else []
    joined = top.join(records, sa.and_(R.workspace_id == query.ws, R.id == top.c.id))
    return sa.select(top, *wanted).select_from(joined).subquery("hits")
