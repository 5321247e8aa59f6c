"""The one error shape on every route (design §3, spec "Errors"): `{"error": {"code", "message",
"details": [{"loc", "msg"}]}}` for 404, 405, 413, 422 and 500, never internals; malformed or
unstorable input is a 422 located where it is.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from sqlalchemy.engine import Engine

from memseek.runtime import Runtime
from tests.blackbox.design_support import count_records
from tests.blackbox.design_support import rec
from tests.blackbox.support import invalid
from tests.blackbox.support import note
from tests.blackbox.support import rejects
from tests.blackbox.support import write
from tests.conftest import Client
from tests.conftest import Tenant
from tests.conftest import client_for
from tests.helpers import error
from tests.helpers import fetch
from tests.helpers import post_records
from tests.helpers import with_settings

# --- the one error shape: 404, 405, 413, 422, 500 -------------------------------------------------


def test_an_unknown_route_is_404_with_the_error_shape(bw: Client) -> None:
    error(bw.get("/nothing/here"), 404, "not_found")
    error(bw.post("/records/x/y/z", json={}), 404, "not_found")


ID = "0190a4f2-7b1c-7def-8abc-0123456789ab"


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("PATCH", "/records"),  # GET /records lists and DELETE /records/{id} erases (issue 43)
        ("PUT", f"/records/{ID}"),
        ("PUT", "/records"),
        ("POST", "/entities/someone"),
        ("DELETE", "/erasures"),
        ("GET", f"/records/{ID}/retract"),
        ("POST", "/health"),
        ("POST", "/views"),
        ("GET", "/views/customer_context/query"),
        ("DELETE", "/search"),
        ("GET", "/mcp"),
        ("DELETE", "/mcp"),
    ],
)
def test_a_wrong_method_is_405_with_the_error_shape(bw: Client, method: str, path: str) -> None:
    response = bw.request(method, path)
    error(response, 405, "method_not_allowed")
    assert response.headers.get("Allow")


def test_a_body_over_the_limit_is_413(bw_runtime: Runtime, bw_ws: Tenant) -> None:
    client = client_for(with_settings(bw_runtime, max_request_bytes=2000), bw_ws)
    error(post_records(client, rec(text="x" * 3000)), 413, "payload_too_large")
    assert post_records(client, rec(text="x" * 100)).status_code == 201


def test_an_internal_error_is_500_with_the_error_shape_and_no_internals(
    bw: Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    import memseek.api.records as records_api

    def explode(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("password=hunter2 at /srv/secret.py line 3")

    monkeypatch.setattr(records_api, "write_records", explode)
    err = error(post_records(bw, rec()), 500, "internal_error")
    assert "hunter2" not in err["message"] and "secret" not in err["message"]
    assert err["details"] == []


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("POST", "/records"),
        ("POST", f"/records/{ID}/retract"),
        ("POST", f"/records/{ID}/reject"),
        ("POST", "/search"),
        ("POST", "/views/customer_context/query"),
    ],
)
@pytest.mark.parametrize(
    "body", [b"", b"{oops", b"\xff\xfe", b"[1, 2"], ids=["empty", "broken", "binary", "open"]
)
def test_a_body_that_is_not_json_is_422_with_the_error_shape(
    bw: Client, method: str, path: str, body: bytes
) -> None:
    response = bw.request(method, path, data=body, headers={"Content-Type": "application/json"})
    error(response, 422)


@pytest.mark.parametrize("path", ["/records", "/search", "/views/customer_context/query"])
def test_a_body_nested_too_deeply_is_422_not_500(bw: Client, path: str) -> None:
    deep = b"[" * 100_000 + b"]" * 100_000
    error(bw.request("POST", path, data=deep, headers={"Content-Type": "application/json"}), 422)


@pytest.mark.parametrize("depth", [127, 129, 300, 100_000])
def test_deeply_nested_content_is_stored_or_refused_never_a_500(bw: Client, depth: int) -> None:
    content = b'{"a":' * depth + b"1" + b"}" * depth
    body = b'{"records": [{"collection": "bw_plain", "entity": "e", "type": "note", "text": "t", "content": '
    response = bw.request(
        "POST", "/records", data=body + content + b"}]}", headers={"Content-Type": "application/json"}
    )
    if depth > 128:  # content nests at most 128 levels
        error(response, 422)
        return
    assert response.status_code == 201, response.get_data(as_text=True)[:500]
    stored = fetch(bw, response.get_json()["records"][0]["id"])["content"]
    for _ in range(depth):
        stored = stored["a"]
    assert stored == 1


def test_errors_name_problems_with_a_json_path(bw: Client) -> None:
    err = error(post_records(bw, rec(), rec(entity="")), 422)
    assert err["code"] == "invalid_request"
    assert [d["loc"][:3] for d in err["details"]] == [["records", 1, "entity"]]


@pytest.mark.parametrize(
    ("values", "loc"),
    [
        pytest.param({"scores": {"": 1}}, ["records", 0, "scores", ""], id="blank-score-name"),
        pytest.param({"annotations": {"": 1}}, ["records", 0, "annotations", ""], id="blank-annotation-name"),
        pytest.param({"scores": {"s" * 300: 1}}, ["records", 0, "scores", "s" * 300], id="long-score-name"),
    ],
)
def test_a_bad_object_key_is_located_by_a_json_path(
    bw: Client, values: dict[str, Any], loc: list[Any]
) -> None:
    """Design §3: "`details` items carry a `loc` (JSON path) and `msg`". A refused name in
    `scores` or `annotations` is located at its entry — a path into the request — and the
    message says that the name is what is wrong (pydantic's own `[key]` marker is no member
    of the request)."""
    err = error(post_records(bw, rec(**values)), 422, "invalid_request")
    assert [d["loc"] for d in err["details"]] == [loc]
    assert err["details"][0]["msg"].startswith("the name: ")


@pytest.mark.parametrize(
    ("method", "path"),
    [
        pytest.param("POST", "/records", id="write"),
        pytest.param("POST", f"/records/{ID}/retract", id="retract"),
        pytest.param("POST", f"/records/{ID}/approve", id="approve"),
        pytest.param("POST", f"/records/{ID}/reject", id="reject"),
        pytest.param("DELETE", f"/records/{ID}", id="erase"),
        pytest.param("DELETE", "/entities/someone", id="forget"),
    ],
)
@pytest.mark.parametrize("body", [[1], "text", 5], ids=["array", "string", "number"])
def test_a_body_that_is_not_an_object_is_told_so_at_body(
    bw: Client, method: str, path: str, body: Any
) -> None:
    """Design §3: one error shape whose `details` carry a `loc` (a JSON path into the request).
    Every write route answers a JSON body that is not an object alike — at `["body"]`, saying
    an object was expected — not with a validator's own class name at the root."""
    err = error(bw.request(method, path, json=body), 422, "invalid_request")
    assert err["message"] == "the body must be a JSON object"
    assert err["details"] == [{"loc": ["body"], "msg": "expected an object"}]


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


