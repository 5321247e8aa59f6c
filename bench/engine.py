"""The bare engine: what PostgreSQL + pgvector do without Memseek, on the same database.

* Reads: raw pgvector `ORDER BY embedding <=> q LIMIT k`, raw full-text top-k ranked by
  `ts_rank_cd` over an OR of the query's lexemes (the service's matching rule), the two in one
  statement (raw hybrid), and filtered B-tree scans (newest in a collection; one entity's rows
  with a declared-field filter and sort).
* Writes (`BARE_PATHS`): batched INSERTs and COPY, each into its own table created `LIKE records
  INCLUDING ALL` (same columns, HNSW, GIN and B-tree indexes, constraints) with the storage
  parameters of `records`, and batched INSERTs into such a table without the HNSW index; each
  batch one transaction. `LIKE` copies no trigger, no foreign key and no row-level security, and
  the BM25 columns are dropped: a bare table keeps only what a plain pgvector application's
  table has, so the service's search structures (postings, BM25 statistics) and checks count
  against the service. The paths named "postings trigger" add that one trigger back.
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
from memseek.write.store import INSERT_COLUMNS
from memseek.write.store import stage as service_stage

RAW_VECTOR = "SELECT id FROM records ORDER BY embedding <=> %(vec)s LIMIT %(k)s"
RAW_VECTOR_POOL = "SELECT id FROM records ORDER BY embedding <=> %(vec)s LIMIT %(pool)s"
"""The ANN work a vector search's candidate pool takes (measured with `hnsw.ef_search` = pool)."""
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
    "vector_pool": RAW_VECTOR_POOL,
    "text": RAW_TEXT,
    "hybrid": RAW_HYBRID,
    "recent": RAW_RECENT,
    "structured": RAW_STRUCTURED,
}


RAW_SETTINGS = {"vector_pool": lambda params: {"hnsw.ef_search": str(max(40, params["pool"]))}}
"""Session settings a bare statement runs with (reset after it): the pool's ANN searches as wide
as the pool, as the service's vector and hybrid statements do."""


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


WARM_CHUNK = 64 * 1024 * 1024
SEGMENT = 1024**3
"""PostgreSQL splits a relation's main fork into files of this size (`path`, `path.1`, …)."""


def read_into_cache(conn: psycopg.Connection) -> int:
    """Read the main fork of every table, TOAST table and index of the public schema once,
    through the server (`pg_read_binary_file`, superuser), and return the bytes read.

    A virtual machine may page out file pages it finds cold, so a server started on a kept
    database would read its working set from disk during the first requests of each mode, and
    the warm-up requests would not reach steady state. Read first, every request and every bare
    statement starts from the same warm OS page cache, as on a long-running server."""
    rows = conn.execute(
        "SELECT pg_relation_filepath(c.oid), pg_relation_size(c.oid) FROM pg_class c "
        "JOIN pg_namespace n ON n.oid = c.relnamespace "
        "WHERE n.nspname IN ('public', 'pg_toast') AND c.relkind IN ('r', 'i', 't') "
        "AND pg_relation_size(c.oid) > 0"
    ).fetchall()
    read = 0
    for path, size in rows:
        for start in range(0, int(size), WARM_CHUNK):
            segment, offset = divmod(start, SEGMENT)
            name = f"{path}.{segment}" if segment else path
            length = min(WARM_CHUNK, int(size) - start, SEGMENT - offset)
            sql = "SELECT length(pg_read_binary_file(%s, %s, %s))"
            read += int(conn.execute(sql, (name, offset, length)).fetchone()[0])
    return read


# --- writes ------------------------------------------------------------------------------------

SERVICE_ONLY = {
    "run_id",
    "tsv",
    "tsv_repeats",
    "tsv_length",
    "idempotency_key",
    "payload_hash",
    "link_node_id",
}
BARE_COLUMNS = tuple(c for c in INSERT_COLUMNS if c not in SERVICE_ONLY)
"""The service's insert columns a plain pgvector application has too (`tsv` the server computes;
BM25's repeated positions and lengths are the service's own)."""


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


_STAGE_COLUMNS = tuple(c for c in BARE_COLUMNS if c != "lane_seq")


