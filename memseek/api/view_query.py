"""`POST /views/{name}/query`: run the active version of a view with the caller's parameters.

The body is the view's parameters object itself (`{"entity": "contact.maria", "task": "..."}`),
or that object under a single `parameters` key, the shape the response echoes; an empty body
means no parameters. `GET /views` lists each view's `input_schema`.
"""

from __future__ import annotations

from typing import Any

from flask import Blueprint
from flask import Response
from pydantic import RootModel

from memseek.api.common import json_body
from memseek.api.common import runtime
from memseek.api.common import workspace
from memseek.api.openapi import Operation
from memseek.api.openapi import document
from memseek.search.views import view_response

bp = Blueprint("view_query", __name__)


class ViewParameters(RootModel[dict[str, Any]]):
    """The view's parameters by name; `GET /views` gives each view's complete `input_schema`."""


@bp.post("/views/<name>/query")
def query_view(name: str) -> Response:
    data, result = view_response(runtime(), workspace(), name, json_body(required=False))
    response = Response(data, mimetype="application/json")
    if result.timings is not None:
        response.headers["Server-Timing"] = result.timings.header()
    return response


document(
    Operation(
        "POST",
        "/views/{name}/query",
        "Run the active version of a view (search, graph walk or orphan report)",
        body=ViewParameters,
        responses=((200, "The view wrapper: view, parameters, hits and the kind's result"),),
    )
)
