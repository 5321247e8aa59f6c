"""What every part of one statement is built from: the resolved plan, the request's values as
named parameters, and the query in its SQL forms (`Query`)."""

from __future__ import annotations

import enum
import math
from collections.abc import Callable
from collections.abc import Mapping
from collections.abc import Sequence
from dataclasses import dataclass
from dataclasses import field
from datetime import datetime
from typing import Any
from typing import Protocol
from uuid import UUID

import sqlalchemy as sa
from sqlalchemy.dialects.postgresql import ARRAY
from sqlalchemy.dialects.postgresql import DOUBLE_PRECISION
from sqlalchemy.dialects.postgresql import REGCONFIG
from sqlalchemy.dialects.postgresql import TSQUERY
from sqlalchemy.dialects.postgresql import TSVECTOR
from sqlalchemy.sql.elements import BindParameter
from sqlalchemy.sql.elements import ColumnElement
from sqlalchemy.sql.elements import Grouping

from memseek.catalog.rank import RankNode
from memseek.schema import records
from memseek.search.embed import QueryVectorType
from memseek.search.request import Condition
from memseek.search.request import OrderBy
from memseek.search.request import Scope

FLOAT = DOUBLE_PRECISION
TS = sa.TIMESTAMP(timezone=True)
R = records.c
HYBRID_LIST_SHARE = 0.5
"""A broad hybrid search's semantic and keyword lists first propose this share of `candidates` each:
interleaving three lists rarely reaches deeper than a third of `candidates` into any of them,
and the two lists cost in proportion to their length (HNSW's `ef_search`, the records ranked
by `ts_rank_cd`). When the cut did reach past a shortened list, the statement reports `short`
and the search runs again with full-length lists (`hybrid_list_size`, `candidates.lists_short`)."""
SINGLE_LIST_MODES = ("vector", "text", "recent")
"""Scored modes whose candidates come from one list: its rows are the pool (`pool.pool`)."""


class PlanCollection(Protocol):
    """What compilation reads of one collection version a search can reach."""

    @property
    def name(self) -> str: ...
    @property
    def version(self) -> int: ...
    @property
    def text_language(self) -> str: ...


class CompilablePlan(Protocol):
    """What compilation reads of one resolved search (`memseek.search.resolve.SearchPlan`);
    read-only, as a frozen plan is."""

    @property
    def mode(self) -> str: ...
    @property
    def q(self) -> str | None: ...
    @property
    def scope(self) -> Scope: ...
    @property
    def where(self) -> Mapping[str, Condition]: ...
    @property
    def field_types(self) -> Mapping[str, str]: ...
    @property
    def order_by(self) -> Sequence[OrderBy] | None: ...
    @property
    def collections(self) -> Sequence[PlanCollection]: ...
    @property
    def rank(self) -> RankNode | None: ...
    @property
    def k(self) -> int: ...
    @property
    def candidates(self) -> int: ...


@dataclass(frozen=True, slots=True)
class Output:
    """Which stored values the final select fetches for the response."""

    text: bool = False
    content: bool = False
    annotations: bool = False
    metadata: bool = True
    """The stored columns of `final.OUTPUT_COLUMNS` (what `include`, rendering and boosts read). A
    response that shows none of them (ids, scores and ranks only) reads no `records` row at
    the end (`final.final_select`)."""

    def reads_records(self) -> bool:
        return self.metadata or self.text or self.content or self.annotations


@dataclass(frozen=True, slots=True)
class Inputs:
    """Per-request values bound into the statement."""

    workspace_id: UUID
    now: datetime
    """One instant for every age signal of a request, so combined sources agree."""
    vector: Sequence[float] | None = None
    embedding_model: str | None = None
    large_workspace: bool = False
    """The workspace is known to hold at least `RARITY_SCALE` records, so rarity labels need not
    count them (`search_state.LargeWorkspaces`: a finding that expires, and that an erasure drops)."""
    queued_touches: Mapping[UUID, datetime] = field(default_factory=dict)
    """This process's touches of the workspace not yet committed, each with the time it will be
    written with (`Query.queued_touch`)."""


class Lists(enum.Enum):
    """How long a statement's candidate lists are and how they are read: the first try (a hybrid
    search's semantic and keyword lists shortened), full length, full length with the scope's
    keyword matches ranked exactly (no postings bound), or a vector search's nearest embeddings
    measured exactly (no HNSW index)."""

    FIRST = "first"
    FULL = "full"
    EXACT_KEYWORDS = "exact_keywords"
    EXACT_VECTORS = "exact_vectors"


