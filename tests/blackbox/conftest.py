"""Fixtures of the black-box conformance tests, all over HTTP.

`sx_*`, `sx`, `server`: the read side's app over the `sx_` catalog (see `support.sx_catalog`) in the
session database. `bw_*`, `bw`, `bw_other`: the write side's app over the `bw` test catalog (see
`design_support`) in a database of its own. Below them, the apps over test catalogs of their own
(`ag6`, `bv10`, `c5`, `ald`, `s3`, `av5`, `av6-*`, `p5`), each built once per session because
several modules use it, and records several modules start from.
"""

from __future__ import annotations

from collections.abc import Callable
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from flask import Flask
from sqlalchemy.engine import Engine

from memseek.boot import build_runtime
from memseek.runtime import Runtime
from memseek.settings import Settings
from tests.blackbox.catalog_support import NEW
from tests.blackbox.catalog_support import OLD
from tests.blackbox.catalog_support import av6_catalog
from tests.blackbox.catalog_support import bv_catalog
from tests.blackbox.support import EMBED_ENV
from tests.blackbox.support import at
from tests.blackbox.support import note
from tests.blackbox.support import sx_catalog
from tests.blackbox.support import vec
from tests.blackbox.support import write
from tests.conftest import Client
from tests.conftest import Tenant
from tests.conftest import client_for
from tests.conftest import empty_tenant_tables
from tests.conftest import make_database
from tests.conftest import make_tenant
from tests.conftest import migrated_engine
from tests.helpers import app_for
from tests.helpers import fixture_catalog
from tests.helpers import runtime_for
from tests.helpers import with_models
from tests.helpers import with_settings
from tests.openai_server import OpenAIServer
from tests.openai_server import running_server

# --- the spec suite: the `sx_` app ----------------------------------------------------------------


@pytest.fixture(scope="session")
def sx_server() -> Iterator[OpenAIServer]:
    """One OpenAI-protocol server for the session: query embeddings and the `cheap` judge."""
    with running_server() as server:
        yield server


def environ(server: OpenAIServer) -> dict[str, str]:
    return {EMBED_ENV: server.base_url, **server.environ(api_key="sx-key")}


@pytest.fixture(scope="session")
def sx_runtime(
    runtime: Runtime, sx_server: OpenAIServer, tmp_path_factory: pytest.TempPathFactory
) -> Runtime:
    return runtime_for(
        runtime, sx_catalog(tmp_path_factory.mktemp("sx-catalog"), "sx-views"), environ(sx_server)
    )


@pytest.fixture(scope="session")
def sx_app(sx_runtime: Runtime) -> Flask:
    return app_for(sx_runtime)


@pytest.fixture
def server(sx_server: OpenAIServer, sx_runtime: Runtime) -> Iterator[OpenAIServer]:
    """The session's server with no recorded requests and nothing scripted, and the `sx_` app
    with no query vector cached."""
    sx_runtime.models.query_vectors.clear()
    yield sx_server
    sx_server.reset()


@pytest.fixture
def sx(sx_app: Flask, tenant: Tenant, server: OpenAIServer) -> Client:
    """A client of the `sx_` app for the `tenant` workspace."""
    return Client(sx_app.test_client(), tenant)


ClientFactory = Callable[..., Client]


@pytest.fixture
def sx_with(sx_runtime: Runtime, tenant: Tenant, server: OpenAIServer) -> ClientFactory:
    """`sx_with(max_query_chars=10, ...)`: a client of the `sx_` app with deployment settings
    overridden; `environ={...}` replaces the model providers' environment."""

    def make(environ: dict[str, str] | None = None, **settings: Any) -> Client:
        runtime = with_settings(sx_runtime, **settings)
        return client_for(runtime if environ is None else with_models(runtime, environ), tenant)

    return make


# --- the design suite: the `bw` app in the `memseek_bw` database ----------------------------------


@pytest.fixture(scope="session")
def bw_url(pg_server_url: str) -> str:
    return make_database(pg_server_url, "memseek_bw")


@pytest.fixture(scope="session")
def bw_engine(bw_url: str) -> Iterator[Engine]:
    with migrated_engine(Settings(database_url=bw_url)) as engine:
        yield engine


