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
from pathlib import Path
from typing import Any
from uuid import uuid4

import anyio
import pytest
from flask import Flask
from sqlalchemy.engine import Engine

from memseek.cli import main
from memseek.errors import ConfigError
from memseek.models.local import MODEL_ID
from memseek.runtime import Runtime
from memseek.settings import Settings
from memseek.write.worker import BackgroundWorker
from tests.blackbox.design_support import RECORD_FIELDS
from tests.blackbox.design_support import VECTOR
from tests.blackbox.design_support import count_records
from tests.blackbox.design_support import current_flags
from tests.blackbox.design_support import fact
from tests.blackbox.design_support import process
from tests.blackbox.design_support import rec
from tests.blackbox.design_support import recent
from tests.blackbox.design_support import retract
from tests.blackbox.design_support import walk
from tests.conftest import Client
from tests.conftest import Tenant
from tests.conftest import client_for
from tests.helpers import cli_env
from tests.helpers import error
from tests.helpers import fetch
from tests.helpers import fixture_catalog
from tests.helpers import free_port
from tests.helpers import locs
from tests.helpers import memseek
from tests.helpers import ok
from tests.helpers import post_records
from tests.helpers import runtime_for
from tests.helpers import serve_on_free_port
from tests.helpers import start_memseek
from tests.helpers import touches_written
from tests.helpers import view_query
from tests.helpers import with_models
from tests.helpers import write_files
from tests.helpers import written
from tests.helpers import written_ids
from tests.integration.test_lanes import _in_parallel

# --- retract, approve, reject ---------------------------------------------------------------------


def test_reject_answers_with_the_whole_record(bw: Client) -> None:
    """§3 `GET /records/{id}` lists the whole record; reject answers with the same shape as
    retract and approve do."""
    (draft,) = written_ids(bw, fact("proposal", status="draft"))
    body = ok(bw.post(f"/records/{draft}/reject", json={"reason": "no"}))
    assert set(body) == RECORD_FIELDS
    assert body == fetch(bw, draft)


def test_retracting_every_value_of_a_slot_leaves_none_and_a_new_write_is_current(bw: Client) -> None:
    """§1: "Retracting the current value makes the newest non-retracted earlier value current
    again"; with none left the slot is empty until the next write, which is current."""
    a, b = (written_ids(bw, fact(text))[0] for text in ("a", "b"))
    assert retract(bw, b).status_code == 200 and retract(bw, a).status_code == 200
    assert current_flags(bw, a, b) == [False, False]
    assert recent(bw, "bw_facts") == []
    (c,) = written(bw, fact("c"))
    assert c["current"] is True
    assert current_flags(bw, a, b, c["id"]) == [False, False, True]
    assert [h["text"] for h in recent(bw, "bw_facts")] == ["c"]


def test_retracting_a_newer_value_still_processing_restores_the_older_one(
    bw: Client, bw_runtime: Runtime
) -> None:
    """§1: "a newer value still being processed hides the older one"; "Retracting the current
    value makes the newest non-retracted earlier value current again"."""
    (old,) = written_ids(
        bw, rec("bw_vec", key="tier", text="tier gold", embedding=VECTOR, embedding_model=MODEL_ID)
    )
    (new,) = written_ids(bw, rec("bw_vec", key="tier", text="tier platinum"))
    assert recent(bw, "bw_vec") == []
    assert retract(bw, new).status_code == 200
    assert current_flags(bw, old, new) == [True, False]
    assert [h["text"] for h in recent(bw, "bw_vec")] == ["tier gold"]
    process(bw_runtime)
    assert [h["text"] for h in recent(bw, "bw_vec")] == ["tier gold"]


def test_retracting_an_approved_value_restores_the_previous_active_one(bw: Client) -> None:
    """§1 Drafts: approval makes the draft "the current active value of its slot"; Keyed facts:
    retracting the current value makes the newest non-retracted earlier value current again."""
    (live,) = written_ids(bw, fact("v1"))
    (draft,) = written_ids(bw, fact("v2 proposed", status="draft"))
    assert bw.post(f"/records/{draft}/approve").status_code == 200
    assert retract(bw, draft).status_code == 200
    assert current_flags(bw, live, draft) == [True, False]
    assert [h["text"] for h in recent(bw, "bw_facts")] == ["v1"]


