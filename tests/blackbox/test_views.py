"""`GET /views` (spec "Discovering views with GET /views"): every loaded version with its kind,
hash, required capabilities, the collections it reads and its `input_schema`, the complete
machine-readable contract of its parameters.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import jsonschema
import pytest
from jsonschema import Draft202012Validator
from jsonschema import FormatChecker

from memseek.runtime import Runtime
from tests.blackbox.catalog_support import view_entry
from tests.blackbox.support import ENTRY_KEYS
from tests.blackbox.support import SCHEMA
from tests.conftest import Client
from tests.conftest import Tenant
from tests.conftest import client_for
from tests.helpers import listed_views
from tests.helpers import ok
from tests.helpers import runtime_for
from tests.helpers import view_query

# --- GET /views -----------------------------------------------------------------------------------


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


def test_get_views_lists_every_loaded_version_not_only_active(bv: Client) -> None:
    """ "GET /views lists every loaded version, not only the active ones"; "active defaults to false"."""
    views = listed_views(bv)
    assert views[("bv10_ver", 1)]["active"] is False
    assert views[("bv10_ver", 2)]["active"] is True
    assert views[("bv10_off", 1)]["active"] is False
    for name in ["bv10_ctx", "bv10_kinds", "bv10_list", "bv10_fused", "bv10_walk", "bv10_bare"]:
        assert views[(name, 1)]["active"] is True, name


def test_at_most_one_active_version_per_name(bv: Client) -> None:
    """ "at most one active version per name"."""
    active: dict[str, int] = {}
    for (name, _version), view in listed_views(bv).items():
        active[name] = active.get(name, 0) + int(view["active"])
    assert all(count <= 1 for count in active.values()), active


def test_get_views_entry_matches_the_spec_example(bv: Client) -> None:
    """The spec's `GET /views` example entry: name, version, hash, active, kind, parameters,
    input_schema, collections, required_capabilities, profiles."""
    view = view_entry(bv, "bv10_ctx", 1)
    assert {
        "name",
        "version",
        "hash",
        "active",
        "kind",
        "parameters",
        "input_schema",
        "collections",
        "required_capabilities",
        "profiles",
    } <= set(view)
    assert view["kind"] == "search"
    assert view["parameters"] == {
        "entity": {"type": "string", "required": True, "default": None},
        "task": {"type": "string", "required": True, "default": None},
    }
    assert view["input_schema"] == {
        "$schema": SCHEMA,
        "type": "object",
        "properties": {"entity": {"type": "string"}, "task": {"type": "string"}},
        "additionalProperties": False,
        "required": ["entity", "task"],
    }
    assert view["collections"] == ["sx_notes"]
    assert view["required_capabilities"] == []
    assert view["profiles"] == ["pg_default"]
    assert isinstance(view["hash"], str) and view["hash"]


def test_required_capabilities_are_listed(bv: Client) -> None:
    """ "required_capabilities (optional, search views only)" — listed by `GET /views`."""
    assert view_entry(bv, "bv10_list", 1)["required_capabilities"] == ["structured"]


def test_fused_view_lists_the_collections_it_can_read(bv: Client) -> None:
    """ "collections lists the collections the view can be seen to read"."""
    view = view_entry(bv, "bv10_fused", 1)
    assert sorted(view["collections"]) == ["sx_extra", "sx_notes"]
    assert view["profiles"] == ["pg_default"]


def test_graph_view_is_listed_with_its_kind_and_fixed_contract(bv: Client) -> None:
    """ "graph views appear in GET /views"; "kind (default search) ... graph and graph_orphans"."""
    view = view_entry(bv, "bv10_walk", 1)
    assert view["kind"] == "graph"
    assert view["parameters"] == {
        "seed": {"type": "string", "required": True, "default": None},
        "predicates": {"type": "string_array", "required": False, "default": []},
        "direction": {"type": "string", "required": False, "default": "out"},
        "depth": {"type": "integer", "required": False, "default": 1},
        "limit": {"type": "integer", "required": False, "default": 20},
    }
    assert view["input_schema"]["required"] == ["seed"]
    assert view["input_schema"]["additionalProperties"] is False


def test_versions_have_distinct_hashes_and_a_hash_is_stable(
    bv: Client, sx_runtime: Runtime, bv_root: Path, tenant: Tenant
) -> None:
    """ "hash identifies the exact definition that is loaded": two definitions differ, the same
    definition loaded again keeps its hash."""
    views = listed_views(bv)
    assert views[("bv10_ver", 1)]["hash"] != views[("bv10_ver", 2)]["hash"]
    again = listed_views(client_for(runtime_for(sx_runtime, bv_root), tenant))
    assert {key: v["hash"] for key, v in again.items()} == {key: v["hash"] for key, v in views.items()}


def test_integer_enum_is_published(bv: Client) -> None:
    """input_schema carries "allowed values" (`enum`) for a non-string parameter too."""
    prop = view_entry(bv, "bv10_enums", 1)["input_schema"]["properties"]["size"]
    assert prop["type"] == "integer" and prop["enum"] == [1, 2, 3] and prop["default"] == 1


def test_hash_has_the_spec_form(bv: Client) -> None:
    """The spec's example hash reads `sha256-…`."""
    assert all(v["hash"].startswith("sha256-") for v in listed_views(bv).values())


