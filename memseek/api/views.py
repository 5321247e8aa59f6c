"""`GET /views`: every loaded view version and its input contract (spec: Discovering views)."""

from __future__ import annotations

from typing import Any

from flask import Blueprint
from flask import Response
from flask import jsonify

from memseek.api.common import runtime
from memseek.api.openapi import Operation
from memseek.api.openapi import document
from memseek.catalog.catalog import Catalog
from memseek.catalog.graph_contract import published_input_schema
from memseek.catalog.models import View
from memseek.catalog.parameters import parameter_summary
from memseek.search.views import public_hash
from memseek.settings import Settings

bp = Blueprint("views", __name__)


def describe_view(catalog: Catalog, view: View, settings: Settings) -> dict[str, Any]:
    """One entry of `GET /views`: identity, activity (package-aware), what it is for (the
    view's `description`, or null) and the input contract."""
    footprint = catalog.footprint(view)
    return {
        "name": view.name,
        "version": view.version,
        "hash": public_hash(catalog.view_hash(view)),
        "active": catalog.is_active(view),
        "kind": view.kind,
        "description": view.description,
        "parameters": parameter_summary(view.parameters),
        "input_schema": published_input_schema(view, settings.max_graph_depth, settings.max_graph_paths),
        "collections": list(footprint.collections),
        "required_capabilities": list(view.required_capabilities),
        "profiles": list(footprint.profiles),
    }


@bp.get("/views")
def list_views() -> Response:
    catalog, settings = runtime().catalog, runtime().settings
    return jsonify({"views": [describe_view(catalog, view, settings) for view in catalog.all_views()]})


document(Operation("GET", "/views", "Every loaded view version and its input contract"))
