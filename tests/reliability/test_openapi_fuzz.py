"""Issue 45: the OpenAPI document is exactly as strict as the server. Requests are generated from
the served document (hypothesis-jsonschema over its schemas):

* every declared query parameter of every operation: values the document declares valid are never
  refused, values it declares invalid always are (at `["query", name]`) — and each route gives
  its usual answer to any valid combination;
* bodies whose whole rule set the document states (a retraction's or an erasure's reason, an
  approval's empty object): a valid one is never refused (the record does not exist: 404), an
  invalid one is;
* every body schema: an instance the document declares invalid (a valid example mutated until the
  document's own schema refuses it) is refused with 422 — never accepted, never a 500.

Every operation the document lists with query parameters or a body is in these tables, or the
table test fails: a route added later is fuzzed too.

Bodies whose validity also depends on the catalog (which collections, types, fields and scores
exist: `POST /records`, `POST /search`, a view's parameters) are fuzzed on the invalid side only;
the document states their shape, the catalog (`GET /views`, `GET /rank/schema`) the rest."""

from __future__ import annotations

import json
import re
import uuid
from typing import Any
from urllib.parse import quote

import pytest
from hypothesis import HealthCheck
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st
from hypothesis_jsonschema import from_schema
from jsonschema import Draft202012Validator

from memseek.write.pages import CURSOR_PATTERN
from tests.conftest import Client
from tests.helpers import error

FUZZ = settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck))
NO_ID = "00000000-0000-0000-0000-000000000000"


@pytest.fixture
def document(client: Client) -> dict[str, Any]:
    """The document as the service serves it (for the session runtime's catalog)."""
    doc: dict[str, Any] = client.get("/openapi.json").get_json()
    return doc


def query_schemas(doc: dict[str, Any], method: str, path: str) -> dict[str, tuple[dict[str, Any], bool]]:
    """Each declared query parameter of an operation: (its schema, required)."""
    params = doc["paths"][path][method.lower()].get("parameters", [])
    return {p["name"]: (p["schema"], p["required"]) for p in params if p["in"] == "query"}


def as_text(value: Any) -> str:
    """A parameter value as an OpenAPI client serialises it in a query string."""
    return value if isinstance(value, str) else json.dumps(value)


JSON_NUMBER = re.compile(r"-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?")


def declared_valid(schema: dict[str, Any], text: str) -> bool:
    """Whether the document declares the query text `text` a valid value of `schema`."""
    kind = schema["type"]
    if kind == "integer":
        if not re.fullmatch(r"-?[0-9]+", text):
            return False
        value: Any = int(text)
    elif kind == "number":
        if not JSON_NUMBER.fullmatch(text):
            return False
        value = float(text)
    else:
        value = text
    return Draft202012Validator(schema).is_valid(value)


DEPENDENCY = {"collection": "dependencies", "entity": "e", "type": "link", "text": "t"}
"""A record processed on write (its collection embeds nothing): `?wait=true` returns at once."""
NOBODY = "fuzz.nobody"
"""An entity no test writes."""
QUERY_ANSWERS: dict[tuple[str, str], tuple[str, int]] = {
    ("GET", "/search"): ("/search", 200),
    ("GET", "/context"): ("/context", 200),
    ("POST", "/records"): ("/records", 201),
    ("GET", "/records"): ("/records", 200),
    ("GET", "/erasures"): ("/erasures", 200),
    ("DELETE", "/entities/{entity}"): (f"/entities/{NOBODY}", 404),
    ("POST", "/writes/{name}"): ("/writes/no_such_contract", 404),
}
"""Each operation with query parameters: where it is sent, and its answer to any valid query (an
entity or a write contract that does not exist is a 404: the query was read and accepted first)."""
OPAQUE = frozenset({"cursor"})
"""Parameters the document can describe by form only: a cursor is valid for the listing that
issued it alone (any other is refused at `["query", "cursor"]`), so no schema can generate a valid
one. Fuzzed on the invalid side; `test_a_cursor_the_server_issued_is_read` checks a real one."""


def send(client: Client, method: str, path: str, params: dict[str, str]) -> Any:
    query = "&".join(f"{quote(k)}={quote(v, safe='')}" for k, v in params.items())
    target, _ = QUERY_ANSWERS[(method, path)]
    body = {"records": [DEPENDENCY]} if path == "/records" and method == "POST" else None
    return client.request(method, f"{target}?{query}", json=body)


@st.composite
def valid_params(draw: st.DrawFn, schemas: dict[str, tuple[dict[str, Any], bool]]) -> dict[str, str]:
    params = {}
    for name, (schema, required) in sorted(schemas.items()):
        if name not in OPAQUE and (required or draw(st.booleans())):
            params[name] = as_text(draw(from_schema(schema)))
    return params