def test_get_views_publishes_the_ald_views_contract(ald: Client) -> None:
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


def test_get_views_publishes_every_type_with_its_defaults(s3: Client) -> None:
    """Spec: "input_schema is the complete machine-readable contract, including descriptions,
    allowed values, numeric and length limits, and defaults"; `parameters` is "the compact,
    human-readable summary"; "Datetime values must include a timezone"."""
    entry = listed_views(s3)[("s3_kinds", 1)]
    assert entry["parameters"] == {
        "n": {"type": "integer", "required": False, "default": 2},
        "x": {"type": "number", "required": False, "default": None},
        "flag": {"type": "boolean", "required": False, "default": False},
        "since": {"type": "datetime", "required": False, "default": "2026-01-01T00:00:00Z"},
        "tags": {"type": "string_array", "required": False, "default": []},
    }
    schema = entry["input_schema"]
    assert (schema["$schema"], schema["required"], schema["additionalProperties"]) == (SCHEMA, [], False)
    props = schema["properties"]
    assert props["n"] == {"type": "integer", "enum": [1, 2, 3], "default": 2}
    assert props["x"] == {"type": "number", "enum": [0.5, 1.5]}
    assert props["flag"] == {"type": "boolean", "description": "Only VIPs.", "default": False}
    assert props["since"] == {
        "type": "string",
        "format": "date-time",
        "description": "Lower bound.",
        "default": "2026-01-01T00:00:00Z",
    }
    assert props["tags"]["type"] == "array" and props["tags"]["maxItems"] == 2
    assert props["tags"]["items"] == {"type": "string", "enum": ["a", "b"]} and props["tags"]["default"] == []


