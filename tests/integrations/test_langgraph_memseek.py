"""What `MemseekStore` is in Memseek's terms, against a running service: items as keyed records,
their history and retraction, other readers seeing them, search text and service-side filters,
scans past one page, what each operation costs in requests, and errors (typed, with the
service's `code` and `loc`) on the blocking and the async path."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import pytest
from langgraph.store.base import InvalidNamespaceError
from langgraph.store.base import PutOp

from memseek.client import AsyncMemseek
from memseek.client import AuthenticationError
from memseek.client import InvalidRequest
from memseek.client import Memseek
from memseek.client import MemseekError
from memseek.integrations._store import DELETE_REASON
from memseek.integrations.langgraph import MemseekStore
from tests.conftest import Tenant
from tests.integrations.store_support import MakeStore
from tests.integrations.store_support import put_all
from tests.sdk.flaky import flaky

MARIA = ("contact", "maria")
STORE_SCOPE = {"collections": ["memories"], "types": ["fact"], "entities": ["contact.maria"]}


def history(m: Memseek, key: str) -> list[str]:
    """The ids of every live version of Maria's slot `key`, newest first."""
    result = m.search(mode="recent", scope={**STORE_SCOPE, "versions": "all"}, include=["key"], k=100)
    return [hit.id for hit in result if hit.key == key]


# --- the mapping --------------------------------------------------------------------------------


def test_an_item_is_a_keyed_record(store: MemseekStore, m: Memseek) -> None:
    value = {"text": "Maria prefers email.", "channel": "email", "since": 2021}
    store.put(MARIA, "channel", value)
    include = ["text", "key", "entity", "collection", "type"]
    [hit] = m.search(mode="recent", scope=STORE_SCOPE, include=include)
    assert (hit.entity, hit.key, hit.collection, hit.type) == ("contact.maria", "channel", "memories", "fact")
    assert hit.text == "Maria prefers email."
    record = m.records.get(hit.id)
    assert (record.content, record.status, record.processing) == (value, "active", "ready")
    assert record.current
    item = store.get(MARIA, "channel")
    assert item is not None and item.value == value and item.namespace == MARIA
    assert item.created_at == item.updated_at == record.created_at


def test_history_stays_and_delete_retracts_every_version(store: MemseekStore, m: Memseek) -> None:
    store.put(MARIA, "channel", {"text": "Maria prefers email."})
    store.put(MARIA, "channel", {"text": "Maria prefers phone calls."})
    store.put(MARIA, "budget", {"text": "Maria's budget is 10k."})
    newest, oldest = history(m, "channel")
    assert [m.records.get(i).current for i in (newest, oldest)] == [True, False]
    current = store.get(MARIA, "channel")
    assert current is not None and current.value == {"text": "Maria prefers phone calls."}
    store.delete(MARIA, "channel")
    assert store.get(MARIA, "channel") is None and history(m, "channel") == []
    assert {m.records.get(i).retraction_reason for i in (newest, oldest)} == {DELETE_REASON}
    assert store.get(MARIA, "budget") is not None  # the namespace's other slots are untouched
    store.delete(MARIA, "channel")  # deleting nothing is not an error


def test_other_readers_see_the_items(store: MemseekStore, m: Memseek) -> None:
    store.put(MARIA, "channel", {"text": "Maria prefers email over phone."})
    assert "Maria prefers email over phone." in m.context("how to reach her", entity="contact.maria")


def test_search_text_comes_from_text_fields_else_the_json(make_store: MakeStore, m: Memseek) -> None:
    store = make_store(text_fields=("title", "notes[*]"))
    store.batch([
        PutOp(MARIA, "a", {"title": "Budget", "notes": ["Q3 confirmed", "no travel"]}),
        PutOp(MARIA, "b", {"amount": 10, "currency": "EUR"}),
        PutOp(MARIA, "c", {"title": "ignored", "summary": "Prefers email"}, index=["summary"]),
    ])  # fmt: skip
    texts = {hit.key: hit.text for hit in m.search(mode="recent", scope=STORE_SCOPE, include=["key", "text"])}
    assert texts == {"a": "Budget\nQ3 confirmed\nno travel", "b": '{"amount": 10, "currency": "EUR"}',
                     "c": "Prefers email"}  # fmt: skip


