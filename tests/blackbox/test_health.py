"""`GET /health` (design §3): no key needed, the database's state and the catalog hash."""

from __future__ import annotations

from dataclasses import replace

from flask import Flask

from memseek.db import create_db_engine
from memseek.runtime import Runtime
from memseek.settings import Settings
from tests.blackbox.design_support import raw
from tests.conftest import Tenant
from tests.helpers import app_for
from tests.helpers import error

# --- GET /health ----------------------------------------------------------------------------------


def test_health_needs_no_key_and_reports_database_and_catalog_hash(
    bw_app: Flask, bw_runtime: Runtime
) -> None:
    response = raw(bw_app, "GET", "/health")
    assert response.status_code == 200
    body = response.get_json()
    assert body["database"] == "ok"
    assert body["catalog_hash"] == bw_runtime.catalog.hash and body["catalog_hash"]
    # a key is not needed, and a bad one does not matter
    assert raw(bw_app, "GET", "/health", headers={"Authorization": "Bearer nope"}).status_code == 200


def test_the_catalog_hash_changes_with_the_catalog(bw_runtime: Runtime) -> None:
    from memseek.catalog.load import load_catalog
    from memseek.search.view_checks import VIEW_CHECKS

    with_package = load_catalog(
        bw_runtime.settings.memseek_catalog, package="support_agent", view_checks=VIEW_CHECKS
    )
    assert with_package.hash != bw_runtime.catalog.hash
    again = load_catalog(bw_runtime.settings.memseek_catalog, view_checks=VIEW_CHECKS)
    assert again.hash == bw_runtime.catalog.hash


def test_health_reports_an_unreachable_database(bw_runtime: Runtime) -> None:
    dead = create_db_engine(Settings(database_url="postgresql://memseek@127.0.0.1:9/nothing"))
    app = app_for(replace(bw_runtime, engine=dead))
    response = raw(app, "GET", "/health")
    assert response.status_code == 503
    body = response.get_json()
    assert body["database"] != "ok" and body["catalog_hash"] == bw_runtime.catalog.hash


def test_an_unreachable_database_is_503_not_500(bw_runtime: Runtime, bw_ws: Tenant) -> None:
    dead = create_db_engine(Settings(database_url="postgresql://memseek@127.0.0.1:9/nothing"))
    app = app_for(replace(bw_runtime, engine=dead))
    err = error(raw(app, "GET", "/views", headers=bw_ws.headers), 503)
    assert "127.0.0.1" not in err["message"] and "psycopg" not in err["message"]
