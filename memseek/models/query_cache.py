"""Recent query embeddings, kept per workspace, provider model id and exact query text.

A search embeds its query text with a provider call; the same text searched again soon reuses
the vector. Each `ModelRegistry` holds its own cache (one per runtime, built with it and
cleared when it closes), never the process: two runtimes over different catalogs or providers
share nothing.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from dataclasses import dataclass
from uuid import UUID

QUERY_CACHE_SIZE = 256


@dataclass(frozen=True, slots=True)
class QueryVector:
    """The query's embedding and the model id that produced it (records store the same id)."""

    values: tuple[float, ...]
    model_id: str


QueryKey = tuple[UUID, str, str]
"""(workspace id, the provider's model id, the query text). The workspace is part of the key: a
shared entry would let one workspace tell, by a search answered while the provider is down or
by its timing, that another searched the same words."""


class QueryVectorCache:
    """A thread-safe LRU of query vectors."""

    def __init__(self, size: int = QUERY_CACHE_SIZE) -> None:
        self.size = size
        self._items: OrderedDict[QueryKey, QueryVector] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: QueryKey) -> QueryVector | None:
        with self._lock:
            found = self._items.get(key)
            if found is not None:
                self._items.move_to_end(key)
            return found

    def put(self, key: QueryKey, value: QueryVector) -> None:
        with self._lock:
            self._items[key] = value
            self._items.move_to_end(key)
            while len(self._items) > self.size:
                self._items.popitem(last=False)

    def clear(self) -> None:
        with self._lock:
            self._items.clear()
