"""Cross-checks over a whole catalog: identities, references, view and write templates, packages.

Each check takes the validated definitions and returns `Problem`s; nothing stops at the first.
A search view is checked the way it runs, which only the search layer knows: whoever loads a
catalog hands `check_catalog` the checks of the view kinds it does not check itself
(`ViewChecks`; the service and `memseek catalog check` pass the search layer's `VIEW_CHECKS`),
so the definitions never import the code that reads them.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable
from collections.abc import Mapping
from collections.abc import Sequence
from dataclasses import replace
from typing import TYPE_CHECKING
from typing import Any

from memseek.catalog.catalog import Catalog
from memseek.catalog.catalog import Footprint
from memseek.catalog.catalog import known_scores
from memseek.catalog.conf import ClientEnrichment
from memseek.catalog.graph_contract import graph_contract
from memseek.catalog.models import ACTIVATED_KINDS
from memseek.catalog.models import GRAPH_KINDS
from memseek.catalog.models import Collection
from memseek.catalog.models import Package
from memseek.catalog.models import View
from memseek.catalog.problems import Found
from memseek.catalog.problems import Problem
from memseek.catalog.problems import format_loc
from memseek.catalog.rank import Score
from memseek.catalog.rank import iter_nodes
from memseek.catalog.writes import write_problems
from memseek.schema import EMBEDDING_DIM

if TYPE_CHECKING:
    from memseek.catalog.load import Entry

VERSIONED = ("collection", "view", "write", "package")

ViewCheck = Callable[[View, Catalog], tuple[Found, Footprint | None]]
"""Checks one view version against the whole catalog: its problems (paths relative to the view)
and, when it has none, what it reads."""
ViewChecks = Mapping[str, ViewCheck]
"""View kind → its check, for the kinds the catalog does not check itself (search views)."""


def check_catalog(
    entries: Sequence[Entry], package: str | None, view_checks: ViewChecks
) -> tuple[Catalog, list[Problem]]:
    """The catalog assembled from `entries`, and every problem the cross-checks find; views of
    the kinds in `view_checks` are checked by them (a kind no check covers is not checked)."""
    checks = {**GRAPH_VIEW_CHECKS, **view_checks}
    problems = identity_problems(entries)
    views, contract_problems = _views(entries)
    problems += contract_problems
    catalog = _assemble(entries, views)
    selected, package_problems = _select_package(catalog, package)
    catalog = replace(catalog, package=selected)
    problems += package_problems
    footprints: dict[tuple[str, int], Footprint] = {}
    checked: set[tuple[str, str, int]] = set()
    for entry in entries:
        identity = (entry.kind, entry.name, entry.version)
        if identity not in checked:  # a duplicate is reported once, as a duplicate
            checked.add(identity)
            problems += _check_entry(entry, catalog, footprints, checks)
    return replace(catalog, footprints=footprints), problems


def identity_problems(entries: Sequence[Entry]) -> list[Problem]:
    """Duplicate (kind, name, version), several active versions of one name, duplicate packages."""
    problems: list[Problem] = []
    seen: dict[tuple[str, str, int], Entry] = {}
    for entry in (e for e in entries if e.kind in VERSIONED):
        key = (entry.kind, entry.name, entry.version if entry.kind != "package" else 0)
        if key in seen:
            first = seen[key]
            msg = f"duplicate {first.kind} {first.name!r}: already defined in {first.file} at {_where(first)}"
            problems.append(entry.problem(("name",), msg))
        seen.setdefault(key, entry)
    active: dict[tuple[str, str], list[Entry]] = defaultdict(list)
    for entry in entries:
        if entry.kind in ACTIVATED_KINDS and entry.model.active:
            active[(entry.kind, entry.name)].append(entry)
    for (kind, name), group in active.items():
        if len(group) > 1:
            listed = ", ".join(f"v{e.version}" for e in group)
            msg = f"at most one active version of {kind} {name!r}; active: {listed}"
            problems += [e.problem(("active",), msg) for e in group]
    return problems


def _where(entry: Entry) -> str:
    return format_loc(entry.loc) or "the top"


def _views(entries: Sequence[Entry]) -> tuple[dict[int, View], list[Problem]]:
    """Each graph view with its fixed contract applied; every contract problem."""
    views: dict[int, View] = {}
    problems: list[Problem] = []
    for index, entry in enumerate(entries):
        if entry.kind == "view":
            view, details = graph_contract(entry.model)
            views[index] = view
            problems += [entry.problem(d.loc, d.msg) for d in details]
    return views, problems


def _assemble(entries: Sequence[Entry], views: dict[int, View]) -> Catalog:
    by_kind: dict[str, dict[str, Any]] = defaultdict(dict)
    versions: dict[str, dict[str, list[Any]]] = defaultdict(lambda: defaultdict(list))
    for index, entry in enumerate(entries):
        model = views.get(index, entry.model)
        if entry.kind in ACTIVATED_KINDS:
            versions[entry.kind][entry.name].append(model)
        else:
            by_kind[entry.kind].setdefault(entry.name, model)
    return Catalog(
        collections=_sorted_versions(versions["collection"]),
        views=_sorted_versions(versions["view"]),
        writes=_sorted_versions(versions["write"]),
        packages=dict(by_kind["package"]),
        profiles=dict(by_kind["search_profile"]),
        models=dict(by_kind["model"]),
        enrichments=dict(by_kind["enrichment"]),
        rank_default=next(iter(by_kind["rank_default"].values()), None),
    )


def _sorted_versions(groups: dict[str, list[Any]]) -> dict[str, tuple[Any, ...]]:
    out: dict[str, tuple[Any, ...]] = {}
    for name, models in groups.items():
        unique = {m.version: m for m in reversed(models)}  # the first of duplicate versions wins
        out[name] = tuple(unique[v] for v in sorted(unique))
    return out


def _select_package(catalog: Catalog, package: str | None) -> tuple[Package | None, list[Problem]]:
    if package is None:
        return None, []
    if package in catalog.packages:
        return catalog.packages[package], []
    loaded = ", ".join(sorted(catalog.packages)) or "none"
    return None, [Problem("MEMSEEK_PACKAGE", (), f"no package named {package!r}; loaded packages: {loaded}")]


def _check_entry(
    entry: Entry, catalog: Catalog, footprints: dict[tuple[str, int], Footprint], checks: ViewChecks
) -> list[Problem]:
    if entry.kind == "view":
        return _check_view(entry, catalog, footprints, checks)
    check = ENTRY_CHECKS.get(entry.kind)
    return [entry.problem(loc, msg) for loc, msg in check(entry.model, catalog)] if check else []


def _check_view(
    entry: Entry, catalog: Catalog, footprints: dict[tuple[str, int], Footprint], checks: ViewChecks
) -> list[Problem]:
    """Check one view version by its kind's check; record what it reads when it has no problem."""
    view = catalog.view(entry.name, entry.version)
    # A view the package does not expose is checked as it reads without the package: the
    # graph views it may name are those `active: true`, not the package's pins.
    outside = catalog.package is not None and not catalog.is_active(view)
    check = checks.get(view.kind, _unchecked)
    details, footprint = check(view, replace(catalog, package=None) if outside else catalog)
    if footprint is not None:
        footprints[(view.name, view.version)] = footprint
    return [entry.problem(loc, msg) for loc, msg in details]


