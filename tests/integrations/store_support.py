"""Stores for the `MemseekStore` tests: every test runs once on the blocking path (a `Memseek`
the store builds from url and api key) and once on the async path (an `AsyncMemseek` on an event
loop of its own, driven from the test's blocking code), so both paths meet the same expectations.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from collections.abc import Iterator
from contextlib import ExitStack
from contextlib import contextmanager
from typing import Any

import pytest
from langgraph.store.base import PutOp

from memseek.client import AsyncMemseek
from memseek.integrations.langgraph import MemseekStore
from memseek.runtime import Runtime
from tests.conftest import Tenant

MakeStore = Callable[..., MemseekStore]


class Driven:
    """A store's async methods (`aget`, `asearch`, `abatch`, ...) under their blocking names, each
    run to completion on `loop`."""

    def __init__(self, store: MemseekStore, loop: asyncio.AbstractEventLoop) -> None:
        self.store, self.loop = store, loop

    def __getattr__(self, name: str) -> Callable[..., Any]:
        method = getattr(self.store, f"a{name}")

        def call(*args: Any, **kwargs: Any) -> Any:
            return asyncio.run_coroutine_threadsafe(method(*args, **kwargs), self.loop).result(120)

        return call


@contextmanager
def loop_thread() -> Iterator[asyncio.AbstractEventLoop]:
    """An event loop running in a thread of its own."""
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, name="store-test-loop", daemon=True)
    thread.start()
    try:
        yield loop
    finally:
        loop.call_soon_threadsafe(loop.stop)
        thread.join(10)
        loop.close()


@pytest.fixture(params=["sync", "async"])
def make_store(
    request: pytest.FixtureRequest, service: str, tenant: Tenant, runtime: Runtime
) -> Iterator[MakeStore]:
    """Build stores of the tenant's workspace with the given options, on the path of the param."""
    with ExitStack() as stack:
        loop = stack.enter_context(loop_thread()) if request.param == "async" else None

        def make(**options: Any) -> MemseekStore:
            if loop is None:
                return stack.enter_context(MemseekStore(url=service, api_key=tenant.key, **options))
            client = AsyncMemseek(service, tenant.key, retries=3)  # a 429'd burst is repeated (`am`)
            stack.callback(lambda: asyncio.run_coroutine_threadsafe(client.close(), loop).result(10))
            return Driven(MemseekStore(client, **options), loop)  # type: ignore[return-value]

        yield make
    runtime.touches.flush(timeout=30)


@pytest.fixture
def store(make_store: MakeStore) -> MemseekStore:
    """A store with the default options: a search prefix reads exactly its namespace."""
    return make_store()


@pytest.fixture
def nested(make_store: MakeStore) -> MemseekStore:
    """A store whose search prefix also reads the namespaces under it."""
    return make_store(nested_namespaces=True)


def put_all(store: MemseekStore, items: list[tuple[tuple[str, ...], str, dict[str, Any]]]) -> None:
    """Put many items in one batch (one `POST /records`): setup for tests about reading them."""
    store.batch([PutOp(namespace, key, value) for namespace, key, value in items])
