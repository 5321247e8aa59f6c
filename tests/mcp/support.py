"""Driving Memseek's MCP server with the SDK's own client, over stdio and streamable HTTP."""

from __future__ import annotations

import json
from collections.abc import Awaitable
from collections.abc import Callable
from collections.abc import Mapping
from contextlib import AbstractAsyncContextManager
from typing import Any

import anyio
import httpx2
import mcp_types as types
from mcp import Client
from mcp import ClientSession
from mcp import StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client

from memseek.api.mcp import build_server
from memseek.runtime import Runtime
from tests.conftest import Tenant

Work = Callable[[ClientSession], Awaitable[Any]]


def over(transport: AbstractAsyncContextManager[Any], work: Work) -> Any:
    """Open `transport`, initialize an SDK session over it and run `work` in it."""

    async def main() -> Any:
        async with (
            transport as (read, write),
            ClientSession(read, write, read_timeout_seconds=120) as session,
        ):
            await session.initialize()
            return await work(session)

    return anyio.run(main)


def stdio(command: str, env: Mapping[str, str]) -> AbstractAsyncContextManager[Any]:
    """`command mcp` started as the SDK's stdio transport."""
    return stdio_client(StdioServerParameters(command=command, args=["mcp"], env=dict(env)))


def http(url: str, key: str) -> AbstractAsyncContextManager[Any]:
    """The SDK's streamable HTTP transport to `url`, sending `key` as the bearer key."""
    client = httpx2.AsyncClient(headers={"Authorization": f"Bearer {key}"}, timeout=60)
    return streamable_http_client(url, http_client=client)


def in_process(rt: Runtime, tenant: Tenant) -> Client:
    """An SDK client of the MCP server built over `rt`, in this process, as `tenant`."""
    return Client(build_server(rt, lambda _ctx: tenant.id))


def texts(result: types.CallToolResult) -> list[str]:
    return [block.text for block in result.content if isinstance(block, types.TextContent)]


def tool_error(result: types.CallToolResult) -> dict[str, Any]:
    """The service's error body inside an `isError` tool result."""
    assert result.is_error, result
    (text,) = texts(result)
    return json.loads(text)["error"]  # type: ignore[no-any-return]


def assert_view_result(result: types.CallToolResult, rendered: str) -> dict[str, Any]:
    """A view's tool result: the rendered block once, as the first text; then the structured
    result (without the block) as JSON text; returns the structured content."""
    assert not result.is_error, result
    structured = result.structured_content
    assert structured is not None and "rendered" not in structured
    shown, mirrored = texts(result)
    assert shown == rendered and json.loads(mirrored) == structured
    everything = "".join(texts(result)) + json.dumps(structured, ensure_ascii=False)
    assert everything.count(rendered) == 1
    return structured


def assert_write_result(result: types.CallToolResult, name: str, version: int) -> dict[str, Any]:
    """A write's tool result: one summary line naming the record, the route's JSON structured."""
    assert not result.is_error, result
    structured = result.structured_content
    assert structured is not None and set(structured) == {"write", "parameters", "records"}
    assert (structured["write"]["name"], structured["write"]["version"]) == (name, version)
    (record,) = structured["records"]
    assert set(record) == {"id", "processing", "current"}
    (line,) = texts(result)
    assert line.startswith(f"Wrote record {record['id']} through {name} v{version} (") and "\n" not in line
    return structured
