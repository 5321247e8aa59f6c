"""Issue 45: one error shape everywhere — what the HTTP server refuses before the app runs (raw
sockets against `memseek serve`'s server), unknown query parameters on every route (driven by
the routes the app has, so a route added later is covered), and `415` for a body that is not
declared UTF-8 JSON on every route that takes one."""

from __future__ import annotations

import json
import socket
from dataclasses import replace
from typing import Any

import pytest
from flask import Flask

from memseek.api.openapi import OPERATIONS
from memseek.api.openapi import operation_for
from memseek.app import create_app
from memseek.db import create_db_engine
from memseek.runtime import Runtime
from memseek.settings import Settings
from tests.conftest import Client
from tests.helpers import app_for
from tests.helpers import error
from tests.helpers import with_settings
from tests.reliability.conftest import raw_exchange
from tests.service import serving

REFUSED_BY_THE_SERVER = [
    pytest.param(b"GARBAGE\r\n\r\n", 400, "bad_request", id="bad-request-line"),
    pytest.param(
        b"GET /health HTTP/1.1\r\nHost: x\r\nBad Header\r\n\r\n", 400, "bad_request", id="bad-header"
    ),
    pytest.param(
        b"GET /health HTTP/1.1\r\nHost: x\r\nX-Big: " + b"a" * 300_000 + b"\r\n\r\n",
        431,
        "request_header_fields_too_large",
        id="header-too-large",
    ),
    pytest.param(
        b"POST /search HTTP/1.1\r\nHost: x\r\nContent-Length: abc\r\n\r\n",
        400,
        "bad_request",
        id="bad-content-length",
    ),
    pytest.param(
        b"POST /search HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\n{}",
        400,
        "bad_request",
        id="two-content-lengths",
    ),
    pytest.param(
        b"POST /search HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
        400,
        "bad_request",
        id="bad-chunk",
    ),
    pytest.param(
        b"POST /search HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip\r\n\r\n",
        501,
        "not_implemented",
        id="unknown-transfer-encoding",
    ),
]


def response_parts(raw: bytes) -> tuple[int, dict[str, str], bytes]:
    """Status, headers (lower-case names) and body of one raw HTTP response."""
    head, _, body = raw.partition(b"\r\n\r\n")
    status_line, *header_lines = head.decode("latin-1").split("\r\n")
    headers = dict(line.split(": ", 1) for line in header_lines)
    return int(status_line.split()[1]), {k.lower(): v for k, v in headers.items()}, body


def assert_error_shape(body: Any, code: str) -> None:
    assert set(body) == {"error"}, body
    assert set(body["error"]) == {"code", "message", "details"}, body
    assert body["error"]["code"] == code and body["error"]["message"], body
    assert isinstance(body["error"]["details"], list), body


@pytest.mark.parametrize(("request_bytes", "status", "code"), REFUSED_BY_THE_SERVER)
def test_what_the_http_server_refuses_is_in_the_one_shape(
    service: str, request_bytes: bytes, status: int, code: str
) -> None:
    got, headers, body = response_parts(raw_exchange(service, request_bytes))
    assert got == status, body
    assert headers["content-type"] == "application/json" and body.endswith(b"}\n")
    assert_error_shape(json.loads(body), code)


def test_every_route_is_declared(app: Flask) -> None:
    """The central checks (query parameters, media type) read each route's declaration: a route
    without one would escape them."""
    undeclared = [
        (method, rule.rule)
        for rule in app.url_map.iter_rules()
        for method in sorted((rule.methods or set()) - {"HEAD", "OPTIONS"})
        if operation_for(method, rule.rule) is None
    ]
    assert undeclared == []


def _routes() -> list[Any]:
    return [pytest.param(op.method, op.path, id=f"{op.method} {op.path}") for op in OPERATIONS]


def _concrete(path: str) -> str:
    return path.replace("{id}", "00000000-0000-0000-0000-000000000000").replace("{name}", "customer_context")


@pytest.mark.parametrize(("method", "path"), _routes())
def test_an_unknown_query_parameter_is_refused_on_every_route(client: Client, method: str, path: str) -> None:
    response = client.request(method, _concrete(path) + "?surprise=1", json={})
    err = error(response, 422, "invalid_request")
    assert ["query", "surprise"] in [detail["loc"] for detail in err["details"]]


def test_an_unknown_query_parameter_is_refused_by_the_served_health_check(service: str) -> None:
    """Issue 45: "unknown query parameters refused on every route" — `/health` too, where
    `memseek serve` answers it from its I/O loop, as the app does."""
    got, headers, body = response_parts(
        raw_exchange(service, b"GET /health?surprise=1 HTTP/1.1\r\nHost: x\r\n\r\n")
    )
    assert got == 422, body
    assert headers["content-type"] == "application/json"
    assert ["query", "surprise"] in [detail["loc"] for detail in json.loads(body)["error"]["details"]]
    got, _, body = response_parts(raw_exchange(service, b"GET /health HTTP/1.1\r\nHost: x\r\n\r\n"))
    assert got == 200 and body.endswith(b"}\n"), body


