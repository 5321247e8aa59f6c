"""Resolve: a parsed search request checked against the catalog, into a plan the compiler runs.

Used at request time (`POST /search`, view calls) and at load time (every search view, with
sample parameter values). No IO. Every problem becomes one `Detail` with the JSON path of the
offending key, and all of them are raised together as one 422.

What a search can read is every version of the collections it names (or, with an empty scope,
of every ordinary collection with an active version: not edges collections), narrowed by
`scope.collection_versions` — records keep the version they were written under, so a field is
usable only when every one of those versions declares it compatibly.
"""

from __future__ import annotations

from collections.abc import Mapping
from collections.abc import Sequence
from dataclasses import dataclass
from dataclasses import field
from typing import Any

from memseek.catalog.base import Capability
from memseek.catalog.base import FieldType
from memseek.catalog.catalog import Catalog
from memseek.catalog.catalog import UnknownDefinition
from memseek.catalog.catalog import known_scores
from memseek.catalog.fields import type_error
from memseek.catalog.models import Collection
from memseek.catalog.models import FieldDecl
from memseek.catalog.models import View
from memseek.catalog.rank import RankNode
from memseek.catalog.rank import Score
from memseek.catalog.rank import iter_nodes
from memseek.errors import Detail
from memseek.errors import Loc
from memseek.errors import RequestInvalid
from memseek.search.request import CombinedSearch
from memseek.search.request import Condition
from memseek.search.request import Fence
from memseek.search.request import GraphBoost
from memseek.search.request import OrderBy
from memseek.search.request import Rerank
from memseek.search.request import Scope
from memseek.search.request import SingleSearch
from memseek.search.request import Source
from memseek.settings import Settings
from memseek.suggest import hint

MODE_NEEDS: dict[str, frozenset[Capability]] = {
    "vector": frozenset({"vector"}),
    "text": frozenset({"text"}),
    "hybrid": frozenset({"vector", "text"}),
    "recent": frozenset({"recent"}),
    "structured": frozenset({"structured"}),
}
"""The engine capabilities each search mode needs."""
EMBEDDING_MODES = frozenset({"vector", "hybrid"})
ORDERED_TYPES = frozenset({"number", "integer", "datetime"})
DEFAULT_RANK_CONSTANT = 60


@dataclass(frozen=True, slots=True)
class CallerVector:
    """A query embedding the caller supplied: its values, the model it names, and where in the
    request it stands (problems with it are reported there)."""

    values: tuple[float, ...]
    model: str
    loc: Loc


@dataclass(frozen=True)
class SearchPlan:
    """One resolved search: what the compiler turns into one SQL statement."""

    source: str | None
    mode: str
    q: str | None
    """The request's query text (a combined search's top-level q is every source's q)."""
    scope: Scope
    where: Mapping[str, Condition]
    field_types: Mapping[str, FieldType]
    """The declared type of every filtered or sorted field (the same in every collection version)."""
    order_by: tuple[OrderBy, ...]
    collections: tuple[Collection, ...]
    """Every collection version the search could read."""
    profile: str
    rank: RankNode | None
    """The request's formula or the catalog default for the mode; None for structured mode."""
    k: int
    candidates: int
    weight: float
    rerank: Rerank | None
    embedding_model: str | None = None
    """The embedding alias shared by every collection version (vector and hybrid searches)."""
    caller_vector: CallerVector | None = None
    """The caller's query embedding for this search (its own or the combined search's); the
    service then embeds nothing for it."""


@dataclass(frozen=True)
class RequestPlan:
    """A whole resolved request: its searches plus the output controls that apply after merging.

    `rerank` is None when no reranking runs (also for `backend: none`).
    """

    searches: tuple[SearchPlan, ...]
    combined: bool
    rank_constant: int
    boost: RankNode | None
    k: int
    include: tuple[str, ...]
    fields: tuple[str, ...]
    annotations: tuple[str, ...]
    render: bool
    fence: Fence | None
    rerank: Rerank | None
    graph_boost: GraphBoost | None
    graph_view: View | None
    needs_embedding: bool
    """Whether a search embeds `q` with the model (a vector or hybrid search without a caller's vector)."""
    embedding_model: str | None
    """The alias every search that embeds `q` shares."""
    profiles: tuple[str, ...] = field(default=())
    """The search profiles used, sorted and deduplicated."""


