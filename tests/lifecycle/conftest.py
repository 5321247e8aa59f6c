"""Fixtures of the lifecycle tests: the `lc_` catalog's runtime and app (`support`), its clients
per tenant, and the SDK's running service over the reference catalog (`tests.sdk.conftest`)."""

from __future__ import annotations

import pytest
from flask import Flask

from memseek.runtime import Runtime
from tests.conftest import Client
from tests.conftest import Tenant
from tests.helpers import app_for
from tests.helpers import runtime_for
from tests.lifecycle import support
from tests.sdk.conftest import am  # noqa: F401  (the SDK's fixtures, shared as they are)
from tests.sdk.conftest import anyio_backend  # noqa: F401
from tests.sdk.conftest import m  # noqa: F401
from tests.sdk.conftest import service  # noqa: F401


@pytest.fixture(scope="session")
def lc_runtime(runtime: Runtime, tmp_path_factory: pytest.TempPathFactory) -> Runtime:
    """A runtime over the `lc_` catalog (the packaged local embedder), on the session database."""
    return runtime_for(runtime, support.write_catalog(tmp_path_factory.mktemp("lc-catalog")))


@pytest.fixture(scope="session")
def lc_app(lc_runtime: Runtime) -> Flask:
    return app_for(lc_runtime)


@pytest.fixture
def lc(lc_app: Flask, tenant: Tenant) -> Client:
    """A client of the `lc_` app for the `tenant` workspace."""
    return Client(lc_app.test_client(), tenant)


@pytest.fixture
def lc_other(lc_app: Flask, other_tenant: Tenant) -> Client:
    """A client of the `lc_` app for another workspace."""
    return Client(lc_app.test_client(), other_tenant)
