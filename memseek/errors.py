"""One exception hierarchy and one JSON error shape for every route.

Body: `{"error": {"code": ..., "message": ..., "details": [{"loc": [...], "msg": ...}]}}`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

Loc = tuple[str | int, ...]


@dataclass(frozen=True, slots=True)
class Detail:
    """One problem: where (`loc`, a JSON path) and what (`msg`)."""

    loc: Loc
    msg: str

    def to_json(self) -> dict[str, Any]:
        return {"loc": list(self.loc), "msg": self.msg}


class MemseekError(Exception):
    """Base of every error a client can see."""

    status = 500
    code = "internal_error"
    retry_after: int | None = None
    """Seconds a client should wait before trying again (the `Retry-After` header), if it may."""

    def __init__(self, message: str, details: Sequence[Detail] = ()) -> None:
        super().__init__(message)
        self.message = message
        self.details = tuple(details)


class RequestInvalid(MemseekError):
    """The request (or a catalog reference it makes) is invalid."""

    status = 422
    code = "invalid_request"


class FormulaOverflow(RequestInvalid):
    """A rank or boost formula produced a value outside float8's range. The caller's 422 where
    the caller wrote the formula; a formula of the deployment's (a default, a view's) is answered
    `RankEvaluationFailed` instead (`memseek.search.service`)."""


class Unauthorized(MemseekError):
    """Missing, unknown or revoked API key."""

    status = 401
    code = "unauthorized"


class NotFound(MemseekError):
    """No such record, view or route (records of other workspaces included)."""

    status = 404
    code = "not_found"


class Conflict(MemseekError):
    """The request conflicts with stored state (idempotency key reuse, lane state)."""

    status = 409
    code = "conflict"


class ResponseTooLarge(MemseekError):
    """The result was computed but is larger than MAX_RESPONSE_BYTES."""

    status = 409
    code = "response_too_large"


class PayloadTooLarge(MemseekError):
    """The request body is larger than the configured limit."""

    status = 413
    code = "payload_too_large"


class UnsupportedMediaType(MemseekError):
    """The body is not declared as UTF-8 JSON (`Content-Type: application/json`)."""

    status = 415
    code = "unsupported_media_type"


class TooManyRequests(MemseekError):
    """The caller's workspace already holds its share of the service's request threads."""

    status = 429
    code = "too_many_requests"
    retry_after = 1


class BackendUnavailable(MemseekError):
    """The database, an embedding provider, search engine or model is unavailable."""

    status = 503
    code = "backend_unavailable"
    retry_after = 1


class RankEvaluationFailed(MemseekError):
    """A formula the deployment supplies (a default or a view's, not the caller's) could not be
    evaluated over the stored values: the operator's problem, never the caller's."""

    status = 500
    code = "rank_evaluation_failed"


class SearchTimeout(BackendUnavailable):
    """A search statement ran longer than SEARCH_TIMEOUT_MS (PostgreSQL cancelled it)."""

    code = "search_timeout"


class ConfigError(Exception):
    """A deployment setting is invalid; raised before the service starts."""


class StartupError(Exception):
    """The service cannot start (database unreachable, home not writable, bad catalog)."""


def error_body(code: str, message: str, details: Sequence[Detail] = ()) -> dict[str, Any]:
    """The one JSON error shape."""
    return {"error": {"code": code, "message": message, "details": [d.to_json() for d in details]}}


KEY_MARK = "[key]"
"""pydantic's last `loc` element for a refused object key (a name in `scores`, `annotations`)."""


VALUE_ERROR = "Value error, "
"""Pydantic's prefix to the message of a `ValueError` a validator raises: the message is ours and
says what is wrong; the prefix names the exception's class, which tells the user nothing."""


def details_from_pydantic(errors: Sequence[Any], prefix: Loc = ()) -> list[Detail]:
    """Map pydantic's `ValidationError.errors()` onto `Detail`s with JSON paths. A refused
    object key is located at its entry, and its message says the name is at fault: pydantic's
    `[key]` marker is no member of the request, so a path holding it leads nowhere."""
    return [_detail(tuple(e["loc"]), str(e["msg"]), prefix) for e in errors]


def _detail(loc: Loc, msg: str, prefix: Loc) -> Detail:
    msg = msg.removeprefix(VALUE_ERROR)
    if loc and loc[-1] == KEY_MARK:
        return Detail(prefix + loc[:-1], f"the name: {msg}")
    return Detail(prefix + loc, msg)
