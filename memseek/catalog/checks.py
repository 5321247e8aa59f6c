"""Cross-checks over a whole catalog: identities, references, view templates and packages.

Each check takes the validated definitions and returns `Problem`s; nothing stops at the first.
Search views are checked the way they run: the template is filled once with a valid sample
value per parameter, parsed as a strict search request and resolved against the catalog.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from collections.abc import Sequence
from dataclasses import replace
from typing import TYPE_CHECKING
from typing import Any

from memseek.catalog.catalog import Catalog
from memseek.catalog.catalog import Footprint
from memseek.catalog.conf import ClientEnrichment
from memseek.catalog.graph_contract import graph_contract
from memseek.catalog.models import Collection
from memseek.catalog.models import Package
from memseek.catalog.models import View
from memseek.catalog.problems import Found
from memseek.catalog.problems import Problem
from memseek.catalog.problems import check_pruned
from memseek.catalog.problems import format_loc
from memseek.catalog.template import fill_template
from memseek.catalog.template import placeholder_problems
from memseek.catalog.template import sample_sets
from memseek.errors import Loc
from memseek.errors import RequestInvalid
from memseek.schema import EMBEDDING_DIM
from memseek.search.rank import Score
from memseek.search.rank import iter_nodes
from memseek.search.request import SearchSpec
from memseek.search.request import parse_search
from memseek.search.resolve import RequestPlan
from memseek.search.resolve import known_scores
from memseek.search.resolve import resolve
from memseek.search.resolve import score_name_problems

if TYPE_CHECKING:
    from memseek.catalog.load import Entry

VERSIONED = ("collection", "view", "package")


def check_catalog(entries: Sequence[Entry], package: str | None) -> tuple[Catalog, list[Problem]]:
    """The catalog assembled from `entries`, and every problem the cross-checks find."""
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
            problems += _check_entry(entry, catalog, footprints)
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
        if entry.kind in ("collection", "view") and entry.model.active:
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
        if entry.kind in ("collection", "view"):
            versions[entry.kind][entry.name].append(model)
        else:
            by_kind[entry.kind].setdefault(entry.name, model)
    return Catalog(
        collections=_sorted_versions(versions["collection"]),
        views=_sorted_versions(versions["view"]),
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
    entry: Entry, catalog: Catalog, footprints: dict[tuple[str, int], Footprint]
) -> list[Problem]:
    if entry.kind == "view":
        view = catalog.view(entry.name, entry.version)
        # A view the package does not expose is checked as it reads without the package: the
        # graph views it may name are those `active: true`, not the package's pins.
        outside = catalog.package is not None and not catalog.is_active(view)
        details, footprint = view_problems(view, replace(catalog, package=None) if outside else catalog)
        if footprint is not None:
            footprints[(view.name, view.version)] = footprint
        return [entry.problem(loc, msg) for loc, msg in details]
    check = ENTRY_CHECKS.get(entry.kind)
    return [entry.problem(loc, msg) for loc, msg in check(entry.model, catalog)] if check else []


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


def view_problems(view: View, catalog: Catalog) -> tuple[Found, Footprint | None]:
    """Every problem of one view version, and what it reads when it has none."""
    if view.kind == "search":
        return _search_view_problems(view, catalog)
    return _graph_view_problems(view, catalog)


def _search_view_problems(view: View, catalog: Catalog) -> tuple[Found, Footprint | None]:
    samples = sample_sets(view.parameters)

    def attempt(query: Any) -> tuple[tuple[SearchSpec, RequestPlan] | None, Found]:
        """Placeholders first; then the query filled, parsed and resolved as it runs (with the
        first sample set that passes; the first set's problems when none does)."""
        placeholders = placeholder_problems(query, view.parameters)
        if placeholders:
            return None, [(d.loc, d.msg) for d in placeholders]
        if catalog.rank_default is None:  # its own problem is already reported; searches need it
            return None, []
        problems: list[Found] = []
        for values in samples:
            try:
                spec = parse_search(fill_template(query, values))
                return (spec, resolve(spec, catalog, None)), []
            except RequestInvalid as exc:
                problems.append([(d.loc, d.msg) for d in exc.details])
        return None, problems[0]

    checked, problems = check_pruned(view.query, attempt, _keeps_its_kind)
    found: Found = [(("query",) + loc, msg) for loc, msg in problems]
    if checked is None:
        return found, None
    spec, plan = checked
    found += [(("query",) + d.loc, d.msg) for d in score_name_problems(spec, plan, catalog)]
    found += [
        (("required_capabilities", i), f"search profile {profile!r} cannot do {capability}")
        for i, capability in enumerate(view.required_capabilities)
        for profile in plan.profiles
        if capability not in catalog.capabilities(profile)
    ]
    # Design §1: a collection's capabilities decide which modes may read it; vector needs embedding.
    read = {(c.name, c.version): c for search in plan.searches for c in search.collections}
    found += [
        (("required_capabilities", i), f"{name} v{version} declares no embedding: it cannot do vector")
        for i, capability in enumerate(view.required_capabilities)
        if capability == "vector"
        for (name, version), c in sorted(read.items())
        if c.embedding is None
    ]
    return found, Footprint(tuple(sorted({name for name, _ in read})), plan.profiles)


def _keeps_its_kind(locs: list[Loc]) -> bool:
    """A query checked again without its `sources` would be read as a single search, whose
    `mode` is missing and whose `fuse` is unknown: problems the author does not have."""
    return ("sources",) not in locs


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


def package_problems(package: Package, catalog: Catalog) -> Found:
    """Pinned view versions exist; MCP tools are among the package's views."""
    found: Found = [
        (("views", name), f"view {name!r} has no version {version}")
        for name, version in package.views.items()
        if all(v.version != version for v in catalog.views.get(name, ()))
    ]
    found += [
        (("mcp", "tools", i), f"{tool!r} is not one of the package's views")
        for i, tool in enumerate(package.mcp.tools)
        if tool not in package.views
    ]
    return found


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


def _all_versions(catalog: Catalog) -> Iterable[Collection]:
    return [c for versions in catalog.collections.values() for c in versions]


ENTRY_CHECKS = {
    "collection": collection_problems,
    "package": package_problems,
    "enrichment": enrichment_problems,
    "rank_default": rank_default_problems,
}
