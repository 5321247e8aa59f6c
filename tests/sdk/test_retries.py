"""Retries: reads are repeated on a 503 or a failed connection; a write only when every record
carries an idempotency key (then a lost reply cannot become a second copy). Real servers only:
the flaky proxy in front of the running service, and a port where the service starts later."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator

import pytest
from waitress.server import create_server

from memseek.app import create_app
from memseek.client import Memseek
from memseek.client import Unavailable
from memseek.runtime import Runtime
from tests.conftest import Tenant
from tests.helpers import free_port
from tests.sdk.flaky import flaky
from tests.sdk.support import MARIA
from tests.sdk.support import event


def fast(url: str, tenant: Tenant, retries: int = 3) -> Memseek:
    """A client that retries quickly (the pauses are not under test here)."""
    return Memseek(url, tenant.key, retries=retries, backoff=0.01)


def test_a_read_is_retried_through_503s(service: str, tenant: Tenant, m: Memseek) -> None:
    [written] = m.records.write(event("Maria confirmed the Q3 budget."), wait=True)
    with flaky(service, failures=2) as proxy, fast(proxy.url, tenant) as client:
        result = client.search(q="budget", mode="text")
    assert result.ids == [written.id]
    assert proxy.seen == [("POST", "/search")] * 3


def test_a_view_call_is_a_read(service: str, tenant: Tenant) -> None:
    with flaky(service, failures=2) as proxy, fast(proxy.url, tenant) as client:
        result = client.views.query("customer_context", entity=MARIA, task="budget")
    assert result.ids == []
    assert proxy.seen == [("GET", "/views")] * 3 + [("POST", "/views/customer_context/query")]


def test_retries_run_out_as_unavailable(service: str, tenant: Tenant) -> None:
    with (
        flaky(service, failures=5) as proxy,
        fast(proxy.url, tenant, retries=2) as client,
        pytest.raises(Unavailable) as caught,
    ):
        client.records.get("0190a0b1-0000-7000-8000-000000000000")
    assert (caught.value.status, caught.value.code, caught.value.message) == (
        503,
        "backend_unavailable",
        "restarting",
    )
    assert len(proxy.seen) == 3


@pytest.mark.parametrize(
    "records",
    [
        pytest.param([event("Maria paid.")], id="no-key"),
        pytest.param(
            [event("Maria paid.", idempotency_key="pay-1"), event("Maria smiled.")], id="one-without-key"
        ),
    ],
)
def test_a_write_without_every_key_is_not_retried(
    service: str, tenant: Tenant, m: Memseek, records: list[dict[str, str]]
) -> None:
    with (
        flaky(service, failures=1, lose_replies=True) as proxy,
        fast(proxy.url, tenant) as client,
        pytest.raises(Unavailable) as caught,
    ):
        client.records.write(records, wait=True)
    assert caught.value.status == 503 and proxy.seen == [("POST", "/records?wait=true")]
    assert len(m.search(mode="recent").hits) == len(records)  # written once: the reply was lost


def test_a_write_with_every_key_is_retried_and_written_once(service: str, tenant: Tenant, m: Memseek) -> None:
    records = [
        event("Maria paid.", idempotency_key="pay-1"),
        event("Maria smiled.", idempotency_key="smile-1"),
    ]
    with flaky(service, failures=2, lose_replies=True) as proxy, fast(proxy.url, tenant) as client:
        written = client.records.write(records, wait=True)
    assert len(proxy.seen) == 3
    assert sorted(m.search(mode="recent").ids) == sorted(w.id for w in written)


def test_any_call_is_retried_through_429s_and_done_once(service: str, tenant: Tenant, m: Memseek) -> None:
    """A 429 is refused before anything is done: a write without keys and a retraction are
    attempted again too."""
    with flaky(service, failures=2, status=429, retry_after="0") as proxy, fast(proxy.url, tenant) as client:
        [written] = client.records.write(event("Maria paid."), wait=True)
        client.records.retract(written.id, "duplicate")
    assert proxy.seen == [("POST", "/records?wait=true")] * 3 + [("POST", f"/records/{written.id}/retract")]
    assert m.search(mode="recent").ids == [] and m.records.get(written.id).retracted_at is not None


def test_429s_past_the_retries_are_raised(service: str, tenant: Tenant) -> None:
    """Issue 41 §1: "subclasses per status family (invalid request, not found, conflict,
    unavailable, auth)" — a service too busy to take the call is the unavailable family."""
    with (
        flaky(service, failures=5, status=429, retry_after="0") as proxy,
        fast(proxy.url, tenant, retries=1) as client,
        pytest.raises(Unavailable) as caught,
    ):
        client.records.write(event("Maria paid."))
    assert (caught.value.status, caught.value.code) == (429, "too_many_requests") and len(proxy.seen) == 2


def test_a_lifecycle_change_is_not_retried(service: str, tenant: Tenant, m: Memseek) -> None:
    [written] = m.records.write(event("Maria paid."))
    with flaky(service, failures=1) as proxy, fast(proxy.url, tenant) as client, pytest.raises(Unavailable):
        client.records.retract(written.id, "duplicate")
    assert len(proxy.seen) == 1 and m.records.get(written.id).retracted_at is None


@pytest.fixture
def late_port(runtime: Runtime) -> Iterator[int]:
    """A port where the service starts answering half a second after the test begins."""
    port, app, servers = free_port(), create_app(shared=runtime), []

    def start() -> None:
        servers.append(create_server(app, host="127.0.0.1", port=port, threads=2))
        threading.Thread(target=servers[0].run, name="late-service", daemon=True).start()

    timer = threading.Timer(0.5, start)
    timer.start()
    yield port
    timer.join()
    servers[0].close()


def test_a_read_waits_for_a_port_that_starts_answering(late_port: int, tenant: Tenant) -> None:
    started = time.monotonic()
    with Memseek(f"http://127.0.0.1:{late_port}", tenant.key, retries=10, backoff=0.1) as client:
        views = client.views.list()
    assert time.monotonic() - started >= 0.5
    assert "customer_context" in {view.name for view in views}


def test_no_connection_after_the_retries_is_unavailable(tenant: Tenant) -> None:
    with (
        fast(f"http://127.0.0.1:{free_port()}", tenant, retries=2) as client,
        pytest.raises(Unavailable) as caught,
    ):
        client.health()
    assert (caught.value.status, caught.value.code) == (None, "connection_error")
    assert "GET /health" in str(caught.value)


def test_retry_after_is_honoured(service: str, tenant: Tenant) -> None:
    started = time.monotonic()
    with (
        flaky(service, failures=2, retry_after="0") as proxy,
        Memseek(proxy.url, tenant.key, backoff=30) as client,
    ):
        assert client.health().ok
    assert len(proxy.seen) == 3 and time.monotonic() - started < 10  # not the 30 s backoff


def test_a_service_that_never_answers_times_out(tenant: Tenant) -> None:
    with socket.socket() as silent:  # accepts connections (the backlog), never answers
        silent.bind(("127.0.0.1", 0))
        silent.listen(8)
        url = f"http://127.0.0.1:{silent.getsockname()[1]}"
        client = Memseek(url, tenant.key, timeout=0.2, retries=1, backoff=0.01)
        with client, pytest.raises(Unavailable) as caught:
            client.views.list()
    assert (caught.value.status, caught.value.code) == (None, "timeout")
