"""Restoring an export: `memseek import` of a file `memseek export` wrote puts its records back as
they were, into another workspace or database — not as new writes.

Each record keeps its id, key, status, `current` flag, processing state (and error), retraction,
timestamps (`occurred_at`, `created_at`, `last_accessed`), depth, `derived_from` (restored as
is: a parent erased before the export stays unresolved), `run_id`, scores, annotations, content,
idempotency key and payload hash, and its automatic links stay the records they were. Lane
order is kept exactly: the lines' `lane_seq` values are mapped, in order, onto values the target
database's sequence hands out (`LaneOrder`), so a later retraction restores the same value it
would have at the source and later writes land after everything restored. Declared fields and
the full text are computed again from the content and text by the target's collection version.

Vectors are restored when the collection version embeds with the model that made them (the
same model id); otherwise the record is processed again (`pending`, queued) unless it had
`failed`. Records exported `pending` are queued.

Pass 1 (no database) checks every line: the header's format, each record's shape
(`ExportedRecord`), that the target catalog holds its collection version, type and key rule,
and its text length; any problem stops the import with every problem listed by line. Pass 2
writes batches as a write import does (streams by entity, so each lane's records are written in
file order). Ids the workspace already holds are skipped, so an interrupted restore run again
writes only what is missing; a record whose slot already has another current value, or whose
idempotency key another record holds, refuses its batch (`409`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any
from typing import Literal
from uuid import UUID

import sqlalchemy as sa
from pydantic import BaseModel
from pydantic import ConfigDict
from pydantic import Field
from pydantic import StrictBool
from pydantic import StrictInt
from pydantic import StrictStr
from pydantic import ValidationError
from sqlalchemy.engine import Connection

from memseek import citus
from memseek.catalog.catalog import UnknownDefinition
from memseek.catalog.fields import materialise_all
from memseek.catalog.models import Collection
from memseek.errors import Conflict
from memseek.errors import Detail
from memseek.errors import Loc
from memseek.errors import details_from_pydantic
from memseek.jsontext import json_text
from memseek.runtime import Runtime
from memseek.schema import lane_seq
from memseek.schema import records
from memseek.write import store
from memseek.write.export import FORMAT
from memseek.write.export import HEADER
from memseek.write.models import Finite
from memseek.write.models import JsonObject
from memseek.write.models import Label
from memseek.write.models import MapKey
from memseek.write.models import Timestamp

r = records.c


class ExportedRecord(BaseModel):
    """One line of an export (`memseek.write.export`)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: UUID
    collection: StrictStr
    collection_version: StrictInt = Field(gt=0)
    entity: Label
    type: StrictStr
    key: Label | None
    text: StrictStr = Field(min_length=1)
    content: JsonObject
    scores: dict[MapKey, Finite]
    annotations: JsonObject
    status: Literal["active", "draft"]
    depth: StrictInt = Field(ge=0)
    derived_from: list[UUID]
    run_id: Label | None
    occurred_at: Timestamp
    created_at: Timestamp
    last_accessed: Timestamp
    processing: Literal["pending", "ready", "failed"]
    processing_error: StrictStr | None
    current: StrictBool
    retracted_at: Timestamp | None
    retraction_reason: StrictStr | None
    lane_seq: StrictInt
    link_node_id: UUID | None
    idempotency_key: Label | None
    payload_hash: StrictStr | None
    embedding: list[Finite] | None
    embedding_model: StrictStr | None


def is_header(item: Any) -> bool:
    """Whether a file's first line says the file is an export."""
    return isinstance(item, dict) and HEADER in item


def header_problems(item: Any) -> list[Detail]:
    """What is wrong with an export's header line (line 1)."""
    if item.get(HEADER) != FORMAT:
        return [Detail(("line", 1, HEADER), f"unknown export format (this version reads {FORMAT})")]
    return []


def _collection(runtime: Runtime, record: ExportedRecord, at: Loc) -> tuple[Collection | None, list[Detail]]:
    try:
        collection = runtime.catalog.collection(record.collection, record.collection_version)
    except UnknownDefinition as exc:
        return None, [Detail((*at, "collection_version"), f"{exc} in this catalog")]
    problems = []
    if record.type not in collection.types:
        problems.append(
            Detail((*at, "type"), f"type {record.type!r} is not one of {', '.join(collection.types)}")
        )
    if (collection.keyed is True and record.key is None) or (
        collection.keyed is False and record.key is not None
    ):
        problems.append(Detail((*at, "key"), f"collection {collection.name!r} has keyed: {collection.keyed}"))
    if len(record.text) > runtime.settings.max_record_chars:
        problems.append(
            Detail((*at, "text"), f"text is longer than {runtime.settings.max_record_chars} characters")
        )
    return collection, problems


