"""The write path's statements: the batch insert, look-ups by id and idempotency key, record JSON.

Every statement is confined to one workspace (`workspace_id = :ws`) even under row-level
security. The batch insert is ONE `INSERT … SELECT` for all rows of a request (records and their
automatic links), ordered by input position, so `seq`/`lane_seq` follow input order. Its source
is the batch as one JSON document (`json_to_recordset(:batch)`) for small batches, and for
batches of `COPY_MIN_ROWS` or more a temporary stage table of the transaction filled by a binary
`COPY … FROM STDIN` (the bulk path): PostgreSQL reads COPY's rows without parsing a JSON document
or vectors as text, and they stream to the server while the rest of the batch is still being
formatted. Both sources have the same
columns (`SOURCE`) and feed the same SELECT, so the stored rows are the same.
"""

from __future__ import annotations

import struct
from collections.abc import Iterable
from collections.abc import Mapping
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC
from datetime import datetime
from typing import Any
from uuid import UUID

import psycopg
import sqlalchemy as sa
from pgvector.sqlalchemy import Vector
from psycopg import sql
from sqlalchemy.dialects.postgresql import ARRAY
from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.dialects.postgresql import REGCONFIG
from sqlalchemy.dialects.postgresql import TSVECTOR
from sqlalchemy.dialects.postgresql import UUID as PG_UUID
from sqlalchemy.dialects.postgresql.psycopg import PGDialect_psycopg
from sqlalchemy.engine import Connection
from sqlalchemy.engine import Row as DbRow
from sqlalchemy.schema import CreateTable
from sqlalchemy.sql.elements import BindParameter

from memseek import citus
from memseek.jsontext import json_text
from memseek.schema import EMBEDDING_DIM
from memseek.schema import lane_seq
from memseek.schema import processing_queue
from memseek.schema import record_columns
from memseek.schema import records
from memseek.write.rows import Row

UUID_T = PG_UUID(as_uuid=True)
TS = sa.TIMESTAMP(timezone=True)
QUEUE_CHANNEL = "memseek_queue"
"""NOTIFY channel: a transaction that enqueued records wakes idle workers when it commits."""
COMMENT = "/* memseek {route} */"


def array(values: Sequence[Any], item: Any) -> BindParameter[Any]:
    """An anonymous array bind parameter of element type `item`."""
    return sa.bindparam(None, list(values), type_=ARRAY(item))


Column = tuple[Sequence[Any], Any]
"""(values, SQL element type) of one array-valued column."""


def unnest(columns: Mapping[str, Column], alias: str, ordinality: str | None = None) -> Any:
    """A row source of parallel arrays: `unnest(a, b, …) [WITH ORDINALITY] AS alias(name, …)`."""
    names = (sa.column(name, item) for name, (_, item) in columns.items())
    arrays = (array(values, item) for values, item in columns.values())
    return sa.func.unnest(*arrays).table_valued(*names, with_ordinality=ordinality).render_derived(alias)


SOURCE: dict[str, Any] = {  # type classes or instances, as a Column takes them
    "n": sa.Integer,
    "id": UUID_T,
    "collection": sa.Text,
    "collection_version": sa.Integer,
    "entity": sa.Text,
    "type": sa.Text,
    "key": sa.Text,
    "text": sa.Text,
    "content": JSONB,
    "scores": JSONB,
    "annotations": JSONB,
    "fields": JSONB,
    "status": sa.Text,
    "depth": sa.Integer,
    "derived_from": ARRAY(UUID_T),
    "run_id": sa.Text,
    "occurred_at": TS,
    "processing": sa.Text,
    "is_current": sa.Boolean,
    "embedding": Vector(EMBEDDING_DIM),
    "embedding_model": sa.Text,
    "language": sa.Text,
    "idempotency_key": sa.Text,
    "payload_hash": sa.Text,
    "link_node_id": UUID_T,
}
"""The typed columns of the batch's JSON row source (`json_to_recordset`). A JSON array is pgvector's
text form, so `embedding` is read as a vector directly (a `real[]` and a cast would convert every
vector twice)."""


def _source_values(n: int, row: Row) -> tuple[Any, ...]:
    """The `SOURCE` columns of one row, in order (JSON-valued ones as Python values)."""
    return (
        n,
        row.id,
        row.collection,
        row.collection_version,
        row.entity,
        row.type,
        row.key,
        row.text,
        row.content,
        row.scores,
        row.annotations,
        row.fields,
        row.status,
        row.depth,
        row.derived_from,
        row.run_id,
        # as a UTC instant: ISO 8601 allows offsets up to ±23:59, PostgreSQL reads at most ±15:59
        None if row.occurred_at is None else row.occurred_at.astimezone(UTC),
        "pending" if row.pending else "ready",
        row.is_current,
        row.embedding,
        row.embedding_model,
        row.language,
        row.idempotency_key,
        row.payload_hash,
        row.link_node_id,
    )


