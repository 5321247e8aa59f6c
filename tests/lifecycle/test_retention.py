"""Retention: `retention: {field, days}` validated at catalog load with every problem reported,
and the worker erasing expired records in batches, one erasure-log entry per run, per workspace
and collection."""

# ruff: noqa: E501  (one collection per YAML line reads better than each wrapped)

from __future__ import annotations

import json
from datetime import UTC
from datetime import datetime
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa
from sqlalchemy.engine import Engine

from memseek.catalog.load import load_catalog
from memseek.catalog.problems import CatalogError
from memseek.catalog.problems import format_loc
from memseek.runtime import Runtime
from memseek.search.view_checks import VIEW_CHECKS
from memseek.write import erasures
from memseek.write import retention
from memseek.write.worker import BackgroundWorker
from tests.conftest import Client
from tests.helpers import build_catalog
from tests.helpers import ok
from tests.helpers import written_ids
from tests.lifecycle.support import event
from tests.lifecycle.support import note
from tests.lifecycle.support import processed
from tests.lifecycle.support import texts

NOW = datetime.now(UTC)


def ago(days: float) -> str:
    return (NOW - timedelta(days=days)).isoformat()


def test_expired_records_are_erased_by_the_worker_and_logged_per_run(
    lc: Client, lc_other: Client, lc_runtime: Runtime, db: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(erasures, "BATCH", 2)
    old = [event("lc_expiring", "ann", f"old {n}", occurred_at=ago(31 + n)) for n in range(5)]
    written_ids(lc, *old, event("lc_expiring", "ann", "recent", occurred_at=ago(29)))
    written_ids(lc, event("lc_written", "ann", "written long ago"), event("lc_written", "ann", "written now"))
    with db.begin() as conn:  # a record written three days ago (created_at is the server's clock)
        conn.execute(
            sa.text(
                "UPDATE records SET created_at = now() - interval '3 days' WHERE text = 'written long ago'"
            )
        )
    written_ids(lc_other, event("lc_expiring", "bob", "their old", occurred_at=ago(40)))
    written_ids(
        lc,
        event("lc_expiring", "ann", "old but pending in lc_notes", occurred_at=ago(90))
        | {"collection": "lc_notes", "type": "note"},
    )
    processed(lc_runtime)
    assert texts(db, lc.tenant.id) == ["recent", "written now", "old but pending in lc_notes"]
    assert texts(db, lc_other.tenant.id) == []
    logged = ok(lc.get("/erasures"))["erasures"]
    by_collection = {entry["collection"]: entry for entry in logged}
    assert sorted(by_collection) == ["lc_expiring", "lc_written"] and len(logged) == 2
    expiring = by_collection["lc_expiring"]
    assert (expiring["kind"], expiring["state"], expiring["requested_by"]) == (
        "retention",
        "done",
        "retention",
    )
    assert expiring["counts"] == {"lc_expiring": 5} and expiring["entity"] is None
    assert expiring["reason"] == "retention: occurred_at more than 30 days ago"
    cutoff = datetime.fromisoformat(expiring["retention"]["cutoff"])
    assert expiring["retention"]["field"] == "occurred_at" and abs(
        cutoff - (datetime.now(UTC) - timedelta(days=30))
    ) < timedelta(minutes=5)
    assert by_collection["lc_written"]["counts"] == {"lc_written": 1}
    assert by_collection["lc_written"]["retention"]["field"] == "created_at"
    assert [e["collection"] for e in ok(lc_other.get("/erasures"))["erasures"]] == ["lc_expiring"]
    assert "old 0" not in json.dumps(logged)


def test_a_run_still_going_is_not_logged_twice(lc: Client, lc_runtime: Runtime) -> None:
    written_ids(lc, event("lc_expiring", "ann", "old", occurred_at=ago(60)))
    [run] = retention.sweep(lc_runtime)
    assert (run.kind, run.collection, run.state) == ("retention", "lc_expiring", "running")
    assert retention.sweep(lc_runtime) == []
    processed(lc_runtime)
    assert ok(lc.get(f"/erasures/{run.id}"))["counts"] == {"lc_expiring": 1}
    assert retention.sweep(lc_runtime) == []  # nothing expired left


def test_nothing_expired_logs_nothing(lc: Client, lc_runtime: Runtime) -> None:
    written_ids(lc, event("lc_expiring", "ann", "fresh", occurred_at=ago(1)))
    assert retention.sweep(lc_runtime) == []
    assert ok(lc.get("/erasures"))["erasures"] == []


def test_the_background_worker_sweeps_when_it_starts(lc: Client, lc_runtime: Runtime, db: Engine) -> None:
    written_ids(lc, event("lc_expiring", "ann", "old", occurred_at=ago(60)))
    worker = BackgroundWorker(lc_runtime, idle_seconds=0.1).start()
    try:
        for _ in range(200):
            if not texts(db, lc.tenant.id):
                break
            worker._stop.wait(0.05)
    finally:
        worker.stop()
    assert texts(db, lc.tenant.id) == []


def test_collections_show_what_each_version_declares(lc: Client) -> None:
    declared = {c["name"]: c["retention"] for c in ok(lc.get("/collections"))["collections"]}
    assert declared["lc_expiring"] == {"field": "occurred_at", "days": 30}
    assert declared["lc_written"] == {"field": "created_at", "days": 2}
    assert declared["lc_notes"] is None


def test_the_active_versions_rule_applies(tmp_path: Path) -> None:
    root = build_catalog(
        tmp_path,
        {
            "collections/kept.yaml": """
            collections:
              - {name: kept, version: 1, types: [note], retention: {field: occurred_at, days: 1}}
              - {name: kept, version: 2, active: true, types: [note]}
              - {name: short, version: 1, active: true, types: [note], retention: {field: created_at, days: 7}}
            """
        },
    )
    catalog = load_catalog(root, view_checks=VIEW_CHECKS)
    rules = catalog.retention_rules
    assert [(name, rule.field, rule.days) for name, rule in rules.items()] == [("short", "created_at", 7)]
    assert catalog.retention_rules is rules  # worked out once: every write asks


def test_every_retention_problem_is_reported_at_once(tmp_path: Path) -> None:
    root = build_catalog(
        tmp_path,
        {
            "collections/bad.yaml": """
            collections:
              - {name: a, version: 1, active: true, types: [note], retention: {field: updated_at, days: 0}}
              - {name: b, version: 1, active: true, types: [note], retention: {field: created_at, days: "7"}}
              - {name: c, version: 1, active: true, types: [note], retention: {field: occurred_at, days: 1.5}}
              - {name: d, version: 1, active: true, types: [note], retention: {days: 3, keep: true}}
              - {name: e, version: 1, active: true, types: [note], retention: 30}
              - {name: f, version: 1, active: true, types: [note], retention: {field: occurred_at, days: 1000001}}
            """
        },
    )
    with pytest.raises(CatalogError) as caught:
        load_catalog(root, view_checks=VIEW_CHECKS)
    found = sorted((p.definition, format_loc(p.loc)) for p in caught.value.problems)
    assert found == [
        ("collection a v1", "collections[0].retention.days"),
        ("collection a v1", "collections[0].retention.field"),
        ("collection b v1", "collections[1].retention.days"),
        ("collection c v1", "collections[2].retention.days"),
        ("collection d v1", "collections[3].retention.field"),
        ("collection d v1", "collections[3].retention.keep"),
        ("collection e v1", "collections[4].retention"),
        ("collection f v1", "collections[5].retention.days"),
    ]
    assert all(p.file == "collections/bad.yaml" for p in caught.value.problems)


@pytest.mark.parametrize(
    "queued",
    [
        pytest.param([], id="alone"),
        pytest.param([note("ann", "queued note")], id="with-a-record-to-embed"),  # two notifications
    ],
)
def test_a_record_written_already_expired_is_swept_without_waiting_for_the_next_round(
    lc: Client, lc_runtime: Runtime, db: Engine, queued: list[dict[str, Any]]
) -> None:
    """Issue 43 "What to build" 6: "expired records are erased by the worker". A record that
    arrives already past its collection's rule (an old `occurred_at`) goes within moments: the
    write wakes the workers for a sweep rather than leaving it served until the next ten-minute
    round, also when the same commit queues records to embed (its notifications arrive together)."""
    worker = BackgroundWorker(lc_runtime, idle_seconds=0.1).start()
    try:
        worker._stop.wait(0.5)  # past its first sweep, which found nothing
        old = event("lc_expiring", "ann", "old", occurred_at=ago(60))
        written_ids(lc, old, event("lc_expiring", "ann", "new"), *queued)
        kept = ["new", *(record["text"] for record in queued)]
        for _ in range(200):
            if texts(db, lc.tenant.id) == kept:
                break
            worker._stop.wait(0.05)
    finally:
        worker.stop()
    assert texts(db, lc.tenant.id) == kept
    [run] = ok(lc.get("/erasures"))["erasures"]
    assert (run["kind"], run["counts"]) == ("retention", {"lc_expiring": 1})
