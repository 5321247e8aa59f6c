"""Fixtures of the integration tests over the two shared test catalogs.

`g_` (view_support): `view_catalog`, `view_runtime`, `view_app` for the session, and per test
`vclient`, `graph` (rows written straight into the table) and `statements` (the SQL sent).
`w_` (write_support): `write_runtime`, `write_app` per module, and per test `wclient`.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from flask import Flask
from sqlalchemy.engine import Engine

from memseek.runtime import Runtime
from tests.conftest import Client
from tests.conftest import Tenant
from tests.helpers import app_for
from tests.helpers import runtime_for
from tests.helpers import statements_sent
from tests.integration import view_support
from tests.integration import write_support
from tests.integration.view_support import Graph
from tests.integration.view_support import Statements

# --- the `g_` catalog -----------------------------------------------------------------------------


@pytest.fixture(scope="session")
def view_catalog(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return view_support.write_catalog(tmp_path_factory.mktemp("view-catalog"))


@pytest.fixture(scope="session")
def view_runtime(runtime: Runtime, view_catalog: Path) -> Runtime:
    return runtime_for(runtime, view_catalog)


@pytest.fixture(scope="session")
def view_app(view_runtime: Runtime) -> Flask:
    return app_for(view_runtime)


@pytest.fixture
def vclient(view_app: Flask, tenant: Tenant) -> Client:
    """A client of the `g_` app for the `tenant` workspace."""
    return Client(view_app.test_client(), tenant)


@pytest.fixture
def graph(db: Engine, tenant: Tenant) -> Graph:
    return Graph(db, tenant.id)


@pytest.fixture
def statements(view_runtime: Runtime) -> Iterator[Statements]:
    """Every statement the view app's engine runs during the test."""
    with statements_sent(view_runtime.engine) as sent:
        yield Statements(sent)


# --- the `w_` catalog -----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def write_runtime(runtime: Runtime, tmp_path_factory: pytest.TempPathFactory) -> Runtime:
    """A runtime over the `w_` catalog (local embedder, HTTP providers unconfigured)."""
    return runtime_for(runtime, write_support.write_catalog(tmp_path_factory.mktemp("write-catalog")))


@pytest.fixture(scope="module")
def write_app(write_runtime: Runtime) -> Flask:
    return app_for(write_runtime)


@pytest.fixture
def wclient(write_app: Flask, tenant: Tenant) -> Client:
    """A client of the `w_` app for the `tenant` workspace."""
    return Client(write_app.test_client(), tenant)
