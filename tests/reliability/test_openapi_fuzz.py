"""Issue 45: the OpenAPI document is exactly as strict as the server. Requests are generated from
the served document (hypothesis-jsonschema over its schemas):

* every declared query parameter: values the document declares valid are never refused, values it
  declares invalid always are (at `["query", name]`) — and the GET routes answer 200 for any valid
  combination;
* bodies whose whole rule set the document states (a retraction's reason, an approval's empty
  object): a valid one is never refused (the record does not exist: 404), an invalid one is;
* every body schema: an instance the document declares invalid (a valid example mutated until the
  document's own schema refuses it) is refused with 422 — never accepted, never a 500.

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

from tests.conftest import Client

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


QUERY_OPERATIONS = [("GET", "/search"), ("GET", "/context"), ("POST", "/records")]
DEPENDENCY = {"collection": "dependencies", "entity": "e", "type": "link", "text": "t"}
"""A record processed on write (its collection embeds nothing): `?wait=true` returns at once."""


def send(client: Client, method: str, path: str, params: dict[str, str]) -> Any:
    query = "&".join(f"{quote(k)}={quote(v, safe='')}" for k, v in params.items())
    body = {"records": [DEPENDENCY]} if path == "/records" else None
    return client.request(method, f"{path}?{query}", json=body)


@st.composite
def valid_params(draw: st.DrawFn, schemas: dict[str, tuple[dict[str, Any], bool]]) -> dict[str, str]:
    params = {}
    for name, (schema, required) in sorted(schemas.items()):
        if required or draw(st.booleans()):
            params[name] = as_text(draw(from_schema(schema)))
    return params


@pytest.mark.parametrize(("method", "path"), QUERY_OPERATIONS)
def test_query_values_declared_valid_are_served(
    client: Client, document: dict[str, Any], method: str, path: str
) -> None:
    schemas = query_schemas(document, method, path)

    @FUZZ
    @given(params=valid_params(schemas))
    def check(params: dict[str, str]) -> None:
        response = send(client, method, path, params)
        assert response.status_code in (200, 201), (params, response.get_data(as_text=True)[:500])

    check()


@pytest.mark.parametrize(("method", "path"), QUERY_OPERATIONS)
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
]


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
        response = client.request(method, path.replace("{id}", str(uuid.uuid4())), json=body)
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
}
"""Valid bodies of each operation, the starting points of the invalid ones."""


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
        target = path.replace("{id}", NO_ID).replace("{name}", "customer_context")
        response = client.request(method, target, json=body)
        assert response.status_code == 422, (body, response.get_data(as_text=True)[:500])

    check()
