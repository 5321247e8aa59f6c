"""Blind black-box tests of the views side, written from the spec and design text alone.

Spec sections: "Reading memory: the routes", "Start by describing the question", "View fields",
"What is checked, and when", "Parameter fields", "The view response wrapper", "Errors", "Changing a
view"; design §2 (the catalog, packages and MCP) and §3 (HTTP API). Every view here carries the
`bv10_` prefix (definitions are immutable in the session database) over the `sx_` collections.
"""

from __future__ import annotations

from flask import Flask

from tests.conftest import Client
from tests.helpers import error
from tests.helpers import ok

# --- GET /search and GET /rank/schema -------------------------------------------------------------


def test_rank_schema_route(bv: Client, bv_app: Flask) -> None:
    """ "Inspect the deployment's ranking contract — GET /rank/schema", authenticated."""
    assert isinstance(ok(bv.get("/rank/schema")), dict)
    error(bv_app.test_client().get("/rank/schema"), 401)
