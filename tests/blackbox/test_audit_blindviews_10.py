"""Blind black-box tests of the views side, written from the spec and design text alone.

Spec sections: "Reading memory: the routes", "Start by describing the question", "View fields",
"What is checked, and when", "Parameter fields", "The view response wrapper", "Errors", "Changing a
view"; design §2 (the catalog, packages and MCP) and §3 (HTTP API). Every view here carries the
`bv10_` prefix (definitions are immutable in the session database) over the `sx_` collections.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import jsonschema
import pytest
from flask import Flask

from memseek.runtime import Runtime
from tests.blackbox.catalog_support import view_entry
from tests.blackbox.support import SCHEMA
from tests.blackbox.support import SCORED_RANKING
from tests.blackbox.support import WRAPPER_KEYS
from tests.blackbox.support import at
from tests.blackbox.support import ids
from tests.blackbox.support import note
from tests.blackbox.support import search
from tests.blackbox.support import vec
from tests.blackbox.support import write
from tests.conftest import Client
from tests.conftest import Tenant
from tests.conftest import client_for
from tests.helpers import error
from tests.helpers import listed_views
from tests.helpers import ok
from tests.helpers import runtime_for
from tests.helpers import view_query
from tests.helpers import with_models
from tests.helpers import with_settings

# --- Reading memory: the routes -------------------------------------------------------------------


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


# --- Parameter fields: the published input_schema -------------------------------------------------


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


# --- what a call with each parameter kind does: accepted and refused values -----------------------


BASE = {"entity": "abc"}
CALLS = [
    pytest.param({}, 422, "entity", id="missing-required"),
    pytest.param({**BASE, "extra": 1}, 422, "extra", id="unknown-parameter"),
    pytest.param({**BASE, "entity": 5}, 422, "entity", id="string-given-number"),
    pytest.param({**BASE, "entity": None}, 422, "entity", id="required-null"),
    pytest.param({**BASE, "entity": "ab"}, 422, "entity", id="below-min-length"),
    pytest.param({**BASE, "entity": "x" * 128}, 200, None, id="at-max-length"),
    pytest.param({**BASE, "entity": "x" * 129}, 422, "entity", id="above-max-length"),
    pytest.param({**BASE, "horizon": "day"}, 200, None, id="enum-member"),
    pytest.param({**BASE, "horizon": "month"}, 422, "horizon", id="enum-non-member"),
    pytest.param({**BASE, "channels": ["email", "call", "note"]}, 200, None, id="at-max-items"),
    pytest.param(
        {**BASE, "channels": ["email", "call", "note", "email"]}, 422, "channels", id="above-max-items"
    ),
    pytest.param({**BASE, "channels": ["fax"]}, 422, "channels", id="item-enum-non-member"),
    pytest.param({**BASE, "channels": "email"}, 422, "channels", id="array-given-string"),
    pytest.param({**BASE, "channels": [1]}, 422, "channels", id="array-of-number"),
    pytest.param({**BASE, "k": 1}, 200, None, id="integer-at-minimum"),
    pytest.param({**BASE, "k": 100}, 200, None, id="integer-at-maximum"),
    pytest.param({**BASE, "k": 0}, 422, "k", id="integer-below-minimum"),
    pytest.param({**BASE, "k": 101}, 422, "k", id="integer-above-maximum"),
    pytest.param({**BASE, "k": 2.5}, 422, "k", id="integer-given-fraction"),
    pytest.param({**BASE, "k": "5"}, 422, "k", id="integer-given-string"),
    pytest.param({**BASE, "k": True}, 422, "k", id="integer-given-boolean"),
    pytest.param({**BASE, "ratio": 0.5}, 200, None, id="number-at-minimum"),
    pytest.param({**BASE, "ratio": 2.5}, 200, None, id="number-at-maximum"),
    pytest.param({**BASE, "ratio": 1}, 200, None, id="number-given-integer"),
    pytest.param({**BASE, "ratio": 0.49}, 422, "ratio", id="number-below-minimum"),
    pytest.param({**BASE, "ratio": 2.51}, 422, "ratio", id="number-above-maximum"),
    pytest.param({**BASE, "ratio": "1"}, 422, "ratio", id="number-given-string"),
    pytest.param({**BASE, "ratio": True}, 422, "ratio", id="number-given-boolean"),
    pytest.param({**BASE, "vip": True}, 200, None, id="boolean"),
    pytest.param({**BASE, "vip": "true"}, 422, "vip", id="boolean-given-string"),
    pytest.param({**BASE, "vip": 1}, 422, "vip", id="boolean-given-integer"),
    pytest.param({**BASE, "after": "2026-07-17T09:00:00Z"}, 200, None, id="datetime-utc"),
    pytest.param({**BASE, "after": "2026-07-17T09:00:00+02:00"}, 200, None, id="datetime-offset"),
    pytest.param({**BASE, "after": "2026-07-17T09:00:00"}, 422, "after", id="datetime-no-timezone"),
    pytest.param({**BASE, "after": "yesterday"}, 422, "after", id="datetime-garbage"),
    pytest.param({**BASE, "after": 5}, 422, "after", id="datetime-given-number"),
    pytest.param({**BASE, "tags": ["a"]}, 200, None, id="at-min-items"),
    pytest.param({**BASE, "tags": []}, 422, "tags", id="below-min-items"),
    pytest.param({**BASE, "tags": ["a", "b", "c"]}, 422, "tags", id="above-max-items-2"),
    pytest.param({**BASE, "label": "x"}, 200, None, id="optional-string"),
    pytest.param({**BASE, "label": 3}, 422, "label", id="optional-string-given-number"),
    pytest.param(BASE, 200, None, id="only-required"),
]


@pytest.mark.parametrize(("body", "status", "loc"), CALLS)
def test_view_call_checks_each_parameter(
    bv: Client, body: dict[str, Any], status: int, loc: str | None
) -> None:
    """ "When the view is called, Memseek rejects unknown, missing, wrongly typed, or out-of-range
    parameters" (422, "The request ... is invalid"); inclusive bounds from "Parameter fields"."""
    response = view_query(bv, "bv10_kinds", body)
    if status == 200:
        ok(response)
        return
    err = error(response, 422)
    assert any(d["loc"] and d["loc"][-1] == loc for d in err["details"]), err["details"]


