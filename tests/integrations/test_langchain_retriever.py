"""`MemseekRetriever` against a running service: views and search requests, sync and async, the
document mapping, the clients it can be given, and errors that stay the SDK's typed errors."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from langchain_core.documents import Document
from pydantic import ValidationError

from memseek.client import AsyncMemseek
from memseek.client import InvalidRequest
from memseek.client import Memseek
from memseek.client import NotFound
from memseek.integrations.langchain import MemseekRetriever
from tests.conftest import Tenant
from tests.sdk.flaky import flaky
from tests.sdk.support import BOB
from tests.sdk.support import MARIA
from tests.sdk.support import event
from tests.sdk.support import reflection

MARIA_EVENTS = {"collections": ["customer_events"], "entities": [MARIA]}
NOWHERE = "http://127.0.0.1:9"
FUSED: dict[str, Any] = {
    "sources": [
        {"name": "events", "mode": "hybrid", "scope": MARIA_EVENTS},
        {"name": "reflections", "mode": "vector", "scope": {**MARIA_EVENTS, "collections": ["reflections"]}},
    ],
    "fuse": {"kind": "rrf"},
    "k": 3,
}


@pytest.fixture
def written(m: Memseek) -> dict[str, str]:
    """Maria's two events and a reflection, Bob's event; their ids by a short name."""
    records = m.records.write(
        [
            event("Maria confirmed the Q3 budget.", content={"channel": "email"}, key="budget"),
            event("Maria asked about the budget for training.", content={"channel": "call"}),
            event("Bob confirmed the budget too.", BOB),
            reflection("Maria cares about the budget above all."),
        ],
        wait=True,
    )
    return dict(zip(["confirmed", "training", "bob", "reflection"], [w.id for w in records], strict=True))


def view_retriever(client: Memseek | AsyncMemseek) -> MemseekRetriever:
    return MemseekRetriever(client=client, view="customer_context", parameters={"entity": MARIA})


def search_retriever(client: Memseek | AsyncMemseek) -> MemseekRetriever:
    search = {"mode": "hybrid", "scope": MARIA_EVENTS, "fields": ["channel"]}
    return MemseekRetriever(client=client, search=search)


def check_view_documents(docs: list[Document], m: Memseek, written: dict[str, str]) -> None:
    """The view's hits, ranked; text and metadata completed from the records, since
    `customer_context` includes no text. (Reads touch records, and the view ranks by recency of
    access too, so two calls may order the same hits differently: the order is not compared.)"""
    assert {doc.id for doc in docs} == {written["confirmed"], written["training"]}
    assert [doc.metadata["rank"] for doc in docs] == [1, 2] and docs[0].metadata["score"] == 1.0
    confirmed = next(doc for doc in docs if doc.id == written["confirmed"])
    assert confirmed.page_content == "Maria confirmed the Q3 budget."
    record = m.records.get(written["confirmed"])
    assert confirmed.metadata == {
        "id": written["confirmed"], "rank": confirmed.metadata["rank"], "score": confirmed.metadata["score"],
        "rank_score": confirmed.metadata["rank_score"], "collection": "customer_events", "entity": MARIA,
        "type": "event", "key": "budget", "occurred_at": record.occurred_at.isoformat(),  # type: ignore[union-attr]
        "view": "customer_context", "view_version": 1,
    }  # fmt: skip
    assert isinstance(confirmed.metadata["rank_score"], float)


def check_search_documents(docs: list[Document], written: dict[str, str]) -> None:
    """Hits of the search request, `text` and the metadata included although the request did not
    ask for them; the declared field it asked for."""
    assert {doc.id for doc in docs} == {written["confirmed"], written["training"]}
    by_id = {doc.id: doc for doc in docs}
    confirmed = by_id[written["confirmed"]]
    assert confirmed.page_content == "Maria confirmed the Q3 budget."
    assert confirmed.metadata["fields"] == {"channel": "email"}
    assert (confirmed.metadata["collection"], confirmed.metadata["entity"]) == ("customer_events", MARIA)
    assert [doc.metadata["rank"] for doc in docs] == [1, 2] and docs[0].metadata["score"] == 1.0
    assert "view" not in confirmed.metadata and "source_ranks" not in confirmed.metadata


# --- sync ---------------------------------------------------------------------------------------


def test_a_view_gives_its_hits_as_documents(m: Memseek, written: dict[str, str]) -> None:
    check_view_documents(view_retriever(m).invoke("budget"), m, written)


def test_a_view_without_task_takes_the_query_in_its_one_free_string_parameter(m: Memseek) -> None:
    """Issue 41 §4: a retriever "over a view (name + fixed parameters, query parameter name)" —
    left at its default, the query goes into `task` where the view has it, else into the view's
    one string parameter the fixed ones leave free (`recall`'s `query`)."""
    entity = "contact.retriever-default"
    (note,) = m.writes.call("remember", entity=entity, text="Prefers invoices by post.", wait=True).records
    docs = MemseekRetriever(client=m, view="recall", parameters={"entity": entity}).invoke("invoices")
    assert [(doc.id, doc.metadata["view"]) for doc in docs] == [(note.id, "recall")]


def test_records_are_read_only_for_hits_without_text(
    service: str, tenant: Tenant, written: dict[str, str]
) -> None:
    with flaky(service, failures=0) as proxy, Memseek(proxy.url, tenant.key) as counted:
        view_retriever(counted).invoke("budget")
        reads = sorted(path for method, path in proxy.seen if path.startswith("/records/"))
        assert reads == sorted(f"/records/{written[name]}" for name in ("confirmed", "training"))
        proxy.seen.clear()
        including = MemseekRetriever(client=counted, view="recent_activity", query_parameter="channels",
                                     parameters={"entity": MARIA, "k": 2})  # fmt: skip
        [doc] = including.invoke(["email"])  # type: ignore[arg-type]  # this view's query is a list
    assert proxy.seen == [("POST", "/views/recent_activity/query")]  # the contracts were cached
    assert (doc.id, doc.page_content) == (written["confirmed"], "Maria confirmed the Q3 budget.")
    assert (doc.metadata["type"], doc.metadata["view"]) == ("event", "recent_activity")


def test_a_search_request_gives_its_hits_as_documents(m: Memseek, written: dict[str, str]) -> None:
    check_search_documents(search_retriever(m).invoke("budget"), written)


def test_every_field_a_hit_carries_is_metadata(m: Memseek, written: dict[str, str]) -> None:
    """Issue 41 §4: "returning `Document`s with the hit's fields as metadata" — whatever the
    request includes (`scores`, `status`, `created_at`, `run_id`, ...) is there, as the JSON has it."""
    include = ["scores", "status", "depth", "created_at", "run_id", "collection_version"]
    search = {"mode": "hybrid", "scope": MARIA_EVENTS, "include": include}
    docs = MemseekRetriever(client=m, search=search).invoke("budget")
    confirmed = next(doc for doc in docs if doc.id == written["confirmed"])
    hit = next(h for h in m.search(q="budget", **search) if h.id == written["confirmed"])
    assert {name: confirmed.metadata[name] for name in include} == {name: hit.raw[name] for name in include}
    assert (confirmed.metadata["status"], confirmed.metadata["depth"]) == ("active", 0)


def test_a_combined_search_reports_source_ranks(m: Memseek, written: dict[str, str]) -> None:
    docs = MemseekRetriever(client=m, search={**FUSED, "include": ["created_at"]}).invoke("budget")
    ranks = {doc.id: doc.metadata["source_ranks"] for doc in docs}
    assert set(ranks) == {written["confirmed"], written["training"], written["reflection"]}
    assert list(ranks[written["reflection"]]) == ["reflections"]
    assert all(doc.page_content and doc.metadata["entity"] == MARIA for doc in docs)


def test_url_and_api_key_build_the_clients(
    service: str, tenant: Tenant, m: Memseek, written: dict[str, str]
) -> None:
    retriever = MemseekRetriever(url=service, api_key=tenant.key, view="customer_context",
                                 parameters={"entity": MARIA})  # fmt: skip
    assert tenant.key not in repr(retriever)
    check_view_documents(retriever.invoke("budget"), m, written)
    check_view_documents(asyncio.run(retriever.ainvoke("budget")), m, written)
    check_view_documents(asyncio.run(retriever.ainvoke("budget")), m, written)  # a new event loop


def test_a_blocking_client_serves_the_async_path_too(m: Memseek, written: dict[str, str]) -> None:
    check_search_documents(asyncio.run(search_retriever(m).ainvoke("budget")), written)


# --- async --------------------------------------------------------------------------------------


@pytest.mark.anyio
async def test_async_view_and_search(am: AsyncMemseek, m: Memseek, written: dict[str, str]) -> None:
    check_view_documents(await view_retriever(am).ainvoke("budget"), m, written)
    check_search_documents(await search_retriever(am).ainvoke("budget"), written)
    many = await view_retriever(am).abatch(["budget", "training"])
    assert [{doc.id for doc in docs} for docs in many] == [{written["confirmed"], written["training"]}] * 2


@pytest.mark.anyio
async def test_an_async_client_has_no_blocking_path(am: AsyncMemseek) -> None:
    with pytest.raises(TypeError, match="AsyncMemseek"):
        view_retriever(am).invoke("budget")


# --- errors -------------------------------------------------------------------------------------


def test_bad_view_parameters_are_the_services_error(m: Memseek) -> None:
    parameters = {"entity": MARIA, "colour": "red"}
    retriever = MemseekRetriever(client=m, view="customer_context", parameters=parameters)
    with pytest.raises(InvalidRequest) as caught:
        retriever.invoke("budget")
    assert (caught.value.code, caught.value.locs) == ("invalid_request", [["parameters", "colour"]])
    with pytest.raises(NotFound) as missing:
        MemseekRetriever(client=m, view="no_such_view").invoke("budget")
    assert missing.value.code == "not_found"


@pytest.mark.parametrize(
    ("search", "query", "locs"),
    [
        pytest.param({"mode": "hybrid", "k": 500}, "budget", [["k"]], id="k-too-large"),
        pytest.param({"mode": "hybrid"}, "", [["q"]], id="empty-query"),
        pytest.param({"mode": "hybrid", "include": ["colour"]}, "budget", [["include", 0]], id="bad-include"),
    ],
)
def test_bad_search_requests_are_the_services_error(
    m: Memseek, search: dict[str, Any], query: str, locs: list[list[Any]]
) -> None:
    with pytest.raises(InvalidRequest) as caught:
        MemseekRetriever(client=m, search=search).invoke(query)
    assert (caught.value.status, caught.value.code, caught.value.locs) == (422, "invalid_request", locs)


@pytest.mark.anyio
async def test_async_errors_are_the_same(am: AsyncMemseek) -> None:
    with pytest.raises(InvalidRequest) as caught:
        await MemseekRetriever(client=am, search={"mode": "hybrid", "k": 0}).ainvoke("budget")
    assert caught.value.locs == [["k"]]


@pytest.mark.parametrize(
    "arguments",
    [
        pytest.param({}, id="neither"),
        pytest.param({"view": "customer_context", "search": {"mode": "hybrid"}}, id="both"),
        pytest.param({"search": {"mode": "hybrid", "q": "budget"}}, id="search-sets-q"),
        pytest.param({"view": "customer_context", "parameters": {"task": "x"}}, id="parameters-set-query"),
        pytest.param({"view": "v", "url": NOWHERE, "client": Memseek(NOWHERE)}, id="two-clients"),
    ],
)
def test_a_retriever_needs_one_source_and_one_client(arguments: dict[str, Any]) -> None:
    with pytest.raises((ValidationError, ValueError)):
        MemseekRetriever(**arguments)
