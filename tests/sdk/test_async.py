"""`AsyncMemseek`: the same core calls as the sync client, awaited, against the running service."""

from __future__ import annotations

import pytest

from memseek.client import AsyncMemseek
from memseek.client import AuthenticationError
from memseek.client import InvalidRequest
from memseek.client import NotFound
from memseek.client import Unavailable
from memseek.models.local import LocalEmbedder
from tests.conftest import Tenant
from tests.sdk.flaky import flaky
from tests.sdk.support import MARIA
from tests.sdk.support import event
from tests.sdk.support import link
from tests.sdk.support import mirrors_json

pytestmark = pytest.mark.anyio


async def test_write_get_search_context(am: AsyncMemseek) -> None:
    assert (await am.health()).ok
    written = await am.records.write(
        [event("Maria confirmed the Q3 budget."), event("Maria likes tea.")], wait=True
    )
    assert [w.processing for w in written] == ["ready", "ready"]
    record = await am.records.get(written[0].id)
    assert (record.text, record.entity) == ("Maria confirmed the Q3 budget.", MARIA)
    result = await am.search(q="budget", mode="hybrid", include=["text", "occurred_at"], k=1)
    assert result.ids == [written[0].id] and result[0].text == record.text
    mirrors_json(result[0])
    text = await am.context("budget", entity=MARIA, k=1)
    assert text.startswith(f"[id={written[0].id}]")


async def test_search_with_the_callers_vector(am: AsyncMemseek) -> None:
    await am.records.write([event("Maria confirmed the Q3 budget.")], wait=True)
    [vector] = LocalEmbedder().embed(["budget"])
    mine = await am.search(mode="vector", vector=vector, embedding_model="all-MiniLM-L6-v2")
    theirs = await am.search(q="budget", mode="vector")
    assert mine.ids == theirs.ids and len(mine.ids) == 1
    with pytest.raises(InvalidRequest) as caught:
        await am.search(mode="vector", vector=vector[:100], embedding_model="all-MiniLM-L6-v2")
    assert caught.value.locs == [["vector"]]


async def test_views(am: AsyncMemseek) -> None:
    [written] = await am.records.write(event("Maria confirmed the Q3 budget."), wait=True)
    assert "customer_context" in {view.name for view in await am.views.list()}
    result = await am.views.query("customer_context", entity=MARIA, task="budget")
    assert result.ids == [written.id] and result.view.name == "customer_context"
    [edge] = await am.records.write(link("people/maya", "advises", "companies/acme"), wait=True)
    graph = await am.views.query("graph_query", seed="people/maya")
    assert graph.ids == [edge.id] and graph.nodes == ("companies/acme", "people/maya")
    with pytest.raises(InvalidRequest) as caught:
        await am.views.query("customer_context", entity=MARIA, k=3)
    assert caught.value.locs == [["parameters", "k"], ["parameters", "task"]] and caught.value.body is None


async def test_lifecycle(am: AsyncMemseek) -> None:
    draft, other = await am.records.write(
        [event("Budget 10k.", key="budget", status="draft"), event("Budget 20k.", key="alt", status="draft")]
    )
    assert (await am.records.approve(draft.id)).status == "active"
    assert (await am.records.reject(other.id, "unconfirmed")).retraction_reason == "unconfirmed"
    assert (await am.records.retract(draft.id, "wrong")).retracted_at is not None


async def test_errors(am: AsyncMemseek, service: str) -> None:
    with pytest.raises(NotFound):
        await am.records.get("0190a0b1-0000-7000-8000-000000000000")
    with pytest.raises(InvalidRequest) as caught:
        await am.search(q="budget", mode="hybrid", k=0)
    assert caught.value.locs == [["k"]]
    async with AsyncMemseek(service, "msk_not-a-real-key") as stranger:
        with pytest.raises(AuthenticationError):
            await stranger.views.list()


async def test_retries(service: str, tenant: Tenant) -> None:
    with flaky(service, failures=2) as proxy:
        async with AsyncMemseek(proxy.url, tenant.key, retries=2, backoff=0.01) as client:
            assert (await client.search(q="budget", mode="text")).ids == []
            assert len(proxy.seen) == 3
            proxy.failures = 1
            with pytest.raises(Unavailable):
                await client.records.write(event("Maria paid."))
    assert proxy.seen[3:] == [("POST", "/records")]
