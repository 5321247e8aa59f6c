"""Blind black-box tests of the views side, written from the spec and design text alone.

Spec sections: "Reading memory: the routes", "Start by describing the question", "View fields",
"What is checked, and when", "Parameter fields", "The view response wrapper", "Errors", "Changing a
view"; design §2 (the catalog, packages and MCP) and §3 (HTTP API). Every view here carries the
`bv10_` prefix (definitions are immutable in the session database) over the `sx_` collections.
"""

from __future__ import annotations

from typing import Any

import pytest
from flask import Flask

from memseek.runtime import Runtime
from tests.blackbox.support import ids
from tests.blackbox.support import note
from tests.blackbox.support import vec
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


def test_get_search_is_a_rendered_hybrid_search(bv: Client) -> None:
    """ "GET /search translates your request into a hybrid (meaning + keyword) search, returns text,
    collection, type, and occurred_at, and turns on prompt-ready rendering"."""
    [apple] = write(bv, vec("apples and pears", entity="gs"))
    write(bv, vec("apples elsewhere", entity="other"))
    body = ok(bv.get("/search?q=apples&entity=gs&collection=sx_vec&k=5"))
    assert ids(body) == [apple]
    hit = body["hits"][0]
    assert {"text", "collection", "type", "occurred_at"} <= set(hit)
    assert (hit["text"], hit["collection"], hit["type"]) == ("apples and pears", "sx_vec", "note")
    assert "scores" not in hit and "entity" not in hit
    assert isinstance(body["rendered"], str) and apple in body["rendered"]
    assert body["ranking"]["kind"] == "rank_expression"


@pytest.mark.parametrize(
    "query",
    [
        "",
        "?entity=x",
        "?q=a&mode=text",
        "?q=a&render=false",
        "?q=a&include=text",
        "?q=a&k=0",
        "?q=a&k=101",
        "?q=a&k=two",
        "?q=a&fence_tag=x",
    ],
    ids=["no-q", "no-q-with-entity", "mode", "render", "include", "k-zero", "k-over", "k-text", "fence-tag"],
)
def test_get_search_rejects_everything_else(bv: Client, query: str) -> None:
    """GET /search: "required q plus optional entity, collection, and k. Any other query parameter is
    rejected"; k is 1–100."""
    error(bv.get(f"/search{query}"), 422)


def test_rank_schema_route(bv: Client, bv_app: Flask) -> None:
    """ "Inspect the deployment's ranking contract — GET /rank/schema", authenticated."""
    assert isinstance(ok(bv.get("/rank/schema")), dict)
    error(bv_app.test_client().get("/rank/schema"), 401)
