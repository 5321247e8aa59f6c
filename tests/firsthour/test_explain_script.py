"""Issue 42, item 6: `memseek explain` prints a script a DBA can paste into psql.

Run through the real psql against the test server, the script plans each statement as the
service's own execution does (the same EXPLAIN node types), it binds the query vector once, and
the explain routes return the same text.
"""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy.engine import Engine
from sqlalchemy.engine import make_url

from memseek.cli import main
from memseek.db import run_statement
from memseek.db import set_local
from memseek.db import workspace_transaction
from memseek.dbctl import psql_binary
from memseek.runtime import Runtime
from memseek.search.compile import Explain
from memseek.search.execute import planner_settings
from memseek.search.prepare import prepare
from memseek.search.request import parse_search
from memseek.write.worker import run_worker
from tests.conftest import Client
from tests.conftest import Tenant
from tests.helpers import ok
from tests.helpers import script_statements
from tests.helpers import written_ids

EVENTS = {"collections": ["customer_events"]}
SEARCHES = [
    pytest.param({"q": "budget call", "mode": "hybrid", "scope": EVENTS}, id="hybrid"),
    pytest.param({"q": "budget call", "mode": "vector", "scope": EVENTS, "k": 5}, id="vector"),
    pytest.param({"q": "budget", "mode": "text", "scope": EVENTS}, id="text"),
    pytest.param({"mode": "recent", "scope": {**EVENTS, "entities": ["c1"]}}, id="recent"),
    pytest.param(
        {"mode": "structured", "scope": EVENTS, "order_by": [{"field": "channel", "direction": "desc"}]},
        id="structured",
    ),
]


@pytest.fixture
def events(client: Client, runtime: Runtime) -> None:
    channels = ["email", "call", "note"]
    written_ids(
        client,
        *(
            {
                "collection": "customer_events",
                "entity": f"c{n % 4}",
                "type": "event",
                "text": f"budget call number {n} about renewal {n % 5}",
                "content": {"channel": channels[n % 3]},
            }
            for n in range(40)
        ),
    )
    run_worker(runtime, once=True)


def explain(
    monkeypatch: pytest.MonkeyPatch, database_url: str, tmp_path: Path, capsys: Any, *args: str
) -> str:
    monkeypatch.setenv("DATABASE_URL", database_url)
    assert main(["explain", *args, "--workspace", "tenant-a"]) == 0
    return capsys.readouterr().out  # type: ignore[no-any-return]


def request_file(tmp_path: Path, body: dict[str, Any]) -> str:
    path = tmp_path / "request.json"
    path.write_text(json.dumps(body))
    return str(path)


def node_types(plan: dict[str, Any]) -> list[str]:
    """The plan's node types, depth first (the plan's shape)."""
    return [plan["Node Type"], *(t for child in plan.get("Plans", ()) for t in node_types(child))]


def is_search_run(statement: str) -> bool:
    """Whether the statement runs a search: the EXECUTE of a prepared one, or one written out."""
    if statement.startswith("EXECUTE"):
        return True
    return "/* memseek" in statement and not statement.startswith("PREPARE")


def psql_plan(database_url: str, script: str) -> dict[str, Any]:
    """The JSON plan of the script's first search statement: the script run by psql as pasted up
    to that statement, with `EXPLAIN (FORMAT JSON)` put before it (before its EXECUTE, when it is
    prepared), then rolled back."""
    first = next(s for s in script_statements(script) if is_search_run(s))
    explained = script[: script.index(first + ";")] + f"EXPLAIN (FORMAT JSON) {first};\nROLLBACK;\n"
    url = make_url(database_url).set(drivername="postgresql").render_as_string(hide_password=False)
    result = subprocess.run(
        [psql_binary(), "--dbname", url, "-qAt", "-v", "ON_ERROR_STOP=1", "-f", "-"],
        input=explained,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)[0]["Plan"]  # type: ignore[no-any-return]


def service_plan(runtime: Runtime, tenant: Tenant, body: dict[str, Any]) -> dict[str, Any]:
    """The plan of the first statement of the search as the service executes it: its values bound,
    in the workspace's transaction, with its planner settings."""
    compiled = prepare(runtime, tenant.id, parse_search(body)).compiled[0]
    with workspace_transaction(runtime.engine, tenant.id) as conn:
        set_local(conn, planner_settings(runtime.search.pgvector, compiled))
        (row,) = run_statement(conn, Explain(compiled.statement, as_json=True), compiled.params)
    return row["QUERY PLAN"][0]["Plan"]  # type: ignore[no-any-return]


