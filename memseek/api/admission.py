"""Fair sharing of the request threads between workspaces.

A WSGI server serves each request on one of a fixed number of threads, so a workspace that holds
them all (slow searches, long waits for processing) would stall every other workspace. Two
bounds keep a share free for the others:

* a workspace holds at most `Shares.per_workspace` request threads at once (three quarters of
  them by default); a request beyond that is answered `429 too_many_requests` with
  `Retry-After` at once, before it does any work;
* at most `Shares.waits_per_workspace` requests of a workspace, and `Shares.waits_total` in all,
  wait for processing (`POST /records?wait=true`) at once; a write beyond that is answered at
  once with its records' current states (`processing: pending`), as without `wait`.
"""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from uuid import UUID

from memseek.errors import TooManyRequests

DEFAULT_THREADS = 8
"""`memseek serve --threads`' default; an app served otherwise assumes it."""


@dataclass(frozen=True, slots=True)
class Shares:
    """How many request threads one workspace may hold, and how many may wait for processing."""

    per_workspace: int
    waits_per_workspace: int
    waits_total: int

    @classmethod
    def of(cls, threads: int, per_workspace: int | None = None) -> Shares:
        """The shares of a server with `threads` request threads: three quarters of them per
        workspace (or `per_workspace`), a quarter of them waiting per workspace, half in all."""
        quarter = max(1, threads // 4)
        return cls(
            per_workspace=per_workspace or max(1, threads - quarter),
            waits_per_workspace=quarter,
            waits_total=max(1, threads // 2),
        )


class Admission:
    """Counts the requests and waits each workspace holds, against its `Shares`."""

    def __init__(self, shares: Shares) -> None:
        self.shares = shares
        self._lock = threading.Lock()
        self._requests: Counter[UUID] = Counter()
        self._waits: Counter[UUID] = Counter()

    def enter(self, workspace: UUID) -> None:
        """Count one more request of `workspace`; `TooManyRequests` when it holds its share."""
        with self._lock:
            if self._requests[workspace] >= self.shares.per_workspace:
                raise TooManyRequests(
                    f"this workspace already has {self.shares.per_workspace} requests in progress; "
                    "retry when one of them is answered"
                )
            self._requests[workspace] += 1

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
