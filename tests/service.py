"""A real Memseek service on a real port, over the session database, and SDK clients of it: the
fixtures of every test that talks to the service as a client does (the SDK's, the adapters').

The service is the production WSGI app (`create_app`) over the session runtime (the reference
catalog, the packaged local embedding model), served by `memseek serve`'s own server
(`memseek.server.make_server`) in a thread on a port the OS chose, with the background worker
`memseek serve` runs, so `wait=True` writes come back processed. No HTTP is mocked: clients
talk to the service through sockets.

A test package uses them by importing them into its `conftest.py`.
"""

from __future__ import annotations

import threading
from collections.abc import AsyncIterator
from collections.abc import Iterator
from contextlib import contextmanager

import pytest
from flask import Flask

from memseek.app import create_app
from memseek.client import AsyncMemseek
from memseek.client import Memseek
from memseek.runtime import Runtime
from memseek.server import MemseekServer
from memseek.server import make_server
from memseek.serving import bind
from memseek.write.worker import BackgroundWorker
from tests.conftest import Tenant


@contextmanager
def served(app: Flask, threads: int = 8) -> Iterator[MemseekServer]:
    """`app` served on 127.0.0.1 by `memseek serve`'s server with `threads` request threads (the
    app must be built for as many: `create_app(threads=…)`); yields the running server."""
    server = make_server(app, bind("127.0.0.1", 0), threads)
    thread = threading.Thread(target=server.run, name="test-service", daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.stop()
        # stop() lets the running requests end, then the loop closes every connection itself;
        # closing from here meanwhile would race with it
        thread.join(60)
        assert not thread.is_alive(), "the server's loop did not stop within 60 s"
        server.close()


def url_of(server: MemseekServer) -> str:
    return f"http://127.0.0.1:{server.effective_port}"


@contextmanager
def serving(app: Flask, threads: int = 8) -> Iterator[str]:
    """`served`, yielding the server's base URL."""
    with served(app, threads) as server:
        yield url_of(server)


@pytest.fixture(scope="module")
def service(runtime: Runtime) -> Iterator[str]:
    """The base URL of a running service (and its worker) for this module's tests."""
    with serving(create_app(shared=runtime, threads=8)) as url:
        worker = BackgroundWorker(runtime).start()
        try:
            yield url
        finally:
            worker.stop()


@pytest.fixture
def m(service: str, tenant: Tenant, runtime: Runtime) -> Iterator[Memseek]:
    """A sync client of the service for the `tenant` workspace; its reads' touches are written
    before the tenant tables are emptied."""
    with Memseek(service, tenant.key, retries=0) as client:
        yield client
    runtime.touches.flush(timeout=30)


@pytest.fixture
async def am(service: str, tenant: Tenant, runtime: Runtime) -> AsyncIterator[AsyncMemseek]:
    """The async client of the same service and workspace, retrying a `429` after `Retry-After`
    as any SDK client does (a workspace's queue is bounded: docs/reliability.md)."""
    async with AsyncMemseek(service, tenant.key, retries=3) as client:
        yield client
    runtime.touches.flush(timeout=30)


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"
