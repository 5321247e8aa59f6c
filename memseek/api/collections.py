"""`GET /collections`: every loaded collection version, what it declares, and this workspace's
records in it by processing state, with the processing queue (`memseek.overview`).

What a newcomer needs before a first search: which collections exist, which types and fields
they take, which fields can be filtered, sorted or returned, which modes can read them, and
whether written records are processed yet.
"""

from __future__ import annotations

from typing import Any

from flask import Blueprint
from flask import Response
from flask import jsonify

from memseek.api.common import runtime
from memseek.api.common import scoped
from memseek.api.common import workspace
from memseek.api.openapi import Operation
from memseek.api.openapi import document
from memseek.catalog.catalog import Catalog
from memseek.catalog.models import Collection
from memseek.catalog.models import FieldDecl
from memseek.overview import Counts
from memseek.overview import overview
from memseek.search.resolve import EMBEDDING_MODES
from memseek.search.resolve import MODE_NEEDS

bp = Blueprint("collections", __name__)


def modes(catalog: Catalog, collection: Collection) -> list[str]:
    """The search modes that can read the collection version: its profile's engine must be able
    to, vector and hybrid need an embedding, structured needs a sortable field to order by."""
    able = (
        catalog.capabilities(collection.search_profile)
        if collection.search_profile in catalog.profiles
        else ()
    )
    found = [mode for mode, needs in MODE_NEEDS.items() if needs <= frozenset(able)]
    if collection.embedding is None:
        found = [mode for mode in found if mode not in EMBEDDING_MODES]
    if not any(decl.sortable for decl in collection.fields.values()):
        found = [mode for mode in found if mode != "structured"]
    return found


def describe_field(name: str, decl: FieldDecl) -> dict[str, Any]:
    """One declared field and what reads may do with it."""
    return {
        "type": decl.type,
        "path": decl.path or name,
        "fallback_paths": list(decl.fallback_paths),
        "filterable": decl.filterable,
        "sortable": decl.sortable,
        "returnable": decl.returnable,
        "description": decl.description,
    }


def describe_collection(catalog: Catalog, collection: Collection, counts: Counts) -> dict[str, Any]:
    """One entry of `GET /collections`."""
    model = catalog.models.get(collection.embedding) if collection.embedding else None
    embedding = None
    if model is not None:
        embedding = {"alias": collection.embedding, "provider": model.provider, "model": model.model}
    return {
        "name": collection.name,
        "version": collection.version,
        "active": collection.active,
        "description": collection.description,
        "types": list(collection.types),
        "keyed": collection.keyed,
        "search_profile": collection.search_profile,
        "modes": modes(catalog, collection),
        "embedding": embedding,
        "text_language": collection.text_language,
        "fields": {name: describe_field(name, decl) for name, decl in collection.fields.items()},
        "scores": {
            name: {"display": s.display, "description": s.description}
            for name, s in collection.scores.items()
        },
        "enrichments": list(collection.enrichments),
        "retention": None if collection.retention is None else collection.retention.model_dump(),
        "records": counts.to_json(),
    }


@bp.get("/collections")
def list_collections() -> Response:
    catalog = runtime().catalog
    with scoped() as conn:
        seen = overview(conn, workspace())
    entries = [
        describe_collection(catalog, c, seen.counts.get((c.name, c.version), Counts()))
        for name in sorted(catalog.collections)
        for c in catalog.versions(name)
    ]
    return jsonify({"collections": entries, "queue": seen.queue.to_json()})


document(
    Operation(
        "GET",
        "/collections",
        "Every loaded collection version: declarations, searchable modes, this workspace's records by state",
        responses=((200, "collections (each with records: pending, ready, failed, retracted) and queue"),),
    )
)