def resolve(spec: SingleSearch | CombinedSearch, catalog: Catalog, settings: Settings | None) -> RequestPlan:
    """Check `spec` against `catalog` and return its plan; `RequestInvalid` lists every problem.

    `settings` brings the deployment's graph ceilings (None at load time, when only the
    catalog is known).
    """
    problems: list[Detail] = []
    rerank = spec.rerank if spec.rerank is not None and spec.rerank.backend != "none" else None
    shared = _Shared(spec.q, rerank, _given(spec, ()))
    searches = tuple(_resolve_search(query, loc, catalog, shared, problems) for query, loc in _queries(spec))
    read = tuple(c for plan in searches for c in plan.collections)
    problems += _output_problems(spec, read, catalog)
    embedding_model = _shared_embedding(searches, spec, problems)
    boost = within_ceilings(spec.graph_boost, settings)
    graph_view = _graph_view(boost, catalog, settings, problems)
    if problems:
        raise RequestInvalid("the search request does not match the catalog", problems)
    return _request_plan(spec, searches, boost, graph_view, embedding_model, rerank)


def _queries(spec: SingleSearch | CombinedSearch) -> list[tuple[SingleSearch | Source, Loc]]:
    if isinstance(spec, SingleSearch):
        return [(spec, ())]
    return [(source, ("sources", i)) for i, source in enumerate(spec.sources)]


def _request_plan(
    spec: SingleSearch | CombinedSearch,
    searches: tuple[SearchPlan, ...],
    graph_boost: GraphBoost | None,
    graph_view: View | None,
    embedding_model: str | None,
    rerank: Rerank | None,
) -> RequestPlan:
    combined = isinstance(spec, CombinedSearch)
    return RequestPlan(
        searches=searches,
        combined=combined,
        rank_constant=spec.fuse.rank_constant if isinstance(spec, CombinedSearch) else DEFAULT_RANK_CONSTANT,
        boost=spec.boost if isinstance(spec, CombinedSearch) else None,
        k=spec.k,
        include=tuple(spec.include),
        fields=tuple(spec.fields),
        annotations=tuple(spec.annotations),
        render=spec.render,
        fence=spec.fence,
        rerank=rerank,
        graph_boost=graph_boost,
        graph_view=graph_view,
        needs_embedding=any(_embeds(plan) for plan in searches),
        embedding_model=embedding_model,
        profiles=tuple(sorted({plan.profile for plan in searches})),
    )


@dataclass(frozen=True, slots=True)
class _Shared:
    """What every search of one request shares: the query text, the rerank setting and the
    caller's vector (a combined search's serves each source without its own)."""

    q: str | None
    rerank: Rerank | None
    vector: CallerVector | None


def _given(query: SingleSearch | Source | CombinedSearch, loc: Loc) -> CallerVector | None:
    if query.vector is None or query.embedding_model is None:
        return None
    return CallerVector(query.vector, query.embedding_model, loc)


def _embeds(plan: SearchPlan) -> bool:
    """Whether the search reads an embedding of `q` the service computes."""
    return plan.mode in EMBEDDING_MODES and plan.caller_vector is None


def _resolve_search(
    query: SingleSearch | Source, loc: Loc, catalog: Catalog, shared: _Shared, problems: list[Detail]
) -> SearchPlan:
    versions = _collection_versions(query.scope, query.mode, loc + ("scope",), catalog, problems)
    profile = _profile(versions, loc, problems)
    problems += _mode_problems(query.mode, versions, profile, loc, catalog)
    problems += _type_problems(query.scope.types, versions, loc + ("scope", "types"))
    field_types = _where_types(query.where, versions, loc + ("where",), problems)
    field_types |= _order_types(query.order_by or (), versions, loc + ("order_by",), problems)
    rank = _rank(query, catalog)
    return SearchPlan(
        source=query.name if isinstance(query, Source) else None,
        mode=query.mode,
        q=shared.q,
        scope=query.scope,
        where=query.where,
        field_types=field_types,
        order_by=tuple(query.order_by or ()),
        collections=versions,
        profile=profile,
        rank=rank,
        k=query.k,
        candidates=query.candidates(),
        weight=query.weight if isinstance(query, Source) else 1.0,
        rerank=shared.rerank,
        embedding_model=_embedding(versions) if query.mode in EMBEDDING_MODES else None,
        caller_vector=(_given(query, loc) or shared.vector) if query.mode in EMBEDDING_MODES else None,
    )


def _rank(query: SingleSearch | Source, catalog: Catalog) -> RankNode | None:
    if query.mode == "structured":
        return None
    return query.rank if query.rank is not None else catalog.default_rank(query.mode)


