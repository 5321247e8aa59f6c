"""Everything a running Memseek needs, built once: settings, engine, catalog, models."""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy.engine import Engine

from memseek import migrate
from memseek.catalog.catalog import Catalog
from memseek.catalog.load import load_catalog
from memseek.catalog.store import register_definitions
from memseek.db import check_reachable
from memseek.db import create_db_engine
from memseek.indexes import ensure_field_indexes
from memseek.models.registry import ModelRegistry
from memseek.search.state import SearchState
from memseek.settings import Settings
from memseek.write.touch import TouchQueue


@dataclass(frozen=True, slots=True)
class Runtime:
    settings: Settings
    engine: Engine
    catalog: Catalog
    models: ModelRegistry
    touches: TouchQueue
    """Touch-on-read of this process's searches, written in the background (`memseek.write.touch`)."""
    search: SearchState
    """What this runtime's searches share and learn (threads, plan choices, large workspaces)."""


def build_runtime(settings: Settings, *, engine: Engine | None = None, upgrade: bool = True) -> Runtime:
    """Connect, migrate (unless told not to), load and register the catalog."""
    catalog = load_catalog(settings.memseek_catalog, package=settings.memseek_package)
    engine = engine or create_db_engine(settings)
    check_reachable(engine)
    if upgrade:
        migrate.upgrade(engine)
    with engine.begin() as conn:
        register_definitions(conn, catalog)
        ensure_field_indexes(conn, catalog)
    # Providers are built lazily and read their environment variables per call (never here).
    models = ModelRegistry(catalog.models)
    touches = TouchQueue(engine)
    search = SearchState.open(engine)
    return Runtime(
        settings=settings, engine=engine, catalog=catalog, models=models, touches=touches, search=search
    )
