"""Running a view: `POST /views/{name}/query` and MCP tool calls (spec: "The view response wrapper").

1. The view is the active version of `name` — the one the deployment package pins when
   `MEMSEEK_PACKAGE` is set — or a 404.
2. The caller's arguments — the parameters object, or `{"parameters": {...}}` around it — are
   checked against the view's parameters (unknown, missing, wrongly typed or out-of-range → 422
   at `("parameters", name)`), and defaults are applied.
3. A search view fills its template, parses the result again as a strict search request and
   runs it through the search service. A problem found in the filled request is reported at the
   parameter that supplied that part of the query. Graph views walk, orphan reports list.
4. The result is wrapped with the view's identity (`view.hash` pins the exact definition) and
   the parameters used. Every statement carries the comment `/* memseek view NAME vN */`.
"""

from __future__ import annotations

from collections.abc import Callable
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any
from uuid import UUID

from memseek.catalog.catalog import UnknownDefinition
from memseek.catalog.graph_contract import lowered_defaults
from memseek.catalog.models import GraphBlock
from memseek.catalog.models import View
from memseek.catalog.template import PLACEHOLDER
from memseek.catalog.template import fill_template
from memseek.catalog.template import validate_arguments
from memseek.errors import Detail
from memseek.errors import FormulaOverflow
from memseek.errors import Loc
from memseek.errors import MemseekError
from memseek.errors import NotFound
from memseek.errors import RankEvaluationFailed
from memseek.errors import RequestInvalid
from memseek.runtime import Runtime
from memseek.search.explain import Script
from memseek.search.graph import WalkSpec
from memseek.search.graph import check_limit
from memseek.search.graph import check_walk
from memseek.search.graph import citation_values
from memseek.search.graph import citations_statement
from memseek.search.graph import find_orphans
from memseek.search.graph import first_use_order
from memseek.search.graph import graph_transaction
from memseek.search.graph import link_citations
from memseek.search.graph import orphan_values
from memseek.search.graph import orphans_statement
from memseek.search.graph import reached_nodes
from memseek.search.graph import walk_paths
from memseek.search.graph import walk_statement
from memseek.search.graph import walk_values
from memseek.search.request import SearchSpec
from memseek.search.request import parse_search
from memseek.search.response import encode
from memseek.search.service import OVERFLOW_MESSAGE
from memseek.search.service import Timings
from memseek.search.service import explain_search
from memseek.search.service import run_search
from memseek.search.service import touch_on_read
from memseek.suggest import hint

GRAPH_BACKEND = [{"kind": "graph", "name": "postgresql"}]
SEARCH_KEYS = ("hits", "ranking")
SEARCH_TAIL_KEYS = ("rendered", "truncated", "profiles")


@dataclass(frozen=True, slots=True)
class ViewResult:
    """A finished view call: the wrapped body, the record ids it returned, and search timings."""

    body: dict[str, Any]
    record_ids: tuple[UUID, ...]
    timings: Timings | None = None


def find_view(runtime: Runtime, name: str) -> View:
    """The version of view `name` callers get, or 404."""
    try:
        return runtime.catalog.view(name)
    except UnknownDefinition:
        active = [view.name for view in runtime.catalog.active_views()]
        raise NotFound(f"no active view named {name!r}{hint(name, active, 'the active views are')}") from None


def view_label(view: View) -> str:
    """The statement comment's label: `view NAME vN` (catalog-validated name)."""
    return f"view {view.name} v{view.version}"


def run_view(runtime: Runtime, workspace_id: UUID, name: str, arguments: Any) -> ViewResult:
    """Run the active version of view `name` with the caller's arguments (see module docstring)."""
    view = find_view(runtime, name)
    values = _values(runtime, view, arguments)
    result = RUNNERS[view.kind](runtime, workspace_id, view, values)
    head = {"view": _identity(runtime, view), "parameters": values}
    return ViewResult({**head, **result.body}, result.record_ids, result.timings)


def explain_view(
    runtime: Runtime, workspace_id: UUID, name: str, arguments: Any, analyze: bool = False
) -> str:
    """The SQL one call of view `name` runs, values inlined (`memseek explain --view`); with
    `analyze`, each statement's `EXPLAIN (ANALYZE, BUFFERS)` too."""
    view = find_view(runtime, name)
    return EXPLAINERS[view.kind](runtime, workspace_id, view, _values(runtime, view, arguments), analyze)


def _values(runtime: Runtime, view: View, arguments: Any) -> dict[str, Any]:
    """The call's parameter values: checked against the view's own contract (a value past this
    deployment's ceiling is then refused by name, `check_walk`), and a default past a ceiling,
    when omitted, taken at the ceiling."""
    arguments = _trimmed_seed(view, _unwrapped(view, arguments))
    if isinstance(arguments, dict):
        settings = runtime.settings
        lowered = lowered_defaults(view, settings.max_graph_depth, settings.max_graph_paths)
        arguments = {**{name: lowered[name] for name in lowered.keys() - arguments.keys()}, **arguments}
    return validate_arguments(view, arguments)


