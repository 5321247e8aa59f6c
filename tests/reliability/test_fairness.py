"""Issue 45, "no noisy neighbour": a workspace flooding the service with slow waits for processing
(`POST /records?wait=true`, its records never processed here: no worker runs) and searches cannot
hold the request threads another workspace needs. The other workspace's search p95 stays within
twice its quiet p95, `/health` answers within a second throughout, and the flood is queued, not
refused.

The dispatcher's rules are then shown one by one with requests held deterministically: the
records table locked by another session, every search that reads it waits on its thread.
"""

from __future__ import annotations

import statistics
import threading
import time
from collections import Counter
from collections.abc import Callable
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from dataclasses import field
from statistics import median
from typing import Any

import httpx
import pytest
import sqlalchemy as sa
from sqlalchemy.engine import Engine

from memseek.app import create_app
from memseek.runtime import Runtime
from memseek.server import MemseekServer
from tests.conftest import Tenant
from tests.conftest import make_tenant
from tests.helpers import with_settings
from tests.service import serving

SAMPLES = 90
ROUNDS = 3
"""Quiet and flooded phases alternate this many times, `SAMPLES // ROUNDS` searches each."""
FLOOD_WAITS = 10
"""Concurrent slow waits of the flooding workspace: more than the server's 8 threads."""
FLOOD_SEARCHES = 48
"""Concurrent searches of the flooding workspace: six times the server's threads, so that
served first come, first served they would hold every thread and queue ahead of the other
workspace's searches."""
QUEUE_BOUND = 0.002
"""Seconds the other workspace's searches may wait for a thread (median) during the flood. Fair,
a thread is free for them at once and the wait is a thread's wake-up, a fraction of a millisecond
(p95 a few: the wake-up waits for the interpreter's lock); first come, first served, they wait
behind the flood's queue of searches, about ten milliseconds, even with the machine's cores
busy with other work."""


def p95(samples: list[float]) -> float:
    return statistics.quantiles(samples, n=20)[-1]


def server_timing(response: httpx.Response, metric: str) -> float:
    """Seconds of `metric` in `response`'s `Server-Timing` header."""
    for part in response.headers["Server-Timing"].split(","):
        name, _, duration = part.strip().partition(";dur=")
        if name == metric:
            return float(duration) / 1000
    raise AssertionError(f"no {metric} in {response.headers['Server-Timing']!r}")


@dataclass
class Timed:
    """What a client saw of its searches: its own waits, and how long each waited for a thread."""

    took: list[float] = field(default_factory=list)
    queued: list[float] = field(default_factory=list)

    def __iadd__(self, other: Timed) -> Timed:
        self.took += other.took
        self.queued += other.queued
        return self


def timed_searches(http: httpx.Client, count: int) -> Timed:
    timed = Timed()
    for _ in range(count):
        started = time.perf_counter()
        response = http.post("/search", json={"q": "alpha", "mode": "text"})
        timed.took.append(time.perf_counter() - started)
        assert response.status_code == 200, response.text
        timed.queued.append(server_timing(response, "queue"))
    return timed


def record(text: str) -> dict[str, object]:
    return {"collection": "memories", "entity": "flood", "type": "note", "text": text}


class Flood:
    """Threads of one workspace sending slow waits and searches until stopped; what they got."""

    def __init__(self, service: str, tenant: Tenant) -> None:
        self.service, self.tenant = service, tenant
        self.stop = threading.Event()
        self.statuses: Counter[str] = Counter()
        self._lock = threading.Lock()
        self.threads = [threading.Thread(target=self._loop, args=(self._wait,)) for _ in range(FLOOD_WAITS)]
        self.threads += [
            threading.Thread(target=self._loop, args=(self._search,)) for _ in range(FLOOD_SEARCHES)
        ]

    def _wait(self, http: httpx.Client) -> httpx.Response:
        return http.post("/records?wait=true&timeout=4", json={"records": [record("flood " * 400)]})

    def _search(self, http: httpx.Client) -> httpx.Response:
        return http.post("/search", json={"q": "flood", "mode": "text"})

    def _loop(self, send: Callable[[httpx.Client], httpx.Response]) -> None:
        headers = {"Authorization": f"Bearer {self.tenant.key}"}
        with httpx.Client(base_url=self.service, headers=headers, timeout=30) as http:
            while not self.stop.is_set():
                response = send(http)
                pending = (
                    response.status_code == 201 and response.json()["records"][0]["processing"] == "pending"
                )
                with self._lock:
                    self.statuses[f"{response.status_code}{' pending' if pending else ''}"] += 1
                if response.status_code == 429:  # a well-behaved greedy client: it honours Retry-After
                    self.stop.wait(float(response.headers["Retry-After"]))

    def __enter__(self) -> Flood:
        for thread in self.threads:
            thread.start()
        time.sleep(1.0)  # every wait in flight
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop.set()
        for thread in self.threads:
            thread.join(30)


@pytest.fixture
def flooder(db: Engine) -> Tenant:
    return make_tenant(db, "flooder")


def ms(seconds: float) -> str:
    return f"{seconds * 1000:.2f} ms"


