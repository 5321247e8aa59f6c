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

from pathlib import Path
from typing import Any

import pytest
from flask import Flask

from memseek.cli import main
from memseek.runtime import Runtime
from tests.blackbox.conftest import environ
from tests.blackbox.design_support import fact
from tests.blackbox.design_support import rec
from tests.blackbox.design_support import recent
from tests.blackbox.support import at
from tests.blackbox.support import invalid
from tests.blackbox.support import link
from tests.blackbox.support import note
from tests.blackbox.support import with_views
from tests.blackbox.support import write
from tests.blackbox.support import write_catalog
from tests.conftest import Client
from tests.conftest import Tenant
from tests.conftest import client_for
from tests.helpers import app_for
from tests.helpers import error
from tests.helpers import fetch
from tests.helpers import listed_views
from tests.helpers import locs
from tests.helpers import ok
from tests.helpers import runtime_for
from tests.helpers import view_query
from tests.helpers import with_settings
from tests.helpers import written_ids
from tests.openai_server import OpenAIServer

# --- a catalog whose views let parameters supply lists, counts and time bounds ----------------------

AUDIT_VIEWS = """
views:
  - name: ald_list
    version: 1
    active: true
    parameters:
      who: {type: string_array, required: true}
      k: {type: integer, default: 20}
      after: {type: datetime}
      before: {type: datetime}
    query:
      mode: recent
      scope:
        entities: "{{who}}"
        collections: [sx_notes]
        occurred_after: "{{after}}"
        occurred_before: "{{before}}"
      k: "{{k}}"
  - name: ald_plain
    version: 1
    active: true
    parameters: {}
    query: {mode: recent, scope: {collections: [sx_notes]}, k: 5}
"""

GRAPH_VIEWS = """
views:
  - name: ald_walk
    version: 1
    active: true
    kind: graph
    graph: {edges: sx_links, subject: src, object: dst, predicate: rel}
    parameters:
      seed: {type: string, required: true, description: Where the walk starts.}
      predicates: {type: string_array, default: [], item_enum: [uses, owns]}
      direction: {type: string, default: out, enum: [out, in]}
      depth: {type: integer, default: 1, maximum: 3.0}
      limit: {type: integer, default: 20, maximum: 50}
"""


@pytest.fixture(scope="module")
def audit_app(runtime: Runtime, sx_server: OpenAIServer, tmp_path_factory: pytest.TempPathFactory) -> Flask:
    root = write_catalog(tmp_path_factory.mktemp("ald-catalog"))
    (root / "views" / "ald.yaml").write_text(AUDIT_VIEWS)
    return app_for(runtime_for(runtime, root, environ(sx_server)))


@pytest.fixture
def ald(audit_app: Flask, tenant: Tenant, sx: Client) -> Client:
    return Client(audit_app.test_client(), tenant)


@pytest.fixture(scope="module")
def walk_app(runtime: Runtime, sx_server: OpenAIServer, tmp_path_factory: pytest.TempPathFactory) -> Flask:
    """The `sx_` collections with one graph view of its own (graph boosts need exactly one)."""
    root = with_views(tmp_path_factory.mktemp("ald-walk-catalog"), GRAPH_VIEWS)
    return app_for(runtime_for(runtime, root, environ(sx_server)))


@pytest.fixture
def aldw(walk_app: Flask, tenant: Tenant, sx: Client) -> Client:
    return Client(walk_app.test_client(), tenant)


# --- views: the second validation and its loc ------------------------------------------------------


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


# --- graph views: the fixed contract, narrowed by the view --------------------------------------------


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


# --- the one error shape: 413 and malformed JSON on every body-taking route -----------------------


BODY_ROUTES = [
    ("POST", "/search"),
    ("POST", "/views/ald_plain/query"),
    ("POST", "/records/00000000-0000-7000-8000-000000000000/retract"),
    ("POST", "/records/00000000-0000-7000-8000-000000000000/reject"),
    ("POST", "/records/00000000-0000-7000-8000-000000000000/approve"),
]


