"""One resolved search → ONE SQLAlchemy Core statement (pure: no IO, no Flask).

The statement reads top to bottom like the spec's "How a search actually runs":

1. `proposed` — candidate generation per mode, at most `candidates` ids: nearest embeddings
   (`ORDER BY embedding <=> :q LIMIT n`, servable by HNSW or an exact scan), keyword matches
   (`tsv @@ memseek_any_lexeme(cfg, :q)`, best `ts_rank_cd` first, among the records holding
   the query lexemes' best postings in a broad scope), newest first, or — hybrid — the three
   interleaved by position and deduplicated. Structured searches propose in their own
   `order_by` order. The pg engine applies every rule while proposing, so a selective scope
   still yields enough candidates.
2. `pool` — the canonical re-check: the proposed rows are read again from `records` and every
   rule (workspace, readiness, retraction, scope, current version, typed filters) is applied;
   signals are recomputed from those rows (similarity, ts_rank_cd, stored scores, ages). A
   vector, text, recent or structured search's one list already is that read (every rule,
   same snapshot): it carries the columns, and its pool computes from them (`_pool`).
3. `rank_*` — the rank expression, one compile rule per node class; each `normalize` is a
   window function over the pool, materialised in its own stage so windows never nest.
4. `ranked` / `top` — the value, the pool's min and max (for the public score), the spec's
   order (value desc, occurred_at desc, seq desc, id) and `LIMIT k`.
5. the final select joins the `top` rows back to `records` for the values the response needs;
   one row with a NULL id (and the candidate count) means nothing survived. A statement whose
   lists may have been too short reports `short`, and the search runs the same shape with
   longer ones instead (`CompiledSearch.fallbacks`): a hybrid search's semantic and keyword
   lists at full length (`HYBRID_LIST_SHARE`), then every match of the scope ranked, when a
   bounded keyword list could not fill `k`.

Every value a request supplies is a bound parameter; identifiers come from `memseek.schema` and
catalog-validated names only. Catalog names the statement compares with (collections and their
versions, JSON keys) and fixed constants (`ready`, the scope's status, JSON type names) are
literals in its text (`schema.inline`): partial and expression indexes match them under generic
plans too (`reuses_plan`). The statement carries `/* memseek <route or view> */` for
pg_stat_statements.

Statements are templates: building one costs 1–8 ms of Python, so each shape is built once and
reused (`compile_search` keeps the last `TEMPLATE_CACHE` shapes). The values that change from
request to request — workspace, `now`, the query text and vector, the embedding model, the
scope's entities and time bounds — are required named parameters (`REQUEST_VALUES`) supplied at execution
(`CompiledSearch.params`); everything else a statement depends on is part of its shape key.
"""

from __future__ import annotations

import enum
import math
import re
from collections.abc import Callable
from collections.abc import Hashable
from collections.abc import Mapping
from collections.abc import Sequence
from dataclasses import dataclass
from dataclasses import field
from datetime import datetime
from decimal import Decimal
from functools import cached_property
from functools import lru_cache
from functools import partial
from functools import singledispatch
from typing import Any
from typing import Protocol
from uuid import UUID

import sqlalchemy as sa
from sqlalchemy.dialects.postgresql import ARRAY
from sqlalchemy.dialects.postgresql import DOUBLE_PRECISION
from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.dialects.postgresql import REGCONFIG
from sqlalchemy.dialects.postgresql import TSQUERY
from sqlalchemy.dialects.postgresql import TSVECTOR
from sqlalchemy.ext.compiler import compiles
from sqlalchemy.sql.base import Executable
from sqlalchemy.sql.elements import ClauseElement
from sqlalchemy.sql.elements import ColumnElement
from sqlalchemy.sql.selectable import CTE
from sqlalchemy.sql.selectable import Select

from memseek.catalog.fields import epoch_micros
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
from memseek.catalog.rank import Signal
from memseek.catalog.rank import Similarity
from memseek.catalog.rank import Sum
from memseek.catalog.rank import TextMatch
from memseek.catalog.rank import age_fields
from memseek.catalog.rank import iter_nodes
from memseek.schema import field_text
from memseek.schema import inline
from memseek.schema import last_accessed
from memseek.schema import record_columns
from memseek.schema import record_postings
from memseek.schema import record_touches
from memseek.schema import records
from memseek.search.embed import QueryVectorType
from memseek.search.fuse import EXP_LIMIT
from memseek.search.request import Condition
from memseek.search.request import OrderBy
from memseek.search.request import Scope

FLOAT = DOUBLE_PRECISION
TS = sa.TIMESTAMP(timezone=True)
R = records.c
INT4_MAX = 2**31 - 1
"""The largest `records.depth` (an `integer` column)."""
POSTING_POOL = 2
"""Records read per keyword candidate wanted: the best postings are re-checked and ranked by
`ts_rank_cd` on at most this many times the keyword list's length in records."""
HYBRID_LIST_SHARE = 0.5
"""A broad hybrid search's semantic and keyword lists first propose this share of `candidates` each:
interleaving three lists rarely reaches deeper than a third of `candidates` into any of them,
and the two lists cost in proportion to their length (HNSW's `ef_search`, the records ranked
by `ts_rank_cd`). When the cut did reach past a shortened list, the statement reports `short`
and the search runs again with full-length lists (`hybrid_list_size`, `_lists_short`)."""
TEMPLATE_CACHE = 128
"""Statement shapes kept built (a shape: everything but the request values); a hybrid template
holds ~0.3 MB of SQLAlchemy objects, a structured one ~0.1 MB."""
_TAG = re.compile(r"^[A-Za-z0-9_ /{}.\-]{1,200}$")


class UnsupportedNode(TypeError):
    """A rank node class without a compile rule (a test walks OPERATORS to prevent this)."""


class PlanCollection(Protocol):
    """What compilation reads of one collection version a search can reach."""

    name: str
    version: int
    text_language: str


class CompilablePlan(Protocol):
    """What compilation reads of one resolved search (`memseek.search.resolve.SearchPlan`)."""

    mode: str
    q: str | None
    scope: Scope
    where: Mapping[str, Condition]
    field_types: Mapping[str, str]
    order_by: tuple[OrderBy, ...] | None
    collections: Sequence[PlanCollection]
    rank: RankNode | None
    k: int
    candidates: int


@dataclass(frozen=True, slots=True)
class Output:
    """Which stored values the final select fetches for the response."""

    text: bool = False
    content: bool = False
    annotations: bool = False
    metadata: bool = True
    """The stored columns of `OUTPUT_COLUMNS` (what `include`, rendering and boosts read). A
    response that shows none of them (ids, scores and ranks only) reads no `records` row at
    the end (`_final`)."""

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
    count them (records are never deleted: once true, it stays true)."""


@dataclass(frozen=True, slots=True)
class CompiledSearch:
    """The statement (a shared template), this request's values for it, and what the executor
    must set around it. Execute as `conn.execute(statement, params)`: the template holds no
    request value, and running it without `params` fails."""

    statement: Select[Any]
    params: Mapping[str, Any]
    scored: bool
    uses_vector: bool
    candidates: int
    list_size: int
    """How many rows the statement's semantic list proposes (what `hnsw.ef_search` follows,
    `execute.ef_search`)."""
    reuses_plan: bool = False
    """Whether a prepared statement may keep a generic plan (`reuses_plan`)."""
    fallbacks: tuple[Callable[[], Select[Any]], ...] = ()
    """The statements to run instead, in turn, while the last one ran reports `short` (same
    parameters; each built on first use, once per shape): a hybrid search's full-length lists,
    then a bounded keyword list's exact one, which ranks every match of the scope."""
    learns_plan: bool = False
    """Whether its plan may be learned per workspace (`learns_plan`, `execute.AnnPlans`)."""

    def bound(self) -> Select[Any]:
        """The statement with this request's values bound in (for EXPLAIN and printing)."""
        return self.statement.params(dict(self.params))


