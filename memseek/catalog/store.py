"""Definitions are immutable: each loaded `(kind, name, version)` is stored once with its hash.

Loading a catalog whose content changed under an already stored identity is refused — the fix
is to publish a new version (views, collections, packages) or, for conf entries (search
profiles, model aliases, enrichments), a new name. The rank default is stored under its own
hash, so it never conflicts. Switching which version is `active` does not change a hash.
"""

from __future__ import annotations

import sqlalchemy as sa
from sqlalchemy.dialects.postgresql import insert
from sqlalchemy.engine import Connection

from memseek.catalog.catalog import Catalog
from memseek.catalog.catalog import Definition
from memseek.catalog.problems import CatalogError
from memseek.catalog.problems import Problem
from memseek.schema import definitions


def register_definitions(conn: Connection, catalog: Catalog) -> None:
    """Store every definition not stored yet; refuse any whose stored hash differs.

    Runs in the caller's transaction, so a refusal stores nothing. Concurrent starts are safe:
    inserts that lose the race are skipped, then every hash is compared with what is stored.
    """
    if not catalog.definitions:
        return
    rows = [{"kind": d.kind, "name": d.name, "version": d.version, "hash": d.hash, "body": d.body}
            for d in catalog.definitions]
    conn.execute(insert(definitions).on_conflict_do_nothing(), rows)
    stored = _stored_hashes(conn, catalog.definitions)
    changed = [d for d in catalog.definitions if stored[(d.kind, d.name, d.version)] != d.hash]
    if changed:
        raise CatalogError("the catalog changes definitions that are already loaded",
                           [_changed(d) for d in changed])


def _stored_hashes(conn: Connection, loaded: tuple[Definition, ...]) -> dict[tuple[str, str, int], str]:
    keys = sa.tuple_(definitions.c.kind, definitions.c.name, definitions.c.version)
    wanted = [(d.kind, d.name, d.version) for d in loaded]
    query = sa.select(definitions.c.kind, definitions.c.name, definitions.c.version, definitions.c.hash)
    return {(r.kind, r.name, r.version): r.hash for r in conn.execute(query.where(keys.in_(wanted)))}


def _changed(definition: Definition) -> Problem:
    remedy = ("define it under a new name" if definition.kind in ("model", "search_profile", "enrichment")
              else "publish a new version")
    return Problem(definition.file, (), f"content differs from the stored {definition.label}; "
                   f"definitions are immutable: {remedy}", definition.label)