@pytest.mark.parametrize(("method", "path"), BODY_ROUTES)
def test_a_body_over_the_limit_is_413_on_every_route(
    sx_runtime: Runtime, tenant: Tenant, sx: Client, method: str, path: str
) -> None:
    client = client_for(with_settings(sx_runtime, max_request_bytes=2000), tenant)
    big = {"reason": "x" * 5000}
    error(client.request(method, path, json=big), 413, "payload_too_large")


@pytest.mark.parametrize(("method", "path"), BODY_ROUTES)
def test_malformed_json_is_422_on_every_route(ald: Client, method: str, path: str) -> None:
    response = ald.request(method, path, data=b"{oops", headers={"Content-Type": "application/json"})
    err = error(response, 422, "invalid_request")
    assert err["details"] and all(isinstance(d["loc"], list) for d in err["details"])


# --- records: retract, approve, reject, once each ---------------------------------------------------


def test_a_second_reject_is_a_conflict(bw: Client) -> None:
    (draft,) = written_ids(bw, fact("proposal", status="draft"))
    assert bw.post(f"/records/{draft}/reject", json={"reason": "no"}).status_code == 200
    error(bw.post(f"/records/{draft}/reject", json={"reason": "no"}), 409, "conflict")
    error(bw.post(f"/records/{draft}/retract", json={"reason": "no"}), 409, "conflict")
    assert fetch(bw, draft)["retraction_reason"] == "no"


def test_an_approved_record_is_no_longer_a_draft(bw: Client) -> None:
    (draft,) = written_ids(bw, fact("proposal", status="draft"))
    assert bw.post(f"/records/{draft}/approve").status_code == 200
    error(bw.post(f"/records/{draft}/reject", json={"reason": "late"}), 409, "conflict")
    error(bw.post(f"/records/{draft}/approve"), 409, "conflict")
    record = fetch(bw, draft)
    assert (record["status"], record["current"], record["retracted_at"]) == ("active", True, None)


def test_retracting_the_current_draft_restores_the_earlier_draft(bw: Client) -> None:
    first, second = (written_ids(bw, fact(text, status="draft"))[0] for text in ("d1", "d2"))
    response = bw.post(f"/records/{second}/retract", json={"reason": "withdrawn"})
    assert response.status_code == 200
    assert response.get_json()["retraction_reason"] == "withdrawn"
    assert [fetch(bw, i)["current"] for i in (first, second)] == [True, False]
    assert [h["text"] for h in recent(bw, "bw_facts", status="draft")] == ["d1"]


def test_rejecting_the_current_draft_restores_the_earlier_draft(bw: Client) -> None:
    # design: reject retracts a draft; retracting the current value restores the newest earlier one
    (live,) = written_ids(bw, fact("live"))
    first, second = (written_ids(bw, fact(text, status="draft"))[0] for text in ("d1", "d2"))
    assert bw.post(f"/records/{second}/reject", json={"reason": "no"}).status_code == 200
    assert [fetch(bw, i)["current"] for i in (live, first, second)] == [True, True, False]
    assert [h["text"] for h in recent(bw, "bw_facts", status="draft")] == ["d1"]
    assert [h["text"] for h in recent(bw, "bw_facts")] == ["live"]


def test_approving_a_superseded_draft_makes_it_the_current_active_value(bw: Client) -> None:
    (live,) = written_ids(bw, fact("live"))
    first, second = (written_ids(bw, fact(text, status="draft"))[0] for text in ("d1", "d2"))
    response = bw.post(f"/records/{first}/approve")
    assert response.status_code == 200
    assert (response.get_json()["status"], response.get_json()["current"]) == ("active", True)
    assert [fetch(bw, i)["current"] for i in (live, first, second)] == [False, True, True]
    assert [h["text"] for h in recent(bw, "bw_facts")] == ["d1"]
    assert [h["text"] for h in recent(bw, "bw_facts", status="draft")] == ["d2"]


@pytest.mark.parametrize("action", ["retract", "reject"])
@pytest.mark.parametrize("reason", [5, None, ["why"], {"text": "why"}])
def test_a_reason_must_be_a_string_at_its_loc(bw: Client, action: str, reason: Any) -> None:
    (draft,) = written_ids(bw, fact("proposal", status="draft"))
    invalid(bw.post(f"/records/{draft}/{action}", json={"reason": reason}), "reason")
    assert fetch(bw, draft)["retracted_at"] is None


