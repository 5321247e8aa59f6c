"""Every call the SDK makes, once, for both clients: each operation is a generator that yields the
`Request`s it needs and receives their `Reply`s, then returns the parsed result (or raises the
service's error). The sync client drives these with blocking IO, the async client with awaits;
neither knows a route, a body or a response shape.

A new route is one operation here plus one `@endpoint` on a namespace in `_surface`; a listing
is one page operation (`pages`) plus one `@paged` method, which follows the cursors.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from collections.abc import Generator
from collections.abc import Mapping
from collections.abc import Sequence
from typing import Any
from typing import TypeVar
from urllib.parse import quote
from uuid import UUID

from memseek.client._http import Reply
from memseek.client._http import Request
from memseek.client._http import as_json
from memseek.client._params import ViewCache
from memseek.client._params import check_parameters
from memseek.client.errors import error_for
from memseek.client.models import Erased
from memseek.client.models import Erasure
from memseek.client.models import Health
from memseek.client.models import Page
from memseek.client.models import Record
from memseek.client.models import SearchResult
from memseek.client.models import ViewInfo
from memseek.client.models import ViewResult
from memseek.client.models import WriteCall
from memseek.client.models import WriteInfo
from memseek.client.models import Written

T = TypeVar("T")
Op = Generator[Request, Reply, T]
"""An operation: yields requests, is sent their replies, returns its result."""

RecordId = str | UUID
DEFAULT_WAIT = 10.0
"""The service's own wait when `?wait=true` names no timeout (it holds the request that long)."""


def call(request: Request, parse: Callable[[Reply], T]) -> Op[T]:
    """The operation of one request: send it, parse the reply."""
    reply = yield request
    return parse(reply)


def _segment(value: RecordId) -> str:
    """A path segment: ids and names are quoted whole (a `/` in a view name stays in it), and a
    name of dots (`.`, `..`) percent-encoded too: sent bare, it would be removed from the path as
    a dot segment (RFC 3986) and another route called."""
    quoted = quote(str(value), safe="")
    return quoted.replace(".", "%2E") if quoted in (".", "..") else quoted


# --- service ------------------------------------------------------------------------------------


def health() -> Op[Health]:
    return call(Request("GET", "/health", retry=True), _health)


def _health(reply: Reply) -> Health:
    """A 503 with the health body is an answer (`degraded`), not an error."""
    body = reply.json() if reply.status in (200, 503) else None
    if not isinstance(body, dict) or "database" not in body:
        raise error_for(reply.status, reply.content)
    return Health.from_json(body)


def raw_request(
    method: str, path: str, params: Mapping[str, Any] | None, body: Any, retry: bool | None
) -> Op[Any]:
    """Any route, through the same authentication, retries and errors: the JSON (or text) body."""
    method = method.upper()
    request = Request(method, path, _query(params), body, method == "GET" if retry is None else retry)
    return call(request, _body)


def _body(reply: Reply) -> Any:
    is_json = reply.expect().headers.get("content-type", "").startswith("application/json")
    return reply.json() if is_json else reply.text


def _query(params: Mapping[str, Any] | None) -> dict[str, str] | None:
    """Query parameters as the service reads them (`true`/`false`, numbers as written); None
    values are left out."""
    if not params:
        return None
    return {k: str(v).lower() if isinstance(v, bool) else str(v) for k, v in params.items() if v is not None}


# --- records ------------------------------------------------------------------------------------


def write_records(
    records: Mapping[str, Any] | Sequence[Mapping[str, Any]], wait: bool, timeout: float | None
) -> Op[list[Written]]:
    """`POST /records`: retried only when every record carries an `idempotency_key` (a retry of
    such a write returns the records the first attempt wrote, never a second copy)."""
    items = [records] if isinstance(records, Mapping) else list(records)
    repeatable = bool(items) and all(isinstance(r, Mapping) and r.get("idempotency_key") for r in items)
    held = (DEFAULT_WAIT if timeout is None else timeout) if wait else 0.0
    params = _query({"wait": True if wait else None, "timeout": timeout})
    request = Request("POST", "/records", params, {"records": items}, repeatable, wait=held)
    return call(request, _written)


def _written(reply: Reply) -> list[Written]:
    return [Written.from_json(item) for item in reply.expect(201).json()["records"]]


def get_record(record_id: RecordId) -> Op[Record]:
    return call(Request("GET", f"/records/{_segment(record_id)}", retry=True), _record)


def _record(reply: Reply) -> Record:
    return Record.from_json(reply.expect(200).json())


def record_action(record_id: RecordId, action: str, reason: str | None = None) -> Op[Record]:
    """`POST /records/{id}/{action}` (retract, approve, reject): the record afterwards."""
    body = None if reason is None else {"reason": reason}
    return call(Request("POST", f"/records/{_segment(record_id)}/{action}", body=body), _record)


# --- search -------------------------------------------------------------------------------------


def search(spec: Mapping[str, Any]) -> Op[SearchResult]:
    """`POST /search` with the request as given (single or combined; `vector` and the like are
    passed through for the service to accept or refuse)."""
    request = Request("POST", "/search", body=dict(spec), retry=True)
    return call(request, lambda reply: SearchResult.from_json(reply.expect(200).json()))


def context(params: Mapping[str, Any]) -> Op[str]:
    """`GET /context`: the rendered rows of a hybrid search, as text."""
    request = Request("GET", "/context", _query(params), retry=True)
    return call(request, lambda reply: reply.expect(200).text)


# --- views --------------------------------------------------------------------------------------


