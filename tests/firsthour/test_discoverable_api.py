"""Issue 42, item 4: the API describes itself and its errors say what to do.

`/openapi.json`, `/docs` (Swagger UI served from the package) and `/` need no key;
`GET /collections` lists every collection version with its declarations and this workspace's
records by state in one statement; `GET /views` carries descriptions; an unknown name is
answered with the valid ones and the nearest. Status codes, error codes and `loc`s are the ones
the routes always had: only the messages grew.
"""

from __future__ import annotations

import re
from typing import Any

import pytest
from flask import Flask
from sqlalchemy.engine import Engine

from memseek.runtime import Runtime
from memseek.write.worker import run_worker
from tests.conftest import Client
from tests.conftest import Tenant
from tests.conftest import make_tenant
from tests.helpers import error
from tests.helpers import ok
from tests.helpers import statements_sent
from tests.helpers import written_ids

MODES = "vector, text, hybrid, recent, structured"


def note(
    text: str, entity: str = "contact.maria", collection: str = "memories", **extra: Any
) -> dict[str, Any]:
    return {"collection": collection, "entity": entity, "type": "note", "text": text, **extra}


# --- without a key ------------------------------------------------------------------------------


def test_the_api_description_needs_no_key(app: Flask) -> None:
    response = app.test_client().get("/openapi.json")
    assert response.status_code == 200
    paths = response.get_json()["paths"]
    assert {"/collections", "/search/explain", "/views/{name}/explain", "/docs", "/ui"} <= set(paths)
    assert "security" not in paths["/openapi.json"]["get"] and "security" in paths["/collections"]["get"]


def test_the_root_leads_to_the_docs(app: Flask) -> None:
    response = app.test_client().get("/")
    assert response.status_code == 302 and response.headers["Location"] == "/docs"


def test_the_docs_page_loads_only_files_the_service_serves(app: Flask) -> None:
    client = app.test_client()
    page = client.get("/docs")
    assert page.status_code == 200 and page.mimetype == "text/html"
    html = page.get_data(as_text=True)
    assert "/openapi.json" in html
    sources = re.findall(r'(?:src|href)="([^"]+)"', html)
    assert sources and all(source.startswith("/docs/") for source in sources), sources  # no CDN
    for source in sources:
        asset = client.get(source)
        assert asset.status_code == 200 and len(asset.get_data()) > 0, source


def test_an_unknown_docs_file_is_the_one_error_shape(app: Flask) -> None:
    error(app.test_client().get("/docs/no-such-file.js"), 404, "not_found")


def test_other_routes_still_need_a_key(app: Flask) -> None:
    for path in ("/collections", "/views"):
        error(app.test_client().get(path), 401, "unauthorized")
    error(app.test_client().post("/search/explain", json={"mode": "recent"}), 401, "unauthorized")


# --- GET /collections -----------------------------------------------------------------------------


def test_collections_lists_declarations_and_modes(client: Client) -> None:
    body = ok(client.get("/collections"))
    entries = {(c["name"], c["version"]): c for c in body["collections"]}
    assert set(entries) == {
        ("calendar_events", 1),
        ("components", 1),
        ("customer_events", 1),
        ("dependencies", 1),
        ("memories", 1),
        ("reflections", 1),
    }
    events = entries[("customer_events", 1)]
    assert events["active"] is True and events["description"] == "What happened with each customer."
    assert events["types"] == ["event", "note", "observation"] and events["keyed"] == "any"
    assert events["search_profile"] == "pg_default" and events["text_language"] == "english"
    assert events["embedding"] == {"alias": "default", "provider": "local", "model": "all-MiniLM-L6-v2"}
    assert events["modes"] == MODES.split(", ")
    assert events["fields"]["channel"] == {
        "type": "string",
        "path": "channel",
        "fallback_paths": ["meta.channel"],
        "filterable": True,
        "sortable": True,
        "returnable": True,
        "description": "Where it happened (email, call, note, ...).",
    }
    assert events["fields"]["tags"]["sortable"] is False
    assert events["records"] == {"pending": 0, "ready": 0, "failed": 0, "retracted": 0}
    assert body["queue"] == {"depth": 0, "retrying": 0, "oldest_enqueued_at": None}
    links = entries[("dependencies", 1)]
    assert links["embedding"] is None and links["modes"] == ["text", "recent", "structured"]