def _source_json(rows: Sequence[Row]) -> str:
    """The batch as ONE JSON array: PostgreSQL parses it in C, far cheaper than binding 25 arrays."""
    names = tuple(SOURCE)
    return json_text([dict(zip(names, _source_values(n, row), strict=True)) for n, row in enumerate(rows)])


_JSON_AT = tuple(at for at, kind in enumerate(SOURCE.values()) if kind is JSONB)
_EMBEDDING_AT = tuple(SOURCE).index("embedding")
_DERIVED_AT = tuple(SOURCE).index("derived_from")
_JSONB_VERSION = b"\x01"
_RAW = "bytea"
"""The COPY type of a value encoded here: psycopg sends bytes as they are, and the server reads
them with the stage column's own binary input (jsonb's, pgvector's)."""
_ENCODED_HERE = (JSONB, Vector)


_POSTGRESQL = PGDialect_psycopg()  # type: ignore[no-untyped-call]  # SQLAlchemy leaves it unannotated


def _copy_type(kind: Any) -> str:
    """A `SOURCE` column's type in the binary COPY: `_RAW` for what `_copy_values` encodes itself,
    else the type's PostgreSQL name, whose binary dumper psycopg picks."""
    column_type = sa.types.to_instance(kind)
    if isinstance(column_type, _ENCODED_HERE):
        return _RAW
    return str(column_type.compile(dialect=_POSTGRESQL)).lower()


_COPY_TYPES = tuple(_copy_type(kind) for kind in SOURCE.values())
"""Each stage column's type in the binary COPY, in `SOURCE` order (`_copy_values` writes them)."""


def _vector_bytes(embedding: Sequence[float]) -> bytes:
    """pgvector's binary form: dimensions and a reserved 0 (int16 each), then the float4s, all
    big-endian. The values are finite and within float4 range (`values_problem` checked)."""
    return struct.pack(f">HH{len(embedding)}f", len(embedding), 0, *embedding)


def _copy_values(n: int, row: Row) -> tuple[Any, ...]:
    """One stage row for binary COPY (`_COPY_TYPES`): JSON columns as jsonb's binary form (version
    1, then the text `dump` writes, as the JSON source's), the vector as pgvector's, everything
    else as psycopg dumps it. The vector goes in binary: its text form the server would parse
    float by float."""
    values = list(_source_values(n, row))
    for at in _JSON_AT:
        values[at] = _JSONB_VERSION + json_text(values[at]).encode()
    if row.embedding is not None:
        values[_EMBEDDING_AT] = _vector_bytes(row.embedding)
    values[_DERIVED_AT] = list(row.derived_from)
    return tuple(values)


stage = sa.Table(
    "memseek_write_stage",
    sa.MetaData(),
    *(sa.Column(name, kind) for name, kind in SOURCE.items()),
    prefixes=["TEMPORARY"],
    postgresql_on_commit="DROP",
    # rows stay whole in the stage (a 384-d vector makes a row ~2.3 kB, past the 2 kB at which
    # PostgreSQL would move it to TOAST only for the INSERT … SELECT to read it back)
    postgresql_with={"toast_tuple_target": 8160},
)
"""The bulk path's source: a temporary table of the transaction. Records itself cannot take COPY:
PostgreSQL refuses `COPY FROM` into a table with row-level security, and the INSERT … SELECT from
the stage keeps every policy, trigger and default of the JSON path. Created per transaction (not
kept per session) so that it always belongs to the role writing: a pooled connection serves both
the scoped role and the login role."""

COPY_MIN_ROWS = 100
"""Batches of at least this many rows (records and links) take the COPY path. Below it the JSON
document saves the stage's two extra statements; the figure is a round number well below the
batches bulk imports send, not a measured crossover."""


def _copy_to_stage(conn: Connection, rows: Sequence[Row], route: str) -> None:
    """Create the stage if this transaction has none, and COPY `rows` into it in input order."""
    conn.execute(CreateTable(stage, if_not_exists=True))
    names = sql.SQL(", ").join(map(sql.Identifier, SOURCE))
    # COPY has no SQLAlchemy construct: psycopg composes it, identifiers quoted, data out of band
    statement = sql.SQL("{} COPY {} ({}) FROM STDIN (FORMAT BINARY)").format(
        sql.SQL(COMMENT.format(route=route)), sql.Identifier(stage.name), names
    )
    driver: psycopg.Connection[Any] = conn.connection.driver_connection  # type: ignore[assignment]
    with driver.cursor() as cur, cur.copy(statement) as copy:
        copy.set_types(_COPY_TYPES)
        for n, row in enumerate(rows):
            copy.write_row(_copy_values(n, row))


