"""A small HTTP client for the service: one keep-alive connection per thread, timings per call.

Each response carries the client-side wall time and, when the route sends a `Server-Timing`
header, the server's own figures (`server_ms` is its `total` metric, else the largest `dur`).
"""

from __future__ import annotations

import http.client
import json
import re
import threading
import time
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

_TIMING = re.compile(r"([A-Za-z0-9_.\-]+)[^,]*?;\s*dur=([0-9.]+)")


def parse_server_timing(header: str | None) -> dict[str, float]:
    """Metric name → milliseconds from a `Server-Timing` header (empty when absent)."""
    return {name: float(dur) for name, dur in _TIMING.findall(header or "")}


@dataclass(frozen=True, slots=True)
class Response:
    """One answered request."""

    status: int
    body: Any
    client_ms: float
    timing: dict[str, float]

    def ok(self) -> bool:
        return 200 <= self.status < 300

    @property
    def server_ms(self) -> float | None:
        """The server's `total` metric (else its largest); None when the route sends no header."""
        if not self.timing:
            return None
        return self.timing.get("total", max(self.timing.values()))


class Client:
    """JSON over HTTP/1.1 to one Memseek, authenticated with one workspace key."""

    def __init__(self, base_url: str, key: str, timeout: float = 120.0) -> None:
        parts = urlsplit(base_url)
        self.host = parts.hostname or "127.0.0.1"
        self.port = parts.port or 80
        self.key = key
        self.timeout = timeout
        self._local = threading.local()

    def _connection(self) -> http.client.HTTPConnection:
        conn = getattr(self._local, "conn", None)
        if conn is None:
            conn = self._local.conn = http.client.HTTPConnection(self.host, self.port, timeout=self.timeout)
        return conn

    def request(
        self, method: str, path: str, body: Any = None, content_type: str = "application/json"
    ) -> Response:
        """Send one request; `body` is a JSON-able value or pre-encoded bytes."""
        payload = body if isinstance(body, bytes | None) else json.dumps(body).encode()
        headers = {"Authorization": f"Bearer {self.key}", "Content-Type": content_type}
        for attempt in range(2):  # a keep-alive connection the server closed is reopened once
            conn = self._connection()
            started = time.perf_counter()
            try:
                conn.request(method, path, body=payload, headers=headers)
                raw = conn.getresponse()
                data = raw.read()
            except (http.client.HTTPException, ConnectionError):
                conn.close()
                self._local.conn = None
                if attempt:
                    raise
                continue
            elapsed = (time.perf_counter() - started) * 1000
            parsed = (
                json.loads(data)
                if data and raw.getheader("Content-Type", "").startswith("application/json")
                else data.decode(errors="replace")
            )
            return Response(raw.status, parsed, elapsed, parse_server_timing(raw.getheader("Server-Timing")))
        raise AssertionError("unreachable")

    def post(self, path: str, body: Any) -> Response:
        return self.request("POST", path, body)

    def get(self, path: str) -> Response:
        return self.request("GET", path)

    def ping(self) -> bool:
        """Whether `GET /health` answers 200 (no key needed)."""
        try:
            return self.get("/health").status == 200
        except OSError:
            self._local.conn = None
            return False


class RouteMissing(RuntimeError):
    """The service has no such route yet (404 with the generic not-found body)."""


def check(response: Response, what: str) -> Any:
    """The body of a successful response; otherwise raise with the status and the error body."""
    if response.ok():
        return response.body
    if response.status in (404, 405) and _generic_not_found(response.body):
        raise RouteMissing(f"{what}: the route does not exist yet ({response.status})")
    raise RuntimeError(f"{what}: HTTP {response.status}: {json.dumps(response.body)[:2000]}")


def _generic_not_found(body: Any) -> bool:
    """Flask's own 404/405 for an unknown URL, as opposed to a route answering 'no such record'."""
    if not isinstance(body, dict):
        return True
    message = str(body.get("error", {}).get("message", ""))
    return "requested URL was not found" in message or "method is not allowed" in message
