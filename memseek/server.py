"""`memseek serve`'s HTTP server: waitress, with fair dispatching, the one error shape and `/health`
answered without a request thread.

What waitress does around the app is changed through the classes it builds its servers from
(`TcpWSGIServer.add_task`, `HTTPChannel.task_class` and `error_task_class`):

* requests are queued per workspace and the request threads take them round-robin
  (`memseek.api.admission.FairDispatcher`); a write that waits for processing (`POST /records` or
  `POST /writes/{name}` with `?wait=true`) has threads of its own, so waiting for processing
  never holds a request thread; a request past its workspace's bounds is answered `429` with
  `Retry-After` by the I/O loop itself, before it takes a thread;
* `GET /health` is answered by the I/O loop itself from the health probe's latest result, which
  a thread of the server keeps fresh (`memseek.api.health`): it waits for no request thread and
  no database;
* the requests waitress refuses itself (a malformed request line, headers over its limit, a bad
  Content-Length) are answered in the one JSON error shape instead of plain text, by the I/O
  loop too.
"""

from __future__ import annotations

import gc
import logging
import resource
import socket
import threading
import time
from collections import deque
from collections.abc import Hashable
from typing import Any

from waitress.adjustments import Adjustments
from waitress.channel import HTTPChannel
from waitress.server import TcpWSGIServer
from waitress.task import ErrorTask
from waitress.task import Task
from waitress.task import WSGITask
from waitress.wasyncore import close_all

from memseek.api import health
from memseek.api.admission import QUEUED_MS
from memseek.api.admission import WAIT_LANE
from memseek.api.admission import Bounds
from memseek.api.admission import FairDispatcher
from memseek.api.admission import Shares
from memseek.errors import BackendUnavailable
from memseek.errors import TooManyRequests
from memseek.errors import error_body
from memseek.jsontext import json_answer
from memseek.logs import ThrottledWarnings
from memseek.logs import log_throttled

log = logging.getLogger("memseek.server")
WAITRESS_WARNINGS = ThrottledWarnings()
"""Installed on waitress's logger by `make_server`: its warnings once a minute each, not per flip
of the condition (open connections at the limit flip it with each connection closed and opened)."""

HEALTH = ("GET", "/health")
WAIT_VALUES = frozenset({"true", "1"})
"""`?wait=` values that make a write wait for processing (`memseek.api.records.WAIT_PATTERN`)."""
LINGER_CLOSE = 2.0
"""Seconds a closing connection keeps reading what the client still sends (`MemseekChannel`)."""
SWEEP_EVERY = 0.1
"""Seconds between two looks for queued requests that waited past their bound."""
WAITRESS_CODES = {
    400: "bad_request",
    413: "payload_too_large",
    431: "request_header_fields_too_large",
    500: "internal_error",
    501: "not_implemented",
}
"""The error codes of the statuses waitress answers itself."""
CONNECTIONS = 1000
"""Open connections the server accepts at most (`connection_limit`)."""
MIN_CONNECTIONS = 100
"""waitress's own default, kept where the process may open few descriptors."""


class OneWrite(Task):  # type: ignore[misc]
    """A task whose response headers go out with the first part of its body, in one send: the
    client then reads the whole of a small answer at once, instead of the headers first and the
    body after another wake-up of both ends."""

    def write(self, data: bytes) -> None:
        # a file the app sends (`wsgi.file_wrapper`) is handed to waitress as it is
        if self.wrote_header or not data or not isinstance(data, bytes):  # type: ignore[has-type]
            super().write(data)
            return
        header = self.build_response_header()
        self.wrote_header = True
        room = None if self.content_length is None else self.content_length - self.content_bytes_written
        if self.chunked_response or not self.has_body or room is None or len(data) > room:
            self.channel.write_soon(header)
            super().write(data)
            return
        self.content_bytes_written += len(data)
        self.channel.write_soon(header + data)