def _collection_versions(
    scope: Scope, mode: str, loc: Loc, catalog: Catalog, problems: list[Detail]
) -> tuple[Collection, ...]:
    names = scope.collections or _readable(catalog, mode)
    if not names:
        problems.append(Detail(loc + ("collections",), f"no active collection can be read in {mode} mode"))
    out: list[Collection] = []
    for i, name in enumerate(names):
        versions = catalog.versions(name)
        if not versions:
            known = hint(name, catalog.collections, "the collections are")
            problems.append(Detail(loc + ("collections", i), f"unknown collection {name!r}{known}"))
            continue
        out += _pinned(name, versions, scope.collection_versions.get(name), loc, problems)
    return tuple(out)


def _readable(catalog: Catalog, mode: str) -> tuple[str, ...]:
    """What an empty scope reads (spec: "everything this workspace can see in ordinary
    collections"): every active collection the mode can search, except edges collections — their
    link records are graph data, read by graph views and `graph_boost`, or by naming them in
    `scope.collections`. Vector and hybrid also skip collections without embeddings."""
    edges = _edges_collections(catalog)
    names = tuple(n for n in catalog.active_collection_names() if n not in edges)
    if mode not in EMBEDDING_MODES:
        return names
    return tuple(n for n in names if all(c.embedding is not None for c in catalog.versions(n)))


def _edges_collections(catalog: Catalog) -> frozenset[str]:
    """Collections that hold links: a graph view's `graph.edges` or a node collection's `links` target."""
    from_views = {view.graph.edges for view in catalog.all_views() if view.graph is not None}
    every = [c for versions in catalog.collections.values() for c in versions]
    from_nodes = {link.edges for c in every for link in c.links}
    return frozenset(from_views | from_nodes)


def _pinned(
    name: str, versions: tuple[Collection, ...], pins: Sequence[int] | None, loc: Loc, problems: list[Detail]
) -> list[Collection]:
    if pins is None:
        return list(versions)
    loaded = {c.version: c for c in versions}
    for j, version in enumerate(pins):
        if version not in loaded:
            problems.append(
                Detail(
                    loc + ("collection_versions", name, j), f"collection {name!r} has no version {version}"
                )
            )
    return [loaded[v] for v in pins if v in loaded]


def _profile(versions: Sequence[Collection], loc: Loc, problems: list[Detail]) -> str:
    profiles = sorted({c.search_profile for c in versions})
    if len(profiles) > 1:
        spread = ", ".join(f"{c.name} v{c.version} → {c.search_profile}" for c in versions)
        problems.append(
            Detail(
                loc + ("scope", "collections"),
                "a search must resolve to one search profile; "
                f"these collections are indexed in different places: {spread}",
            )
        )
    return profiles[0] if profiles else ""


def _mode_problems(
    mode: str, versions: Sequence[Collection], profile: str, loc: Loc, catalog: Catalog
) -> list[Detail]:
    details = []
    missing = MODE_NEEDS[mode] - catalog.capabilities(profile) if profile in catalog.profiles else frozenset()
    if missing:
        details.append(
            Detail(
                loc + ("mode",),
                f"search profile {profile!r} cannot run {mode} searches "
                f"(it lacks {', '.join(sorted(missing))})",
            )
        )
    if mode in EMBEDDING_MODES:
        bare = [f"{c.name} v{c.version}" for c in versions if c.embedding is None]
        if bare:
            msg = f"{mode} search needs embeddings; no embedding is declared by {', '.join(bare)}"
            details.append(Detail(loc + ("mode",), msg))
        elif len({c.embedding for c in versions}) > 1:
            details.append(
                Detail(
                    loc + ("mode",),
                    "the collection versions searched use different embedding models; search them separately",
                )
            )
    return details


def _embedding(versions: Sequence[Collection]) -> str | None:
    aliases = {c.embedding for c in versions}
    return aliases.pop() if len(aliases) == 1 else None


def _type_problems(types: Sequence[str], versions: Sequence[Collection], loc: Loc) -> list[Detail]:
    declared = {t for c in versions for t in c.types}
    return [
        Detail(loc + (i,), f"no collection searched declares record type {name!r}")
        for i, name in enumerate(types)
        if versions and name not in declared
    ]


def _declared(
    name: str, flag: str, versions: Sequence[Collection], loc: Loc, problems: list[Detail]
) -> FieldType | None:
    """The one declared type of field `name`, checking it is `flag` (filterable/sortable) everywhere."""
    decls: list[FieldDecl] = []
    for c in versions:
        decl = c.fields.get(name)
        if decl is None or not getattr(decl, flag):
            state = "does not declare it" if decl is None else f"does not declare it {flag}"
            usable = hint(name, [f for f, d in c.fields.items() if getattr(d, flag)], f"its {flag} fields")
            problems.append(Detail(loc, f"field {name!r}: collection {c.name} v{c.version} {state}{usable}"))
            return None
        decls.append(decl)
    kinds = sorted({d.type for d in decls})
    if len(kinds) > 1:
        problems.append(
            Detail(
                loc,
                f"field {name!r} is declared with different types ({', '.join(kinds)}) "
                "across the collection versions searched",
            )
        )
        return None
    return kinds[0] if kinds else None


