"""Retention: a collection's `retention: {field, days}` erases its records once `field`
(`occurred_at` or `created_at`) lies more than `days` days in the past (docs/lifecycle.md).

The rule of a collection's *active* version applies to the records of every version of it: a
rule is a deployment's policy for the collection's data, so publishing a version with a shorter
rule shortens it for records already written (a rule per written version could never be
tightened). A collection without an active version keeps its records.

Workers sweep now and then (`sweep`): for each rule, every workspace holding records past the
cutoff gets one erasure of kind `retention` — one log entry per run, per workspace and
collection — unless a run of that collection is still going there. The cutoff is fixed when the
run is logged, and the workers erase the run in batches like any other erasure
(`erasures.work_once`). Sweeps of several workers never overlap: each takes a transaction-level
advisory lock first and skips the sweep when another holds it.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import UTC
from datetime import datetime
from datetime import timedelta
from uuid import UUID

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from memseek import citus
from memseek.catalog.catalog import Catalog
from memseek.catalog.models import Retention
from memseek.runtime import Runtime
from memseek.schema import erasures
from memseek.schema import records
from memseek.schema import workspaces
from memseek.write import store
from memseek.write.erasures import DUE
from memseek.write.erasures import Erasure
from memseek.write.erasures import high_water
from memseek.write.erasures import insert_erasure
from memseek.write.ids import uuid7

SWEEP_LOCK = 0x6D656D7265746E  # "memretn": one advisory lock for every process's sweep
SWEEP_SECONDS = 600.0
"""How often a worker sweeps (`memseek worker --once` sweeps once). Expiry is a policy measured in
days: ten minutes late is on time, and a sweep reads an index probe per workspace and rule."""
SWEEP_NOW = "retention"
"""The payload of the workers' notification that asks for a sweep at once (`expired_on_arrival`)."""


def expired_on_arrival(catalog: Catalog, written: Iterable[tuple[str, datetime | None]]) -> bool:
    """Whether a write's (collection, occurred_at) pairs hold a record its collection's rule has
    already expired. Such a write asks the workers for a sweep at once (`SWEEP_NOW`): otherwise
    the record would be served until the next round, up to `SWEEP_SECONDS` later. Rules on
    `created_at` need no check: a record is written now, and a rule keeps it at least a day."""
    now = datetime.now(UTC)
    return any(
        (rule := catalog.retention_rules.get(collection)) is not None
        and rule.field == "occurred_at"
        and occurred_at is not None
        and occurred_at < now - timedelta(days=rule.days)
        for collection, occurred_at in written
    )


def sweep(runtime: Runtime) -> list[Erasure]:
    """Log a retention run for every workspace and rule with expired records (module docstring);
    the runs logged (none while another process sweeps)."""
    found = runtime.catalog.retention_rules
    if not found:
        return []
    with runtime.engine.begin() as conn:
        if not conn.scalar(sa.select(sa.func.pg_try_advisory_xact_lock(SWEEP_LOCK))):
            return []
        runs = [run for collection, rule in found.items() for run in _runs(conn, collection, rule)]
        if runs:
            store.notify_workers(conn)
    return runs


def _runs(conn: Connection, collection: str, rule: Retention) -> list[Erasure]:
    cutoff = conn.execute(sa.select(sa.func.now() - sa.func.make_interval(0, 0, 0, rule.days))).scalar_one()
    return [
        insert_erasure(conn, _run(conn, workspace_id, collection, rule, cutoff))
        for workspace_id in _expired(conn, collection, rule, cutoff)
    ]


def _expired(conn: Connection, collection: str, rule: Retention, cutoff: datetime) -> list[UUID]:
    """Workspaces with records of `collection` past `cutoff` and no retention run of it going:
    an index probe per workspace. Citus cannot probe a distributed table per row of a reference
    table ("complex joins are only supported when all distributed tables are co-located"), so
    there each shard lists the workspaces of its own expired records, next to their erasures."""
    r, e = records.c, erasures.c
    expired = (r.collection == collection, r[rule.field] < cutoff)
    ours = (e.state == "running", e.kind == "retention", e.collection == collection)

    def running(workspace: sa.ColumnElement[UUID]) -> sa.Exists:
        return sa.exists().where(e.workspace_id == workspace, *ours)

    if citus.enabled(conn):
        found = sa.select(r.workspace_id).where(*expired, ~running(r.workspace_id)).distinct()
    else:
        w = workspaces.c
        found = sa.select(w.id).where(sa.exists().where(r.workspace_id == w.id, *expired), ~running(w.id))
    found = found.order_by(found.selected_columns[0]).prefix_with(DUE, dialect="postgresql")
    return list(conn.scalars(found))


def _run(conn: Connection, workspace_id: UUID, collection: str, rule: Retention, cutoff: datetime) -> Erasure:
    return Erasure(
        workspace_id,
        uuid7(),
        "retention",
        "running",
        collection=collection,
        reason=f"retention: {rule.field} more than {rule.days} days ago",
        requested_by="retention",
        high_water=high_water(conn, workspace_id),
        cutoff_field=rule.field,
        cutoff=cutoff,
    )
