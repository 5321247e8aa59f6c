"""Fair sharing of the request threads between workspaces.

A WSGI server serves each request on one of a fixed number of threads, so a workspace that holds
them all (slow searches, long waits for processing) would stall every other workspace. Two
bounds keep a share free for the others:

* while another workspace is active (it has a request running, or began one within the last
  `ACTIVE_WINDOW`, two seconds), a workspace holds at most `Shares.per_workspace`
  request threads at once (a quarter of them by default); a request beyond that is answered
  `429 too_many_requests` with `Retry-After` at once, before it does any work. The window is short so
  that only a workspace competing now limits another's concurrency; a workspace alone on the
  service may use every thread, so a single-workspace deployment is never refused for its own
  concurrency;
* at most `Shares.waits_per_workspace` requests of a workspace, and `Shares.waits_total` in all,
  wait for processing (`POST /records?wait=true`) at once; a write beyond that is answered at
  once with its records' current states (`processing: pending`), as without `wait`.
"""

from __future__ import annotations

import threading
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from uuid import UUID

from memseek.errors import TooManyRequests

DEFAULT_THREADS = 8
"""`memseek serve --threads`' default; an app served otherwise assumes it."""
ACTIVE_WINDOW = 2.0
"""Seconds a workspace counts as active after its last request began: long enough to cover a
client's pauses between requests (a flood that starts while its victim pauses is held to its
share from its first request), short enough that a workspace that has finished competing soon
stops limiting the others."""


@dataclass(frozen=True, slots=True)
class Shares:
    """How many request threads one workspace may hold, and how many may wait for processing."""

    per_workspace: int
    waits_per_workspace: int
    waits_total: int

    @classmethod
    def of(cls, threads: int, per_workspace: int | None = None) -> Shares:
        """The shares of a server with `threads` request threads: a quarter of them per workspace
        (or `per_workspace`) while others are active, an eighth of them waiting per workspace,
        half of them waiting in all (at least one each)."""
        return cls(
            per_workspace=per_workspace or max(1, threads // 4),
            waits_per_workspace=max(1, threads // 8),
            waits_total=max(1, threads // 2),
        )


class Admission:
    """Counts the requests and waits each workspace holds, against its `Shares`."""

    def __init__(self, shares: Shares) -> None:
        self.shares = shares
        self._lock = threading.Lock()
        self._requests: Counter[UUID] = Counter()
        self._waits: Counter[UUID] = Counter()
        self._seen: dict[UUID, float] = {}

    def enter(self, workspace: UUID) -> None:
        """Count one more request of `workspace`; `TooManyRequests` when it holds its share
        while another workspace is active."""
        now = time.monotonic()
        with self._lock:
            self._seen[workspace] = now
            shared = self._others_active(workspace, now)
            if shared and self._requests[workspace] >= self.shares.per_workspace:
                raise TooManyRequests(
                    f"this workspace already has {self.shares.per_workspace} requests in progress "
                    "while others wait for theirs; retry when one of them is answered"
                )
            self._requests[workspace] += 1

    def _others_active(self, workspace: UUID, now: float) -> bool:
        """Whether another workspace began a request within `ACTIVE_WINDOW` (or has one running);
        forgets the workspaces idle for longer."""
        idle = [
            ws for ws, seen in self._seen.items() if now - seen > ACTIVE_WINDOW and not self._requests[ws]
        ]
        for ws in idle:
            del self._seen[ws]
        return len(self._seen) > 1 or any(ws != workspace for ws in self._requests)

    def leave(self, workspace: UUID) -> None:
        """The request `enter` counted is answered."""
        with self._lock:
            self._requests[workspace] -= 1
            if self._requests[workspace] <= 0:
                del self._requests[workspace]

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