class JsonTask(OneWrite):
    """An answer the I/O loop writes itself: a status and a JSON body."""

    complete = True

    def answer(self, status: str, body: dict[str, Any], *headers: tuple[str, str]) -> None:
        data = json_answer(body)
        self.status = status
        self.response_headers += [("Content-Type", "application/json"), *headers]
        self.content_length = len(data)
        self.write(data)


class JsonErrorTask(JsonTask, ErrorTask):  # type: ignore[misc]
    """A request waitress refused, answered in the one JSON error shape; the connection closes
    (what follows the bad request on it cannot be read reliably)."""

    def execute(self) -> None:
        error = self.request.error
        code = WAITRESS_CODES.get(error.code, "bad_request")
        message = f"{error.reason}: {error.body}" if error.body else error.reason
        if error.code == 413:  # in the app's words: its limit, not waitress's (`body_limit`)
            message = f"request body is larger than {self.channel.server.request_bytes} bytes"
        self.set_close_on_finish()
        self.answer(f"{error.code} {error.reason}", error_body(code, message))


class HealthTask(JsonTask):
    """`GET /health` from the probe's latest result (`memseek.api.health.answer`)."""

    def execute(self) -> None:
        status, body = health.answer(self.channel.server.flask, wait=False)
        if status == 200:
            self.answer("200 OK", body)
        else:
            self.answer("503 Service Unavailable", body, ("Retry-After", str(BackendUnavailable.retry_after)))


class RefusedTask(JsonTask):
    """A request past its workspace's bounds (`memseek.api.admission`): `429`, the connection kept."""

    def execute(self) -> None:
        refused = TooManyRequests(
            "this workspace has too many requests waiting for a thread; retry after the Retry-After seconds"
        )
        retry = ("Retry-After", str(refused.retry_after))
        self.answer("429 Too Many Requests", error_body(refused.code, refused.message), retry)


class AppTask(OneWrite, WSGITask):  # type: ignore[misc]
    """A request the app answers on a request thread, where it may not wait for processing."""

    wait_lane = False

    def get_environment(self) -> dict[str, Any]:
        environ: dict[str, Any] = super().get_environment()
        environ[WAIT_LANE] = self.wait_lane
        environ[QUEUED_MS] = (time.monotonic() - self.request.queued_at) * 1000
        return environ


class WaitTask(AppTask):
    """A request the app answers on a wait thread, where it may wait for processing."""

    wait_lane = True


def task_for(channel: HTTPChannel, request: Any) -> Task:
    """The task that answers `request`: the one the server chose (`MemseekServer.add_task`),
    else the app's on a request thread."""
    kind = getattr(request, "answer_with", None) or AppTask
    return kind(channel, request)


def _asks_to_wait(request: Any) -> bool:
    """Whether `request` is a write that asks to wait for processing: `POST /records?wait=true`
    or `POST /writes/{name}?wait=true`, which waits as `POST /records` does (the app validates
    the query itself)."""
    return (
        request.command == "POST"
        and (request.path == "/records" or request.path.startswith("/writes/"))
        and any(
            part.partition("=")[2].lower() in WAIT_VALUES
            for part in request.query.split("&")
            if part.startswith("wait=")
        )
    )


class MemseekChannel(HTTPChannel):  # type: ignore[misc]
    """A connection whose requests are answered by `task_for`, refused ones by `JsonErrorTask`,
    and which closes lingering (`handle_close`)."""

    task_class = staticmethod(task_for)
    error_task_class = JsonErrorTask
    closing_until: float | None = None
    """While the connection lingers: when it closes whatever the client still sends."""

    def handle_close(self) -> None:
        """Close after the answer's last byte, lingering: the sending side is shut first and
        what the client still sends (the rest of a request refused before it was all read) is
        read and dropped until it closes its side or `LINGER_CLOSE` passes. Closing at once with
        unread input would reset the connection and could destroy the answer before the client
        read it."""
        if self.closing_until is not None or not self.connected:
            super().handle_close()
            return
        try:
            self.socket.shutdown(socket.SHUT_WR)
        except OSError:
            super().handle_close()
            return
        self.closing_until = time.monotonic() + LINGER_CLOSE

    def readable(self) -> bool:
        if self.closing_until is None:
            return bool(super().readable())
        if time.monotonic() > self.closing_until:
            super().handle_close()
            return False
        return True

    def writable(self) -> bool:
        return self.closing_until is None and bool(super().writable())

    def handle_read(self) -> None:
        if self.closing_until is None:
            super().handle_read()
        else:  # dropped; the client's end of input closes the connection (`recv`)
            self.recv(self.adj.recv_bytes)


