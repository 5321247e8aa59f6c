"""Processing progress within this process: the in-process worker announces each batch it settles,
so requests waiting for their records (`POST /records?wait=true`) wake at once instead of polling.

Waiters still look again after a short interval without an announcement: records processed by a
worker in another process (`memseek worker`) are only seen that way.
"""

from __future__ import annotations

import threading


class Progress:
    """A counter of settled batches that waiters can sleep on."""

    def __init__(self) -> None:
        self._changed = threading.Condition()
        self._batches = 0

    def settled(self) -> None:
        """A batch was committed (or failed and was rescheduled): wake every waiter."""
        with self._changed:
            self._batches += 1
            self._changed.notify_all()

    def mark(self) -> int:
        """The current count, to pass to `wait_past` after reading the records' states."""
        with self._changed:
            return self._batches

    def wait_past(self, mark: int, timeout: float) -> None:
        """Return once a batch settled since `mark`, or after `timeout` seconds."""
        with self._changed:
            self._changed.wait_for(lambda: self._batches != mark, timeout)


BATCHES = Progress()
"""This process's batches (`memseek.write.worker.process_batch` announces each)."""
