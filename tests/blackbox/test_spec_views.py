"""Spec "Discovering views with GET /views", "Parameter fields" and "The view response wrapper"."""

from __future__ import annotations

from typing import Any

import pytest

from memseek.runtime import Runtime
from tests.blackbox.support import SCHEMA
from tests.blackbox.support import WRAPPER_KEYS
from tests.blackbox.support import at
from tests.blackbox.support import ids
from tests.blackbox.support import invalid
from tests.blackbox.support import note
from tests.blackbox.support import search
from tests.blackbox.support import write
from tests.conftest import Client
from tests.conftest import Tenant
from tests.conftest import client_for
from tests.helpers import error
from tests.helpers import listed_views
from tests.helpers import ok
from tests.helpers import runtime_for
from tests.helpers import touches_written
from tests.helpers import view_query

ENTRY_KEYS = [
    "name",
    "version",
    "hash",
    "active",
    "kind",
    "description",
    "parameters",
    "input_schema",
    "collections",
    "required_capabilities",
    "profiles",
]


# --- GET /views ---------------------------------------------------------------------------------------


def test_get_views_entry_shape(sx: Client) -> None:
    entry = listed_views(sx)[("sx_context", 1)]
    assert list(entry) == ENTRY_KEYS
    assert entry["hash"].startswith("sha256-") and len(entry["hash"]) == len("sha256-") + 64
    assert entry == {
        "name": "sx_context",
        "version": 1,
        "hash": entry["hash"],
        "active": True,
        "kind": "search",
        "description": None,
        "parameters": {
            "entity": {"type": "string", "required": True, "default": None},
            "task": {"type": "string", "required": True, "default": None},
        },
        "input_schema": {
            "$schema": SCHEMA,
            "type": "object",
            "properties": {"entity": {"type": "string"}, "task": {"type": "string"}},
            "additionalProperties": False,
            "required": ["entity", "task"],
        },
        "collections": ["sx_notes"],
        "required_capabilities": [],
        "profiles": ["pg_default"],
    }


def test_get_views_lists_every_loaded_version(sx: Client) -> None:
    views = listed_views(sx)
    assert views[("sx_context", 1)]["active"] is True
    assert views[("sx_context", 2)]["active"] is False
    assert views[("sx_dormant", 1)]["active"] is False
    assert views[("sx_context", 1)]["hash"] != views[("sx_context", 2)]["hash"]
    assert {kind for (name, _), v in views.items() if name.startswith("sx_") for kind in [v["kind"]]} == {
        "search",
        "graph",
        "graph_orphans",
    }


def test_input_schema_is_the_complete_contract(sx: Client) -> None:
    entry = listed_views(sx)[("sx_contract", 1)]
    assert entry["parameters"] == {
        "entity": {"type": "string", "required": True, "default": None},
        "horizon": {"type": "string", "required": False, "default": "week"},
        "channels": {"type": "string_array", "required": False, "default": None},
        "k": {"type": "integer", "required": False, "default": 5},
        "min_amount": {"type": "number", "required": False, "default": None},
        "vip": {"type": "boolean", "required": False, "default": None},
        "after": {"type": "datetime", "required": False, "default": None},
    }
    schema = entry["input_schema"]
    assert schema["$schema"] == SCHEMA and schema["type"] == "object"
    assert schema["additionalProperties"] is False and schema["required"] == ["entity"]
    props = schema["properties"]
    assert props["entity"] == {
        "type": "string",
        "description": "The contact this search is about.",
        "minLength": 3,
        "maxLength": 12,
    }
    assert props["horizon"] == {
        "type": "string",
        "description": "How far ahead to look.",
        "enum": ["day", "week", "quarter"],
        "default": "week",
    }
    assert props["channels"]["type"] == "array" and props["channels"]["items"] == {
        "type": "string",
        "enum": ["email", "call", "note"],
    }
    assert (props["channels"]["minItems"], props["channels"]["maxItems"]) == (1, 2)
    assert props["k"] == {"type": "integer", "minimum": 1, "maximum": 10, "default": 5}
    assert props["min_amount"] == {"type": "number", "minimum": 0, "maximum": 1000}
    assert props["vip"] == {"type": "boolean"}
    assert props["after"]["type"] == "string" and props["after"]["format"] == "date-time"