class MemseekServer(TcpWSGIServer):  # type: ignore[misc]
    """The TCP server: `MemseekChannel` connections, requests dispatched fairly per workspace,
    answers that need no thread given by the I/O loop."""

    channel_class = MemseekChannel

    def __init__(self, app: Any, sock: socket.socket, adj: Adjustments, shares: Shares) -> None:
        self.requests = FairDispatcher(adj.threads, shares.requests, "memseek-request")
        waits = Bounds(shares.requests.queued, shares.requests.max_wait, shares.waits_per_workspace)
        self.waits = FairDispatcher(shares.waits_total, waits, "memseek-wait")
        self.flask = app  # `application` may be a middleware around it
        self.request_bytes: int = app.extensions["memseek"].settings.max_request_bytes
        self._loop_answers: deque[HTTPChannel] = deque()
        self._answering: int | None = None  # the I/O loop's thread id while it answers
        self._swept = 0.0
        self._interrupted = False
        self._health_stop = app.extensions["memseek_health"].keep_fresh()
        # the socket is bound already (`memseek.serving.bind`), as waitress takes `sockets=[…]`
        sockinfo = (sock.family, sock.type, sock.proto, sock.getsockname())
        super().__init__(
            app, map={}, _sock=sock, dispatcher=self.requests, adj=adj, sockinfo=sockinfo, bind_socket=False
        )

    def add_task(self, channel: HTTPChannel) -> None:
        """Dispatch a connection's next request: health checks (without a query string) and
        refusals to the I/O loop, the rest to its workspace's queue (a wait for processing to the
        wait threads)."""
        request: Any = channel.requests[0] if channel.requests else None
        if request is None or request.error:
            self.answer_now(channel)
        elif (request.command, request.path) == HEALTH and not request.query:
            # with a query string the app answers: it refuses any parameter, as on every route
            self.answer_now(channel, HealthTask)
        elif not self._queue(request, channel):
            log_throttled(log, logging.WARNING, "queue-full", "a workspace's queue is full: answering 429")
            self.answer_now(channel, RefusedTask)

    def _queue(self, request: Any, channel: HTTPChannel) -> bool:
        """Queue `request` in its workspace's turn; False when its queue is full. The moment is
        kept: the app reports how long the request waited for a thread (`Server-Timing: queue`)."""
        request.queued_at = time.monotonic()
        return self._lane(request).submit(self._key(request), channel)

    def _lane(self, request: Any) -> FairDispatcher:
        """The wait threads for a write that asks to wait (it then runs as a `WaitTask`, queued
        in its workspace's turn like any request), else the request threads."""
        if not _asks_to_wait(request):
            return self.requests
        request.answer_with = WaitTask
        return self.waits

    def _key(self, request: Any) -> Hashable:
        """The queue of `request`: its API key's (`memseek.api.admission`); one for all requests
        without a key."""
        key: Hashable = request.headers.get("AUTHORIZATION", "")
        return key

    def answer_now(self, channel: HTTPChannel, kind: type[Task] | None = None) -> None:
        """Have the I/O loop answer `channel`'s next request with `kind` (None: the error task
        of a request waitress refused). The loop runs it once the caller (which may hold the
        channel's locks) returns."""
        if kind is not None:
            channel.requests[0].answer_with = kind
        self._loop_answers.append(channel)
        if self._answering != threading.get_ident():  # else the running `_answer_all` takes it
            self.trigger.pull_trigger(self._answer_all)

    def _answer_all(self) -> None:
        self._answering = threading.get_ident()
        try:
            while self._loop_answers:
                self._loop_answers.popleft().service()
        except KeyboardInterrupt:
            # waitress's trigger would swallow it (it logs whatever a thunk raises): raised
            # again by the loop's next look at the server (`readable`), so Ctrl-C still stops it
            self._interrupted = True
        finally:
            self._answering = None

    def interrupt(self) -> None:
        """Stop as Ctrl-C does, from a signal handler (`memseek serve`'s SIGTERM): the loop, woken,
        raises KeyboardInterrupt at its next look at the server and closes everything."""
        self._interrupted = True
        self.trigger.pull_trigger()

    def run(self) -> None:
        """Serve until interrupted. What start-up built (modules, the catalog, the app) is
        frozen out of the cyclic garbage collector first: a full collection would otherwise walk
        all of it again, holding every thread, the I/O loop's included, for as long."""
        gc.freeze()
        super().run()

    def readable(self) -> bool:
        """Also, from the I/O loop: refuse the queued requests that waited past their bound."""
        if self._interrupted:
            raise KeyboardInterrupt
        now = time.monotonic()
        if now - self._swept >= SWEEP_EVERY:
            self._swept = now
            for channel in self.requests.take_expired() + self.waits.take_expired():
                self.answer_now(channel, RefusedTask)
        return bool(super().readable())

    def close(self) -> None:
        super().close()
        self._health_stop.set()
        self.requests.shutdown()
        self.waits.shutdown()

    def stop(self) -> None:
        """End `run()` from another thread, as Ctrl-C ends `memseek serve`: the running requests
        finish first (up to 5 s; queued ones are dropped) while the loop still sends their
        answers. Then the loop's own thread closes the listener, every connection and the
        trigger, so `run()` returns; closing them from another thread would pull a descriptor
        from under the loop's `poll` (EBADF), and the trigger alone would keep the loop running.
        A request thread still running then would pull the closed trigger as its task ends
        (EBADF again, or a write into whatever descriptor took its number). `close()` once `run()`
        has returned."""
        self.requests.shutdown()
        self.waits.shutdown()
        self.trigger.pull_trigger(lambda: close_all(self._map))