@pytest.mark.parametrize(("body", "status", "loc"), [c for c in CALLS if "after" not in c.values[0]])
def test_published_schema_agrees_with_the_call(
    bv: Client, body: dict[str, Any], status: int, loc: Any
) -> None:
    """ "input_schema is the complete machine-readable contract ... this is what a tool-calling client
    reads": a body the schema accepts is accepted, one it refuses is refused."""
    schema = view_entry(bv, "bv10_kinds", 1)["input_schema"]
    valid = jsonschema.Draft202012Validator(schema).is_valid(body)
    assert valid is (status == 200)


@pytest.mark.parametrize("body", [[], "abc", 5], ids=["list", "string", "number"])
def test_view_body_must_be_an_object(bv: Client, body: Any) -> None:
    """ "Accepts only that view's parameters": a body that is not an object of parameters is 422."""
    error(view_query(bv, "bv10_kinds", body), 422)


def test_view_without_parameters_takes_an_empty_object(bv: Client) -> None:
    """A view with no `parameters` accepts `{}` and refuses any parameter."""
    write(bv, note("plain"))
    body = ok(view_query(bv, "bv10_bare", {}))
    assert body["parameters"] == {}
    assert len(body["hits"]) == 1
    error(view_query(bv, "bv10_bare", {"k": 5}), 422)


@pytest.mark.parametrize(("n", "status"), [(3, 200), (100, 200), (0, 422), (101, 422), (500, 422)])
def test_finished_request_is_validated_a_second_time(bv: Client, n: int, status: int) -> None:
    """ "fills the placeholders, and validates the finished request a second time before running it"
    (an unbounded integer parameter fills `k`, which must be 1–100)."""
    response = view_query(bv, "bv10_freek", {"n": n})
    if status == 200:
        assert len(ok(response)["hits"]) == 0
    else:
        error(response, 422)