def view_response(
    runtime: Runtime, workspace_id: UUID, name: str, arguments: Any
) -> tuple[bytes, ViewResult]:
    """Run, encode (409 response_too_large past MAX_RESPONSE_BYTES), then touch searched records."""
    result = run_view(runtime, workspace_id, name, arguments)
    data = encode(result.body, runtime.settings.max_response_bytes)
    if result.timings is not None:  # only searches count as reads (graph views return links)
        touch_on_read(runtime, workspace_id, result.record_ids)
    return data, result


def _identity(runtime: Runtime, view: View) -> dict[str, Any]:
    return {"name": view.name, "version": view.version, "hash": public_hash(runtime.catalog.view_hash(view))}


def public_hash(digest: str) -> str:
    """A stored `sha256:<hex>` definition hash as responses show it, `sha256-<hex>` (the spec's
    `"hash": "sha256-definition-hash"`); `GET /views` and the view wrapper agree."""
    algorithm, _, hexdigest = digest.partition(":")
    return f"{algorithm}-{hexdigest}"


def _unwrapped(view: View, arguments: Any) -> Any:
    """`{"parameters": {...}}` is read as the parameters themselves, unless the view declares a
    parameter named `parameters`: the wrapper mirrors the response's own `parameters` object, and
    callers reasonably send either shape (errors are at `("parameters", name)` for both)."""
    if not isinstance(arguments, dict) or set(arguments) != {"parameters"} or "parameters" in view.parameters:
        return arguments
    inner = arguments["parameters"]
    return inner if isinstance(inner, dict) else arguments


def _trimmed_seed(view: View, arguments: Any) -> Any:
    """A graph walk's seed is trimmed before it is checked (spec: "trimmed, 1-128 characters")."""
    if view.kind != "graph" or not isinstance(arguments, dict) or not isinstance(arguments.get("seed"), str):
        return arguments
    return {**arguments, "seed": arguments["seed"].strip()}


# --- search views ------------------------------------------------------------------------------


def _run_search_view(runtime: Runtime, workspace_id: UUID, view: View, values: dict[str, Any]) -> ViewResult:
    try:
        outcome = run_search(runtime, workspace_id, _view_search(runtime, view, values), view_label(view))
    except FormulaOverflow as exc:
        raise _overflow_blame(exc, view) from None
    except RequestInvalid as exc:
        raise _blame_parameters(exc, view) from None
    return ViewResult(wrap_search(outcome.body), outcome.hit_ids, outcome.timings)


def _explain_search_view(
    runtime: Runtime, workspace_id: UUID, view: View, values: dict[str, Any], analyze: bool
) -> str:
    try:
        spec = _view_search(runtime, view, values)
        return explain_search(runtime, workspace_id, spec, view_label(view), analyze)
    except RequestInvalid as exc:
        raise _blame_parameters(exc, view) from None


def _view_search(runtime: Runtime, view: View, values: dict[str, Any]) -> SearchSpec:
    assert view.query is not None, "a search view has a query (checked when the catalog loads)"
    filled = fill_template(view.query, values)
    return parse_search(filled, max_query_chars=runtime.settings.max_query_chars)


def wrap_search(body: Mapping[str, Any]) -> dict[str, Any]:
    """A search response in the view wrapper's shape: backend always a list, no diagnostics."""
    backend = body["backend"]
    out = {key: body[key] for key in SEARCH_KEYS}
    out["input_record_ids"] = [hit["id"] for hit in body["hits"]]
    out.update({key: body[key] for key in SEARCH_TAIL_KEYS})
    out["backend"] = backend if isinstance(backend, list) else [backend]
    return out


def _overflow_blame(exc: FormulaOverflow, view: View) -> MemseekError:
    """An overflowing formula is the caller's 422 where a parameter the caller may set fills it
    (a weight of 1e308), else the view's own: the operator's problem, `RankEvaluationFailed`."""
    blamed = _blame_parameters(exc, view)
    if any(detail.loc[0] == "parameters" for detail in blamed.details):
        return blamed
    return RankEvaluationFailed(OVERFLOW_MESSAGE)


def _blame_parameters(exc: RequestInvalid, view: View) -> RequestInvalid:
    """The filled request's problems, each moved to the parameter(s) that supplied that value."""
    details = [moved for detail in exc.details for moved in _blame(detail, view)]
    return RequestInvalid(
        f"the parameters of view {view.name!r} produce an invalid search: {exc.message}", details
    )


def _blame(detail: Detail, view: View) -> list[Detail]:
    template = _template_at(view.query, detail.loc)
    names = sorted(set(PLACEHOLDER.findall(template))) if template is not None else []
    where = "/".join(str(part) for part in detail.loc) or "the query"
    if not names:
        return [Detail(("query", *detail.loc), detail.msg)]
    return [Detail(("parameters", name), f"{detail.msg} (at {where} in the view's query)") for name in names]


