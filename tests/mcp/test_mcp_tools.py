"""Views and write contracts as MCP tools, through the SDK's own client: in process, over
streamable HTTP (`/mcp` of a served app) and over stdio (`memseek mcp` of this environment).

`tests/mcp/test_mcp_install.py` runs the same calls against a freshly installed package.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
import pytest
from flask import Flask
from mcp import Client
from mcp import ClientSession
from mcp.shared.exceptions import MCPError

from memseek.runtime import Runtime
from tests.conftest import Client as HttpClient
from tests.conftest import Tenant
from tests.helpers import cli_env
from tests.helpers import fetch
from tests.helpers import ok
from tests.helpers import served_in_thread
from tests.helpers import view_query
from tests.mcp.support import assert_view_result
from tests.mcp.support import assert_write_result
from tests.mcp.support import http
from tests.mcp.support import in_process
from tests.mcp.support import over
from tests.mcp.support import stdio
from tests.mcp.support import texts
from tests.mcp.support import tool_error

NOTE = {"entity": "contact.maria", "text": "Maria prefers email to calls.", "tags": ["channel"]}
RECALL = {"entity": "contact.maria", "query": "email"}


def run(client: Client, *calls: tuple[str, dict[str, Any]]) -> tuple[types.ListToolsResult, list[Any]]:
    """List the tools, then make `calls` in order, in one session of `client`."""

    async def main() -> tuple[types.ListToolsResult, list[Any]]:
        async with client:
            listed = await client.list_tools()
            return listed, [await client.call_tool(name, arguments) for name, arguments in calls]

    return anyio.run(main)  # type: ignore[no-any-return]


def listed_contracts(client: HttpClient) -> dict[str, dict[str, Any]]:
    """The active views and write contracts as `GET /views` and `GET /writes` publish them."""
    views = ok(client.get("/views"))["views"]
    writes = ok(client.get("/writes"))["writes"]
    return {entry["name"]: entry for entry in [*views, *writes] if entry["active"]}


def test_without_a_package_every_active_view_and_write_is_a_tool(wc: HttpClient, wc_runtime: Runtime) -> None:
    listed, _ = run(in_process(wc_runtime, wc.tenant))
    names = [t.name for t in listed.tools]
    assert names == [
        "wc_bare",
        "wc_current",
        "wc_recall",
        "wc_event",
        "wc_fact",
        "wc_local_note",
        "wc_note",
        "wc_propose",
    ]
    published = listed_contracts(wc)
    descriptions = {v.name: v.description for v in wc_runtime.catalog.tools()}
    for tool in listed.tools:
        assert tool.input_schema == published[tool.name]["input_schema"], tool.name
        assert tool.description == descriptions[tool.name], tool.name
    by_name = {t.name: t for t in listed.tools}
    assert by_name["wc_bare"].description is None  # no placeholder sentence: a view may have none
    assert by_name["wc_note"].description == "Remember a note about an entity."


def test_a_package_publishes_its_tools_at_their_pinned_versions(
    wc_pkg_runtime: Runtime, tenant: Tenant
) -> None:
    listed, (called,) = run(
        in_process(wc_pkg_runtime, tenant), ("wc_note", {"entity": "e", "text": "pinned"})
    )
    assert [t.name for t in listed.tools] == ["wc_recall", "wc_note"]
    assert set(listed.tools[1].input_schema["properties"]) == {"entity", "text"}  # version 2's contract
    assert_write_result(called, "wc_note", 2)

    async def not_a_tool() -> str:
        async with in_process(wc_pkg_runtime, tenant) as client:
            try:
                await client.call_tool("wc_fact", {})  # pinned by the package, but not one of its tools
            except MCPError as exc:
                return str(exc)
        return "no error"

    assert "unknown tool 'wc_fact'" in anyio.run(not_a_tool)


def test_a_write_then_a_view_in_one_session(wc: HttpClient, wc_runtime: Runtime) -> None:
    _, (wrote, recalled) = run(in_process(wc_runtime, wc.tenant), ("wc_note", NOTE), ("wc_recall", RECALL))
    body = assert_write_result(wrote, "wc_note", 1)
    assert body["parameters"] == {**NOTE, "kind": "note", "source": "agent"}
    (record,) = body["records"]
    assert (record["processing"], record["current"]) == ("ready", True)
    assert fetch(wc, record["id"])["text"] == NOTE["text"]
    direct = ok(view_query(wc, "wc_recall", RECALL))
    structured = assert_view_result(recalled, direct["rendered"])
    assert set(structured) == set(direct) - {"rendered"}  # the view response but the block
    same = ("view", "parameters", "input_record_ids", "truncated", "profiles")
    assert {key: structured[key] for key in same} == {key: direct[key] for key in same}
    assert structured["input_record_ids"] == [record["id"]]


def test_a_draft_says_it_awaits_approval(wc: HttpClient, wc_runtime: Runtime) -> None:
    proposal = {"entity": "contact.maria", "topic": "language", "value": "Portuguese"}
    _, (called,) = run(in_process(wc_runtime, wc.tenant), ("wc_propose", proposal))
    assert_write_result(called, "wc_propose", 1)
    assert texts(called)[0].endswith("(ready; a draft, which takes effect once approved).")
    assert fetch(wc, called.structured_content["records"][0]["id"])["status"] == "draft"


@pytest.mark.parametrize(
    ("name", "arguments", "loc"),
    [
        pytest.param("wc_fact", {"entity": "e", "slot": "plan"}, ["parameters", "value"], id="write-missing"),
        pytest.param(
            "wc_fact",
            {"entity": "e", "slot": "k" * 300, "value": "v"},
            ["parameters", "slot"],
            id="write-record-problem",
        ),
        pytest.param(
            "wc_note",
            {"entity": "e", "text": "t", "importance": 0},
            ["parameters", "importance"],
            id="write-out-of-range",
        ),
        pytest.param("wc_recall", {"entity": "e"}, ["parameters", "query"], id="view-missing"),
    ],
)
def test_errors_are_tool_results_with_the_services_loc(
    wc: HttpClient, wc_runtime: Runtime, name: str, arguments: dict[str, Any], loc: list[Any]
) -> None:
    _, (called,) = run(in_process(wc_runtime, wc.tenant), (name, arguments))
    err = tool_error(called)
    assert err["code"] == "invalid_request" and loc in [d["loc"] for d in err["details"]]
    assert not called.structured_content


# --- over streamable HTTP and stdio -----------------------------------------------------------------


@pytest.fixture(name="mcp_url")
def mcp_url_fixture(wc_app: Flask) -> Iterator[str]:
    """The `wc_` app behind a real HTTP server on an ephemeral port."""
    with served_in_thread(wc_app) as port:
        yield f"http://127.0.0.1:{port}/mcp"


async def write_then_recall(session: ClientSession) -> tuple[types.ListToolsResult, Any, Any]:
    listed = await session.list_tools()
    wrote = await session.call_tool("wc_note", NOTE)
    return listed, wrote, await session.call_tool("wc_recall", RECALL)


def check_session(answer: tuple[types.ListToolsResult, Any, Any], client: HttpClient) -> str:
    listed, wrote, recalled = answer
    assert {"wc_recall", "wc_note", "wc_fact"} <= {t.name for t in listed.tools}
    (record,) = assert_write_result(wrote, "wc_note", 1)["records"]
    structured = assert_view_result(recalled, ok(view_query(client, "wc_recall", RECALL))["rendered"])
    assert structured["input_record_ids"] == [record["id"]]
    return str(record["id"])


def test_streamable_http(mcp_url: str, wc: HttpClient, other_tenant: Tenant) -> None:
    record = check_session(over(http(mcp_url, wc.tenant.key), write_then_recall), wc)
    assert fetch(wc, record)["entity"] == "contact.maria"

    async def foreign(session: ClientSession) -> Any:
        return await session.call_tool("wc_recall", RECALL)

    other = over(http(mcp_url, other_tenant.key), foreign)  # the other workspace sees nothing of it
    assert not other.is_error and other.structured_content["input_record_ids"] == []


def test_stdio(wc_runtime: Runtime, wc_catalog: Path, wc: HttpClient) -> None:
    env = cli_env(
        DATABASE_URL=str(wc_runtime.settings.database_url),
        MEMSEEK_CATALOG=str(wc_catalog),
        MEMSEEK_API_KEY=wc.tenant.key,
        RUN_WORKER="false",
    )
    command = str(Path(sys.executable).parent / "memseek")
    check_session(over(stdio(command, env), write_then_recall), wc)
