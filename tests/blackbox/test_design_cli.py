"""Design §4 configuration and the embedded default, §3 `memseek explain`, §2 MCP — through the command."""

from __future__ import annotations

import time
from dataclasses import dataclass
from dataclasses import replace
from typing import Any
from uuid import UUID

import sqlalchemy as sa

from memseek.runtime import Runtime
from memseek.write.touch import TouchQueue
from tests.blackbox.design_support import rec
from tests.conftest import Client
from tests.conftest import Tenant
from tests.conftest import client_for
from tests.helpers import error
from tests.helpers import fetch
from tests.helpers import touches_written
from tests.helpers import with_settings
from tests.helpers import written_ids

# --- the configuration variables ------------------------------------------------------------------


def test_touch_on_read_updates_last_accessed_of_returned_records(bw: Client) -> None:
    (record_id,) = written_ids(bw, rec(text="touch me"))
    before = fetch(bw, record_id)
    body = {"mode": "recent", "scope": {"collections": ["bw_plain"]}}
    assert [h["id"] for h in bw.post("/search", json=body).get_json()["hits"]] == [record_id]
    after = fetch(bw, record_id)  # GET /records waits for the search's touch (no flush here)
    assert after["last_accessed"] > before["last_accessed"]
    assert after["created_at"] == before["created_at"]


@dataclass
class SettleSpy:
    """A runtime's touch queue, counting the reads that waited for it."""

    queue: TouchQueue
    settled: int = 0

    def settle(self, workspace_id: UUID, timeout: float = 1.0) -> bool:
        self.settled += 1
        return self.queue.settle(workspace_id, timeout)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.queue, name)


def test_only_a_search_ranked_on_last_accessed_waits_for_queued_touches(
    bw_runtime: Runtime, bw_ws: Tenant
) -> None:
    spy = SettleSpy(bw_runtime.touches)
    client = client_for(replace(bw_runtime, touches=spy), bw_ws)  # type: ignore[arg-type]
    written_ids(client, rec(text="settle me"))
    plain = {"mode": "recent", "scope": {"collections": ["bw_plain"]}}  # ranked on occurred_at
    assert client.post("/search", json=plain).status_code == 200
    assert spy.settled == 0
    aged = {**plain, "rank": ["age_hours", "last_accessed"]}
    assert client.post("/search", json=aged).status_code == 200
    assert spy.settled == 1


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
    assert age() < first  # no flush: the second search waited for the first one's touch


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