@dataclass(frozen=True, slots=True)
class BarePath:
    """One bare-engine write path, into its own table shaped like `records` (`LIKE records INCLUDING
    ALL`). Without its HNSW index (`hnsw` false) it shows what the vector index costs a write: the
    part of the bound no code above PostgreSQL can remove. With `postings`, the service's own
    postings trigger (`memseek_postings_insert`) fires on it, so its postings go to the service's
    `record_postings` (under ids no record has; the benchmark database is thrown away): the same
    storage work as the service's table, without the service. With `direct`, COPY writes straight
    into the table: its `tsv` is a generated column (`to_tsvector('english', text)`, with the same
    GIN index) and `lane_seq` defaults to `nextval`, so the server computes what the INSERT computes
    in SQL, as a plain pgvector application would lay its table out for COPY."""

    method: str
    table: str
    copy: bool = False
    hnsw: bool = True
    postings: bool = False
    direct: bool = False

    def create(self, conn: psycopg.Connection) -> None:
        table = sql.Identifier(self.table)
        conn.execute(sql.SQL("DROP TABLE IF EXISTS {}").format(table))
        conn.execute(sql.SQL("CREATE TABLE {} (LIKE records INCLUDING ALL)").format(table))
        # BM25's repeated positions and lengths (sql/0014_bm25.sql) are the service's own.
        conn.execute(sql.SQL("ALTER TABLE {} DROP COLUMN tsv_repeats, DROP COLUMN tsv_length").format(table))
        _set_storage(conn, table, _records_storage(conn))
        if not self.hnsw:
            names = conn.execute(
                "SELECT c.relname FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid "
                "JOIN pg_am a ON a.oid = c.relam WHERE i.indrelid = %s::regclass AND a.amname = 'hnsw'",
                (self.table,),
            ).fetchall()
            for (name,) in names:
                conn.execute(sql.SQL("DROP INDEX {}").format(sql.Identifier(name)))
        if self.direct:
            _direct_copy_columns(conn, table)
        if self.postings:
            conn.execute(
                sql.SQL(
                    "CREATE TRIGGER {} AFTER INSERT ON {} REFERENCING NEW TABLE AS new_rows "
                    "FOR EACH STATEMENT EXECUTE FUNCTION memseek_postings_insert()"
                ).format(sql.Identifier(f"{self.table}_postings"), table)
            )
        if self.copy and not self.direct:
            names = sql.SQL(", ").join(map(sql.Identifier, _STAGE_COLUMNS))
            stage_table = sql.Identifier(_stage(self.table))
            conn.execute(sql.SQL("DROP TABLE IF EXISTS {}").format(stage_table))
            conn.execute(
                sql.SQL("CREATE UNLOGGED TABLE {} AS SELECT {} FROM {} WITH NO DATA").format(
                    stage_table, names, table
                )
            )
            _set_storage(conn, stage_table, _SERVICE_STAGE_STORAGE)

    def drop(self, conn: psycopg.Connection) -> None:
        for name in (self.table, _stage(self.table)) if self.copy and not self.direct else (self.table,):
            conn.execute(sql.SQL("DROP TABLE IF EXISTS {}").format(sql.Identifier(name)))

    def write(self, conn: psycopg.Connection, part: Sequence[tuple[Any, ...]]) -> float:
        """Write one batch in one transaction; returns its milliseconds."""
        if self.postings:  # ids of its own: every postings path writes into the one record_postings
            part = [(row[0], uuid7(), *row[2:]) for row in part]
        started = time.perf_counter()
        with conn.transaction(), conn.cursor() as cur:
            if self.direct:
                _copy_direct(cur, self.table, part)
            elif self.copy:
                _copy(cur, self.table, part)
            else:
                cur.executemany(_insert_sql(self.table), [(*row, row[7]) for row in part])
        return (time.perf_counter() - started) * 1000


