"""The SDK's public surface, written once for both clients.

Each method is an `@endpoint`: a function returning an operation (`_ops`). On a `Memseek`
(sync) the method runs the operation and returns its result; on an `AsyncMemseek` it returns a
coroutine of that result. The type checker sees both, through `Endpoint.__get__`'s overloads
on the client's mode (`Sync` or `Async`).
"""

from __future__ import annotations

import builtins
import inspect
from collections.abc import AsyncIterator
from collections.abc import Callable
from collections.abc import Coroutine
from collections.abc import Iterator
from collections.abc import Mapping
from collections.abc import Sequence
from typing import Any
from typing import Concatenate
from typing import Generic
from typing import ParamSpec
from typing import TypeVar
from typing import overload

from memseek.client import _ops
from memseek.client._http import Config
from memseek.client._ops import Op
from memseek.client._ops import Pages
from memseek.client._ops import RecordId
from memseek.client._params import ViewCache
from memseek.client.models import Erased
from memseek.client.models import Erasure
from memseek.client.models import Health
from memseek.client.models import Page
from memseek.client.models import Record
from memseek.client.models import SearchResult
from memseek.client.models import ViewInfo
from memseek.client.models import ViewResult
from memseek.client.models import WriteCall
from memseek.client.models import WriteInfo
from memseek.client.models import Written

P = ParamSpec("P")
T = TypeVar("T")


class Sync:
    """Mode marker: endpoints return their results."""


class Async:
    """Mode marker: endpoints return coroutines of their results."""


M = TypeVar("M", Sync, Async)
Runner = Callable[[Op[Any]], Any]


class Surface(Generic[M]):
    """Something endpoints are bound on: a client or one of its namespaces, with its runner."""

    def __init__(self, run: Runner) -> None:
        self._run = run


def _without_self(build: Callable[..., Any]) -> inspect.Signature:
    """The signature of `build` less its first parameter: what its bound method takes."""
    signature = inspect.signature(build)
    return signature.replace(parameters=list(signature.parameters.values())[1:])


def _presented_as(method: Callable[..., Any], build: Callable[..., Any], signature: inspect.Signature) -> Any:
    """`method` under the name, docstring and signature of the function it runs, so that `help()`
    and editors show a client's method as it was written."""
    method.__name__, method.__qualname__ = build.__name__, build.__qualname__
    method.__doc__, method.__signature__ = build.__doc__, signature  # type: ignore[attr-defined]
    return method


class Endpoint(Generic[P, T]):
    """A method written once as `(self, ...) -> Op[T]`, run by the instance's runner."""

    def __init__(self, build: Callable[Concatenate[Any, P], Op[T]]) -> None:
        self.build, self.signature = build, _without_self(build)

    @overload
    def __get__(self, instance: None, owner: type[Any]) -> Endpoint[P, T]: ...
    @overload
    def __get__(self, instance: Surface[Sync], owner: type[Any]) -> Callable[P, T]: ...
    @overload
    def __get__(self, instance: Surface[Async], owner: type[Any]) -> Callable[P, Coroutine[Any, Any, T]]: ...
    def __get__(self, instance: Surface[Any] | None, owner: type[Any]) -> Any:
        if instance is None:
            return self
        build, run = self.build, instance._run

        def method(*args: Any, **kwargs: Any) -> Any:
            return run(build(instance, *args, **kwargs))

        return _presented_as(method, build, self.signature)


def endpoint(build: Callable[Concatenate[Any, P], Op[T]]) -> Endpoint[P, T]:
    """Decorate a `(self, ...) -> Op[T]` function as a method of both clients."""
    return Endpoint(build)


class Paged(Generic[P, T]):
    """A listing written once as `(self, ...) -> Pages[T]`: on a `Memseek` the method returns an
    iterator over every item, on an `AsyncMemseek` an async iterator; either reads a page when
    the items before it are used up, following `next_cursor` to the last page."""

    def __init__(self, build: Callable[Concatenate[Any, P], Pages[T]]) -> None:
        self.build, self.signature = build, _without_self(build)

    @overload
    def __get__(self, instance: None, owner: type[Any]) -> Paged[P, T]: ...
    @overload
    def __get__(self, instance: Surface[Sync], owner: type[Any]) -> Callable[P, Iterator[T]]: ...
    @overload
    def __get__(self, instance: Surface[Async], owner: type[Any]) -> Callable[P, AsyncIterator[T]]: ...
    def __get__(self, instance: Surface[Any] | None, owner: type[Any]) -> Any:
        if instance is None:
            return self
        build, run = self.build, instance._run
        follow = _follow_async if inspect.iscoroutinefunction(run) else _follow

        def method(*args: Any, **kwargs: Any) -> Any:
            return follow(run, build(instance, *args, **kwargs))

        return _presented_as(method, build, self.signature)


