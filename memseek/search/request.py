"""The typed search request (SearchSpec): strict, frozen pydantic models and `parse_search`.

A single search and each source of a combined search share one field set (`_Query`); a single
search and a combined search share the output controls (`_Output`) and the query text (`_Text`).
Cross-field rules report every problem with the path of the offending key. Checks against the
catalog (collections, declared fields, score names, profiles) belong to the resolver, not here.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from collections.abc import Sequence
from types import UnionType
from typing import Annotated
from typing import Any
from typing import Literal
from typing import Union
from typing import get_args
from typing import get_origin

from pydantic import AfterValidator
from pydantic import BaseModel
from pydantic import ConfigDict
from pydantic import Field
from pydantic import StrictBool
from pydantic import StrictInt
from pydantic import StrictStr
from pydantic import StringConstraints
from pydantic import ValidationError
from pydantic import ValidationInfo
from pydantic import field_validator
from pydantic import model_validator

from memseek.catalog.base import not_blank
from memseek.catalog.rank import QUERY_SIGNALS
from memseek.catalog.rank import Mode
from memseek.catalog.rank import RankNode
from memseek.catalog.rank import RankTree
from memseek.catalog.rank import check_rank_for_mode
from memseek.catalog.rank import iter_nodes
from memseek.catalog.rank import raise_details
from memseek.errors import Detail
from memseek.errors import Loc
from memseek.errors import RequestInvalid
from memseek.errors import details_from_pydantic
from memseek.models.vectors import values_problem
from memseek.search.request_values import Bound
from memseek.search.request_values import EqValue
from memseek.search.request_values import Includes
from memseek.search.request_values import Keyed
from memseek.search.request_values import Names
from memseek.search.request_values import Number
from memseek.search.request_values import OutputNames
from memseek.search.request_values import QueryVector
from memseek.search.request_values import StringValues
from memseek.search.request_values import Text
from memseek.search.request_values import Timestamp
from memseek.search.request_values import Values
from memseek.search.request_values import Versions
from memseek.search.request_values import invalid
from memseek.search.request_values import list_rules
from memseek.storable import unstorable_values
from memseek.suggest import hint

MAX_QUERY_CHARS = 8192
"""Default of the MAX_QUERY_CHARS deployment setting; pass the live value to `parse_search`."""
MAX_WHERE_FIELDS = 32
MAX_ORDER_KEYS = 16
MAX_SOURCES = 8
QUERY_MODES = frozenset({"vector", "text", "hybrid"})
"""Modes that rank by the query, and the only modes model reranking accepts."""
VECTOR_MODES = frozenset({"vector", "hybrid"})
"""Modes that read the query's embedding: `q` embedded by the service, or the caller's `vector`."""
CONDITION_OPERATORS = ("eq", "in", "gt", "gte", "lt", "lte", "exists", "contains_any", "contains_all")
FORBIDDEN_WITH_SOURCES = ("mode", "scope", "where", "order_by", "rank", "params")
"""Keys of a single search that move inside each source when searches are combined (spec:
"Each source takes its own mode, scope, where, order_by, rank, params, and k")."""


class Strict(BaseModel):
    """Base of every request model: unknown keys are errors, values are immutable."""

    model_config = ConfigDict(extra="forbid", frozen=True)


class Scope(Strict):
    """Which records are eligible at all; every part optional."""

    collections: Names = Field((), description="Collections to search (unique, at most 100).")
    collection_versions: dict[Text, Versions] = Field(
        default_factory=dict, description="Exact collection versions per collection named in collections."
    )
    entities: Names = Field((), description="Only records about these entities (unique, at most 100).")
    types: Names = Field((), description="Only these record types (unique, at most 100).")
    status: Literal["active", "draft", "all"] = Field("active", description="Review status to read.")
    keyed: Keyed = Field("any", description="true: only named facts; false: only events; any: both.")
    versions: Literal["current", "all"] = Field(
        "current", description="current: latest values; all: history."
    )
    occurred_after: Timestamp | None = Field(None, description="Strict lower time bound, timezone required.")
    occurred_before: Timestamp | None = Field(None, description="Strict upper time bound, timezone required.")
    depth_lte: StrictInt | None = Field(None, ge=0, description="At most this far from original evidence.")

    @model_validator(mode="after")
    def _consistent(self) -> Scope:
        details = [
            Detail(("collection_versions", name), "must also appear in collections")
            for name in self.collection_versions
            if name not in self.collections
        ]
        after, before = self.occurred_after, self.occurred_before
        if after is not None and before is not None and after >= before:
            details.append(Detail(("occurred_after",), "must be earlier than occurred_before"))
        if details:
            raise_details("Scope", details)
        return self


class Condition(Strict):
    """Conditions on one declared field, combined with AND."""

    model_config = ConfigDict(extra="forbid", frozen=True, serialize_by_alias=True)

    eq: EqValue | None = Field(None, description="Equals: one value, or an exact ordered match for a list.")
    in_: Values | None = Field(None, alias="in", description="Is one of these values (1-100).")
    gt: Bound | None = Field(None, description="Greater than a number or timestamp.")
    gte: Bound | None = Field(None, description="Greater than or equal to a number or timestamp.")
    lt: Bound | None = Field(None, description="Less than a number or timestamp.")
    lte: Bound | None = Field(None, description="Less than or equal to a number or timestamp.")
    exists: StrictBool | None = Field(None, description="The value is present (true) or absent (false).")
    contains_any: StringValues | None = Field(None, description="The list shares a value with these (1-100).")
    contains_all: StringValues | None = Field(None, description="The list holds every one of these (1-100).")

    @model_validator(mode="after")
    def _not_empty(self) -> Condition:
        if all(value is None for value in self.__dict__.values()):
            raise invalid("a condition needs at least one operator: " + ", ".join(CONDITION_OPERATORS))
        return self

    def operators(self) -> dict[str, Any]:
        """The operators this condition sets, by their request names."""
        return self.model_dump(by_alias=True, exclude_none=True)


Where = Annotated[dict[Text, Condition], Field(max_length=MAX_WHERE_FIELDS)]


class OrderBy(Strict):
    """One sort key of a structured search."""

    field: Text = Field(description="A field declared sortable in the collection.")
    direction: Literal["asc", "desc"] = Field("asc", description="Sort direction; missing values sort last.")


OrderByList = Annotated[tuple[OrderBy, ...], *list_rules(MAX_ORDER_KEYS, min_items=1)]


XML_NAME = "^(?![Xx][Mm][Ll])[A-Za-z_][A-Za-z0-9_.\\-]{0,63}$"
"""What `_xml_name` accepts, as a JSON Schema pattern."""
XML_NAME_FORM = (
    "an XML element name: a letter or _, then letters, digits, _ . or -; at most 64 characters,"
    " not starting with xml"
)
"""What `_xml_name` accepts, in words."""


def _xml_name(value: str) -> str:
    # ASCII XML names only: the tag is written verbatim into the prompt.
    if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_.\-]{0,63}", value) is None or value.lower().startswith("xml"):
        raise invalid(f"must be {XML_NAME_FORM}")
    return value


Preamble = Annotated[
    StrictStr,
    StringConstraints(min_length=1, max_length=2000, pattern=r"\S"),
    AfterValidator(not_blank),
]
"""The caller's own sentence before a fence: non-blank, at most 2,000 characters."""


