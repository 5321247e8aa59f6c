"""Touch-on-read (spec "What comes back", design §4 `TOUCH_ON_READ`): a search, a view or
`GET /context` sets `last_accessed` of the records it returned, after scoring, best-effort;
reading a record by id is not a search.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from collections.abc import Mapping
from dataclasses import dataclass
from dataclasses import replace
from datetime import datetime
from typing import Any
from uuid import UUID

import pytest
import sqlalchemy as sa
from flask import Flask
from sqlalchemy.engine import Engine

from memseek.models.local import MODEL_ID
from memseek.runtime import Runtime
from memseek.runtime import Touches
from memseek.write.touch import SETTLE_SECONDS
from tests.blackbox.conftest import ClientFactory
from tests.blackbox.design_support import VECTOR
from tests.blackbox.design_support import locked
from tests.blackbox.design_support import plan
from tests.blackbox.design_support import rec
from tests.blackbox.design_support import responses_at_once
from tests.blackbox.design_support import until
from tests.blackbox.support import at
from tests.blackbox.support import ids
from tests.blackbox.support import note
from tests.blackbox.support import recent
from tests.blackbox.support import search
from tests.blackbox.support import write
from tests.conftest import Client
from tests.conftest import Tenant
from tests.conftest import client_for
from tests.helpers import error
from tests.helpers import fetch
from tests.helpers import ok
from tests.helpers import touch_writer_held
from tests.helpers import touches_written
from tests.helpers import view_query
from tests.helpers import with_settings
from tests.helpers import written_ids

# --- touch-on-read --------------------------------------------------------------------------------


def test_touch_on_read_updates_last_accessed_of_returned_records(bw: Client) -> None:
    (record_id,) = written_ids(bw, rec(text="touch me"))
    before = fetch(bw, record_id)
    body = {"mode": "recent", "scope": {"collections": ["bw_plain"]}}
    assert [h["id"] for h in bw.post("/search", json=body).get_json()["hits"]] == [record_id]
    after = fetch(bw, record_id)  # GET /records waits for the search's touch (no flush here)
    assert after["last_accessed"] > before["last_accessed"]
    assert after["created_at"] == before["created_at"]


@dataclass
class QueueSpy:
    """A runtime's touch queue, counting the reads that waited for it or read what it holds."""

    queue: Touches
    settled: int = 0
    read: int = 0

    def settle(self, workspace_id: UUID, timeout: float = 1.0) -> bool:
        self.settled += 1
        return self.queue.settle(workspace_id, timeout)

    def queued(self, workspace_id: UUID) -> Mapping[UUID, datetime]:
        self.read += 1
        return self.queue.queued(workspace_id)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.queue, name)


def test_no_search_waits_for_queued_touches_and_only_one_ranked_on_last_accessed_reads_them(
    bw_runtime: Runtime, bw_ws: Tenant
) -> None:
    spy = QueueSpy(bw_runtime.touches)
    client = client_for(replace(bw_runtime, touches=spy), bw_ws)
    written_ids(client, rec(text="settle me"))
    plain = {"mode": "recent", "scope": {"collections": ["bw_plain"]}}  # ranked on occurred_at
    assert client.post("/search", json=plain).status_code == 200
    assert (spy.settled, spy.read) == (0, 0)
    aged = {**plain, "rank": ["age_hours", "last_accessed"]}
    assert client.post("/search", json=aged).status_code == 200
    assert (spy.settled, spy.read) == (0, 1)


def test_a_search_ranked_on_last_accessed_sees_the_touches_of_earlier_searches(bw: Client) -> None:
    (record_id,) = written_ids(bw, rec(text="rank me on my last read"))
    time.sleep(0.5)
    body = {
        "mode": "recent",
        "scope": {"collections": ["bw_plain"]},
        "rank": ["age_hours", "last_accessed"],
        "k": 100,
    }

    def age() -> float:
        hits = bw.post("/search", json=body).get_json()["hits"]
        return next(hit["rank_score"] for hit in hits if hit["id"] == record_id)

    first = age()
    assert first >= 0.5 / 3600
    assert age() < first  # no flush: the second search ranks on the first one's touch