def test_an_approved_draft_still_processing_hides_the_old_value_until_ready(
    bw: Client, bw_runtime: Runtime
) -> None:
    """§1: approval makes the draft "the current active value of its slot"; "only `ready` records
    are searchable" and a newer value still being processed hides the older one (no stale
    fallback)."""
    (live,) = written_ids(
        bw, rec("bw_vec", key="tier", text="tier gold", embedding=VECTOR, embedding_model=MODEL_ID)
    )
    (draft,) = written(bw, rec("bw_vec", key="tier", text="tier platinum", status="draft"))
    assert draft["processing"] == "pending"
    approved = ok(bw.post(f"/records/{draft['id']}/approve"))
    assert (approved["status"], approved["current"], approved["processing"]) == ("active", True, "pending")
    assert current_flags(bw, live) == [False]
    assert recent(bw, "bw_vec") == []
    process(bw_runtime)
    assert [h["text"] for h in recent(bw, "bw_vec")] == ["tier platinum"]


def test_concurrent_approvals_in_one_slot_end_with_one_current_active_value(
    bw_app: Flask, bw_ws: Tenant
) -> None:
    """§1: "Concurrent writers to one slot must end with exactly one current record" — approvals
    and writes into the same slot at once included."""
    client = Client(bw_app.test_client(), bw_ws)
    drafts = [written_ids(client, fact(f"draft {n}", status="draft"))[0] for n in range(4)]

    def work(seed: int) -> None:
        mine = Client(bw_app.test_client(), bw_ws)
        if seed < len(drafts):
            assert mine.post(f"/records/{drafts[seed]}/approve").status_code == 200
        else:
            written_ids(mine, fact(f"write {seed}"))

    _in_parallel(6, work)
    active = [h for h in recent(client, "bw_facts", versions="all") if h["status"] == "active"]
    assert len(active) == 6
    assert len(recent(client, "bw_facts")) == 1
    assert sum(current_flags(client, *(h["id"] for h in active))) == 1


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


# --- automatic links ------------------------------------------------------------------------------


def test_an_approved_draft_nodes_links_become_live(bw: Client) -> None:
    """§1 Graph data: a link "is live only while that exact node record is current"; Drafts:
    approval moves the draft "into the active lane, where it becomes the current active value"."""
    (live,) = written_ids(bw, rec("bw_nodes", key="svc", content={"depends_on": ["db"]}))
    (draft,) = written_ids(bw, rec("bw_nodes", key="svc", status="draft", content={"depends_on": ["queue"]}))
    assert walk(bw, "svc")["nodes"] == ["db", "svc"]
    assert bw.post(f"/records/{draft}/approve").status_code == 200
    result = walk(bw, "svc")
    assert result["nodes"] == ["queue", "svc"]
    (hit,) = result["hits"]
    link = fetch(bw, hit["id"])
    assert (link["derived_from"], link["status"], link["current"]) == ([draft], "active", True)
    assert current_flags(bw, live) == [False]


def test_of_two_values_of_a_node_in_one_request_only_the_later_ones_links_are_live(bw: Client) -> None:
    """§1: "The newest record written into a slot is its current value"; a node's link "is live
    only while that exact node record is current"."""
    first, second = written(
        bw,
        rec("bw_nodes", key="api", content={"depends_on": ["db"]}),
        rec("bw_nodes", key="api", content={"depends_on": ["cache"]}),
    )
    assert (first["current"], second["current"]) == (False, True)
    assert walk(bw, "api")["nodes"] == ["api", "cache"]


def test_retracting_the_only_value_of_a_node_takes_its_links_with_it(bw: Client) -> None:
    """§1: a node's link "is live only while that exact node record is current"."""
    (node,) = written_ids(bw, rec("bw_nodes", key="lone", content={"depends_on": ["x", "y"]}))
    assert walk(bw, "lone")["nodes"] == ["lone", "x", "y"]
    assert retract(bw, node).status_code == 200
    assert walk(bw, "lone")["hits"] == []