def collection_problems(collection: Collection, catalog: Catalog) -> Found:
    """Profiles, embedding model, enrichments and links of one collection version."""
    return (
        _profile_problems(collection, catalog)
        + _embedding_problems(collection, catalog)
        + [
            (("enrichments", i), f"unknown enrichment {name!r}")
            for i, name in enumerate(collection.enrichments)
            if name not in catalog.enrichments
        ]
        + _link_problems(collection, catalog)
    )


def _profile_problems(collection: Collection, catalog: Catalog) -> Found:
    found: Found = []
    if collection.search_profile not in catalog.profiles:
        found.append((("search_profile",), f"unknown search profile {collection.search_profile!r}"))
    for i, name in enumerate(collection.allowed_search_profiles):
        if name not in catalog.profiles:
            found.append((("allowed_search_profiles", i), f"unknown search profile {name!r}"))
    allowed = collection.allowed_search_profiles
    if allowed and collection.search_profile not in allowed:
        found.append((("search_profile",), "must be one of allowed_search_profiles"))
    return found


def _embedding_problems(collection: Collection, catalog: Catalog) -> Found:
    alias = collection.embedding
    if alias is None:
        return []
    model = catalog.models.get(alias)
    if model is None:
        return [(("embedding",), f"unknown model alias {alias!r}")]
    if model.kind != "embedding":
        return [(("embedding",), f"model {alias!r} is a {model.kind} model, not an embedding model")]
    if model.dimensions != EMBEDDING_DIM:
        return [
            (
                ("embedding",),
                f"model {alias!r} has {model.dimensions} dimensions; stored vectors have {EMBEDDING_DIM}",
            )
        ]
    return []


def _link_problems(collection: Collection, catalog: Catalog) -> Found:
    found: Found = []
    for i, link in enumerate(collection.links):
        decl = collection.fields.get(link.field)
        if decl is None or decl.type not in ("string", "string_array"):
            msg = f"{link.field!r} must be a declared string or string_array field"
            found.append((("links", i, "field"), msg))
        edges = catalog.versions(link.edges)
        if not edges:
            found.append((("links", i, "edges"), f"unknown edges collection {link.edges!r}"))
        elif not any(c.active for c in edges):
            found.append(
                (
                    ("links", i, "edges"),
                    f"edges collection {link.edges!r} has no active version to write links into",
                )
            )
        found += [  # a link record has no key of its own (subject = node key, object = value)
            (
                ("links", i, "edges"),
                f"edges collection {c.name} v{c.version} is keyed: true; a link has no key",
            )
            for c in edges
            if c.active and c.keyed is True
        ]
    return found


