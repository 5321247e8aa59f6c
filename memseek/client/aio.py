"""`AsyncMemseek`: the same surface as `Memseek`, awaitable, on one `httpx.AsyncClient` per client
(asyncio or trio)."""

from __future__ import annotations

from types import TracebackType
from typing import TypeVar

import httpx

from memseek.client._http import Reply
from memseek.client._http import Request
from memseek.client._http import final
from memseek.client._http import retry_pause
from memseek.client._ops import Op
from memseek.client._surface import Async
from memseek.client._surface import ClientSurface

T = TypeVar("T")


class AsyncMemseek(ClientSurface[Async]):
    """The asynchronous client: every call of `Memseek` (same arguments, same results, same
    errors and retries), awaited.

    >>> from memseek import AsyncMemseek
    >>> async with AsyncMemseek("http://127.0.0.1:8000", api_key="...") as m:
    ...     result = await m.search(q="budget", mode="hybrid", include=["text"])
    ...     record = await m.records.get(result[0].id)
    """

    def _connect(self) -> None:
        self._http = httpx.AsyncClient(**self._config.client_options())

    async def close(self) -> None:
        """Release the client's connections."""
        await self._http.aclose()

    async def __aenter__(self) -> AsyncMemseek:
        return self

    async def __aexit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.close()

    async def _drive(self, op: Op[T]) -> T:
        try:
            request = next(op)
            while True:
                request = op.send(await self._send(request))
        except StopIteration as done:
            return done.value  # type: ignore[no-any-return]

    async def _send(self, request: Request) -> Reply:
        options, attempt = request.options(self._config), 0
        if request.after:
            import anyio

            await anyio.sleep(request.after)
        while True:
            try:
                response = await self._http.request(request.method, request.path, **options)
                outcome: Reply | Exception = Reply.of(response)
            except httpx.TransportError as exc:
                outcome = exc
            pause = retry_pause(self._config, request, attempt, outcome)
            if pause is None:
                return final(outcome, request, self._config)
            import anyio  # only a retry pauses: importing it on first need keeps the import cheap

            await anyio.sleep(pause)
            attempt += 1