def list_views() -> Op[list[ViewInfo]]:
    return call(Request("GET", "/views", retry=True), _views)


def _views(reply: Reply) -> list[ViewInfo]:
    return [ViewInfo.from_json(view) for view in reply.expect(200).json()["views"]]


def query_view(cache: ViewCache, name: str, arguments: Mapping[str, Any]) -> Op[ViewResult]:
    """`POST /views/{name}/query` after the parameters passed the view's published contract.
    A 404 or 422 from the service drops the cached contracts: the catalog may have changed."""
    values = as_json(dict(arguments))
    yield from _check(cache, name, values)
    reply = yield Request("POST", f"/views/{_segment(name)}/query", body=values, retry=True)
    if reply.status in (404, 422):
        cache.clear()
    return ViewResult.from_json(reply.expect(200).json())


def _check(cache: ViewCache, name: str, values: dict[str, Any]) -> Op[None]:
    """Raise the 422 the service would give. Contracts are fetched when the view is not cached,
    and again before refusing on a contract fetched by an earlier call; an unknown view is left
    for the service to answer (404)."""
    fetched = not cache.knows(name)
    if fetched:
        cache.load((yield from list_views()))
    problem = _problem(cache, name, values)
    if problem is not None and not fetched:
        cache.load((yield from list_views()))
        problem = _problem(cache, name, values)
    if problem is not None:
        raise problem


def _problem(cache: ViewCache, name: str, values: dict[str, Any]) -> Exception | None:
    view = cache.get(name)
    return None if view is None else check_parameters(view, values)


# --- write contracts ----------------------------------------------------------------------------


def list_writes() -> Op[list[WriteInfo]]:
    return call(Request("GET", "/writes", retry=True), _writes)


def _writes(reply: Reply) -> list[WriteInfo]:
    return [WriteInfo.from_json(item) for item in reply.expect(200).json()["writes"]]


def call_write(
    name: str, parameters: Mapping[str, Any], idempotency_key: str | None, wait: bool, timeout: float | None
) -> Op[WriteCall]:
    """`POST /writes/{name}`: retried only with an idempotency key, and waited for, like `POST /records`.
    Parameters given as `{"parameters": {...}}` (the route's body) are read as the parameters:
    no parameter's value can be an object, so nothing else can be meant."""
    given = parameters["parameters"] if _only_parameters(parameters) else parameters
    body: dict[str, Any] = {"parameters": dict(given)}
    if idempotency_key is not None:
        body["idempotency_key"] = idempotency_key
    held = (DEFAULT_WAIT if timeout is None else timeout) if wait else 0.0
    params = _query({"wait": True if wait else None, "timeout": timeout})
    path = f"/writes/{_segment(name)}"
    request = Request("POST", path, params, body, retry=idempotency_key is not None, wait=held)
    return call(request, lambda reply: WriteCall.from_json(reply.expect().json()))


def _only_parameters(arguments: Mapping[str, Any]) -> bool:
    return set(arguments) == {"parameters"} and isinstance(arguments["parameters"], Mapping)


# --- the data lifecycle -------------------------------------------------------------------------


def erase_record(record_id: RecordId, reason: str | None) -> Op[Erased]:
    """`DELETE /records/{id}`: not retried (a repeat after a lost reply would answer 404)."""
    body = None if reason is None else {"reason": reason}
    request = Request("DELETE", f"/records/{_segment(record_id)}", body=body)
    return call(request, lambda reply: Erased.from_json(reply.expect(200).json()))


Pages = Callable[[str | None], Op[Page[T]]]
"""A listing: the operation reading the page at a cursor (None: the first)."""


def pages(path: str, key: str, parse: Callable[[Any], T], params: Mapping[str, Any]) -> Pages[T]:
    """The pages of a `GET` listing whose items are under `key`, each parsed with `parse`."""

    def page(cursor: str | None) -> Op[Page[T]]:
        request = Request("GET", path, _query({**params, "cursor": cursor}), retry=True)
        return call(request, lambda reply: _page(reply.expect(200).json(), key, parse))

    return page


def _page(body: Any, key: str, parse: Callable[[Any], T]) -> Page[T]:
    return Page(tuple(parse(item) for item in body[key]), body.get("next_cursor"))


def get_erasure(erasure_id: RecordId, after: float = 0.0) -> Op[Erasure]:
    request = Request("GET", f"/erasures/{_segment(erasure_id)}", retry=True, after=after)
    return call(request, lambda reply: Erasure.from_json(reply.expect(200).json()))


POLL_FIRST, POLL_MAX = 0.2, 2.0
"""Seconds between polls of a running erasure: doubling from the first, at most the second."""


def forget(
    entity: str, collection: str | None, reason: str | None, wait: bool, timeout: float | None
) -> Op[Erasure]:
    """`DELETE /entities/{entity}`, then (`wait`) `GET /erasures/{id}` until it is done, or until
    the next poll would come after `timeout` seconds (then it is returned running)."""
    body = None if reason is None else {"reason": reason}
    params = _query({"collection": collection})
    reply = yield Request("DELETE", f"/entities/{_segment(entity)}", params, body)
    data = reply.expect(200, 202).json()
    if reply.status == 200:
        return Erasure.from_json(data)
    erasure = yield from get_erasure(data["erasure_id"])
    pause, until = POLL_FIRST, None if timeout is None else time.monotonic() + timeout
    while wait and not erasure.done and (until is None or time.monotonic() + pause <= until):
        erasure = yield from get_erasure(erasure.id, after=pause)
        pause = min(pause * 2, POLL_MAX)
    return erasure
