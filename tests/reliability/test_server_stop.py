"""`MemseekServer.stop()` (how the suites stop the servers they run in a thread) stops as
`memseek serve` does (docs/operations.md: "requests already running get up to 5 s to finish"):
the request threads finish what they run before the loop closes the connections and its trigger.
Closing first raced with them: a request thread ending its task pulled the trigger the loop had
just closed (`OSError: [Errno 9] Bad file descriptor`, seen in the fairness tests' teardown) —
or, had the number been reused meanwhile, wrote into another descriptor."""

from __future__ import annotations

import logging
import threading
import time

import httpx
import pytest
from sqlalchemy.engine import Engine

from memseek.app import create_app
from memseek.runtime import Runtime
from memseek.server import make_server
from memseek.serving import bind
from tests.conftest import Tenant
from tests.reliability.test_fairness import Searches
from tests.reliability.test_fairness import records_locked
from tests.reliability.test_fairness import waiting_on_lock


def test_stop_lets_a_running_request_finish_and_answer(
    runtime: Runtime, tenant: Tenant, db: Engine, caplog: pytest.LogCaptureFixture
) -> None:
    server = make_server(create_app(shared=runtime, threads=8), bind("127.0.0.1", 0), 8)
    loop = threading.Thread(target=server.run, daemon=True)
    loop.start()
    try:
        with records_locked(db):
            search = Searches(f"http://127.0.0.1:{server.effective_port}", tenant.key, 1)
            waiting_on_lock(db, 1)
            stopping = threading.Thread(target=server.stop)
            stopping.start()
            time.sleep(0.5)  # the server is stopping while its request still runs
        stopping.join(10)
        loop.join(10)
        assert not loop.is_alive()
    finally:
        server.close()
    [(_, response)] = search.join()
    assert isinstance(response, httpx.Response) and response.status_code == 200, response
    failed = [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR]
    assert failed == [], failed  # "a request task failed outside the app": EBADF