def _follow(run: Runner, page: Pages[T]) -> Iterator[T]:
    cursor: str | None = None
    while True:
        found: Page[T] = run(page(cursor))
        yield from found.items
        if found.next_cursor is None:
            return
        cursor = found.next_cursor


async def _follow_async(run: Runner, page: Pages[T]) -> AsyncIterator[T]:
    cursor: str | None = None
    while True:
        found: Page[T] = await run(page(cursor))
        for item in found.items:
            yield item
        if found.next_cursor is None:
            return
        cursor = found.next_cursor


def paged(build: Callable[Concatenate[Any, P], Pages[T]]) -> Paged[P, T]:
    """Decorate a `(self, ...) -> Pages[T]` function as a listing of both clients."""
    return Paged(build)


@endpoint
def forget_entity(
    self: Surface[Any],
    entity: str,
    collection: str | None = None,
    reason: str | None = None,
    wait: bool = True,
    timeout: float | None = None,
) -> Op[Erasure]:
    """Erase every record about `entity` (`DELETE /entities/{entity}`), in `collection`
    only when given, and the links naming it. A large entity is erased by the service's
    workers: `wait=True` polls its erasure until it is done (or for at most `timeout`
    seconds, then returns it running), `wait=False` returns it running at once.
    `NotFound` when the workspace holds nothing about the entity.

    >>> m.entities.forget("contact.maria", reason="erasure request").erased
    12
    """
    return _ops.forget(entity, collection, reason, wait, timeout)


class Records(Surface[M]):
    """`client.records`: write, read and change the lifecycle of records."""

    @endpoint
    def write(
        self,
        records: Mapping[str, Any] | Sequence[Mapping[str, Any]],
        wait: bool = False,
        timeout: float | None = None,
    ) -> Op[builtins.list[Written]]:
        """Write one record or a batch of 1–1,000, atomically (`POST /records`): one `Written`
        per record, in input order. `wait=True` returns once they are processed (searchable)
        or `timeout` seconds (default 10, at most 60) passed; check each one's `processing`.

        Retried on a 503 or a lost connection only when every record has an `idempotency_key`.

        >>> [note] = m.records.write(
        ...     {"collection": "memories", "entity": "contact.maria", "type": "note",
        ...      "text": "Maria prefers email.", "idempotency_key": "crm-note-1"},
        ...     wait=True,
        ... )
        >>> note.processing
        'ready'
        """
        return _ops.write_records(records, wait, timeout)

    @endpoint
    def get(self, id: RecordId) -> Op[Record]:
        """The whole record in any state (`GET /records/{id}`); `NotFound` for an unknown id,
        a malformed one or another workspace's.

        >>> m.records.get(note.id).text
        'Maria prefers email.'
        """
        return _ops.get_record(id)

    @endpoint
    def retract(self, id: RecordId, reason: str) -> Op[Record]:
        """Retract a record (`POST /records/{id}/retract`): no read returns it any more; the
        previous value of its keyed slot becomes current again. Returns the record after.

        >>> m.records.retract(note.id, "entered by mistake").retraction_reason
        'entered by mistake'
        """
        return _ops.record_action(id, "retract", reason)

    @endpoint
    def approve(self, id: RecordId) -> Op[Record]:
        """Approve a draft into the active lane (`POST /records/{id}/approve`), where it becomes
        the current value of its slot.

        >>> m.records.approve(draft.id).status
        'active'
        """
        return _ops.record_action(id, "approve")

    @endpoint
    def reject(self, id: RecordId, reason: str) -> Op[Record]:
        """Reject (retract) a draft (`POST /records/{id}/reject`).

        >>> m.records.reject(draft.id, "not confirmed").retracted_at is not None
        True
        """
        return _ops.record_action(id, "reject", reason)

    @endpoint
    def delete(self, id: RecordId, reason: str | None = None) -> Op[Erased]:
        """Erase a record (`DELETE /records/{id}`): its row, postings, touches and automatic
        links are deleted, not flagged; a keyed slot falls back to its previous value. `reason`
        is kept in the erasure log. `NotFound` for an id the workspace does not hold.

        >>> m.records.delete(note.id, reason="user request").counts
        {'memories': 1}
        """
        return _ops.erase_record(id, reason)

    forget = forget_entity
    """Erase every record about an entity: `entities.forget`, here too beside the other record
    lifecycle calls (`delete`, `list`), where a caller looks for it."""

    @paged
    def list(
        self,
        entity: str | None = None,
        collection: str | None = None,
        type: str | None = None,
        status: str | None = None,
        key: str | None = None,
        order: str | None = None,
        page_size: int | None = None,
    ) -> Pages[Record]:
        """Every record in every state (`GET /records`), newest first (`order="oldest"` for the
        other way), filtered by exact matches; iterate it, pages of `page_size` (default 50, at
        most 500) are read as the items are used up.

        >>> [r.text for r in m.records.list(entity="contact.maria")][:1]
        ['Maria prefers email.']
        """
        filters = {"entity": entity, "collection": collection, "type": type, "status": status, "key": key}
        return _ops.pages(
            "/records", "records", Record.from_json, {**filters, "order": order, "limit": page_size}
        )