class Explain(Executable, ClauseElement):
    """`EXPLAIN [(ANALYZE, BUFFERS | FORMAT JSON)] <statement>`; execute it with the statement's
    parameters."""

    inherit_cache = False

    def __init__(self, statement: Select[Any], analyze: bool = False, as_json: bool = False) -> None:
        self.statement = statement
        self.analyze = analyze
        self.as_json = as_json


@compiles(Explain, "postgresql")
def _compile_explain(element: Explain, compiler: Any, **kw: Any) -> str:
    options = ["ANALYZE", "BUFFERS"] if element.analyze else []
    options += ["FORMAT JSON"] if element.as_json else []
    listed = f"({', '.join(options)}) " if options else ""
    return f"EXPLAIN {listed}{compiler.process(element.statement, **kw)}"


def tag(label: str) -> str:
    """The statement comment; `label` is a fixed route or catalog-validated view name."""
    if not _TAG.fullmatch(label):
        raise ValueError(f"not a safe statement label: {label!r}")
    return f"/* memseek {label} */"


def compile_search(plan: CompilablePlan, inputs: Inputs, output: Output, label: str) -> CompiledSearch:
    """The one statement for `plan` (see the module docstring for its shape), built once per shape."""
    shape = _Shape(shape_key(plan, inputs, output, label), plan, inputs, output, label)
    uses_vector = plan.mode in ("vector", "hybrid")
    list_size = hybrid_list_size(plan)
    fallbacks = []
    if list_size < plan.candidates:
        fallbacks.append(partial(_template, shape, Lists.FULL))
    if bounds_keywords(plan):
        fallbacks.append(partial(_template, shape, Lists.EXACT_KEYWORDS))
    return CompiledSearch(
        _template(shape, Lists.FIRST),
        request_values(plan, inputs),
        plan.mode != "structured",
        uses_vector,
        plan.candidates,
        list_size,
        reuses_plan(plan),
        tuple(fallbacks),
        learns_plan(plan),
    )


def reuses_plan(plan: CompilablePlan) -> bool:
    """Whether one plan serves every request of this shape alike, so that PostgreSQL may keep a
    generic plan for its prepared statement instead of planning each request (1.3-2 ms of a
    statement that runs in 0.2-2 ms at 100k records): a newest-first or structured list of one
    entity in one collection version. It reads one index in order, `records_scope` (workspace,
    collection, entity, occurred_at) or the order's sort index (`memseek.indexes.sort_index`:
    the collection, the JSON key and the type guard are literals, `inline`, so the partial
    expression index matches a generic plan too), and stops after its rows, however many the
    entity has. Any other shape is planned per request: a generic plan suited to a small
    account reads and sorts all of a large one's rows (measured at 100k: p95 of the largest
    accounts 22 -> 35 ms for two entities, 20 -> 31 ms for one entity in every collection); one
    cannot fold the query's tsquery into a constant nor bound its lists (docs/search.md)."""
    return (
        plan.mode in ("recent", "structured")
        and len(plan.collections) == 1
        and len(plan.scope.entities or ()) == 1
    )


def learns_plan(plan: CompilablePlan) -> bool:
    """Whether the statement's plan depends on the request's values only through the workspace,
    and there only in whether its semantic list is read through the HNSW index: a vector or
    hybrid search of a broad scope. An entity scope is always read exactly (`_proposal_distance`);
    time bounds are values that differ between requests of one template. A hybrid search's query
    words are values too, but they choose rows, not paths: its keyword list walks the postings of
    whatever words there are, and the query's tsquery is computed once (`_Context.tsquery`).
    `execute` then keeps a generic plan pinned to the index for a workspace PostgreSQL's own
    plan reads through it (`execute.AnnPlans`)."""
    scope = plan.scope
    return (
        plan.mode in ("vector", "hybrid")
        and not scope.entities
        and scope.occurred_after is None
        and scope.occurred_before is None
    )


class Lists(enum.Enum):
    """How long a statement's candidate lists are: the first try (a hybrid search's semantic and
    keyword lists shortened), full length, or full length with the scope's keyword matches
    ranked exactly (no postings bound)."""

    FIRST = "first"
    FULL = "full"
    EXACT_KEYWORDS = "exact_keywords"


def hybrid_list_size(plan: CompilablePlan) -> int:
    """The length of the first try's semantic and keyword lists (`HYBRID_LIST_SHARE`): shortened
    in a broad scope only. A scope naming entities measures and ranks every one of its rows
    whatever the lists' length (`_proposal_distance`, `bounds_keywords`), so shortening would
    save nothing there and could only add a second statement."""
    if plan.mode != "hybrid" or plan.scope.entities:
        return plan.candidates
    return max(1, math.ceil(plan.candidates * HYBRID_LIST_SHARE))


def build_statement(
    plan: CompilablePlan, inputs: Inputs, output: Output, label: str, lists: Lists = Lists.FIRST
) -> Select[Any]:
    """Build the statement template for `plan` now (what `compile_search` caches)."""
    ctx = _Context(plan, inputs, lists)
    top = _structured_top(ctx) if plan.mode == "structured" else _scored_top(ctx)
    return _final(ctx, top, output).prefix_with(tag(label))


# --- templates and request values -----------------------------------------------------------

REQUEST_VALUES = (
    "workspace_id",
    "now",
    "query_text",
    "query_vector",
    "embedding_model",
    "scope_entities",
    "occurred_after",
    "occurred_before",
)
"""The statement parameters whose values come from each request (`request_values`)."""


def request_values(plan: CompilablePlan, inputs: Inputs) -> dict[str, Any]:
    """This request's value for each `REQUEST_VALUES` parameter its statement can contain."""
    values: dict[str, Any] = {"workspace_id": inputs.workspace_id, "now": inputs.now}
    values["query_text"] = plan.q or ""
    if inputs.vector is not None:
        values["query_vector"] = list(inputs.vector)
    if inputs.embedding_model:
        values["embedding_model"] = inputs.embedding_model
    scope = plan.scope
    if scope.entities:
        values["scope_entities"] = list(scope.entities)
    bounds = {"occurred_after": scope.occurred_after, "occurred_before": scope.occurred_before}
    values.update({name: bound for name, bound in bounds.items() if bound is not None})
    return values