def test_where_fields_are_filtered_by_the_service(make_store: MakeStore) -> None:
    store = make_store(where_fields=["source", "tags"])
    put_all(store, [
        (MARIA, "a", {"text": "from the crm", "source": "crm", "tags": ["vip"]}),
        (MARIA, "b", {"text": "from mail", "source": "mail", "tags": ["vip", "new"]}),
        (MARIA, "c", {"text": "typed in", "tags": []}),
    ])  # fmt: skip
    assert [item.key for item in store.search(MARIA, filter={"source": "crm"})] == ["a"]
    assert [item.key for item in store.search(MARIA, query="crm", filter={"source": {"$eq": "crm"}})] == ["a"]
    assert [item.key for item in store.search(MARIA, filter={"tags": ["vip", "new"]})] == ["b"]
    assert {item.key for item in store.search(MARIA, filter={"source": {"$ne": "crm"}})} == {"b", "c"}
    with pytest.raises(InvalidRequest) as caught:
        make_store(where_fields=["colour"]).search(MARIA, filter={"colour": "red"})
    assert (caught.value.code, caught.value.locs) == ("invalid_request", [["where", "colour"]])


# --- scans past one page ------------------------------------------------------------------------


def test_scans_page_past_100_records(service: str, tenant: Tenant) -> None:
    with flaky(service, failures=0) as proxy, MemseekStore(url=proxy.url, api_key=tenant.key) as store:
        put_all(store, [(MARIA, f"k{i:03}", {"n": i}) for i in range(250)])
        proxy.seen.clear()
        assert store.get(MARIA, "k000").value == {"n": 0}  # type: ignore[union-attr]  # the oldest
        assert [path.split("/")[1] for _, path in proxy.seen] == ["search"] * 3 + ["records"]
        page = store.search(MARIA, offset=240, limit=20)
        assert [item.value["n"] for item in page] == list(range(9, -1, -1))  # newest first
        assert len({item.key for item in store.search(MARIA, limit=300)}) == 250
        store.put(("contact", "bob"), "k", {"n": 1})
        assert store.list_namespaces() == [("contact", "bob"), MARIA]


def test_a_scan_cannot_page_past_101_records_of_one_instant(store: MemseekStore, m: Memseek) -> None:
    """Records another client wrote in one batch share `occurred_at` (the batch's time)."""
    fact = {"collection": "memories", "entity": "contact.maria", "type": "fact", "text": "x"}
    facts = [{**fact, "key": f"k{i}"} for i in range(101)]
    m.records.write(facts, wait=True)
    with pytest.raises(MemseekError) as caught:
        store.get(MARIA, "missing")
    assert caught.value.code == "scan_stalled"


# --- what each operation costs ------------------------------------------------------------------


def test_requests_per_operation(service: str, tenant: Tenant) -> None:
    with flaky(service, failures=0) as proxy, MemseekStore(url=proxy.url, api_key=tenant.key) as store:
        store.put(MARIA, "channel", {"text": "Maria prefers email."})
        store.put(MARIA, "channel", {"text": "Maria prefers phone calls."})
        store.put(MARIA, "budget", {"text": "Maria's budget is 10k."})
        assert [path.split("?")[0] for _, path in proxy.seen] == ["/records"] * 3
        assert all("wait=true" in path for _, path in proxy.seen)
        for call, expected in [
            (lambda: store.get(MARIA, "channel"), ["POST /search", "GET /records/"]),
            (lambda: store.search(MARIA, query="budget", limit=2), ["POST /search", *["GET /records/"] * 2]),
            (lambda: store.search(MARIA, limit=1), ["POST /search", "GET /records/"]),
            (lambda: store.list_namespaces(), ["POST /search"]),
            (lambda: store.delete(MARIA, "channel"), ["POST /search", *["POST /records/"] * 2]),
        ]:
            proxy.seen.clear()
            call()
            assert [f"{method} {route(path)}" for method, path in proxy.seen] == expected


def route(path: str) -> str:
    """`/search`, or `/records/` for any path under it."""
    return path[: path.find("/", 1) + 1] or path


def lazy_store(url: str, api_key: str) -> MemseekStore:
    return MemseekStore(url=url, api_key=api_key, wait=False)


def test_without_wait_a_put_returns_before_processing(service: str, tenant: Tenant) -> None:
    """The write is sent without `wait`; the value becomes readable once the worker processed it."""
    with flaky(service, failures=0) as proxy, lazy_store(proxy.url, tenant.key) as lazy:
        lazy.put(MARIA, "channel", {"text": "Maria prefers email."})
        assert proxy.seen == [("POST", "/records")]
        deadline = time.monotonic() + 30
        while lazy.get(MARIA, "channel") is None and time.monotonic() < deadline:
            time.sleep(0.05)
        assert lazy.get(MARIA, "channel") is not None