class Entities(Surface[M]):
    """`client.entities`: what is about one entity."""

    forget = forget_entity


class Erasures(Surface[M]):
    """`client.erasures`: the erasure log."""

    @paged
    def list(self, page_size: int | None = None) -> Pages[Erasure]:
        """Every erasure of the workspace (`GET /erasures`), newest first; iterate it.

        >>> [e.kind for e in m.erasures.list()][:2]
        ['entity', 'record']
        """
        return _ops.pages("/erasures", "erasures", Erasure.from_json, {"limit": page_size})

    @endpoint
    def get(self, id: RecordId) -> Op[Erasure]:
        """One erasure (`GET /erasures/{id}`): its state and counts so far.

        >>> m.erasures.get(erasure.id).state
        'done'
        """
        return _ops.get_erasure(id)


class Views(Surface[M]):
    """`client.views`: discover views and call them by name."""

    def __init__(self, run: Runner, cache: ViewCache) -> None:
        super().__init__(run)
        self._cache = cache

    @endpoint
    def list(self) -> Op[builtins.list[ViewInfo]]:
        """Every loaded view version and its input contract (`GET /views`), inactive ones too.

        >>> [(v.name, v.version) for v in m.views.list() if v.active][:2]
        [('customer_context', 1), ('upcoming_calendar', 1)]
        """
        return _ops.list_views()

    @endpoint
    def query(
        self, name: str, parameters: Mapping[str, Any] | None = None, /, **params: Any
    ) -> Op[ViewResult]:
        """Run the active version of view `name` (`POST /views/{name}/query`) with its
        parameters, as keywords or a mapping (or both; keywords win).

        The parameters are first checked against the view's published `input_schema`: a bad
        call raises `InvalidRequest` (422, `loc` `["parameters", NAME]`) exactly as the service
        would, without sending. Values may be `datetime`s (sent as ISO 8601).

        >>> result = m.views.query("customer_context", entity="contact.maria", task="Q3 budget")
        >>> result.view.version, result.rendered.splitlines()[0][:4]
        (1, '[id=')
        """
        return _ops.query_view(self._cache, name, {**(parameters or {}), **params})