def shape_key(plan: CompilablePlan, inputs: Inputs, output: Output, label: str) -> Hashable:
    """Everything a statement depends on except the request values: every `CompilablePlan`
    attribute but `q`, the scope without its entities and time bounds (only whether it has
    them), which of the vector and embedding model are given, and whether the workspace is known
    large (`rarity_bounds`). Pydantic parts are keyed by their JSON, which keeps value types
    apart (1, 1.0, true and "1" differ)."""
    scope = plan.scope
    return (
        plan.mode,
        scope.model_dump_json(exclude={"entities", "occurred_after", "occurred_before"}),
        (bool(scope.entities), scope.occurred_after is not None, scope.occurred_before is not None),
        tuple((name, condition.model_dump_json()) for name, condition in plan.where.items()),
        tuple(sorted(plan.field_types.items())),
        tuple(plan.order_by or ()),
        tuple((c.name, c.version, c.text_language) for c in plan.collections),
        plan.rank,
        plan.k,
        plan.candidates,
        inputs.vector is not None,
        bool(inputs.embedding_model),
        inputs.large_workspace,
        output,
        label,
    )


@dataclass(frozen=True, slots=True)
class _Shape:
    """A shape key carrying one request of that shape (compared and hashed by the key only)."""

    key: Hashable
    plan: CompilablePlan = field(compare=False)
    inputs: Inputs = field(compare=False)
    output: Output = field(compare=False)
    label: str = field(compare=False)


@lru_cache(maxsize=TEMPLATE_CACHE)
def _template(shape: _Shape, lists: Lists) -> Select[Any]:
    return build_statement(shape.plan, shape.inputs, shape.output, shape.label, lists)


# --- binding helpers ----------------------------------------------------------------------


def _float(value: float) -> ColumnElement[float]:
    return sa.literal(float(value), FLOAT)


def request_value(name: str, type_: Any, expanding: bool = False) -> ColumnElement[Any]:
    """A `REQUEST_VALUES` parameter: named, typed, required at execution, no value of its own."""
    return sa.bindparam(name, type_=type_, required=True, expanding=expanding)


class _Context:
    """What the parts of one statement share: the plan, and the request values as parameters."""

    def __init__(self, plan: CompilablePlan, inputs: Inputs, lists: Lists = Lists.FIRST) -> None:
        self.plan = plan
        self.inputs = inputs
        self.exact_keywords = lists is Lists.EXACT_KEYWORDS
        """Rank every match of the scope, not only the records holding the best postings."""
        self.list_size = hybrid_list_size(plan) if lists is Lists.FIRST else plan.candidates
        """How many rows the semantic and keyword lists propose (`hybrid_list_size`)."""
        self.short: list[ColumnElement[bool]] = []
        """Conditions under which this statement's lists were too short to be trusted (the
        search then runs its next fallback): `_bounded_matches`, `_lists_short`."""
        self.ws = request_value("workspace_id", records.c.workspace_id.type)
        self.now = request_value("now", TS)
        self.vector_list: CTE | None = None
        """The nearest-embedding proposals (`id, distance`; `pos` in a hybrid search), once built."""
        self.text_list: CTE | None = None
        """The best keyword matches (`id, match`; `pos` in a hybrid search), once built."""
        self.carried = _carried_columns(plan)
        """`records` columns a single list carries for its pool (`_carried_columns`)."""
        self.row: Any = records
        """Where signals read a record's columns: `records`, or the single list carrying them."""
        self.proposed: dict[type[Signal], ColumnElement[float]] = {}
        """In the pool: per signal, the value a candidate list measured for the row (the vector
        list's distance, the keyword list's match), NULL if that list did not propose it."""
        self.touched: ColumnElement[Any] | None = None
        """In a single list's pool: the candidate's latest touch, read for all candidates at
        once (`_touches_of`); NULL if it has none."""

    def vector(self) -> ColumnElement[Any]:
        if self.inputs.vector is None:
            raise ValueError("this search needs the query embedding")
        return request_value("query_vector", QueryVectorType())

    def same_model(self, row: Any = records) -> list[ColumnElement[bool]]:
        """The embedding must come from the query vector's model (when the request names one)."""
        if not self.inputs.embedding_model:
            return []
        return [row.c.embedding_model == request_value("embedding_model", sa.Text)]

    def _per_language(self, build: Callable[[Any, Any], ColumnElement[Any]], kind: Any) -> ColumnElement[Any]:
        """`build(config, q)` for every text configuration of the reachable collections, `||`-joined."""
        languages = sorted({c.text_language for c in self.plan.collections}) or ["english"]
        q = request_value("query_text", sa.Text)
        parts = [build(sa.cast(lang, REGCONFIG), q) for lang in languages]
        joined = parts[0]
        for part in parts[1:]:
            joined = joined.op("||", return_type=kind)(part)
        return joined

    def tsquery(self) -> ColumnElement[Any]:
        """OR over the query's lexemes (`memseek_any_lexeme`). Planned for each request, the call
        is folded into a constant whose selectivity the planner reads (as a parameter it guesses
        a few rows, and a text search's pool then looked its touches up once per candidate: 7.9
        → 12.7 ms). A statement that may run on a generic plan (`learns_plan`) computes it in a
        subquery, once (an InitPlan): a generic plan would call the function, which PostgreSQL
        cannot inline, for every row it matches or ranks (5 ms of a hybrid statement)."""
        built = self._per_language(lambda cfg, q: sa.func.memseek_any_lexeme(cfg, q, type_=TSQUERY), TSQUERY)
        return sa.select(built).scalar_subquery() if learns_plan(self.plan) else built

    def matches_query(self, row: Any = records) -> ColumnElement[bool]:
        """Whether the record holds any of the query's lexemes (`tsv @@ tsquery`)."""
        return row.c.tsv.op("@@", is_comparison=True)(self.tsquery())

    def query_tsvector(self) -> ColumnElement[Any]:
        """The query's lexemes as a tsvector (what postings are keyed by)."""
        return self._per_language(lambda cfg, q: sa.func.to_tsvector(cfg, q, type_=TSVECTOR), TSVECTOR)

    @cached_property
    def text_terms(self) -> CTE:
        """The query's lexemes with their rarity labels (`query_terms`; one CTE per statement)."""
        return query_terms(self)

    @cached_property
    def rarity_bounds(self) -> CTE:
        """The record count and class bounds the rarity labels use (`rarity_bounds`)."""
        return rarity_bounds(self)

    def counted_records(self) -> ColumnElement[int] | None:
        """The record count the statement's rarity labels used; None when it labels nothing."""
        if "rarity_bounds" not in self.__dict__:
            return None
        return sa.select(self.rarity_bounds.c.n).scalar_subquery()

    def labelled_tsv(self, row: Any = records) -> ColumnElement[Any]:
        """The record's `tsv` with the query's lexemes labelled by rarity (see `query_terms`)."""
        terms = self.text_terms
        labelled = row.c.tsv
        for label, _ in RARITY_CLASSES:
            lexemes = sa.func.array_agg(terms.c.lexeme).filter(terms.c.label == label)
            chosen = sa.select(sa.func.coalesce(lexemes, sa.cast(sa.literal([]), ARRAY(sa.Text))))
            labelled = sa.func.setweight(labelled, _label(label), chosen.scalar_subquery(), type_=TSVECTOR)
        return labelled


# --- the rules (used while proposing AND in the canonical re-check) ------------------------


