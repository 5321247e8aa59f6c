"""PLACEHOLDER until the catalog lands."""

from __future__ import annotations

from sqlalchemy.engine import Connection

from memseek.catalog.load import Catalog


def register_definitions(conn: Connection, catalog: Catalog) -> None:
    return None