def parse_restored(
    runtime: Runtime, items: Sequence[Any]
) -> tuple[list[tuple[ExportedRecord, Collection]], list[Detail]]:
    """Every line of a batch checked without the database (problems at `records.<index>.…`)."""
    parsed: list[tuple[ExportedRecord, Collection]] = []
    problems: list[Detail] = []
    for index, item in enumerate(items):
        at: Loc = ("records", index)
        try:
            record = ExportedRecord.model_validate(item)
        except ValidationError as exc:
            problems += details_from_pydantic(exc.errors(include_url=False), at)
            continue
        collection, found = _collection(runtime, record, at)
        problems += found
        if collection is not None and not found:
            parsed.append((record, collection))
    return parsed, problems


class LaneOrder:
    """Source `lane_seq` values mapped, in order, onto values of the target's sequence."""

    def __init__(self, source: Sequence[int]) -> None:
        self.source = sorted(set(source))
        self.target: dict[int, int] = {}

    def reserve(self, conn: Connection) -> LaneOrder:
        """Take one sequence value per source value (increasing), and map them in order."""
        taken = sa.select(lane_seq.next_value()).select_from(sa.func.generate_series(1, len(self.source)))
        values = sorted(conn.scalars(taken)) if self.source else []
        self.target = dict(zip(self.source, values, strict=True))
        return self


def _vector_kept(runtime: Runtime, record: ExportedRecord, collection: Collection) -> bool:
    if record.embedding is None or collection.embedding is None:
        return False
    return record.embedding_model == runtime.models.embedder(collection.embedding).model_id


def _row(
    runtime: Runtime, record: ExportedRecord, collection: Collection, lanes: LaneOrder
) -> dict[str, Any]:
    """The `records` row (and `language`) restoring `record`."""
    kept = _vector_kept(runtime, record, collection)
    redo = collection.embedding is not None and not kept and record.processing == "ready"
    row = record.model_dump(exclude={"current"})
    row.update(
        is_current=record.current,
        lane_seq=lanes.target[record.lane_seq],
        fields=materialise_all(collection, record.content),
        processing="pending" if redo else record.processing,
        embedding=record.embedding if kept else None,
        embedding_model=record.embedding_model if kept else None,
        language=collection.text_language,
    )
    return row


TEXT_COLUMNS = ("tsv", "tsv_repeats", "tsv_length")
RESTORED = tuple(column for column in records.c if column.name not in ("workspace_id", "seq", *TEXT_COLUMNS))


def _insert(conn: Connection, workspace_id: UUID, rows: list[dict[str, Any]]) -> None:
    """One `INSERT … SELECT` of `rows` in order, from one JSON document, as the write path's."""
    columns = [sa.column(c.name, c.type) for c in RESTORED]
    columns += [sa.column("language", sa.Text()), sa.column("n", sa.Integer())]
    batch = sa.cast(
        sa.bindparam("restore", json_text([{**row, "n": n} for n, row in enumerate(rows)])), sa.JSON
    )
    src = sa.func.json_to_recordset(batch).table_valued(*columns).render_derived("u", with_types=True)
    terms = store.text_terms(src.c.language, src.c.text).lateral("terms")
    source = (
        sa.select(
            *(src.c[c.name] for c in RESTORED),
            sa.literal(workspace_id, store.UUID_T),
            terms.c.tsv,
            terms.c.repeats,
            terms.c.length,
        )
        .select_from(src.join(terms, sa.true()))
        .order_by(src.c.n)
    )
    names = [c.name for c in RESTORED] + ["workspace_id", *TEXT_COLUMNS]
    conn.execute(citus.returning_rows(records.insert().from_select(names, source)))


def _present(conn: Connection, workspace_id: UUID, ids: Sequence[UUID]) -> set[UUID]:
    stmt = sa.select(r.id).where(
        r.workspace_id == workspace_id, r.id == sa.any_(store.array(ids, store.UUID_T))
    )
    return set(conn.scalars(stmt))


def restore_batch(
    conn: Connection, runtime: Runtime, workspace_id: UUID, items: list[Any], lanes: LaneOrder
) -> tuple[int, int]:
    """Restore one batch of export lines (module docstring): (records written, of them pending)."""
    parsed, problems = parse_restored(runtime, items)
    if problems:  # pass 1 found none: the file changed since
        raise Conflict("the file changed after it was checked", problems)
    present = _present(conn, workspace_id, [record.id for record, _ in parsed])
    rows = [_row(runtime, rec, coll, lanes) for rec, coll in parsed if rec.id not in present]
    if not rows:
        return 0, 0
    try:
        _insert(conn, workspace_id, rows)
    except sa.exc.IntegrityError:
        raise Conflict(
            "a restored record's slot already has a current value, or its idempotency key is "
            "another record's, in this workspace; restore into a workspace without them"
        ) from None
    pending = [row["id"] for row in rows if row["processing"] == "pending"]
    if pending:
        store.enqueue(conn, workspace_id, pending)
    return len(rows), len(pending)