def rules(ctx: _Context) -> list[ColumnElement[bool]]:
    """Every eligibility rule, applied to `records` (unaliased)."""
    plan = ctx.plan
    return [
        R.workspace_id == ctx.ws,
        R.processing == inline("ready"),
        R.retracted_at.is_(None),
        _collections_rule(plan.collections),
        *scope_rules(plan.scope),
        *where_rules(plan.where, plan.field_types),
    ]


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
    return typed_field(name, field_type) == bind_value(field_type, value)


def _in(name: str, field_type: str, values: Any) -> ColumnElement[bool]:
    return typed_field(name, field_type).in_([bind_value(field_type, v) for v in values])


def _compare(op: str) -> OperatorRule:
    def rule(name: str, field_type: str, value: Any) -> ColumnElement[bool]:
        return typed_field(name, field_type).op(op, is_comparison=True)(bind_value(field_type, value))

    return rule


def _exists(name: str, field_type: str, value: Any) -> ColumnElement[bool]:
    present = R.fields.has_key(inline(name))
    return present if value else sa.not_(present)


def _contains(method: str) -> OperatorRule:
    def rule(name: str, field_type: str, values: Any) -> ColumnElement[bool]:
        items = sa.bindparam(None, list(values), type_=ARRAY(sa.Text))
        value = field_json(name)
        is_list = sa.func.jsonb_typeof(value) == inline("array")
        return sa.and_(is_list, value.op(method, is_comparison=True)(items))

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


# --- candidate generation -------------------------------------------------------------------


def _eligible(ctx: _Context, *extra: ColumnElement[bool]) -> Select[Any]:
    return sa.select(R.id).where(*rules(ctx), *extra)


def _proposal(
    ctx: _Context, inner: Select[Any], name: str, order: Callable[[Any], list[Any]], *keep: str
) -> CTE:
    """A bounded proposal (with the columns named in `keep`) and, when a hybrid search
    interleaves it with other lists, 1-based positions in a deterministic (total) order. A
    single list is the pool itself and needs none: numbering sorted its rows a second time."""
    sub = inner.subquery(f"{name}_raw")
    columns = [sub.c.id, *(sub.c[column] for column in keep)]
    if ctx.plan.mode not in SINGLE_LIST_MODES:
        columns.insert(1, sa.func.row_number().over(order_by=order(sub)).label("pos"))
    return sa.select(*columns).cte(name)


def _newest_first(source: Any) -> list[Any]:
    return [source.c.occurred_at.desc(), source.c.seq.desc(), source.c.id]


SINGLE_LIST_MODES = ("vector", "text", "recent")
"""Scored modes whose candidates come from one list: its rows are the pool (`_pool`)."""
SIGNAL_READS: dict[type[Signal], tuple[str, ...]] = {
    Similarity: ("embedding", "embedding_model"),
    TextMatch: ("tsv",),
    Score: ("scores",),
}
"""The `records` columns each signal's SQL reads (`signal_column`); `age_hours` reads its field."""
LIST_SIGNALS: dict[str, type[Signal]] = {"vector": Similarity, "text": TextMatch}
"""The signal a single list measures while proposing each of its rows: the distance of a row with
an embedding of the query's model, the keyword match of a row that matches the query. Its pool
reads the list's value, and the list carries no column for measuring it again."""


def _carried_columns(plan: CompilablePlan) -> tuple[str, ...]:
    """The `records` columns a single list carries for its pool: what the pool selects and what
    the formula's signals read (none for other modes, whose pool reads `records` again)."""
    if plan.mode not in SINGLE_LIST_MODES or plan.rank is None:
        return ()
    names = {"occurred_at": None, "seq": None, "workspace_id": None}  # ordered, unique
    for _, node in iter_nodes(plan.rank):
        if type(node) is LIST_SIGNALS.get(plan.mode):
            continue  # the list's own measure is the signal (`signal_column`)
        names.update(dict.fromkeys(SIGNAL_READS.get(type(node), ())))
        if isinstance(node, AgeHours):
            names[node.field] = None
    return tuple(names)


def _carry(ctx: _Context, inner: Select[Any]) -> Select[Any]:
    """`inner` (a list's select over `records`) with the columns its pool needs (`ctx.carried`)."""
    present = set(inner.selected_columns.keys())
    return inner.add_columns(*(R[name] for name in ctx.carried if name not in present))


def _vector_candidates(ctx: _Context) -> CTE:
    distance = _proposal_distance(ctx)
    inner = (
        _eligible(ctx, R.embedding.isnot(None), *ctx.same_model())
        .add_columns(distance.label("distance"))
        .order_by(distance)
        .limit(ctx.list_size)
    )
    order = lambda sub: [sub.c.distance, sub.c.id]  # noqa: E731
    ctx.vector_list = _proposal(ctx, _carry(ctx, inner), "vector_candidates", order, "distance", *ctx.carried)
    return ctx.vector_list


def _proposal_distance(ctx: _Context) -> ColumnElement[float]:
    """The distance nearest embeddings are proposed by.

    Broad scope: `embedding <=> :q` alone, the shape an HNSW index serves (with an iterative
    scan past rows the scope filters out). A scope naming entities is read exactly instead:
    `(embedding <=> :q) + 0` orders identically but no index can serve it, so every in-scope
    row is measured. An entity's records are not spread evenly around a query (accounts have
    topics), so the iterative scan can step over `hnsw.max_scan_tuples` rows of other entities
    and stop short: measured on 100k records, the account holding 13 % of them got 38 of 200
    candidates after 90–130 ms; the exact scan ranks all 13,457 of its rows in 50–60 ms. The same
    rule as keyword candidates, which take the exact path for entity scopes."""
    distance = R.embedding.cosine_distance(ctx.vector())
    return distance + _float(0.0) if ctx.plan.scope.entities else distance


RARITY_CLASSES = (("A", 0.002), ("B", 0.02), ("C", 0.1))
"""`ts_rank_cd` weight label of a query lexeme → the largest fraction of the workspace's records
holding it; more common lexemes keep the label every stored position has, D. With PostgreSQL's
default weights (A 1.0, B 0.4, C 0.2, D 0.1) an occurrence of a word at most one record in
five hundred holds counts ten times one most records hold (`query_terms`). The bounds are the
best measured on LoCoMo and SciFact (docs/search.md); C also bounds how many postings a query
lexeme's count reads."""
RARITY_MIN_RECORDS = 200
"""Smaller workspaces label nothing (a tenth of a few records is no evidence that a word is
common): `text_match` is then plain `ts_rank_cd`."""
RARITY_SCALE = 5_000
"""Records counted at most: in larger workspaces the classes are the fractions of this many
records (a lexeme with more than 500 postings is common), so counting stays bounded: the record
count reads heap pages touch-on-read keeps out of the visibility map (20,000 records: ~3 ms)."""
_POSTING_COUNT_LABEL = "C"
"""Postings are counted up to this class's bound (more means D)."""
LABEL_WEIGHTS = {"A": 1.0, "B": 0.4, "C": 0.2, "D": 0.1}
"""PostgreSQL's default `ts_rank_cd` weights per label (what `text_match` uses)."""


