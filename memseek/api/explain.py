"""`POST /search/explain` and `POST /views/{name}/explain`: the SQL a request runs, as text.

The same text `memseek explain` prints, for the inspector and other tools: the request is
checked exactly as a call would be (a bad one is the same 422), then compiled, not run. The SQL
holds the caller's own values and workspace, so it needs the caller's key like the call itself.
"""

from __future__ import annotations

from flask import Blueprint
from flask import Response
from flask import jsonify

from memseek.api.common import json_body
from memseek.api.common import runtime
from memseek.api.common import workspace
from memseek.api.openapi import Operation
from memseek.api.openapi import document
from memseek.api.search import SearchRequest
from memseek.api.view_query import ViewParameters
from memseek.search.request import parse_search
from memseek.search.service import explain_search
from memseek.search.views import explain_view

bp = Blueprint("explain", __name__)


@bp.post("/search/explain")
def explain_a_search() -> Response:
    rt = runtime()
    spec = parse_search(json_body(), max_query_chars=rt.settings.max_query_chars)
    return jsonify({"sql": explain_search(rt, workspace(), spec)})


@bp.post("/views/<name>/explain")
def explain_a_view(name: str) -> Response:
    return jsonify({"sql": explain_view(runtime(), workspace(), name, json_body(required=False))})


EXPLAINED = ((200, '{"sql": the statements, as memseek explain prints them}'),)
document(
    Operation(
        "POST", "/search/explain", "The SQL a search request runs", body=SearchRequest, responses=EXPLAINED
    )
)
document(
    Operation(
        "POST",
        "/views/{name}/explain",
        "The SQL one call of a view runs",
        body=ViewParameters,
        responses=EXPLAINED,
    )
)