class Fence(Strict):
    """Wraps rendered rows in `<tag untrusted="true">`, optionally after a preamble."""

    tag: Annotated[StrictStr, AfterValidator(_xml_name)] = Field(
        "records",
        description="Element name (an XML name, at most 64 characters).",
        json_schema_extra={"pattern": XML_NAME},
    )
    preamble: Preamble | None = Field(None, description="Your own sentence before the element; no default.")


class Rerank(Strict):
    """Model reranking of each search's top results."""

    backend: Literal["llm_judge", "none"] = Field(
        description="llm_judge asks the cheap model; none does nothing."
    )
    top_n: StrictInt = Field(20, ge=1, le=20, description="How many of the top results to judge (1-20).")


class GraphBoost(Strict):
    """Adds `weight / (distance + 1)` to results near an anchor in the relationship graph."""

    graph: Text | None = Field(None, description="Graph view to walk; optional when exactly one is active.")
    anchor: Annotated[StrictStr, StringConstraints(strip_whitespace=True, min_length=1, max_length=128)] = (
        Field(description="Node to measure distance from (trimmed, 1-128 characters).")
    )
    depth: StrictInt = Field(2, ge=1, le=4, description="How many links out to look (1-4).")
    weight: Number = Field(0.05, gt=0, le=1, description="Added at distance 0; above 0 and at most 1.")
    limit: StrictInt = Field(100, ge=1, le=100, description="How many paths to walk (1-100).")