def scopes_entities(plan: CompilablePlan) -> bool:
    """Whether the plan's scope names entities: their rows are few and read exactly, however
    long the lists (`candidates.proposal_distance`, `bounds_keywords`)."""
    return len(plan.scope.entities) > 0


def bounds_vectors(plan: CompilablePlan) -> bool:
    """Whether a vector search's nearest embeddings come from the HNSW index alone: a broad
    scope (an entity scope is read exactly, `candidates.proposal_distance`). The index can stop
    short of the scope's rows (an iterative scan ends at `hnsw.max_scan_tuples`, nearer rows the
    scope filters out can fill it), so such a search reports when its list is too short to be
    trusted and then measures the scope exactly (`Lists.EXACT_VECTORS`)."""
    return plan.mode == "vector" and not scopes_entities(plan)


def hybrid_list_size(plan: CompilablePlan) -> int:
    """The length of the first try's semantic and keyword lists (`HYBRID_LIST_SHARE`): shortened
    in a broad scope only. A scope naming entities measures and ranks every one of its rows
    whatever the lists' length (`candidates.proposal_distance`, `bounds_keywords`), so
    shortening would save nothing there and could only add a second statement."""
    if plan.mode != "hybrid" or scopes_entities(plan):
        return plan.candidates
    return max(1, math.ceil(plan.candidates * HYBRID_LIST_SHARE))


def bounds_keywords(plan: CompilablePlan) -> bool:
    """Whether the plan's keyword list ranks only the records holding the best postings (a
    broad scope); a scope naming entities ranks all its own matches (`keywords.posting_ids`)."""
    return plan.mode in ("text", "hybrid") and not scopes_entities(plan)


def reuses_plan(plan: CompilablePlan) -> bool:
    """Whether one plan serves every request of this shape alike, so that PostgreSQL may keep a
    generic plan for its prepared statement instead of planning each request:

    * a newest-first or structured list of one entity in one collection version. It reads one
      index in order, `records_scope` (workspace, collection, entity, occurred_at) or the
      order's sort index (`memseek.indexes.sort_index`: the collection, the JSON key and the
      type guard are literals, `inline`, so the partial expression index matches a generic plan
      too), and stops after its rows, however many the entity has;
    * a text search of a broad scope (`bounds_keywords`): its keyword list walks a bounded
      number of postings of whatever words the query has and looks their records up by id,
      whatever the workspace's size, so planning it for each request (most of a small
      workspace's statement time) buys nothing. Its tsquery is computed once (`Query.tsquery`)
      and its touches read into a table of their own (`pool.touches_of`): on a generic plan
      the function would otherwise run for every row, and the touches be looked up once per
      candidate. Its exact fallback, which ranks every match, is planned per request
      (`execute.fallback_settings`).

    Any other shape is planned per request: a generic plan suited to a small account reads and
    sorts all of a large one's rows (docs/search.md)."""
    one_entity = len(plan.collections) == 1 and len(plan.scope.entities) == 1
    return (plan.mode in ("recent", "structured") and one_entity) or (
        plan.mode == "text" and bounds_keywords(plan)
    )


def learns_plan(plan: CompilablePlan) -> bool:
    """Whether the statement's plan depends on the request's values only through the workspace,
    and there only in whether its semantic list is read through the HNSW index: a vector or
    hybrid search of a broad scope. An entity scope is always read exactly
    (`candidates.proposal_distance`); time bounds are values that differ between requests of one
    template. A hybrid search's query words are values too, but they choose rows, not paths: its
    keyword list walks the postings of whatever words there are, and the query's tsquery is
    computed once (`Query.tsquery`). `execute` then keeps a generic plan pinned to the index for
    a workspace PostgreSQL's own plan reads through it (`execute.AnnPlans`)."""
    scope = plan.scope
    return (
        plan.mode in ("vector", "hybrid")
        and not scopes_entities(plan)
        and scope.occurred_after is None
        and scope.occurred_before is None
    )


def float_literal(value: float) -> ColumnElement[float]:
    """A float8 constant of the statement."""
    return sa.literal(float(value), FLOAT)


def request_value(name: str, type_: Any, expanding: bool = False) -> BindParameter[Any]:
    """A `statement.REQUEST_VALUES` parameter: named, typed, required at execution, no value of
    its own (the template serves every request of its shape)."""
    return sa.bindparam(name, type_=type_, required=True, expanding=expanding)


