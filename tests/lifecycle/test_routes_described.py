"""The lifecycle routes in `GET /openapi.json` (every query parameter declared, the document
still valid OpenAPI 3.1), each declared parameter accepted and nothing else, and no agent tool
that deletes: MCP exposes views and write contracts only, so agents cannot forget."""

from __future__ import annotations

from typing import Any

import anyio
import pytest
from mcp import Client as McpClient
from openapi_spec_validator import validate

from memseek.api.mcp import build_server
from memseek.runtime import Runtime
from tests.conftest import Client
from tests.helpers import error
from tests.helpers import ok
from tests.helpers import written_ids
from tests.lifecycle.support import delete
from tests.lifecycle.support import note

ROUTES = {
    ("get", "/records"): ["entity", "collection", "type", "status", "key", "order", "cursor", "limit"],
    ("delete", "/records/{id}"): [],
    ("delete", "/entities/{entity}"): ["collection"],
    ("get", "/erasures"): ["cursor", "limit"],
    ("get", "/erasures/{erasure_id}"): [],
}


def test_every_lifecycle_route_is_described_with_its_query_parameters(lc: Client) -> None:
    document = ok(lc.get("/openapi.json"))
    validate(document)
    for (method, path), names in ROUTES.items():
        operation = document["paths"][path][method]
        query = [p for p in operation.get("parameters", []) if p["in"] == "query"]
        assert [p["name"] for p in query] == names, path
        assert operation["security"] == [{"bearer": []}]
    limit = next(p for p in document["paths"]["/records"]["get"]["parameters"] if p["name"] == "limit")
    assert limit["schema"] == {"type": "integer", "minimum": 1, "maximum": 500, "default": 50}
    forget = document["paths"]["/entities/{entity}"]["delete"]
    assert {"200", "202"} <= set(forget["responses"])
    assert forget["requestBody"]["required"] is False
    assert document["paths"]["/records/{id}"]["delete"]["requestBody"]["content"]["application/json"]


VALUES = {
    "entity": "ann",
    "collection": "lc_notes",
    "type": "note",
    "status": "active",
    "key": "k",
    "order": "oldest",
    "limit": "5",
}


@pytest.mark.parametrize(
    ("method", "path"), [("get", "/records"), ("delete", "/entities/ann"), ("get", "/erasures")]
)
def test_each_declared_parameter_is_taken_and_nothing_else(lc: Client, method: str, path: str) -> None:
    document = ok(lc.get("/openapi.json"))
    described = "/entities/{entity}" if path.startswith("/entities") else path
    declared = [
        p["name"] for p in document["paths"][described][method].get("parameters", []) if p["in"] == "query"
    ]
    for name in declared:
        if name == "cursor":
            continue  # only a cursor the listing gave out is taken (test_list_records)
        written_ids(lc, note("ann", "a note"))
        response = lc.request(method.upper(), f"{path}?{name}={VALUES[name]}")
        assert response.status_code in (200, 202, 404), (name, response.get_json())
    assert error(lc.request(method.upper(), f"{path}?undeclared=1"), 422)["details"][0]["loc"] == [
        "query",
        "undeclared",
    ]


def test_routes_without_query_parameters_take_none(lc: Client) -> None:
    [record_id] = written_ids(lc, note("ann", "a note"))
    error(delete(lc, f"/records/{record_id}?force=true"), 422)
    erasure_id = ok(delete(lc, f"/records/{record_id}"))["erasure_id"]
    error(lc.get(f"/erasures/{erasure_id}?verbose=1"), 422)
    assert ok(lc.get(f"/erasures/{erasure_id}"))["record_id"] == record_id


def test_agents_get_no_tool_that_deletes(lc_runtime: Runtime, lc: Client) -> None:
    async def names() -> list[str]:
        async with McpClient(build_server(lc_runtime, lambda _ctx: lc.tenant.id)) as session:
            return [tool.name for tool in (await session.list_tools()).tools]

    tools: list[Any] = anyio.run(names)
    assert tools == [contract.name for contract in lc_runtime.catalog.tools()]  # views and writes only
    assert "lc_context" in tools
    assert not [name for name in tools if any(word in name for word in ("forget", "delete", "erase"))]