class Params(Strict):
    """Advanced per-search knobs."""

    candidates: StrictInt | None = Field(
        None, ge=1, le=1000, description="Records proposed before ranking (1-1000); default from k."
    )

    def effective_candidates(self, k: int) -> int:
        """`candidates`, or the spec's default `min(1000, max(100, 10 * k))`."""
        return self.candidates if self.candidates is not None else min(1000, max(100, 10 * k))


class Fuse(Strict):
    """How the sources of a combined search are merged."""

    kind: Literal["rrf"] = Field(description="Reciprocal rank fusion, the one method today.")
    rank_constant: StrictInt = Field(60, ge=1, le=1000, description="RRF constant (1-1000).")


K = Annotated[StrictInt, Field(ge=1, le=100)]


class _Sized(Strict):
    k: K = Field(
        20, description="How many results to return (1-100); a source keeps this many before merging."
    )


class _Query(_Sized):
    """What one search reads and how it ranks: a single search and each source share these."""

    mode: Mode = Field(description="vector, text, hybrid, recent or structured.")
    scope: Scope = Field(default_factory=Scope, description="Which records are eligible.")
    where: Where = Field(default_factory=dict, description="Typed filters over declared fields (at most 32).")
    order_by: OrderByList | None = Field(
        None, description="Sort keys; required for and only allowed in structured mode."
    )
    rank: RankTree | None = Field(None, description="Replaces the default formula; not in structured mode.")
    params: Params = Field(default_factory=Params, description="Advanced knobs such as candidates.")

    def query_problems(self) -> list[Detail]:
        """Rules between mode, order_by and rank."""
        details = []
        if self.mode == "structured" and self.order_by is None:
            details.append(Detail(("order_by",), "order_by is required in structured mode"))
        if self.mode != "structured" and self.order_by is not None:
            details.append(Detail(("order_by",), "order_by is only allowed in structured mode"))
        if self.rank is not None:
            details += check_rank_for_mode(self.rank, self.mode, ("rank",))
        return details

    def candidates(self) -> int:
        """How many records the engine proposes for this search."""
        return self.params.effective_candidates(self.k)


class _Vector(Strict):
    """The caller's own query embedding: a vector or hybrid search reads it instead of embedding
    `q` (the model is then never called)."""

    vector: QueryVector | None = Field(
        None,
        description="The query's embedding, computed by the caller with embedding_model; "
        "vector and hybrid searches use it instead of embedding q.",
    )
    embedding_model: Text | None = Field(
        None,
        description="The model that produced vector (its model id or the catalog's model name); "
        "must be the embedding model of every collection searched with it.",
    )

    def vector_problems(self, modes: Sequence[str]) -> list[Detail]:
        """Both keys or neither, storable values, and a search that reads the vector."""
        if (self.vector is None) != (self.embedding_model is None):
            missing = "embedding_model" if self.embedding_model is None else "vector"
            return [Detail((missing,), "vector and embedding_model are given together or not at all")]
        if self.vector is None:
            return []
        problem = values_problem(self.vector)
        if problem is not None:
            return [Detail(("vector",), problem)]
        if not VECTOR_MODES.intersection(modes):
            msg = (
                f"no search here reads a query vector ({', '.join(sorted(set(modes)))}); vector and hybrid do"
            )
            return [Detail(("vector",), msg)]
        return []


class _Text(Strict):
    q: StrictStr | None = Field(
        None,
        description="Query text; required for text and hybrid searches, and for vector searches "
        "without a vector.",
    )

    @field_validator("q")
    @classmethod
    def _short_enough(cls, value: str | None, info: ValidationInfo) -> str | None:
        limit = (info.context or {}).get("max_query_chars", MAX_QUERY_CHARS)
        if value is not None and len(value) > limit:
            raise invalid(f"q is longer than MAX_QUERY_CHARS ({limit} characters)")
        return value

    def q_problems(self, searches: Iterable[tuple[str, bool]], judged: bool) -> list[Detail]:
        """`q` must be non-blank when a search reads the query's text: every text or hybrid search
        (their keyword side), a vector search without a vector (`(mode, has vector)` pairs), and
        a model judge (it reads the question)."""
        needs = judged or any(
            mode in QUERY_MODES and not (mode == "vector" and vectored) for mode, vectored in searches
        )
        if needs and (self.q is None or not self.q.strip()):
            msg = "q is required and must not be blank for text and hybrid searches, reranking, "
            return [Detail(("q",), msg + "and vector searches without a vector")]
        return []


