"""Fair sharing of the request threads between workspaces.

A WSGI server serves each request on one of a fixed number of threads. Served first come, first
served, a workspace that sends many requests at once (a bulk import, a flood of slow searches)
would make every other workspace's request wait behind all of its own, and then run beside as
many of them as there are threads. `memseek serve` instead queues requests per workspace and
lets each free thread take the next request round-robin across the workspaces that have one
waiting (`FairDispatcher`):

* a workspace alone on the service may run a request on every thread;
* while another workspace competes (it has a request running or queued, or its last one ended
  within `LINGER`), a workspace starts no more than its share (`Bounds.share`,
  `WORKSPACE_MAX_REQUESTS`, an eighth of the threads by default): its other requests wait in
  its queue, so the other workspace's request is the next one a thread takes, however long the
  flood's queue, and runs beside only a share of the flood. The share is small by default
  because what that request then waits for is the CPU the flood's running requests use, not a
  thread. Nothing is ever refused for competing;
* each workspace's queue is bounded (`Bounds.queued`) and so is the time a request may wait in
  it (`Bounds.max_wait`): past either bound the request is answered `429 too_many_requests`
  with `Retry-After`, before it does any work, so the service's memory and a client's wait are
  bounded whatever it sends. Only the workspace over its own bound is refused.

Waiting for processing (`POST /records` or `POST /writes/{name}` with `?wait=true`) runs on
threads of its own (`Shares.waits_total`), never on a request thread, dispatched the same way:
a workspace alone may wait on every one of them, a competing one on
`Shares.waits_per_workspace`; a write past them waits its turn in its workspace's queue (within
the same bounds), so `wait` always means that the answer comes once the records are processed
or the timeout passed. Under another WSGI server (no queues) at most as many requests wait at
once, and a write past them is answered at once with its records' current states
(`processing: pending`), as without `wait`.

Requests are queued by the API key they send (the `Authorization` header as sent), known before
the app runs: keys are minted by the operator (`memseek key create`), not by a client, so a
client cannot multiply its share. Requests without a key (the API's description, its pages)
share one queue.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import Counter
from collections import deque
from collections.abc import Hashable
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Protocol
from uuid import UUID

log = logging.getLogger(__name__)

DEFAULT_THREADS = 8
"""`memseek serve --threads`' default; an app served otherwise assumes it."""
LINGER = 0.5
"""Seconds a workspace still counts as competing after its last request ended: a client that
sends one request after another has a gap between them (reading the answer, writing the next),
and a flood must not take every thread in that gap. It only holds a flood to its share for that
long; nothing is ever refused for it."""


_NOTHING = object()
"""`FairDispatcher._eligible`'s answer when no key may run a task (any key, None included, may
name a queue)."""


class Task(Protocol):
    """Work a dispatcher runs on one of its threads (a waitress channel with a request)."""

    def service(self) -> None: ...


@dataclass(frozen=True, slots=True)
class Bounds:
    """What one workspace may hold in a `FairDispatcher`."""

    queued: int
    """Requests waiting in its queue; one more is refused."""
    max_wait: float
    """Seconds a request may wait in its queue; one that waited longer is refused."""
    share: int | None = None
    """Requests it runs at once while another workspace has one running or queued (None: no
    bound); alone, it may run as many as there are threads."""