def test_structured_and_combined_views_report_their_footprint(sx: Client) -> None:
    views = listed_views(sx)
    assert views[("sx_listing", 1)]["required_capabilities"] == ["structured"]
    assert views[("sx_listing", 1)]["collections"] == ["sx_notes"]
    fused = views[("sx_fused", 1)]
    assert sorted(fused["collections"]) == ["sx_extra", "sx_notes"]
    assert fused["profiles"] == ["pg_default"]


# --- POST /views/{name}/query -------------------------------------------------------------------------


def test_search_view_wrapper(sx: Client) -> None:
    (record,) = write(sx, note("prepare the Q3 update", entity="contact.maria", occurred_at=at(1, 10, 22)))
    body = ok(view_query(sx, "sx_context", {"entity": "contact.maria", "task": "Q3 update"}))
    assert list(body) == WRAPPER_KEYS
    entry = listed_views(sx)[("sx_context", 1)]
    assert body["view"] == {"name": "sx_context", "version": 1, "hash": entry["hash"]}
    assert body["parameters"] == {"entity": "contact.maria", "task": "Q3 update"}
    assert ids(body) == [record] == body["input_record_ids"]
    assert body["ranking"]["kind"] == "rank_expression" and body["ranking"]["scored"] is True
    assert body["rendered"] == f"[id={record}] 2026-07-01T10:22Z | sx_notes/note | prepare the Q3 update"
    assert body["truncated"] is False
    assert body["profiles"] == ["pg_default"]
    assert body["backend"] == [{"name": "pg", "layout": None, "candidate_count": 1}]


def test_a_view_runs_the_same_engine_as_post_search(sx: Client) -> None:
    write(
        sx, note("budget one", entity="m"), note("budget two budget", entity="m"), note("budget", entity="x")
    )
    view = ok(view_query(sx, "sx_context", {"entity": "m", "task": "budget"}))
    direct = search(
        sx,
        {
            "q": "budget",
            "mode": "text",
            "scope": {"entities": ["m"], "collections": ["sx_notes"]},
            "k": 20,
            "render": True,
        },
    )
    assert ids(view) == ids(direct) and view["ranking"] == direct["ranking"]
    # the default formula decays last_accessed, which moves a little between the two calls
    assert [h["rank_score"] for h in view["hits"]] == pytest.approx([h["rank_score"] for h in direct["hits"]])
    assert view["rendered"] == direct["rendered"]


def test_empty_view_result(sx: Client) -> None:
    body = ok(view_query(sx, "sx_context", {"entity": "nobody", "task": "anything"}))
    assert body["hits"] == [] and body["input_record_ids"] == []
    assert body["backend"] == [{"name": "pg", "layout": None, "candidate_count": 0}]


def test_structured_view(sx: Client) -> None:
    inside, _outside, first = write(
        sx,
        note(entity="p", content={"starts_at": "2026-07-02T09:00:00Z"}),
        note(entity="p", content={"starts_at": "2026-07-09T09:00:00Z"}),
        note(entity="p", content={"starts_at": "2026-07-01T09:00:00Z"}),
    )
    body = ok(
        view_query(
            sx, "sx_listing", {"entity": "p", "start": "2026-07-01T09:00:00Z", "end": "2026-07-09T09:00:00Z"}
        )
    )
    assert body["input_record_ids"] == [first, inside]
    assert body["ranking"] == {"kind": "structured", "scored": False}
    assert all(h["score"] is None and "rank_score" not in h for h in body["hits"])


