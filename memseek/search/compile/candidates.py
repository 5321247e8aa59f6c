"""Candidate generation: each scored mode's list of at most `candidates` ids, as a `Proposal`.

Nearest embeddings (`ORDER BY embedding <=> :q LIMIT n`, servable by HNSW or an exact scan),
keyword matches (`tsv @@ memseek_any_lexeme(cfg, :q)`, best first by the formula's keyword
signal — `bm25`, else `ts_rank_cd` — among the records holding the query lexemes' best postings
in a broad scope), newest first, or — hybrid —
the three interleaved by position and deduplicated. Every list applies every rule while
proposing (`rules.eligible`), so a selective scope still yields enough candidates."""

from __future__ import annotations

from collections.abc import Callable
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import sqlalchemy as sa
from sqlalchemy.sql.elements import ColumnElement
from sqlalchemy.sql.selectable import CTE
from sqlalchemy.sql.selectable import Select

from memseek.schema import records
from memseek.search.compile.keywords import Keywords
from memseek.search.compile.keywords import keyword_rank
from memseek.search.compile.keywords import posting_ids
from memseek.search.compile.query import SINGLE_LIST_MODES
from memseek.search.compile.query import Query
from memseek.search.compile.query import R
from memseek.search.compile.query import bounds_keywords
from memseek.search.compile.query import bounds_vectors
from memseek.search.compile.query import float_literal
from memseek.search.compile.query import scopes_entities
from memseek.search.compile.rank import carried_columns
from memseek.search.compile.rules import eligible


@dataclass(frozen=True, slots=True)
class Proposal:
    """A scored search's candidates and what its pool needs of them."""

    cte: CTE
    """The proposed ids (`id`; `pos` where a hybrid search interleaves lists)."""
    carried: tuple[str, ...] = ()
    """The `records` columns a single list carries (`rank.carried_columns`): its rows are the
    pool's, which reads no `records` row again."""
    distance: ColumnElement[float] | None = None
    """The cosine distance the semantic list measured for the rows it proposed, else NULL."""
    match: ColumnElement[float] | None = None
    """The keyword match the keyword list measured for the rows it proposed, else NULL."""
    short: tuple[ColumnElement[bool], ...] = ()
    """Conditions under which the lists were too short to be trusted (the search then runs its
    next fallback): `_bounded_matches`, `lists_short`."""


def propose(query: Query, keywords: Keywords | None) -> Proposal:
    """The candidates of `query`'s scored mode."""
    return CANDIDATES[query.plan.mode](query, keywords)


def newest_first(source: Any) -> list[Any]:
    """The spec's order among equal values: newest first, then ingestion order, then id."""
    return [source.c.occurred_at.desc(), source.c.seq.desc(), source.c.id]


def _numbered(
    query: Query, inner: Select[Any], name: str, order: Callable[[Any], list[Any]], *keep: str
) -> CTE:
    """A bounded list (with the columns named in `keep`) and, when a hybrid search interleaves
    it with other lists, 1-based positions in a deterministic (total) order. A single list is
    the pool itself and needs none: numbering would sort its rows a second time."""
    sub = inner.subquery(f"{name}_raw")
    columns = [sub.c.id, *(sub.c[column] for column in keep)]
    if query.plan.mode not in SINGLE_LIST_MODES:
        columns.insert(1, sa.func.row_number().over(order_by=order(sub)).label("pos"))
    return sa.select(*columns).cte(name)


def _carry(inner: Select[Any], carried: Sequence[str]) -> Select[Any]:
    """`inner` (a list's select over `records`) with the columns its pool needs."""
    present = set(inner.selected_columns.keys())
    return inner.add_columns(*(R[name] for name in carried if name not in present))


def _row_count(cte: CTE) -> ColumnElement[int]:
    return sa.select(sa.func.count()).select_from(cte).scalar_subquery()


# --- nearest embeddings ------------------------------------------------------------------------


def vector_candidates(query: Query, keywords: Keywords | None = None) -> Proposal:
    carried = carried_columns(query.plan)
    distance = proposal_distance(query)
    embedded = (R.embedding.isnot(None), *query.same_model())
    inner = eligible(query, *embedded).add_columns(distance.label("distance"))
    inner = inner.order_by(distance).limit(query.list_size)
    order = lambda sub: [sub.c.distance, sub.c.id]  # noqa: E731
    cte = _numbered(query, _carry(inner, carried), "vector_candidates", order, "distance", *carried)
    short: tuple[ColumnElement[bool], ...] = ()
    if bounds_vectors(query.plan) and not query.exact_vectors:
        short = (_vectors_short(query, cte, embedded),)
    return Proposal(cte, carried, distance=cte.c.distance, short=short)


