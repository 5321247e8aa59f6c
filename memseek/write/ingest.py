"""`POST /records` end to end: check everything, then write the batch atomically.

Order inside the one transaction: database checks (parents exist) → 422 with every problem of
every record, nothing written → advisory locks on the batch's slots and idempotency keys (sorted,
one statement) → idempotent replays and 409 conflicts → previous current values of the touched
lanes (and their automatic links) superseded → one multi-row insert of records and links, with
queue rows for the pending ones.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any
from uuid import UUID

from sqlalchemy.engine import Connection

from memseek.catalog.catalog import Catalog
from memseek.catalog.fields import materialise_all
from memseek.errors import Conflict
from memseek.errors import Detail
from memseek.errors import RequestInvalid
from memseek.runtime import Runtime
from memseek.write import lanes
from memseek.write import retention
from memseek.write import store
from memseek.write.ids import uuid7
from memseek.write.links import link_problems
from memseek.write.links import link_rows
from memseek.write.prepare import Checked
from memseek.write.prepare import check_record
from memseek.write.prepare import parse_records
from memseek.write.rows import LaneKey
from memseek.write.rows import Row
from memseek.write.rows import with_currency


@dataclass(frozen=True, slots=True)
class Written:
    """What `POST /records` reports per input record."""

    id: UUID
    processing: str
    current: bool
    pending_links: tuple[UUID, ...] = ()
    """The automatic links this request wrote for the record that need processing: `?wait=true`
    waits for them too, so a graph read after the wait sees them (not reported)."""

    def to_json(self) -> dict[str, Any]:
        return {"id": str(self.id), "processing": self.processing, "current": self.current}


Parents = dict[int, Sequence[UUID]]
"""Per record index, the `derived_from` of every record whose parents could be read."""


def check_all(runtime: Runtime, items: list[Any]) -> tuple[list[Checked], list[Detail], Parents]:
    """Every rule that needs no database, for every record, and the parents each names (of
    invalid records too: a missing parent is listed with the record's other problems)."""
    parsed, problems, salvaged = parse_records(items)
    catalog, max_chars, checked = runtime.catalog, runtime.settings.max_record_chars, []
    parents: Parents = {}
    for index, record in parsed:
        parents[index] = record.derived_from
        result, found = check_record(catalog, runtime.models, max_chars, index, record)
        problems += found
        if result is not None:
            at = ("records", index)
            problems += link_problems(catalog, result.collection, record.key, record.content, at)
            checked.append(result)
    for rest in salvaged:  # invalid records: their catalog problems too, in one 422
        if "derived_from" not in rest.invalid:
            parents[rest.index] = rest.record.derived_from
        _, found = check_record(catalog, runtime.models, max_chars, rest.index, rest.record)
        problems += rest.keep(found)
    return checked, problems, parents


def _parent_depths(
    conn: Connection, workspace_id: UUID, parents: Parents
) -> tuple[dict[UUID, int], list[Detail]]:
    """Depth of every parent named, and a problem for each parent not in this workspace."""
    known = store.depths(conn, workspace_id, (p for named in parents.values() for p in named))
    problems = [
        Detail(("records", index, "derived_from", position), f"record {parent} does not exist")
        for index, named in parents.items()
        for position, parent in enumerate(named)
        if parent not in known
    ]
    return known, problems


def write_records(conn: Connection, runtime: Runtime, workspace_id: UUID, items: list[Any]) -> list[Written]:
    """Validate and write one batch; the results follow input order."""
    checked, problems, parents = check_all(runtime, items)
    known, missing = _parent_depths(conn, workspace_id, parents)
    problems += missing
    if problems:
        problems.sort(key=lambda detail: detail.loc[1:2])  # by record index (stable within a record)
        raise RequestInvalid(f"{len(problems)} problem(s) in the records; nothing was written", problems)
    _lock_batch(conn, workspace_id, checked)
    fresh, replays = _split_replays(conn, workspace_id, checked)
    nodes = with_currency([_record_row(c, known) for c in fresh])
    rows = _with_links(runtime.catalog, fresh, nodes)
    superseded: list[UUID] = []
    if rows:
        superseded = lanes.current_of(conn, workspace_id, _lanes(nodes))
        lanes.set_current(conn, workspace_id, superseded, False)
        store.insert_rows(conn, workspace_id, rows)
        if retention.expired_on_arrival(runtime.catalog, ((n.collection, n.occurred_at) for n in nodes)):
            store.notify_workers(conn, retention.SWEEP_NOW)
    return _results(checked, fresh, nodes, replays, _pending_links(rows), set(superseded))


def _lock_batch(conn: Connection, workspace_id: UUID, checked: Sequence[Checked]) -> None:
    """One advisory lock per idempotency key and per slot of the batch, all at once, sorted."""
    keys = [
        lanes.lock_key(workspace_id, "idempotency", c.record.idempotency_key)
        for c in checked
        if c.record.idempotency_key is not None
    ]
    keys += [
        lanes.lock_key(workspace_id, c.collection.name, c.record.entity, c.record.key)
        for c in checked
        if c.record.key is not None
    ]
    lanes.lock_keys(conn, keys)


def _split_replays(
    conn: Connection, workspace_id: UUID, checked: Sequence[Checked]
) -> tuple[list[Checked], dict[int, store.Existing | int]]:
    """New records, and per replayed index the stored record (or the earlier index in this batch)."""
    keys = (c.record.idempotency_key for c in checked if c.record.idempotency_key is not None)
    stored = store.by_idempotency_key(conn, workspace_id, keys)
    first: dict[str, Checked] = {}
    fresh: list[Checked] = []
    replays: dict[int, store.Existing | int] = {}
    for c in checked:
        key = c.record.idempotency_key
        if key is not None and key in stored:
            _same_payload(key, c, stored[key].payload_hash)
            replays[c.index] = stored[key]
        elif key is not None and key in first:
            _same_payload(key, c, first[key].payload_hash)
            replays[c.index] = first[key].index
        else:
            if key is not None:
                first[key] = c
            fresh.append(c)
    return fresh, replays


def _same_payload(key: str, record: Checked, stored_hash: str | None) -> None:
    if record.payload_hash != stored_hash:
        raise Conflict(
            f"idempotency key {key!r} was used for a different record; nothing was written",
            [Detail(("records", record.index, "idempotency_key"), "reused with a different payload")],
        )


def _record_row(checked: Checked, known_depths: dict[UUID, int]) -> Row:
    record, collection = checked.record, checked.collection
    depth = 1 + max((known_depths[p] for p in record.derived_from), default=-1)
    return Row(
        id=uuid7(),
        collection=collection.name,
        collection_version=collection.version,
        entity=record.entity,
        type=record.type,
        key=record.key,
        text=record.text,
        content=record.content,
        scores=record.scores,
        annotations=record.annotations,
        fields=materialise_all(collection, record.content),
        status=record.status,
        depth=depth,
        derived_from=tuple(record.derived_from),
        run_id=record.run_id,
        occurred_at=record.occurred_at,
        pending=checked.pending,
        is_current=True,
        embedding=record.embedding,
        embedding_model=record.embedding_model,
        language=collection.text_language,
        idempotency_key=record.idempotency_key,
        payload_hash=checked.payload_hash or None,
    )


def _with_links(catalog: Catalog, fresh: Sequence[Checked], nodes: Sequence[Row]) -> list[Row]:
    """Insert order: each record followed by its automatic links."""
    rows: list[Row] = []
    for checked, node in zip(fresh, nodes, strict=True):
        rows.append(node)
        rows.extend(link_rows(catalog, checked.collection, node))
    return rows


def _pending_links(rows: Sequence[Row]) -> dict[UUID, tuple[UUID, ...]]:
    """Node id → its automatic links that need processing."""
    links: defaultdict[UUID, list[UUID]] = defaultdict(list)
    for row in rows:
        if row.link_node_id is not None and row.pending:
            links[row.link_node_id].append(row.id)
    return {node: tuple(ids) for node, ids in links.items()}


def _lanes(nodes: Sequence[Row]) -> list[LaneKey]:
    return sorted({row.lane for row in nodes if row.lane is not None})


def _results(
    checked: Sequence[Checked],
    fresh: Sequence[Checked],
    nodes: Sequence[Row],
    replays: dict[int, store.Existing | int],
    pending_links: dict[UUID, tuple[UUID, ...]],
    superseded: set[UUID],
) -> list[Written]:
    """One result per input record; a replayed record is reported as it is after the batch (a
    newer value of its slot in the same batch leaves it not current)."""
    by_index = {
        c.index: Written(
            row.id, "pending" if row.pending else "ready", row.is_current, pending_links.get(row.id, ())
        )
        for c, row in zip(fresh, nodes, strict=True)
    }
    for index, earlier in sorted(replays.items()):
        if isinstance(earlier, int):
            by_index[index] = by_index[earlier]
        else:
            current = earlier.current and earlier.id not in superseded
            by_index[index] = Written(earlier.id, earlier.processing, current)
    return [by_index[c.index] for c in checked]
