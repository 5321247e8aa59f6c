"""Views as MCP tools, through the official SDK client: in-process, streamable HTTP and stdio."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest
from flask import Flask
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError

from memseek.catalog.parameters import input_schema
from memseek.runtime import Runtime
from tests.conftest import Client as HttpClient
from tests.conftest import Tenant
from tests.helpers import cli_env
from tests.helpers import ok
from tests.helpers import runtime_for
from tests.helpers import served_in_thread
from tests.helpers import view_query
from tests.helpers import written_ids
from tests.integration.view_support import link_body
from tests.integration.view_support import note_body
from tests.mcp.support import in_process
from tests.mcp.support import texts

SEARCH = {"entity": "maria", "task": "budget"}


def run(coroutine: Any) -> Any:
    return anyio.run(lambda: coroutine)


async def tools_and_call(client: Client, name: str, arguments: dict[str, Any]) -> tuple[Any, Any]:
    async with client:
        listed = await client.list_tools()
        called = await client.call_tool(name, arguments)
    return listed, called


def test_every_active_view_is_a_tool_without_a_package(view_runtime: Runtime, vclient: HttpClient) -> None:
    written_ids(vclient, note_body("maria", "Maria confirmed the Q3 budget."))
    listed, called = run(tools_and_call(in_process(view_runtime, vclient.tenant), "g_note_search", SEARCH))
    active = view_runtime.catalog.active_views()
    assert [t.name for t in listed.tools] == [v.name for v in active]
    by_name = {t.name: t for t in listed.tools}
    for view in active:
        assert by_name[view.name].input_schema == input_schema(view.parameters)
    expected = ok(view_query(vclient, "g_note_search", SEARCH))
    assert not called.is_error
    rendered, raw = texts(called)
    assert rendered == expected["rendered"]
    assert json.loads(raw) == called.structured_content
    assert "rendered" not in called.structured_content  # the block comes once, as the first text
    assert called.structured_content["input_record_ids"] == expected["input_record_ids"]
    assert called.structured_content["view"] == expected["view"]


def test_a_package_exposes_only_its_mcp_tools(view_runtime: Runtime, vclient: HttpClient) -> None:
    pinned = runtime_for(view_runtime, memseek_package="g_pkg")
    written_ids(vclient, link_body("a", "depends_on", "b"))
    listed, called = run(tools_and_call(in_process(pinned, vclient.tenant), "g_walk", {"seed": "a"}))
    assert [t.name for t in listed.tools] == ["g_walk"]
    assert listed.tools[0].input_schema == input_schema(pinned.catalog.view("g_walk").parameters)
    assert listed.tools[0].input_schema["properties"]["depth"]["maximum"] == 3  # version 2's contract
    assert texts(called) == [json.dumps(called.structured_content, separators=(",", ":"), ensure_ascii=False)]
    assert [p["nodes"] for p in called.structured_content["paths"]] == [["a", "b"]]

    async def unknown() -> str:
        async with in_process(pinned, vclient.tenant) as client:
            try:
                await client.call_tool("g_note_search", SEARCH)  # an active view, but not a tool here
            except MCPError as exc:
                return str(exc)
        return "no error"

    assert "unknown tool 'g_note_search'" in run(unknown())


def test_view_errors_come_back_as_tool_errors(view_runtime: Runtime, vclient: HttpClient) -> None:
    _, called = run(
        tools_and_call(in_process(view_runtime, vclient.tenant), "g_walk", {"seed": "a", "depth": 0})
    )
    assert called.is_error
    [text] = texts(called)
    error = json.loads(text)["error"]
    assert error["code"] == "invalid_request"
    assert ["parameters", "depth"] in [d["loc"] for d in error["details"]]


@pytest.fixture(name="http_url")
def http_url_fixture(view_app: Flask) -> Iterator[str]:
    """The view app behind a real HTTP server on an ephemeral port."""
    with served_in_thread(view_app) as port:
        yield f"http://127.0.0.1:{port}/mcp"


def http_client(url: str, key: str) -> Client:
    headers = {"Authorization": f"Bearer {key}"}
    return Client(streamable_http_client(url, http_client=httpx2.AsyncClient(headers=headers, timeout=60)))


def test_streamable_http_runs_views_for_the_callers_workspace(
    http_url: str, vclient: HttpClient, other_tenant: Tenant
) -> None:
    written_ids(vclient, link_body("a", "rel", "b"))
    listed, called = run(tools_and_call(http_client(http_url, vclient.tenant.key), "g_walk", {"seed": "a"}))
    assert "g_walk" in [t.name for t in listed.tools]
    assert [p["nodes"] for p in called.structured_content["paths"]] == [["a", "b"]]
    _, foreign = run(tools_and_call(http_client(http_url, other_tenant.key), "g_walk", {"seed": "a"}))
    assert foreign.structured_content["paths"] == []


def test_streamable_http_is_authenticated(http_url: str) -> None:
    response = httpx2.post(http_url, json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
    assert response.status_code == 401
    assert response.json()["error"]["code"] == "unauthorized"


def test_stdio(view_runtime: Runtime, view_catalog: Path, vclient: HttpClient) -> None:
    written_ids(vclient, note_body("maria", "Maria confirmed the Q3 budget."))
    env = cli_env(
        DATABASE_URL=str(view_runtime.settings.database_url),
        MEMSEEK_CATALOG=str(view_catalog),
        MEMSEEK_API_KEY=vclient.tenant.key,
        RUN_WORKER="false",
    )
    command = str(Path(sys.executable).parent / "memseek")
    client = Client(StdioServerParameters(command=command, args=["mcp"], env=env), read_timeout_seconds=120)
    listed, called = run(tools_and_call(client, "g_note_search", SEARCH))
    assert "g_note_search" in [t.name for t in listed.tools]
    assert texts(called)[0] == ok(view_query(vclient, "g_note_search", SEARCH))["rendered"]