class _PgChar(sa.types.UserDefinedType[str]):
    """PostgreSQL's one-byte `"char"` (the weight label `setweight` takes)."""

    cache_ok = True

    def get_col_spec(self) -> str:
        return '"char"'


def _label(label: str) -> ColumnElement[str]:
    return sa.cast(sa.literal(label, sa.Text), _PgChar())


def query_terms(ctx: _Context) -> CTE:
    """The query's lexemes, each labelled A, B, C or D by how many of the workspace's records
    hold it (`RARITY_CLASSES`): an inverse document frequency in four steps for `ts_rank_cd`.

    `ts_rank_cd` has none of its own: a word most records hold counts as much as one a few hold,
    so long records full of the query's common words outrank the few that share its distinctive
    ones. Document frequencies are counted from the workspace's own postings, each with a LIMIT
    just past the C bound (no statistics of other workspaces, no count beyond the cut-off),
    against the workspace's record count (itself counted up to `RARITY_SCALE`). A workspace
    smaller than `RARITY_MIN_RECORDS` counts nothing and labels every lexeme D, the label every
    stored position already has, so `text_match` is unchanged there. Matching is unchanged
    everywhere."""
    size = ctx.rarity_bounds
    lexemes = _query_lexemes(ctx)
    P = record_postings.c
    postings = (
        sa.select(sa.literal(1).label("one"))
        .where(P.workspace_id == ctx.ws, P.lexeme == lexemes.c.lexeme)
        .limit(sa.select(size.c[_POSTING_COUNT_LABEL]).scalar_subquery() + 1)
        .correlate(lexemes)
        .subquery("lexeme_postings")
    )
    # Counted per lexeme, one row each: grouping the postings of every lexeme afterwards cost
    # as much as reading them (docs/benchmarks.md).
    df = sa.select(sa.func.count().label("df")).select_from(postings).lateral("lexeme_df")
    label = sa.case(*((df.c.df <= size.c[name], name) for name, _ in RARITY_CLASSES), else_="D")
    return (
        sa.select(lexemes.c.lexeme, label.label("label"))
        .select_from(lexemes.join(size, sa.true()).join(df, sa.true()))
        .cte("query_terms")
    )


def rarity_bounds(ctx: _Context) -> CTE:
    """One row: the workspace's records counted up to `RARITY_SCALE` (`n`) and each class's
    largest posting count (`A`, `B`, `C`; -1 in a workspace too small to label). A workspace
    known to hold that many (`Inputs.large_workspace`) is not counted: its statement carries the
    scale as a constant, and no reference to `records` that the planner would still weigh
    (~0.3 ms); the bounds follow from `n` alike."""
    if ctx.inputs.large_workspace:
        size = sa.select(inline(RARITY_SCALE).label("n")).subquery("workspace_size")
    else:
        held = sa.select(R.seq).where(R.workspace_id == ctx.ws).limit(RARITY_SCALE)
        counted = sa.select(sa.func.count().label("n")).select_from(held.subquery("workspace_records"))
        size = counted.subquery("workspace_size")
    bounds = [
        sa.case(
            (size.c.n >= RARITY_MIN_RECORDS, sa.cast(sa.func.floor(size.c.n * fraction), sa.Integer)),
            else_=-1,  # a small workspace: nothing is counted, nothing is labelled
        ).label(label)
        for label, fraction in RARITY_CLASSES
    ]
    return sa.select(size.c.n, *bounds).cte("rarity_bounds")


def _query_lexemes(ctx: _Context) -> Any:
    return (
        sa.func.unnest(sa.func.tsvector_to_array(ctx.query_tsvector()))
        .table_valued("lexeme")
        .render_derived(name="query_lexemes", with_types=False)
    )


def text_match(ctx: _Context, row: Any = records) -> ColumnElement[float]:
    """The `text_match` signal: PostgreSQL `ts_rank_cd` (default weights, no normalisation: "0
    upward, no fixed ceiling", as the spec's signal table says) of the record, its query
    lexemes labelled by rarity (`query_terms`), for the query. The stored `tsv` keeps two
    positions per lexeme (`store.stored_tsvector`), so a word repeated counts at most twice.
    Scaled into [0, 1) (flags 1|32), it lost to similarity in the default hybrid's `max` almost
    everywhere: LoCoMo R@10 0.502 against 0.658 plain, SciFact nDCG@10 0.662 against 0.548
    (docs/benchmarks.md, session of 2026-12-01 23:17)."""
    return sa.func.ts_rank_cd(ctx.labelled_tsv(row), ctx.tsquery(), type_=FLOAT)


def _text_candidates(ctx: _Context) -> CTE:
    bounded = bounds_keywords(ctx.plan) and not ctx.exact_keywords
    matches = _bounded_matches(ctx) if bounded else _best_matches(ctx)
    order = lambda sub: [sub.c.match.desc(), *_newest_first(sub)]  # noqa: E731
    ctx.text_list = _proposal(ctx, matches, "text_candidates", order, "match", *ctx.carried)
    return ctx.text_list


def bounds_keywords(plan: CompilablePlan) -> bool:
    """Whether the plan's keyword list ranks only the records holding the best postings (a
    broad scope); a scope naming entities ranks all its own matches (see `posting_ids`)."""
    return plan.mode in ("text", "hybrid") and not plan.scope.entities


def _best_matches(ctx: _Context, *extra: ColumnElement[bool]) -> Select[Any]:
    """The `candidates` eligible records that match the query best (among `extra`)."""
    rank = text_match(ctx)
    matches = _eligible(ctx, ctx.matches_query(), *extra)
    matches = _carry(ctx, matches.add_columns(rank.label("match"), R.occurred_at, R.seq))
    return matches.order_by(rank.desc(), *_newest_first(records)).limit(ctx.list_size)


def _bounded_matches(ctx: _Context) -> Select[Any]:
    """The best matches among the best postings (adds to `ctx.short`).

    The best postings are the workspace's: superseded, retracted or out-of-scope records can hold
    all of them, and a scope with matches of its own must not come back empty. So the statement
    reports `short` when the bounded matches cannot fill `k` although more postings exist (fewer
    proposals than the list's length mean every lexeme's postings were read whole, and the
    bounded matches are the exact ones); the search then runs its exact statement instead
    (`CompiledSearch.fallbacks`), which ranks all of the scope's own matches.

    The exact list is a second statement, not a gated branch of this one: planned and started
    with every search, the never-taken branch cost 1.4–2.2 ms of a 24 ms hybrid search at 100k
    records (docs/search.md)."""
    postings = posting_ids(ctx).cte("text_postings")
    bounded = _best_matches(ctx, R.id.in_(sa.select(postings.c.record_id))).cte("text_bounded")
    proposed, kept = (_row_count(cte) for cte in (postings, bounded))
    enough = min(ctx.plan.k, ctx.list_size)  # part of the shape key
    ctx.short.append(sa.and_(kept < enough, proposed >= ctx.list_size))
    return sa.select(bounded)


def _row_count(cte: CTE) -> ColumnElement[int]:
    return sa.select(sa.func.count()).select_from(cte).scalar_subquery()


