"""Which SDK clients an adapter calls: the one it was given, or clients it builds and owns."""

from __future__ import annotations

import asyncio
import threading

from memseek.client import AsyncMemseek
from memseek.client import Memseek

Client = Memseek | AsyncMemseek


class Clients:
    """An adapter's clients: a given `Memseek` or `AsyncMemseek`, or — given none — clients of
    `url` and `api_key` (each defaulting to `MEMSEEK_URL` / `MEMSEEK_API_KEY`) that it builds on
    first use.

    An `AsyncMemseek` holds connections of the event loop it was used on, so an owned async client
    is rebuilt when called from another loop (each `asyncio.run` starts a new one) rather than
    handing it connections of a closed loop.
    """

    def __init__(self, client: Client | None, url: str | None, api_key: str | None) -> None:
        if client is not None and (url is not None or api_key is not None):
            raise ValueError("give either a client or url/api_key, not both")
        self._given, self._url, self._api_key = _checked(client), url, api_key
        self._sync: Memseek | None = client if isinstance(client, Memseek) else None
        self._async: tuple[asyncio.AbstractEventLoop, AsyncMemseek] | None = None
        self._lock = threading.Lock()

    def sync(self) -> Memseek:
        """The blocking client; an adapter built on an `AsyncMemseek` has none (it cannot block
        on a client whose connections belong to an event loop)."""
        if isinstance(self._given, AsyncMemseek):
            raise TypeError(
                "this adapter was given an AsyncMemseek: call its async methods, "
                "or give it a Memseek (or url and api_key) for blocking calls"
            )
        with self._lock:
            if self._sync is None:
                self._sync = Memseek(self._url, self._api_key)
            return self._sync

    def aio(self) -> AsyncMemseek | None:
        """The async client for the running event loop; None when the adapter was given only a
        `Memseek` (the caller then runs the blocking path in a worker thread)."""
        if isinstance(self._given, AsyncMemseek):
            return self._given
        if isinstance(self._given, Memseek):
            return None
        loop = asyncio.get_running_loop()
        if self._async is None or self._async[0] is not loop:
            self._async = (loop, AsyncMemseek(self._url, self._api_key))
        return self._async[1]

    def close(self) -> None:
        """Release the connections of the blocking client this adapter built (a given client
        belongs to the caller; an owned async client is released with its event loop)."""
        if self._given is None and self._sync is not None:
            self._sync.close()
            self._sync = None


def _checked(client: object) -> Client | None:
    """`client` when it is one: a URL passed where the client goes is refused here rather than
    failing at the first call."""
    if client is None or isinstance(client, Memseek | AsyncMemseek):
        return client
    kind = type(client).__name__
    raise TypeError(f"client must be a Memseek or an AsyncMemseek, not {kind} (a URL goes in url=)")
