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
from tests.blackbox.support import at
from tests.blackbox.support import invalid
from tests.blackbox.support import link
from tests.blackbox.support import note
from tests.blackbox.support import sx_catalog
from tests.blackbox.support import write
from tests.conftest import Client
from tests.conftest import Tenant
from tests.helpers import app_for
from tests.helpers import error
from tests.helpers import listed_views
from tests.helpers import locs
from tests.helpers import ok
from tests.helpers import runtime_for
from tests.helpers import view_query
from tests.openai_server import OpenAIServer

# --- views: the second validation and its loc -----------------------------------------------------


def test_a_list_parameter_is_checked_again_inside_the_query(ald: Client) -> None:
    # spec: scope.entities is a unique list of up to 100 entries
    ok(view_query(ald, "ald_list", {"who": [f"e{i}" for i in range(100)]}))
    invalid(view_query(ald, "ald_list", {"who": [f"e{i}" for i in range(101)]}), "parameters", "who")
    invalid(view_query(ald, "ald_list", {"who": ["a", "a"]}), "parameters", "who")


@pytest.mark.parametrize("k", [0, 101])
def test_a_count_parameter_is_checked_against_the_query_limits(ald: Client, k: int) -> None:
    # spec: k (default 20, between 1 and 100)
    invalid(view_query(ald, "ald_list", {"who": ["e"], "k": k}), "parameters", "k")


def test_a_count_parameter_at_the_query_limits_is_accepted(ald: Client) -> None:
    assert ok(view_query(ald, "ald_list", {"who": ["e"], "k": 100}))["parameters"]["k"] == 100
    assert ok(view_query(ald, "ald_list", {"who": ["e"], "k": 1}))["parameters"]["k"] == 1


@pytest.mark.parametrize("moments", [(at(5), at(5)), (at(6), at(5))])
def test_timestamp_parameters_are_checked_as_a_range(ald: Client, moments: tuple[str, str]) -> None:
    # spec: occurred_after must be earlier than occurred_before
    after, before = moments
    found = locs(view_query(ald, "ald_list", {"who": ["e"], "after": after, "before": before}))
    assert found and all(loc[:1] == ["parameters"] for loc in found), found
    assert any(loc in (["parameters", "after"], ["parameters", "before"]) for loc in found), found


def test_timestamp_bounds_filled_by_parameters_are_strict(ald: Client, sx: Client) -> None:
    inside, _edge = write(
        sx, note("in", entity="t", occurred_at=at(3)), note("edge", entity="t", occurred_at=at(4))
    )
    body = ok(view_query(ald, "ald_list", {"who": ["t"], "after": at(2), "before": at(4)}))
    assert body["input_record_ids"] == [inside]
    assert body["parameters"] == {"who": ["t"], "k": 20, "after": at(2), "before": at(4)}


def test_a_view_without_parameters_rejects_any(ald: Client) -> None:
    assert ok(view_query(ald, "ald_plain", {}))["parameters"] == {}
    assert locs(view_query(ald, "ald_plain", {"entity": "x"})) == [["parameters", "entity"]]


def test_a_null_body_is_not_a_parameters_object(ald: Client) -> None:
    response = ald.post("/views/ald_list/query", data=b"null", headers={"Content-Type": "application/json"})
    error(response, 422, "invalid_request")


def test_get_views_publishes_the_audit_views_contract(ald: Client) -> None:
    entry = listed_views(ald)[("ald_list", 1)]
    assert entry["parameters"] == {
        "who": {"type": "string_array", "required": True, "default": None},
        "k": {"type": "integer", "required": False, "default": 20},
        "after": {"type": "datetime", "required": False, "default": None},
        "before": {"type": "datetime", "required": False, "default": None},
    }
    schema = entry["input_schema"]
    assert schema["required"] == ["who"] and schema["additionalProperties"] is False
    assert schema["properties"]["k"] == {"type": "integer", "default": 20}
    assert schema["properties"]["who"]["type"] == "array"
    assert schema["properties"]["who"]["items"] == {"type": "string"}
    plain = listed_views(ald)[("ald_plain", 1)]
    assert plain["parameters"] == {}
    assert plain["input_schema"] == {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object",
        "properties": {},
        "additionalProperties": False,
        "required": [],
    }


def test_no_view_by_that_name_is_404_in_the_error_shape_even_for_get_views_name(ald: Client) -> None:
    error(ald.post("/views/ald_nothing/query", json={}), 404, "not_found")


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
