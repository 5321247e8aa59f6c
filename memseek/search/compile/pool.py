"""A scored search's pool and ranking: the canonical re-check of the proposed rows with their
signals (`pool`), the rank formula's stages over it, and the best `k` (`scored_top`)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import sqlalchemy as sa
from sqlalchemy.dialects.postgresql import ARRAY
from sqlalchemy.sql.elements import ColumnElement
from sqlalchemy.sql.selectable import CTE
from sqlalchemy.sql.selectable import FromClause

from memseek.schema import record_touches
from memseek.schema import records
from memseek.search.compile.candidates import Proposal
from memseek.search.compile.candidates import newest_first
from memseek.search.compile.candidates import propose
from memseek.search.compile.final import Top
from memseek.search.compile.keywords import Keywords
from memseek.search.compile.query import Query
from memseek.search.compile.query import R
from memseek.search.compile.rank import Reading
from memseek.search.compile.rank import ages_last_accessed
from memseek.search.compile.rank import rank_inputs
from memseek.search.compile.rank import rank_stages
from memseek.search.compile.rank import rank_value
from memseek.search.compile.rank import signal_columns
from memseek.search.compile.rules import rules


def scored_top(query: Query, keywords: Keywords | None) -> Top:
    """The proposals, re-checked in the pool, ranked by the formula, cut to `k`."""
    root = query.plan.rank
    if root is None:
        raise ValueError("a scored search needs its effective rank formula")
    proposal = propose(query, keywords)
    labels = rank_inputs(root)
    read = reading(query, keywords, proposal)
    stage = rank_stages(pool(query, proposal, read, signal_columns(labels, read)), root, labels)
    value = rank_value(stage, root, labels)
    ranked = sa.select(stage.c.id, stage.c.occurred_at, stage.c.seq, value.label("value")).cte(
        "ranked_values"
    )
    bounded = sa.select(
        ranked,
        sa.func.min(ranked.c.value).over().label("pool_low"),
        sa.func.max(ranked.c.value).over().label("pool_high"),
        sa.func.count().over().label("ranked_count"),
    ).cte("ranked")
    top = sa.select(bounded).order_by(*_by_value(bounded)).limit(query.plan.k)
    return Top(proposal.cte, top.cte("top"), _by_value, proposal.short)


def _by_value(source: Any) -> list[Any]:
    """The spec's order: value desc, then newest first."""
    return [source.c.value.desc(), *newest_first(source)]


def reading(query: Query, keywords: Keywords | None, proposal: Proposal) -> Reading:
    """Where the pool's signals read a record: a single list's own carried columns, or `records`.

    `similarity` and `text_match` reuse the values the vector and keyword lists measured, which
    a single list carries and a hybrid interleaving carries for every list (`candidates._measured`).
    A row a list proposed had its value measured there: the same row version (one statement,
    one snapshot), the same expression and query, so the same value, without reading the 1.5 kB
    embedding out of TOAST or ranking the `tsv` a second time. Rows proposed otherwise are
    measured in the pool. A single list's pool reads its candidates' touches in one scan
    (`touches_of`)."""
    cte, own = proposal.cte, bool(proposal.carried)
    row = cte if own else records
    source: FromClause = cte
    touched = None
    rank = query.plan.rank
    if own and rank is not None and ages_last_accessed(rank):
        touches = touches_of(query, cte)
        touched = touches.c.last_accessed
        source = source.outerjoin(touches, touches.c.record_id == cte.c.id)
    return Reading(query, keywords, row, source, proposal.distance, proposal.match, own, touched)


def touches_of(query: Query, proposed: CTE) -> Any:
    """The touches of every record a single list proposed, in one index scan over an array of
    their ids rather than one primary-key lookup per candidate.

    Joined to the list alone, it is hash-joined. A hybrid pool, which joins `records` and the
    three lists, keeps a lookup per candidate: PostgreSQL estimates 10 rows for any array it
    cannot see, and there it chose a nested loop over the materialised touches. A generic plan
    (`Query.keeps_generic_plan`), which estimates the list itself at a row, would too, scanning
    the whole array once per candidate: there the touches are read into a table of their own
    first (a materialised CTE)."""
    t = record_touches.c
    ids = sa.func.array(sa.select(proposed.c.id).scalar_subquery(), type_=ARRAY(records.c.id.type))
    found = sa.select(t.record_id, t.last_accessed)
    found = found.where(t.workspace_id == query.ws, t.record_id == sa.any_(ids))
    if query.keeps_generic_plan:
        return found.cte("touches").prefix_with("MATERIALIZED")
    return found.subquery("touches")


def pool(query: Query, proposal: Proposal, read: Reading, signals: Sequence[ColumnElement[Any]]) -> CTE:
    """The canonical re-check of the proposed rows, with the signals ranking needs.

    A single list (`Proposal.carried`) read its rows from `records` with every rule applied, in
    this same statement and snapshot: those rows are the re-checked ones, so the pool computes
    its signals from the columns the list carried instead of looking every candidate up in
    `records` again. A hybrid search merges several lists and reads `records` again; a
    structured search, which computes no signals, ranks its list directly
    (`structured.structured_top`).

    MATERIALIZED: later stages read each signal several times (a normalize window reads its
    input for min, max and the row); inlined, Postgres would recompute `ts_rank_cd` and the
    cosine distance at every reference."""
    proposed = proposal.cte
    if proposal.carried:  # `signals` read the list's columns (`Reading.row`)
        selected = sa.select(proposed.c.id, proposed.c.occurred_at, proposed.c.seq, *signals)
        return selected.select_from(read.source).cte("pool").prefix_with("MATERIALIZED")
    joined = read.source.join(records, sa.and_(R.workspace_id == query.ws, R.id == proposed.c.id))
    rechecked = sa.select(R.id, R.occurred_at, R.seq, *signals).select_from(joined).where(*rules(query))
    return rechecked.cte("pool").prefix_with("MATERIALIZED")