def _where_types(
    where: Mapping[str, Condition], versions: Sequence[Collection], loc: Loc, problems: list[Detail]
) -> dict[str, FieldType]:
    types: dict[str, FieldType] = {}
    for name, condition in where.items():
        declared = _declared(name, "filterable", versions, loc + (name,), problems)
        if declared is not None:
            types[name] = declared
            problems += condition_problems(condition, declared, loc + (name,))
    return types


def _order_types(
    order_by: Sequence[OrderBy], versions: Sequence[Collection], loc: Loc, problems: list[Detail]
) -> dict[str, FieldType]:
    types: dict[str, FieldType] = {}
    for i, key in enumerate(order_by):
        declared = _declared(key.field, "sortable", versions, loc + (i, "field"), problems)
        if declared is not None:
            types[key.field] = declared
    return types


def condition_problems(condition: Condition, field_type: FieldType, loc: Loc) -> list[Detail]:
    """Operators that do not apply to `field_type`, and values that do not have its type."""
    details = []
    for op, value in condition.operators().items():
        problem = _operator_problem(op, value, field_type)
        if problem is not None:
            details.append(Detail(loc + (op,), problem))
    return details


def _operator_problem(op: str, value: Any, field_type: FieldType) -> str | None:
    if op == "exists":
        return None
    if op in ("contains_any", "contains_all"):
        return None if field_type == "string_array" else f"{op} needs a string_array field, not {field_type}"
    if op in ("gt", "gte", "lt", "lte"):
        return _bound_problem(op, value, field_type)
    if op == "in" and field_type == "string_array":
        return "in works on single values; use contains_any on a string_array field"
    values = list(value) if op == "in" else [list(value) if isinstance(value, tuple) else value]
    for item in values:
        problem = type_error(field_type, item)
        if problem is not None:
            return f"value {item!r} does not fit the {field_type} field: {problem}"
    return None


def _bound_problem(op: str, value: Any, field_type: FieldType) -> str | None:
    if field_type not in ORDERED_TYPES:
        return f"{op} works on number, integer and datetime fields, not {field_type}"
    is_number = isinstance(value, int | float) and not isinstance(value, bool)
    if (field_type == "datetime") == is_number:
        wanted = "an ISO 8601 timestamp with a timezone" if field_type == "datetime" else "a number"
        return f"the {field_type} field is compared with {wanted}"
    return None


def score_name_problems(
    spec: SingleSearch | CombinedSearch, plan: RequestPlan, catalog: Catalog
) -> list[Detail]:
    """Score names the request's own `rank` and `boost` formulas read that no searched collection
    declares. Spec: scorer names are checked when definitions load (a view's request), while a
    typo'd scorer name at runtime (an ad-hoc request) reads 0 like any missing signal."""
    ranks = [
        (query.rank, loc + ("rank",), search.collections)
        for (query, loc), search in zip(_queries(spec), plan.searches, strict=True)
        if query.rank is not None
    ]
    if isinstance(spec, CombinedSearch) and spec.boost is not None:
        ranks.append((spec.boost, ("boost",), tuple(c for s in plan.searches for c in s.collections)))
    return [
        Detail(at + (1,), f"no collection searched declares a score named {node.name!r}")
        for formula, loc, versions in ranks
        for at, node in iter_nodes(formula, loc)
        if isinstance(node, Score) and node.name not in known_scores(versions, catalog)
    ]


def _output_problems(
    spec: SingleSearch | CombinedSearch, read: Sequence[Collection], catalog: Catalog
) -> list[Detail]:
    details = []
    for i, name in enumerate(spec.fields):
        unreturnable = [c for c in read if not _returnable(c, name)]
        if unreturnable:
            where = ", ".join(f"{c.name} v{c.version}" for c in unreturnable)
            first = unreturnable[0]
            usable = hint(
                name, [f for f in first.fields if _returnable(first, f)], f"returnable in {first.name}"
            )
            details.append(Detail(("fields", i), f"field {name!r} is not returnable in {where}{usable}"))
    for i, name in enumerate(spec.annotations):
        if name not in catalog.enrichments:
            details.append(Detail(("annotations", i), f"unknown enrichment {name!r}"))
            continue
        lacking = [f"{c.name} v{c.version}" for c in read if name not in c.enrichments]
        if lacking:
            msg = f"enrichment {name!r} is not required by {', '.join(lacking)}"
            details.append(Detail(("annotations", i), msg))
    return details


