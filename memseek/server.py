"""`memseek serve`'s HTTP server: waitress, with the one error shape and a lane for `/health`.

Two things waitress does before the app runs are changed, through the classes waitress builds
its servers from (`TcpWSGIServer.channel_class`, `HTTPChannel.error_task_class`):

* the requests waitress refuses itself (a malformed request line, headers over its limit, a bad
  Content-Length) are answered in the one JSON error shape instead of plain text;
* `GET /health` is served by threads of its own, so it answers while every request thread is
  busy (a flood of slow searches or waits cannot delay it).

Waitress's "Task queue depth" warning, logged per queued request under load, is let through
once per interval (`memseek.logs.ThrottleFilter`).
"""

from __future__ import annotations

import json
import logging
import socket
from typing import Any

from waitress.adjustments import Adjustments
from waitress.channel import HTTPChannel
from waitress.server import TcpWSGIServer
from waitress.task import ErrorTask
from waitress.task import ThreadedTaskDispatcher
from waitress.wasyncore import close_all

from memseek.errors import error_body
from memseek.logs import ThrottleFilter

HEALTH = ("GET", "/health")
HEALTH_THREADS = 2
"""Threads that serve `GET /health` alone."""
WAITRESS_CODES = {
    400: "bad_request",
    413: "payload_too_large",
    431: "request_header_fields_too_large",
    500: "internal_error",
    501: "not_implemented",
}
"""The error codes of the statuses waitress answers itself."""


class JsonErrorTask(ErrorTask):  # type: ignore[misc]
    """A request waitress refused, answered in the one JSON error shape."""

    def execute(self) -> None:
        error = self.request.error
        code = WAITRESS_CODES.get(error.code, "bad_request")
        message = f"{error.reason}: {error.body}" if error.body else error.reason
        body = json.dumps(error_body(code, message)).encode()
        self.status = f"{error.code} {error.reason}"
        self.response_headers.append(("Content-Type", "application/json"))
        self.set_close_on_finish()
        self.content_length = len(body)
        self.write(body)


class MemseekChannel(HTTPChannel):  # type: ignore[misc]
    """A connection whose refused requests are answered by `JsonErrorTask`."""

    error_task_class = JsonErrorTask


class MemseekServer(TcpWSGIServer):  # type: ignore[misc]
    """The TCP server: `MemseekChannel` connections, `GET /health` on its own dispatcher."""

    channel_class = MemseekChannel

    def __init__(
        self, app: Any, sock: socket.socket, adj: Adjustments, health: ThreadedTaskDispatcher
    ) -> None:
        dispatcher = ThreadedTaskDispatcher()
        dispatcher.set_thread_count(adj.threads)
        self.health_dispatcher = health
        # the socket is bound already (`memseek.serving.bind`), as waitress takes `sockets=[…]`
        sockinfo = (sock.family, sock.type, sock.proto, sock.getsockname())
        super().__init__(
            app, map={}, _sock=sock, dispatcher=dispatcher, adj=adj, sockinfo=sockinfo, bind_socket=False
        )

    def add_task(self, task: Any) -> None:
        """Queue a connection's next request: a health check on the health threads."""
        request: Any = task.requests[0] if task.requests else None
        if request is not None and not request.error and (request.command, request.path) == HEALTH:
            self.health_dispatcher.add_task(task)
        else:
            super().add_task(task)

    def close(self) -> None:
        super().close()
        self.task_dispatcher.shutdown()
        self.health_dispatcher.shutdown()

    def stop(self) -> None:
        """End `run()` from another thread. The loop's own thread closes the listener, every
        connection and the trigger, so `run()` returns; closing them from another thread would
        pull a descriptor from under the loop's `select` (EBADF), and the trigger alone would
        keep the loop running. `close()` once `run()` has returned."""
        self.trigger.pull_trigger(lambda: close_all(self._map))


_QUEUE_DEPTH = ThrottleFilter()
"""One filter for the process: adding the same one again (another server) changes nothing."""


def make_server(app: Any, sock: socket.socket, threads: int) -> MemseekServer:
    """The server for `app` on the bound socket `sock` (`memseek.serving.bind`), not yet running;
    `run()` serves until interrupted, `close()` stops it."""
    logging.getLogger("waitress.queue").addFilter(_QUEUE_DEPTH)
    health = ThreadedTaskDispatcher()
    health.set_thread_count(HEALTH_THREADS)
    adj = Adjustments(threads=threads, ident="memseek")
    return MemseekServer(app, sock, adj, health)
