"""Conformance audit 6: concurrency, atomicity and "a failed write changes nothing", over HTTP.

Design §1 "Records" (keyed-fact lanes, drafts), "Processing and enrichments", §3 `POST /records`
(atomic batches, idempotency) and the record actions; the spec's `versions: current`,
`SEARCH_MAX_CONCURRENCY` and touch-on-read. Threads share one app and send through Flask test
clients of their own, released together by a barrier (`_in_parallel`); nothing synchronises by
sleeping. What the earlier files pin (one current value after concurrent writes, concurrent
idempotent repeats, one action raced with itself, approvals raced with writes) is not repeated:
these tests add *which* value is current, races between different actions, the bulk (COPY) path
of 1,000-record batches, and reads racing writes.

Ingestion order is read through the spec's tie-breakers: records written with one `occurred_at`
tie in a `recent` search, which then orders them "by ingestion order descending".
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from flask import Flask
from sqlalchemy.engine import Engine

from tests.blackbox.design_support import locked
from tests.blackbox.design_support import plan
from tests.blackbox.design_support import responses_at_once
from tests.blackbox.design_support import until
from tests.conftest import Client
from tests.conftest import Tenant
from tests.helpers import fetch
from tests.helpers import ok
from tests.helpers import touches_written
from tests.helpers import written_ids

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