class Writes(Surface[M]):
    """`client.writes`: the catalog's typed write contracts (`GET /writes`, `POST /writes/{name}`)."""

    @endpoint
    def list(self) -> Op[builtins.list[WriteInfo]]:
        """Every loaded write contract version and its input contract (`GET /writes`).

        >>> [w.name for w in m.writes.list() if w.active]
        ['propose_fact', 'remember']
        """
        return _ops.list_writes()

    @endpoint
    def call(
        self,
        name: str,
        parameters: Mapping[str, Any] | None = None,
        /,
        *,
        idempotency_key: str | None = None,
        wait: bool = False,
        timeout: float | None = None,
        **params: Any,
    ) -> Op[WriteCall]:
        """Write through the active version of write contract `name` (`POST /writes/{name}`)
        with its parameters, as keywords or a mapping (or both; keywords win). Retried on a 503
        or a lost connection only with an `idempotency_key`; `wait=True` returns once the record
        is processed or `timeout` seconds passed, as `records.write` does. A contract parameter
        named like one of these keywords goes in the mapping.

        >>> called = m.writes.call("remember", entity="contact.maria", text="Prefers email.", wait=True)
        >>> called.write.version, called.records[0].processing
        (1, 'ready')
        """
        arguments = {**(parameters or {}), **params}
        return _ops.call_write(name, arguments, idempotency_key, wait, timeout)


class ClientSurface(Surface[M]):
    """What `Memseek` and `AsyncMemseek` share: configuration, the namespaces and the top-level
    calls. A client adds the IO: `_connect` opens its httpx client, `_drive` runs operations."""

    def __init__(
        self,
        base_url: str | None = None,
        api_key: str | None = None,
        *,
        timeout: float = 30.0,
        retries: int = 2,
        backoff: float = 0.5,
        headers: Mapping[str, str] | None = None,
    ) -> None:
        options = {"timeout": timeout, "retries": retries, "backoff": backoff, "headers": dict(headers or {})}
        self._config = Config.resolve(base_url, api_key, **options)
        self._connect()
        super().__init__(self._drive)
        self.records: Records[M] = Records(self._drive)
        self.entities: Entities[M] = Entities(self._drive)
        self.erasures: Erasures[M] = Erasures(self._drive)
        self.views: Views[M] = Views(self._drive, ViewCache())
        self.writes: Writes[M] = Writes(self._drive)

    @property
    def base_url(self) -> str:
        """The service this client calls."""
        return self._config.base_url

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.base_url!r})"

    def _connect(self) -> None:
        raise NotImplementedError

    def _drive(self, op: Op[Any]) -> Any:
        raise NotImplementedError

    @endpoint
    def health(self) -> Op[Health]:
        """Database reachability and the catalog hash (`GET /health`, no key needed); a
        degraded service answers `Health(status="degraded")` rather than raising.

        >>> m.health().ok
        True
        """
        return _ops.health()

    @endpoint
    def search(self, spec: Mapping[str, Any] | None = None, /, **fields: Any) -> Op[SearchResult]:
        """Run a search request (`POST /search`): the spec as a mapping, as keywords, or both
        (keywords win). Single or combined (`sources`); any key the service accepts, such as a
        caller's own `vector` with its `embedding_model`, is passed through.

        >>> result = m.search(q="budget", mode="hybrid", scope={"entities": ["contact.maria"]},
        ...                   include=["text"], k=5)
        >>> [(hit.rank, hit.text) for hit in result][:1]
        [(1, 'Maria confirmed the Q3 budget.')]
        """
        return _ops.search({**(spec or {}), **fields})

    @endpoint
    def context(
        self,
        q: str,
        entity: str | None = None,
        collection: str | None = None,
        k: int | None = None,
        fence_tag: str | None = None,
        fence_preamble: str | None = None,
    ) -> Op[str]:
        """The rendered rows of a hybrid search, ready for a prompt (`GET /context`).

        >>> print(m.context("budget", entity="contact.maria", fence_tag="records"))
        <records untrusted="true">
        [id=…] 2026-07-01T10:22Z | customer_events/event | Maria confirmed the Q3 budget.
        </records>
        """
        params = {"q": q, "entity": entity, "collection": collection, "k": k}
        return _ops.context({**params, "fence_tag": fence_tag, "fence_preamble": fence_preamble})

    @endpoint
    def request(
        self,
        method: str,
        path: str,
        *,
        params: Mapping[str, Any] | None = None,
        json: Any = None,
        retry: bool | None = None,
    ) -> Op[Any]:
        """Call any route with this client's key, retries and errors: the parsed JSON body (or
        the text of a non-JSON one). `retry` defaults to true for GET only.

        >>> m.request("GET", "/rank/schema")["limits"]
        {'max_nodes': 16, 'max_levels': 5}
        """
        return _ops.raw_request(method, path, params, json, retry)
