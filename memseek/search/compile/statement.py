"""The statement of one resolved search: built once per shape (`compile_search`), with the
request's values as parameters and its fallbacks, and the statement comment (`tag`)."""

from __future__ import annotations

import re
from collections.abc import Callable
from collections.abc import Hashable
from collections.abc import Mapping
from dataclasses import dataclass
from dataclasses import field
from functools import lru_cache
from functools import partial
from typing import Any

from sqlalchemy.ext.compiler import compiles
from sqlalchemy.sql.base import Executable
from sqlalchemy.sql.elements import ClauseElement
from sqlalchemy.sql.selectable import Select

from memseek.search.compile.final import final_select
from memseek.search.compile.keywords import Keywords
from memseek.search.compile.pool import scored_top
from memseek.search.compile.query import CompilablePlan
from memseek.search.compile.query import Inputs
from memseek.search.compile.query import Lists
from memseek.search.compile.query import Output
from memseek.search.compile.query import Query
from memseek.search.compile.query import bounds_keywords
from memseek.search.compile.query import bounds_vectors
from memseek.search.compile.query import hybrid_list_size
from memseek.search.compile.query import learns_plan
from memseek.search.compile.query import reuses_plan
from memseek.search.compile.rank import matches_keywords
from memseek.search.compile.structured import structured_top

TEMPLATE_CACHE = 128
"""Statement shapes kept built (a shape: everything but the request values). A template is a
large graph of SQLAlchemy objects, so only the recent shapes are kept."""
_TAG = re.compile(r"^[A-Za-z0-9_ /{}.\-]{1,200}$")


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
    """The one statement for `plan` (see the package docstring for its shape), built once per shape."""
    shape = _Shape(shape_key(plan, inputs, output, label), plan, inputs, output, label)
    list_size = hybrid_list_size(plan)
    fallbacks = []
    if list_size < plan.candidates:
        fallbacks.append(partial(_template, shape, Lists.FULL))
    if bounds_keywords(plan):
        fallbacks.append(partial(_template, shape, Lists.EXACT_KEYWORDS))
    if bounds_vectors(plan):
        fallbacks.append(partial(_template, shape, Lists.EXACT_VECTORS))
    return CompiledSearch(
        _template(shape, Lists.FIRST),
        request_values(plan, inputs),
        plan.mode != "structured",
        plan.mode in ("vector", "hybrid"),
        plan.candidates,
        list_size,
        reuses_plan(plan),
        tuple(fallbacks),
        learns_plan(plan),
    )


def build_statement(
    plan: CompilablePlan, inputs: Inputs, output: Output, label: str, lists: Lists = Lists.FIRST
) -> Select[Any]:
    """Build the statement template for `plan` now (what `compile_search` caches)."""
    query = Query.build(plan, inputs, lists)
    keywords = Keywords.build(query) if matches_keywords(plan) else None
    top = structured_top(query) if plan.mode == "structured" else scored_top(query, keywords)
    counted = None if keywords is None else keywords.counted()
    return final_select(query, top, output, counted).prefix_with(tag(label))


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
    "queued_touches",
    "queued_touch_times",
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
    values["queued_touches"] = list(inputs.queued_touches)
    values["queued_touch_times"] = list(inputs.queued_touches.values())
    return values


def shape_key(plan: CompilablePlan, inputs: Inputs, output: Output, label: str) -> Hashable:
    """Everything a statement depends on except the request values: every `CompilablePlan`
    attribute but `q`, the scope without its entities and time bounds (only whether it has
    them), which of the vector and embedding model are given, and whether the workspace is known
    large (`keywords.rarity_bounds`). Pydantic parts are keyed by their JSON, which keeps value
    types apart (1, 1.0, true and "1" differ)."""
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