def _vectors_short(query: Query, cte: CTE, embedded: Sequence[ColumnElement[bool]]) -> ColumnElement[bool]:
    """The index's list cannot fill `k` although the scope has embeddings it did not propose:
    the search then measures the scope exactly (`Lists.EXACT_VECTORS`). Only a list under `k`
    looks further (PostgreSQL evaluates the second test only when the first holds), so a search
    that fills its `k` pays nothing for it."""
    enough = min(query.plan.k, query.list_size)  # part of the shape key
    unproposed = eligible(query, *embedded, R.id.not_in(sa.select(cte.c.id)))
    return sa.and_(_row_count(cte) < enough, unproposed.exists())


def proposal_distance(query: Query) -> ColumnElement[float]:
    """The distance nearest embeddings are proposed by.

    Broad scope: `embedding <=> :q` alone, the shape an HNSW index serves (with an iterative
    scan past rows the scope filters out). A scope naming entities is read exactly instead:
    `(embedding <=> :q) + 0` orders identically but no index can serve it, so every in-scope
    row is measured. An entity's records are not spread evenly around a query (accounts have
    topics), so the iterative scan can step over `hnsw.max_scan_tuples` rows of other entities
    and stop short of the candidates wanted, where the exact scan of the entity's own rows finds
    them all. The same rule as keyword candidates, which take the exact path for entity scopes.
    A broad vector search whose index list came back short is measured exactly too
    (`Lists.EXACT_VECTORS`, `_vectors_short`)."""
    distance: ColumnElement[float] = R.embedding.cosine_distance(query.vector())
    exact = scopes_entities(query.plan) or query.exact_vectors
    return distance + float_literal(0.0) if exact else distance


# --- keyword matches ----------------------------------------------------------------------------


def text_candidates(query: Query, keywords: Keywords | None) -> Proposal:
    if keywords is None:
        raise ValueError("a keyword list needs the query's labelled lexemes (`rank.matches_keywords`)")
    carried = carried_columns(query.plan)
    short: tuple[ColumnElement[bool], ...] = ()
    if bounds_keywords(query.plan) and not query.exact_keywords:
        matches, short = _bounded_matches(query, keywords, carried)
    else:
        matches = _best_matches(query, keywords, carried)
    order = lambda sub: [sub.c.match.desc(), *newest_first(sub)]  # noqa: E731
    cte = _numbered(query, matches, "text_candidates", order, "match", *carried)
    return Proposal(cte, carried, match=cte.c.match, short=short)


def _best_matches(
    query: Query, keywords: Keywords, carried: Sequence[str], *extra: ColumnElement[bool]
) -> Select[Any]:
    """The `list_size` eligible records that match the query best (among `extra`)."""
    rank = keyword_rank(query, keywords)
    matches = eligible(query, query.matches_query(), *extra)
    matches = _carry(matches.add_columns(rank.label("match"), R.occurred_at, R.seq), carried)
    return matches.order_by(rank.desc(), *newest_first(records)).limit(query.list_size)


def _bounded_matches(
    query: Query, keywords: Keywords, carried: Sequence[str]
) -> tuple[Select[Any], tuple[ColumnElement[bool]]]:
    """The best matches among the best postings, and when they are too few to be trusted.

    The best postings are the workspace's: superseded, retracted or out-of-scope records can hold
    all of them, and a scope with matches of its own must not come back empty. So the statement
    reports `short` when the bounded matches cannot fill `k` although more postings exist (fewer
    proposals than the list's length mean every lexeme's postings were read whole, and the
    bounded matches are the exact ones); the search then runs its exact statement instead
    (`CompiledSearch.fallbacks`), which ranks all of the scope's own matches.

    The exact list is a second statement, not a gated branch of this one: PostgreSQL plans and
    starts a never-taken branch with every search (docs/search.md)."""
    postings = posting_ids(query, keywords).cte("text_postings")
    in_postings = R.id.in_(sa.select(postings.c.record_id))
    bounded = _best_matches(query, keywords, carried, in_postings).cte("text_bounded")
    proposed, kept = (_row_count(cte) for cte in (postings, bounded))
    enough = min(query.plan.k, query.list_size)  # part of the shape key
    return sa.select(bounded), (sa.and_(kept < enough, proposed >= query.list_size),)


