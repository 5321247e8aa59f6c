"""Write path: an index for workers claiming due queue rows across workspaces.

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-30

Workers serve every workspace, so their claim (`WHERE next_attempt_at <= now() ORDER BY
next_attempt_at, record_id LIMIT n FOR UPDATE SKIP LOCKED`) cannot use the workspace-led
`processing_queue_due` index. The queue only holds records still waiting for processing,
so this is the one index not led by `workspace_id`; on a distributed deployment each shard
keeps its own copy and workers claim shard by shard.
"""

from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_index("processing_queue_next", "processing_queue", ["next_attempt_at", "record_id"])


def downgrade() -> None:
    op.drop_index("processing_queue_next", table_name="processing_queue")
