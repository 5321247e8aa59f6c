"""The Flask app factory: runtime, blueprints, authentication and the one error shape."""

from __future__ import annotations

import logging
import re
import uuid
from typing import Any

import sqlalchemy as sa
from flask import Flask
from flask import Response
from flask import g
from flask import jsonify
from flask import request
from pydantic import ValidationError
from werkzeug.exceptions import HTTPException

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
from memseek.api.common import runtime
from memseek.auth import authenticate
from memseek.boot import build_runtime
from memseek.db import STATEMENT_LABEL
from memseek.db import hold_for_request
from memseek.db import release_held
from memseek.errors import BackendUnavailable
from memseek.errors import MemseekError
from memseek.errors import PayloadTooLarge
from memseek.errors import details_from_pydantic
from memseek.errors import error_body
from memseek.runtime import Runtime
from memseek.settings import Settings

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
_RULE_VARIABLE = re.compile(r"<(?:[^:>]+:)?([^>]+)>")
ROUTE_VARIABLES = {"raw_id": "id"}
"""Route variables named differently in the code than in the documented paths."""
HTTP_CODES = {404: "not_found", 405: "method_not_allowed", 413: PayloadTooLarge.code}
BLUEPRINTS = (
    health.bp, openapi.bp, docs.bp, inspector.bp, collections.bp, views.bp, view_query.bp, rank.bp,
    records.bp, lifecycle.bp, writes.bp, search.bp, explain.bp, mcp.bp,
)  # fmt: skip


def create_app(settings: Settings | None = None, *, shared: Runtime | None = None) -> Flask:
    """Build the WSGI app. Pass `shared` to reuse a runtime (tests, `memseek serve`); its builder
    closes it. An app that builds its own runtime leaves it open for the life of the process."""
    rt = shared or build_runtime(settings or Settings.from_env())
    app = Flask("memseek", static_folder=None)  # every route is an API route
    app.config["MAX_CONTENT_LENGTH"] = rt.settings.max_request_bytes
    app.json.sort_keys = False  # type: ignore[attr-defined]
    app.extensions["memseek"] = rt
    app.before_request(_authenticate)
    app.teardown_request(_release_connection)
    _register_error_handlers(app)
    for blueprint in BLUEPRINTS:
        app.register_blueprint(blueprint)
    return app


def _route_label() -> str:
    """`METHOD /path` of the matched route as documented (`POST /records/{id}/retract`), not the raw path."""
    if request.url_rule is None:
        return f"{request.method} (no route)"
    path = _RULE_VARIABLE.sub(lambda m: "{" + ROUTE_VARIABLES.get(m[1], m[1]) + "}", request.url_rule.rule)
    return f"{request.method} {path}"


def _authenticate() -> None:
    g.request_id = uuid.uuid4().hex[:16]
    STATEMENT_LABEL.set(_route_label())
    limit = runtime().settings.max_request_bytes
    if request.content_length is not None and request.content_length > limit:
        raise PayloadTooLarge(f"request body is larger than {limit} bytes")
    if request.endpoint in PUBLIC_ENDPOINTS:
        return
    # One statement, so no transaction around it: BEGIN and ROLLBACK would double its round trips.
    conn = runtime().engine.connect().execution_options(isolation_level="AUTOCOMMIT")
    try:
        g.workspace_id = authenticate(conn, request.headers.get("Authorization"))
        conn.commit()  # ends SQLAlchemy's autobegun transaction; in autocommit nothing is sent
    except BaseException:
        conn.close()
        raise
    hold_for_request(conn)  # the request's first workspace transaction runs on it


def _release_connection(exc: BaseException | None) -> None:
    release_held()


def _json_error(status: int, body: dict[str, Any]) -> Response:
    response = jsonify(body)
    response.status_code = status
    return response


def _register_error_handlers(app: Flask) -> None:
    @app.errorhandler(MemseekError)
    def memseek_error(exc: MemseekError) -> Response:
        return _json_error(exc.status, error_body(exc.code, exc.message, exc.details))

    @app.errorhandler(ValidationError)
    def validation_error(exc: ValidationError) -> Response:
        details = details_from_pydantic(exc.errors(include_url=False))
        return _json_error(422, error_body("invalid_request", "the request is invalid", details))

    @app.errorhandler(HTTPException)
    def http_error(exc: HTTPException) -> Response:
        status = exc.code or 500
        code = HTTP_CODES.get(status, "http_error")
        response = _json_error(status, error_body(code, exc.description or exc.name))
        if status == 405 and exc.valid_methods:  # type: ignore[attr-defined]
            response.headers["Allow"] = ", ".join(exc.valid_methods)  # type: ignore[attr-defined]
        return response

    @app.errorhandler(sa.exc.OperationalError)
    @app.errorhandler(sa.exc.TimeoutError)
    def database_unavailable(exc: Exception) -> Response:
        # unreachable server, dropped connection, exhausted pool: retryable, and never a 500
        request_id = g.get("request_id", "-")
        log.warning("database unavailable in request %s: %s", request_id, exc)
        message = f"the database is unavailable; retry later (request id {request_id})"
        return _json_error(BackendUnavailable.status, error_body(BackendUnavailable.code, message))

    @app.errorhandler(Exception)
    def unexpected(exc: Exception) -> Response:
        request_id = g.get("request_id", "-")
        log.exception("unhandled error in request %s", request_id)
        message = f"internal error; quote request id {request_id} to the operator"
        return _json_error(500, error_body("internal_error", message))
