"""Conformance audit 3 of the design's write side and HTTP API (`memseek.md` §1–§4), over HTTP.

What the earlier suites (test_design_*, test_audit_design*, test_audit_letter) did not pin:
idempotency replays inside one request and after the original changed, record actions on
pending and approved values, automatic links of drafts and of superseded nodes, every missing
parent named, character (not byte) limits, auth before anything else is read, slot isolation
between workspaces, `?wait=true` states, the MCP endpoint through the official SDK's streamable
HTTP client against `memseek serve`, and the validation of every configuration variable.

Each test quotes the design sentence it relies on.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any
from uuid import uuid4

import anyio
import pytest
from flask import Flask
from sqlalchemy.engine import Engine

from memseek.errors import ConfigError
from memseek.models.local import MODEL_ID
from memseek.settings import Settings
from tests.blackbox.design_support import VECTOR
from tests.blackbox.design_support import current_flags
from tests.blackbox.design_support import fact
from tests.blackbox.design_support import rec
from tests.blackbox.design_support import recent
from tests.blackbox.design_support import retract
from tests.blackbox.design_support import walk
from tests.conftest import Client
from tests.conftest import Tenant
from tests.helpers import cli_env
from tests.helpers import error
from tests.helpers import fetch
from tests.helpers import locs
from tests.helpers import memseek
from tests.helpers import ok
from tests.helpers import post_records
from tests.helpers import serve_on_free_port
from tests.helpers import start_memseek
from tests.helpers import touches_written
from tests.helpers import written_ids

# --- retract, approve, reject ---------------------------------------------------------------------


def test_a_retracted_record_is_not_returned_by_get_context(bw: Client) -> None:
    """§1: "a retracted record is never returned by any read" — `GET /context` included."""
    (record_id,) = written_ids(
        bw, rec("bw_vec", text="the zebra migration budget", embedding=VECTOR, embedding_model=MODEL_ID)
    )
    before = bw.get("/context?q=zebra%20migration&collection=bw_vec")
    assert before.status_code == 200 and "zebra" in before.get_data(as_text=True)
    assert retract(bw, record_id).status_code == 200
    after = bw.get("/context?q=zebra%20migration&collection=bw_vec")
    assert after.status_code == 200 and "zebra" not in after.get_data(as_text=True)


def test_a_retracted_link_leaves_the_graph(bw: Client) -> None:
    """§1: "a retracted record is never returned by any read" — graph walks included."""
    (link,) = written_ids(
        bw, rec("bw_edges", text="a uses b", content={"src": "a", "dst": "b", "rel": "uses"})
    )
    assert walk(bw, "a")["nodes"] == ["a", "b"]
    assert retract(bw, link).status_code == 200
    result = walk(bw, "a")
    assert result["hits"] == [] and "b" not in result["nodes"]


# --- the record, as stored and returned -----------------------------------------------------------


def test_entity_and_text_limits_count_characters_not_bytes(bw: Client) -> None:
    """§1: `entity` "1–256 chars"; `text` "at most `MAX_RECORD_CHARS` (default 32,768)" — characters,
    not UTF-8 bytes or UTF-16 code units."""
    wide = "😀"
    (record_id,) = written_ids(bw, rec(entity=wide * 256, text=wide * 32768))
    record = fetch(bw, record_id)
    assert (record["entity"], record["text"]) == (wide * 256, wide * 32768)
    assert locs(post_records(bw, rec(entity=wide * 257))) == [["records", 0, "entity"]]
    assert locs(post_records(bw, rec(text=wide * 32769))) == [["records", 0, "text"]]


# --- auth and workspaces --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("method", "path", "kwargs"),
    [
        pytest.param("POST", "/records", {"data": b"{oops"}, id="malformed-json"),
        pytest.param("POST", "/records?wait=maybe", {"json": {"records": []}}, id="bad-query"),
        pytest.param("GET", "/records/not-a-uuid", {}, id="malformed-id"),
        pytest.param("GET", f"/records/{uuid4()}", {}, id="unknown-id"),
        pytest.param("POST", f"/records/{uuid4()}/retract", {"json": {}}, id="retract-bad-body"),
        pytest.param("POST", "/views/nope/query", {"json": {}}, id="unknown-view"),
    ],
)
@pytest.mark.parametrize(
    "headers",
    [
        pytest.param({}, id="no-key"),
        pytest.param({"Authorization": "Bearer msk_not_a_real_key_000000000000000000"}, id="unknown-key"),
    ],
)
def test_a_request_without_a_valid_key_is_401_before_anything_else(
    bw_app: Flask, bw_ws: Tenant, method: str, path: str, kwargs: dict[str, Any], headers: dict[str, str]
) -> None:
    """§1: "Every route except `GET /health` requires `Authorization: Bearer <key>` … Missing or
    unknown key → `401`" — whatever else is wrong with the request."""
    response = bw_app.test_client().open(
        path, method=method, headers={"Content-Type": "application/json", **headers}, **kwargs
    )
    error(response, 401, "unauthorized")


