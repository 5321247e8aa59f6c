"""Blind black-box tests of the views side, written from the spec and design text alone.

Spec sections: "Reading memory: the routes", "Start by describing the question", "View fields",
"What is checked, and when", "Parameter fields", "The view response wrapper", "Errors", "Changing a
view"; design §2 (the catalog, packages and MCP) and §3 (HTTP API). Every view here carries the
`bv10_` prefix (definitions are immutable in the session database) over the `sx_` collections.
"""

from __future__ import annotations

from typing import Any

from flask import Flask

from memseek.runtime import Runtime
from tests.blackbox.support import note
from tests.blackbox.support import write
from tests.conftest import Client
from tests.conftest import Tenant
from tests.conftest import client_for
from tests.helpers import error
from tests.helpers import ok
from tests.helpers import view_query
from tests.helpers import with_settings

# --- Errors ---------------------------------------------------------------------------------------


def test_a_view_response_too_large_is_409(bv_runtime: Runtime, tenant: Tenant, server: Any) -> None:
    """ "The result was successful but too large to return — 409 response_too_large"."""
    client = client_for(with_settings(bv_runtime, max_response_bytes=1000), tenant)
    write(client, *[note("lorem ipsum " * 40, entity="big") for _ in range(5)])
    ok(view_query(client, "bv10_ver", {"entity": "big"}))  # ids only: under the limit
    error(view_query(client, "bv10_ctx", {"entity": "big", "task": "lorem"}), 409, "response_too_large")


# --- GET /search and GET /rank/schema -------------------------------------------------------------


def test_rank_schema_route(bv: Client, bv_app: Flask) -> None:
    """ "Inspect the deployment's ranking contract — GET /rank/schema", authenticated."""
    assert isinstance(ok(bv.get("/rank/schema")), dict)
    error(bv_app.test_client().get("/rank/schema"), 401)
