"""`Memseek`: the blocking client, on one `httpx.Client` (a connection pool) per client."""

from __future__ import annotations

import time
from types import TracebackType
from typing import TypeVar

import httpx

from memseek.client._http import Reply
from memseek.client._http import Request
from memseek.client._http import final
from memseek.client._http import retry_pause
from memseek.client._ops import Op
from memseek.client._surface import ClientSurface
from memseek.client._surface import Sync

T = TypeVar("T")


class Memseek(ClientSurface[Sync]):
    """A client of one Memseek service, for one workspace (its API key).

    `base_url` defaults to `MEMSEEK_URL`, then `http://127.0.0.1:8000`; `api_key` to
    `MEMSEEK_API_KEY`. `timeout` bounds each attempt in seconds; reads (and writes whose every
    record carries an idempotency key) are retried `retries` times on a 503 or a lost
    connection, pausing `backoff * 2**n` seconds (jittered, at most 8). `headers` are added to
    every request. Use it as a context manager, or `close()` it, to release its connections.
    One client may be shared between threads.

    >>> from memseek import Memseek
    >>> with Memseek("http://127.0.0.1:8000", api_key="...") as m:
    ...     m.records.write({"collection": "memories", "entity": "contact.maria",
    ...                      "type": "note", "text": "Maria prefers email."}, wait=True)
    ...     print(m.context("how to reach Maria", entity="contact.maria"))
    """

    def _connect(self) -> None:
        self._http = httpx.Client(**self._config.client_options())

    def close(self) -> None:
        """Release the client's connections."""
        self._http.close()

    def __enter__(self) -> Memseek:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    def _drive(self, op: Op[T]) -> T:
        try:
            request = next(op)
            while True:
                request = op.send(self._send(request))
        except StopIteration as done:
            return done.value  # type: ignore[no-any-return]

    def _send(self, request: Request) -> Reply:
        options, attempt = request.options(self._config), 0
        if request.after:
            time.sleep(request.after)
        while True:
            try:
                response = self._http.request(request.method, request.path, **options)
                outcome: Reply | Exception = Reply.of(response)
            except httpx.TransportError as exc:
                outcome = exc
            pause = retry_pause(self._config, request, attempt, outcome)
            if pause is None:
                return final(outcome, request, self._config)
            time.sleep(pause)
            attempt += 1
