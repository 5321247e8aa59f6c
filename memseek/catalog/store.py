"""Definitions are immutable: each loaded `(kind, name, version)` is stored once with its hash.

Loading a catalog whose content changed under an already stored identity is refused — the fix
is to publish a new version (views, collections, packages). Deployment conf entries (search
profiles, model aliases, enrichments) are operator settings, not versioned contracts: they are
recorded as last loaded, so an operator can point `cheap` at another model. The rank default is
stored under its own hash, so it never conflicts. Switching `active` does not change a hash.
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

CONF_KINDS = frozenset({"model", "search_profile", "enrichment"})


def register_definitions(conn: Connection, catalog: Catalog) -> None:
    """Store every definition not stored yet; refuse any whose stored hash differs.

    Runs in the caller's transaction, so a refusal stores nothing. Concurrent starts are safe:
    inserts that lose the race are skipped, then every hash is compared with what is stored.
    """
    if not catalog.definitions:
        return
    settings = [d for d in catalog.definitions if d.kind in CONF_KINDS]
    contracts = [d for d in catalog.definitions if d.kind not in CONF_KINDS]
    if settings:
        upsert = insert(definitions)
        conn.execute(
            upsert.on_conflict_do_update(
                index_elements=["kind", "name", "version"],
                # The proposed row's own default, not now() here: Citus (where `definitions` is a
                # reference table) takes only immutable functions in DO UPDATE SET.
                set_={k: upsert.excluded[k] for k in ("hash", "body", "loaded_at")},
            ),
            _rows(settings),
        )
    if not contracts:
        return
    conn.execute(insert(definitions).on_conflict_do_nothing(), _rows(contracts))
    stored = _stored_hashes(conn, tuple(contracts))
    changed = [d for d in contracts if stored[(d.kind, d.name, d.version)] != d.hash]
    if changed:
        raise CatalogError(
            "the catalog changes definitions that are already loaded", [_changed(d) for d in changed]
        )


def _rows(loaded: list[Definition]) -> list[dict[str, object]]:
    return [
        {"kind": d.kind, "name": d.name, "version": d.version, "hash": d.hash, "body": d.body} for d in loaded
    ]


def _stored_hashes(conn: Connection, loaded: tuple[Definition, ...]) -> dict[tuple[str, str, int], str]:
    keys = sa.tuple_(definitions.c.kind, definitions.c.name, definitions.c.version)
    wanted = [(d.kind, d.name, d.version) for d in loaded]
    query = sa.select(definitions.c.kind, definitions.c.name, definitions.c.version, definitions.c.hash)
    return {(r.kind, r.name, r.version): r.hash for r in conn.execute(query.where(keys.in_(wanted)))}


def _changed(definition: Definition) -> Problem:
    return Problem(
        definition.file,
        (),
        f"content differs from the stored {definition.label}; "
        "definitions are immutable: publish a new version",
        definition.label,
    )