def test_a_node_without_link_values_writes_only_itself(bw: Client, bw_db: Engine, bw_ws: Tenant) -> None:
    """§1: "Writing a node writes one link record per value" — no value, no link."""
    written_ids(bw, rec("bw_nodes", key="bare", content={"other": 1}))
    written_ids(bw, rec("bw_nodes", key="empty", content={"depends_on": []}))
    assert count_records(bw_db, bw_ws) == 2


def test_a_restored_node_brings_back_its_links_but_not_one_retracted_on_its_own(bw: Client) -> None:
    """§1: a link "is live only while that exact node record is current"; "Retracting the current
    value makes the newest non-retracted earlier value current again"; "a retracted record is
    never returned by any read"."""
    (v1,) = written_ids(bw, rec("bw_nodes", key="api", content={"depends_on": ["db", "cache"]}))
    links = {h["object"]: h["id"] for h in walk(bw, "api")["hits"]}
    assert retract(bw, links["cache"]).status_code == 200
    assert walk(bw, "api")["nodes"] == ["api", "db"]
    (v2,) = written_ids(bw, rec("bw_nodes", key="api", content={"depends_on": ["queue"]}))
    assert walk(bw, "api")["nodes"] == ["api", "queue"]
    assert retract(bw, v2).status_code == 200
    assert walk(bw, "api")["nodes"] == ["api", "db"]
    assert current_flags(bw, v1, links["db"], links["cache"]) == [True, True, False]


def test_a_superseded_retracted_node_is_never_restored(bw: Client) -> None:
    """§1: retracting the current value makes "the newest non-retracted earlier value" current —
    skipping a retracted one in between, together with its links."""
    (v1,) = written_ids(bw, rec("bw_nodes", key="svc", content={"depends_on": ["one"]}))
    (v2,) = written_ids(bw, rec("bw_nodes", key="svc", content={"depends_on": ["two"]}))
    (v3,) = written_ids(bw, rec("bw_nodes", key="svc", content={"depends_on": ["three"]}))
    assert retract(bw, v2).status_code == 200
    assert walk(bw, "svc")["nodes"] == ["svc", "three"]
    assert retract(bw, v3).status_code == 200
    assert walk(bw, "svc")["nodes"] == ["one", "svc"]
    assert current_flags(bw, v1, v2, v3) == [True, False, False]


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


# --- server-owned fields, unreachable providers, link declarations --------------------------------


@pytest.fixture
def unreachable(bw_runtime: Runtime) -> Runtime:
    """The `bw` runtime whose OpenAI-protocol provider points at a port nothing listens on."""
    environ = {"OPENAI_BASE_URL": f"http://127.0.0.1:{free_port()}/v1", "OPENAI_API_KEY": "k"}
    return with_models(bw_runtime, environ)


def test_an_unreachable_provider_makes_reads_that_need_it_503(unreachable: Runtime, bw_ws: Tenant) -> None:
    """§1 Models: "A provider that is unconfigured or unreachable makes the reads that need it
    fail with `503`"."""
    client = client_for(unreachable, bw_ws)
    body = {"q": "anything", "mode": "vector", "scope": {"collections": ["bw_remote"]}}
    error(client.post("/search", json=body), 503)


def test_an_unreachable_provider_leaves_records_pending_then_failed(bw: Client, unreachable: Runtime) -> None:
    """§1 Models: "the records that need it stay `pending`, then `failed` — never silently ranked
    without it"; `failed` is "visible through `GET /records/{id}` with the error"."""
    (result,) = written(bw, rec("bw_remote", text="needs the remote model"))
    assert result["processing"] == "pending"
    process(unreachable, max_attempts=2)
    record = fetch(bw, result["id"])
    assert record["processing"] == "failed" and record["processing_error"]
    assert recent(bw, "bw_remote") == []


KEYED_EDGES = """\
collections:
  - name: nodes
    version: 1
    active: true
    types: [node]
    keyed: true
    fields: {d: {type: string_array}}
    links: [{field: d, predicate: p, edges: edges}]
  - {name: edges, version: 1, active: true, types: [link], keyed: true}
"""