# --- newest first and hybrid -------------------------------------------------------------------


def recent_candidates(query: Query, keywords: Keywords | None = None) -> Proposal:
    carried = carried_columns(query.plan)
    inner = _carry(eligible(query).add_columns(R.occurred_at, R.seq), carried)
    inner = inner.order_by(*newest_first(records)).limit(query.plan.candidates)
    return Proposal(_numbered(query, inner, "recent_candidates", newest_first, *carried), carried)


def hybrid_candidates(query: Query, keywords: Keywords | None) -> Proposal:
    """Semantic, keyword and newest-first lists interleaved by position, first slot wins."""
    lists = (vector_candidates(query), text_candidates(query, keywords), recent_candidates(query))
    ctes = [listed.cte for listed in lists]
    interleaved = _interleaved(query, ctes)
    short = tuple(condition for listed in lists for condition in listed.short)
    if query.list_size < query.plan.candidates:
        missing_slot = (query.list_size + 1) * len(ctes)
        short += (lists_short(query, interleaved, ctes[:2], missing_slot),)
    return Proposal(interleaved, distance=interleaved.c.distance, match=interleaved.c.match, short=short)


def _interleaved(query: Query, ctes: Sequence[CTE]) -> CTE:
    """Each list's rows by slot (position × lists + list), each id once at its first slot."""
    union = sa.union_all(
        *(
            sa.select(cte.c.id, (cte.c.pos * len(ctes) + i).label("slot"), *_measured(cte, ctes[:2]))
            for i, cte in enumerate(ctes)
        )
    ).subquery("interleaved")
    slots = sa.select(
        union.c.id,
        sa.func.min(union.c.slot).label("slot"),
        sa.func.min(union.c.distance).label("distance"),
        sa.func.max(union.c.match).label("match"),
    ).group_by(union.c.id)
    first = slots.subquery("slots")
    order = [first.c.slot, first.c.id]
    ranked = sa.select(
        first.c.id,
        first.c.slot,
        sa.func.row_number().over(order_by=order).label("pos"),
        first.c.distance,
        first.c.match,
    )
    return ranked.order_by(*order).limit(query.plan.candidates).cte("hybrid_candidates")


def _measured(listed: CTE, measuring: Sequence[CTE]) -> list[ColumnElement[Any]]:
    """A hybrid list's rows with the values the measuring lists took (`distance` of the vector
    list, `match` of the keyword list; NULL where `listed` did not measure it). The pool reads
    them from the interleaving instead of joining each list again (`pool.reading`)."""
    return [
        (listed.c[name] if listed is measured else sa.null()).label(name)  # typed by the list measuring it
        for measured, name in zip(measuring, ("distance", "match"), strict=True)
    ]


def lists_short(
    query: Query, interleaved: CTE, shortened: Sequence[CTE], missing_slot: int
) -> ColumnElement[bool]:
    """Whether full-length lists could have proposed other records than the shortened ones.

    Slots below `missing_slot` (every list's first `list_size` positions) are the same either
    way. They differ only if a shortened list was cut at its length, the interleaving took a
    slot past it, and it took a full `candidates`: with fewer, the newest-first list (never
    shortened) ran out, so every eligible record is already proposed."""
    cut = sa.or_(*(_row_count(cte) >= query.list_size for cte in shortened))
    taken = sa.select(
        sa.func.count().label("taken"),
        sa.func.count().filter(interleaved.c.slot >= missing_slot).label("deep"),
    ).subquery("interleaving")
    went_deep = sa.select(sa.and_(taken.c.taken >= query.plan.candidates, taken.c.deep > 0)).scalar_subquery()
    return sa.and_(cut, went_deep)


CANDIDATES: dict[str, Callable[[Query, Keywords | None], Proposal]] = {
    "vector": vector_candidates,
    "text": text_candidates,
    "recent": recent_candidates,
    "hybrid": hybrid_candidates,
}
"""Scored mode → its candidate generator."""