def _json_source(rows: Sequence[Row]) -> Any:
    """The batch's rows from one JSON document (`json_to_recordset`)."""
    batch = sa.cast(sa.bindparam("batch", _source_json(rows)), sa.JSON)
    columns = (sa.column(name, kind) for name, kind in SOURCE.items())
    return sa.func.json_to_recordset(batch).table_valued(*columns).render_derived("u", with_types=True)


def _insert_source(src: Any, workspace_id: UUID) -> sa.Select[Any]:
    """SELECT producing one records row per source row, in input order (`n`)."""
    c, now = src.c, sa.func.now()
    terms = text_terms(c.language, c.text).lateral("terms")
    return (
        sa.select(
            sa.literal(workspace_id, UUID_T),
            c.id,
            lane_seq.next_value(),
            c.collection,
            c.collection_version,
            c.entity,
            c.type,
            c.key,
            c.text,
            c.content,
            c.scores,
            c.annotations,
            c.fields,
            c.status,
            c.depth,
            c.derived_from,
            c.run_id,
            sa.func.coalesce(c.occurred_at, now),
            now,
            now,
            c.processing,
            c.is_current,
            c.embedding,
            c.embedding_model,
            terms.c.tsv,
            terms.c.repeats,
            terms.c.length,
            c.idempotency_key,
            c.payload_hash,
            c.link_node_id,
        )
        .select_from(src.join(terms, sa.true()))
        .order_by(c.n)
    )


def text_terms(language: Any, text: Any) -> Any:
    """The text's parse in one pass (`memseek_text_terms`, sql/0014_bm25.sql): the stored `tsv`,
    each lexeme keeping at most its first two positions so that `ts_rank_cd` saturates
    (sql/0010_rank_positions.sql), the positions it drops (`repeats`) and the number of
    positions (`length`), which BM25 reads as the record's term frequencies and length."""
    parsed = sa.func.to_tsvector(sa.cast(language, REGCONFIG), text, type_=TSVECTOR)
    return sa.select(
        sa.func.memseek_text_terms(parsed).table_valued(
            sa.column("tsv", TSVECTOR), sa.column("repeats", TSVECTOR), sa.column("length", sa.Integer)
        )
    )


def text_columns(language: Any, text: Any) -> dict[str, Any]:
    """`tsv`, `tsv_repeats` and `tsv_length` of a row written by other means than `insert_rows`
    (a fixture, a restore): every writer of `records` supplies all three (the columns have no
    default, so one that forgets them fails)."""
    terms = text_terms(language, text).subquery("terms")
    names = {"tsv": "tsv", "tsv_repeats": "repeats", "tsv_length": "length"}
    return {column: sa.select(terms.c[name]).scalar_subquery() for column, name in names.items()}


INSERT_COLUMNS = (
    "workspace_id",
    "id",
    "lane_seq",
    "collection",
    "collection_version",
    "entity",
    "type",
    "key",
    "text",
    "content",
    "scores",
    "annotations",
    "fields",
    "status",
    "depth",
    "derived_from",
    "run_id",
    "occurred_at",
    "created_at",
    "last_accessed",
    "processing",
    "is_current",
    "embedding",
    "embedding_model",
    "tsv",
    "tsv_repeats",
    "tsv_length",
    "idempotency_key",
    "payload_hash",
    "link_node_id",
)


def insert_rows(
    conn: Connection, workspace_id: UUID, rows: Sequence[Row], *, copy: bool | None = None
) -> None:
    """Insert `rows` in order and enqueue the pending ones (waking workers at commit).

    `copy` chooses the source (module docstring); None: COPY for `COPY_MIN_ROWS` rows or more.
    """
    route = "POST /records"
    bulk = copy if copy is not None else len(rows) >= COPY_MIN_ROWS
    if bulk:
        _copy_to_stage(conn, rows, route)
    source = _insert_source(stage if bulk else _json_source(rows), workspace_id)
    stmt = citus.returning_rows(records.insert().from_select(INSERT_COLUMNS, source))
    conn.execute(stmt.prefix_with(COMMENT.format(route=route), dialect="postgresql"))
    if bulk:
        conn.execute(stage.delete())  # a later batch of this transaction starts from an empty stage
    pending = [r.id for r in rows if r.pending]
    if pending:
        enqueue(conn, workspace_id, pending)