def test_links_into_a_keyed_edges_collection_are_refused_at_load(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """§1 Collections: "`keyed: true`: key required"; Graph data: a link is written with "subject =
    node key, object = value" and no key of its own, so an edges collection that requires a key
    cannot hold the links; §2: "an invalid catalog refuses to start and every error names the
    file, the definition …, the YAML path and the problem"."""
    code = main(["catalog", "check", str(write_files(tmp_path, {"collections/c.yaml": KEYED_EDGES}))])
    out = "".join(capsys.readouterr())
    assert code != 0, out
    assert "collections[0].links[0].edges" in out, out


# --- slots across versions, processing errors -----------------------------------------------------


def test_a_slot_spans_the_versions_of_its_collection(bw: Client) -> None:
    """§1: "A slot is `(workspace, collection, entity, key, status)`" — the collection, not its
    version: a value written under a pinned older version supersedes the active version's."""
    (newer_version,) = written_ids(bw, rec("customer_events", key="tier", text="gold"))
    (pinned,) = written_ids(bw, rec("customer_events", collection_version=1, key="tier", text="platinum"))
    assert current_flags(bw, newer_version, pinned) == [False, True]
    assert retract(bw, pinned).status_code == 200
    assert current_flags(bw, newer_version) == [True]


def test_a_record_ready_after_a_retry_shows_no_processing_error(
    bw: Client, served: Runtime, openai_server: Any
) -> None:
    """§1: "failures are retried with backoff, then the record is `failed` (visible through `GET
    /records/{id}` with the error)"; a record that ends `ready` has no error to show."""
    failed_once: set[bool] = set()

    def reply(messages: list[dict[str, Any]]) -> str:
        """Each enrichment's first answer is not JSON, its second valid, whatever order the
        worker asks in (the score and the label are separate requests)."""
        label = '"label"' in messages[0]["content"]
        if label not in failed_once:
            failed_once.add(label)
            return "not json"
        return '{"label": "neutral"}' if label else '{"score": 7}'

    openai_server.reply_with(*[reply] * 20)  # enough for other pending records a worker claims too
    (result,) = written(bw, rec("bw_enriched"))
    process(served, max_attempts=5)
    record = fetch(bw, result["id"])
    assert (record["processing"], record["processing_error"]) == ("ready", None)
    assert record["scores"] == {"importance": 7} and record["annotations"] == {
        "sentiment": {"label": "neutral"}
    }


# --- the same request at once from several clients ------------------------------------------------


def statuses_in_parallel(app: Flask, workspace: Tenant, send: Any, threads: int = 6) -> list[Any]:
    """Each thread sends `send(client)` at the same moment; the responses in thread order."""
    responses: list[Any] = [None] * threads

    def work(seed: int) -> None:
        responses[seed] = send(Client(app.test_client(), workspace))

    _in_parallel(threads, work)
    return responses


def test_concurrent_requests_with_one_idempotency_key_write_one_record(
    bw_app: Flask, bw_ws: Tenant, bw_db: Engine
) -> None:
    """§3: "a repeated `idempotency_key` in the same workspace returns the original record instead
    of writing again" — also when the repeats arrive at the same moment."""
    body = rec(text="exactly once", idempotency_key="race-1")
    responses = statuses_in_parallel(bw_app, bw_ws, lambda client: post_records(client, body))
    assert [r.status_code for r in responses] == [201] * 6
    assert len({r.get_json()["records"][0]["id"] for r in responses}) == 1
    assert count_records(bw_db, bw_ws) == 1


def test_concurrent_requests_reusing_a_key_with_other_payloads_write_one_record(
    bw_app: Flask, bw_ws: Tenant, bw_db: Engine
) -> None:
    """§3: "the same key with a different payload → `409`": of several different payloads sent at
    once under one key, exactly one is written and every other request is a conflict."""
    counter = iter(range(100))

    def send(client: Client) -> Any:
        return post_records(client, rec(text=f"payload {next(counter)}", idempotency_key="race-2"))

    codes = sorted(r.status_code for r in statuses_in_parallel(bw_app, bw_ws, send))
    assert codes == [201, 409, 409, 409, 409, 409]
    assert count_records(bw_db, bw_ws) == 1


@pytest.mark.parametrize(
    ("action", "body"),
    [
        pytest.param("retract", {"reason": "dup"}, id="retract"),
        pytest.param("reject", {"reason": "no"}, id="reject"),
        pytest.param("approve", {}, id="approve"),
    ],
)
def test_a_record_action_sent_several_times_at_once_succeeds_once(
    bw_app: Flask, bw_ws: Tenant, bw: Client, action: str, body: dict[str, Any]
) -> None:
    """§3 record actions change a record's state once: a second retract, reject or approve of the
    same record is a `409` conflict — also when they race."""
    (draft,) = written_ids(bw, fact("proposal", status="draft"))
    responses = statuses_in_parallel(
        bw_app, bw_ws, lambda client: client.post(f"/records/{draft}/{action}", json=body)
    )
    assert sorted(r.status_code for r in responses) == [200, 409, 409, 409, 409, 409]
    for response in responses:
        if response.status_code == 409:
            error(response, 409, "conflict")


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


# --- automatic links under declared paths, and links that need processing (`bz_` catalog) ---------


def bz_walk(client: Client, seed: str) -> list[tuple[str, str, str]]:
    hits = ok(view_query(client, "bz_walk", {"seed": seed}))["hits"]
    return [(h["subject"], h["predicate"], h["object"]) for h in hits]


@pytest.fixture(scope="module")
def bz_runtime(bw_runtime: Runtime, tmp_path_factory: pytest.TempPathFactory) -> Runtime:
    """The `bw` catalog plus a string-valued link field and an edges collection that embeds."""
    return runtime_for(bw_runtime, fixture_catalog(tmp_path_factory.mktemp("bz-catalog"), "bw", "bz"))


@pytest.fixture
def bz(bz_runtime: Runtime, bw_ws: Tenant) -> Client:
    return client_for(bz_runtime, bw_ws)


def test_a_string_link_field_read_by_its_fallback_path_writes_a_link_at_the_declared_paths(
    bz: Client, bz_runtime: Runtime
) -> None:
    """§1 Graph data: `field` is "a declared string or string_array field of the node"; "Writing a
    node writes one link record per value (subject = node key, object = value …)"; the graph
    block maps subject, object and predicate "onto *declared fields*" of the edges collection —
    which live at their declared paths; a field is found "via its path or a fallback path"."""
    (node,) = written_ids(bz, rec("bz_people", type="person", key="ann", content={"boss": "bob"}))
    process(bz_runtime)
    assert bz_walk(bz, "ann") == [("ann", "reports_to", "bob")]
    (hit,) = ok(view_query(bz, "bz_walk", {"seed": "ann"}))["hits"]
    link = fetch(bz, hit["id"])
    assert link["content"] == {"edge": {"from": "ann", "to": "bob", "kind": "reports_to"}}
    assert (link["collection"], link["derived_from"], link["depth"]) == ("bz_rel", [node], 1)


def test_links_that_need_processing_are_live_once_processed(bz: Client, bz_runtime: Runtime) -> None:
    """§1 Graph data: "a link written directly is live as soon as it is processed"; "only `ready`
    records are searchable" — automatic links of an edges collection that embeds included."""
    direct = rec(
        "bz_rel",
        type="link",
        text="cy reports to dee",
        content={"edge": {"from": "cy", "to": "dee", "kind": "reports_to"}},
    )
    (link,) = written(bz, direct)
    (node,) = written(bz, rec("bz_people", type="person", key="eve", content={"org": {"manager": "fay"}}))
    assert (link["processing"], node["processing"]) == ("pending", "ready")
    assert bz_walk(bz, "cy") == [] and bz_walk(bz, "eve") == []
    process(bz_runtime)
    assert bz_walk(bz, "cy") == [("cy", "reports_to", "dee")]
    assert bz_walk(bz, "eve") == [("eve", "reports_to", "fay")]


def test_wait_returns_once_the_automatic_links_are_processed_too(bz: Client, bz_runtime: Runtime) -> None:
    """Issue: "`?wait=true` with a bounded timeout"; design §1: writing a node writes its links,
    and only `ready` records are searchable. A node that needs no processing itself still waits
    for its links, so the graph read right after the wait sees them."""
    worker = BackgroundWorker(bz_runtime, idle_seconds=60).start()
    try:
        node = rec("bz_people", type="person", key="gus", content={"org": {"manager": "hal"}})
        (result,) = written(bz, node, query="?wait=true&timeout=30")
    finally:
        worker.stop()
    assert result["processing"] == "ready"
    assert bz_walk(bz, "gus") == [("gus", "reports_to", "hal")]


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
