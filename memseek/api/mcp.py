"""MCP: views and write contracts as agent tools, over stdio (`memseek mcp`) and streamable HTTP
(`/mcp`).

The tools are the deployment package's `mcp.tools`, or every active view and write contract
without a package (`Catalog.tools`). Each tool carries its definition's description (a package's
tools must have one: the catalog refuses to load otherwise; without a package a view may have
none, and is listed without one) and its `input_schema` (what `GET /views` and `GET /writes`
show).

A view call runs the same path as `POST /views/{name}/query`. Its result carries the rendered
block once: as the first text content (when the view renders), and the rest of the view
response — everything but `rendered` — as the structured content, mirrored as JSON text for
clients that read only text. A write call runs `POST /writes/{name}`'s path and answers with a
one-line summary (the record id and its state) plus the same JSON as `POST /writes/{name}` as
structured content. A view or write error (422, 404, 409, 503) comes back as a tool result with
`isError` and the service's usual JSON error body, so an agent can read it and correct its
arguments.

Both transports use the official SDK (`mcp`). `/mcp` is a Flask route that hands the request to
the SDK's streamable HTTP app — stateless, JSON responses — running on one background event
loop. It is authenticated like every route (the bearer key decides the workspace); `memseek mcp`
reads its key from `MEMSEEK_API_KEY` instead of the command line, where `ps` would show it.
"""

from __future__ import annotations

import asyncio
import json
import logging
import threading
from collections.abc import Callable
from concurrent.futures import Future
from typing import TYPE_CHECKING
from typing import Any
from uuid import UUID

import anyio
from flask import Blueprint
from flask import Response
from flask import current_app
from flask import request
from pydantic import RootModel

import memseek
from memseek.api.common import outage_body
from memseek.api.common import runtime
from memseek.api.common import workspace
from memseek.api.openapi import Operation
from memseek.api.openapi import document
from memseek.api.writes import call_json
from memseek.catalog.catalog import Contract
from memseek.catalog.graph_contract import published_input_schema
from memseek.catalog.models import WriteContract
from memseek.catalog.parameters import input_schema
from memseek.db import DATABASE_OUTAGES
from memseek.errors import MemseekError
from memseek.errors import error_body
from memseek.jsontext import ended_answer
from memseek.runtime import Runtime
from memseek.search.views import view_response
from memseek.settings import Settings
from memseek.write.contracts import write_through
from memseek.write.ingest import Written

if TYPE_CHECKING:  # the SDK loads on first MCP use: importing it costs about a second per start-up
    import mcp_types as types
    from mcp.server.context import ServerRequestContext
    from mcp.server.lowlevel import Server

log = logging.getLogger(__name__)

SERVER_NAME = "memseek"
PATH = "/mcp"
WORKSPACE_SCOPE_KEY = "memseek.workspace_id"
REQUEST_TIMEOUT_SECONDS = 300.0

WorkspaceOf = Callable[["ServerRequestContext[Any]"], UUID]
ToolCall = Callable[[Runtime, UUID, str, dict[str, Any]], "types.CallToolResult"]


def tool(contract: Contract, settings: Settings) -> types.Tool:
    """The agent tool of one view or write contract: its name, description and input schema."""
    import mcp_types as types

    if isinstance(contract, WriteContract):
        schema = input_schema(contract.parameters)
    else:
        schema = published_input_schema(contract, settings.max_graph_depth, settings.max_graph_paths)
    return types.Tool(name=contract.name, description=contract.description, input_schema=schema)


def call_view(rt: Runtime, workspace_id: UUID, name: str, arguments: dict[str, Any]) -> types.CallToolResult:
    """Run view `name` as `POST /views/{name}/query` would: the rendered block once as text, the
    rest of the response as structured content (and its JSON text)."""
    import mcp_types as types

    data, _ = view_response(rt, workspace_id, name, arguments)
    body = json.loads(data)
    rendered = body.pop("rendered", None)
    blocks = [rendered] if rendered else []
    blocks.append(json.dumps(body, separators=(",", ":"), ensure_ascii=False))
    return types.CallToolResult(
        content=[types.TextContent(text=text) for text in blocks], structured_content=body
    )