def _template_at(template: Any, loc: Loc) -> str | None:
    """The template's text at `loc`, or that of the placeholder string on its way (a placeholder
    may fill a whole list or object); None when the value at `loc` was not in the template at
    all (a default the view left out, which no parameter supplied)."""
    node = template
    for part in loc:
        if isinstance(node, str):
            break
        if not _has(node, part):
            return None
        node = node[part]
    return repr(node)


def _has(node: Any, part: str | int) -> bool:
    if isinstance(node, dict):
        return part in node
    return isinstance(node, list) and isinstance(part, int) and 0 <= part < len(node)


# --- graph views -------------------------------------------------------------------------------


def _graph(view: View) -> GraphBlock:
    assert view.graph is not None, "graph views have a graph block (checked when the catalog loads)"
    return view.graph


def _walk(runtime: Runtime, values: dict[str, Any]) -> WalkSpec:
    """The walk a graph view's (validated) parameters ask for, checked against the ceilings."""
    spec = WalkSpec(
        seed=values["seed"],
        predicates=tuple(values["predicates"]),
        direction=values["direction"],
        depth=values["depth"],
        limit=values["limit"],
    )
    settings = runtime.settings
    check_walk(spec, settings.max_graph_depth, settings.max_graph_paths, loc=("parameters",))
    return spec


def _orphans_limit(runtime: Runtime, values: dict[str, Any]) -> int:
    limit: int = values["limit"]
    check_limit(limit, runtime.settings.max_graph_paths, loc=("parameters",))
    return limit


def _run_graph_view(runtime: Runtime, workspace_id: UUID, view: View, values: dict[str, Any]) -> ViewResult:
    spec = _walk(runtime, values)
    label = view_label(view)
    with graph_transaction(runtime.engine, workspace_id) as conn:
        walked = walk_paths(conn, workspace_id, _graph(view), spec, label)
        citations = link_citations(conn, workspace_id, _graph(view), first_use_order(walked.paths), label)
    paths = [
        {"nodes": list(p.nodes), "edge_ids": [str(e) for e in p.edge_ids], "depth": p.depth}
        for p in walked.paths
    ]
    body = {
        "hits": citations,
        "input_record_ids": [c["id"] for c in citations],
        "nodes": reached_nodes(walked.paths),
        "paths": paths,
        "citations": citations,
        "truncated": walked.truncated,
        **_graph_tail(runtime, view),
    }
    return ViewResult(body, tuple(UUID(c["id"]) for c in citations))


def _run_orphans_view(runtime: Runtime, workspace_id: UUID, view: View, values: dict[str, Any]) -> ViewResult:
    limit = _orphans_limit(runtime, values)
    with graph_transaction(runtime.engine, workspace_id) as conn:
        report = find_orphans(conn, workspace_id, _graph(view), limit, view_label(view))
    orphans = list(report.orphans)
    body = {
        "hits": orphans,
        "orphans": orphans,
        "input_record_ids": [o["id"] for o in orphans],
        "truncated": report.truncated,
        **_graph_tail(runtime, view),
    }
    return ViewResult(body, tuple(UUID(o["id"]) for o in orphans))


def _graph_tail(runtime: Runtime, view: View) -> dict[str, Any]:
    return {"profiles": list(runtime.catalog.footprint(view).profiles), "backend": list(GRAPH_BACKEND)}


def _explain_graph_view(
    runtime: Runtime, workspace_id: UUID, view: View, values: dict[str, Any], analyze: bool
) -> str:
    """The walk, then (when it found links) the citations statement for the links it used: the
    walk runs here to learn them, as a call would."""
    spec, label, graph = _walk(runtime, values), view_label(view), _graph(view)
    walk = walk_statement(graph, spec.direction, spec.depth, bool(spec.predicates), label)
    script = Script(workspace_id)
    with graph_transaction(runtime.engine, workspace_id) as conn:
        script.comment("the walk")
        script.statement(conn, walk, walk_values(workspace_id, spec), analyze)
        used = first_use_order(walk_paths(conn, workspace_id, graph, spec, label).paths)
        if used:
            script.comment("the links it used, as citations")
            citations = citations_statement(graph, label)
            script.statement(conn, citations, citation_values(workspace_id, used), analyze)
    return script.text()


def _explain_orphans_view(
    runtime: Runtime, workspace_id: UUID, view: View, values: dict[str, Any], analyze: bool
) -> str:
    report = orphans_statement(_graph(view), view_label(view))
    report_values = orphan_values(workspace_id, _orphans_limit(runtime, values))
    script = Script(workspace_id)
    with graph_transaction(runtime.engine, workspace_id) as conn:
        script.comment("the orphan report")
        script.statement(conn, report, report_values, analyze)
    return script.text()


Runner = Callable[[Runtime, UUID, View, dict[str, Any]], ViewResult]
RUNNERS: dict[str, Runner] = {
    "search": _run_search_view,
    "graph": _run_graph_view,
    "graph_orphans": _run_orphans_view,
}

Explainer = Callable[[Runtime, UUID, View, dict[str, Any], bool], str]
EXPLAINERS: dict[str, Explainer] = {
    "search": _explain_search_view,
    "graph": _explain_graph_view,
    "graph_orphans": _explain_orphans_view,
}
