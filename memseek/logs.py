"""Log hygiene under load and outages: one line per condition per interval, never one per request.

A condition that many requests or jobs meet at once (the database down, a provider refusing, the
server's queue backing up) is logged when first met and then at most once per interval, with the
count of occurrences it stood for; expected outages are logged without a traceback.
"""

from __future__ import annotations

import logging
import threading
import time
from typing import Any

INTERVAL = 60.0
"""Seconds between two lines about the same condition."""


class Throttle:
    """Per condition key: whether a line may be written now, and how many were held back."""

    def __init__(self, interval: float = INTERVAL) -> None:
        self.interval = interval
        self._lock = threading.Lock()
        self._last: dict[str, float] = {}
        self._held: dict[str, int] = {}

    def admit(self, key: str) -> int | None:
        """None while `key` was logged less than `interval` ago (counted); otherwise the number of
        occurrences held back since its last line (the caller logs now)."""
        now = time.monotonic()
        with self._lock:
            last = self._last.get(key)
            if last is not None and now - last < self.interval:
                self._held[key] = self._held.get(key, 0) + 1
                return None
            self._last[key] = now
            return self._held.pop(key, 0)


_THROTTLE = Throttle()


def log_throttled(logger: logging.Logger, level: int, key: str, msg: str, *args: Any) -> None:
    """Log `msg % args` at `level` unless `key` was logged within the interval; the line says how
    many occurrences it stands for. No traceback: for expected conditions only."""
    held = _THROTTLE.admit(key)
    if held is None:
        return
    suffix = f" (and {held} more since the last report)" if held else ""
    logger.log(level, msg + suffix, *args)


def first_line(exc: BaseException) -> str:
    """The first line of an error's text (a driver error's own, where it wraps one), shortened:
    what a throttled line says of an outage."""
    text = str(getattr(exc, "orig", None) or exc).strip()
    return (text.splitlines() or [type(exc).__name__])[0][:300]


class ThrottledWarnings(logging.Filter):
    """A logger filter for a library's own warnings (waitress's "connection limit reached"): each
    message at most once per interval (`Throttle`), whatever makes the library repeat it; lines
    below WARNING pass as they are."""

    def __init__(self, interval: float = INTERVAL) -> None:
        super().__init__()
        self._throttle = Throttle(interval)

    def filter(self, record: logging.LogRecord) -> bool:
        if record.levelno < logging.WARNING:
            return True
        held = self._throttle.admit(str(record.msg))
        if held:  # as `log_throttled` says it
            record.msg = f"{record.msg} (and {held} more since the last report)"
        return held is not None