def call_write(rt: Runtime, workspace_id: UUID, name: str, arguments: dict[str, Any]) -> types.CallToolResult:
    """Write through contract `name` as `POST /writes/{name}` would (without waiting for
    processing): a one-line summary, and the route's JSON as structured content."""
    import mcp_types as types

    result = write_through(rt, workspace_id, name, arguments)
    body = call_json(rt.catalog, result, result.written)
    summary = write_summary(result.contract, result.written[0])
    return types.CallToolResult(content=[types.TextContent(text=summary)], structured_content=body)


def write_summary(contract: WriteContract, written: Written) -> str:
    """What an agent reads first after a write: which record, and what happens to it next."""
    state = "pending: readable once processed" if written.processing == "pending" else written.processing
    review = "; a draft, which takes effect once approved" if contract.status == "draft" else ""
    return f"Wrote record {written.id} through {contract.name} v{contract.version} ({state}{review})."


def _guarded(
    call: ToolCall, rt: Runtime, workspace_id: UUID, name: str, arguments: dict[str, Any]
) -> types.CallToolResult:
    """`call`, with the service's errors as `isError` results an agent can read and correct."""
    try:
        return call(rt, workspace_id, name, arguments)
    except MemseekError as exc:
        return _error_result(error_body(exc.code, exc.message, exc.details))
    except DATABASE_OUTAGES as exc:  # as a route answers it: 503 backend_unavailable, no traceback
        return _error_result(outage_body(exc))
    except Exception:  # like the app's last-resort handler: log everything, tell the agent nothing internal
        log.exception("MCP call of tool %s failed", name)
        return _error_result(
            error_body("internal_error", "internal error; the operator can see it in the log")
        )


def _error_result(body: dict[str, Any]) -> types.CallToolResult:
    import mcp_types as types

    return types.CallToolResult(content=[types.TextContent(text=json.dumps(body))], is_error=True)