def test_defaults_are_applied_and_echoed(bv: Client) -> None:
    """ "parameters shows the values supplied plus any defaults applied; an optional parameter that was
    omitted and has no default stays absent"."""
    body = ok(view_query(bv, "bv10_kinds", {"entity": "abc"}))
    assert body["parameters"] == {"entity": "abc", "horizon": "week", "channels": [], "k": 20}
    body = ok(view_query(bv, "bv10_kinds", {"entity": "abc", "horizon": "day", "vip": False, "ratio": 1.5}))
    assert body["parameters"] == {
        "entity": "abc",
        "horizon": "day",
        "channels": [],
        "k": 20,
        "vip": False,
        "ratio": 1.5,
    }


def test_integer_parameter_drives_k(bv: Client) -> None:
    """A parameter "supplies part of the query itself": `k: "{{k}}"` caps the result count."""
    write(bv, *[note(f"row {i}", entity="abc") for i in range(4)])
    assert len(ok(view_query(bv, "bv10_kinds", {"entity": "abc", "k": 2}))["hits"]) == 2
    assert len(ok(view_query(bv, "bv10_kinds", {"entity": "abc"}))["hits"]) == 4


def test_each_parameter_kind_filters(bv: Client) -> None:
    """Placeholders filled from each kind: string (entity), number (where gte), boolean (where eq),
    string_array (contains_any), datetime (occurred_after, strict)."""
    rows = write(
        bv,
        note("a", entity="abc", content={"amount": 5, "vip": True, "tags": ["x"]}, occurred_at=at(2)),
        note("b", entity="abc", content={"amount": 1, "vip": False, "tags": ["y"]}, occurred_at=at(3)),
        note("c", entity="zzz", content={"amount": 9, "vip": True, "tags": ["x"]}, occurred_at=at(4)),
    )
    a, b, _ = rows

    def hits(**params: Any) -> set[str]:
        return set(ids(ok(view_query(bv, "bv10_kinds", {"entity": "abc", **params}))))

    assert hits() == {a, b}
    assert hits(ratio=2) == {a}
    assert hits(vip=False) == {b}
    assert hits(tags=["y"]) == {b}
    assert hits(after=at(2)) == {b}
    assert hits(label="none") == set()


# --- The view response wrapper --------------------------------------------------------------------


def test_wrapper_of_a_search_view(bv: Client) -> None:
    """The spec's wrapper: view {name, version, hash}, parameters, hits, ranking, input_record_ids,
    rendered, truncated, profiles, backend (a list, one entry per search)."""
    written = write(
        bv, note("budget budget review", entity="contact.maria"), note("budget", entity="contact.maria")
    )
    write(bv, note("budget elsewhere", entity="contact.other"))
    params = {"entity": "contact.maria", "task": "budget review"}
    body = ok(view_query(bv, "bv10_ctx", params))
    assert set(body) == set(WRAPPER_KEYS)
    assert body["view"] == {"name": "bv10_ctx", "version": 1, "hash": view_entry(bv, "bv10_ctx", 1)["hash"]}
    assert body["parameters"] == params
    assert set(ids(body)) == set(written)
    assert body["input_record_ids"] == ids(body)
    assert body["ranking"] == {"kind": "rank_expression", **SCORED_RANKING}
    assert isinstance(body["rendered"], str) and body["rendered"]
    assert body["truncated"] is False
    assert body["profiles"] == ["pg_default"]
    assert isinstance(body["backend"], list) and len(body["backend"]) == 1
    backend = body["backend"][0]
    assert {"name", "layout", "candidate_count"} <= set(backend)
    assert backend["name"] == "pg" and backend["layout"] is None
    assert [hit["rank"] for hit in body["hits"]] == [1, 2]
    assert body["hits"][0]["score"] == 1.0