def test_combined_view_backend_lists_every_source(sx: Client) -> None:
    write(sx, note("budget"), {"collection": "sx_extra", "entity": "e", "type": "note", "text": "x"})
    body = ok(view_query(sx, "sx_fused", {"task": "budget"}))
    assert [(b["source"], b["name"], b["candidate_count"]) for b in body["backend"]] == [
        ("words", "pg", 1),
        ("latest", "pg", 1),
    ]
    assert body["ranking"]["kind"] == "rrf"
    assert all(h.keys() >= {"source_ranks"} for h in body["hits"])


def test_defaults_are_applied_and_omitted_optionals_stay_absent(sx: Client) -> None:
    body = ok(view_query(sx, "sx_contract", {"entity": "maria"}))
    assert body["parameters"] == {"entity": "maria", "horizon": "week", "k": 5}


def test_supplied_parameters_are_echoed(sx: Client) -> None:
    params = {
        "entity": "maria",
        "horizon": "day",
        "channels": ["email"],
        "k": 3,
        "min_amount": 2.5,
        "vip": True,
        "after": "2026-01-01T00:00:00Z",
    }
    body = ok(view_query(sx, "sx_contract", params))
    assert body["parameters"] == params


def test_parameters_fill_the_query(sx: Client) -> None:
    a, b, _c, _d = write(
        sx,
        note("a", entity="maria", content={"channel": "email", "amount": 5, "vip": True}, occurred_at=at(2)),
        note("b", entity="maria", content={"channel": "call", "amount": 50, "vip": True}, occurred_at=at(3)),
        note("c", entity="maria", content={"channel": "note", "amount": 50, "vip": True}, occurred_at=at(4)),
        note("d", entity="maria", content={"channel": "email", "amount": 50}, occurred_at=at(5)),
    )
    assert ok(view_query(sx, "sx_contract", {"entity": "maria", "channels": ["email", "call"], "vip": True}))[
        "input_record_ids"
    ] == [b, a]
    body = ok(
        view_query(
            sx,
            "sx_contract",
            {"entity": "maria", "channels": ["email", "call"], "min_amount": 10, "vip": True, "k": 1},
        )
    )
    assert body["input_record_ids"] == [b]
    assert len(ok(view_query(sx, "sx_contract", {"entity": "maria"}))["hits"]) == 4
    assert ok(view_query(sx, "sx_contract", {"entity": "maria", "after": at(4)}))["hits"][0]["text"] == "d"


@pytest.mark.parametrize(
    ("parameters", "name"),
    [
        pytest.param({}, "entity", id="missing-required"),
        pytest.param({"entity": "maria", "extra": 1}, "extra", id="unknown"),
        pytest.param({"entity": 42}, "entity", id="wrong-type"),
        pytest.param({"entity": "ab"}, "entity", id="min-length"),
        pytest.param({"entity": "a" * 13}, "entity", id="max-length"),
        pytest.param({"entity": "maria", "horizon": "year"}, "horizon", id="enum"),
        pytest.param({"entity": "maria", "channels": []}, "channels", id="min-items"),
        pytest.param({"entity": "maria", "channels": ["email", "call", "note"]}, "channels", id="max-items"),
        pytest.param({"entity": "maria", "channels": ["fax"]}, "channels", id="item-enum"),
        pytest.param({"entity": "maria", "channels": "email"}, "channels", id="array-type"),
        pytest.param({"entity": "maria", "k": 0}, "k", id="minimum"),
        pytest.param({"entity": "maria", "k": 11}, "k", id="maximum"),
        pytest.param({"entity": "maria", "k": 2.5}, "k", id="integer"),
        pytest.param({"entity": "maria", "k": "3"}, "k", id="integer-as-string"),
        pytest.param({"entity": "maria", "k": True}, "k", id="boolean-is-not-integer"),
        pytest.param({"entity": "maria", "min_amount": -1}, "min_amount", id="number-minimum"),
        pytest.param({"entity": "maria", "min_amount": "5"}, "min_amount", id="number-type"),
        pytest.param({"entity": "maria", "vip": "true"}, "vip", id="boolean-type"),
        pytest.param({"entity": "maria", "after": "2026-01-01T00:00:00"}, "after", id="datetime-timezone"),
        pytest.param({"entity": "maria", "after": "yesterday"}, "after", id="datetime-format"),
        pytest.param({"entity": "maria", "after": 1767225600}, "after", id="datetime-type"),
        pytest.param({"entity": None}, "entity", id="null"),
    ],
)
def test_parameter_validation(sx: Client, parameters: dict[str, Any], name: str) -> None:
    invalid(view_query(sx, "sx_contract", parameters), "parameters", name)


