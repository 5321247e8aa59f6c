"""Start-up: build the `Runtime` a process runs on.

The app factory (`memseek.app.create_app`) and the CLI's commands build their runtime here; the
services only receive one (`memseek.runtime`), so none of them imports the code that starts the
process. Whoever builds a runtime closes it at shutdown (`Runtime.close`).
"""

from __future__ import annotations

from sqlalchemy.engine import Engine

from memseek import migrate
from memseek.catalog.load import load_catalog
from memseek.catalog.store import register_definitions
from memseek.db import check_reachable
from memseek.db import create_db_engine
from memseek.indexes import ensure_field_indexes
from memseek.models.registry import ModelRegistry
from memseek.runtime import Runtime
from memseek.search.view_checks import VIEW_CHECKS
from memseek.search_state import SearchState
from memseek.settings import Settings
from memseek.write.touch import TouchQueue


def build_runtime(settings: Settings, *, engine: Engine | None = None, upgrade: bool = True) -> Runtime:
    """Load the catalog (with the search layer's view checks, as `memseek catalog check` does),
    connect, migrate (unless told not to), register the catalog and create its indexes."""
    catalog = load_catalog(
        settings.memseek_catalog, package=settings.memseek_package, view_checks=VIEW_CHECKS
    )
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
