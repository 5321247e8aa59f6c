"""Fixtures of the black-box conformance tests: the `sx_` app over HTTP (see `support`)."""

from __future__ import annotations

from collections.abc import Callable
from collections.abc import Iterator
from dataclasses import replace
from typing import Any

import pytest
from flask import Flask

from memseek.models.registry import ModelRegistry
from memseek.runtime import Runtime
from memseek.search import embed
from tests.blackbox.design_support import bw  # noqa: F401 (test_design_* fixtures)
from tests.blackbox.design_support import bw_app  # noqa: F401 (test_design_* fixtures)
from tests.blackbox.design_support import bw_catalog  # noqa: F401 (test_design_* fixtures)
from tests.blackbox.design_support import bw_db  # noqa: F401 (test_design_* fixtures)
from tests.blackbox.design_support import bw_engine  # noqa: F401 (test_design_* fixtures)
from tests.blackbox.design_support import bw_other  # noqa: F401 (test_design_* fixtures)
from tests.blackbox.design_support import bw_runtime  # noqa: F401 (test_design_* fixtures)
from tests.blackbox.design_support import bw_url  # noqa: F401 (test_design_* fixtures)
from tests.blackbox.design_support import bw_ws  # noqa: F401 (test_design_* fixtures)
from tests.blackbox.design_support import bw_ws_other  # noqa: F401 (test_design_* fixtures)
from tests.blackbox.support import EMBED_ENV
from tests.blackbox.support import write_catalog
from tests.conftest import Client
from tests.conftest import Tenant
from tests.integration.view_support import app_for
from tests.integration.view_support import runtime_for
from tests.openai_server import OpenAIServer
from tests.openai_server import running_server


@pytest.fixture(scope="session")
def sx_server() -> Iterator[OpenAIServer]:
    """One OpenAI-protocol server for the session: query embeddings and the `cheap` judge."""
    with running_server() as server:
        yield server


def environ(server: OpenAIServer) -> dict[str, str]:
    return {EMBED_ENV: server.base_url, "OPENAI_BASE_URL": server.base_url, "OPENAI_API_KEY": "sx-key"}


@pytest.fixture(scope="session")
def sx_runtime(
    runtime: Runtime, sx_server: OpenAIServer, tmp_path_factory: pytest.TempPathFactory
) -> Runtime:
    built = runtime_for(runtime, write_catalog(tmp_path_factory.mktemp("sx-catalog")))
    return replace(built, models=ModelRegistry(built.catalog.models, environ=environ(sx_server)))


@pytest.fixture(scope="session")
def sx_app(sx_runtime: Runtime) -> Flask:
    return app_for(sx_runtime)


@pytest.fixture
def server(sx_server: OpenAIServer) -> Iterator[OpenAIServer]:
    """The session's server with no recorded requests and nothing scripted."""
    embed.CACHE.clear()
    yield sx_server
    sx_server.requests.clear()
    sx_server._replies.clear()
    sx_server._scripted.clear()


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
        runtime = replace(sx_runtime, settings=sx_runtime.settings.with_overrides(**settings))
        if environ is not None:
            runtime = replace(runtime, models=ModelRegistry(runtime.catalog.models, environ=environ))
        return Client(app_for(runtime).test_client(), tenant)

    return make