@dataclass(frozen=True, slots=True)
class Query:
    """One statement's plan and request, with the request values as parameters. Every builder
    of the statement takes it; it holds no SQL built from it."""

    plan: CompilablePlan
    inputs: Inputs
    list_size: int
    """How many rows the semantic and keyword lists propose (`hybrid_list_size`)."""
    exact_keywords: bool
    """Rank every match of the scope, not only the records holding the best postings."""
    exact_vectors: bool
    """Measure every embedding of the scope, not only those the HNSW index proposes."""
    ws: BindParameter[Any]
    now: BindParameter[Any]

    @classmethod
    def build(cls, plan: CompilablePlan, inputs: Inputs, lists: Lists) -> Query:
        list_size = hybrid_list_size(plan) if lists is Lists.FIRST else plan.candidates
        ws = request_value("workspace_id", records.c.workspace_id.type)
        now = request_value("now", TS)
        exact_keywords, exact_vectors = lists is Lists.EXACT_KEYWORDS, lists is Lists.EXACT_VECTORS
        return cls(plan, inputs, list_size, exact_keywords, exact_vectors, ws, now)

    def vector(self) -> ColumnElement[Any]:
        if self.inputs.vector is None:
            raise ValueError("this search needs the query embedding")
        return request_value("query_vector", QueryVectorType())

    def queued_touch(self, row: Any = records) -> ColumnElement[Any]:
        """The row's touch not yet written (NULL when there is none): the time at the id's place
        in the request's two parallel arrays (`Inputs.queued_touches`). A search ranks on the
        touches of the searches before it without waiting for them to commit, with the very
        time the touch writer will write (`memseek.write.touch`)."""
        ids = request_value("queued_touches", ARRAY(records.c.id.type))
        times = request_value("queued_touch_times", ARRAY(TS))
        # Parenthesised: bare, `$1::timestamptz[][i]` would read the subscript as part of the type.
        return Grouping(times)[sa.func.array_position(ids, row.c.id)]

    def same_model(self, row: Any = records) -> list[ColumnElement[bool]]:
        """The embedding must come from the query vector's model (when the request names one)."""
        if not self.inputs.embedding_model:
            return []
        return [row.c.embedding_model == request_value("embedding_model", sa.Text)]

    @property
    def keeps_generic_plan(self) -> bool:
        """Whether this statement may run on a generic plan (`reuses_plan`; a bounded keyword
        list's exact fallback never does)."""
        return reuses_plan(self.plan) and not self.exact_keywords

    def tsquery(self) -> ColumnElement[Any]:
        """OR over the query's lexemes (`memseek_any_lexeme`). Planned for each request, the call
        is folded into a constant whose selectivity the planner reads (as a parameter it guesses
        a few rows, and would look a text search's touches up once per candidate). A statement
        that may run on a generic plan (`learns_plan`, `keeps_generic_plan`) computes it in a
        subquery, once (an InitPlan): a generic plan would otherwise call the function, which
        PostgreSQL cannot inline, for every row it matches or ranks."""
        built = self._per_language(lambda cfg, q: sa.func.memseek_any_lexeme(cfg, q, type_=TSQUERY), TSQUERY)
        once = learns_plan(self.plan) or self.keeps_generic_plan
        return sa.select(built).scalar_subquery() if once else built

    def matches_query(self, row: Any = records) -> ColumnElement[bool]:
        """Whether the record holds any of the query's lexemes (`tsv @@ tsquery`)."""
        return row.c.tsv.bool_op("@@")(self.tsquery())  # type: ignore[no-any-return]

    def query_tsvector(self) -> ColumnElement[Any]:
        """The query's lexemes as a tsvector (what postings are keyed by)."""
        return self._per_language(lambda cfg, q: sa.func.to_tsvector(cfg, q, type_=TSVECTOR), TSVECTOR)

    def _per_language(self, build: Callable[[Any, Any], ColumnElement[Any]], kind: Any) -> ColumnElement[Any]:
        """`build(config, q)` for every text configuration of the reachable collections, `||`-joined."""
        languages = sorted({c.text_language for c in self.plan.collections}) or ["english"]
        q = request_value("query_text", sa.Text)
        parts = [build(sa.cast(lang, REGCONFIG), q) for lang in languages]
        joined = parts[0]
        for part in parts[1:]:
            joined = joined.op("||", return_type=kind)(part)
        return joined
