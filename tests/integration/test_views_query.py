"""Search views through `POST /views/{name}/query`: the wrapper, parameters and the second check."""

from __future__ import annotations

from typing import Any

import pytest

from memseek.runtime import Runtime
from memseek.search.views import public_hash
from tests.conftest import Client
from tests.conftest import Tenant
from tests.conftest import client_for
from tests.helpers import details
from tests.helpers import error
from tests.helpers import locs
from tests.helpers import ok
from tests.helpers import runtime_for
from tests.helpers import view_query
from tests.helpers import written_ids
from tests.integration.view_support import Statements
from tests.integration.view_support import link_body
from tests.integration.view_support import note_body

WRAPPER_KEYS = ["view", "parameters", "hits", "ranking", "input_record_ids", "rendered", "truncated",
                "profiles", "backend"]  # fmt: skip


def seed_notes(client: Client) -> None:
    written_ids(
        client,
        note_body("maria", "Maria confirmed the Q3 budget."),
        note_body("maria", "Maria asked about the roadmap and the budget.", type="event"),
        note_body("maria", "Lunch was fine."),
        note_body("bob", "Bob has a budget too."),
    )


def test_a_search_view_runs_the_same_engine_as_post_search(vclient: Client, view_runtime: Runtime) -> None:
    seed_notes(vclient)
    body = ok(view_query(vclient, "g_note_search", {"entity": "maria", "task": "budget"}))
    direct = ok(vclient.post("/search", json={
        "q": "budget", "mode": "text", "scope": {"entities": ["maria"], "collections": ["g_notes"]},
        "k": 10, "include": ["text", "entity"], "render": True,
    }))  # fmt: skip
    catalog = view_runtime.catalog
    assert list(body) == WRAPPER_KEYS
    assert body["view"] == {
        "name": "g_note_search", "version": 1,
        "hash": public_hash(catalog.view_hash(catalog.view("g_note_search"))),
    }  # fmt: skip
    assert body["parameters"] == {"entity": "maria", "task": "budget", "k": 10}  # kinds omitted: absent
    assert [h["entity"] for h in body["hits"]] == ["maria", "maria"]
    for key in ("ranking", "rendered", "truncated", "profiles"):
        assert body[key] == direct[key]
    assert [h["id"] for h in body["hits"]] == [h["id"] for h in direct["hits"]] == body["input_record_ids"]
    assert [h["score"] for h in body["hits"]] == [h["score"] for h in direct["hits"]]
    assert body["ranking"]["kind"] == "rank_expression"
    assert body["backend"] == [direct["backend"]]  # a view always reports a list


def test_an_omitted_optional_parameter_removes_what_it_fills(vclient: Client) -> None:
    seed_notes(vclient)
    everything = ok(view_query(vclient, "g_note_search", {"entity": "maria", "task": "budget"}))
    events = ok(
        view_query(
            vclient, "g_note_search", {"entity": "maria", "task": "budget", "kinds": ["event"], "k": 5}
        )
    )
    assert len(everything["hits"]) == 2
    assert [h["text"] for h in events["hits"]] == ["Maria asked about the roadmap and the budget."]
    assert events["parameters"] == {"entity": "maria", "task": "budget", "kinds": ["event"], "k": 5}


def test_a_structured_view_fills_typed_values(vclient: Client) -> None:
    moments = ["2026-07-03T09:00:00Z", "2026-07-01T09:00:00+02:00", "2026-08-01T09:00:00Z"]
    written_ids(
        vclient,
        *(note_body("maria", f"meeting {n}", content={"starts_at": m}) for n, m in enumerate(moments)),
    )
    parameters = {"entity": "maria", "start": "2026-07-01T00:00:00Z", "end": "2026-08-01T09:00:00Z"}
    body = ok(view_query(vclient, "g_note_listing", parameters))
    assert [h["fields"]["starts_at"] for h in body["hits"]] == [
        "2026-07-01T09:00:00+02:00",
        "2026-07-03T09:00:00Z",
    ]
    assert body["ranking"] == {"kind": "structured", "scored": False}
    assert all(h["score"] is None and "rank_score" not in h for h in body["hits"])
    assert body["rendered"] is None


def test_a_combined_view_reports_one_backend_entry_per_search(vclient: Client) -> None:
    seed_notes(vclient)
    body = ok(view_query(vclient, "g_note_fused", {"task": "budget"}))
    assert body["ranking"]["kind"] == "rrf"
    assert [entry["source"] for entry in body["backend"]] == ["words", "latest"]
    assert all("source_ranks" in h for h in body["hits"])
    assert len(body["hits"]) == len(body["input_record_ids"]) == 4


def test_graph_boost_reorders_but_the_wrapper_drops_its_diagnostics(vclient: Client) -> None:
    written_ids(vclient, link_body("people/maya", "advises", "companies/acme"))
    written_ids(
        vclient,
        note_body("zeta", "budget review plan"),  # three of the query's words, then two, then one
        note_body("companies/acme", "budget"),
        note_body("people/maya", "budget review"),
    )
    request = {
        "q": "budget review plan",
        "mode": "text",
        "scope": {"collections": ["g_notes"]},
        "include": ["entity"],
        "k": 5,
    }
    plain = ok(vclient.post("/search", json=request))
    assert [h["entity"] for h in plain["hits"]] == ["zeta", "people/maya", "companies/acme"]
    boost = {"anchor": "people/maya", "weight": 1.0}
    direct = ok(vclient.post("/search", json={**request, "graph_boost": boost}))
    assert [h["entity"] for h in direct["hits"]] == ["people/maya", "zeta", "companies/acme"]
    assert direct["graph_boost"] == {
        "anchor": "people/maya", "depth": 2, "weight": 1.0, "matched_records": 2, "edge_count": 1,
    }  # fmt: skip
    body = ok(view_query(vclient, "g_note_near", {"task": "budget review plan", "anchor": "  people/maya "}))
    assert body["input_record_ids"] == [h["id"] for h in direct["hits"]]
    assert "graph_boost" not in body and "rerank" not in body
    assert list(body) == WRAPPER_KEYS