BARE_PATHS = (
    BarePath("batched INSERT", "bench_bare"),
    BarePath("COPY", "bench_bare_direct", copy=True, direct=True),
    BarePath("COPY + INSERT…SELECT", "bench_bare_copy", copy=True),
    BarePath("batched INSERT, no HNSW index", "bench_bare_nohnsw", hnsw=False),
    BarePath("COPY + INSERT…SELECT + postings trigger", "bench_bare_postings", copy=True, postings=True),
    BarePath("COPY + postings trigger", "bench_bare_direct_postings", copy=True, direct=True, postings=True),
)
"""Batched INSERTs (psycopg `executemany`, pipelined; `to_tsvector` and `nextval` in SQL); COPY
straight into the table (tsv a generated column, lane_seq a `nextval` default); COPY into an
unlogged stage followed by INSERT … SELECT (the server computes tsv and lane_seq); and
the batched INSERTs into a table without the HNSW index; COPY again, through the stage and
straight in, into tables with the service's postings trigger (it fires once per statement, as the
service's does): the bare engine doing the service's storage work."""


_SERVICE_STAGE_STORAGE = [
    f"{name}={value}" for name, value in service_stage.dialect_options["postgresql"]["with"].items()
]
"""The storage parameters of the service's COPY stage (`toast_tuple_target`), which a bare
stage gets too."""


def _records_storage(conn: psycopg.Connection) -> list[str]:
    """`LIKE` copies columns and indexes, not storage parameters: those of `records`, for a bare
    table to get too, so both keep a row on its page the same way."""
    row = conn.execute("SELECT reloptions FROM pg_class WHERE oid = 'records'::regclass").fetchone()
    return list(row[0] or []) if row else []


def _set_storage(conn: psycopg.Connection, table: sql.Identifier, settings: list[str]) -> None:
    if settings:
        options = sql.SQL(", ").join(map(sql.SQL, settings))
        conn.execute(sql.SQL("ALTER TABLE {} SET ({})").format(table, options))


def _stage(table: str) -> str:
    """The unlogged table a COPY path stages each batch in."""
    return f"{table}_stage"


def _direct_copy_columns(conn: psycopg.Connection, table: sql.Identifier) -> None:
    """`tsv` computed by the server on COPY (a generated column, GIN index as on records), and
    `lane_seq` from the records sequence by default."""
    conn.execute(sql.SQL("ALTER TABLE {} DROP COLUMN tsv").format(table))
    conn.execute(
        sql.SQL(
            "ALTER TABLE {} ADD COLUMN tsv tsvector NOT NULL "
            "GENERATED ALWAYS AS (to_tsvector('english'::regconfig, text)) STORED"
        ).format(table)
    )
    conn.execute(sql.SQL("CREATE INDEX ON {} USING gin (tsv)").format(table))
    conn.execute(
        sql.SQL("ALTER TABLE {} ALTER COLUMN lane_seq SET DEFAULT nextval('records_lane_seq')").format(table)
    )


def _insert_sql(table: str) -> sql.Composed:
    return sql.SQL(
        "INSERT INTO {} ({}, tsv) "
        "VALUES (%s, %s, nextval('records_lane_seq'), {}, to_tsvector('english', %s))"
    ).format(
        sql.Identifier(table),
        sql.SQL(", ").join(map(sql.Identifier, BARE_COLUMNS)),
        sql.SQL(", ").join([sql.Placeholder()] * (len(BARE_COLUMNS) - 3)),
    )


def _copy_direct(cur: psycopg.Cursor[Any], table: str, part: Sequence[tuple[Any, ...]]) -> None:
    names = sql.SQL(", ").join(map(sql.Identifier, _STAGE_COLUMNS))
    with cur.copy(sql.SQL("COPY {} ({}) FROM STDIN").format(sql.Identifier(table), names)) as copy:
        for row in part:
            copy.write_row(row)


def _copy(cur: psycopg.Cursor[Any], table: str, part: Sequence[tuple[Any, ...]]) -> None:
    names = sql.SQL(", ").join(map(sql.Identifier, _STAGE_COLUMNS))
    stage = sql.Identifier(_stage(table))
    with cur.copy(sql.SQL("COPY {} ({}) FROM STDIN").format(stage, names)) as copy:
        for row in part:
            copy.write_row(row)
    cur.execute(
        sql.SQL(
            "INSERT INTO {} ({}, lane_seq, tsv) "
            "SELECT {}, nextval('records_lane_seq'), to_tsvector('english', text) FROM {}"
        ).format(sql.Identifier(table), names, names, stage)
    )
    cur.execute(sql.SQL("TRUNCATE {}").format(stage))
