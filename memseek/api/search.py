"""`POST /search`, `GET /search` and `GET /context`: thin routes over `memseek.search.service`.

`GET /search` and `GET /context` are conveniences that build a hybrid search request from a
few query parameters; any other parameter is rejected (422) rather than ignored.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Annotated
from typing import Any
from typing import cast

from flask import Blueprint
from flask import Response
from pydantic import BaseModel
from pydantic import RootModel
from pydantic import TypeAdapter

from memseek.api.common import json_body
from memseek.api.common import query
from memseek.api.common import runtime
from memseek.api.common import workspace
from memseek.api.openapi import Operation
from memseek.api.openapi import QueryParam
from memseek.api.openapi import document
from memseek.errors import Detail
from memseek.errors import RequestInvalid
from memseek.runtime import Runtime
from memseek.search.request import XML_NAME
from memseek.search.request import XML_NAME_FORM
from memseek.search.request import CombinedSearch
from memseek.search.request import SearchSpec
from memseek.search.request import SingleSearch
from memseek.search.request import parse_search
from memseek.search.resolve import searchable_alone
from memseek.search.service import SearchOutcome
from memseek.search.service import run_search
from memseek.search.service import search_response
from memseek.search.service import touch_on_read
from memseek.storable import STORABLE
from memseek.storable import STORABLE_NON_BLANK

bp = Blueprint("search", __name__)

GET_SEARCH_INCLUDE = ["text", "collection", "type", "occurred_at"]


class SearchRequest(RootModel[SingleSearch | CombinedSearch]):
    """A single search or several combined searches (documentation only: `parse_search` validates)."""


def _timed(response: Response, outcome: SearchOutcome) -> Response:
    response.headers["Server-Timing"] = outcome.timings.header()
    return response


@bp.post("/search")
def post_search() -> Response:
    rt = runtime()
    data, outcome = search_response(rt, workspace(), _parse(json_body()))
    return _timed(Response(data, mimetype="application/json"), outcome)


def hybrid_body(params: dict[str, Any]) -> dict[str, Any]:
    """The hybrid search a GET route stands for (an empty scope reads what hybrid can read), from
    its query parameters (checked against their declarations before the route ran)."""
    scope: dict[str, Any] = {"collections": [params["collection"]]} if "collection" in params else {}
    if "entity" in params:
        scope["entities"] = [params["entity"]]
    body: dict[str, Any] = {"q": params["q"], "mode": "hybrid", "scope": scope, "render": True}
    if "k" in params:
        body["k"] = params["k"]
    return body


def _parse(body: dict[str, Any]) -> SearchSpec:
    return parse_search(body, max_query_chars=runtime().settings.max_query_chars)


QUERY_LOCS = {
    ("q",): "q",
    ("k",): "k",
    ("scope", "entities"): "entity",
    ("scope", "collections"): "collection",
    ("mode",): "collection",  # the route's fixed hybrid mode fails only on a collection without embeddings
    ("fence", "tag"): "fence_tag",
    ("fence", "preamble"): "fence_preamble",
}
"""Where a GET route put each query parameter in the search request it builds."""


@contextmanager
def located_at_query() -> Iterator[None]:
    """Problems of the search a GET route built, located at the query parameter they came from."""
    try:
        yield
    except RequestInvalid as exc:
        raise RequestInvalid(exc.message, [_at_query(d) for d in exc.details]) from exc


def _at_query(detail: Detail) -> Detail:
    for prefix, name in QUERY_LOCS.items():
        if detail.loc[: len(prefix)] == prefix:
            return Detail(("query", name), detail.msg)
    return detail


@bp.get("/search")
def get_search() -> Response:
    rt = runtime()
    body = {**hybrid_body(query()), "include": GET_SEARCH_INCLUDE}
    with located_at_query():
        data, outcome = search_response(rt, workspace(), _parse(body), label="GET /search")
    return _timed(Response(data, mimetype="application/json"), outcome)


@bp.get("/context")
def get_context() -> Response:
    rt = runtime()
    params = query()
    body = hybrid_body(params)
    if "fence_tag" in params or "fence_preamble" in params:
        fence = {"tag": params.get("fence_tag", "records"), "preamble": params.get("fence_preamble")}
        body["fence"] = {key: value for key, value in fence.items() if value is not None}
    with located_at_query():
        outcome = run_search(rt, workspace(), _parse(body), label="GET /context")
    text = outcome.body["rendered"] or ""
    touch_on_read(rt, workspace(), outcome.hit_ids)
    return _timed(Response(text, mimetype="text/plain"), outcome)


def _bounds(model: type[BaseModel], name: str) -> dict[str, Any]:
    """The range and default the request model gives field `name`, for the query parameter that
    fills it (the OpenAPI document and the validation come from the same model)."""
    info = model.model_fields[name]  # one field's schema: the whole model's is slow to build at import
    schema = TypeAdapter(cast(Any, Annotated[info.annotation, info])).json_schema()
    return {key: schema[key] for key in ("minimum", "maximum", "default") if key in schema}


def _param(
    name: str, kind: str, description: str, required: bool = False, form: str = "", **bounds: Any
) -> QueryParam:
    return QueryParam(name, kind, required, description, tuple(bounds.items()), form=form)


def _query_text(rt: Runtime) -> dict[str, Any]:
    return {"maxLength": rt.settings.max_query_chars}


def _hybrid_collections(rt: Runtime) -> dict[str, Any]:
    return {"enum": list(searchable_alone(rt.catalog, "hybrid"))}


_SEARCH_QUERY = (
    _param(
        "q", "string", "Query text (a hybrid search).", required=True, minLength=1, pattern=STORABLE_NON_BLANK
    ).refined(_query_text),
    _param(
        "entity", "string", "Only records about this entity.", minLength=1, maxLength=512, pattern=STORABLE
    ),
    _param("collection", "string", "Only this collection (one a hybrid search can read).").refined(
        _hybrid_collections
    ),
    _param("k", "integer", "How many results (1-100, default 20).", **_bounds(SingleSearch, "k")),
)
document(
    Operation(
        "POST",
        "/search",
        "Run a search request (single or combined)",
        body=SearchRequest,
        responses=((200, "Hits, ranking contract, rendered rows and diagnostics"),),
    )
)
document(Operation("GET", "/search", "A hybrid search from a few query parameters", query=_SEARCH_QUERY))
document(
    Operation(
        "GET",
        "/context",
        "The rendered rows of a hybrid search, as text/plain",
        query=(
            *_SEARCH_QUERY,
            _param(
                "fence_tag",
                "string",
                'Wrap the rows in <fence_tag untrusted="true"> (an XML name, at most 64 characters).',
                pattern=XML_NAME,
                form=XML_NAME_FORM,
            ),
            _param(
                "fence_preamble",
                "string",
                "A sentence before the fence element (non-blank, at most 2,000 characters).",
                minLength=1,
                maxLength=2000,
                pattern=STORABLE_NON_BLANK,
            ),
        ),
    )
)