BASE = {
    "g_note_search": {"entity": "m", "task": "x"},
    "g_note_listing": {"entity": "m", "start": "2026-07-01T00:00:00Z", "end": "2026-08-01T00:00:00Z"},
}


@pytest.mark.parametrize(
    ("view", "change", "name"),
    [
        pytest.param("g_note_search", {"entity": None}, "entity", id="missing"),
        pytest.param("g_note_search", {"topic": "y"}, "topic", id="unknown"),
        pytest.param("g_note_search", {"k": "5"}, "k", id="k-text"),
        pytest.param("g_note_search", {"k": 0}, "k", id="k-below"),
        pytest.param("g_note_search", {"k": 51}, "k", id="k-above"),
        pytest.param("g_note_search", {"k": True}, "k", id="k-bool"),
        pytest.param("g_note_search", {"k": 2.0}, "k", id="k-float"),
        pytest.param("g_note_search", {"kinds": ["memo"]}, "kinds", id="item-enum"),
        pytest.param("g_note_search", {"kinds": []}, "kinds", id="min-items"),
        pytest.param("g_note_search", {"entity": ["m"]}, "entity", id="list"),
        pytest.param("g_note_listing", {"start": "2026-07-01T00:00:00"}, "start", id="no-timezone"),
        pytest.param("g_note_listing", {"end": 1751328000}, "end", id="epoch-number"),
    ],
)
def test_invalid_parameters_are_422(vclient: Client, view: str, change: dict[str, Any], name: str) -> None:
    parameters = {key: value for key, value in {**BASE[view], **change}.items() if value is not None}
    assert ["parameters", name] in locs(view_query(vclient, view, parameters))


def test_the_parameters_may_come_wrapped_as_the_response_echoes_them(vclient: Client) -> None:
    seed_notes(vclient)
    parameters = {"entity": "maria", "task": "budget"}
    plain = ok(view_query(vclient, "g_note_search", parameters))
    wrapped = ok(view_query(vclient, "g_note_search", {"parameters": parameters}))
    assert wrapped["parameters"] == plain["parameters"] == {**parameters, "k": 10}
    assert wrapped["input_record_ids"] == plain["input_record_ids"] and len(plain["hits"]) == 2
    assert locs(view_query(vclient, "g_note_search", {"parameters": {"entity": "maria"}})) == [
        ["parameters", "task"]
    ]
    # Beside another key, or holding a non-object, `parameters` is an unknown parameter.
    mixed = locs(view_query(vclient, "g_note_search", {"parameters": parameters, "task": "budget"}))
    assert ["parameters", "parameters"] in mixed
    assert ["parameters", "parameters"] in locs(view_query(vclient, "g_note_search", {"parameters": "x"}))


def test_every_problem_is_reported_at_once(vclient: Client) -> None:
    found = locs(view_query(vclient, "g_note_search", {"k": 0, "extra": 1}))
    assert sorted(found) == [["parameters", n] for n in ("entity", "extra", "k", "task")]


def test_the_filled_request_is_checked_again(view_runtime: Runtime, tenant: Tenant) -> None:
    client = client_for(runtime_for(view_runtime, max_query_chars=10), tenant)
    [problem] = details(view_query(client, "g_note_search", {"entity": "maria", "task": "a" * 11}))
    assert problem["loc"] == ["parameters", "task"]
    assert "q" in problem["msg"]
    backwards = {"entity": "m", "start": "2026-08-01T00:00:00Z", "end": "2026-07-01T00:00:00Z"}
    # an empty range is a valid search
    assert ok(view_query(client, "g_note_listing", backwards))["hits"] == []


def test_unknown_and_inactive_views_are_404(vclient: Client) -> None:
    for name in ("nope", "g_note_search_v2"):
        error(view_query(vclient, name, {}), 404, "not_found")


def test_a_package_pins_search_views_too(view_runtime: Runtime, tenant: Tenant) -> None:
    client = client_for(runtime_for(view_runtime, memseek_package="g_pkg"), tenant)
    seed_notes(client)
    body = ok(view_query(client, "g_note_search", {"entity": "maria", "task": "budget"}))
    assert body["view"]["version"] == 2
    assert len(body["hits"]) == 1  # v2 has k: 1
    assert details(view_query(client, "g_note_search", {"entity": "m", "task": "x", "k": 3}))  # v2 has no k


def test_statements_name_the_view(vclient: Client, statements: Statements) -> None:
    seed_notes(vclient)
    ok(view_query(vclient, "g_note_search", {"entity": "maria", "task": "budget"}))
    assert any("/* memseek view g_note_search v1 */" in text for text in statements.texts)


def test_a_response_over_the_byte_limit_is_409(view_runtime: Runtime, tenant: Tenant) -> None:
    client = client_for(runtime_for(view_runtime, max_response_bytes=300), tenant)
    seed_notes(client)
    error(
        view_query(client, "g_note_search", {"entity": "maria", "task": "budget"}), 409, "response_too_large"
    )
