"""The data lifecycle routes (docs/lifecycle.md): erase a record, forget an entity, list records
page by page, and the erasure log.

`DELETE /records/{id}` and `DELETE /entities/{entity}` answer `404` for anything the caller's
workspace does not hold, exactly like an unknown id, and change nothing then. Every query
parameter a route takes is declared with its operation below and checked before the route
runs (`memseek.api.openapi.check_query`); any other is a `422`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any
from typing import TypeVar
from uuid import UUID

from flask import Blueprint
from flask import Response
from flask import jsonify
from flask import request

from memseek.api.common import json_object
from memseek.api.common import query
from memseek.api.common import runtime
from memseek.api.common import scoped
from memseek.api.common import workspace
from memseek.api.openapi import Operation
from memseek.api.openapi import QueryParam
from memseek.api.openapi import document
from memseek.auth import PREFIX_CHARS
from memseek.errors import NotFound
from memseek.jsontext import compact_json
from memseek.jsontext import ended_answer
from memseek.storable import STORABLE
from memseek.write import erasures
from memseek.write.listing import RecordFilter
from memseek.write.listing import bounded_records
from memseek.write.models import EraseIn
from memseek.write.pages import CURSOR_PATTERN
from memseek.write.pages import DEFAULT_LIMIT
from memseek.write.pages import MAX_LIMIT
from memseek.write.pages import decode_cursor
from memseek.write.pages import encode_cursor
from memseek.write.pages import id_position
from memseek.write.pages import seq_position
from memseek.write.store import record_json

bp = Blueprint("lifecycle", __name__)
T = TypeVar("T")

STATUSES = ("active", "draft")
ORDERS = ("newest", "oldest")


def _param(name: str, description: str, kind: str = "string", **bounds: Any) -> QueryParam:
    return QueryParam(name, kind, False, description, tuple(bounds.items()))


PAGE_QUERY = (
    _param("cursor", "The next_cursor of the previous page, unchanged.", pattern=CURSOR_PATTERN),
    _param(
        "limit",
        "Most items on the page (a records page also ends before it would pass MAX_RESPONSE_BYTES).",
        "integer",
        minimum=1,
        maximum=MAX_LIMIT,
        default=DEFAULT_LIMIT,
    ),
)
RECORDS_QUERY = (
    _param("entity", "Only records about this entity.", pattern=STORABLE),
    _param("collection", "Only records of this collection.", pattern=STORABLE),
    _param("type", "Only records of this type.", pattern=STORABLE),
    _param("status", "Only active records or only drafts.", enum=list(STATUSES)),
    _param("key", "Only records of this fact slot key.", pattern=STORABLE),
    _param("order", "newest (default) or oldest first, by ingestion order.", enum=list(ORDERS)),
    *PAGE_QUERY,
)
FORGET_QUERY = (
    _param("collection", "Only forget the entity's records in this collection.", pattern=STORABLE),
)


def _reason() -> str | None:
    return EraseIn.model_validate(json_object(required=False)).reason


def _requested_by() -> str | None:
    """The caller's key as the erasure log names it: its stored prefix, never the key."""
    _, _, key = request.headers.get("Authorization", "").partition(" ")
    return f"key {key.strip()[:PREFIX_CHARS]}" if key.strip() else None


def _uuid(raw: str, what: str) -> UUID:
    try:
        return UUID(raw)
    except ValueError:
        raise NotFound(f"{what} {raw} not found") from None


@bp.delete("/records/<raw_id>")
def erase_record(raw_id: str) -> Response:
    record_id, reason = _uuid(raw_id, "record"), _reason()
    with scoped() as conn:
        done = erasures.erase_record(conn, workspace(), record_id, reason, _requested_by())
    runtime().search.large_workspaces.discard(workspace())
    body = {"erased": str(record_id), "collection": done.collection, "entity": done.entity}
    return jsonify({**body, "erasure_id": str(done.id), "counts": done.to_json()["counts"]})


