"""Helpers every blueprint shares: the runtime, the caller's workspace, the JSON body."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any
from uuid import UUID

from flask import current_app
from flask import g
from flask import request
from sqlalchemy.engine import Connection
from werkzeug.routing import PathConverter

from memseek.api.admission import Admission
from memseek.db import workspace_transaction
from memseek.errors import BackendUnavailable
from memseek.errors import Detail
from memseek.errors import RequestInvalid
from memseek.errors import error_body
from memseek.jsontext import parse_json
from memseek.logs import first_line
from memseek.logs import log_throttled
from memseek.runtime import Runtime

log = logging.getLogger("memseek")


class TextConverter(PathConverter):
    """A path variable that is any stored text, slashes and line breaks included (an entity):
    Werkzeug's `path` stops at a line break (its `.` does not match one), and the request would
    be answered as an unknown route instead of read and checked. Leading slashes and a name of
    slashes only are part of the text too: Werkzeug would redirect `//x` to `/x`, another name.
    (Its matcher matches neither a bare "any text" pattern nor an empty name: hence two branches.)"""

    regex = r"(?:[\s\S]*?[^/][\s\S]*?|/+)"


def runtime() -> Runtime:
    return current_app.extensions["memseek"]  # type: ignore[no-any-return]


def admission() -> Admission:
    """How request threads and waits are shared between workspaces (`memseek.api.admission`)."""
    return current_app.extensions["memseek_admission"]  # type: ignore[no-any-return]


def query() -> dict[str, Any]:
    """The route's declared query parameters, read and checked before it ran."""
    return g.get("query", {})  # type: ignore[no-any-return]


def workspace() -> UUID:
    """The authenticated caller's workspace."""
    return g.workspace_id  # type: ignore[no-any-return]


@contextmanager
def scoped() -> Iterator[Connection]:
    """A transaction confined to the caller's workspace."""
    with workspace_transaction(runtime().engine, workspace()) as conn:
        yield conn


def json_body(*, required: bool = True) -> Any:
    """The request body parsed as JSON; a clear 422 when it is missing or not JSON."""
    raw = request.get_data(cache=True)
    if not raw.strip():
        if required:
            raise RequestInvalid("a JSON body is required", [Detail(("body",), "missing")])
        return {}
    try:
        return parse_json(raw)
    except (ValueError, UnicodeDecodeError) as exc:
        raise RequestInvalid("the body is not valid JSON", [Detail(("body",), str(exc))]) from None
    except RecursionError:
        raise RequestInvalid("the body is nested too deeply", [Detail(("body",), "too deep")]) from None


def json_object(*, required: bool = True) -> dict[str, Any]:
    """The request body as a JSON object (`json_body`); any other JSON value is a 422 at
    `["body"]`, alike on every route whose body is an object."""
    body = json_body(required=required)
    if not isinstance(body, dict):
        raise RequestInvalid("the body must be a JSON object", [Detail(("body",), "expected an object")])
    return body


OUTAGE_MESSAGE = "the database is unavailable; retry after the Retry-After seconds"


def outage_body(exc: BaseException) -> dict[str, Any]:
    """The `503 backend_unavailable` body of a database outage (unreachable, frozen or dropped
    server, exhausted pool), logged once per interval without a traceback: an expected,
    retryable condition, never a 500. The same for a route and for an MCP tool call."""
    log_throttled(log, logging.WARNING, "database-unavailable", "database unavailable: %s", first_line(exc))
    # no request id: the line above stands for many requests, so no id could be found in it
    return error_body(BackendUnavailable.code, OUTAGE_MESSAGE)
