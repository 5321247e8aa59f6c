"""Initial schema: workspaces, keys, definitions, records, processing queue, security.

Revision ID: 0001
Revises:
Create Date: 2026-11-30
"""

from pathlib import Path

import sqlalchemy as sa
from pgvector.sqlalchemy import Vector
from sqlalchemy.dialects.postgresql import ARRAY
from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.dialects.postgresql import TSVECTOR
from sqlalchemy.dialects.postgresql import UUID

from alembic import op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None

SQL = Path(__file__).resolve().parents[2] / "sql"
TS = sa.TIMESTAMP(timezone=True)
WS = UUID(as_uuid=True)


def upgrade() -> None:
    op.execute("CREATE EXTENSION IF NOT EXISTS vector")
    op.create_table(
        "workspaces",
        sa.Column("id", WS, primary_key=True),
        sa.Column("name", sa.Text, nullable=False, unique=True),
        sa.Column("created_at", TS, nullable=False, server_default=sa.func.now()),
    )
    op.create_table(
        "api_keys",
        sa.Column("workspace_id", WS, sa.ForeignKey("workspaces.id"), primary_key=True),
        sa.Column("id", WS, primary_key=True),
        sa.Column("prefix", sa.Text, nullable=False),
        sa.Column("digest", sa.LargeBinary, nullable=False, unique=True),
        sa.Column("created_at", TS, nullable=False, server_default=sa.func.now()),
        sa.Column("revoked_at", TS),
    )
    op.create_table(
        "definitions",
        sa.Column("kind", sa.Text, primary_key=True),
        sa.Column("name", sa.Text, primary_key=True),
        sa.Column("version", sa.Integer, primary_key=True),
        sa.Column("hash", sa.Text, nullable=False),
        sa.Column("body", JSONB, nullable=False),
        sa.Column("loaded_at", TS, nullable=False, server_default=sa.func.now()),
    )
    op.execute("CREATE SEQUENCE records_lane_seq")
    _create_records()
    op.create_table(
        "processing_queue",
        sa.Column("workspace_id", WS, primary_key=True),
        sa.Column("record_id", WS, primary_key=True),
        sa.Column("attempts", sa.Integer, nullable=False, server_default="0"),
        sa.Column("next_attempt_at", TS, nullable=False, server_default=sa.func.now()),
        sa.Column("last_error", sa.Text),
        sa.Column("enqueued_at", TS, nullable=False, server_default=sa.func.now()),
        sa.ForeignKeyConstraint(
            ["workspace_id", "record_id"], ["records.workspace_id", "records.id"], ondelete="CASCADE"
        ),
    )
    op.create_index("processing_queue_due", "processing_queue", ["workspace_id", "next_attempt_at"])
    op.execute((SQL / "0001_functions.sql").read_text())
    op.execute((SQL / "0001_security.sql").read_text())


def _create_records() -> None:
    op.create_table(
        "records",
        sa.Column("workspace_id", WS, sa.ForeignKey("workspaces.id"), primary_key=True),
        sa.Column("id", WS, primary_key=True),
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
        sa.Column("derived_from", ARRAY(WS), nullable=False),
        sa.Column("run_id", sa.Text),
        sa.Column("occurred_at", TS, nullable=False),
        sa.Column("created_at", TS, nullable=False),
        sa.Column("last_accessed", TS, nullable=False),
        sa.Column("processing", sa.Text, nullable=False),
        sa.Column("processing_error", sa.Text),
        sa.Column("is_current", sa.Boolean, nullable=False),
        sa.Column("retracted_at", TS),
        sa.Column("retraction_reason", sa.Text),
        sa.Column("embedding", Vector(384)),
        sa.Column("embedding_model", sa.Text),
        sa.Column("tsv", TSVECTOR, nullable=False),
        sa.Column("idempotency_key", sa.Text),
        sa.Column("payload_hash", sa.Text),
        sa.Column("link_node_id", WS),
        sa.CheckConstraint("status IN ('active', 'draft')", name="records_status"),
        sa.CheckConstraint("processing IN ('pending', 'ready', 'failed')", name="records_processing"),
        sa.CheckConstraint("depth >= 0", name="records_depth"),
    )
    ix = op.create_index
    ix("records_seq", "records", ["workspace_id", "seq"], unique=True)
    ix("records_scope", "records", ["workspace_id", "collection", "entity", "occurred_at"])
    ix("records_recent", "records", ["workspace_id", "occurred_at"])
    ix("records_created", "records", ["workspace_id", "collection", "created_at"])
    ix(
        "records_link_node",
        "records",
        ["workspace_id", "link_node_id"],
        postgresql_where=sa.text("link_node_id IS NOT NULL"),
    )
    ix(
        "records_idempotency",
        "records",
        ["workspace_id", "idempotency_key"],
        unique=True,
        postgresql_where=sa.text("idempotency_key IS NOT NULL"),
    )
    ix(
        "records_current_slot",
        "records",
        ["workspace_id", "collection", "entity", "key", "status"],
        unique=True,
        postgresql_where=sa.text("is_current AND key IS NOT NULL"),
    )
    ix(
        "records_lane",
        "records",
        ["workspace_id", "collection", "entity", "key", "status", "lane_seq"],
        postgresql_where=sa.text("key IS NOT NULL"),
    )
    ix("records_tsv", "records", ["tsv"], postgresql_using="gin")
    op.execute(
        "CREATE INDEX records_embedding ON records USING hnsw (embedding vector_cosine_ops) "
        "WITH (m = 16, ef_construction = 64)"
    )


def downgrade() -> None:
    op.execute("DROP POLICY IF EXISTS queue_workspace ON processing_queue")
    op.execute("DROP POLICY IF EXISTS records_workspace ON records")
    op.drop_table("processing_queue")
    op.drop_table("records")
    op.execute("DROP SEQUENCE records_lane_seq")
    op.drop_table("definitions")
    op.drop_table("api_keys")
    op.drop_table("workspaces")
    op.execute("DROP FUNCTION IF EXISTS memseek_any_lexeme(regconfig, text)")
    op.execute(
        "DO $$ BEGIN EXECUTE format('REVOKE memseek_scoped FROM %I', current_user); "
        "EXCEPTION WHEN undefined_object THEN NULL; END $$"
    )