def build_server(rt: Runtime, workspace_of: WorkspaceOf) -> Server[Any]:
    """The SDK server exposing the catalog's tools; `workspace_of` names the caller's workspace."""
    import mcp_types as types
    from mcp.server.lowlevel import Server
    from mcp.shared.exceptions import MCPError

    tools = {contract.name: contract for contract in rt.catalog.tools()}
    for name in (name for name, contract in tools.items() if not contract.description):
        log.warning("tool %s has no description: agents see only its name and input schema", name)

    async def list_tools(ctx: ServerRequestContext[Any], params: Any) -> types.ListToolsResult:
        return types.ListToolsResult(tools=[tool(contract, rt.settings) for contract in tools.values()])

    async def call_tool(
        ctx: ServerRequestContext[Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        if params.name not in tools:
            raise MCPError(code=types.INVALID_PARAMS, message=f"unknown tool {params.name!r}")
        workspace_id = workspace_of(ctx)
        call = call_write if isinstance(tools[params.name], WriteContract) else call_view
        arguments = params.arguments or {}
        return await anyio.to_thread.run_sync(_guarded, call, rt, workspace_id, params.name, arguments)

    return Server(SERVER_NAME, version=memseek.__version__, on_list_tools=list_tools, on_call_tool=call_tool)


# --- stdio -------------------------------------------------------------------------------------


def serve_stdio(rt: Runtime, workspace_id: UUID) -> None:
    """Serve the tools over stdin/stdout for one workspace until the client disconnects."""
    from mcp.server.stdio import stdio_server

    server = build_server(rt, lambda _ctx: workspace_id)

    async def main() -> None:
        async with stdio_server() as (read_stream, write_stream):
            await server.run(read_stream, write_stream, server.create_initialization_options())

    anyio.run(main)


# --- streamable HTTP ---------------------------------------------------------------------------


def _scope_workspace(ctx: ServerRequestContext[Any]) -> UUID:
    """The workspace Flask authenticated, carried in the ASGI scope of the bridged request."""
    http_request = ctx.request
    assert http_request is not None, "streamable HTTP messages carry their HTTP request"
    return http_request.scope[WORKSPACE_SCOPE_KEY]  # type: ignore[no-any-return]


class HttpBridge:
    """The SDK's streamable HTTP app on a background event loop, called from WSGI threads."""

    def __init__(self, rt: Runtime) -> None:
        from mcp.server.transport_security import TransportSecuritySettings

        server = build_server(rt, _scope_workspace)
        # Bearer keys, not cookies, authenticate: DNS rebinding cannot borrow a caller's identity.
        security = TransportSecuritySettings(enable_dns_rebinding_protection=False)
        self.app = server.streamable_http_app(
            streamable_http_path=PATH, json_response=True, stateless_http=True, transport_security=security
        )
        self._manager = server.session_manager
        self._loop = asyncio.new_event_loop()
        ready: Future[None] = Future()
        threading.Thread(target=self._run, args=(ready,), name="memseek-mcp", daemon=True).start()
        ready.result(timeout=30)

    def _run(self, ready: Future[None]) -> None:
        asyncio.set_event_loop(self._loop)
        self._loop.run_until_complete(self._serve(ready))

    async def _serve(self, ready: Future[None]) -> None:
        async with self._manager.run():
            ready.set_result(None)
            await asyncio.Event().wait()  # serve for the life of the process

    def handle(self, scope: dict[str, Any], body: bytes) -> tuple[int, list[tuple[str, str]], bytes]:
        """Run one HTTP exchange through the ASGI app; returns status, headers and body."""
        future = asyncio.run_coroutine_threadsafe(_exchange(self.app, scope, body), self._loop)
        return future.result(timeout=REQUEST_TIMEOUT_SECONDS)


async def _exchange(app: Any, scope: dict[str, Any], body: bytes) -> tuple[int, list[tuple[str, str]], bytes]:
    """One ASGI request/response, collected in memory (JSON response mode: no streaming)."""
    sent = asyncio.Event()
    pending = [{"type": "http.request", "body": body, "more_body": False}]
    status, headers, chunks = 500, [], []

    async def receive() -> dict[str, Any]:
        if pending:
            return pending.pop()
        await sent.wait()
        return {"type": "http.disconnect"}

    async def send(message: dict[str, Any]) -> None:
        nonlocal status, headers
        if message["type"] == "http.response.start":
            status = message["status"]
            headers = [(k.decode("latin-1"), v.decode("latin-1")) for k, v in message.get("headers", [])]
        elif message["type"] == "http.response.body":
            chunks.append(message.get("body", b""))
            if not message.get("more_body", False):
                sent.set()

    await app(scope, receive, send)
    return status, headers, b"".join(chunks)


def asgi_scope(workspace_id: UUID) -> dict[str, Any]:
    """The ASGI scope of the current Flask request, plus the authenticated workspace."""
    environ = request.environ
    headers = [
        (name.lower().encode("latin-1"), value.encode("latin-1")) for name, value in request.headers.items()
    ]
    return {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": request.method,
        "scheme": request.scheme,
        "path": PATH,
        "raw_path": PATH.encode(),
        "root_path": "",
        "query_string": request.query_string,
        "headers": headers,
        "client": (environ.get("REMOTE_ADDR", ""), int(environ.get("REMOTE_PORT") or 0)),
        "server": (environ.get("SERVER_NAME", ""), int(environ.get("SERVER_PORT") or 0)),
        WORKSPACE_SCOPE_KEY: workspace_id,
    }


bp = Blueprint("mcp", __name__)
_bridge_lock = threading.Lock()


def bridge() -> HttpBridge:
    """This app's bridge, started on first use (no thread runs unless `/mcp` is called)."""
    with _bridge_lock:
        if "memseek_mcp" not in current_app.extensions:
            current_app.extensions["memseek_mcp"] = HttpBridge(runtime())
        return current_app.extensions["memseek_mcp"]  # type: ignore[no-any-return]


# POST only: stateless JSON responses offer no SSE stream to GET and no session to DELETE, and the
# MCP transport lets a server answer both with 405 — which a server-sent stream that never ends
# would otherwise hold a request thread for.
@bp.post(PATH)
def mcp_http() -> Response:
    status, headers, body = bridge().handle(asgi_scope(workspace()), request.get_data())
    response = Response(body, status=status)
    for name, value in headers:
        if name.lower() != "content-length":
            response.headers[name] = value
    if body and response.mimetype == "application/json":
        response.set_data(ended_answer(body))  # the SDK's JSON, ended as every other answer
    return response


class JsonRpcMessage(RootModel[dict[str, Any] | list[Any]]):
    """A JSON-RPC 2.0 message (or batch) of the MCP streamable HTTP transport; the MCP SDK reads
    it, and answers a malformed one with a JSON-RPC error."""


document(
    Operation(
        "POST",
        PATH,
        "MCP streamable HTTP endpoint: the views and write contracts exposed as agent tools",
        body=JsonRpcMessage,
        responses=((200, "A JSON-RPC response"), (400, "A JSON-RPC error"), (406, "A JSON-RPC error")),
    )
)
