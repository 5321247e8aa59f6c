"""The Flask app factory: runtime, blueprints, authentication and the one error shape."""

from __future__ import annotations

import logging
import re
import time
import uuid
from functools import partial
from typing import Any

from flask import Flask
from flask import Response
from flask import g
from flask import jsonify
from flask import request
from pydantic import ValidationError
from werkzeug.exceptions import HTTPException

from memseek import deadline
from memseek.api import collections
from memseek.api import docs
from memseek.api import explain
from memseek.api import health
from memseek.api import inspector
from memseek.api import lifecycle
from memseek.api import mcp
from memseek.api import openapi
from memseek.api import rank
from memseek.api import records
from memseek.api import search
from memseek.api import view_query
from memseek.api import views
from memseek.api import writes
from memseek.api.admission import DEFAULT_THREADS
from memseek.api.admission import QUEUED_MS
from memseek.api.admission import Admission
from memseek.api.admission import Shares
from memseek.api.common import TextConverter
from memseek.api.common import outage_body
from memseek.api.common import runtime
from memseek.api.health import HealthProbe
from memseek.auth import authenticate
from memseek.boot import build_runtime
from memseek.db import DATABASE_OUTAGES
from memseek.db import STATEMENT_LABEL
from memseek.db import checked_by_use
from memseek.db import hold_for_request
from memseek.db import release_held
from memseek.errors import BackendUnavailable
from memseek.errors import Detail
from memseek.errors import MemseekError
from memseek.errors import PayloadTooLarge
from memseek.errors import UnsupportedMediaType
from memseek.errors import details_from_pydantic
from memseek.errors import error_body
from memseek.logs import log_throttled
from memseek.runtime import Runtime
from memseek.settings import Settings
from memseek.suggest import nearest

log = logging.getLogger("memseek")

PUBLIC_ENDPOINTS = frozenset(
    {
        "health.health",
        "openapi.openapi",
        "docs.root",
        "docs.page",
        "docs.asset",
        "inspector.page",
        "inspector.asset",
    }
)
"""Served without a key: health, the API's description and its pages (the inspector's page asks
for a key and sends it with each request it makes)."""
HTTP_CODES = {404: "not_found", 405: "method_not_allowed", 413: PayloadTooLarge.code}
BLUEPRINTS = (
    health.bp, openapi.bp, docs.bp, inspector.bp, collections.bp, views.bp, view_query.bp, rank.bp,
    records.bp, lifecycle.bp, writes.bp, search.bp, explain.bp, mcp.bp,
)  # fmt: skip
JSON_TYPE = re.compile(r"application/(?:[A-Za-z0-9!#$&^_.+-]+\+)?json", re.IGNORECASE)
"""`application/json` and the structured `application/*+json` types."""


def create_app(
    settings: Settings | None = None, *, shared: Runtime | None = None, threads: int = DEFAULT_THREADS
) -> Flask:
    """Build the WSGI app. Pass `shared` to reuse a runtime (tests, `memseek serve`); its builder
    closes it. An app that builds its own runtime leaves it open for the life of the process.
    `threads` is the WSGI server's request threads, which the workspaces share (`Shares`)."""
    rt = shared or build_runtime(settings or Settings.from_env())
    app = Flask("memseek", static_folder=None)  # every route is an API route
    app.url_map.converters["text"] = TextConverter
    app.config["MAX_CONTENT_LENGTH"] = rt.settings.max_request_bytes
    app.json.sort_keys = False  # type: ignore[attr-defined]
    app.extensions["memseek"] = rt
    shares = Shares.of(
        threads,
        share=rt.settings.workspace_max_requests,
        queued=rt.settings.workspace_max_queued,
        max_wait=rt.settings.max_queue_wait_ms / 1000,
    )
    app.extensions["memseek_admission"] = Admission(shares)
    app.extensions["memseek_health"] = HealthProbe(rt.engine)
    app.before_request(_before_request)
    app.after_request(_timed)
    app.teardown_request(_end_request)
    _register_error_handlers(app)
    for blueprint in BLUEPRINTS:
        app.register_blueprint(blueprint)
    return app


def _route_label() -> str:
    """`METHOD /path` of the matched route as documented (`POST /records/{id}/retract`), not the raw path."""
    if request.url_rule is None:
        return f"{request.method} (no route)"
    return f"{request.method} {openapi.documented_path(request.url_rule.rule)}"


def _before_request() -> None:
    """Every request, before its route: its deadline and authentication, then the checks its
    declared operation implies."""
    g.started = time.perf_counter()
    STATEMENT_LABEL.set(_route_label())
    g.deadline = deadline.start(runtime().settings.search_timeout_ms / 1000)
    limit = runtime().settings.max_request_bytes
    if request.content_length is not None and request.content_length > limit:
        raise PayloadTooLarge(f"request body is larger than {limit} bytes")
    if request.endpoint not in PUBLIC_ENDPOINTS:
        _authenticate()
    operation = openapi.operation_for(request.method, request.url_rule.rule) if request.url_rule else None
    if operation is not None:
        g.query = openapi.check_query(operation, request.args.to_dict(flat=False), runtime())
        openapi.check_path(request.view_args or {})
        if operation.body is not None:
            _check_media_type()