def test_a_key_is_matched_exactly(bw_app: Flask, bw_ws: Tenant) -> None:
    """§1: keys are random secrets "stored only as a digest": a changed letter case is another key."""
    client = bw_app.test_client()
    swapped = bw_ws.key.swapcase()
    error(client.get("/views", headers={"Authorization": f"Bearer {swapped}"}), 401, "unauthorized")
    assert client.get("/views", headers=bw_ws.headers).status_code == 200


def test_retracting_in_one_workspace_leaves_the_same_slot_of_another_current(
    bw: Client, bw_other: Client
) -> None:
    """§1: a slot is "(workspace, collection, entity, key, status)"; "Nothing ever crosses a
    workspace boundary"."""
    (mine,) = written_ids(bw, fact("mine"))
    (theirs,) = written_ids(bw_other, fact("theirs"))
    assert current_flags(bw, mine) == [True] and current_flags(bw_other, theirs) == [True]
    assert retract(bw_other, theirs).status_code == 200
    assert current_flags(bw, mine) == [True]
    assert [h["text"] for h in recent(bw, "bw_facts")] == ["mine"]
    assert recent(bw_other, "bw_facts") == []


def test_a_foreign_draft_cannot_be_approved_or_rejected(bw: Client, bw_other: Client) -> None:
    """§1: "A record id from another workspace is answered exactly like an unknown id (`404`)" —
    and nothing happens to it."""
    (draft,) = written_ids(bw_other, fact("their proposal", status="draft"))
    error(bw.post(f"/records/{draft}/approve"), 404, "not_found")
    error(bw.post(f"/records/{draft}/reject", json={"reason": "no"}), 404, "not_found")
    record = fetch(bw_other, draft)
    assert (record["status"], record["retracted_at"], record["current"]) == ("draft", None, True)


# --- MCP over streamable HTTP, with the official SDK's client -------------------------------------


CALENDAR = {"entity": "maria", "start": "2026-07-01T00:00:00Z", "end": "2026-08-01T00:00:00Z"}


def mcp_session(port: int, key: str) -> tuple[Any, Any]:
    """List the tools and call `upcoming_calendar` through the SDK's streamable HTTP client."""
    from mcp import Client as McpClient
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared._httpx_utils import create_mcp_http_client

    async def session() -> tuple[Any, Any]:
        http = create_mcp_http_client(headers={"Authorization": f"Bearer {key}"})
        async with (
            http,
            McpClient(streamable_http_client(f"http://127.0.0.1:{port}/mcp", http_client=http)) as c,
        ):
            return await c.list_tools(), await c.call_tool("upcoming_calendar", CALENDAR)

    return anyio.run(session)


@pytest.fixture
def served_port(bw_url: str, bw_catalog: Any, bw_db: Engine) -> Iterator[int]:
    """`memseek serve` over the `bw` database and catalog (no worker)."""
    env = cli_env(DATABASE_URL=bw_url, MEMSEEK_CATALOG=str(bw_catalog))
    port, proc = serve_on_free_port(
        lambda port: start_memseek(env, "serve", "--port", str(port), "--no-worker")
    )
    try:
        yield port
    finally:
        proc.terminate()
        proc.communicate(timeout=30)


def test_the_official_mcp_client_uses_the_tools_over_http(
    served_port: int, bw: Client, bw_other: Client
) -> None:
    """§2: "The MCP server (official `mcp` SDK; stdio via `memseek mcp` and streamable HTTP under
    `/mcp`) exposes each tool with the view's `input_schema`; a call runs the same view path and
    returns the rendered text plus the JSON result." Calls are confined to the key's workspace."""
    meeting = rec(
        "calendar_events", entity="maria", text="Board meeting", content={"starts_at": "2026-07-02T09:00:00Z"}
    )
    (record_id,) = written_ids(bw, meeting)
    listed, called = mcp_session(served_port, bw.tenant.key)
    tools = {tool.name: tool for tool in listed.tools}
    assert set(tools) == {"bw_graph", "customer_context", "upcoming_calendar"}
    views = {v["name"]: v for v in ok(bw.get("/views"))["views"] if v["active"]}
    assert all(tools[name].input_schema == views[name]["input_schema"] for name in tools)
    assert not called.is_error
    texts = [block.text for block in called.content if getattr(block, "type", "") == "text"]
    assert any("Board meeting" in text for text in texts)
    assert [h["id"] for h in called.structured_content["hits"]] == [record_id]
    _, foreign = mcp_session(served_port, bw_other.tenant.key)
    assert not foreign.is_error and foreign.structured_content["hits"] == []