def enqueue(conn: Connection, workspace_id: UUID, ids: Sequence[UUID]) -> None:
    """Queue records for processing and notify idle workers (delivered when the transaction commits)."""
    source = sa.select(sa.literal(workspace_id, UUID_T), unnest({"id": (ids, UUID_T)}, "q").c.id)
    queued = processing_queue.insert().from_select(["workspace_id", "record_id"], source)
    conn.execute(citus.returning_rows(queued))
    notify_workers(conn)


def notify_workers(conn: Connection, payload: str = "") -> None:
    """Wake idle workers (`QUEUE_CHANNEL`) when the transaction commits; a `payload` asks them for
    something besides their usual round (`retention.SWEEP_NOW`)."""
    conn.execute(sa.select(sa.func.pg_notify(QUEUE_CHANNEL, payload)))


@dataclass(frozen=True, slots=True)
class Existing:
    """A stored record, as an idempotent replay reports it."""

    id: UUID
    payload_hash: str | None
    processing: str
    current: bool


def by_idempotency_key(conn: Connection, workspace_id: UUID, keys: Iterable[str]) -> dict[str, Existing]:
    """Stored records of this workspace holding any of `keys`."""
    wanted = sorted(set(keys))
    if not wanted:
        return {}
    r = records.c
    stmt = sa.select(r.idempotency_key, r.id, r.payload_hash, r.processing, r.is_current).where(
        r.workspace_id == workspace_id, r.idempotency_key == sa.any_(array(wanted, sa.Text))
    )
    return {
        row.idempotency_key: Existing(row.id, row.payload_hash, row.processing, row.is_current)
        for row in conn.execute(stmt)
    }


def depths(conn: Connection, workspace_id: UUID, ids: Iterable[UUID]) -> dict[UUID, int]:
    """Depth of each of `ids` that exists in this workspace (retracted records count as existing)."""
    wanted = sorted(set(ids))
    if not wanted:
        return {}
    r = records.c
    where = sa.and_(r.workspace_id == workspace_id, r.id == sa.any_(array(wanted, UUID_T)))
    stmt = sa.select(r.id, r.depth).where(where)
    return {row.id: row.depth for row in conn.execute(stmt)}


def states(conn: Connection, workspace_id: UUID, ids: Sequence[UUID]) -> dict[UUID, tuple[str, bool]]:
    """(processing, current) of each of `ids` in this workspace."""
    r = records.c
    stmt = sa.select(r.id, r.processing, r.is_current).where(
        r.workspace_id == workspace_id, r.id == sa.any_(array(ids, UUID_T))
    )
    return {row.id: (row.processing, row.is_current) for row in conn.execute(stmt)}


RECORD_COLUMNS = (
    "id",
    "collection",
    "collection_version",
    "entity",
    "type",
    "key",
    "text",
    "content",
    "scores",
    "annotations",
    "status",
    "depth",
    "derived_from",
    "run_id",
    "occurred_at",
    "created_at",
    "last_accessed",
    "processing",
    "processing_error",
    "is_current",
    "retracted_at",
    "retraction_reason",
)


def fetch(
    conn: Connection, workspace_id: UUID, record_id: UUID, *, lock: bool = False
) -> DbRow[*tuple[Any, ...]] | None:
    """One record of this workspace with the columns the API shows (plus lane data), or None."""
    r = records.c
    stmt = sa.select(*record_columns(RECORD_COLUMNS, workspace_id), r.lane_seq, r.link_node_id).where(
        r.workspace_id == workspace_id, r.id == record_id
    )
    return conn.execute(stmt.with_for_update(of=records) if lock else stmt).one_or_none()


def iso(moment: datetime | None) -> str | None:
    """ISO 8601 in UTC (`+00:00`, microseconds kept): the form search hits show (spec examples)."""
    if moment is None:
        return None
    return moment.astimezone(UTC).isoformat()


def record_json(row: DbRow[Any]) -> dict[str, Any]:
    """The whole record under its API names (design §3 `GET /records/{id}`)."""
    m = row._mapping
    out = {"current" if name == "is_current" else name: m[name] for name in RECORD_COLUMNS}
    out["id"] = str(m["id"])
    out["derived_from"] = [str(parent) for parent in m["derived_from"]]
    for name in ("occurred_at", "created_at", "last_accessed", "retracted_at"):
        out[name] = iso(m[name])
    return out