def test_view_runs_the_same_engine_as_search(bv: Client) -> None:
    """ "POST /views/{name}/query on a search view runs the same engine, so its results, ordering,
    scores, rendering, and diagnostics mean exactly what they mean above"."""
    write(
        bv,
        note("alpha beta gamma", entity="e9"),
        note("alpha beta", entity="e9"),
        note("alpha", entity="e9"),
        note("alpha beta gamma", entity="e8"),
    )
    view = ok(view_query(bv, "bv10_ctx", {"entity": "e9", "task": "alpha beta gamma"}))
    direct = search(
        bv,
        {
            "q": "alpha beta gamma",
            "mode": "text",
            "scope": {"entities": ["e9"], "collections": ["sx_notes"]},
            "k": 20,
            "render": True,
        },
    )
    # rank_score carries a recency term that moves between the two calls: compare the order
    assert [(h["id"], h["rank"]) for h in view["hits"]] == [(h["id"], h["rank"]) for h in direct["hits"]]
    assert view["rendered"] == direct["rendered"]
    assert view["ranking"] == direct["ranking"]


def test_empty_result_wrapper(bv: Client) -> None:
    """ "An empty list is a successful search that matched nothing"; wrapper example: hits [],
    input_record_ids [], truncated false."""
    body = ok(view_query(bv, "bv10_ctx", {"entity": "nobody", "task": "anything"}))
    assert body["hits"] == [] and body["input_record_ids"] == []
    assert body["truncated"] is False
    assert len(body["backend"]) == 1


def test_unrendered_view_has_null_rendered(bv: Client) -> None:
    """ "rendered: null when render: false"; truncated "stays false when you did not ask for rendering"."""
    write(bv, note("x", entity="e5"))
    body = ok(view_query(bv, "bv10_ver", {"entity": "e5"}))
    assert body["rendered"] is None and body["truncated"] is False


def test_structured_view_wrapper(bv: Client) -> None:
    """The spec's `upcoming_calendar` shape: structured ranking, score null, no rank_score, order_by
    authoritative, datetime parameters bound the range (gte inclusive, lt exclusive)."""
    rows = write(
        bv,
        note("late", entity="cal", content={"starts_at": at(10)}),
        note("early", entity="cal", content={"starts_at": at(5)}),
        note("edge", entity="cal", content={"starts_at": at(12)}),
        note("before", entity="cal", content={"starts_at": at(1)}),
    )
    late, early, _edge, _before = rows
    body = ok(view_query(bv, "bv10_list", {"entity": "cal", "start": at(5), "end": at(12)}))
    assert ids(body) == [early, late]
    assert body["ranking"] == {"kind": "structured", "scored": False}
    assert all(hit["score"] is None and "rank_score" not in hit for hit in body["hits"])
    assert body["input_record_ids"] == [early, late]
    assert isinstance(body["rendered"], str)
    assert set(body["parameters"]) == {"entity", "start", "end"}


def test_fused_view_reports_one_backend_per_search(bv: Client) -> None:
    """ "a view always reports backend as a list with one entry per search executed" (`source` when
    combining searches)."""
    write(bv, note("apples"), {"collection": "sx_extra", "entity": "e1", "type": "note", "text": "pears"})
    body = ok(view_query(bv, "bv10_fused", {"task": "apples"}))
    assert sorted(b["source"] for b in body["backend"]) == ["latest", "words"]
    assert body["ranking"]["kind"] == "rrf"
    assert all("source_ranks" in hit for hit in body["hits"])


def test_view_addressed_by_name_resolves_to_active_version(bv: Client) -> None:
    """ "A view is always addressed by name, and the name resolves to whichever version is currently
    active" (`bv10_ver` v2 is active, k 2; v1 has k 1)."""
    write(bv, note("1", entity="ve"), note("2", entity="ve"), note("3", entity="ve"))
    body = ok(view_query(bv, "bv10_ver", {"entity": "ve"}))
    assert body["view"]["version"] == 2
    assert body["view"]["hash"] == view_entry(bv, "bv10_ver", 2)["hash"]
    assert len(body["hits"]) == 2