# --- configuration --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("variable", "raw"),
    [
        pytest.param("MAX_QUERY_CHARS", "many", id="MAX_QUERY_CHARS"),
        pytest.param("MAX_GRAPH_DEPTH", "0", id="MAX_GRAPH_DEPTH"),
        pytest.param("MAX_GRAPH_PATHS", "-3", id="MAX_GRAPH_PATHS"),
        pytest.param("SEARCH_RENDER_TOKENS", "1.5", id="SEARCH_RENDER_TOKENS"),
        pytest.param("MAX_RESPONSE_BYTES", "0", id="MAX_RESPONSE_BYTES"),
        pytest.param("SEARCH_MAX_CONCURRENCY", "0", id="SEARCH_MAX_CONCURRENCY"),
        pytest.param("TOUCH_ON_READ", "2", id="TOUCH_ON_READ"),
        pytest.param("MAX_RECORD_CHARS", "0", id="MAX_RECORD_CHARS"),
    ],
)
def test_every_limit_variable_refuses_a_value_that_is_not_a_positive_count(variable: str, raw: str) -> None:
    """§4 lists each variable with its default and meaning: limits and counts are positive
    integers, `TOUCH_ON_READ` a boolean; anything else stops the service naming the variable."""
    with pytest.raises(ConfigError, match=variable):
        Settings.from_env({variable: raw})


@pytest.mark.parametrize(
    ("variable", "attribute", "value"),
    [
        pytest.param("MAX_GRAPH_DEPTH", "max_graph_depth", 1, id="MAX_GRAPH_DEPTH"),
        pytest.param("MAX_GRAPH_PATHS", "max_graph_paths", 1, id="MAX_GRAPH_PATHS"),
        pytest.param("SEARCH_MAX_CONCURRENCY", "search_max_concurrency", 1, id="SEARCH_MAX_CONCURRENCY"),
        pytest.param("MAX_QUERY_CHARS", "max_query_chars", 1, id="MAX_QUERY_CHARS"),
    ],
)
def test_the_smallest_limits_are_accepted(variable: str, attribute: str, value: int) -> None:
    """§4: each limit is a deployment setting; 1 is the smallest meaningful value."""
    assert getattr(Settings.from_env({variable: str(value)}), attribute) == value


def test_an_empty_variable_means_its_default() -> None:
    """§4: "`MEMSEEK_PACKAGE` | none"; an exported but empty variable is treated as unset."""
    settings = Settings.from_env({"MEMSEEK_PACKAGE": "", "DATABASE_URL": "", "MAX_QUERY_CHARS": ""})
    assert (settings.memseek_package, settings.database_url, settings.max_query_chars) == (None, None, 8192)


# --- slots across versions, processing errors -----------------------------------------------------


def test_a_slot_spans_the_versions_of_its_collection(bw: Client) -> None:
    """§1: "A slot is `(workspace, collection, entity, key, status)`" — the collection, not its
    version: a value written under a pinned older version supersedes the active version's."""
    (newer_version,) = written_ids(bw, rec("customer_events", key="tier", text="gold"))
    (pinned,) = written_ids(bw, rec("customer_events", collection_version=1, key="tier", text="platinum"))
    assert current_flags(bw, newer_version, pinned) == [False, True]
    assert retract(bw, pinned).status_code == 200
    assert current_flags(bw, newer_version) == [True]


# --- the same request at once from several clients ------------------------------------------------


@pytest.mark.parametrize(
    "url",
    [
        pytest.param("mysql://user@localhost/memseek", id="another-database"),
        pytest.param("sqlite:///memseek.db", id="sqlite"),
        pytest.param("not a url", id="not-a-url"),
    ],
)
def test_a_database_url_that_is_not_postgresql_is_refused_naming_the_variable(url: str) -> None:
    """§4: `DATABASE_URL` names "an existing PostgreSQL ≥ 15 with pgvector ≥ 0.7"; a setting that
    cannot be one stops the command with a message naming the variable, as every other invalid
    variable does (never a traceback)."""
    result = memseek(cli_env(DATABASE_URL=url), "workspace", "create", "probe", timeout=60)
    assert result.returncode != 0
    assert "Traceback" not in result.stderr, result.stderr
    assert "DATABASE_URL" in result.stderr, result.stderr


# --- last_accessed --------------------------------------------------------------------------------


def test_get_context_counts_as_a_search_that_returned_the_record(bw: Client) -> None:
    """§1: `last_accessed` is the "last time a search returned it"; §3: `GET /context` is "a hybrid
    search whose response is the rendered block" (`TOUCH_ON_READ` defaults to true)."""
    (record_id,) = written_ids(
        bw, rec("bw_vec", text="the okapi survey budget", embedding=VECTOR, embedding_model=MODEL_ID)
    )
    before = fetch(bw, record_id)
    response = bw.get("/context?q=okapi%20survey&collection=bw_vec")
    assert response.status_code == 200 and record_id in response.get_data(as_text=True)
    touches_written(bw)
    after = fetch(bw, record_id)
    assert after["last_accessed"] > before["last_accessed"]


def test_reading_a_record_by_id_is_not_a_search(bw: Client) -> None:
    """§1: `last_accessed` is the "last time a search returned it" — `GET /records/{id}` is not a
    search, nor is an action on the record."""
    (record_id,) = written_ids(bw, rec("bw_events"))
    for _ in range(3):
        fetch(bw, record_id)
    record = ok(bw.post(f"/records/{record_id}/retract", json={"reason": "dup"}))
    assert record["last_accessed"] == record["created_at"]
