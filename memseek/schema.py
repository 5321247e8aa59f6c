"""The tables, as SQLAlchemy Core objects. Alembic migrations create them; code reads them here.

`workspace_id` leads every primary key, unique constraint and index of tenant data, so the
tables can be distributed or partitioned by workspace without changing any statement.
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import lru_cache
from typing import Any

import sqlalchemy as sa
from pgvector.sqlalchemy import Vector
from sqlalchemy.dialects.postgresql import ARRAY
from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.dialects.postgresql import TSVECTOR
from sqlalchemy.dialects.postgresql import UUID
from sqlalchemy.dialects.postgresql import dialect as postgresql_dialect

EMBEDDING_DIM = 384
"""Width of the stored vectors: every embedding model a collection uses must produce this."""

TS = sa.TIMESTAMP(timezone=True)
metadata = sa.MetaData()

workspaces = sa.Table(
    "workspaces",
    metadata,
    sa.Column("id", UUID(as_uuid=True), primary_key=True),
    sa.Column("name", sa.Text, nullable=False, unique=True),
    sa.Column("created_at", TS, nullable=False, server_default=sa.func.now()),
)

api_keys = sa.Table(
    "api_keys",
    metadata,
    sa.Column("workspace_id", UUID(as_uuid=True), sa.ForeignKey("workspaces.id"), primary_key=True),
    sa.Column("id", UUID(as_uuid=True), primary_key=True),
    sa.Column("prefix", sa.Text, nullable=False),
    sa.Column("digest", sa.LargeBinary, nullable=False, unique=True),
    sa.Column("created_at", TS, nullable=False, server_default=sa.func.now()),
    sa.Column("revoked_at", TS),
)

definitions = sa.Table(
    "definitions",
    metadata,
    sa.Column("kind", sa.Text, primary_key=True),
    sa.Column("name", sa.Text, primary_key=True),
    sa.Column("version", sa.Integer, primary_key=True),
    sa.Column("hash", sa.Text, nullable=False),
    sa.Column("body", JSONB, nullable=False),
    sa.Column("loaded_at", TS, nullable=False, server_default=sa.func.now()),
)

lane_seq = sa.Sequence("records_lane_seq", metadata=metadata)
"""Order in which records entered their (collection, entity, key, status) lane."""

records = sa.Table(
    "records",
    metadata,
    sa.Column("workspace_id", UUID(as_uuid=True), sa.ForeignKey("workspaces.id"), primary_key=True),
    sa.Column("id", UUID(as_uuid=True), primary_key=True),
    sa.Column("seq", sa.BigInteger, sa.Identity(always=True), nullable=False),
    sa.Column("lane_seq", sa.BigInteger, nullable=False),
    sa.Column("collection", sa.Text, nullable=False),
    sa.Column("collection_version", sa.Integer, nullable=False),
    sa.Column("entity", sa.Text, nullable=False),
    sa.Column("type", sa.Text, nullable=False),
    sa.Column("key", sa.Text),
    sa.Column("text", sa.Text, nullable=False),
    sa.Column("content", JSONB, nullable=False),
    sa.Column("scores", JSONB, nullable=False),
    sa.Column("annotations", JSONB, nullable=False),
    sa.Column("fields", JSONB, nullable=False),
    sa.Column("status", sa.Text, nullable=False),
    sa.Column("depth", sa.Integer, nullable=False),
    sa.Column("derived_from", ARRAY(UUID(as_uuid=True)), nullable=False),
    sa.Column("run_id", sa.Text),
    sa.Column("occurred_at", TS, nullable=False),
    sa.Column("created_at", TS, nullable=False),
    sa.Column("last_accessed", TS, nullable=False),
    sa.Column("processing", sa.Text, nullable=False),
    sa.Column("processing_error", sa.Text),
    sa.Column("is_current", sa.Boolean, nullable=False),
    sa.Column("retracted_at", TS),
    sa.Column("retraction_reason", sa.Text),
    sa.Column("embedding", Vector(EMBEDDING_DIM)),
    sa.Column("embedding_model", sa.Text),
    sa.Column("tsv", TSVECTOR, nullable=False),
    sa.Column("tsv_repeats", TSVECTOR, nullable=False),
    sa.Column("tsv_length", sa.Integer, nullable=False),
    sa.Column("idempotency_key", sa.Text),
    sa.Column("payload_hash", sa.Text),
    sa.Column("link_node_id", UUID(as_uuid=True)),
)

processing_queue = sa.Table(
    "processing_queue",
    metadata,
    sa.Column("workspace_id", UUID(as_uuid=True), primary_key=True),
    sa.Column("record_id", UUID(as_uuid=True), primary_key=True),
    sa.Column("attempts", sa.Integer, nullable=False, server_default="0"),
    sa.Column("next_attempt_at", TS, nullable=False, server_default=sa.func.now()),
    sa.Column("last_error", sa.Text),
    sa.Column("enqueued_at", TS, nullable=False, server_default=sa.func.now()),
)

record_postings = sa.Table(
    "record_postings",
    metadata,
    sa.Column("workspace_id", UUID(as_uuid=True), nullable=False),
    sa.Column("record_id", UUID(as_uuid=True), nullable=False),
    sa.Column("lexeme", sa.Text(collation="C"), nullable=False),
    sa.Column("impact", sa.REAL, nullable=False),
    sa.Index("record_postings_top", "workspace_id", "lexeme", sa.text("impact DESC"), "record_id"),
)
"""One row per (record, lexeme of its tsv), maintained by triggers on records (sql/0003_postings.sql,
sql/0005_write_speed.sql: no foreign key of its own, records' holds; sql/0012_postings_key.sql: no
primary key, one index):
bounded keyword candidates take the best postings of each query lexeme."""

text_corpus = sa.Table(
    "text_corpus",
    metadata,
    sa.Column("workspace_id", UUID(as_uuid=True), nullable=False),
    sa.Column("records", sa.BigInteger, nullable=False),
    sa.Column("length", sa.BigInteger, nullable=False),
    sa.Index("text_corpus_workspace", "workspace_id", postgresql_include=["records", "length"]),
)
"""A workspace's BM25 corpus (its records not retracted) as append-only deltas: the sum of its
rows is its record count and total length in positions (sql/0014_bm25.sql; triggers on records
write them, `write.text_stats.compact` folds them)."""

text_lexemes = sa.Table(
    "text_lexemes",
    metadata,
    sa.Column("workspace_id", UUID(as_uuid=True), nullable=False),
    sa.Column("lexeme", sa.Text(collation="C"), nullable=False),
    sa.Column("records", sa.BigInteger, nullable=False),
    sa.Index("text_lexemes_lexeme", "workspace_id", "lexeme", postgresql_include=["records"]),
)
"""Each lexeme's document frequency in a workspace's BM25 corpus, as append-only deltas like
`text_corpus`."""

record_touches = sa.Table(
    "record_touches",
    metadata,
    sa.Column("workspace_id", UUID(as_uuid=True), primary_key=True),
    sa.Column("record_id", UUID(as_uuid=True), primary_key=True),
    sa.Column("last_accessed", TS, nullable=False),
)
"""When a search last returned a record (touch-on-read, `memseek.write.touch`), kept apart from
`records` so that touches never rewrite record rows (sql/0008_touches.sql). A record's
`last_accessed` is the later of `records.last_accessed` and its row here (`last_accessed`)."""


erasures = sa.Table(
    "erasures",
    metadata,
    sa.Column("workspace_id", UUID(as_uuid=True), sa.ForeignKey("workspaces.id"), primary_key=True),
    sa.Column("id", UUID(as_uuid=True), primary_key=True),
    sa.Column("kind", sa.Text, nullable=False),
    sa.Column("record_id", UUID(as_uuid=True)),
    sa.Column("entity", sa.Text),
    sa.Column("collection", sa.Text),
    sa.Column("reason", sa.Text),
    sa.Column("requested_by", sa.Text),
    sa.Column("state", sa.Text, nullable=False),
    sa.Column("high_water", sa.BigInteger),
    sa.Column("cutoff_field", sa.Text),
    sa.Column("cutoff", TS),
    sa.Column("counts", JSONB, nullable=False, server_default="{}"),
    sa.Column("started_at", TS, nullable=False, server_default=sa.func.now()),
    sa.Column("finished_at", TS),
)
"""The erasure log and the queue of batched erasures (sql/0013_lifecycle.sql, `memseek.write.erasures`):
what was named, why, by whom, and how many records of each collection went, never their content."""


def last_accessed(record: Any = None, workspace: Any = None, queued: Any = None) -> sa.ColumnElement[Any]:
    """`last_accessed` of the `records` row `record` (default: the table itself): its own
    column or its latest touch, whichever is later (GREATEST ignores a missing touch). With
    `workspace` (the statement's workspace id or its parameter) the touch is looked up by it:
    Citus routes a statement to one shard only where every table names its workspace itself,
    not through the row it correlates with. `queued` is the record's touch not yet written, as
    the statement knows it (a search's `Query.queued_touch`; NULL when there is none)."""
    r = (records if record is None else record).c
    t = record_touches.c
    owner = r.workspace_id if workspace is None else workspace
    touched = sa.select(t.last_accessed).where(t.workspace_id == owner, t.record_id == r.id)
    also = () if queued is None else (queued,)
    return sa.func.greatest(r.last_accessed, touched.scalar_subquery(), *also, type_=TS)


_DIALECT = postgresql_dialect()  # type: ignore[no-untyped-call]


@lru_cache(maxsize=4096)
def inline(value: str | int) -> sa.ColumnElement[Any]:
    """A catalog identifier or a fixed constant as a literal in the statement text instead of a
    bound value: a partial or expression index matches a statement only through the literal it
    was built with, and a generic plan sees no bound value (`memseek.search.graph`,
    docs/search.md). Rendered once, by SQLAlchemy's own quoting, when the template is built."""
    value_type = sa.Integer() if isinstance(value, int) else sa.Text()
    rendered = sa.literal(value, value_type).compile(dialect=_DIALECT, compile_kwargs={"literal_binds": True})
    return sa.literal_column(str(rendered), value_type)


def field_text(table: Any, name: str) -> sa.ColumnElement[str]:
    """`table.fields ->> 'name'`: the materialised value of declared field `name` as text."""
    value: sa.ColumnElement[str] = table.c.fields.op("->>", return_type=sa.Text)(inline(name))
    return value


def record_columns(
    names: Iterable[str], workspace: Any = None, queued: Any = None
) -> list[sa.ColumnElement[Any]]:
    """`records` columns by name, as reads show them: `last_accessed` is `last_accessed()` (of
    `workspace`, the statement's, with the `queued` touch of the row)."""
    touched = last_accessed(workspace=workspace, queued=queued)
    return [touched.label(name) if name == "last_accessed" else records.c[name] for name in names]