@pytest.mark.parametrize("body", SEARCHES)
def test_the_script_plans_as_the_service_runs(
    events: None,
    runtime: Runtime,
    tenant: Tenant,
    database_url: str,
    body: dict[str, Any],
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    script = explain(monkeypatch, database_url, tmp_path, capsys, request_file(tmp_path, body))
    lines = script.splitlines()
    assert lines[:3] == [
        "BEGIN;",
        "SET LOCAL role = 'memseek_scoped';",
        f"SET LOCAL memseek.workspace_id = '{tenant.id}';",
    ]
    assert lines[-1] == "ROLLBACK;"
    assert node_types(psql_plan(database_url, script)) == node_types(service_plan(runtime, tenant, body))


def test_the_query_vector_is_bound_once(
    events: None, database_url: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: Any
) -> None:
    body = {"q": "budget", "mode": "hybrid", "k": 10, "scope": EVENTS}  # a statement and two fallbacks
    script = explain(monkeypatch, database_url, tmp_path, capsys, request_file(tmp_path, body))
    (setting,) = [
        line for line in script.splitlines() if line.startswith("SET LOCAL memseek.query_vector = ")
    ]
    vector = setting.split(" = ", 1)[1].rstrip(";")
    assert vector.startswith("'[") and len(vector.split(",")) == 384
    assert script.count(vector[2:40]) == 1  # its numbers appear once in the whole script
    executes = [line for line in script.splitlines() if line.startswith("EXECUTE ")]
    assert executes == [
        f"EXECUTE memseek_{n}(current_setting('memseek.query_vector')::vector);" for n in (1, 2, 3)
    ]
    assert [line for line in script.splitlines() if line.startswith("DEALLOCATE")] == [
        f"DEALLOCATE memseek_{n};" for n in (1, 2, 3)
    ]


def test_the_whole_script_runs_in_psql(
    events: None, database_url: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: Any
) -> None:
    body = {"q": "budget", "mode": "hybrid", "k": 10, "scope": EVENTS}
    script = explain(monkeypatch, database_url, tmp_path, capsys, request_file(tmp_path, body), "--analyze")
    assert "-- EXPLAIN (ANALYZE, BUFFERS)" in script and "Execution Time" in script
    url = make_url(database_url).set(drivername="postgresql").render_as_string(hide_password=False)
    result = subprocess.run(
        [psql_binary(), "--dbname", url, "-v", "ON_ERROR_STOP=1", "-f", "-"],
        input=script,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.rstrip().endswith("ROLLBACK")


NOW = re.compile(r"'\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d+\+00:00'")
"""The request's own `now` (ages are measured from it): the one value two explains differ in."""


def same(sql: str, printed: str) -> bool:
    """Whether the route's text is what the command printed, but for the moment each ran at."""
    assert NOW.search(sql), "the statement carries its request's now"
    return NOW.sub("NOW", sql) == NOW.sub("NOW", printed.rstrip("\n"))


def test_the_explain_routes_return_the_commands_text(
    events: None,
    client: Client,
    database_url: str,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    capsys: Any,
) -> None:
    body = {"q": "budget", "mode": "hybrid", "scope": EVENTS}
    printed = explain(monkeypatch, database_url, tmp_path, capsys, request_file(tmp_path, body))
    assert set(ok(client.post("/search/explain", json=body))) == {"sql"}
    assert same(ok(client.post("/search/explain", json=body))["sql"], printed)
    parameters = {"entity": "c1", "task": "budget"}
    printed = explain(
        monkeypatch,
        database_url,
        tmp_path,
        capsys,
        request_file(tmp_path, parameters),
        "--view",
        "customer_context",
    )
    assert same(ok(client.post("/views/customer_context/explain", json=parameters))["sql"], printed)
    assert "/* memseek view customer_context v1 */" in printed


def test_the_explain_routes_check_the_request_as_a_call_does(client: Client, db: Engine) -> None:
    response = client.post("/search/explain", json={"q": "x"})
    assert response.status_code == 422 and response.get_json()["error"]["details"][0]["loc"] == ["mode"]
    response = client.post("/views/customer_context/explain", json={"entity": "c1"})
    assert response.status_code == 422
    assert client.post("/views/nope/explain", json={}).status_code == 404
