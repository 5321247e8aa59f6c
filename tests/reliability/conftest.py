"""Fixtures of the reliability suite: the production app served by `memseek serve`'s own server
(`memseek.server.make_server`: waitress with the JSON error tasks and the `/health` lane) in a
thread, on a port the OS chose, over the session runtime or one of the test's."""

from __future__ import annotations

import socket
from collections.abc import Iterator

import pytest

from memseek.app import create_app
from memseek.runtime import Runtime
from memseek.server import MemseekServer
from tests.service import served
from tests.service import url_of


@pytest.fixture(scope="module")
def server(runtime: Runtime) -> Iterator[MemseekServer]:
    """The session runtime's app, served by `memseek serve`'s server with its 8 threads."""
    with served(create_app(shared=runtime, threads=8)) as running:
        yield running


@pytest.fixture(scope="module")
def service(server: MemseekServer) -> str:
    """The base URL of `server`."""
    return url_of(server)


def raw_exchange(url: str, data: bytes, timeout: float = 10.0) -> bytes:
    """Send `data` as is on a new connection to the service at `url`; everything it answers
    before closing (the writing side is shut first, so a refusal mid-request still arrives)."""
    host, port = url.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=timeout) as sock:
        sock.sendall(data)
        sock.shutdown(socket.SHUT_WR)
        chunks = []
        while True:
            try:
                chunk = sock.recv(65536)
            except (TimeoutError, ConnectionResetError):
                break
            if not chunk:
                break
            chunks.append(chunk)
    return b"".join(chunks)