def test_graph_views_publish_their_fixed_contract(sx: Client) -> None:
    """Spec, Graph views: "exactly seed, predicates, direction, and limit, with the types and
    defaults above"; "seed ... must be 1-128 characters"; "direction is out, in, or both"; "depth
    is how many links to follow (1-16) and limit caps how many paths come back (1-500)"; orphans:
    "limit is its only parameter, accepting 1-500"; input_schema includes "allowed values,
    numeric and length limits, and defaults"; `collections` "lists the collections the view can
    be seen to read"."""
    views = listed_views(sx)
    walk, orphans = views[("sx_walk", 1)], views[("sx_orphans", 1)]
    assert (walk["kind"], orphans["kind"]) == ("graph", "graph_orphans")
    assert walk["parameters"] == {
        "seed": {"type": "string", "required": True, "default": None},
        "predicates": {"type": "string_array", "required": False, "default": []},
        "direction": {"type": "string", "required": False, "default": "out"},
        "depth": {"type": "integer", "required": False, "default": 1},
        "limit": {"type": "integer", "required": False, "default": 20},
    }
    assert walk["input_schema"] == {
        "$schema": SCHEMA,
        "type": "object",
        "properties": {
            "seed": {"type": "string", "minLength": 1, "maxLength": 128},
            "predicates": {"type": "array", "items": {"type": "string"}, "default": []},
            "direction": {"type": "string", "enum": ["out", "in", "both"], "default": "out"},
            "depth": {"type": "integer", "minimum": 1, "maximum": 16, "default": 1},
            "limit": {"type": "integer", "minimum": 1, "maximum": 500, "default": 20},
        },
        "additionalProperties": False,
        "required": ["seed"],
    }
    assert orphans["parameters"] == {"limit": {"type": "integer", "required": False, "default": 50}}
    assert orphans["input_schema"] == {
        "$schema": SCHEMA,
        "type": "object",
        "properties": {"limit": {"type": "integer", "minimum": 1, "maximum": 500, "default": 50}},
        "additionalProperties": False,
        "required": [],
    }
    assert "sx_links" in walk["collections"]
    assert {"sx_links", "sx_parts"} <= set(orphans["collections"])
    assert walk["required_capabilities"] == orphans["required_capabilities"] == []


def test_a_view_with_an_empty_scope_lists_every_collection_it_can_read(av5: Client) -> None:
    """Spec: "An empty scope means 'everything this workspace can see' in ordinary collections";
    `collections` "lists the collections the view can be seen to read" (docs/search.md, "Empty
    scope": edges collections — `sx_links` here — are graph data, not ordinary collections)."""
    entry = listed_views(av5)[("av5_everything", 1)]
    assert sorted(entry["collections"]) == [
        "sx_extra",
        "sx_notes",
        "sx_parts",
        "sx_tagged",
        "sx_vec",
        "sx_versioned",
    ]
    assert entry["profiles"] == ["pg_default"] and entry["parameters"] == {}


# --- the published input schema -------------------------------------------------------------------


def test_input_schema_publishes_every_declared_constraint(bv: Client) -> None:
    """ "input_schema is the complete machine-readable contract, including descriptions, allowed
    values, numeric and length limits, and defaults"."""
    schema = view_entry(bv, "bv10_kinds", 1)["input_schema"]
    assert schema["$schema"] == SCHEMA
    assert schema["type"] == "object"
    assert schema["additionalProperties"] is False
    assert schema["required"] == ["entity"]
    props = schema["properties"]
    assert set(props) == {"entity", "horizon", "channels", "k", "ratio", "vip", "after", "tags", "label"}
    assert props["entity"] == {
        "type": "string",
        "description": "The contact this search is about.",
        "minLength": 3,
        "maxLength": 128,
    }
    assert props["horizon"] == {
        "type": "string",
        "description": "How far ahead to look.",
        "enum": ["day", "week", "quarter"],
        "default": "week",
    }
    assert props["channels"]["type"] == "array"
    assert props["channels"]["items"] == {"type": "string", "enum": ["email", "call", "note"]}
    assert props["channels"]["maxItems"] == 3
    assert props["channels"]["default"] == []
    assert props["k"] == {"type": "integer", "minimum": 1, "maximum": 100, "default": 20}
    assert props["ratio"] == {"type": "number", "minimum": 0.5, "maximum": 2.5}
    assert props["vip"] == {"type": "boolean"}
    assert props["after"]["type"] == "string"
    assert props["after"].get("format", "date-time") == "date-time"
    assert props["tags"]["type"] == "array"
    assert props["tags"]["items"] == {"type": "string"}
    assert (props["tags"]["minItems"], props["tags"]["maxItems"]) == (1, 2)
    assert props["label"] == {"type": "string"}
    jsonschema.Draft202012Validator.check_schema(schema)