def test_collections_counts_this_workspaces_records_by_state(
    client: Client, runtime: Runtime, db: Engine
) -> None:
    first, _, _ = written_ids(client, note("one"), note("two"), note("three", collection="customer_events"))
    pending = ok(client.get("/collections"))
    counts = {c["name"]: c["records"] for c in pending["collections"]}
    assert counts["memories"] == {"pending": 2, "ready": 0, "failed": 0, "retracted": 0}
    assert counts["customer_events"]["pending"] == 1
    assert pending["queue"]["depth"] == 3 and pending["queue"]["oldest_enqueued_at"] is not None
    run_worker(runtime, once=True)
    assert client.post(f"/records/{first}/retract", json={"reason": "wrong"}).status_code == 200
    other = Client(client.raw, make_tenant(db, "someone-else"))
    written_ids(other, note("not yours"))
    body = ok(client.get("/collections"))
    counts = {c["name"]: c["records"] for c in body["collections"]}
    assert counts["memories"] == {"pending": 0, "ready": 1, "failed": 0, "retracted": 1}
    assert counts["customer_events"] == {"pending": 0, "ready": 1, "failed": 0, "retracted": 0}
    assert body["queue"]["depth"] == 0


def test_collections_runs_one_statement_tagged_with_its_route(client: Client, runtime: Runtime) -> None:
    with statements_sent(runtime.engine) as sent:
        ok(client.get("/collections"))
    reads = [s for s in sent if "FROM records" in s or "FROM processing_queue" in s]
    assert len(reads) == 1, reads
    assert reads[0].startswith("/* memseek GET /collections */")


# --- GET /views -----------------------------------------------------------------------------------


def test_views_carry_their_descriptions(client: Client) -> None:
    views = {(v["name"], v["version"]): v for v in ok(client.get("/views"))["views"]}
    assert (
        views[("graph_query", 1)]["description"]
        == "Walk the dependency graph from a node, out to a bounded depth."
    )
    recent = views[("recent_activity", 1)]
    assert (
        recent["input_schema"]["properties"]["entity"]["description"] == "The contact this search is about."
    )
    assert "description" in views[("customer_context", 1)]  # null where the view declares none


# --- errors that say what to do -------------------------------------------------------------------

COLLECTIONS = "calendar_events, components, customer_events, dependencies, memories, reflections"


@pytest.mark.parametrize(
    ("body", "loc", "msg"),
    [
        pytest.param({"q": "x"}, ["mode"], f"Field required; one of: {MODES}", id="no-mode"),
        pytest.param(
            {"q": "x", "mode": "sideways"},
            ["mode"],
            "Input should be 'vector', 'text', 'hybrid', 'recent' or 'structured'",
            id="bad-mode",
        ),
        pytest.param(
            {"q": "x", "mode": "text", "scope": {"collections": ["memory"]}},
            ["scope", "collections", 0],
            f"unknown collection 'memory'; did you mean 'memories'? the collections are: {COLLECTIONS}",
            id="unknown-collection",
        ),
        pytest.param(
            {
                "q": "x",
                "mode": "text",
                "scope": {"collections": ["memories"]},
                "where": {"sorce": {"eq": "a"}},
            },
            ["where", "sorce"],
            "field 'sorce': collection memories v1 does not declare it; did you mean 'source'? "
            "its filterable fields: source, tags",
            id="unknown-field",
        ),
        pytest.param(
            {"q": "x", "mode": "text", "where": {"source": {"equals": "a"}}},
            ["where", "source", "equals"],
            "Extra inputs are not permitted; expected one of: "
            "contains_all, contains_any, eq, exists, gt, gte, in, lt, lte",
            id="unknown-operator",
        ),
        pytest.param(
            {"q": "x", "mode": "text", "scope": {"colections": ["memories"]}},
            ["scope", "colections"],
            "Extra inputs are not permitted; did you mean 'collections'? expected one of: "
            "collection_versions, collections, depth_lte, entities, keyed, occurred_after, occurred_before, "
            "status, types, versions",
            id="unknown-scope-key",
        ),
        pytest.param(
            {"mode": "structured", "scope": {"collections": ["memories"]}, "order_by": [{"field": "tags"}]},
            ["order_by", 0, "field"],
            "field 'tags': collection memories v1 does not declare it sortable; its sortable fields: source",
            id="not-sortable",
        ),
        pytest.param(
            {"q": "x", "mode": "text", "scope": {"collections": ["memories"]}, "fields": ["sorce"]},
            ["fields", 0],
            "field 'sorce' is not returnable in memories v1; did you mean 'source'? "
            "returnable in memories: source, tags",
            id="not-returnable",
        ),
    ],
)
def test_a_search_error_names_the_valid_options(
    client: Client, body: dict[str, Any], loc: list[Any], msg: str
) -> None:
    err = error(client.post("/search", json=body), 422, "invalid_request")
    assert err["details"] == [{"loc": loc, "msg": msg}]


