"""The SDK's one exception hierarchy, mapped from the service's one error shape.

Every route answers an error as `{"error": {"code", "message", "details": [{"loc", "msg"}]}}`
with an HTTP status; the SDK raises the subclass of `MemseekError` for that status family, so a
caller can catch a family (`except NotFound`) or read the service's own `code` and `loc` paths:

    >>> try:
    ...     m.search(q="budget", mode="hybrid", k=500)
    ... except InvalidRequest as exc:
    ...     print(exc.code, exc.locs)
    invalid_request [['k']]
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from collections.abc import Sequence
from typing import Any

Loc = list[str | int]


class ErrorDetail(dict[str, Any]):
    """One problem: where (`loc`, a JSON path into the request, as a list) and what (`msg`).

    It is the service's own detail object, `{"loc": [...], "msg": "..."}`, with both keys also
    read as attributes: code written against the HTTP API's error body works on it unchanged.
    """

    def __init__(self, loc: Sequence[str | int], msg: str) -> None:
        super().__init__(loc=list(loc), msg=msg)

    @property
    def loc(self) -> Loc:
        return self["loc"]  # type: ignore[no-any-return]

    @property
    def msg(self) -> str:
        return self["msg"]  # type: ignore[no-any-return]


class MemseekError(Exception):
    """Base of every error the SDK raises; also the class of statuses no family below covers
    (500, 405, ...).

    `status` is the HTTP status (None when no response arrived), `code` the service's stable
    error code (`not_found`, `invalid_request`, ...), `details` the located problems and `body`
    the parsed response body, when there was one.
    """

    def __init__(
        self,
        message: str,
        *,
        status: int | None = None,
        code: str = "error",
        details: Sequence[ErrorDetail] = (),
        body: Any = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.status = status
        self.code = code
        self.details = list(details)
        self.body = body

    @property
    def locs(self) -> list[list[str | int]]:
        """Every detail's `loc` as a JSON list, as the service wrote it."""
        return [list(detail.loc) for detail in self.details]

    def __str__(self) -> str:
        code = f"{self.code} ({self.status})" if self.status else self.code
        head = f"{code}: {self.message}"
        return "; ".join([head, *(f"{list(d.loc)}: {d.msg}" for d in self.details)])


class InvalidRequest(MemseekError):
    """The request is invalid (400, 413, 415, 422), or the SDK found it invalid before sending
    (view parameters, values JSON cannot carry) — then with the same `status`, `code` and `loc`
    the service would have answered."""


class AuthenticationError(MemseekError):
    """The API key is missing, unknown or revoked (401), or not allowed (403)."""


class NotFound(MemseekError):
    """No such record, view or route (404); another workspace's ids answer the same."""


class Conflict(MemseekError):
    """The request conflicts with stored state (409): an idempotency key reused with another
    payload, a lane state that forbids the change."""


class ResponseTooLarge(Conflict):
    """The result exceeded the deployment's MAX_RESPONSE_BYTES (409 `response_too_large`): ask
    for fewer hits or less per hit."""


class Unavailable(MemseekError):
    """The service or one of its backends is unavailable (503), the service was too busy to take
    the call (429), or no response arrived (the connection failed or timed out) — each after the
    retries the call was allowed: worth trying again later, unchanged."""


FAMILIES: dict[int, type[MemseekError]] = {
    400: InvalidRequest,
    413: InvalidRequest,
    415: InvalidRequest,
    422: InvalidRequest,
    401: AuthenticationError,
    403: AuthenticationError,
    404: NotFound,
    409: Conflict,
    429: Unavailable,
    503: Unavailable,
}
CODES: dict[str, type[MemseekError]] = {"response_too_large": ResponseTooLarge}


def error_for(status: int, content: bytes) -> MemseekError:
    """The exception for an error response: its class from the status (and code), its fields
    from the one error shape; a body of another shape (a proxy's HTML page) keeps its text as
    the message."""
    body = _json_or_none(content)
    error = body.get("error") if isinstance(body, Mapping) else None
    if not isinstance(error, Mapping):
        text = content.decode("utf-8", "replace").strip()[:500] or f"HTTP {status}"
        return FAMILIES.get(status, MemseekError)(text, status=status, code="http_error", body=body)
    code = str(error.get("code", "error"))
    cls = CODES.get(code, FAMILIES.get(status, MemseekError))
    details = [_detail(item) for item in error.get("details") or () if isinstance(item, Mapping)]
    return cls(str(error.get("message", "")), status=status, code=code, details=details, body=body)


def _detail(item: Mapping[str, Any]) -> ErrorDetail:
    return ErrorDetail(tuple(item.get("loc") or ()), str(item.get("msg", "")))


def _json_or_none(content: bytes) -> Any:
    try:
        return json.loads(content)
    except ValueError:
        return None