def test_compact_parameters_summary(bv: Client) -> None:
    """ "parameters is the compact, human-readable summary" (type, required, default)."""
    params = view_entry(bv, "bv10_kinds", 1)["parameters"]
    expected = {
        "entity": ("string", True, None),
        "horizon": ("string", False, "week"),
        "channels": ("string_array", False, []),
        "k": ("integer", False, 20),
        "ratio": ("number", False, None),
        "vip": ("boolean", False, None),
        "after": ("datetime", False, None),
        "tags": ("string_array", False, None),
        "label": ("string", False, None),
    }
    assert {name: (p["type"], p["required"], p["default"]) for name, p in params.items()} == expected


AGREEMENT = [
    pytest.param({"entity": "contact.maria"}, True, id="spec-minimum"),
    pytest.param(
        {"entity": "contact.maria", "horizon": "quarter", "channels": ["email", "call", "note"], "k": 100},
        True,
        id="every-parameter-at-its-bounds",
    ),
    pytest.param({"entity": "abc", "k": 1, "channels": []}, True, id="lower-bounds"),
    pytest.param({"entity": "ab"}, False, id="entity-too-short"),
    pytest.param({"entity": "a" * 129}, False, id="entity-too-long"),
    pytest.param({"entity": "maria", "horizon": "month"}, False, id="horizon-not-in-enum"),
    pytest.param({"entity": "maria", "channels": ["email", "call", "note", "email"]}, False, id="four-items"),
    pytest.param({"entity": "maria", "channels": ["sms"]}, False, id="item-not-in-item-enum"),
    pytest.param({"entity": "maria", "k": 101}, False, id="k-above-maximum"),
    pytest.param({"entity": "maria", "k": 2.5}, False, id="k-fractional"),
    pytest.param({"entity": "maria", "k": True}, False, id="k-boolean"),
    pytest.param({"entity": "maria", "horizon": None}, False, id="null-for-an-optional-string"),
    pytest.param({"entity": "maria", "extra": 1}, False, id="unknown-parameter"),
    pytest.param({"horizon": "day"}, False, id="entity-missing"),
]


def schema_accepts(schema: dict[str, Any], instance: Any) -> bool:
    validator = Draft202012Validator(schema, format_checker=FormatChecker())
    return validator.is_valid(instance)


@pytest.mark.parametrize(("arguments", "valid"), AGREEMENT)
def test_the_input_schema_and_the_view_agree(ag6: Client, arguments: dict[str, Any], valid: bool) -> None:
    """Spec: "input_schema is the complete machine-readable contract, including descriptions,
    allowed values, numeric and length limits, and defaults — this is what a tool-calling client
    reads"; its `$schema` is draft 2020-12. An argument set the schema accepts must run, and one it
    refuses must be refused (`422`, the parameter named)."""
    schema = listed_views(ag6)[("ag6_contact", 1)]["input_schema"]
    Draft202012Validator.check_schema(schema)
    assert schema_accepts(schema, arguments) is valid
    response = view_query(ag6, "ag6_contact", arguments)
    assert response.status_code == (200 if valid else 422), response.get_json()


def test_the_schema_defaults_are_what_the_view_applies(ag6: Client) -> None:
    """Spec: "parameters shows the values supplied plus any defaults applied"; the input schema
    carries "defaults" — an agent reading `default` learns what an omitted argument becomes."""
    schema = listed_views(ag6)[("ag6_contact", 1)]["input_schema"]
    defaults = {name: prop["default"] for name, prop in schema["properties"].items() if "default" in prop}
    assert defaults == {"horizon": "week", "channels": [], "k": 20}
    assert ok(view_query(ag6, "ag6_contact", {"entity": "maria"}))["parameters"] == {
        "entity": "maria",
        **defaults,
    }