POST_ROUTES = [
    pytest.param("/records", id="records"),
    pytest.param("/search", id="search"),
    pytest.param("/views/sx_context/query", id="view-query"),
    pytest.param(f"/records/{ID}/retract", id="retract"),
    pytest.param(f"/records/{ID}/approve", id="approve"),
    pytest.param(f"/records/{ID}/reject", id="reject"),
    pytest.param("/mcp", id="mcp"),
]


@pytest.mark.parametrize("path", POST_ROUTES)
def test_every_post_route_refuses_a_body_over_the_limit_with_413(
    sx_runtime: Runtime, tenant: Tenant, path: str
) -> None:
    """§3: "Status codes as in the spec, plus `401` (auth), `404`, `409` (conflict, response too
    large), `413` (body too large)", in the one error shape on every route."""
    client = client_for(with_settings(sx_runtime, max_request_bytes=1000), tenant)
    body = json.dumps({"reason": "x" * 2000, "padding": "y" * 2000}).encode()
    response = client.request("POST", path, data=body, headers={"Content-Type": "application/json"})
    error(response, 413, "payload_too_large")


@pytest.mark.parametrize(
    "body", [[], "text", 7, None, True], ids=["array", "string", "number", "null", "bool"]
)
@pytest.mark.parametrize(
    "path",
    [
        pytest.param("/records", id="records"),
        pytest.param("/search", id="search"),
        pytest.param("/views/sx_context/query", id="view-query"),
        pytest.param("/views/sx_walk/query", id="graph-view-query"),
        pytest.param(f"/records/{ID}/retract", id="retract"),
        pytest.param(f"/records/{ID}/reject", id="reject"),
    ],
)
def test_a_json_body_that_is_not_an_object_is_422(sx: Client, path: str, body: Any) -> None:
    """Spec, Errors: "The request or a catalog reference is invalid → `422`"; design §3: the one
    error shape on every route (never a 500)."""
    raw = json.dumps(body).encode()
    error(sx.request("POST", path, data=raw, headers={"Content-Type": "application/json"}), 422)