# --- Errors ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "body"),
    [
        pytest.param("bv10_nowhere", {}, id="unknown"),
        pytest.param("bv10_off", {}, id="no-active-version"),
        pytest.param("bv10_nowhere", {"junk": 1}, id="unknown-with-bad-parameters"),
    ],
)
def test_a_view_name_without_an_active_version_is_404(bv: Client, name: str, body: dict[str, Any]) -> None:
    """Errors: "No active view by that name — 404"."""
    error(view_query(bv, name, body), 404)


def test_a_version_after_the_name_is_no_route(bv: Client) -> None:
    """ "There is no version in the URL": `/views/{name}/{version}/query` is not a route."""
    assert view_query(bv, "bv10_ver/1", {"entity": "x"}).status_code == 404


def test_a_view_response_too_large_is_409(bv_runtime: Runtime, tenant: Tenant, server: Any) -> None:
    """ "The result was successful but too large to return — 409 response_too_large"."""
    client = client_for(with_settings(bv_runtime, max_response_bytes=1000), tenant)
    write(client, *[note("lorem ipsum " * 40, entity="big") for _ in range(5)])
    ok(view_query(client, "bv10_ver", {"entity": "big"}))  # ids only: under the limit
    error(view_query(client, "bv10_ctx", {"entity": "big", "task": "lorem"}), 409, "response_too_large")


def test_embeddings_unavailable_is_503(bv_runtime: Runtime, tenant: Tenant, server: Any) -> None:
    """ "Embeddings, search credentials, or the reranking model are unavailable — 503"."""
    write(client_for(bv_runtime, tenant), vec("apples and pears"))
    client = client_for(with_models(bv_runtime, {}), tenant)
    error(view_query(client, "bv10_hybrid", {"task": "apples"}), 503)


def test_hybrid_view_runs(bv: Client) -> None:
    """A hybrid view (the spec's `customer_context` mode) returns its match."""
    [apple] = write(bv, vec("apples and pears"))
    assert ids(ok(view_query(bv, "bv10_hybrid", {"task": "apples"}))) == [apple]


# --- more parameter behaviour ---------------------------------------------------------------------


CHARACTERS = [
    pytest.param("\u00e9\u00e9\u00e9", 200, id="three-two-byte-characters"),
    pytest.param("\u65e5\u672c", 422, id="two-three-byte-characters"),
    pytest.param("\u00e9" * 128, 200, id="128-characters-256-bytes"),
    pytest.param("\U0001f600" * 3, 200, id="three-astral-characters"),
]


@pytest.mark.parametrize(("entity", "status"), CHARACTERS)
def test_string_parameter_length_bounds_count_characters_not_bytes(
    bv: Client, entity: str, status: int
) -> None:
    """ "min_length, max_length — Inclusive character-count bounds" (not bytes)."""
    response = view_query(bv, "bv10_kinds", {"entity": entity})
    if status == 200:
        ok(response)
    else:
        error(response, 422)


@pytest.mark.parametrize(
    "raw",
    ['{"entity": "abc", "ratio": NaN}', '{"entity": "abc", "ratio": Infinity}', '{"n": NaN}'],
    ids=["nan-bounded", "infinity-bounded", "nan-as-integer"],
)
def test_non_finite_numbers_are_refused(bv: Client, raw: str) -> None:
    """A number parameter is "wrongly typed" when it is not a finite number (422)."""
    name = "bv10_freek" if '"n"' in raw else "bv10_kinds"
    response = bv.raw.open(
        f"/views/{name}/query",
        method="POST",
        data=raw,
        content_type="application/json",
        headers=bv.tenant.headers,
    )
    error(response, 422)


@pytest.mark.parametrize(
    ("value", "status"),
    [("2026-07-17", 422), ("2026-07-17T09:00:00.123456Z", 200), ("2026-07-17T09:00Z", 200), ("", 422)],
    ids=["date-only", "microseconds", "no-seconds", "empty"],
)
def test_datetime_parameter_forms(bv: Client, value: str, status: int) -> None:
    """ "Datetime values must include a timezone (2026-07-17T09:00:00Z)"."""
    response = view_query(bv, "bv10_kinds", {"entity": "abc", "after": value})
    if status == 200:
        ok(response)
    else:
        error(response, 422)