def connection_limit() -> int:
    """Connections the server keeps open at once: `CONNECTIONS`, within half the process's
    descriptors (the rest are the database's, the models' and the logs'). At its limit waitress
    stops accepting, `/health` included, so waitress's default of 100 would let one client's
    keep-alive pool or slow requests shut every other client out."""
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft == resource.RLIM_INFINITY:
        return CONNECTIONS
    return max(MIN_CONNECTIONS, min(CONNECTIONS, soft // 2))


def body_limit(max_request_bytes: int) -> int:
    """waitress's `max_request_body_size` for the app's `MAX_REQUEST_BYTES`: a body declared (or
    received) past it is refused `413` from its headers, before it is read and buffered. waitress
    refuses a body of its limit exactly, and counts a chunked body's framing: the limit is set a
    sixty-fourth above the app's, which checks the exact size of what gets through."""
    return max_request_bytes + max_request_bytes // 64 + 1


def make_server(app: Any, sock: socket.socket, threads: int) -> MemseekServer:
    """The server for `app` (built by `memseek.app.create_app` for as many `threads`) on the bound
    socket `sock` (`memseek.serving.bind`), not yet running; `run()` serves until interrupted,
    `close()` stops it."""
    # No proxy-header rewriting: the app reads no X-Forwarded-* header, so waitress's middleware
    # that strips them would only cost every request its time.
    logging.getLogger("waitress").addFilter(WAITRESS_WARNINGS)  # once, however many servers
    adj = Adjustments(
        threads=threads,
        ident="memseek",
        clear_untrusted_proxy_headers=False,
        connection_limit=connection_limit(),
        max_request_body_size=body_limit(app.extensions["memseek"].settings.max_request_bytes),
        asyncore_use_poll=True,  # select() cannot watch a descriptor numbered past 1023
    )
    return MemseekServer(app, sock, adj, app.extensions["memseek_admission"].shares)
