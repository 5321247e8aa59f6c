"""The bare engine: what PostgreSQL + pgvector do without Memseek, on the same database.

* Reads: raw pgvector `ORDER BY embedding <=> q LIMIT k`, raw full-text top-k ranked by
  `ts_rank_cd` over an OR of the query's lexemes (the service's matching rule), the two in one
  statement (raw hybrid), and filtered B-tree scans (newest in a collection; one entity's rows
  with a declared-field filter and sort).
* Writes: batched INSERTs and COPY into `bench_bare`, a table created `LIKE records INCLUDING
  ALL` (same columns, HNSW, GIN and B-tree indexes, constraints), each batch one transaction;
  and the batched INSERTs once more without the HNSW index.
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import numpy as np
import psycopg
from pgvector.psycopg import register_vector
from psycopg import sql

from bench.corpus import Corpus
from bench.corpus import SynthRecord
from memseek.models.local import MODEL_ID
from memseek.write.ids import uuid7

RAW_VECTOR = "SELECT id FROM records ORDER BY embedding <=> %(vec)s LIMIT %(k)s"
RAW_TEXT = (
    "SELECT id FROM records, memseek_any_lexeme('english', %(q)s) AS query "
    "WHERE tsv @@ query ORDER BY ts_rank_cd(tsv, query) DESC LIMIT %(k)s"
)
RAW_HYBRID = f"({RAW_VECTOR}) UNION ({RAW_TEXT})"
RAW_RECENT = (
    "SELECT id FROM records WHERE workspace_id = %(ws)s AND collection = %(collection)s "
    "ORDER BY occurred_at DESC LIMIT %(k)s"
)
RAW_STRUCTURED = (
    "SELECT id FROM records WHERE workspace_id = %(ws)s AND collection = %(collection)s "
    "AND entity = %(entity)s AND fields->>'channel' = %(channel)s "
    "ORDER BY fields->'starts_at' NULLS LAST, seq LIMIT %(k)s"
)
RAW_QUERIES = {
    "vector": RAW_VECTOR,
    "text": RAW_TEXT,
    "hybrid": RAW_HYBRID,
    "recent": RAW_RECENT,
    "structured": RAW_STRUCTURED,
}


def raw_connection(conn_url: str) -> psycopg.Connection:
    conn = psycopg.connect(conn_url, autocommit=True)
    register_vector(conn)
    return conn


def time_raw(conn: psycopg.Connection, sql: str, params: dict[str, Any]) -> tuple[float, int]:
    """(milliseconds, rows) for one statement, measured around execute + fetch."""
    started = time.perf_counter()
    rows = conn.execute(sql, params, prepare=True).fetchall()
    return (time.perf_counter() - started) * 1000, len(rows)


def relation_sizes(conn: psycopg.Connection) -> dict[str, int]:
    """Bytes of every non-empty table (`pg_table_size`: heap + TOAST) and index (`pg_relation_size`)
    of the public schema, largest first: the records table, its indexes, and whatever search
    structures the service keeps beside it."""
    rows = conn.execute(
        "SELECT CASE c.relkind WHEN 'i' THEN 'index ' ELSE 'table ' END || c.relname, "
        "CASE c.relkind WHEN 'i' THEN pg_relation_size(c.oid) ELSE pg_table_size(c.oid) END AS bytes "
        "FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
        "WHERE n.nspname = 'public' AND c.relkind IN ('r', 'i') ORDER BY bytes DESC"
    ).fetchall()
    return {name: int(size) for name, size in rows if size > 8192}


# --- writes ------------------------------------------------------------------------------------

BARE_COLUMNS = (
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
    "occurred_at",
    "created_at",
    "last_accessed",
    "processing",
    "is_current",
    "embedding",
    "embedding_model",
)


def _micros(value: str) -> int:
    moment = datetime.fromisoformat(value)
    return int(moment.timestamp()) * 1_000_000 + moment.microsecond


def materialised_fields(record: SynthRecord) -> dict[str, Any]:
    """The declared fields as the service stores them (datetimes as epoch microseconds)."""
    fields = {k: v for k, v in record.content.items() if k in ("channel", "tags", "amount", "topic")}
    if "starts_at" in record.content:
        fields["starts_at"] = _micros(record.content["starts_at"])
    return fields


def bare_rows(
    corpus: Corpus, vectors: Sequence[np.ndarray | None], workspace: uuid.UUID
) -> list[tuple[Any, ...]]:
    """One `bench_bare` row per corpus record (lane_seq and tsv are computed by the database)."""
    current = corpus.current_flags()
    now = datetime.now().astimezone()
    rows = []
    for rec, vec, is_current in zip(corpus.records, vectors, current, strict=True):
        rows.append(
            (
                workspace,
                uuid7(),
                rec.collection,
                1,
                rec.entity,
                rec.type,
                rec.key,
                rec.text,
                json.dumps(rec.content),
                "{}",
                "{}",
                json.dumps(materialised_fields(rec)),
                rec.status,
                0,
                [],
                rec.occurred_at,
                now,
                now,
                "ready",
                is_current,
                vec,
                None if vec is None else MODEL_ID,
            )
        )
    return rows


def create_bare(conn: psycopg.Connection, *, hnsw: bool = True) -> None:
    """`bench_bare` shaped like `records`; without its HNSW index when `hnsw` is false (what the
    vector index costs a write: the part of the bound no code above PostgreSQL can remove)."""
    conn.execute("DROP TABLE IF EXISTS bench_bare")
    conn.execute("CREATE TABLE bench_bare (LIKE records INCLUDING ALL)")
    if not hnsw:
        names = conn.execute(
            "SELECT c.relname FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid "
            "JOIN pg_am a ON a.oid = c.relam WHERE i.indrelid = 'bench_bare'::regclass AND a.amname = 'hnsw'"
        ).fetchall()
        for (name,) in names:
            conn.execute(sql.SQL("DROP INDEX {}").format(sql.Identifier(name)))


_INSERT = (
    "INSERT INTO bench_bare ("
    + ", ".join(BARE_COLUMNS)
    + ", tsv) VALUES (%s, %s, nextval('records_lane_seq'), "
    + ", ".join(["%s"] * (len(BARE_COLUMNS) - 3))
    + ", to_tsvector('english', %s))"
)
_STAGE_COLUMNS = tuple(c for c in BARE_COLUMNS if c != "lane_seq")


@dataclass(frozen=True, slots=True)
class BareResult:
    """Records per second of one bare write path."""

    method: str
    records: int
    seconds: float
    batch_ms: tuple[float, ...]

    @property
    def per_second(self) -> float:
        return self.records / self.seconds


def _batches(rows: Sequence[tuple[Any, ...]], size: int) -> list[Sequence[tuple[Any, ...]]]:
    return [rows[i : i + size] for i in range(0, len(rows), size)]


def bare_insert(conn: psycopg.Connection, rows: Sequence[tuple[Any, ...]], batch: int = 1000) -> BareResult:
    """Batched INSERTs (psycopg `executemany`, pipelined), one transaction per batch."""
    conn.execute("TRUNCATE bench_bare")
    timings = []
    started = time.perf_counter()
    for part in _batches(rows, batch):
        t0 = time.perf_counter()
        with conn.transaction(), conn.cursor() as cur:
            cur.executemany(_INSERT, [(*row, row[7]) for row in part])
        timings.append((time.perf_counter() - t0) * 1000)
    return BareResult("batched INSERT", len(rows), time.perf_counter() - started, tuple(timings))


def bare_copy(conn: psycopg.Connection, rows: Sequence[tuple[Any, ...]], batch: int = 1000) -> BareResult:
    """COPY each batch into a temporary stage, then INSERT … SELECT (tsv and lane_seq computed)."""
    conn.execute("TRUNCATE bench_bare")
    names = ", ".join(_STAGE_COLUMNS)
    conn.execute("DROP TABLE IF EXISTS bench_stage")
    conn.execute(f"CREATE UNLOGGED TABLE bench_stage AS SELECT {names} FROM bench_bare WITH NO DATA")
    move = (
        f"INSERT INTO bench_bare ({names}, lane_seq, tsv) "
        f"SELECT {names}, nextval('records_lane_seq'), to_tsvector('english', text) FROM bench_stage"
    )
    timings = []
    started = time.perf_counter()
    for part in _batches(rows, batch):
        t0 = time.perf_counter()
        with conn.transaction(), conn.cursor() as cur:
            with cur.copy(f"COPY bench_stage ({names}) FROM STDIN") as copy:
                for row in part:
                    copy.write_row(row)
            cur.execute(move)
            cur.execute("TRUNCATE bench_stage")
        timings.append((time.perf_counter() - t0) * 1000)
    elapsed = time.perf_counter() - started
    conn.execute("DROP TABLE bench_stage")
    return BareResult("COPY + INSERT…SELECT", len(rows), elapsed, tuple(timings))
