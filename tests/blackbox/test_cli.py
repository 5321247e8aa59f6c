"""The `memseek` command (design §4): `serve`, `explain`, configuration errors, the statement
comments that name each route or view, and the resources the installed package ships.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy.engine import Engine

from tests.blackbox.design_support import rec
from tests.blackbox.support import sx_catalog
from tests.conftest import Client
from tests.conftest import Tenant
from tests.helpers import cli_env
from tests.helpers import embedded_home as own_home
from tests.helpers import fetch
from tests.helpers import http_call
from tests.helpers import memseek
from tests.helpers import serve_on_free_port
from tests.helpers import start_memseek
from tests.helpers import statements_sent
from tests.helpers import written_ids

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
def embedded_home() -> Iterator[Path]:
    """A MEMSEEK_HOME whose embedded server (it outlives `memseek serve`) is stopped afterwards."""
    with own_home() as home:
        yield home


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


# --- configuration errors -------------------------------------------------------------------------


def test_a_missing_catalog_directory_stops_the_command_naming_it(bw_url: str, tmp_path: Path) -> None:
    """§4: "`MEMSEEK_CATALOG` | the shipped reference catalog | catalog directory"; §2: "an invalid
    catalog refuses to start"."""
    missing = tmp_path / "no-such-catalog"
    env = cli_env(DATABASE_URL=bw_url, MEMSEEK_CATALOG=str(missing))
    result = memseek(env, "explain", stdin=json.dumps({"mode": "recent"}))
    assert result.returncode != 0
    assert str(missing) in result.stderr and "Traceback" not in result.stderr, result.stderr


def test_an_unknown_package_stops_the_command_naming_it(tmp_path: Path) -> None:
    """§4: "`MEMSEEK_PACKAGE` | none | deployment package name"; §2: "`MEMSEEK_PACKAGE` selects one
    package" — a name no package has selects nothing, and the catalog refuses to load."""
    root = sx_catalog(tmp_path / "catalog", "sx-views")
    result = memseek(cli_env(MEMSEEK_PACKAGE="no_such_package"), "catalog", "check", str(root))
    assert result.returncode != 0
    assert "no_such_package" in result.stderr and "Traceback" not in result.stderr, result.stderr
    assert memseek(cli_env(MEMSEEK_PACKAGE="sx_pkg"), "catalog", "check", str(root)).returncode == 0


# --- memseek explain ------------------------------------------------------------------------------


SEARCH = {"mode": "recent", "scope": {"collections": ["bw_plain"], "entities": ["entity-value-42"]}, "k": 7}


@pytest.fixture
def explain_env(bw_url: str, bw_catalog: Path, bw_ws: Tenant) -> dict[str, str]:
    return cli_env(DATABASE_URL=bw_url, MEMSEEK_CATALOG=str(bw_catalog))


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


@pytest.mark.parametrize(
    ("name", "content", "problem"),
    [
        pytest.param("missing.json", None, "cannot read", id="missing"),
        pytest.param("latin1.json", b"\xff\xfe{}", "not valid JSON", id="not-utf8"),
        pytest.param(".", None, "cannot read", id="a-directory"),
    ],
)
def test_explain_refuses_an_unreadable_file_in_one_line(
    explain_env: dict[str, str], tmp_path: Path, name: str, content: bytes | None, problem: str
) -> None:
    """Issue 41: "bad input at every interface gives a typed error …, never a traceback"; issue 2:
    each error "gets a clear error". `memseek explain FILE` answers a file it cannot read as
    `memseek import FILE` does: one line naming the problem, exit status 2."""
    if content is not None:
        (tmp_path / name).write_bytes(content)
    result = memseek(explain_env, "explain", str(tmp_path / name), "--workspace", "bw-a")
    assert result.returncode == 2
    assert result.stderr.startswith("memseek: error: ") and problem in result.stderr
    assert "Traceback" not in result.stderr


CALENDAR = {"entity": "maria", "start": "2026-07-01T00:00:00Z", "end": "2026-08-01T00:00:00Z"}


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