def test_a_body_over_the_request_limit_is_413(bw_runtime: Runtime, bw_ws: Tenant, bw_db: Engine) -> None:
    """§3: "Status codes as in the spec, plus ... `413` (body too large)", in the one error shape."""
    from tests.helpers import with_settings

    client = client_for(with_settings(bw_runtime, max_request_bytes=2000), bw_ws)
    error(post_records(client, rec(text="x" * 5000)), 413)
    assert count_records(bw_db, bw_ws) == 0


@pytest.mark.parametrize(
    ("data", "content_type", "status"),
    [("{bad", "application/json", 422), ("entity=abc", "text/plain", 415), ("", "application/json", 422)],
    ids=["malformed-json", "not-json", "empty-json"],
)
def test_unreadable_body_is_refused(bv: Client, data: str, content_type: str, status: int) -> None:
    """ "The request ... is invalid — 422", in the one error shape; a body not declared as JSON is
    `415 unsupported_media_type` (issue 45, docs/reliability.md "One error shape everywhere")."""
    response = bv.raw.open(
        "/views/bv10_ctx/query",
        method="POST",
        data=data,
        content_type=content_type,
        headers=bv.tenant.headers,
    )
    error(response, status)


def test_wrong_method_keeps_the_error_shape(bv: Client) -> None:
    """Design §3: "Error body, every route"."""
    assert error(bv.get("/views/bv10_ctx/query"), 405)
    assert error(bv.post("/views", json={}), 405)


@pytest.mark.parametrize(
    ("path", "data"),
    [
        pytest.param("/search", "{not json", id="search-malformed"),
        pytest.param("/search", None, id="search-no-body"),
        pytest.param("/views/sx_contract/query", "{not json", id="view-malformed"),
    ],
)
def test_a_body_that_is_not_json_is_422(sx: Client, path: str, data: str | None) -> None:
    """Spec, Errors: "The request or a catalog reference is invalid → 422"."""
    invalid(sx.post(path, data=data, headers={"Content-Type": "application/json"}))


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


def test_unknown_routes_and_methods_keep_the_error_shape(sx: Client) -> None:
    error(sx.get("/nowhere"), 404)
    error(sx.get("/views/sx_context/query"), 405)
    error(sx.post("/views"), 405)


def test_errors_have_the_one_shape(sx: Client) -> None:
    """ "The request or a catalog reference is invalid → 422" with `{"error": {"code", "message",
    "details": [{"loc", "msg"}]}}`."""
    err = rejects(sx, {"mode": "recent", "scope": {"collections": ["no_such_collection"]}})
    assert err["code"] == "invalid_request"
    assert err["details"]


def test_an_unknown_view_name_is_404(sx: Client) -> None:
    """ "No active view by that name → 404\""""
    error(sx.post("/views/sx_no_such_view/query", json={}), 404)


# --- text PostgreSQL cannot store -----------------------------------------------------------------