@bp.delete("/entities/<text:entity>")
def forget_entity(entity: str) -> tuple[Response, int]:
    collection, reason = query().get("collection"), _reason()
    done = erasures.forget(runtime(), workspace(), entity, collection, reason, _requested_by())
    if done.done:
        return jsonify(done.to_json()), 200
    response = jsonify({"erasure_id": str(done.id), "state": done.state})
    response.headers["Location"] = f"/erasures/{done.id}"
    return response, 202


def _page_after(params: dict[str, Any], listing: dict[str, Any], read: Callable[[Any], T]) -> T | None:
    return decode_cursor(params["cursor"], listing, read) if "cursor" in params else None


@bp.get("/records")
def records_page() -> Response:
    params = query()
    limit: int = params.get("limit", DEFAULT_LIMIT)
    which = RecordFilter(
        entity=params.get("entity"),
        collection=params.get("collection"),
        type=params.get("type"),
        status=params.get("status"),
        key=params.get("key"),
        order="oldest" if params.get("order") == "oldest" else "newest",
    )
    after = _page_after(params, which.listing(), seq_position)
    runtime().touches.settle(workspace())  # show the last_accessed an earlier search set
    budget = runtime().settings.max_response_bytes - PAGE_FRAME
    with scoped() as conn:
        rows, following = bounded_records(conn, workspace(), which, after, limit, budget)
    written = _within(rows[:limit], budget)
    more = encode_cursor(rows[len(written) - 1].seq, which.listing()) if following > len(written) else None
    body = b'{"records":[' + b",".join(written) + b'],"next_cursor":' + compact_json(more) + b"}"
    return Response(ended_answer(body), mimetype="application/json")


PAGE_FRAME = 256
"""Bytes of a records page that are not its records: the braces, keys and the cursor."""


def _within(rows: list[Any], budget: int) -> list[bytes]:
    """The JSON of the leading `rows` whose sizes (with their commas) add up to at most
    `budget` bytes; the first row's whatever its size, so that every record can be listed."""
    written: list[bytes] = []
    used = 0
    for row in rows:
        text = compact_json(record_json(row))
        used += len(text) + 1
        if written and used > budget:
            break
        written.append(text)
    return written


ERASURES_LISTING = {"route": "erasures"}


@bp.get("/erasures")
def erasures_page() -> Response:
    params = query()
    limit: int = params.get("limit", DEFAULT_LIMIT)
    after = _page_after(params, ERASURES_LISTING, id_position)
    with scoped() as conn:
        found = erasures.list_erasures(conn, workspace(), after, limit + 1)
    more = encode_cursor(str(found[limit - 1].id), ERASURES_LISTING) if len(found) > limit else None
    return jsonify({"erasures": [erasure.to_json() for erasure in found[:limit]], "next_cursor": more})


@bp.get("/erasures/<erasure_id>")
def get_erasure(erasure_id: str) -> Response:
    found = _uuid(erasure_id, "erasure")
    with scoped() as conn:
        return jsonify(erasures.get_erasure(conn, workspace(), found).to_json())


document(
    Operation(
        "DELETE",
        "/records/{id}",
        "Erase a record and its automatic links (not a flag: the rows are deleted)",
        body=EraseIn,
        body_required=False,
        responses=((200, "Erased: {erased, collection, entity, erasure_id, counts}"),),
    )
)
document(
    Operation(
        "DELETE",
        "/entities/{entity}",
        "Erase every record about an entity (and links naming it), in batches",
        body=EraseIn,
        body_required=False,
        query=FORGET_QUERY,
        responses=(
            (200, f"Done within the request (at most {erasures.SYNC_LIMIT} records): the erasure"),
            (202, "Erasing in the background: {erasure_id, state}; follow GET /erasures/{erasure_id}"),
        ),
    )
)
document(
    Operation(
        "GET",
        "/records",
        "The workspace's records in every state, page by page (newest first)",
        query=RECORDS_QUERY,
        responses=((200, "{records: [the record as GET /records/{id} shows it], next_cursor}"),),
    )
)
document(
    Operation(
        "GET",
        "/erasures",
        "The erasure log, newest first, page by page",
        query=PAGE_QUERY,
        responses=((200, "{erasures: [...], next_cursor}"),),
    )
)
document(Operation("GET", "/erasures/{erasure_id}", "One erasure: what was named, state, counts"))
