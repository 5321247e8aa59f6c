"""The SDK's lifecycle calls against a running service (both clients): `records.delete`,
`records.list` following cursors, `entities.forget` waiting on a background erasure,
`erasures.list` and `erasures.get`, and the errors they raise."""

from __future__ import annotations

import inspect
import time

import pytest
from sqlalchemy.engine import Engine

from memseek.client import AsyncMemseek
from memseek.client import Erased
from memseek.client import Erasure
from memseek.client import InvalidRequest
from memseek.client import Memseek
from memseek.client import NotFound
from memseek.client import Record
from memseek.write import erasures
from tests.conftest import make_tenant
from tests.lifecycle.support import hold
from tests.sdk.support import BOB
from tests.sdk.support import MARIA
from tests.sdk.support import event


@pytest.fixture
def background(monkeypatch: pytest.MonkeyPatch) -> None:
    """Entities of more than 2 records are erased by the service's worker, 2 at a time."""
    monkeypatch.setattr(erasures, "SYNC_LIMIT", 2)
    monkeypatch.setattr(erasures, "BATCH", 2)


def test_delete_erases_and_says_what(m: Memseek) -> None:
    [doomed, kept] = m.records.write([event("Maria's passport"), event("Maria likes tea")])
    erased = m.records.delete(doomed.id, reason="asked")
    assert isinstance(erased, Erased)
    assert (erased.erased, erased.entity, erased.collection, erased.counts) == (
        doomed.id,
        MARIA,
        "customer_events",
        {"customer_events": 1},
    )
    with pytest.raises(NotFound):
        m.records.get(doomed.id)
    with pytest.raises(NotFound):
        m.records.delete(doomed.id)  # already gone
    assert m.records.get(kept.id).text == "Maria likes tea"
    entry = m.erasures.get(erased.erasure_id)
    assert (entry.kind, entry.record_id, entry.reason, entry.done) == ("record", doomed.id, "asked", True)


def test_list_follows_cursors_over_every_page(m: Memseek) -> None:
    written = m.records.write([event(f"n{n}") for n in range(7)] + [event("bob", BOB)])
    listed = m.records.list(entity=MARIA, page_size=3)
    assert inspect.isgenerator(listed)
    records = list(listed)
    assert all(isinstance(r, Record) for r in records)
    assert [r.id for r in records] == [w.id for w in written[:7]][::-1]
    assert [r.id for r in m.records.list(order="oldest", page_size=2)] == [w.id for w in written]
    with pytest.raises(InvalidRequest) as caught:
        list(m.records.list(page_size=501))
    assert caught.value.locs == [["query", "limit"]]


def test_forget_waits_for_a_background_erasure(m: Memseek, background: None) -> None:
    m.records.write([event(f"n{n}") for n in range(5)] + [event("bob", BOB)])
    done = m.entities.forget(MARIA, reason="erasure request")
    assert isinstance(done, Erasure)
    assert (done.state, done.erased, done.counts, done.reason) == (
        "done",
        5,
        {"customer_events": 5},
        "erasure request",
    )
    assert done.finished_at is not None and done.started_at is not None
    assert [r.entity for r in m.records.list()] == [BOB]
    with pytest.raises(NotFound):
        m.entities.forget(MARIA)


def test_forget_without_waiting_returns_it_running(m: Memseek, background: None) -> None:
    m.records.write([event(f"n{n}") for n in range(5)])
    running = m.entities.forget(MARIA, wait=False)
    assert running.kind == "entity" and running.entity == MARIA
    for _ in range(300):
        if m.erasures.get(running.id).done:
            break
        time.sleep(0.05)
    assert m.erasures.get(running.id).erased == 5


def test_forget_stops_waiting_after_its_timeout(m: Memseek, background: None, db: Engine) -> None:
    """The worker's batch waits for a record another transaction holds: the call returns the
    erasure running once `timeout` has passed, and the erasure finishes when the lock goes."""
    written = m.records.write([event(f"n{n}") for n in range(5)], wait=True)
    with db.begin() as holder:
        hold(holder, "records", "id", written[0].id)
        began = time.monotonic()
        running = m.entities.forget(MARIA, timeout=1.0)
        assert (running.state, running.done) == ("running", False)
        assert time.monotonic() - began < 10
    for _ in range(300):
        if m.erasures.get(running.id).done:
            break
        time.sleep(0.05)
    assert m.erasures.get(running.id).erased == 5


def test_a_small_forget_finishes_in_its_request(m: Memseek) -> None:
    m.records.write([event("one"), event("two", BOB)])
    done = m.entities.forget(MARIA, collection="customer_events")
    assert (done.done, done.collection, done.erased) == (True, "customer_events", 1)
    assert [e.id for e in m.erasures.list(page_size=1)] == [done.id]


@pytest.mark.parametrize("entity", [".", "..", "/maria", "maria/../bob", "%2E"])
def test_forget_reaches_any_entity_name(m: Memseek, entity: str) -> None:
    """Issue 43 "What to build" 7: the SDK's `forget` erases the entity it is given; a name of dots
    is sent as such (an HTTP client would otherwise remove `.` and `..` from the path as dot
    segments and call another route), and a leading slash stays part of the name."""
    m.records.write([event("theirs", entity), event("kept")])
    done = m.entities.forget(entity)
    assert (done.entity, done.erased) == (entity, 1)
    assert [r.text for r in m.records.list()] == ["kept"]


def test_another_workspaces_ids_and_entities_are_not_found(m: Memseek, service: str, db: Engine) -> None:
    [theirs] = m.records.write(event("theirs"))
    other = make_tenant(db, "sdk-other")
    with Memseek(service, other.key, retries=0) as stranger:
        with pytest.raises(NotFound):
            stranger.records.delete(theirs.id)
        with pytest.raises(NotFound):
            stranger.entities.forget(MARIA)
        with pytest.raises(NotFound):
            stranger.erasures.get(m.records.delete(m.records.write(event("x"))[0].id).erasure_id)
        assert list(stranger.records.list()) == [] and list(stranger.erasures.list()) == []
    assert m.records.get(theirs.id).text == "theirs"


@pytest.mark.anyio
async def test_the_async_client_lists_and_forgets_alike(am: AsyncMemseek, background: None) -> None:
    written = await am.records.write([event(f"n{n}") for n in range(5)])
    listed = am.records.list(page_size=2)
    assert inspect.isasyncgen(listed)
    assert [r.id async for r in listed] == [w.id for w in written][::-1]
    erased = await am.records.delete(written[0].id)
    done = await am.entities.forget(MARIA)
    assert (done.done, done.erased) == (True, 4)
    assert [e.id async for e in am.erasures.list()] == [done.id, erased.erasure_id]
    assert (await am.erasures.get(done.id)).counts == {"customer_events": 4}


def test_both_clients_have_the_same_lifecycle_surface() -> None:
    sync, concurrent = Memseek("http://127.0.0.1:9"), AsyncMemseek("http://127.0.0.1:9")
    calls = [("records", "delete"), ("records", "list"), ("entities", "forget"), ("erasures", "list")]
    for namespace, name in [*calls, ("erasures", "get")]:
        one, other = getattr(getattr(sync, namespace), name), getattr(getattr(concurrent, namespace), name)
        assert inspect.signature(one) == inspect.signature(other) and one.__doc__ == other.__doc__
    assert list(inspect.signature(sync.entities.forget).parameters) == [
        "entity",
        "collection",
        "reason",
        "wait",
        "timeout",
    ]
    sync.close()