class FairDispatcher:
    """`threads` threads taking tasks round-robin from per-key queues, within `Bounds`.

    `submit` queues a task or refuses it at once (its key's queue full); a task that waited past
    `max_wait` is never run but returned by `take_expired` (the server answers both `429`).
    """

    def __init__(self, threads: int, bounds: Bounds, name: str = "memseek") -> None:
        self.bounds, self.threads = bounds, threads
        self._lock = threading.Lock()
        self._ready = threading.Condition(self._lock)
        self._queues: dict[Hashable, deque[tuple[float, Task]]] = {}
        self._turns: deque[Hashable] = deque()  # keys with queued tasks, the next to serve first
        self._running: Counter[Hashable] = Counter()
        self._ended: dict[Hashable, float] = {}  # when each key's last task ended
        self._stopping = False
        self._threads = [
            threading.Thread(target=self._serve, name=f"{name}-{n}", daemon=True) for n in range(threads)
        ]
        for thread in self._threads:
            thread.start()

    def submit(self, key: Hashable, task: Task) -> bool:
        """Queue `task` under `key`; False (not queued) when `key`'s queue is full."""
        with self._lock:
            queue = self._queues.setdefault(key, deque())
            if len(queue) >= self.bounds.queued:
                return False
            if not queue:
                self._turns.append(key)
            queue.append((time.monotonic(), task))
            self._ready.notify()
            return True

    def take_expired(self) -> list[Task]:
        """The tasks that waited past `max_wait` (removed from their queues), to be refused."""
        now, expired = time.monotonic(), []
        with self._lock:
            for key in list(self._turns):
                queue = self._queues[key]
                while queue and now - queue[0][0] > self.bounds.max_wait:
                    expired.append(queue.popleft()[1])
                if not queue:
                    self._forget(key)
        return expired

    def load(self, key: Hashable = _NOTHING) -> int:
        """Tasks running or queued: `key`'s, or in all (no key given)."""
        with self._lock:
            if key is not _NOTHING:
                return self._running[key] + len(self._queues.get(key, ()))
            return self._running.total() + sum(map(len, self._queues.values()))

    def shutdown(self, timeout: float = 5.0) -> None:
        """Stop the threads once their running tasks end; queued tasks are dropped."""
        with self._lock:
            self._stopping = True
            self._ready.notify_all()
        deadline = time.monotonic() + timeout
        for thread in self._threads:
            thread.join(max(0.0, deadline - time.monotonic()))

    def _serve(self) -> None:
        while (turn := self._next()) is not None:
            key, task = turn
            try:
                task.service()
            except Exception:  # as waitress's own dispatcher: one task's failure ends no thread
                log.exception("a request task failed outside the app")
            finally:
                with self._lock:
                    self._running[key] -= 1
                    if self._running[key] <= 0:
                        del self._running[key]
                    if self.bounds.share is not None:  # only a share reads it (`_competing`)
                        self._ended[key] = time.monotonic()
                    if self._turns:  # a key held back by its share may go now
                        self._ready.notify()

    def _next(self) -> tuple[Hashable, Task] | None:
        """The next task to run, in turn across keys; None when stopping."""
        with self._lock:
            while not self._stopping:
                key = self._eligible()
                if key is not _NOTHING:
                    task = self._pop(key)
                    if self._turns:  # another key may be eligible for another idle thread
                        self._ready.notify()
                    return key, task
                self._ready.wait(self._until_linger_ends())
            return None

    def _until_linger_ends(self) -> float | None:
        """Seconds until a key stops lingering, while tasks wait that its end may let run (else
        None: only a submitted or finished task changes what may run)."""
        if not self._turns or not self._ended:
            return None
        return max(0.0, min(self._ended.values()) + LINGER - time.monotonic()) + 0.01

    def _eligible(self) -> Hashable:
        """The first key in turn with a task queued that may run one more: under its share
        while another key competes (`_competing`), else alone (`_NOTHING`: none may)."""
        share = self.bounds.share
        competing = self._competing() if share is not None else set()
        for key in self._turns:
            if share is None or self._running[key] < share or competing <= {key}:
                return key
        return _NOTHING

    def _competing(self) -> set[Hashable]:
        """The keys with a task running or queued, or whose last ended within `LINGER`."""
        now = time.monotonic()
        for key in [k for k, ended in self._ended.items() if now - ended > LINGER]:
            del self._ended[key]
        return set(self._running).union(self._turns, self._ended)

    def _pop(self, key: Hashable) -> Task:
        """`key`'s oldest task; `key` goes to the back of the turns (or leaves them, drained)."""
        queue = self._queues[key]
        task = queue.popleft()[1]
        self._turns.remove(key)
        if queue:
            self._turns.append(key)
        else:
            del self._queues[key]
        self._running[key] += 1
        return task

    def _forget(self, key: Hashable) -> None:
        self._turns.remove(key)
        del self._queues[key]


@dataclass(frozen=True, slots=True)
class Shares:
    """The bounds of a server's request threads per workspace, and how many requests may wait
    for processing at once (on threads of their own): in all, and of one workspace while
    another competes."""

    requests: Bounds
    waits_per_workspace: int
    waits_total: int

    @classmethod
    def of(
        cls, threads: int, share: int | None = None, queued: int | None = None, max_wait: float = 10.0
    ) -> Shares:
        """The shares of a server with `threads` request threads: a workspace runs `share`
        requests at once (default an eighth of the threads) while another has requests, and has
        `queued` (default eight per thread) waiting for a thread, each for at most `max_wait`
        seconds; an eighth of the threads' number wait for processing per workspace, and half
        of it in all (at least one each)."""
        bounds = Bounds(queued=queued or 8 * threads, max_wait=max_wait, share=share or max(1, threads // 8))
        return cls(bounds, waits_per_workspace=max(1, threads // 8), waits_total=max(1, threads // 2))


QUEUED_MS = "memseek.queued_ms"
"""The WSGI environ key `memseek serve` sets on every request: the milliseconds it waited in its
workspace's queue for a thread (`Server-Timing: queue`)."""
WAIT_LANE = "memseek.wait_lane"
"""The WSGI environ key `memseek serve` sets on every request: whether it runs on the threads
that may wait for processing (a request without it comes from another server)."""


class Admission:
    """Counts the waits for processing each workspace holds, against its `Shares`: the bound for
    servers other than `memseek serve`, whose wait threads bound them already."""

    def __init__(self, shares: Shares) -> None:
        self.shares = shares
        self._lock = threading.Lock()
        self._waits: Counter[UUID] = Counter()

    @contextmanager
    def wait_slot(self, workspace: UUID) -> Iterator[bool]:
        """Whether `workspace` may wait for processing now (the slot is held for the block)."""
        with self._lock:
            granted = (
                self._waits[workspace] < self.shares.waits_per_workspace
                and self._waits.total() < self.shares.waits_total
            )
            if granted:
                self._waits[workspace] += 1
        try:
            yield granted
        finally:
            if granted:
                with self._lock:
                    self._waits[workspace] -= 1
                    if self._waits[workspace] <= 0:
                        del self._waits[workspace]