@pytest.mark.parametrize("body", [[], "yes", 3])
def test_approve_takes_no_body_but_an_object(bw: Client, body: Any) -> None:
    (draft,) = written_ids(bw, fact("proposal", status="draft"))
    error(bw.post(f"/records/{draft}/approve", json=body), 422, "invalid_request")
    assert fetch(bw, draft)["status"] == "draft"


def test_a_retracted_record_can_still_be_fetched_by_id(bw: Client) -> None:
    # design §3: GET /records/{id} shows retracted_at and retraction_reason
    (event,) = written_ids(bw, rec("bw_events"))
    assert bw.post(f"/records/{event}/retract", json={"reason": "dup"}).status_code == 200
    record = fetch(bw, event)
    assert record["retraction_reason"] == "dup" and record["retracted_at"] is not None


@pytest.mark.parametrize("suffix", ["/retract", "/reject", "/approve"])
def test_record_actions_on_an_unknown_id_are_404(bw: Client, suffix: str) -> None:
    body = {} if suffix == "/approve" else {"reason": "x"}
    error(bw.post(f"/records/0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b{suffix}", json=body), 404, "not_found")
    error(bw.post(f"/records/not-a-uuid{suffix}", json=body), 404, "not_found")


# --- auth and public routes ----------------------------------------------------------------------


def test_health_needs_no_key_even_with_a_bad_one(bw_app: Flask, bw_ws: Tenant) -> None:
    response = bw_app.test_client().get("/health", headers={"Authorization": "Bearer nope"})
    assert response.status_code == 200


def test_openapi_json_needs_no_key(bw_app: Flask, bw_ws: Tenant) -> None:
    # issue 42: the API's description is public (GET /health, /openapi.json, /docs, /ui)
    assert bw_app.test_client().get("/openapi.json").status_code == 200


# --- the catalog check command ------------------------------------------------------------------------


def test_catalog_check_of_a_missing_directory_fails_with_a_message(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(["catalog", "check", str(tmp_path / "nowhere")])
    assert code != 0
    assert "nowhere" in capsys.readouterr().err


def test_catalog_check_of_a_valid_catalog_exits_0(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = write_catalog(tmp_path)
    (root / "views" / "ald.yaml").write_text(AUDIT_VIEWS)
    assert main(["catalog", "check", str(root)]) == 0, capsys.readouterr().err


def test_catalog_check_names_file_definition_and_path_of_a_bad_view(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = write_catalog(tmp_path)
    bad = AUDIT_VIEWS.replace(
        "k: {type: integer, default: 20}", "k: {type: integer, default: 20, required: true}"
    )
    (root / "views" / "ald.yaml").write_text(bad)
    assert main(["catalog", "check", str(root)]) != 0
    err = capsys.readouterr().err
    assert "views/ald.yaml" in err and "view ald_list v1" in err and "views[0].parameters.k" in err, err


@pytest.mark.parametrize(
    ("parameter", "loads"),
    [
        pytest.param("{type: integer, minimum: 1.0, maximum: 10.0}", True, id="whole-float-bounds"),
        pytest.param("{type: integer, minimum: 0.5}", False, id="fractional-bound"),
        pytest.param("{type: number, minimum: .nan}", False, id="nan-bound"),
        pytest.param("{type: number, maximum: .inf}", False, id="infinite-bound"),
        pytest.param("{type: number, minimum: 0.5, maximum: 2.5, default: 1}", True, id="number-bounds"),
    ],
)
def test_parameter_bounds_are_whole_for_integers_and_finite(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], parameter: str, loads: bool
) -> None:
    # spec: "Bounds on an integer must themselves be whole numbers"
    root = write_catalog(tmp_path)
    view = (
        "views:\n  - name: ald_bounds\n    version: 1\n    parameters:\n"
        f"      x: {parameter}\n    query: {{mode: recent, scope: {{collections: [sx_notes]}}}}\n"
    )
    (root / "views" / "ald_bounds.yaml").write_text(view)
    code = main(["catalog", "check", str(root)])
    err = capsys.readouterr().err
    if loads:
        assert code == 0, err
    else:
        assert code != 0 and "views/ald_bounds.yaml: view ald_bounds v1: views[0].parameters.x" in err, err