def test_explain_names_the_route_and_binds_quoted_values(explain_env: dict[str, str]) -> None:
    """§3: "`memseek explain` prints the exact SQL one search or view call would run (parameters
    bound) and, with `--analyze`, Postgres' `EXPLAIN (ANALYZE, BUFFERS)` for it. Every generated
    statement carries a comment naming the view or route" — an ad-hoc search is `POST /search`;
    a value holding a quote is bound as a literal that still runs."""
    body = {"mode": "text", "q": "budget", "scope": {"collections": ["bw_plain"], "entities": ["O'Brien"]}}
    result = memseek(explain_env, "explain", "--workspace", "bw-a", stdin=json.dumps(body))
    assert result.returncode == 0, result.stderr
    assert "/* memseek POST /search" in result.stdout
    assert "'O''Brien'" in result.stdout
    analyzed = memseek(explain_env, "explain", "--workspace", "bw-a", "--analyze", stdin=json.dumps(body))
    assert analyzed.returncode == 0, analyzed.stderr
    assert "Execution Time" in analyzed.stdout


def test_explain_of_an_unknown_view_is_refused_naming_it(explain_env: dict[str, str]) -> None:
    """§3: `memseek explain` prints the SQL of "one search or view call"; spec: "No active view by
    that name → 404" — the command refuses, naming the view."""
    args = ("explain", "--workspace", "bw-a", "--view", "no_such_view")
    result = memseek(explain_env, *args, stdin="{}")
    assert result.returncode != 0
    assert "no_such_view" in result.stderr and "Traceback" not in result.stderr, result.stderr


EXPLAINED = [
    pytest.param(
        {"mode": "text", "q": "budget's", "scope": {"collections": ["bw_plain"], "entities": ["O'Brien"]}},
        id="text",
    ),
    pytest.param({"mode": "vector", "q": "budget", "scope": {"collections": ["bw_vec"]}}, id="vector"),
    pytest.param(
        {
            "mode": "hybrid",
            "q": "plan",
            "scope": {"collections": ["bw_vec"], "occurred_after": "2026-01-01T00:00Z"},
        },
        id="hybrid",
    ),
    pytest.param(
        {
            "mode": "structured",
            "scope": {"collections": ["bw_plain"]},
            "where": {"sa": {"contains_any": ["a", "b"]}, "b": {"eq": True}, "s": {"in": ["x", "y"]}},
            "order_by": [{"field": "d"}],
        },
        id="structured",
    ),
    pytest.param(
        {
            "q": "budget",
            "sources": [
                {"name": "a", "mode": "text", "scope": {"collections": ["bw_plain"]}},
                {"name": "b", "mode": "vector", "scope": {"collections": ["bw_vec"]}},
            ],
            "fuse": {"kind": "rrf"},
        },
        id="combined",
    ),
]


@pytest.mark.parametrize("body", EXPLAINED)
def test_explain_prints_sql_that_runs_as_printed(
    explain_env: dict[str, str], bw_engine: Engine, body: dict[str, Any]
) -> None:
    """§3: "`memseek explain` prints the exact SQL one search or view call would run (parameters
    bound)" — what it prints runs as it stands (a DBA pastes it into psql): quoted strings,
    arrays, timestamps and the query vector included."""
    result = memseek(explain_env, "explain", "--workspace", "bw-a", stdin=json.dumps(body))
    assert result.returncode == 0, result.stderr
    with bw_engine.connect() as conn:
        driver = conn.connection.dbapi_connection
        assert driver is not None
        with driver.cursor() as cursor:
            cursor.execute(result.stdout)  # no parameters: the text as printed, every statement of it
        driver.rollback()


@pytest.mark.parametrize(
    ("view", "parameters", "shown"),
    [
        pytest.param(
            "bw_graph",
            {"seed": "api-seed", "depth": 2},
            "'api-seed'",
            id="graph",
        ),
        pytest.param("customer_context", {"entity": "maria-e", "task": "budget"}, "'maria-e'", id="search"),
    ],
)
def test_explain_prints_the_sql_of_any_view_call(
    explain_env: dict[str, str], view: str, parameters: dict[str, Any], shown: str
) -> None:
    """§3: "`memseek explain` prints the exact SQL one search or view call would run (parameters
    bound) … Every generated statement carries a comment naming the view or route" — a graph
    view's call runs SQL too (spec: a graph view is a view, called through the same route)."""
    args = ("explain", "--workspace", "bw-a", "--view", view)
    result = memseek(explain_env, *args, stdin=json.dumps(parameters))
    assert result.returncode == 0, result.stderr
    assert f"/* memseek view {view} v1" in result.stdout and shown in result.stdout


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
