"""Automatic links (design "Graph data"): a node's link field becomes link records in an edges collection.

Writing a keyed node writes one link record per value of each declared link field (a string or
a string array; blank and repeated values are skipped). The link is an event in the edges
collection's active version, `derived_from` its node, one level deeper, with the node's status,
and current exactly while its node is (`memseek.write.lanes` keeps the two in step).
A record without a key is not a node: it gets no links.
"""

from __future__ import annotations

from collections.abc import Iterator
from collections.abc import Mapping
from typing import Any

from memseek.catalog.catalog import Catalog
from memseek.catalog.fields import MISSING
from memseek.catalog.fields import materialise_all
from memseek.catalog.fields import read_field
from memseek.catalog.models import Collection
from memseek.catalog.models import LinkDecl
from memseek.errors import Detail
from memseek.errors import Loc
from memseek.write.ids import uuid7
from memseek.write.prepare import field_problems
from memseek.write.prepare import needs_processing
from memseek.write.rows import Row

Triple = tuple[str, str, str]
DEFAULT_NAMES: Triple = ("subject", "object", "predicate")


def edge_field_names(catalog: Catalog, edges: str) -> Triple:
    """(subject, object, predicate) field names of `edges`: an active graph view's, else the defaults."""
    for view in catalog.active_views():
        if view.graph is not None and view.graph.edges == edges:
            return view.graph.subject, view.graph.object, view.graph.predicate
    return DEFAULT_NAMES


def link_values(collection: Collection, field: str, content: Mapping[str, Any]) -> list[str]:
    """The link targets a node names in `field`, in order, without blanks or repeats."""
    value = read_field(collection, field, content)
    if value is MISSING:
        return []
    values = value if isinstance(value, list) else [value]
    return list(dict.fromkeys(v for v in values if isinstance(v, str) and v.strip()))


def _put(content: dict[str, Any], path: str, value: str) -> None:
    *parents, leaf = path.split(".")
    node = content
    for part in parents:
        node = node.setdefault(part, {})
    node[leaf] = value


def link_content(edges: Collection, names: Triple, values: Triple) -> dict[str, Any]:
    """Content holding subject, object and predicate where `edges` declares those fields."""
    content: dict[str, Any] = {}
    for name, value in zip(names, values, strict=True):
        path = edges.field_path(name)[0] if name in edges.fields else name
        _put(content, path, value)
    return content


def _links(catalog: Catalog, collection: Collection) -> Iterator[tuple[LinkDecl, Collection]]:
    for decl in collection.links:
        yield decl, catalog.collection(decl.edges)


def link_rows(catalog: Catalog, collection: Collection, node: Row) -> list[Row]:
    """The automatic link rows of `node` (written under `collection`)."""
    if node.key is None:
        return []
    rows: list[Row] = []
    for decl, edges in _links(catalog, collection):
        names = edge_field_names(catalog, edges.name)
        pending = needs_processing(catalog, edges, {}, {}, None)
        for target in link_values(collection, decl.field, node.content):
            content = link_content(edges, names, (node.key, target, decl.predicate))
            rows.append(_link_row(edges, node, content, f"{node.key} {decl.predicate} {target}", pending))
    return rows


def _link_row(edges: Collection, node: Row, content: dict[str, Any], text: str, pending: bool) -> Row:
    return Row(
        id=uuid7(),
        collection=edges.name,
        collection_version=edges.version,
        entity=node.entity,
        type=edges.types[0],
        key=None,
        text=text,
        content=content,
        scores={},
        annotations={},
        fields=materialise_all(edges, content),
        status=node.status,
        depth=node.depth + 1,
        derived_from=(node.id,),
        run_id=node.run_id,
        occurred_at=node.occurred_at,
        pending=pending,
        is_current=node.is_current,
        embedding=None,
        embedding_model=None,
        language=edges.text_language,
        link_node_id=node.id,
    )


def link_problems(
    catalog: Catalog, collection: Collection, key: str | None, content: Mapping[str, Any], at: Loc
) -> list[Detail]:
    """Why the links a node names could not be written (a `client` enrichment no writer
    supplies, unsuppliable fields); a declaration it names no target of writes nothing."""
    if key is None or not collection.links:
        return []
    problems: list[Detail] = []
    for position, decl in enumerate(collection.links):
        loc = (*at, "links", position)
        targets = link_values(collection, decl.field, content)
        if not targets:
            continue
        edges = catalog.collection(decl.edges)  # the catalog checks that it has an active version
        for name in edges.enrichments:
            if catalog.enrichments[name].kind == "client":
                msg = f"edges collection {edges.name!r} requires client enrichment {name!r}"
                problems.append(Detail(loc, msg))
        names = edge_field_names(catalog, edges.name)
        for target in targets:
            problems += field_problems(edges, link_content(edges, names, (key, target, decl.predicate)), loc)
    return problems