def flooded_searches(
    service: str, tenant: Tenant, flooder: Tenant
) -> tuple[Timed, Timed, list[float], Counter[str]]:
    """`tenant`'s searches quiet and during `flooder`'s flood, in alternating rounds (a change in
    the machine's other load weighs on both alike); `/health`'s times and the flood's answers."""
    quiet, flooded, health, statuses = Timed(), Timed(), [], Counter[str]()
    with httpx.Client(
        base_url=service, headers={"Authorization": f"Bearer {tenant.key}"}, timeout=30
    ) as http:
        timed_searches(http, 5)  # warm: plans, pool connections
        for _ in range(ROUNDS):
            quiet += timed_searches(http, SAMPLES // ROUNDS)
            with Flood(service, flooder) as flood:
                flooded += timed_searches(http, SAMPLES // ROUNDS)
                health += [_health(service) for _ in range(4)]
            statuses += flood.statuses
    print(
        f"other's search p95: quiet {ms(p95(quiet.took))}, flooded {ms(p95(flooded.took))};"
        f" its wait for a thread, median: quiet {ms(median(quiet.queued))}, flooded"
        f" {ms(median(flooded.queued))}; health max {ms(max(health))}; flood answers {dict(statuses)}"
    )
    return quiet, flooded, health, statuses


def test_a_flooding_workspace_cannot_starve_another(service: str, tenant: Tenant, flooder: Tenant) -> None:
    """The other workspace's searches get a thread at once throughout the flood (the server's
    `Server-Timing: queue`). What they then wait for is the CPU the flood's running requests
    use, shared with whatever else the machine runs: the p95 of their whole time, flooded
    against quiet, is a target `python -m bench soak` measures (docs/reliability.md), not a
    timed assertion here."""
    _, flooded, health, statuses = flooded_searches(service, tenant, flooder)
    assert median(flooded.queued) <= QUEUE_BOUND, sorted(flooded.queued)[-10:]
    assert max(health) <= 1.0, health
    # the flood met its bounds without a refusal: its waits and its requests past the workspace's
    # share of threads queued until their turn (its records are never processed here)
    assert statuses["201 pending"] > 0 and "429" not in statuses, statuses


def test_served_first_come_first_served_the_flood_would_starve_it(
    runtime: Runtime, tenant: Tenant, flooder: Tenant
) -> None:
    """The bound above can fail: with a workspace's share as large as the threads, the other
    workspace's searches queue behind the flood's."""
    with served_with(runtime, workspace_max_requests=THREADS) as url:
        _, flooded, _, _ = flooded_searches(url, tenant, flooder)
    assert median(flooded.queued) > QUEUE_BOUND, sorted(flooded.queued)[-10:]


def _health(service: str) -> float:
    started = time.perf_counter()
    response = httpx.get(f"{service}/health", timeout=5)
    assert response.status_code == 200, response.text
    return time.perf_counter() - started


def test_health_answers_within_a_second_with_every_request_thread_busy(
    service: str, flooder: Tenant, tenant: Tenant
) -> None:
    """Twelve clients of two workspaces keep all 8 request threads busy; `/health` has threads
    of its own."""
    stop = threading.Event()

    def hold(key: str) -> None:
        with httpx.Client(base_url=service, headers={"Authorization": f"Bearer {key}"}, timeout=30) as http:
            while not stop.is_set():
                http.post("/search", json={"mode": "recent", "rank": ["const", 1]})

    threads = [threading.Thread(target=hold, args=(key,)) for key in [flooder.key, tenant.key] * 6]
    for thread in threads:
        thread.start()
    try:
        time.sleep(0.5)
        assert max(_health(service) for _ in range(10)) <= 1.0
    finally:
        stop.set()
        for thread in threads:
            thread.join(30)


# --- the dispatcher's rules, with requests held on a locked table ------------------------------


@contextmanager
def records_locked(engine: Engine) -> Iterator[None]:
    """The records table locked for the block: every search waits on its request thread."""
    with engine.connect() as locker:
        locker.execute(sa.text("LOCK TABLE records IN ACCESS EXCLUSIVE MODE"))
        try:
            yield
        finally:
            locker.rollback()


def waiting_on_lock(engine: Engine, count: int, within: float = 15.0) -> None:
    """Return once `count` of the service's statements wait on the lock (fail after `within` s)."""
    query = sa.text(
        "SELECT count(*) FROM pg_stat_activity"
        " WHERE wait_event_type = 'Lock' AND application_name = 'memseek'"
    )
    deadline = time.monotonic() + within
    while True:
        with engine.connect() as conn:
            found = conn.execute(query).scalar()
        if found == count or time.monotonic() > deadline:
            break
        time.sleep(0.05)
    assert found == count, f"{found} statements wait on the lock, expected {count}"


class Searches:
    """Searches sent at once, each on a thread of its own; their answers and when each came."""

    def __init__(self, service: str, key: str, count: int) -> None:
        self.answers: list[tuple[float, httpx.Response]] = []
        self._lock = threading.Lock()
        self.threads = [threading.Thread(target=self._send, args=(service, key)) for _ in range(count)]
        for thread in self.threads:
            thread.start()

    def _send(self, service: str, key: str) -> None:
        headers = {"Authorization": f"Bearer {key}"}
        response = httpx.post(
            f"{service}/search", json={"q": "alpha", "mode": "text"}, headers=headers, timeout=60
        )
        with self._lock:
            self.answers.append((time.monotonic(), response))

    def join(self) -> list[tuple[float, httpx.Response]]:
        for thread in self.threads:
            thread.join(60)
        return sorted(self.answers, key=lambda answer: answer[0])

    def statuses(self) -> Counter[int]:
        with self._lock:
            return Counter(response.status_code for _, response in self.answers)


THREADS = 8


def test_a_workspace_alone_runs_a_request_on_every_thread(service: str, tenant: Tenant, db: Engine) -> None:
    """... and while every thread is held and more requests queue, `/health` answers at once
    (the server's I/O loop answers it, with no request thread)."""
    with records_locked(db):
        searches = Searches(service, tenant.key, THREADS + 4)
        waiting_on_lock(db, THREADS)
        health = [_health(service) for _ in range(10)]
    assert Counter(r.status_code for _, r in searches.join()) == {200: THREADS + 4}
    assert max(health) <= 1.0, health


def queued(server: MemseekServer, key: str, count: int, within: float = 15.0) -> None:
    """Return once `count` requests sent with `key` are running or queued in `server`'s request
    dispatcher (fail after `within` s)."""
    deadline = time.monotonic() + within
    while (found := server.requests.load(f"Bearer {key}")) < count and time.monotonic() < deadline:
        time.sleep(0.02)
    assert found == count, f"{found} requests of the workspace at the server, expected {count}"


def test_another_workspace_is_served_before_a_floods_backlog(
    server: MemseekServer, service: str, tenant: Tenant, flooder: Tenant, db: Engine
) -> None:
    """Every thread busy with the flood and 16 more of its requests queued: the other workspace's
    one request is the next a thread takes, before the flood's backlog."""
    with records_locked(db):
        flood = Searches(service, flooder.key, THREADS)
        waiting_on_lock(db, THREADS)
        backlog = Searches(service, flooder.key, 16)
        queued(server, flooder.key, THREADS + 16)  # all queued behind the locked ones
        other = Searches(service, tenant.key, 1)
        queued(server, tenant.key, 1)
    done_other, response = other.join()[0]
    assert response.status_code == 200, response.text
    flooded = [when for when, r in flood.join() + backlog.join() if r.status_code == 200]
    assert len(flooded) == THREADS + 16
    before = [when for when in sorted(flooded)[THREADS:] if when < done_other]
    assert len(before) <= 2, f"{len(before)} of the flood's backlog answered before the other workspace"


@contextmanager
def served_with(runtime: Runtime, **settings: Any) -> Iterator[str]:
    """A service of its own over `runtime` with `settings` overridden."""
    with serving(create_app(shared=with_settings(runtime, **settings), threads=THREADS)) as url:
        yield url


def test_a_full_queue_refuses_only_its_own_workspace(
    runtime: Runtime, tenant: Tenant, flooder: Tenant, db: Engine
) -> None:
    """With 4 requests queued per workspace, 15 at once from one: 8 run, 4 wait, 3 are refused at
    once in the one shape with Retry-After; the other workspace's request, queued meanwhile, is
    served."""
    with served_with(runtime, workspace_max_queued=4) as url:
        with records_locked(db):
            started = time.monotonic()
            flood = Searches(url, flooder.key, THREADS + 4 + 3)
            waiting_on_lock(db, THREADS)
            while len(flood.answers) < 3 and time.monotonic() - started < 5:
                time.sleep(0.05)
            refused = list(flood.answers)
            other = Searches(url, tenant.key, 1)
            time.sleep(0.3)
        answered = other.join(), flood.join()
    assert [r.status_code for _, r in refused] == [429] * 3, [r.text for _, r in refused]
    for when, response in refused:
        assert when - started < 2.0, when - started
        assert response.json()["error"]["code"] == "too_many_requests"
        assert int(response.headers["Retry-After"]) >= 1
    assert answered[0][0][1].status_code == 200
    assert Counter(r.status_code for _, r in answered[1]) == {200: THREADS + 4, 429: 3}


def test_a_request_queued_past_the_wait_bound_is_refused(
    runtime: Runtime, flooder: Tenant, db: Engine
) -> None:
    """Queued for more than `MAX_QUEUE_WAIT_MS` (here 1.5 s), a request is refused while the ones
    before it still run."""
    with served_with(runtime, max_queue_wait_ms=1500) as url:
        with records_locked(db):
            flood = Searches(url, flooder.key, THREADS + 2)
            waiting_on_lock(db, THREADS)
            started = time.monotonic()
            while flood.statuses()[429] < 2 and time.monotonic() - started < 5:
                time.sleep(0.05)
            assert flood.statuses() == {429: 2}  # refused while the others still wait
        answered = flood.join()
    assert Counter(r.status_code for _, r in answered) == {200: THREADS, 429: 2}
