"""PLACEHOLDER until the catalog lands: will store (kind, name, version, hash) and refuse changes."""

from __future__ import annotations

from sqlalchemy.engine import Connection

from memseek.catalog.catalog import Catalog


def register_definitions(conn: Connection, catalog: Catalog) -> None:
    return None