def test_every_operation_with_query_parameters_is_fuzzed(document: dict[str, Any]) -> None:
    with_query = {
        (method.upper(), path)
        for path, methods in document["paths"].items()
        for method in methods
        if query_schemas(document, method, path)
    }
    assert with_query == set(QUERY_ANSWERS)


@pytest.mark.parametrize(("method", "path"), list(QUERY_ANSWERS))
def test_query_values_declared_valid_are_served(
    client: Client, document: dict[str, Any], method: str, path: str
) -> None:
    schemas = query_schemas(document, method, path)
    _, status = QUERY_ANSWERS[(method, path)]

    @FUZZ
    @given(params=valid_params(schemas))
    def check(params: dict[str, str]) -> None:
        response = send(client, method, path, params)
        assert response.status_code == status, (params, response.get_data(as_text=True)[:500])

    check()


@pytest.mark.parametrize("path", ["/records", "/erasures"])
def test_a_cursor_the_server_issued_is_read(client: Client, path: str) -> None:
    body = {"records": [DEPENDENCY] * 4}
    written = client.post("/records", json=body).get_json()["records"]
    for record in written[2:]:  # two pages of records left, and two of the erasure log
        assert client.request("DELETE", f"/records/{record['id']}").status_code == 200
    cursor = client.get(f"{path}?limit=1").get_json()["next_cursor"]
    assert re.fullmatch(CURSOR_PATTERN, cursor), cursor
    assert client.get(f"{path}?limit=1&cursor={cursor}").status_code == 200


def test_path_values_declared_valid_are_read_and_invalid_refused(
    client: Client, document: dict[str, Any]
) -> None:
    """`DELETE /entities/{entity}`: an entity the document allows is looked for (none has
    records: 404); one it refuses (a NUL character) is a 422 at `["path", "entity"]`."""
    parameters = document["paths"]["/entities/{entity}"]["delete"]["parameters"]
    (schema,) = [p["schema"] for p in parameters if p["in"] == "path"]
    validator = Draft202012Validator(schema)

    @FUZZ
    @given(entity=from_schema(schema).filter(bool), nul=st.booleans())
    def check(entity: str, nul: bool) -> None:
        entity = f"{NOBODY}.{entity}" + ("\x00" if nul else "")
        response = client.request("DELETE", "/entities/" + quote(entity, safe=""))
        if validator.is_valid(entity):
            assert response.status_code == 404, (entity, response.get_data(as_text=True)[:500])
        else:
            assert error(response, 422)["details"][0]["loc"] == ["path", "entity"]

    check()


@pytest.mark.parametrize(("method", "path"), list(QUERY_ANSWERS))
def test_query_values_declared_invalid_are_refused(
    client: Client, document: dict[str, Any], method: str, path: str
) -> None:
    schemas = query_schemas(document, method, path)
    names = sorted(schemas)

    @FUZZ
    @given(data=st.data())
    def check(data: st.DataObject) -> None:
        params = data.draw(valid_params(schemas))
        name = data.draw(st.sampled_from(names))
        schema = schemas[name][0]
        bad = data.draw(
            st.one_of(st.text(max_size=30), st.integers().map(str), st.floats().map(repr)).filter(
                lambda text: not declared_valid(schema, text)
            )
        )
        params[name] = bad
        response = send(client, method, path, params)
        assert response.status_code == 422, (params, response.get_data(as_text=True)[:500])
        assert ["query", name] in [d["loc"] for d in response.get_json()["error"]["details"]]

    check()


def body_schema(doc: dict[str, Any], method: str, path: str) -> dict[str, Any]:
    """The operation's body schema, its references resolvable against the document."""
    ref = doc["paths"][path][method.lower()]["requestBody"]["content"]["application/json"]["schema"]
    return {**ref, "components": doc["components"]}


EXACT_BODIES = [
    ("POST", "/records/{id}/retract"),
    ("POST", "/records/{id}/reject"),
    ("POST", "/records/{id}/approve"),
    ("DELETE", "/records/{id}"),
    ("DELETE", "/entities/{entity}"),
]
TARGETS = {"{id}": NO_ID, "{entity}": NOBODY, "{name}": "customer_context"}
NAMED = {"/writes/{name}": "remember"}
"""Where each body is sent: an id no record has, an entity no record is about, a view (or a write
contract) of the reference catalog."""


def concrete(path: str, fresh: bool = False) -> str:
    """The documented `path` with its variables filled in (a fresh record id when `fresh`)."""
    path = path.replace("{name}", NAMED.get(path, "{name}"))
    for variable, value in TARGETS.items():
        path = path.replace(variable, str(uuid.uuid4()) if fresh and variable == "{id}" else value)
    return path


@st.composite
def objects(draw: st.DrawFn, schema: dict[str, Any]) -> dict[str, Any]:
    """An object the (flat) object schema at `schema`'s reference declares valid: each required
    property, and each optional one or not, drawn from its own schema."""
    ref = schema["$ref"].removeprefix("#/components/schemas/")
    target = schema["components"]["schemas"][ref]
    required = set(target.get("required", []))
    return {
        name: draw(from_schema(prop))
        for name, prop in sorted(target.get("properties", {}).items())
        if name in required or draw(st.booleans())
    }