COMBINED = {"q": "x", "fuse": {"kind": "rrf"}}
NUL = "a\x00b"
SURROGATE = "a\ud800b"


def source(**values: Any) -> dict[str, Any]:
    return {"name": "s", "mode": "text", "scope": {"collections": ["sx_notes"]}, **values}


@pytest.mark.parametrize(
    ("body", "loc"),
    [
        pytest.param({"q": NUL, "mode": "text"}, ["q"], id="q-nul"),
        pytest.param({"q": SURROGATE, "mode": "text"}, ["q"], id="q-surrogate"),
        pytest.param(
            {"q": NUL, "mode": "hybrid", "scope": {"collections": ["sx_vec"]}}, ["q"], id="q-nul-hybrid"
        ),
        pytest.param(
            {"q": "x", "mode": "text", "scope": {"entities": ["e1", NUL]}},
            ["scope", "entities", 1],
            id="entity-nul",
        ),
        pytest.param(
            {"q": "x", "mode": "text", "scope": {"types": [NUL]}}, ["scope", "types", 0], id="type-nul"
        ),
        pytest.param(
            {
                "q": "x",
                "mode": "text",
                "scope": {"collections": ["sx_notes"]},
                "where": {"channel": {"eq": NUL}},
            },
            ["where", "channel", "eq"],
            id="where-eq-nul",
        ),
        pytest.param(
            {
                "q": "x",
                "mode": "text",
                "scope": {"collections": ["sx_notes"]},
                "where": {"channel": {"in": ["email", SURROGATE]}},
            },
            ["where", "channel", "in", 1],
            id="where-in-surrogate",
        ),
        pytest.param(
            {
                "q": "x",
                "mode": "text",
                "scope": {"collections": ["sx_notes"]},
                "where": {"tags": {"contains_any": [NUL]}},
            },
            ["where", "tags", "contains_any", 0],
            id="where-contains-nul",
        ),
        pytest.param(
            {"q": "x", "mode": "text", "graph_boost": {"anchor": NUL}},
            ["graph_boost", "anchor"],
            id="graph-boost-anchor-nul",
        ),
        pytest.param(
            {"q": "x", "mode": "text", "render": True, "fence": {"preamble": NUL}},
            ["fence", "preamble"],
            id="fence-preamble-nul",
        ),
        pytest.param({**COMBINED, "q": NUL, "sources": [source()]}, ["q"], id="combined-q-nul"),
        pytest.param(
            {**COMBINED, "sources": [source(scope={"collections": ["sx_notes"], "entities": [NUL]})]},
            ["sources", 0, "scope", "entities", 0],
            id="source-entity-nul",
        ),
    ],
)
def test_unstorable_text_in_a_search_is_422_at_its_path(
    sx: Client, body: dict[str, Any], loc: list[Any]
) -> None:
    write(sx, note("a b x"))
    invalid(sx.post("/search", json=body), *loc)


@pytest.mark.parametrize("route", ["/search", "/context"])
@pytest.mark.parametrize("query", ["q=a%00b", "q=x&entity=e%00", "q=x&collection=sx%00notes"])
def test_unstorable_text_in_a_get_route_is_422(sx: Client, route: str, query: str) -> None:
    invalid(sx.get(f"{route}?{query}"))


@pytest.mark.parametrize(
    ("view", "parameters", "name"),
    [
        pytest.param("sx_context", {"entity": NUL, "task": "x"}, "entity", id="search-view-entity"),
        pytest.param("sx_context", {"entity": "e1", "task": SURROGATE}, "task", id="search-view-task"),
        pytest.param("sx_walk", {"seed": NUL}, "seed", id="graph-seed"),
        pytest.param(
            "sx_walk", {"seed": "a", "predicates": ["needs", NUL]}, "predicates", id="graph-predicate"
        ),
    ],
)
def test_unstorable_text_in_view_parameters_is_422_naming_the_parameter(
    sx: Client, view: str, parameters: dict[str, Any], name: str
) -> None:
    invalid(sx.post(f"/views/{view}/query", json=parameters), "parameters", name)