def test_every_parameter_problem_at_once(sx: Client) -> None:
    err = invalid(view_query(sx, "sx_contract", {"k": 0, "horizon": "year", "bogus": 1}))
    assert {tuple(d["loc"]) for d in err["details"]} >= {
        ("parameters", "entity"),
        ("parameters", "k"),
        ("parameters", "horizon"),
        ("parameters", "bogus"),
    }


def test_inclusive_bounds(sx: Client) -> None:
    ok(
        view_query(
            sx, "sx_contract", {"entity": "abc", "k": 1, "min_amount": 0, "channels": ["email", "note"]}
        )
    )
    ok(view_query(sx, "sx_contract", {"entity": "a" * 12, "k": 10, "min_amount": 1000}))


@pytest.mark.parametrize("body", [[], "text", 3])
def test_the_body_must_be_an_object(sx: Client, body: Any) -> None:
    invalid(view_query(sx, "sx_contract", body))


def test_the_name_resolves_to_the_active_version(sx: Client) -> None:
    body = ok(view_query(sx, "sx_context", {"entity": "e", "task": "t"}))
    assert body["view"]["version"] == 1
    invalid(view_query(sx, "sx_context", {"entity": "e"}), "parameters", "task")


@pytest.mark.parametrize("name", ["sx_nothing", "sx_dormant", "SX_CONTEXT"])
def test_no_active_view_is_404(sx: Client, name: str) -> None:
    error(view_query(sx, name, {"entity": "e"}), 404, "not_found")


def test_no_version_in_the_url(sx: Client) -> None:
    assert sx.post("/views/sx_context/1/query", json={"entity": "e", "task": "t"}).status_code == 404
    assert sx.post("/views/sx_context@1/query", json={"entity": "e", "task": "t"}).status_code == 404


def test_view_results_touch_last_accessed(sx: Client) -> None:
    (record,) = write(sx, note("budget", entity="m", occurred_at=at(1)))
    before = sx.get(f"/records/{record}").get_json()["last_accessed"]
    ok(view_query(sx, "sx_context", {"entity": "m", "task": "budget"}))
    touches_written(sx)
    assert sx.get(f"/records/{record}").get_json()["last_accessed"] > before


def test_a_package_decides_which_versions_are_exposed(
    sx: Client, sx_runtime: Runtime, tenant: Tenant
) -> None:
    packaged = client_for(runtime_for(sx_runtime, memseek_package="sx_pkg"), tenant)
    (record,) = write(sx, note("newest", entity="e", occurred_at=at(9)))
    body = ok(view_query(packaged, "sx_context", {"entity": "e"}))
    assert body["view"]["version"] == 2 and body["input_record_ids"] == [record]
    error(view_query(packaged, "sx_contract", {"entity": "maria"}), 404, "not_found")
    views = listed_views(packaged)
    assert views[("sx_context", 2)]["active"] is True and views[("sx_context", 1)]["active"] is False
    assert views[("sx_contract", 1)]["active"] is False  # listed (every loaded version), not exposed


def test_a_view_without_required_parameters_takes_an_empty_body(sx: Client) -> None:
    assert ok(sx.post("/views/sx_orphans/query"))["parameters"] == {"limit": 50}
    assert ok(view_query(sx, "sx_orphans", {}))["parameters"] == {"limit": 50}
