"""LangGraph's long-term memory store on Memseek: `MemseekStore` (`pip install 'memseek[langgraph]'`).

>>> from memseek.integrations.langgraph import MemseekStore
>>> store = MemseekStore(url="http://127.0.0.1:8000", api_key="msk_...")
>>> store.put(("contact", "maria"), "channel", {"text": "Maria prefers email."})
>>> store.get(("contact", "maria"), "channel").value
{'text': 'Maria prefers email.'}
>>> [item.key for item in store.search(("contact", "maria"), query="how to reach her")]
['channel']

The mapping, the cost of each operation and what the store cannot do are in
docs/integrations.md; `_store` holds what each operation does.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable
from collections.abc import Sequence
from types import TracebackType

from langgraph.store.base import BaseStore
from langgraph.store.base import Op
from langgraph.store.base import Result

from memseek.client import AsyncMemseek
from memseek.client import Memseek
from memseek.integrations import _store
from memseek.integrations._clients import Clients
from memseek.integrations._plan import arun
from memseek.integrations._plan import run
from memseek.integrations._store import Layout

SEPARATOR = "."
"""Joins namespace labels into an entity: LangGraph forbids it inside a label, so the join is
unambiguous, and `("contact", "maria")` is the entity `contact.maria` other Memseek readers
(views, `GET /context`) name."""


class MemseekStore(BaseStore):
    """A LangGraph `BaseStore` whose items are keyed records of one Memseek collection.

    A namespace is an entity (its labels joined by `separator`), a key is the record's `key` (the
    newest record of a slot is its current value, earlier ones stay as history), a value is the
    record's `content`, and its search text is taken from `text_fields` (LangGraph's path syntax;
    the JSON of the value when they hold no text). Items are records of `collection` with type
    `record_type` (the reference catalog's `memories` collection and its `fact` type by default);
    the collection must allow keys.

    - `put` writes a record (`POST /records`); with `wait` (default) it returns once the value is
      searchable, waiting at most `wait_timeout` seconds (the service's default when None).
      `wait=False` returns as soon as the record is stored: until it is processed, a `get` or
      `search` of its slot finds nothing (a newer value being processed hides the older one).
    - `get` scans the namespace newest first until the key appears, then reads the record.
    - `search(prefix, query=...)` is one hybrid search; without a query, the newest values first.
      A prefix reads exactly that namespace (`()`: every namespace), or with
      `nested_namespaces=True` it and every namespace under it, found by listing the store.
      `filter` keys among `where_fields` (declared filterable fields of the collection) are
      applied by the service; the others to the values read.
    - `delete` (a put of None) retracts every version of the slot.
    - `list_namespaces` scans the whole store.

    Clients: `client` (a `Memseek`, an `AsyncMemseek`), or `url` and `api_key` (defaulting to
    `MEMSEEK_URL` and `MEMSEEK_API_KEY`) to build its own. Given only a `Memseek`, the async
    methods run the blocking ones in a worker thread; given only an `AsyncMemseek`, only the async
    methods work. The service's errors are raised as the SDK's typed errors, unchanged.
    """

    supports_ttl = False

    def __init__(
        self,
        client: Memseek | AsyncMemseek | None = None,
        *,
        url: str | None = None,
        api_key: str | None = None,
        collection: str = "memories",
        record_type: str = "fact",
        separator: str = SEPARATOR,
        text_fields: Sequence[str] = ("text",),
        where_fields: Iterable[str] = (),
        nested_namespaces: bool = False,
        wait: bool = True,
        wait_timeout: float | None = None,
    ) -> None:
        if not separator:
            raise ValueError("separator must not be empty")
        self._clients = Clients(client, url, api_key)
        self.layout = Layout(
            collection=collection,
            record_type=record_type,
            separator=separator,
            text_fields=tuple(text_fields),
            where_fields=frozenset(where_fields),
            nested_namespaces=nested_namespaces,
            wait=wait,
            wait_timeout=wait_timeout,
        )

    def batch(self, ops: Iterable[Op]) -> list[Result]:
        """Run the operations in order on the blocking client, one result each."""
        return run(_store.batch(self.layout, list(ops)), self._clients.sync())

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        """Run the operations in order on the async client (record reads concurrently)."""
        ops = list(ops)
        client = self._clients.aio()
        if client is None:
            return await asyncio.to_thread(self.batch, ops)
        return await arun(_store.batch(self.layout, ops), client)

    def close(self) -> None:
        """Release the connections of the blocking client the store built (not a given one)."""
        self._clients.close()

    def __enter__(self) -> MemseekStore:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()