# --- clients ------------------------------------------------------------------------------------


def test_a_blocking_client_serves_the_async_methods(m: Memseek) -> None:
    store = MemseekStore(m)
    asyncio.run(store.aput(MARIA, "channel", {"text": "Maria prefers email."}))
    item = asyncio.run(store.aget(MARIA, "channel"))
    assert item is not None and item.value == {"text": "Maria prefers email."}
    store.close()
    assert m.health().ok  # a given client stays open


def test_an_owned_async_client_follows_the_event_loop(service: str, tenant: Tenant) -> None:
    with MemseekStore(url=service, api_key=tenant.key) as store:
        asyncio.run(store.aput(MARIA, "channel", {"text": "Maria prefers email."}))
        assert asyncio.run(store.aget(MARIA, "channel")) is not None  # another loop, another client


@pytest.mark.anyio
async def test_an_async_client_has_no_blocking_path(am: AsyncMemseek) -> None:
    store = MemseekStore(am)
    await store.aput(MARIA, "channel", {"text": "Maria prefers email."})
    with pytest.raises(TypeError, match="AsyncMemseek"):
        store.get(MARIA, "channel")


# --- errors -------------------------------------------------------------------------------------


PUT = lambda s: s.put(MARIA, "k", {"v": 1})  # noqa: E731


@pytest.mark.parametrize(
    ("options", "call", "locs"),
    [
        pytest.param({}, lambda s: s.put(("x" * 300,), "k", {}), [["records", 0, "entity"]], id="long-ns"),
        pytest.param({}, lambda s: s.put(MARIA, " ", {"v": 1}), [["records", 0, "key"]], id="blank-key"),
        pytest.param({}, lambda s: s.put(MARIA, "k", {"v": float("nan")}), [["body"]], id="nan-value"),
        # Issue 41 "Done when": "bad input at every interface gives a typed error ... never a
        # traceback" — a value that is not a dict is the caller's error at ["value"].
        pytest.param({}, lambda s: s.put(MARIA, "k", "text"), [["value"]], id="value-not-a-dict"),
        pytest.param({}, lambda s: s.put(MARIA, "k", [["a", 1]]), [["value"]], id="value-a-list"),
        pytest.param({"collection": "no_such"}, PUT, [["records", 0, "collection"]], id="unknown-collection"),
        pytest.param({"collection": "dependencies", "record_type": "link"}, PUT, [["records", 0, "key"]],
                     id="unkeyed-collection"),
        pytest.param({}, lambda s: s.search(MARIA, query="x" * 9000), [["q"]], id="long-query"),
        pytest.param({}, lambda s: s.search(MARIA, query="x", limit=90, offset=20), [["limit"]], id="window"),
        pytest.param({}, lambda s: s.search(MARIA, offset=-1), [["offset"]], id="negative-offset"),
        pytest.param({}, lambda s: s.search(MARIA, filter={"n": {"$in": [1]}}), [["filter", "n"]], id="op"),
    ],
)  # fmt: skip
def test_bad_input_is_a_typed_error_with_the_loc(
    make_store: MakeStore, options: dict[str, Any], call: Any, locs: list[list[Any]]
) -> None:
    with pytest.raises(InvalidRequest) as caught:
        call(make_store(**options))
    assert (caught.value.code, caught.value.locs) == ("invalid_request", locs)


def test_too_many_namespaces_under_a_prefix(make_store: MakeStore) -> None:
    nested = make_store(nested_namespaces=True)
    put_all(nested, [(("users", f"u{i}"), "k", {"v": i}) for i in range(101)])
    with pytest.raises(InvalidRequest) as caught:
        nested.search(("users",))
    assert caught.value.locs == [["namespace_prefix"]]
    assert len(nested.search(("users", "u7"))) == 1


def test_namespaces_ttl_and_keys_refused_before_sending(make_store: MakeStore, service: str) -> None:
    with pytest.raises(InvalidNamespaceError):
        make_store(separator="/").put(("people", "maya/acme"), "k", {"v": 1})
    with pytest.raises(InvalidNamespaceError):
        make_store().batch([PutOp(("the", "thing.about"), "k", {"v": 1})])
    with pytest.raises(NotImplementedError):
        make_store().put(MARIA, "k", {"v": 1}, ttl=5)
    with pytest.raises(AuthenticationError), MemseekStore(url=service, api_key="msk_wrong") as stranger:
        stranger.get(MARIA, "k")
    with pytest.raises(TypeError, match="url="):
        MemseekStore(service)  # type: ignore[arg-type]  # a URL where the client goes
