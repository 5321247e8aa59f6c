"""Spec "Errors" (422 / 404 / 503 / 409) in the one error shape, and one search = one profile.

A second small catalog (`sx2_`) spreads collections over three search profiles: two PostgreSQL
profiles and a turbopuffer one whose engine is not available here.
"""

from __future__ import annotations

from typing import Any

import pytest
from flask import Flask

from memseek.runtime import Runtime
from tests.blackbox.conftest import ClientFactory
from tests.blackbox.conftest import environ
from tests.blackbox.support import ids
from tests.blackbox.support import invalid
from tests.blackbox.support import note
from tests.blackbox.support import rejects
from tests.blackbox.support import search
from tests.blackbox.support import write
from tests.conftest import Client
from tests.conftest import Tenant
from tests.helpers import app_for
from tests.helpers import error
from tests.helpers import fixture_catalog
from tests.helpers import runtime_for
from tests.openai_server import OpenAIServer


@pytest.fixture(scope="module")
def profiles_app(
    runtime: Runtime, sx_server: OpenAIServer, tmp_path_factory: pytest.TempPathFactory
) -> Flask:
    return app_for(
        runtime_for(
            runtime, fixture_catalog(tmp_path_factory.mktemp("sx2-catalog"), "sx2"), environ(sx_server)
        )
    )


@pytest.fixture
def spread(profiles_app: Flask, tenant: Tenant) -> Client:
    return Client(profiles_app.test_client(), tenant)


def test_a_single_search_must_resolve_to_one_profile(spread: Client) -> None:
    rejects(
        spread,
        {"mode": "recent", "scope": {"collections": ["sx2_here", "sx2_there"]}},
        "scope",
        "collections",
    )
    rejects(spread, {"mode": "recent"}, "scope", "collections")  # an empty scope spans them too
    assert search(spread, {"mode": "recent", "scope": {"collections": ["sx2_there"]}})["profiles"] == [
        "sx_pg2"
    ]


def one(collection: str) -> dict[str, Any]:
    return {"collection": collection, "entity": "e", "type": "note", "text": "budget"}


def test_each_source_resolves_on_its_own_and_profiles_are_sorted(spread: Client) -> None:
    here, there = write(spread, one("sx2_here"), one("sx2_there"))
    body = search(
        spread,
        {
            "sources": [
                {"name": "b", "mode": "recent", "scope": {"collections": ["sx2_there"]}},
                {"name": "a", "mode": "recent", "scope": {"collections": ["sx2_here"]}},
                {"name": "c", "mode": "recent", "scope": {"collections": ["sx2_there"]}},
            ],
            "fuse": {"kind": "rrf"},
        },
    )
    assert body["profiles"] == ["pg_default", "sx_pg2"]
    assert set(ids(body)) == {here, there}
    assert [b["source"] for b in body["backend"]] == ["b", "a", "c"]


def test_views_list_every_profile_they_resolved_to(spread: Client) -> None:
    (entry,) = [v for v in spread.get("/views").get_json()["views"] if v["name"] == "sx2_both"]
    assert entry["profiles"] == ["pg_default", "sx_pg2"]
    body = spread.post("/views/sx2_both/query", json={}).get_json()
    assert body["profiles"] == ["pg_default", "sx_pg2"] and body["parameters"] == {}


def test_a_profile_whose_engine_is_unavailable_is_503(spread: Client) -> None:
    error(
        spread.post("/search", json={"mode": "text", "q": "x", "scope": {"collections": ["sx2_remote"]}}), 503
    )


def test_an_engine_that_cannot_run_the_mode_is_422(spread: Client) -> None:
    rejects(spread, {"mode": "recent", "scope": {"collections": ["sx2_remote"]}}, "mode")


# --- the errors table -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("body", "status"),
    [
        pytest.param({"mode": "recent", "k": 0}, 422, id="invalid-request"),
        pytest.param(
            {"mode": "recent", "scope": {"collections": ["sx_missing"]}}, 422, id="catalog-reference"
        ),
        pytest.param({"mode": "recent", "where": {"missing": {"eq": 1}}}, 422, id="undeclared-field"),
        pytest.param(
            {"mode": "vector", "q": "x", "scope": {"collections": ["sx_notes"]}},
            422,
            id="mode-needs-embeddings",
        ),
    ],
)
def test_invalid_requests_are_422(sx: Client, body: dict[str, Any], status: int) -> None:
    invalid(sx.post("/search", json=body))


def test_no_active_view_is_404(sx: Client) -> None:
    err = error(sx.post("/views/sx_missing/query", json={}), 404, "not_found")
    assert err["details"] == [] or all("loc" in d for d in err["details"])


def test_too_large_is_409(sx: Client, sx_with: ClientFactory) -> None:
    write(sx, *(note("y" * 1000) for _ in range(5)))
    error(
        sx_with(max_response_bytes=1000).post("/search", json={"mode": "recent", "include": ["text"]}),
        409,
        "response_too_large",
    )


def test_unknown_routes_and_methods_keep_the_error_shape(sx: Client) -> None:
    error(sx.get("/nowhere"), 404)
    error(sx.get("/views/sx_context/query"), 405)
    error(sx.post("/views"), 405)


def test_a_view_whose_parameter_breaks_the_query_blames_the_parameter(sx_with: ClientFactory) -> None:
    client = sx_with(max_query_chars=5)
    invalid(
        client.post("/views/sx_context/query", json={"entity": "e", "task": "far too long"}),
        "parameters",
        "task",
    )


def test_one_source_must_resolve_to_one_profile(spread: Client) -> None:
    err = rejects(
        spread,
        {
            "sources": [{"name": "s", "mode": "recent", "scope": {"collections": ["sx2_here", "sx2_there"]}}],
            "fuse": {"kind": "rrf"},
        },
    )
    assert ["sources", 0, "scope", "collections"] in [d["loc"] for d in err["details"]]
