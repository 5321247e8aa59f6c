"""Alembic environment. Migrations run through `memseek migrate`, which passes a connection."""

from __future__ import annotations

from alembic import context
from memseek.schema import metadata

connection = context.config.attributes["connection"]
context.configure(connection=connection, target_metadata=metadata, transaction_per_migration=True)
with context.begin_transaction():
    context.run_migrations()