def _returnable(collection: Collection, name: str) -> bool:
    decl = collection.fields.get(name)
    return decl is not None and decl.returnable


def _shared_embedding(
    searches: Sequence[SearchPlan], spec: SingleSearch | CombinedSearch, problems: list[Detail]
) -> str | None:
    aliases = sorted({p.embedding_model for p in searches if p.embedding_model is not None and _embeds(p)})
    if len(aliases) > 1:
        loc: Loc = ("sources",) if isinstance(spec, CombinedSearch) else ()
        problems.append(
            Detail(
                loc,
                "every vector and hybrid search of one request that embeds q must use the same "
                f"embedding model; these searches use {', '.join(aliases)} (or give each its own vector)",
            )
        )
    return aliases[0] if aliases else None


def _graph_view(
    boost: GraphBoost | None, catalog: Catalog, settings: Settings | None, problems: list[Detail]
) -> View | None:
    if boost is None:
        return None
    problems += _graph_ceiling_problems(boost, settings)
    if boost.graph is None:
        graphs = catalog.active_views("graph")
        if len(graphs) == 1:
            return graphs[0]
        names = ", ".join(v.name for v in graphs) or "none"
        msg = f"name the graph view to walk; active graph views: {names}"
        problems.append(Detail(("graph_boost", "graph"), msg))
        return None
    try:
        view = catalog.view(boost.graph)
    except UnknownDefinition:
        view = None
    if view is None or view.kind != "graph":
        problems.append(Detail(("graph_boost", "graph"), f"{boost.graph!r} is not an active graph view"))
        return None
    return view


def within_ceilings(boost: GraphBoost | None, settings: Settings | None) -> GraphBoost | None:
    """`boost` with an omitted `depth` or `limit` whose default is past this deployment's
    MAX_GRAPH_DEPTH / MAX_GRAPH_PATHS taken at the ceiling: a default is "the value used when
    the caller omits it", and a deployment "may impose lower ceilings" (spec, Graph views), so
    leaving a value out never fails. A value the caller wrote past a ceiling is still a 422."""
    if boost is None or settings is None:
        return boost
    ceilings = {"depth": settings.max_graph_depth, "limit": settings.max_graph_paths}
    lowered = {
        name: ceiling
        for name, ceiling in ceilings.items()
        if name not in boost.model_fields_set and getattr(boost, name) > ceiling
    }
    return boost.model_copy(update=lowered) if lowered else boost


def _graph_ceiling_problems(boost: GraphBoost, settings: Settings | None) -> list[Detail]:
    if settings is None:
        return []
    details = []
    if boost.depth > settings.max_graph_depth:
        details.append(
            Detail(
                ("graph_boost", "depth"),
                f"this deployment allows depth at most {settings.max_graph_depth} (MAX_GRAPH_DEPTH)",
            )
        )
    if boost.limit > settings.max_graph_paths:
        details.append(
            Detail(
                ("graph_boost", "limit"),
                f"this deployment allows limit at most {settings.max_graph_paths} (MAX_GRAPH_PATHS)",
            )
        )
    return details


_ALONE: dict[tuple[int, str], tuple[Catalog, tuple[str, ...]]] = {}
"""`searchable_alone`'s answers per (catalog, mode): a runtime's catalog never changes."""


def searchable_alone(catalog: Catalog, mode: str) -> tuple[str, ...]:
    """The collections a `mode` search may name alone in its scope without a problem (what
    `GET /search`'s `collection` accepts, and its OpenAPI document lists)."""
    cached = _ALONE.get((id(catalog), mode))
    if cached is not None and cached[0] is catalog:
        return cached[1]
    names = tuple(name for name in sorted(catalog.collections) if not _alone_problems(catalog, mode, name))
    if len(_ALONE) > 16:  # catalogs of runtimes long closed (tests build many)
        _ALONE.clear()
    _ALONE[(id(catalog), mode)] = (catalog, names)
    return names


def _alone_problems(catalog: Catalog, mode: str, name: str) -> list[Detail]:
    problems: list[Detail] = []
    versions = _collection_versions(Scope(collections=(name,)), mode, (), catalog, problems)
    profile = _profile(versions, (), problems)
    return problems + _mode_problems(mode, versions, profile, (), catalog)