def _body_routes() -> list[Any]:
    return [pytest.param(op.method, op.path, id=f"{op.method} {op.path}") for op in OPERATIONS if op.body]


NOT_JSON = [
    pytest.param("text/plain", b"{}", id="text-plain"),
    pytest.param("application/x-www-form-urlencoded", b"a=1", id="form"),
    pytest.param("multipart/form-data; boundary=x", b"--x--", id="multipart"),
    pytest.param("application/xml", b"<a/>", id="xml"),
    pytest.param(None, b"{}", id="none"),
    pytest.param("application/json; charset=utf-16", "{}".encode("utf-16"), id="utf-16"),
    pytest.param("application/json; charset=latin-1", b"{}", id="latin-1"),
    pytest.param("application/jsonx", b"{}", id="json-lookalike"),
]


@pytest.mark.parametrize(("method", "path"), _body_routes())
@pytest.mark.parametrize(("content_type", "data"), NOT_JSON)
def test_a_body_not_declared_utf8_json_is_415(
    client: Client, method: str, path: str, content_type: str | None, data: bytes
) -> None:
    headers = {**client.tenant.headers, **({"Content-Type": content_type} if content_type else {})}
    response = client.raw.open(_concrete(path), method=method, data=data, headers=headers)
    err = error(response, 415, "unsupported_media_type")
    assert err["details"] == [{"loc": ["header", "Content-Type"], "msg": err["details"][0]["msg"]}]


@pytest.mark.parametrize(
    "content_type",
    [
        "application/json",
        "application/json; charset=utf-8",
        "Application/JSON; charset=UTF-8",
        "application/x+json",
    ],
)
def test_utf8_json_in_any_spelling_is_read(client: Client, content_type: str) -> None:
    headers = {**client.tenant.headers, "Content-Type": content_type}
    response = client.raw.post("/search", data=b'{"mode": "recent"}', headers=headers)
    assert response.status_code == 200, response.get_data(as_text=True)


def test_a_body_route_without_a_body_needs_no_content_type(client: Client) -> None:
    """`approve` takes no body; sent without one, it is not a media-type question."""
    response = client.raw.post(
        "/records/00000000-0000-0000-0000-000000000000/approve", headers=client.tenant.headers
    )
    error(response, 404, "not_found")


def test_mcp_transport_errors_are_json(client: Client) -> None:
    """`/mcp` without a JSON body is the one shape; a malformed JSON-RPC message inside a valid
    exchange is a JSON-RPC error."""
    headers = {**client.tenant.headers, "Accept": "application/json, text/event-stream"}
    error(client.raw.post("/mcp", data=b"{}", headers=headers), 415, "unsupported_media_type")
    error(client.raw.post("/mcp", data=b"{}", headers={**headers, "Content-Type": "text/plain"}), 415)
    broken = client.raw.post("/mcp", data=b"{bad", headers={**headers, "Content-Type": "application/json"})
    assert broken.mimetype == "application/json"
    assert broken.get_json()["error"]["code"] == -32700
    error(client.raw.get("/mcp", headers=headers), 405, "method_not_allowed")


def test_health_with_the_database_unreachable_is_503_backend_unavailable(runtime: Runtime) -> None:
    """Issue 45: "a frozen or partitioned database gives `503 backend_unavailable` within a bound
    you document (≤ the search timeout, ≤ 2 s for `/health`)" and "every error body in the one
    shape": the health report's 503 carries the one shape's `error` beside what it reports."""
    dead = create_db_engine(Settings(database_url="postgresql://memseek@127.0.0.1:9/nothing"))
    response = app_for(replace(runtime, engine=dead)).test_client().get("/health")
    assert response.status_code == 503
    body = response.get_json()
    assert body["database"] == "unreachable" and body["catalog_hash"] == runtime.catalog.hash
    assert_error_shape({"error": body["error"]}, "backend_unavailable")
    assert response.headers["Retry-After"] == "1"


def test_a_body_declared_past_max_request_bytes_is_refused_before_it_is_sent(runtime: Runtime) -> None:
    """Issue 45: "Parsers that stop at their limits before descending (... content)": a request
    declaring a body past `MAX_REQUEST_BYTES` is answered `413` in the one shape at once, from
    its headers, without the server first reading (and buffering) the whole body."""
    app = create_app(shared=with_settings(runtime, max_request_bytes=1000), threads=8)
    with serving(app) as url:
        host, port = url.removeprefix("http://").split(":")
        with socket.create_connection((host, int(port)), timeout=3) as sock:
            sock.sendall(
                b"POST /search HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                b"Content-Length: 10000000\r\n\r\n{"
            )
            got, headers, body = response_parts(sock.recv(65536))
    assert got == 413, body
    assert headers["content-type"] == "application/json"
    assert_error_shape(json.loads(body), "payload_too_large")
    assert json.loads(body)["error"]["message"] == "request body is larger than 1000 bytes"