@pytest.mark.parametrize(("method", "path"), EXACT_BODIES)
def test_bodies_declared_valid_are_read(
    client: Client, document: dict[str, Any], method: str, path: str
) -> None:
    schema = body_schema(document, method, path)

    @FUZZ
    @given(body=objects(schema))
    def check(body: Any) -> None:
        response = client.request(method, concrete(path, fresh=True), json=body)
        assert response.status_code == 404, (body, response.get_data(as_text=True)[:500])

    check()


EXAMPLES: dict[tuple[str, str], list[Any]] = {
    ("POST", "/records/{id}/retract"): [{"reason": "wrong"}],
    ("POST", "/records/{id}/reject"): [{"reason": "wrong"}],
    ("POST", "/records/{id}/approve"): [{}],
    ("POST", "/records"): [{"records": [DEPENDENCY]}],
    ("POST", "/search"): [
        {"q": "budget", "mode": "text"},
        {"mode": "recent", "scope": {"collections": ["memories"]}, "k": 5},
        {
            "sources": [{"name": "a", "mode": "recent", "scope": {"collections": ["memories"]}}],
            "fuse": {"kind": "rrf"},
        },
    ],
    ("POST", "/views/{name}/query"): [{"entity": "e", "task": "t"}],
    ("POST", "/views/{name}/explain"): [{"entity": "e", "task": "t"}],
    ("DELETE", "/records/{id}"): [{"reason": "asked to"}, {}],
    ("DELETE", "/entities/{entity}"): [{"reason": "asked to"}],
    ("POST", "/writes/{name}"): [
        {"parameters": {"entity": "e", "text": "t"}},
        {"parameters": {"entity": "e", "text": "t"}, "idempotency_key": "fuzz-1"},
    ],
}
EXAMPLES[("POST", "/search/explain")] = EXAMPLES[("POST", "/search")]
"""Valid bodies of each operation, the starting points of the invalid ones."""
JSON_RPC = {("POST", "/mcp")}
"""Operations whose body is a JSON-RPC message: one the document refuses is answered by the MCP SDK
with a JSON-RPC error (`test_error_shape.test_mcp_transport_errors_are_json`), not a 422."""


def test_every_operation_with_a_body_is_fuzzed(document: dict[str, Any]) -> None:
    with_body = {
        (method.upper(), path)
        for path, methods in document["paths"].items()
        for method, operation in methods.items()
        if "requestBody" in operation
    }
    assert with_body == set(EXAMPLES) | JSON_RPC
    assert set(EXACT_BODIES) <= with_body


@st.composite
def mutated(draw: st.DrawFn, example: Any, validator: Draft202012Validator) -> Any:
    """`example` changed at one place (a key added, a value replaced, a value removed) until the
    document's schema refuses it."""
    body = json.loads(json.dumps(example))
    for _ in range(5):
        node = _at(body, draw(st.sampled_from(list(_containers(body)))))
        keys = list(node) if isinstance(node, dict) else list(range(len(node)))
        key = draw(st.sampled_from(keys)) if keys else None
        value = draw(
            st.one_of(
                st.none(),
                st.booleans(),
                st.integers(),
                st.text(max_size=5),
                st.lists(st.integers(), max_size=2),
            )
        )
        action = draw(st.sampled_from(["replace", "add", "remove"]))
        if action == "add" and isinstance(node, dict):
            node["zz_" + draw(st.text("abc", min_size=1, max_size=3))] = value
        elif action == "remove" and isinstance(node, dict) and key is not None:
            node.pop(key)
        elif key is not None:
            node[key] = value
        if not validator.is_valid(body):
            return body
    return None


def _containers(value: Any, path: tuple[Any, ...] = ()) -> Any:
    if isinstance(value, dict | list):
        yield path
        items = value.items() if isinstance(value, dict) else enumerate(value)
        for key, item in items:
            yield from _containers(item, (*path, key))


def _at(value: Any, path: tuple[Any, ...]) -> Any:
    for part in path:
        value = value[part]
    return value


@pytest.mark.parametrize(("method", "path"), list(EXAMPLES))
def test_bodies_declared_invalid_are_refused(
    client: Client, document: dict[str, Any], method: str, path: str
) -> None:
    validator = Draft202012Validator(body_schema(document, method, path))
    for example in EXAMPLES[(method, path)]:
        assert validator.is_valid(example), example

    @FUZZ
    @given(data=st.data())
    def check(data: st.DataObject) -> None:
        example = data.draw(st.sampled_from(EXAMPLES[(method, path)]))
        body = data.draw(mutated(example, validator))
        if body is None:
            return
        response = client.request(method, concrete(path), json=body)
        assert response.status_code == 422, (body, response.get_data(as_text=True)[:500])

    check()