@pytest.mark.parametrize(
    ("value", "status"), [(2, 200), (5, 422), ("2", 422)], ids=["member", "non-member", "string"]
)
def test_integer_enum_is_enforced_at_call(bv: Client, value: Any, status: int) -> None:
    """ "enum — The complete set of allowed values" on any type (here an integer)."""
    response = view_query(bv, "bv10_enums", {"size": value})
    if status == 200:
        ok(response)
    else:
        err = error(response, 422)
        assert any(d["loc"][-1] == "size" for d in err["details"]), err


def test_integer_enum_is_published(bv: Client) -> None:
    """input_schema carries "allowed values" (`enum`) for a non-string parameter too."""
    prop = view_entry(bv, "bv10_enums", 1)["input_schema"]["properties"]["size"]
    assert prop["type"] == "integer" and prop["enum"] == [1, 2, 3] and prop["default"] == 1


def test_placeholder_inside_a_longer_string(bv: Client) -> None:
    """ "Anything in {{double braces}} is a placeholder filled in from a parameter": inside `q` too."""
    [hit] = write(bv, note("quarterly budget review", entity="pp"))
    body = ok(view_query(bv, "bv10_partial", {"task": "review"}))
    assert ids(body) == [hit]


def test_hash_has_the_spec_form(bv: Client) -> None:
    """The spec's example hash reads `sha256-…`."""
    assert all(v["hash"].startswith("sha256-") for v in listed_views(bv).values())


def test_graph_view_call_echoes_its_defaults(bv: Client) -> None:
    """The graph wrapper: view, parameters with the defaults applied, hits, input_record_ids, backend."""
    body = ok(view_query(bv, "bv10_walk", {"seed": "nowhere/at-all"}))
    assert body["view"] == {"name": "bv10_walk", "version": 1, "hash": view_entry(bv, "bv10_walk", 1)["hash"]}
    assert body["parameters"] == {
        "seed": "nowhere/at-all",
        "predicates": [],
        "direction": "out",
        "depth": 1,
        "limit": 20,
    }
    assert body["hits"] == [] and body["input_record_ids"] == [] and body["truncated"] is False
    assert isinstance(body["backend"], list)


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


# --- more of "What is checked, and when" ----------------------------------------------------------


def test_wrapper_does_not_forward_graph_boost(bv: Client) -> None:
    """ "The view wrapper does not currently forward the optional rerank or graph_boost diagnostic
    objects"."""
    write(bv, note("x", entity="people/maya"))
    body = ok(view_query(bv, "bv10_boost", {"anchor": "people/maya"}))
    assert set(body) == set(WRAPPER_KEYS)


def test_reranking_model_unavailable_is_503(bv_runtime: Runtime, tenant: Tenant, server: Any) -> None:
    """ "Embeddings, search credentials, or the reranking model are unavailable — 503"."""
    client = client_for(with_models(bv_runtime, {}), tenant)
    write(client, note("budget one"), note("budget two"))
    error(view_query(client, "bv10_judged", {"task": "budget"}), 503)


def test_whole_float_for_an_integer_is_refused(bv: Client) -> None:
    """Reading left open by the documents: `5.0` for an `integer` parameter is refused at the call
    (loc `["parameters", "k"]`) although JSON Schema 2020-12 counts it an integer."""
    err = error(view_query(bv, "bv10_kinds", {"entity": "abc", "k": 5.0}), 422)
    assert ["parameters", "k"] in [d["loc"] for d in err["details"]]


def test_supplied_values_are_echoed_as_supplied(bv: Client) -> None:
    """ "parameters shows the values supplied": a datetime comes back as sent, a list keeps its order."""
    supplied = {"entity": "x", "start": "2026-07-05T00:00:00Z", "end": "2026-07-06T02:00:00+02:00"}
    assert ok(view_query(bv, "bv10_list", supplied))["parameters"] == supplied
    body = ok(view_query(bv, "bv10_kinds", {"entity": "abc", "tags": ["b", "a"]}))
    assert body["parameters"]["tags"] == ["b", "a"]