class _Output(_Sized):
    """What comes back: shared by a single search and a combined search."""

    include: Includes = Field((), description="Record metadata to attach to each hit.")
    fields: OutputNames = Field((), description="Declared returnable fields to return (at most 16).")
    annotations: OutputNames = Field((), description="Required enrichments to return (at most 16).")
    render: StrictBool = Field(False, description="Also return prompt-ready rendered rows.")
    fence: Fence | None = Field(None, description="Wrap rendered rows in an element; needs render.")
    rerank: Rerank | None = Field(None, description="Model reranking; text, vector and hybrid searches only.")
    graph_boost: GraphBoost | None = Field(None, description="Favour results near an anchor node.")

    def output_problems(self, modes: Sequence[str]) -> list[Detail]:
        """Rules between output controls and the modes of the searches."""
        details = []
        if self.fence is not None and not self.render:
            details.append(Detail(("fence",), "fence needs render: true"))
        if self.rerank is not None and not QUERY_MODES.issuperset(modes):
            details.append(
                Detail(("rerank",), "rerank is allowed only when every search is text, vector or hybrid")
            )
        return details


class SingleSearch(_Text, _Vector, _Query, _Output):
    """One search: what to look for, where, how to order it, and what to return."""

    @model_validator(mode="after")
    def _rules(self) -> SingleSearch:
        details = self.q_problems([(self.mode, self.vector is not None)], judged(self.rerank))
        details += self.vector_problems([self.mode]) + self.query_problems()
        details += self.output_problems([self.mode])
        if details:
            raise_details("SingleSearch", details)
        return self


def _source_schema(schema: dict[str, Any]) -> None:
    """A source's scope and its collections are required (`Source._rules`), as the document says.
    The refinement names `collections` by pattern, not in `properties`: it adds no property to
    `Scope`, whose own schema already refuses unknown keys."""
    schema["required"] = [*schema.get("required", []), "scope"]
    scope = schema["properties"]["scope"]
    schema["properties"]["scope"] = {
        **scope,
        "required": ["collections"],
        "patternProperties": {"^collections$": {"minItems": 1}},
    }


class Source(_Vector, _Query):
    """One search inside a combined search; its scope must name collections. Its own `vector`
    wins over the combined search's."""

    model_config = ConfigDict(json_schema_extra=_source_schema)

    name: Text = Field(description="Unique among the sources; keys source_ranks.")
    weight: Number = Field(1.0, gt=0, le=100, description="Relative influence on the merged order (0-100].")

    @model_validator(mode="after")
    def _rules(self) -> Source:
        details = self.query_problems() + self.vector_problems([self.mode])
        if not self.scope.collections:
            details.append(
                Detail(("scope", "collections"), "each source must name its collections explicitly")
            )
        if details:
            raise_details("Source", details)
        return self


SourceList = Annotated[tuple[Source, ...], *list_rules(MAX_SOURCES, min_items=1)]


class CombinedSearch(_Text, _Vector, _Output):
    """Several searches merged with weighted RRF, then an optional boost and graph boost. Its
    `vector` serves every vector and hybrid source without one of its own."""

    sources: SourceList = Field(description="1-8 searches with unique names.")
    fuse: Fuse = Field(description="How the sources are merged (required).")
    boost: RankTree | None = Field(
        None, description="Multiplier after merging: RRF * max(0, boost); no query-specific signals."
    )

    @model_validator(mode="after")
    def _rules(self) -> CombinedSearch:
        modes = [source.mode for source in self.sources]
        shared = [source.mode for source in self.sources if source.vector is None]
        vectored = [(s.mode, s.vector is not None or self.vector is not None) for s in self.sources]
        details = self.q_problems(vectored, judged(self.rerank)) + self.vector_problems(shared)
        details += self.output_problems(modes) + self._repeated_names()
        if self.boost is not None:
            details += check_boost(self.boost, ("boost",))
        if details:
            raise_details("CombinedSearch", details)
        return self

    def _repeated_names(self) -> list[Detail]:
        names = [source.name for source in self.sources]
        return [
            Detail(("sources", i, "name"), f"source name {name!r} is already used")
            for i, name in enumerate(names)
            if name in names[:i]
        ]


def judged(rerank: Rerank | None) -> bool:
    """Whether a model judges the results (it reads the query text)."""
    return rerank is not None and rerank.backend != "none"


