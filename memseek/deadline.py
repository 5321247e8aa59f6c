"""The deadline of the current request (or job): every database wait it makes ends by then.

A request sets one deadline (`within`) when it starts; the pool checkout, a new connection's
establishment, the liveness ping and every statement read what is left of it (`remaining`), on
the client side (`memseek.db`), so a database that stopped answering (frozen, partitioned) cannot
hold a request thread past the deadline even where no server-side timer can fire. Statements also
carry server-side timeouts (`server_timeout_ms`), set a little shorter, so that a healthy but
slow database cancels its own statement first and the connection stays usable.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from contextvars import Token

SERVER_MARGIN = 0.25
"""Seconds by which the server-side timeouts undercut the client-side deadline: a statement the
server cancels itself answers with a clean error on a connection that stays usable."""
MIN_WAIT = 0.05
"""The least a wait is given once its deadline has passed: an answer already on its way (the
rollback that returns a connection to the pool) is still read, a frozen server is not awaited."""

_DEADLINE: ContextVar[float | None] = ContextVar("memseek_deadline", default=None)
"""`time.monotonic()` by which the current request's database waits must end; None: no bound."""


@contextmanager
def within(seconds: float) -> Iterator[float]:
    """Bound every database wait of the block to end within `seconds` from now (an enclosing,
    earlier deadline still holds); yields the deadline. A block that must outlive its request's
    deadline (waiting for processing) opens its own with `renewed`."""
    deadline = time.monotonic() + seconds
    current = _DEADLINE.get()
    token = _DEADLINE.set(deadline if current is None else min(current, deadline))
    try:
        yield deadline
    finally:
        _DEADLINE.reset(token)


@contextmanager
def renewed(seconds: float) -> Iterator[None]:
    """A fresh deadline `seconds` from now for the block, whatever the enclosing one."""
    token = _DEADLINE.set(time.monotonic() + seconds)
    try:
        yield
    finally:
        _DEADLINE.reset(token)


def remaining() -> float | None:
    """Seconds left before the deadline (0 once passed); None when no deadline is set."""
    deadline = _DEADLINE.get()
    return None if deadline is None else max(0.0, deadline - time.monotonic())


def wait_budget(configured: float | None = None) -> float | None:
    """How long one database wait may last: what is left of the deadline (at least `MIN_WAIT`),
    or `configured` when it is shorter or no deadline is set."""
    left = remaining()
    if left is None:
        return configured
    bounded = max(left, MIN_WAIT)
    return bounded if configured is None else min(configured, bounded)


def server_timeout_ms(cap_ms: int | None = None) -> int | None:
    """The server-side timeout for a statement started now: the deadline less `SERVER_MARGIN`
    (at least 1 ms), or `cap_ms` when shorter; None when neither bounds it."""
    left = remaining()
    if left is None:
        return cap_ms
    ms = max(1, int((left - SERVER_MARGIN) * 1000))
    return ms if cap_ms is None else min(cap_ms, ms)


def start(seconds: float) -> Token[float | None]:
    """Set the deadline `seconds` from now (a request's hooks: `end` it with the token)."""
    return _DEADLINE.set(time.monotonic() + seconds)


def end(token: Token[float | None]) -> None:
    """Restore the deadline `start` replaced."""
    try:
        _DEADLINE.reset(token)
    except ValueError:  # set in another context (a hook run elsewhere): clear it instead
        _DEADLINE.set(None)
