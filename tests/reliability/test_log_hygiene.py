"""Issue 45: under load and outages the log gets one line per condition per interval, never one
per request, and an expected outage (the database unreachable) is logged without a traceback."""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterator
from dataclasses import replace
from typing import Any

import anyio
import pytest
from mcp import Client as McpClient

from memseek.api.mcp import build_server
from memseek.db import create_db_engine
from memseek.logs import Throttle
from memseek.runtime import Runtime
from memseek.search_state import SearchState
from memseek.server import MemseekServer
from memseek.write.worker import BackgroundWorker
from tests.conftest import Client
from tests.conftest import Tenant
from tests.conftest import client_for
from tests.helpers import error
from tests.mcp.support import tool_error

UNREACHABLE = "postgresql+psycopg://memseek@127.0.0.1:1/nowhere"
"""Nothing listens on port 1: every connection attempt is refused at once."""


def test_a_throttle_admits_one_line_per_interval_and_counts_the_rest() -> None:
    throttle = Throttle(interval=60.0)
    assert throttle.admit("db") == 0
    assert [throttle.admit("db") for _ in range(99)] == [None] * 99
    assert throttle.admit("other") == 0  # conditions are throttled apart
    throttle._last["db"] -= 61.0  # the interval passed
    assert throttle.admit("db") == 99


@pytest.fixture
def unreachable(runtime: Runtime) -> Iterator[Runtime]:
    """The session runtime with an engine whose database refuses every connection (its searches'
    too: they run on the search state's engine)."""
    engine = create_db_engine(runtime.settings, UNREACHABLE)
    search = SearchState(engine, runtime.search.pgvector)
    try:
        yield replace(runtime, engine=engine, search=search)
    finally:
        search.close()


def test_a_database_outage_is_503_and_one_line_without_traceback(
    unreachable: Runtime, tenant: Tenant, caplog: pytest.LogCaptureFixture
) -> None:
    client: Client = client_for(unreachable, tenant)
    with caplog.at_level(logging.INFO):
        for _ in range(20):
            response = client.post("/search", json={"mode": "recent"})
            err = error(response, 503, "backend_unavailable")
            assert response.headers["Retry-After"] == "1"
            # says what to do; no "(request id -)": the throttled log line names no request
            assert err["message"] == "the database is unavailable; retry after the Retry-After seconds"
    logged = [r for r in caplog.records if r.levelno >= logging.WARNING]
    assert len(logged) <= 1 and all(r.exc_info is None for r in logged), [r.getMessage() for r in logged]


def test_a_worker_facing_an_outage_logs_no_traceback(
    unreachable: Runtime, caplog: pytest.LogCaptureFixture
) -> None:
    worker = BackgroundWorker(unreachable, idle_seconds=0.05)
    with caplog.at_level(logging.INFO):
        thread = threading.Thread(target=worker.run)
        thread.start()
        threading.Event().wait(1.0)
        worker.stop()
        thread.join(10)
    logged = [r for r in caplog.records if r.levelno >= logging.WARNING]
    assert all(r.exc_info is None for r in logged), [r.getMessage() for r in logged]
    assert len(logged) <= 2, [r.getMessage() for r in logged]  # LISTEN, and the batches


def test_an_mcp_tool_call_facing_an_outage_is_backend_unavailable_without_traceback(
    unreachable: Runtime, tenant: Tenant, caplog: pytest.LogCaptureFixture
) -> None:
    """A tool call reaches the database on its own (stdio has no request before it; over HTTP the
    database may stop between authentication and the call): the agent reads the route's 503 body
    in an `isError` result, and the operator one line without a traceback."""
    client = McpClient(build_server(unreachable, lambda _ctx: tenant.id))

    async def calls() -> list[Any]:
        async with client:
            arguments = {"entity": "e", "task": "t"}
            return [await client.call_tool("customer_context", arguments) for _ in range(5)]

    with caplog.at_level(logging.INFO):
        results = anyio.run(calls)
    assert [tool_error(result)["code"] for result in results] == ["backend_unavailable"] * 5
    logged = [r for r in caplog.records if r.levelno >= logging.WARNING]
    assert len(logged) <= 1 and all(r.exc_info is None for r in logged), [r.getMessage() for r in logged]


def test_the_http_servers_own_warnings_are_one_line_per_interval(
    server: MemseekServer, caplog: pytest.LogCaptureFixture
) -> None:
    """Issue 45: "one line per condition per interval, not per request" — waitress's own warning
    too, which it writes each time its open connections reach the limit again (a client holding
    that many flips it with every connection it closes and opens)."""
    waitress = logging.getLogger("waitress")
    message = "total open connections reached the connection limit, no longer accepting new connections"
    with caplog.at_level(logging.WARNING, logger="waitress"):
        for _ in range(10):
            waitress.warning(message)
    assert [r.getMessage() for r in caplog.records if r.name == "waitress"] == [message]
