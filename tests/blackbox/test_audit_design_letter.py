"""Conformance audit, to the letter: views, record actions, auth and the error shape, catalog, CLI.

Statements of the design (`memseek.md`) and the read-side spec (`views-and-search.md`) that the
earlier suites did not pin. Every expectation comes from the documents:

* spec, "What is checked, and when": a view call "validates the finished request a second time
  before running it. That second check matters when a parameter supplies part of the query
  itself, such as a timestamp or a list";
* design §3: error body `{"error": {"code", "message", "details": [{"loc", "msg"}]}}` on every
  route, `413` (body too large), `409` (conflict);
* design §1 "Drafts": approve moves a draft into the active lane where it becomes the current
  active value; reject retracts a draft with a reason; retraction happens once.
"""

from __future__ import annotations

from typing import Any

import pytest
from flask import Flask

from memseek.runtime import Runtime
from tests.blackbox.conftest import environ
from tests.blackbox.support import link
from tests.blackbox.support import sx_catalog
from tests.blackbox.support import write
from tests.conftest import Client
from tests.conftest import Tenant
from tests.helpers import app_for
from tests.helpers import listed_views
from tests.helpers import locs
from tests.helpers import ok
from tests.helpers import runtime_for
from tests.helpers import view_query
from tests.openai_server import OpenAIServer

# --- graph views: the fixed contract, narrowed by the view ----------------------------------------


@pytest.fixture(scope="module")
def walk_app(runtime: Runtime, sx_server: OpenAIServer, tmp_path_factory: pytest.TempPathFactory) -> Flask:
    """The `sx_` collections with one graph view of its own (graph boosts need exactly one)."""
    root = sx_catalog(tmp_path_factory.mktemp("ald-walk-catalog"), "ald-walk")
    return app_for(runtime_for(runtime, root, environ(sx_server)))


@pytest.fixture
def aldw(walk_app: Flask, tenant: Tenant, sx: Client) -> Client:
    return Client(walk_app.test_client(), tenant)


@pytest.mark.parametrize(
    ("parameters", "name"),
    [
        pytest.param({"seed": "a", "predicates": ["advises"]}, "predicates", id="item-enum"),
        pytest.param({"seed": "a", "direction": "both"}, "direction", id="narrowed-direction"),
        pytest.param({"seed": "a", "depth": 4}, "depth", id="narrowed-depth"),
        pytest.param({"seed": "a", "limit": 51}, "limit", id="narrowed-limit"),
        pytest.param({"seed": "a", "depth": 0}, "depth", id="spec-minimum-depth"),
        pytest.param({"seed": "a", "limit": 0}, "limit", id="spec-minimum-limit"),
    ],
)
def test_a_graph_view_may_narrow_its_contract(aldw: Client, parameters: dict[str, Any], name: str) -> None:
    assert locs(view_query(aldw, "ald_walk", parameters)) == [["parameters", name]]


def test_a_narrowed_graph_view_accepts_its_own_bounds(aldw: Client, sx: Client) -> None:
    (edge,) = write(sx, link("a", "uses", "b"))
    body = ok(view_query(aldw, "ald_walk", {"seed": "a", "predicates": ["uses"], "depth": 3, "limit": 50}))
    assert body["parameters"] == {
        "seed": "a",
        "predicates": ["uses"],
        "direction": "out",
        "depth": 3,
        "limit": 50,
    }
    assert body["input_record_ids"] == [edge]


def test_a_narrowed_graph_views_schema_shows_its_bounds(aldw: Client) -> None:
    entry = listed_views(aldw)[("ald_walk", 1)]
    assert entry["kind"] == "graph"
    props = entry["input_schema"]["properties"]
    assert props["seed"]["description"] == "Where the walk starts."
    assert props["predicates"]["items"] == {"type": "string", "enum": ["uses", "owns"]}
    assert props["predicates"]["default"] == []
    assert props["direction"]["enum"] == ["out", "in"] and props["direction"]["default"] == "out"
    # spec: depth 1-16, limit 1-500; the view narrows the upper bounds (3.0 is a whole number)
    assert (props["depth"]["minimum"], props["depth"]["maximum"], props["depth"]["default"]) == (1, 3, 1)
    assert isinstance(props["depth"]["maximum"], int)
    assert (props["limit"]["minimum"], props["limit"]["maximum"], props["limit"]["default"]) == (1, 50, 20)