def _timed(response: Response) -> Response:
    """`Server-Timing` gains `auth` (the key's look-up), `app` (the milliseconds from the app's
    first look at the request to its response) and, under `memseek serve`, `queue` (the time the
    request waited for a thread), so that a client can tell the service's work from the HTTP
    exchange's and from its wait behind other requests."""
    if "started" in g:
        app = f"app;dur={(time.perf_counter() - g.started) * 1000:.2f}"
        if "auth_ms" in g:
            app = f"auth;dur={g.auth_ms:.2f}, {app}"
        if QUEUED_MS in request.environ:
            app = f"queue;dur={request.environ[QUEUED_MS]:.2f}, {app}"
        timing = response.headers.get("Server-Timing")
        response.headers["Server-Timing"] = f"{timing}, {app}" if timing else app
    return response


def _authenticate() -> None:
    # One statement, so no transaction around it: BEGIN and ROLLBACK would double its round trips;
    # and no liveness ping before it: the look-up itself shows the connection lives.
    started = time.perf_counter()
    header = request.headers.get("Authorization")
    conn, g.workspace_id = checked_by_use(runtime().engine, partial(authenticate, header=header))
    hold_for_request(conn)  # the request's first workspace transaction runs on it
    g.auth_ms = (time.perf_counter() - started) * 1000


def _check_media_type() -> None:
    """A body must be declared UTF-8 JSON: `application/json` or `application/*+json`, with no
    charset or `charset=utf-8`. A request without a body needs no Content-Type."""
    if not request.content_length and not request.headers.get("Transfer-Encoding"):
        return
    mimetype, options = request.mimetype, request.mimetype_params
    charset = options.get("charset", "utf-8").lower()
    if not JSON_TYPE.fullmatch(mimetype) or charset not in ("utf-8", "utf8"):
        declared = request.headers.get("Content-Type") or "none"
        raise UnsupportedMediaType(
            f"the body must be JSON sent as Content-Type: application/json (UTF-8); got {declared}",
            [Detail(("header", "Content-Type"), "expected application/json; charset=utf-8")],
        )


def _end_request(exc: BaseException | None) -> None:
    release_held()
    if (token := g.pop("deadline", None)) is not None:
        deadline.end(token)


def _request_id() -> str:
    """The id an error answer and its log line share, drawn when the first one needs it: a
    request that succeeds never reads the system's random source for it."""
    if "request_id" not in g:
        g.request_id = uuid.uuid4().hex[:16]
    return str(g.request_id)


def _json_error(status: int, body: dict[str, Any], retry_after: int | None = None) -> Response:
    response = jsonify(body)
    response.status_code = status
    if retry_after is not None:
        response.headers["Retry-After"] = str(retry_after)
    return response


def _no_route() -> str:
    """The 404 of a path no route matches: the documented path nearest to it, if one is close
    (a typo), and where every route is listed — not Werkzeug's "check your spelling"."""
    close = nearest(request.path, sorted({op.path for op in openapi.OPERATIONS}))
    guess = f"; did you mean {close}?" if close else ";"
    return f"no route {request.method} {request.path}{guess} every route is listed at /docs"


def _register_error_handlers(app: Flask) -> None:
    @app.errorhandler(MemseekError)
    def memseek_error(exc: MemseekError) -> Response:
        if exc.status >= 500:
            # the operator's problem: one line per kind per interval, not one per request
            log_throttled(log, logging.ERROR, exc.code, "%s: %s", exc.code, exc.message)
        return _json_error(exc.status, error_body(exc.code, exc.message, exc.details), exc.retry_after)

    @app.errorhandler(ValidationError)
    def validation_error(exc: ValidationError) -> Response:
        details = details_from_pydantic(exc.errors(include_url=False))
        return _json_error(422, error_body("invalid_request", "the request is invalid", details))

    @app.errorhandler(HTTPException)
    def http_error(exc: HTTPException) -> Response:
        status = exc.code or 500
        code = HTTP_CODES.get(status, "http_error")
        message = _no_route() if status == 404 and request.url_rule is None else exc.description or exc.name
        response = _json_error(status, error_body(code, message))
        if status == 405 and exc.valid_methods:  # type: ignore[attr-defined]
            response.headers["Allow"] = ", ".join(exc.valid_methods)  # type: ignore[attr-defined]
        return response

    def database_unavailable(exc: Exception) -> Response:
        return _json_error(BackendUnavailable.status, outage_body(exc), BackendUnavailable.retry_after)

    for outage in DATABASE_OUTAGES:
        app.register_error_handler(outage, database_unavailable)

    @app.errorhandler(Exception)
    def unexpected(exc: Exception) -> Response:
        request_id = _request_id()
        log.exception("unhandled error in request %s", request_id)
        message = f"internal error; quote request id {request_id} to the operator"
        return _json_error(500, error_body("internal_error", message))