def test_a_search_ranks_on_an_earlier_searchs_touch_before_it_is_written(
    bw: Client, bw_db: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Read-your-touches without the wait: while the touch writer is held inside the first
    search's touch (nothing of it committed), a search ranked on `last_accessed` right after it
    already ages the record from that touch, and answers without waiting for the write."""
    (record_id,) = written_ids(bw, rec(text="rank me before my touch is written"))
    time.sleep(0.5)
    body = {"mode": "recent", "scope": {"collections": ["bw_plain"]}, "rank": ["age_hours", "last_accessed"]}

    def age() -> float:
        [hit] = ok(bw.post("/search", json=body))["hits"]
        return float(hit["rank_score"])

    with touch_writer_held(monkeypatch) as writing:
        first = age()
        assert writing.wait(30)
        started = time.monotonic()
        second = age()
        elapsed = time.monotonic() - started
        with bw_db.connect() as conn:
            stored = conn.execute(
                sa.text("SELECT count(*) FROM record_touches WHERE record_id = :r"), {"r": record_id}
            )
            assert stored.scalar_one() == 0  # the first search's touch is not written yet
    assert first >= 0.5 / 3600
    assert second < first  # aged from the touch still being written
    assert elapsed < SETTLE_SECONDS  # the search did not wait for it
    touches_written(bw)
    record = fetch(bw, record_id)
    assert record["last_accessed"] > record["created_at"]


def test_a_search_request_checks_out_one_connection(bw_runtime: Runtime, bw_ws: Tenant) -> None:
    client = client_for(with_settings(bw_runtime, touch_on_read=False), bw_ws)
    written_ids(client, rec(text="one connection"))
    checkouts: list[int] = []

    def count(dbapi_conn: Any, record: Any, proxy: Any) -> None:
        checkouts.append(id(dbapi_conn))

    sa.event.listen(bw_runtime.engine, "checkout", count)
    try:
        body = {"mode": "recent", "scope": {"collections": ["bw_plain"]}}
        assert client.post("/search", json=body).status_code == 200
        assert len(checkouts) == 1  # authentication's connection runs the search's transaction
        error(client.raw.post("/search", json=body), 401)  # a refused key returns its connection
        assert client.post("/search", json=body).status_code == 200
    finally:
        sa.event.remove(bw_runtime.engine, "checkout", count)
    assert len(checkouts) == 3
    assert bw_runtime.engine.pool.checkedout() == 0  # type: ignore[attr-defined]


def test_touch_on_read_false_leaves_last_accessed(bw_runtime: Runtime, bw_ws: Tenant) -> None:
    client = client_for(with_settings(bw_runtime, touch_on_read=False), bw_ws)
    (record_id,) = written_ids(client, rec(text="leave me"))
    before = fetch(client, record_id)
    body = {"mode": "recent", "scope": {"collections": ["bw_plain"]}}
    assert len(client.post("/search", json=body).get_json()["hits"]) == 1
    touches_written(client)
    assert fetch(client, record_id)["last_accessed"] == before["last_accessed"]


CALENDAR = {"entity": "maria", "start": "2026-07-01T00:00:00Z", "end": "2026-08-01T00:00:00Z"}


def test_a_record_returned_by_a_view_is_touched_too(bw: Client) -> None:
    (record_id,) = written_ids(
        bw, rec("calendar_events", entity="maria", content={"starts_at": "2026-07-02T09:00:00Z"})
    )
    before = fetch(bw, record_id)["last_accessed"]
    response = bw.post("/views/upcoming_calendar/query", json=CALENDAR)
    assert [h["id"] for h in response.get_json()["hits"]] == [record_id]
    touches_written(bw)
    assert fetch(bw, record_id)["last_accessed"] > before


def test_returned_records_get_last_read_updated(sx: Client) -> None:
    read, unread = write(sx, note("budget"), note("other"))
    before = {i: sx.get(f"/records/{i}").get_json()["last_accessed"] for i in (read, unread)}
    assert ids(sx.post("/search", json={"q": "budget", "mode": "text"}).get_json()) == [read]
    touches_written(sx)
    after = {i: sx.get(f"/records/{i}").get_json()["last_accessed"] for i in (read, unread)}
    assert after[read] > before[read] and after[unread] == before[unread]


def test_touch_on_read_can_be_turned_off(sx: Client, sx_with: ClientFactory) -> None:
    (record,) = write(sx, note("budget"))
    before = sx.get(f"/records/{record}").get_json()["last_accessed"]
    quiet = sx_with(touch_on_read=False)
    assert ids(quiet.post("/search", json={"q": "budget", "mode": "text"}).get_json()) == [record]
    assert quiet.get("/context?q=budget").status_code == 200
    touches_written(quiet)
    assert sx.get(f"/records/{record}").get_json()["last_accessed"] == before


def test_the_current_response_is_scored_before_the_touch(sx: Client) -> None:
    write(sx, note("x"))
    time.sleep(0.5)
    body = {"mode": "recent", "rank": ["age_hours", "last_accessed"]}
    first = sx.post("/search", json=body).get_json()["hits"][0]["rank_score"]
    touches_written(sx)
    second = sx.post("/search", json=body).get_json()["hits"][0]["rank_score"]
    assert first >= 0.5 / 3600 and second < first  # the first read still saw the write-time value


def test_view_results_touch_last_accessed(sx: Client) -> None:
    (record,) = write(sx, note("budget", entity="m", occurred_at=at(1)))
    before = sx.get(f"/records/{record}").get_json()["last_accessed"]
    ok(view_query(sx, "sx_context", {"entity": "m", "task": "budget"}))
    touches_written(sx)
    assert sx.get(f"/records/{record}").get_json()["last_accessed"] > before


def test_touch_on_read_updates_last_accessed(sx: Client, sx_with: ClientFactory) -> None:
    """ "returned records have their "last read" timestamp updated when the deployment enables that
    (the default)"; TOUCH_ON_READ governs it."""
    (rid,) = write(sx, note("touch me"))
    before = fetch(sx, rid)["last_accessed"]
    off = sx_with(touch_on_read=False)
    recent(off)
    assert fetch(sx, rid)["last_accessed"] == before
    recent(sx)
    touches_written(sx)
    assert fetch(sx, rid)["last_accessed"] > before


Q = "budget"
"""Every record below holds this word, so a text search matches all of them."""


def test_only_returned_records_are_touched(sx: Client) -> None:
    """Design §1: `last_accessed` is the "last time a search returned it; starts at `created_at`";
    spec: "returned records have their 'last read' timestamp updated" — not the superseded, draft
    or unreturned candidates the search saw."""
    (old,) = write(sx, note("budget v1", type="fact", key="plan"))
    (live,) = write(sx, note("budget v2 budget", type="fact", key="plan"))
    (draft,) = write(sx, note("budget v3", type="fact", key="plan", status="draft"))
    (weaker,) = write(sx, note("budget other", occurred_at="2020-01-01T00:00:00Z"))
    body = search(sx, {"mode": "text", "q": Q, "k": 1, "scope": {"collections": ["sx_notes"]}})
    assert ids(body) == [live]
    touches_written(sx)
    records = {i: fetch(sx, i) for i in (old, live, draft, weaker)}
    assert records[live]["last_accessed"] > records[live]["created_at"]
    for untouched in (old, draft, weaker):
        assert records[untouched]["last_accessed"] == records[untouched]["created_at"], untouched


def test_get_context_counts_as_a_search_that_returned_the_record(bw: Client) -> None:
    """§1: `last_accessed` is the "last time a search returned it"; §3: `GET /context` is "a hybrid
    search whose response is the rendered block" (`TOUCH_ON_READ` defaults to true)."""
    (record_id,) = written_ids(
        bw, rec("bw_vec", text="the okapi survey budget", embedding=VECTOR, embedding_model=MODEL_ID)
    )
    before = fetch(bw, record_id)
    response = bw.get("/context?q=okapi%20survey&collection=bw_vec")
    assert response.status_code == 200 and record_id in response.get_data(as_text=True)
    touches_written(bw)
    after = fetch(bw, record_id)
    assert after["last_accessed"] > before["last_accessed"]


def test_reading_a_record_by_id_is_not_a_search(bw: Client) -> None:
    """§1: `last_accessed` is the "last time a search returned it" — `GET /records/{id}` is not a
    search, nor is an action on the record."""
    (record_id,) = written_ids(bw, rec("bw_events"))
    for _ in range(3):
        fetch(bw, record_id)
    record = ok(bw.post(f"/records/{record_id}/retract", json={"reason": "dup"}))
    assert record["last_accessed"] == record["created_at"]


# --- touch-on-read: best-effort -------------------------------------------------------------------


def test_concurrent_searches_returning_the_same_records_all_succeed_and_touch(
    bw_app: Flask, bw_ws: Tenant, bw: Client
) -> None:
    """Spec: "returned records have their "last read" timestamp updated when the deployment enables
    that (the default)"; "It is best-effort: a failed update is logged and does not fail an
    otherwise successful search". Eight searches returning the same records at once all succeed,
    and afterwards each record's `last_accessed` is later than its `created_at`."""
    record_ids = written_ids(bw, *(plan(f"touch {n}", key=f"t{n}") for n in range(5)))
    sends: list[Callable[[Client], Any]] = [lambda client: client.post("/search", json={
        "mode": "recent", "scope": {"collections": ["bw_facts"]}, "k": 100
    })] * 8  # fmt: skip
    responses = responses_at_once(bw_app, bw_ws, sends)
    assert [r.status_code for r in responses] == [200] * 8
    assert all({hit["id"] for hit in r.get_json()["hits"]} == set(record_ids) for r in responses)
    touches_written(bw)
    for record_id in record_ids:
        record = fetch(bw, record_id)
        assert record["last_accessed"] > record["created_at"], record


def test_a_touch_that_cannot_be_written_does_not_fail_the_search(bw: Client, bw_db: Engine) -> None:
    """Spec: touch-on-read "is best-effort: a failed update is logged and does not fail an
    otherwise successful search". While touches cannot be written (their table is locked against
    writes), searches that return records still answer `200` with them; once it is free, the
    touches of a later search are written again."""
    (record_id,) = written_ids(bw, plan("locked out"))
    body = {"mode": "recent", "scope": {"collections": ["bw_facts"]}, "include": ["text"]}
    with locked(bw_db, "record_touches", "SHARE") as someone_waits:  # reads pass, writes wait
        for _ in range(2):
            hits = ok(bw.post("/search", json=body))["hits"]
            assert [hit["id"] for hit in hits] == [record_id]
        until(someone_waits)  # a touch is stuck behind the lock: it fails, the searches did not
    hits = ok(bw.post("/search", json=body))["hits"]
    assert [hit["id"] for hit in hits] == [record_id]
    touches_written(bw)
    record = fetch(bw, record_id)
    assert record["last_accessed"] > record["created_at"]  # later touches are written again