def test_a_body_without_records_shows_the_shape(client: Client) -> None:
    err = error(client.post("/records", json={"record": {}}), 422, "invalid_request")
    assert {
        "loc": ["records"],
        "msg": 'a list of records is required: {"records": [{"collection": …, '
        '"entity": …, "type": …, "text": …}]}',
    } in err["details"]


def test_a_record_in_an_unknown_collection_is_told_the_nearest(client: Client) -> None:
    err = error(client.post("/records", json={"records": [note("x", collection="memory")]}), 422)
    assert err["details"] == [
        {
            "loc": ["records", 0, "collection"],
            "msg": "unknown collection 'memory'; did you mean 'memories'? the collections are: "
            + COLLECTIONS,
        }
    ]


def test_an_unknown_view_is_told_the_nearest(client: Client) -> None:
    err = error(client.post("/views/customer_contxt/query", json={}), 404, "not_found")
    assert err["message"] == (
        "no active view named 'customer_contxt'; did you mean 'customer_context'? the active views are: "
        "customer_context, customer_context_fused, graph_query, orphan_pages, proposed_facts, recall, "
        "recent_activity, upcoming_calendar"
    )


def test_an_unknown_write_contract_is_told_the_nearest(client: Client) -> None:
    """Issue 42 §4: "errors that name the valid options … and suggest the nearest name"; issue
    41 §2: `POST /writes/{name}` answers "`404`/`422` as for views" — whose 404 lists the
    active views and the nearest."""
    err = error(client.post("/writes/remembr", json={"parameters": {}}), 404, "not_found")
    assert err["message"] == (
        "no active write contract named 'remembr'; did you mean 'remember'? "
        "the active write contracts are: propose_fact, remember"
    )


def test_a_record_of_an_unknown_type_is_told_the_nearest(client: Client) -> None:
    """Issue 42 §4: an unknown name is answered with the valid options and the nearest one."""
    err = error(client.post("/records", json={"records": [{**note("x"), "type": "notes"}]}), 422)
    assert err["details"] == [
        {
            "loc": ["records", 0, "type"],
            "msg": "type 'notes' is not one of event, note, fact, observation, reflection; "
            "did you mean 'note'?",
        }
    ]


def test_a_name_far_from_every_option_only_lists_them(client: Client, tenant: Tenant) -> None:
    body = {"q": "x", "mode": "text", "scope": {"collections": ["zzzz"]}}
    err = error(client.post("/search", json=body), 422)
    assert err["details"][0]["msg"] == f"unknown collection 'zzzz'; the collections are: {COLLECTIONS}"


@pytest.mark.parametrize(
    ("method", "path", "body"),
    [
        pytest.param("POST", "/search", {"mode": "recent"}, id="search"),
        pytest.param("POST", "/views/recall/query", {"entity": "contact.maria", "query": "x"}, id="view"),
        pytest.param("GET", "/collections", None, id="collections"),
        pytest.param("GET", "/records", None, id="records-page"),
        pytest.param("POST", "/records", {"records": []}, id="error"),
    ],
)
def test_a_json_answer_ends_with_a_line_break(client: Client, method: str, path: str, body: Any) -> None:
    """README's commands print one answer after another: each on its own line, the next shell
    prompt too."""
    response = client.request(method, path, json=body)
    assert response.mimetype == "application/json" and response.get_data().endswith(b"}\n")


def test_an_mcp_answer_ends_with_a_line_break(client: Client) -> None:
    listing = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
    accept = {"Accept": "application/json, text/event-stream"}
    response = client.post("/mcp", json=listing, headers=accept)
    assert response.mimetype == "application/json" and response.get_data().endswith(b"}\n")
    assert response.get_json()["result"]["tools"]


def test_an_unknown_route_is_told_the_nearest_and_where_routes_are_listed(client: Client) -> None:
    """Issue 42: "`/`, `/docs` answer Werkzeug's generic 404" and "errors that name the valid
    options ... and suggest the nearest name": a mistyped route names the route meant and the
    page that lists them all, not Werkzeug's "check your spelling"."""
    err = error(client.post("/serch", json={}), 404, "not_found")
    assert err["message"] == "no route POST /serch; did you mean /search? every route is listed at /docs"
    err = error(client.get("/nothing/here"), 404, "not_found")
    assert err["message"] == "no route GET /nothing/here; every route is listed at /docs"