def _unchecked(view: View, catalog: Catalog) -> tuple[Found, Footprint | None]:
    """A view of a kind no check was handed for: nothing known about it, nothing recorded."""
    return [], None


def _graph_view_problems(view: View, catalog: Catalog) -> tuple[Found, Footprint | None]:
    graph = view.graph
    assert graph is not None  # the model requires it for graph kinds
    edges = catalog.versions(graph.edges)
    found: Found = [] if edges else [(("graph", "edges"), f"unknown collection {graph.edges!r}")]
    for role in ("subject", "object", "predicate"):
        name = getattr(graph, role)
        found += [
            (("graph", role), f"{name!r} is not a declared string field of {c.name} v{c.version}")
            for c in edges
            if name not in c.fields or c.fields[name].type != "string"
        ]
    nodes = catalog.versions(graph.nodes) if graph.nodes else ()
    if graph.nodes and not nodes:
        found.append((("graph", "nodes"), f"unknown collection {graph.nodes!r}"))
    found += [
        (("graph", "nodes"), f"{c.name} v{c.version} is declared keyed: false; nodes must be keyed")
        for c in nodes
        if c.keyed is False
    ]
    read = (*edges, *nodes)
    footprint = Footprint(
        tuple(sorted({c.name for c in read})), tuple(sorted({c.search_profile for c in read}))
    )
    return found, footprint if not found else None


GRAPH_VIEW_CHECKS: ViewChecks = {kind: _graph_view_problems for kind in GRAPH_KINDS}
"""The view kinds the catalog checks itself: a graph view reads declared fields, no search."""


def package_problems(package: Package, catalog: Catalog) -> Found:
    """Pinned view and write contract versions exist; MCP tools are among the package's views and
    write contracts; the selected package's tools have descriptions (`_undescribed_tools`)."""
    found: Found = [
        ((pins, name), f"{noun} {name!r} has no version {version}")
        for pins, noun, pinned, loaded in (
            ("views", "view", package.views, catalog.views),
            ("writes", "write contract", package.writes, catalog.writes),
        )
        for name, version in pinned.items()
        if all(v.version != version for v in loaded.get(name, ()))
    ]
    found += [
        (("mcp", "tools", i), f"{tool!r} is not one of the package's views or write contracts")
        for i, tool in enumerate(package.mcp.tools)
        if tool not in package.views and tool not in package.writes
    ]
    return found + _undescribed_tools(package, catalog)


def _undescribed_tools(package: Package, catalog: Catalog) -> Found:
    """A tool the deployment publishes must say what it does: its description is all an agent
    reads to decide when to call it, and no sentence generated from a name says more than the
    name. Checked for the selected package (the tools this deployment publishes). Write contracts
    always have one; without a package every active view is a tool, described or not, because
    the spec lets a view leave its description out (docs/agents.md)."""
    if catalog.package is None or catalog.package.name != package.name:
        return []
    undescribed = {
        v.name: v.version
        for v in catalog.all_views()
        if package.views.get(v.name) == v.version and v.description is None
    }
    return [
        (("mcp", "tools", i), f"view {tool!r} v{undescribed[tool]} has no description; a tool needs one")
        for i, tool in enumerate(package.mcp.tools)
        if tool in undescribed
    ]


def enrichment_problems(enrichment: Any, catalog: Catalog) -> Found:
    """A model-computed enrichment names a chat model alias."""
    if isinstance(enrichment, ClientEnrichment):
        return []
    model = catalog.models.get(enrichment.model)
    if model is None:
        return [(("model",), f"unknown model alias {enrichment.model!r}")]
    if model.kind != "chat":
        return [(("model",), f"model {enrichment.model!r} is an {model.kind} model, not a chat model")]
    return []


def rank_default_problems(rank_default: Any, catalog: Catalog) -> Found:
    """Every score name a default formula reads is declared by some collection version."""
    known = known_scores(_all_versions(catalog), catalog)
    return [
        (at + (1,), f"no collection declares a score named {node.name!r}")
        for mode, tree in rank_default.variants.items()
        for at, node in iter_nodes(tree, ("variants", mode))
        if isinstance(node, Score) and node.name not in known
    ]


def _all_versions(catalog: Catalog) -> list[Collection]:
    return [c for versions in catalog.collections.values() for c in versions]


ENTRY_CHECKS: dict[str, Callable[[Any, Catalog], Found]] = {
    "collection": collection_problems,
    "write": write_problems,
    "package": package_problems,
    "enrichment": enrichment_problems,
    "rank_default": rank_default_problems,
}