def check_boost(node: RankNode, loc: Loc = ("boost",)) -> list[Detail]:
    """Problems using this formula as a post-merge boost: it may not read query-specific signals,
    which are computed per source and mean nothing once the sources are merged."""
    return [
        Detail(at, f"boost may not use the query-specific signal {n.op}; use scores, ages and constants")
        for at, n in iter_nodes(node, loc)
        if type(n) in QUERY_SIGNALS
    ]


SearchSpec = SingleSearch | CombinedSearch


def searches(spec: SearchSpec) -> tuple[SingleSearch | Source, ...]:
    """Each search a request runs: the search itself, or every source of a combined search."""
    return spec.sources if isinstance(spec, CombinedSearch) else (spec,)


def parse_search(data: Any, *, max_query_chars: int = MAX_QUERY_CHARS) -> SearchSpec:
    """Validate a search request; `RequestInvalid` lists every problem with its JSON path."""
    if not isinstance(data, dict):
        raise RequestInvalid("the search request is invalid", [Detail((), "must be a JSON object")])
    unstorable = list(unstorable_values(data))
    if unstorable:
        raise RequestInvalid("the search request is invalid", unstorable)
    model: type[SingleSearch | CombinedSearch] = CombinedSearch if "sources" in data else SingleSearch
    try:
        return model.model_validate(data, context={"max_query_chars": max_query_chars})
    except ValidationError as exc:
        details = [helpful(d, model) for d in details_from_pydantic(exc.errors())]
        if model is CombinedSearch:
            details = [_explain_forbidden(d) for d in details]
        raise RequestInvalid("the search request is invalid", details) from exc


EXTRA = "Extra inputs are not permitted"
REQUIRED = "Field required"


def helpful(detail: Detail, model: type[BaseModel]) -> Detail:
    """A validation problem of `model`'s input that also names what would be valid there: the
    keys an object takes next to an unknown key (`where.source.equals` → the operators), the
    values a missing choice takes (`mode` → the modes)."""
    if detail.msg == EXTRA and detail.loc and isinstance(detail.loc[-1], str):
        keys = _keys(_type_at(model, detail.loc[:-1]))
        if keys:
            return Detail(detail.loc, EXTRA + hint(detail.loc[-1], keys, "expected one of"))
    if detail.msg == REQUIRED:
        arms = _arms(_type_at(model, detail.loc))
        choices = [str(c) for arm in arms if get_origin(arm) is Literal for c in get_args(arm)]
        if choices:
            return Detail(detail.loc, f"{REQUIRED}; one of: {', '.join(choices)}")
    return detail


def _type_at(annotation: Any, loc: Loc) -> Any:
    """The declared type of the value at `loc` under `annotation` (None where the path leaves the
    request models, e.g. inside a rank tree)."""
    for part in loc:
        annotation = next((t for arm in _arms(annotation) if (t := _step(arm, part)) is not None), None)
    return annotation


def _step(arm: Any, part: str | int) -> Any:
    if isinstance(arm, type) and issubclass(arm, BaseModel):
        fields = {f.alias or name: f for name, f in arm.model_fields.items()}
        return fields[part].annotation if part in fields else None
    if get_origin(arm) is tuple and isinstance(part, int):
        return get_args(arm)[0]
    if get_origin(arm) is dict and isinstance(part, str):
        return get_args(arm)[1]
    return None


def _arms(annotation: Any) -> list[Any]:
    """`annotation` without its Annotated and Optional wrappers: the arms of a union, or itself."""
    if get_origin(annotation) is Annotated:
        return _arms(get_args(annotation)[0])
    if get_origin(annotation) in (Union, UnionType):
        return [arm for arg in get_args(annotation) for arm in _arms(arg)]
    return [] if annotation is None else [annotation]


def _keys(annotation: Any) -> list[str]:
    """The keys of the request model at that type (by their request names), if it is one."""
    models = [a for a in _arms(annotation) if isinstance(a, type) and issubclass(a, BaseModel)]
    return [f.alias or name for model in models for name, f in model.model_fields.items()]


def _explain_forbidden(detail: Detail) -> Detail:
    if len(detail.loc) == 1 and detail.loc[0] in FORBIDDEN_WITH_SOURCES:
        return Detail(
            detail.loc, f"{detail.loc[0]} is not allowed next to sources; set it inside each source"
        )
    return detail


def dump_search(spec: SearchSpec) -> dict[str, Any]:
    """The JSON form of a request (rank trees as lists); `parse_search(dump_search(s)) == s`."""
    return spec.model_dump(mode="json", by_alias=True, exclude_none=True)