def posting_ids(ctx: _Context) -> Select[Any]:
    """Ids holding the best postings of the query lexemes: each lexeme's `list_size` highest
    impacts, then the `POSTING_POOL × list_size` records with the largest sum of impacts
    weighted as `text_match` weighs the lexemes (`query_terms`).

    For a scope naming entities the exact path is used instead: those rows are few, and the
    best postings of the whole workspace could all lie outside the scope."""
    lexemes = ctx.text_terms
    P = record_postings.c
    best = (
        sa.select(P.record_id, P.impact)
        .where(P.workspace_id == ctx.ws, P.lexeme == lexemes.c.lexeme)
        .order_by(P.impact.desc(), P.record_id)
        .limit(ctx.list_size)
        .lateral("best_postings")
    )
    weight = sa.case(*((lexemes.c.label == label, w) for label, w in LABEL_WEIGHTS.items()))
    total = sa.func.sum(best.c.impact * weight)
    return (
        sa.select(best.c.record_id)
        .select_from(lexemes.join(best, sa.true()))
        .group_by(best.c.record_id)
        .order_by(total.desc(), best.c.record_id)
        .limit(POSTING_POOL * ctx.list_size)
    )


def _recent_candidates(ctx: _Context) -> CTE:
    inner = _carry(ctx, _eligible(ctx).add_columns(R.occurred_at, R.seq))
    inner = inner.order_by(*_newest_first(records)).limit(ctx.plan.candidates)
    return _proposal(ctx, inner, "recent_candidates", _newest_first, *ctx.carried)


