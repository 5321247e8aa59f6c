"""A real HTTP server in front of the real service that answers `503` a given number of times,
then forwards every request: what a client sees while a service restarts or a backend recovers.
With `lose_replies`, a failed request is forwarded first and only its reply is lost: the write
happened, the client cannot know it.
"""

from __future__ import annotations

import http.client
import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler
from http.server import ThreadingHTTPServer
from urllib.parse import urlsplit

UNAVAILABLE = {"error": {"code": "backend_unavailable", "message": "restarting", "details": []}}
TOO_MANY = {"error": {"code": "too_many_requests", "message": "over the workspace's share", "details": []}}
REFUSALS = {503: UNAVAILABLE, 429: TOO_MANY}
"""The bodies of the statuses a `FlakyProxy` fails with, as the service words them."""


class FlakyProxy(ThreadingHTTPServer):
    """Counts every request (`seen`: method and path); the first `failures` get `status` (a 503,
    or a 429: refused before reaching the service)."""

    daemon_threads = True

    def __init__(
        self,
        upstream: str,
        failures: int,
        lose_replies: bool = False,
        retry_after: str = "",
        status: int = 503,
    ) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.upstream = urlsplit(upstream)
        self.failures = failures
        self.lose_replies = lose_replies
        self.retry_after = retry_after
        self.status = status
        self.seen: list[tuple[str, str]] = []
        self.lock = threading.Lock()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"

    def fails_next(self, method: str, path: str) -> bool:
        with self.lock:
            self.seen.append((method, path))
            self.failures -= 1
            return self.failures >= 0


class _Handler(BaseHTTPRequestHandler):
    server: FlakyProxy

    def do_GET(self) -> None:
        self._handle()

    def do_POST(self) -> None:
        self._handle()

    def _handle(self) -> None:
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        fails = self.server.fails_next(self.command, self.path)
        if not fails or self.server.lose_replies:
            status, content_type, content = self._forward(body)
        if fails:
            status = self.server.status
            content_type, content = "application/json", json.dumps(REFUSALS[status]).encode()
        self._answer(status, content_type, content, self.server.retry_after if fails else "")

    def _forward(self, body: bytes) -> tuple[int, str, bytes]:
        upstream = self.server.upstream
        connection = http.client.HTTPConnection(upstream.netloc, timeout=60)
        headers = {k: v for k, v in self.headers.items() if k.lower() not in ("host", "connection")}
        connection.request(self.command, self.path, body=body or None, headers=headers)
        response = connection.getresponse()
        try:
            return response.status, response.getheader("Content-Type", ""), response.read()
        finally:
            connection.close()

    def _answer(self, status: int, content_type: str, body: bytes, retry_after: str = "") -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        if retry_after:
            self.send_header("Retry-After", retry_after)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:  # keep the test output quiet
        pass


@contextmanager
def flaky(
    upstream: str, failures: int, lose_replies: bool = False, retry_after: str = "", status: int = 503
) -> Iterator[FlakyProxy]:
    """A running `FlakyProxy` in front of `upstream` (a base URL); its refusals (`status`) carry
    `retry_after` as `Retry-After` when given."""
    proxy = FlakyProxy(upstream, failures, lose_replies, retry_after, status)
    thread = threading.Thread(target=proxy.serve_forever, name="flaky-proxy", daemon=True)
    thread.start()
    try:
        yield proxy
    finally:
        proxy.shutdown()
        proxy.server_close()
        thread.join(10)
