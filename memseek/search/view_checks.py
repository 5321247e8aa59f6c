"""Load-time checks of search views: a view is checked the way it runs.

Its template is filled with a valid sample value per parameter, parsed as a strict search
request and resolved against the catalog; what the resolved plan reads is the view's
`Footprint`. The catalog layer cannot run searches, so whoever loads a catalog hands these
checks to `memseek.catalog.load.load_catalog` (`VIEW_CHECKS`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from memseek.catalog.catalog import Catalog
from memseek.catalog.catalog import Footprint
from memseek.catalog.checks import ViewChecks
from memseek.catalog.models import View
from memseek.catalog.problems import Found
from memseek.catalog.problems import check_pruned
from memseek.catalog.template import fill_template
from memseek.catalog.template import placeholder_problems
from memseek.catalog.template import sample_sets
from memseek.errors import Loc
from memseek.errors import RequestInvalid
from memseek.search.request import CombinedSearch
from memseek.search.request import SearchSpec
from memseek.search.request import parse_search
from memseek.search.resolve import RequestPlan
from memseek.search.resolve import resolve
from memseek.search.resolve import score_name_problems


def search_view_problems(view: View, catalog: Catalog) -> tuple[Found, Footprint | None]:
    """Every problem of one search view version, and what it reads when it has none."""
    checked, problems = check_pruned(view.query, _attempt(view, catalog), _keeps_its_kind)
    found: Found = [(("query",) + loc, msg) for loc, msg in problems]
    if checked is None:
        return found, None
    spec, plan = checked
    found += [(("query",) + d.loc, d.msg) for d in score_name_problems(spec, plan, catalog)]
    found += [(("query",) + loc, msg) for loc, msg in vector_problems(spec)]
    found += _capability_problems(view, plan, catalog)
    read = {c.name for search in plan.searches for c in search.collections}
    return found, Footprint(tuple(sorted(read)), plan.profiles)


Checked = tuple[SearchSpec, RequestPlan]
Attempt = Callable[[Any], tuple[Checked | None, Found]]


VIEW_VECTOR = (
    "a view cannot carry a query vector: a view's request is bounded by its parameters, and a "
    "vector is the caller's; search with POST /search and a vector instead"
)


def vector_problems(spec: SearchSpec) -> Found:
    """A view's request never names `vector` or `embedding_model`, fixed or as a parameter: a
    view is a bounded, reviewed request whose callers fill declared parameters, and a query
    vector is neither a bounded value nor one a reviewer can read."""
    places: list[tuple[Loc, Any]] = [((), spec)]
    if isinstance(spec, CombinedSearch):
        places += [(("sources", i), source) for i, source in enumerate(spec.sources)]
    return [
        (loc + (key,), VIEW_VECTOR)
        for loc, query in places
        for key in ("vector", "embedding_model")
        if getattr(query, key) is not None
    ]


def _attempt(view: View, catalog: Catalog) -> Attempt:
    """The check `check_pruned` runs on the query (and on the query without what failed)."""
    samples = sample_sets(view.parameters)

    def attempt(query: Any) -> tuple[Checked | None, Found]:
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

    return attempt


def _capability_problems(view: View, plan: RequestPlan, catalog: Catalog) -> Found:
    """What the view requires that its searches' engines or collections cannot do."""
    found: Found = [
        (("required_capabilities", i), f"search profile {profile!r} cannot do {capability}")
        for i, capability in enumerate(view.required_capabilities)
        for profile in plan.profiles
        if capability not in catalog.capabilities(profile)
    ]
    # Design §1: a collection's capabilities decide which modes may read it; vector needs embedding.
    read = {(c.name, c.version): c for search in plan.searches for c in search.collections}
    return found + [
        (("required_capabilities", i), f"{name} v{version} declares no embedding: it cannot do vector")
        for i, capability in enumerate(view.required_capabilities)
        if capability == "vector"
        for (name, version), c in sorted(read.items())
        if c.embedding is None
    ]


def _keeps_its_kind(locs: list[Loc]) -> bool:
    """A query checked again without its `sources` would be read as a single search, whose
    `mode` is missing and whose `fuse` is unknown: problems the author does not have."""
    return ("sources",) not in locs


VIEW_CHECKS: ViewChecks = {"search": search_view_problems}
"""The view checks the search layer adds to a catalog load (`load_catalog(..., view_checks=...)`)."""