def _hybrid_candidates(ctx: _Context) -> CTE:
    """Semantic, keyword and newest-first lists interleaved by position, first slot wins."""
    lists = (_vector_candidates(ctx), _text_candidates(ctx), _recent_candidates(ctx))
    union = sa.union_all(
        *(
            sa.select(cte.c.id, (cte.c.pos * len(lists) + i).label("slot"), *_measured(cte, lists[:2]))
            for i, cte in enumerate(lists)
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
    interleaved = ranked.order_by(*order).limit(ctx.plan.candidates).cte("hybrid_candidates")
    if ctx.list_size < ctx.plan.candidates:
        ctx.short.append(
            _lists_short(ctx, interleaved, lists[:2], missing_slot=(ctx.list_size + 1) * len(lists))
        )
    return interleaved


def _measured(listed: CTE, measuring: Sequence[CTE]) -> list[ColumnElement[Any]]:
    """A hybrid list's rows with the values the measuring lists took (`distance` of the vector
    list, `match` of the keyword list; NULL where `listed` did not measure it). The pool reads
    them from the interleaving instead of joining each list again (`_with_proposed_signals`)."""
    return [
        (listed.c[name] if listed is measured else sa.null()).label(name)  # typed by the list measuring it
        for measured, name in zip(measuring, ("distance", "match"), strict=True)
    ]


def _lists_short(
    ctx: _Context, interleaved: CTE, shortened: Sequence[CTE], missing_slot: int
) -> ColumnElement[bool]:
    """Whether full-length lists could have proposed other records than the shortened ones.

    Slots below `missing_slot` (every list's first `list_size` positions) are the same either
    way. They differ only if a shortened list was cut at its length, the interleaving took a
    slot past it, and it took a full `candidates`: with fewer, the newest-first list (never
    shortened) ran out, so every eligible record is already proposed."""
    cut = sa.or_(*(_row_count(cte) >= ctx.list_size for cte in shortened))
    taken = sa.select(
        sa.func.count().label("taken"),
        sa.func.count().filter(interleaved.c.slot >= missing_slot).label("deep"),
    ).subquery("interleaving")
    went_deep = sa.select(sa.and_(taken.c.taken >= ctx.plan.candidates, taken.c.deep > 0)).scalar_subquery()
    return sa.and_(cut, went_deep)


CANDIDATES: dict[str, Callable[[_Context], CTE]] = {
    "vector": _vector_candidates,
    "text": _text_candidates,
    "recent": _recent_candidates,
    "hybrid": _hybrid_candidates,
}
"""Scored mode → its candidate generator (a CTE of `id`, numbered `pos` where hybrid interleaves)."""


# --- signals and the rank expression ----------------------------------------------------------


@dataclass(frozen=True, slots=True)
class RankContext:
    """Where rank expressions read their inputs: the current stage and each input's column label."""

    source: Any
    labels: Mapping[RankNode, str]

    def column(self, node: RankNode) -> ColumnElement[float]:
        return self.source.c[self.labels[node]]  # type: ignore[no-any-return]


@singledispatch
def compile_rank(node: RankNode, ctx: RankContext) -> ColumnElement[float]:
    """The SQL value of `node` over the current stage; one rule per node class."""
    raise UnsupportedNode(f"no compile rule for rank node {type(node).__name__}")


@compile_rank.register(Similarity)
@compile_rank.register(TextMatch)
@compile_rank.register(Score)
@compile_rank.register(AgeHours)
@compile_rank.register(Normalize)
def _(node: RankNode, ctx: RankContext) -> ColumnElement[float]:
    # Signals are computed once in the pool and each normalize in its own stage (windows
    # cannot nest); the expression just reads that column.
    return ctx.column(node)


@compile_rank.register
def _(node: Const, ctx: RankContext) -> ColumnElement[float]:
    return _float(node.value)


@compile_rank.register
def _(node: Sum, ctx: RankContext) -> ColumnElement[float]:
    total = compile_rank(node.children[0], ctx)
    for child in node.children[1:]:
        total = total + compile_rank(child, ctx)
    return total


@compile_rank.register
def _(node: Max, ctx: RankContext) -> ColumnElement[float]:
    return sa.func.greatest(*(compile_rank(child, ctx) for child in node.children), type_=FLOAT)


@compile_rank.register
def _(node: Product, ctx: RankContext) -> ColumnElement[float]:
    return _float(node.factor) * compile_rank(node.child, ctx)


@compile_rank.register
def _(node: Saturate, ctx: RankContext) -> ColumnElement[float]:
    return _curve(compile_rank(node.child, ctx), node.midpoint, node.exponent, rising=True)


@compile_rank.register
def _(node: Decay, ctx: RankContext) -> ColumnElement[float]:
    return _curve(compile_rank(node.child, ctx), node.midpoint, node.exponent, rising=False)


def _curve(x: ColumnElement[float], midpoint: float, exponent: float, rising: bool) -> ColumnElement[float]:
    """saturate `1/(1 + (m/x)^e)` or decay `1/(1 + (x/m)^e)`, x clamped at 0, in log space.

    Written with exp/ln and a clamped exponent so no input overflows float8 (`fuse.saturate`
    and `fuse.decay` are the same formulas in Python)."""
    safe_x = sa.func.greatest(x, _float(1e-300), type_=FLOAT)
    ln_m, ln_x = sa.func.ln(_float(midpoint), type_=FLOAT), sa.func.ln(safe_x, type_=FLOAT)
    log_ratio = _float(exponent) * (ln_m - ln_x)
    clamped = sa.func.greatest(_float(-EXP_LIMIT), sa.func.least(_float(EXP_LIMIT), log_ratio, type_=FLOAT))
    power = sa.func.exp(clamped if rising else -clamped, type_=FLOAT)
    at_zero = 0.0 if rising else 1.0
    return sa.case((x <= 0, _float(at_zero)), else_=_float(1.0) / (_float(1.0) + power))


@singledispatch
def signal_column(node: Signal, ctx: _Context) -> ColumnElement[float]:
    """The SQL value of one record signal, read from the canonical row (missing → 0); `const`
    needs no column and compiles inline."""
    raise UnsupportedNode(f"no signal rule for {type(node).__name__}")


@signal_column.register
def _(node: Similarity, ctx: _Context) -> ColumnElement[float]:
    if ctx.row is ctx.vector_list:  # `LIST_SIGNALS`: the same row, operator and vector
        return _similarity(ctx.vector_list.c.distance)
    distance = ctx.row.c.embedding.cosine_distance(ctx.vector())
    if Similarity in ctx.proposed:  # measured while proposing: the same row, operator, vector
        distance = sa.func.coalesce(ctx.proposed[Similarity], distance, type_=FLOAT)
    usable = sa.and_(ctx.row.c.embedding.isnot(None), *ctx.same_model(ctx.row))
    return sa.case((usable, _similarity(distance)), else_=_float(0.0))


def _similarity(distance: ColumnElement[float]) -> ColumnElement[float]:
    """`1 - distance`; NaN (a zero vector) would outrank everything, so it counts as missing (0)."""
    similarity = sa.func.nullif(_float(1.0) - distance, _float(float("nan")), type_=FLOAT)
    return sa.func.coalesce(similarity, _float(0.0))


@signal_column.register
def _(node: TextMatch, ctx: _Context) -> ColumnElement[float]:
    if ctx.row is ctx.text_list:  # `LIST_SIGNALS`: the same row, expression and query
        return ctx.text_list.c.match
    if TextMatch not in ctx.proposed:
        return text_match(ctx, ctx.row)
    # Measured while proposing: the same row and expression. Most rows the keyword list did not
    # propose hold no query lexeme, and ts_rank_cd of those is 0; it still costs ~10 us a row to
    # compute, the match test ~0.5 us (docs/search.md, "Keyword match of the other lists' rows").
    # An integer 0 keeps the CASE `real`, as ts_rank_cd is: a float8 would change the low bits.
    unproposed = sa.case((ctx.matches_query(ctx.row), text_match(ctx, ctx.row)), else_=inline(0))
    return sa.func.coalesce(ctx.proposed[TextMatch], unproposed, type_=FLOAT)


@signal_column.register
def _(node: Score, ctx: _Context) -> ColumnElement[float]:
    value = ctx.row.c.scores.op("->", return_type=JSONB)(inline(node.name))
    number = sa.func.jsonb_typeof(value) == inline("number")
    return sa.case((number, sa.cast(sa.cast(value, sa.Numeric), FLOAT)), else_=_float(0.0))


@signal_column.register
def _(node: AgeHours, ctx: _Context) -> ColumnElement[float]:
    row = ctx.row
    moment = row.c[node.field]
    if node.field == "last_accessed":
        touched = ctx.touched
        moment = last_accessed(row) if touched is None else sa.func.greatest(moment, touched, type_=TS)
    seconds = sa.cast(sa.extract("epoch", ctx.now - moment), FLOAT)
    return sa.func.greatest(_float(0.0), seconds / _float(3600.0), type_=FLOAT)


def rank_inputs(root: RankNode) -> dict[RankNode, str]:
    """A column label for every distinct signal (except const) and normalize node."""
    labels: dict[RankNode, str] = {}
    for _, node in iter_nodes(root):
        if isinstance(node, Signal | Normalize) and not isinstance(node, Const) and node not in labels:
            labels[node] = f"{'norm' if isinstance(node, Normalize) else 'sig'}_{len(labels)}"
    return labels


def _normalize_height(node: RankNode) -> int:
    """How many normalize nodes nest at or below `node` (stages needed to compute it)."""
    below = max((_normalize_height(child) for _, child in node.parts()), default=0)
    return below + (1 if isinstance(node, Normalize) else 0)


def normalize_window(x: ColumnElement[float]) -> ColumnElement[float]:
    """`(x - min) / (max - min)` over the whole pool; all ties → 0."""
    low = sa.func.min(x).over()
    spread = sa.func.nullif(sa.func.max(x).over() - low, _float(0.0), type_=FLOAT)
    return sa.func.coalesce((x - low) / spread, _float(0.0), type_=FLOAT)


def _rank_stages(pool: Any, root: RankNode, labels: Mapping[RankNode, str]) -> Any:
    """The pool extended by one pair of stages per normalize height (raw value, then window)."""
    norms = [n for n in labels if isinstance(n, Normalize)]
    stage = pool
    for height in range(1, _normalize_height(root) + 1):
        level = [n for n in norms if _normalize_height(n) == height]
        ctx = RankContext(stage, labels)
        raw = [compile_rank(n.child, ctx).label(f"{labels[n]}_x") for n in level]
        stage = sa.select(stage, *raw).cte(f"rank_{height}_input")
        windows = [normalize_window(stage.c[f"{labels[n]}_x"]).label(labels[n]) for n in level]
        stage = sa.select(stage, *windows).cte(f"rank_{height}")
    return stage


# --- scored and structured searches ---------------------------------------------------------


def _pool(ctx: _Context, proposed: CTE, extra: Sequence[ColumnElement[Any]], source: Any = None) -> CTE:
    """The canonical re-check of the proposed rows (joined from `source`, default `proposed`),
    with the columns ranking needs.

    A single list (`ctx.carried`) read its rows from `records` with every rule applied, in this
    same statement and snapshot: those rows are the re-checked ones, so the pool computes its
    columns from the columns the list carried instead of reading `records` again (200 primary-key
    lookups: about 1 ms of a 9.4 ms vector search at 100k records, docs/search.md). A hybrid
    search merges several lists and reads `records` again; a structured search, which computes
    no signals, ranks its list directly (`_structured_top`).

    MATERIALIZED: later stages read each signal several times (a normalize window reads its
    input for min, max and the row); inlined, Postgres would recompute `ts_rank_cd` and the
    cosine distance at every reference (measured: about 1 ms of a 10 ms hybrid search)."""
    source = proposed if source is None else source
    if ctx.carried:  # `extra` reads the list's columns (`ctx.row`)
        pool = sa.select(proposed.c.id, proposed.c.occurred_at, proposed.c.seq, *extra).select_from(source)
    else:
        joined = source.join(records, sa.and_(R.workspace_id == ctx.ws, R.id == proposed.c.id))
        pool = sa.select(R.id, R.occurred_at, R.seq, *extra).select_from(joined).where(*rules(ctx))
    return pool.cte("pool").prefix_with("MATERIALIZED")


def _with_proposed_signals(ctx: _Context, proposed: CTE, labels: Mapping[RankNode, str]) -> Any:
    """What the pool reads from: the proposals, joined for a single list's pool to its
    candidates' touches (`_touches_of`, `ctx.touched`). Fills `ctx.proposed` so that `similarity`
    and `text_match` reuse the values the vector and keyword lists measured, which a single
    list carries and a hybrid interleaving carries for every list (`_measured`).

    A row a list proposed had its value measured there: the same row version (one statement,
    one snapshot), the same expression and query, so the same value, without reading the 1.5 kB
    embedding out of TOAST or ranking the `tsv` a second time. At 100k records those were most
    of the pool's cost. Rows proposed otherwise are measured in the pool as before."""
    source = proposed
    lists = ((Similarity, ctx.vector_list, "distance"), (TextMatch, ctx.text_list, "match"))
    for kind, listed, column in lists:
        if listed is not None and any(isinstance(node, kind) for node in labels):
            ctx.proposed[kind] = proposed.c[column]  # a single list, or the interleaving (`_measured`)
    rank = ctx.plan.rank
    if ctx.carried and rank is not None and "last_accessed" in age_fields(rank):
        touches = _touches_of(ctx, proposed)
        ctx.touched = touches.c.last_accessed
        source = source.outerjoin(touches, touches.c.record_id == proposed.c.id)
    return source


def _touches_of(ctx: _Context, proposed: CTE) -> Any:
    """The touches of every record a single list proposed, in one index scan over an array of
    their ids: one primary-key lookup per candidate cost ~5 us each (200 candidates of a vector
    search at 100k records: 1.3 ms under EXPLAIN ANALYZE, against 0.65 for the one scan).

    Joined to the list alone, it is hash-joined. A hybrid pool, which joins `records` and the
    three lists, keeps a lookup per candidate: PostgreSQL estimates 10 rows for any array it
    cannot see, and there it chose a nested loop over the materialised touches (136 × 200
    comparisons, 2.6 ms; the statement's p50 13.50 → 14.24 ms, docs/benchmarks.md)."""
    t = record_touches.c
    ids = sa.func.array(sa.select(proposed.c.id).scalar_subquery(), type_=ARRAY(records.c.id.type))
    found = sa.select(t.record_id, t.last_accessed)
    found = found.where(t.workspace_id == ctx.ws, t.record_id == sa.any_(ids))
    return found.subquery("touches")


def _scored_top(ctx: _Context) -> tuple[CTE, CTE]:
    root = ctx.plan.rank
    if root is None:
        raise ValueError("a scored search needs its effective rank formula")
    proposed = CANDIDATES[ctx.plan.mode](ctx)
    ctx.row = proposed if ctx.carried else records
    labels = rank_inputs(root)
    source = _with_proposed_signals(ctx, proposed, labels)
    signals = [signal_column(n, ctx).label(lab) for n, lab in labels.items() if isinstance(n, Signal)]
    stage = _rank_stages(_pool(ctx, proposed, signals, source), root, labels)
    value = compile_rank(root, RankContext(stage, labels))
    ranked = sa.select(
        stage.c.id,
        stage.c.occurred_at,
        stage.c.seq,
        value.label("value"),
    ).cte("ranked_values")
    bounded = sa.select(
        ranked,
        sa.func.min(ranked.c.value).over().label("pool_low"),
        sa.func.max(ranked.c.value).over().label("pool_high"),
        sa.func.count().over().label("ranked_count"),
    ).cte("ranked")
    top = sa.select(bounded).order_by(bounded.c.value.desc(), *_newest_first(bounded)).limit(ctx.plan.k)
    return proposed, top.cte("top")


SORTED_LIST = R.seq > inline(0)
"""True of every record. Only a structured list states it, and every sort index's predicate
requires it (`memseek.indexes.sort_index`): otherwise each list of a scored search, which states
the rest of that predicate (collection, ready, not retracted), proves it too, and the planner
weighs every sort index for every such reference of `records` although none can serve a scored
list (hybrid planning at 100k with 12 sort indexes: 5.4–5.6 → 4.4–4.5 ms, and 3.7–3.9 with no
sort indexes at all; docs/search.md)."""


def sort_key(value: ColumnElement[Any], order: OrderBy, field_type: str) -> ColumnElement[Any]:
    """One structured sort key: its direction, missing values last; strings by code point."""
    if field_type == "string":
        value = sa.collate(value, "C")
    return (value.desc() if order.direction == "desc" else value.asc()).nulls_last()


def _structured_order(plan: CompilablePlan, keys: Sequence[ColumnElement[Any]], source: Any) -> list[Any]:
    orders = plan.order_by or ()
    directed = [sort_key(key, o, plan.field_types[o.field]) for key, o in zip(keys, orders, strict=True)]
    return [*directed, source.c.seq, source.c.id]


def _structured_top(ctx: _Context) -> tuple[CTE, CTE]:
    """The structured list is its own pool: it reads `records` with every rule applied and
    carries its sort keys, so nothing reads those rows again (the re-read was half the planning
    of a structured statement: 2.0 → 1.1 ms with 27 indexes on `records`, docs/benchmarks.md)."""
    plan = ctx.plan
    keys = [typed_field(o.field, plan.field_types[o.field]) for o in plan.order_by or ()]
    carried = [R.occurred_at, R.seq, *(key.label(f"key_{i}") for i, key in enumerate(keys))]
    listed = _eligible(ctx, SORTED_LIST).add_columns(*carried)
    listed = listed.order_by(*_structured_order(plan, keys, records))
    proposed = listed.limit(plan.candidates).cte("structured_candidates")
    pool_keys = [proposed.c[f"key_{i}"] for i in range(len(keys))]
    ranked = sa.select(
        proposed,
        sa.null().label("value"),
        sa.null().label("pool_low"),
        sa.null().label("pool_high"),
        sa.func.count().over().label("ranked_count"),
    )
    top = ranked.order_by(*_structured_order(plan, pool_keys, proposed)).limit(plan.k).cte("top")
    return proposed, top


# --- the final select -------------------------------------------------------------------------

OUTPUT_COLUMNS = (
    "collection", "collection_version", "entity", "type", "key", "status", "depth",
    "created_at", "last_accessed", "run_id", "scores",
)  # fmt: skip


def _final(ctx: _Context, parts: tuple[CTE, CTE], output: Output) -> Select[Any]:
    proposed, top = parts
    meta = sa.select(sa.func.count().label("candidate_count")).select_from(proposed).subquery("meta")
    if output.reads_records():
        wanted = record_columns(OUTPUT_COLUMNS)
        wanted += [R.text] if output.text else []
        wanted += [R.content] if output.content else []
        wanted += [R.annotations] if output.annotations else []
        joined = top.join(records, sa.and_(R.workspace_id == ctx.ws, R.id == top.c.id))
        rows = sa.select(top, *wanted).select_from(joined).subquery("hits")
    else:  # the k rows by key, their touches and their columns cost ~0.7 ms of a vector search
        rows = sa.select(top).subquery("hits")
    if ctx.plan.mode == "structured":
        keys = [rows.c[f"key_{i}"] for i in range(len(ctx.plan.order_by or ()))]
        hits_order = _structured_order(ctx.plan, keys, rows)
    else:
        hits_order = [rows.c.value.desc(), *_newest_first(rows)]
    outer = meta.outerjoin(rows, sa.true())
    counted = ctx.counted_records()
    extra = [] if counted is None else [counted.label("counted_records")]
    if ctx.short:
        extra.append(sa.or_(*ctx.short).label("short"))
    return sa.select(meta.c.candidate_count, *extra, rows).select_from(outer).order_by(*hits_order)
