"""Time-ordered record ids (UUIDv7, RFC 9562).

Python 3.11's `uuid` module has no `uuid7`, so this is the few lines it takes. Ids sort by
creation time (48-bit Unix milliseconds first), which keeps B-tree inserts on the primary key
append-mostly and makes an id roughly readable as a timestamp. Within one millisecond the
12-bit `rand_a` field carries a counter (RFC 9562 §6.2, method 1), so ids made by one process
are strictly increasing; the remaining 62 bits are random.
"""

from __future__ import annotations

import secrets
import threading
import time
from uuid import UUID

_COUNTER_MAX = 0xFFF
_lock = threading.Lock()
_last_ms = 0
_counter = 0


def _next_tick() -> tuple[int, int]:
    """(milliseconds, counter), strictly increasing across calls in this process."""
    global _last_ms, _counter
    with _lock:
        now = time.time_ns() // 1_000_000
        if now > _last_ms:
            _last_ms, _counter = now, secrets.randbits(8)  # random start leaves room to count
        elif _counter < _COUNTER_MAX:
            _counter += 1
        else:  # counter exhausted within one millisecond: borrow the next millisecond
            _last_ms, _counter = _last_ms + 1, 0
        return _last_ms, _counter


def uuid7() -> UUID:
    """A new UUIDv7: 48-bit ms timestamp, version 7, 12-bit counter, variant, 62 random bits."""
    ms, counter = _next_tick()
    value = (ms & 0xFFFF_FFFF_FFFF) << 80
    value |= 0x7 << 76
    value |= counter << 64
    value |= 0b10 << 62
    value |= secrets.randbits(62)
    return UUID(int=value)


def uuid7_batch(n: int) -> list[UUID]:
    """`n` new ids in increasing order."""
    return [uuid7() for _ in range(n)]