@pytest.fixture(scope="session")
def bw_catalog(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return fixture_catalog(tmp_path_factory.mktemp("bw-catalog"), "bw")


@pytest.fixture(scope="session")
def bw_runtime(bw_url: str, bw_engine: Engine, bw_catalog: Path) -> Iterator[Runtime]:
    settings = Settings(database_url=bw_url, memseek_catalog=bw_catalog, run_worker=False)
    runtime = build_runtime(settings, engine=bw_engine)
    yield runtime
    runtime.close()


@pytest.fixture(scope="session")
def bw_app(bw_runtime: Runtime) -> Flask:
    return app_for(bw_runtime)


@pytest.fixture
def bw_db(bw_engine: Engine) -> Iterator[Engine]:
    """The `bw` engine; its tenant tables are emptied after the test."""
    yield bw_engine
    empty_tenant_tables(bw_engine)


@pytest.fixture
def bw_ws(bw_db: Engine) -> Tenant:
    return make_tenant(bw_db, "bw-a")


@pytest.fixture
def bw_ws_other(bw_db: Engine) -> Tenant:
    return make_tenant(bw_db, "bw-b")


@pytest.fixture
def bw(bw_app: Flask, bw_ws: Tenant) -> Client:
    """A client of the `bw` app for the `bw_ws` workspace."""
    return Client(bw_app.test_client(), bw_ws)


@pytest.fixture
def bw_other(bw_app: Flask, bw_ws_other: Tenant) -> Client:
    return Client(bw_app.test_client(), bw_ws_other)


@pytest.fixture
def served(bw_runtime: Runtime, openai_server: OpenAIServer) -> Runtime:
    """The `bw` runtime with its OpenAI-protocol models (`cheap`, `remote`) served by the local
    test server."""
    return with_models(bw_runtime, openai_server.environ(api_key="test-key"))


# --- apps over the `sx_` collections with test catalogs of their own (tests/fixtures/catalogs/) ---


@pytest.fixture(scope="session")
def ag6_runtime(
    runtime: Runtime, sx_server: OpenAIServer, tmp_path_factory: pytest.TempPathFactory
) -> Runtime:
    """The `ag6` catalog: views of its own (a fenced one, a vector one, a graph one) and a rank
    default of its own."""
    return runtime_for(runtime, sx_catalog(tmp_path_factory.mktemp("ag6-catalog"), "ag6"), environ(sx_server))


@pytest.fixture
def ag6(ag6_runtime: Runtime, tenant: Tenant, server: OpenAIServer) -> Client:
    return client_for(ag6_runtime, tenant)


@pytest.fixture(scope="session")
def bv_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The `bv10` catalog's folder: `bv10_` views of every parameter kind and the `bv10_pkg` package."""
    return bv_catalog(tmp_path_factory.mktemp("bv10-catalog"))


@pytest.fixture(scope="session")
def bv_runtime(sx_runtime: Runtime, bv_root: Path, sx_server: OpenAIServer) -> Runtime:
    """The `bv10_` catalog over the session database, no touch-on-read (so repeated reads rank alike)."""
    environ = {EMBED_ENV: sx_server.base_url, **sx_server.environ(api_key="sx-key")}
    return with_settings(runtime_for(sx_runtime, bv_root, environ), touch_on_read=False)


@pytest.fixture(scope="session")
def bv_app(bv_runtime: Runtime) -> Flask:
    return app_for(bv_runtime)


@pytest.fixture
def bv(bv_app: Flask, tenant: Tenant, server: Any) -> Client:
    return Client(bv_app.test_client(), tenant)


@pytest.fixture(scope="session")
def pkg_app(bv_runtime: Runtime, bv_root: Path) -> Flask:
    """The `bv10_` catalog served with MEMSEEK_PACKAGE=bv10_pkg."""
    return app_for(runtime_for(bv_runtime, bv_root, memseek_package="bv10_pkg"))


@pytest.fixture(scope="session")
def c5_runtime(
    runtime: Runtime, sx_server: OpenAIServer, tmp_path_factory: pytest.TempPathFactory
) -> Runtime:
    """The `c5` catalog: combined-search views and a second PostgreSQL search profile."""
    root = sx_catalog(tmp_path_factory.mktemp("c5-catalog"), "c5")
    return runtime_for(runtime, root, environ(sx_server))


@pytest.fixture
def c5(c5_runtime: Runtime, tenant: Tenant, server: OpenAIServer) -> Client:
    """A client of the c5 catalog's app for the `tenant` workspace."""
    return client_for(c5_runtime, tenant)


@pytest.fixture(scope="session")
def ald_app(runtime: Runtime, sx_server: OpenAIServer, tmp_path_factory: pytest.TempPathFactory) -> Flask:
    """The `sx_` catalog plus the `ald` views, whose parameters supply lists, counts and time bounds."""
    root = sx_catalog(tmp_path_factory.mktemp("ald-catalog"), "sx-views", "ald")
    return app_for(runtime_for(runtime, root, environ(sx_server)))


@pytest.fixture
def ald(ald_app: Flask, tenant: Tenant, sx: Client) -> Client:
    return Client(ald_app.test_client(), tenant)


@pytest.fixture(scope="session")
def s3_runtime(
    runtime: Runtime, sx_server: OpenAIServer, tmp_path_factory: pytest.TempPathFactory
) -> Runtime:
    """The `s3` catalog: the spec's `customer_context` over `sx_vec` and contracts the `sx_` views do
    not declare."""
    root = sx_catalog(tmp_path_factory.mktemp("s3-catalog"), "s3")
    return runtime_for(runtime, root, environ(sx_server))


@pytest.fixture
def s3(s3_runtime: Runtime, tenant: Tenant, server: OpenAIServer) -> Client:
    return client_for(s3_runtime, tenant)


@pytest.fixture(scope="session")
def av5_runtime(
    runtime: Runtime, sx_server: OpenAIServer, tmp_path_factory: pytest.TempPathFactory
) -> Runtime:
    """The `av5` catalog: views whose parameters supply the parts of a query (mode, candidates,
    include, rerank, fusion, graph boost, ordering), and the `av5_pkg` and `av5_bare` packages."""
    return runtime_for(runtime, sx_catalog(tmp_path_factory.mktemp("av5-catalog"), "av5"), environ(sx_server))


@pytest.fixture
def av5(av5_runtime: Runtime, tenant: Tenant, server: OpenAIServer) -> Client:
    return client_for(av5_runtime, tenant)


@pytest.fixture
def av5_pkg(av5_runtime: Runtime, tenant: Tenant, server: OpenAIServer) -> Client:
    """The `av5_` catalog served with MEMSEEK_PACKAGE=av5_pkg."""
    return client_for(runtime_for(av5_runtime, memseek_package="av5_pkg"), tenant)


# --- collection versions: the `av6-old` catalog, then `av6-new` over the same database -------------


@pytest.fixture(scope="session")
def av6_old_runtime(runtime: Runtime, tmp_path_factory: pytest.TempPathFactory) -> Runtime:
    return runtime_for(runtime, av6_catalog(tmp_path_factory.mktemp("av6-old"), OLD))


@pytest.fixture(scope="session")
def av6_new_runtime(
    runtime: Runtime, av6_old_runtime: Runtime, tmp_path_factory: pytest.TempPathFactory
) -> Runtime:
    """Built after `av6_old_runtime`: the same database, restarted on the catalog that gained v2."""
    return runtime_for(runtime, av6_catalog(tmp_path_factory.mktemp("av6-new"), NEW))


# --- apps over the `bw` catalog with models or test catalogs of their own ------------------------


@pytest.fixture
def sclient(served: Runtime, bw_ws: Tenant) -> Client:
    """A `bw` client whose `cheap`/`remote` models are the local OpenAI-protocol server."""
    return client_for(served, bw_ws)


@pytest.fixture(scope="session")
def p5_runtime(bw_runtime: Runtime, tmp_path_factory: pytest.TempPathFactory) -> Runtime:
    """The `bw` catalog plus a node collection embedded by the `remote` (OpenAI-protocol) model."""
    return runtime_for(bw_runtime, fixture_catalog(tmp_path_factory.mktemp("p5-catalog"), "bw", "p5"))


# --- records several modules start from -----------------------------------------------------------

TEXTS = ["budget plan review", "budget plan", "budget", "unrelated words"]
"""Three texts holding 3, 2 and 1 of the query's words, and one holding none."""


@pytest.fixture
def mode_corpus(sx: Client) -> None:
    """TEXTS in `sx_notes` (amounts 1–4, importance 4–1) and in `sx_vec`, with distinct times."""
    write(
        sx,
        *(
            note(text, content={"amount": i + 1}, scores={"importance": 4 - i}, occurred_at=at(i + 1))
            for i, text in enumerate(TEXTS)
        ),
    )
    write(sx, *(vec(text, occurred_at=at(i + 1)) for i, text in enumerate(TEXTS)))


@pytest.fixture
def three(sx: Client) -> dict[str, str]:
    """Three text matches whose ordinary order is a, b, c (importance 3, 2, 1)."""
    names = ["a", "b", "c"]
    written = write(sx, *(note(f"budget {n}", scores={"importance": 3 - i}) for i, n in enumerate(names)))
    return dict(zip(names, written, strict=True))
