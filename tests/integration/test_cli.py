"""The `memseek` command, run as a real subprocess with the service's environment."""

from __future__ import annotations

import json
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import sqlalchemy as sa

from memseek.db import create_db_engine
from memseek.db import describe_target
from memseek.settings import Settings
from tests.conftest import make_database
from tests.helpers import cli_env
from tests.helpers import free_port
from tests.helpers import http_call
from tests.helpers import last_line
from tests.helpers import memseek
from tests.helpers import serve_on_free_port
from tests.helpers import start_memseek
from tests.helpers import wait_healthy


@pytest.fixture(scope="module")
def env(pg_server_url: str, tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    url = make_database(pg_server_url, "memseek_cli")
    home = tmp_path_factory.mktemp("home")
    return cli_env(DATABASE_URL=url, MEMSEEK_HOME=str(home))


Server = tuple[int, str, subprocess.Popen[str]]


@pytest.fixture(scope="module")
def server(env: dict[str, str]) -> Iterator[Server]:
    assert memseek(env, "migrate").returncode == 0
    port = free_port()
    proc = start_memseek(env, "serve", "--port", str(port), "--threads", "4")
    key = _read_key(proc)
    wait_healthy(port, proc)
    yield port, key, proc
    proc.terminate()
    proc.wait(timeout=20)


def _read_key(proc: subprocess.Popen[str]) -> str:
    assert proc.stdout is not None
    deadline = time.time() + 90
    while time.time() < deadline:
        line = proc.stdout.readline()
        if line.startswith("msk_"):
            return line.strip()
        if not line and proc.poll() is not None:
            raise AssertionError(f"serve exited: {proc.stderr.read() if proc.stderr else ''}")
    raise AssertionError("serve printed no key")


def test_serve_prints_default_key_and_serves(server: Server) -> None:
    port, key, _ = server
    assert http_call(port, "GET", "/health")[1]["database"] == "ok"
    assert http_call(port, "GET", "/views", key)[0] == 200
    status, body = http_call(port, "GET", "/views", "msk_wrong")
    assert status == 401 and body["error"]["code"] == "unauthorized"


def test_workspace_and_key_commands(env: dict[str, str], server: Server) -> None:
    port, _, _ = server
    first = last_line(memseek(env, "workspace", "create", "acme"))
    assert first.startswith("msk_")
    second = last_line(memseek(env, "key", "create", "acme"))
    assert second.startswith("msk_") and second != first
    assert http_call(port, "GET", "/views", second)[0] == 200
    assert memseek(env, "key", "revoke", second[:16]).returncode == 0
    assert http_call(port, "GET", "/views", second)[0] == 401
    assert http_call(port, "GET", "/views", first)[0] == 200


@pytest.mark.parametrize(
    "args",
    [
        pytest.param(("workspace", "create", "default"), id="duplicate-workspace"),
        pytest.param(("key", "create", "no-such-workspace"), id="unknown-workspace"),
        pytest.param(("key", "revoke", "msk_zzzzzzzz"), id="unknown-prefix"),
        pytest.param(("import", "/no/such/file.jsonl"), id="import-missing-file"),
        pytest.param(("import", "-", "--workspace", "nowhere"), id="import-unknown-workspace"),
    ],
)
def test_admin_errors_are_one_line(env: dict[str, str], server: object, args: tuple[str, ...]) -> None:
    result = memseek(env, *args)
    assert result.returncode != 0
    assert result.stderr.startswith("memseek: error:")
    assert "Traceback" not in result.stderr


@pytest.mark.parametrize(
    ("args", "message"),
    [
        pytest.param(("key", "create", "default"), "no workspace named 'default'", id="key-create"),
        pytest.param(("key", "revoke", "msk_zzzzzzzz"), "no live key starts with", id="key-revoke"),
    ],
)
def test_key_commands_on_a_database_never_migrated(
    pg_server_url: str, tmp_path: Path, args: tuple[str, ...], message: str
) -> None:
    """Design §1: "Admin commands (not HTTP): `memseek workspace create NAME` (prints a key),
    `memseek key create WORKSPACE`, `memseek key revoke KEY_PREFIX`"; issue 2: a missing key or
    database state "gets a clear error … no traceback wall". On a fresh database the key
    commands find the schema as `workspace create` does, and answer in one line."""
    url = make_database(pg_server_url, f"memseek_cli_fresh_{args[1]}")
    result = memseek(cli_env(DATABASE_URL=url, MEMSEEK_HOME=str(tmp_path)), *args)
    assert result.returncode == 2
    assert result.stderr.startswith("memseek: error: ") and message in result.stderr
    assert "Traceback" not in result.stderr


@pytest.mark.parametrize(
    ("args", "named"),
    [
        pytest.param(("serve", "--port", "99999"), "--port", id="port-past-65535"),
        pytest.param(("serve", "--port", "-1"), "--port", id="negative-port"),
        pytest.param(("serve", "--threads", "0"), "--threads", id="no-threads"),
        pytest.param(("worker", "--once", "--batch", "0"), "--batch", id="empty-batch"),
        pytest.param(("worker", "--once", "--max-attempts", "0"), "--max-attempts", id="no-attempts"),
        pytest.param(("migrate", "--downgrade", "bogus"), "bogus", id="unknown-revision"),
        pytest.param(
            ("import", "-", "--jobs", "0"), "--jobs: must be from 1 to 16, got 0", id="import-no-jobs"
        ),
        pytest.param(
            ("import", "-", "--batch", "1001"),
            "--batch: must be from 1 to 1000, got 1001",
            id="import-batch-too-large",
        ),
    ],
)
def test_impossible_arguments_are_refused_before_anything_runs(
    env: dict[str, str], server: object, args: tuple[str, ...], named: str
) -> None:
    """Issue 2: "`memseek serve` takes `--host` and `--port`" and bad input "gets a clear error";
    issue 41: "never a traceback". A port outside 0–65535 (which the socket layer would wrap to
    another port), no request thread, an empty worker batch, no attempt, an unknown migration
    revision, import streams or batches outside their limits (design: at most 16 streams, 1,000
    records a batch): each is refused in the error lines, naming the argument, with status 2."""
    result = memseek(env, *args, timeout=60)
    assert result.returncode == 2, result.stdout
    assert "memseek" in result.stderr and "error:" in result.stderr and named in result.stderr
    assert "Traceback" not in result.stderr and "listening" not in result.stdout


def _event(n: int) -> str:
    record = {"collection": "customer_events", "entity": f"c{n % 3}", "type": "event", "text": f"event {n}"}
    return json.dumps(record)


def test_import_writes_a_file_in_batches(env: dict[str, str], server: object, tmp_path: Path) -> None:
    source = tmp_path / "events.jsonl"
    source.write_text("\n".join(_event(n) for n in range(7)) + "\n", encoding="utf-8")
    result = memseek(env, "import", str(source), "--jobs", "2", "--batch", "3")
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines()[0].startswith("7 records checked in ")
    assert result.stdout.splitlines()[1].startswith("imported 7 records in ")
    assert result.stdout.splitlines()[1].endswith("; 7 pending processing")  # embedded by the worker


def test_import_lists_every_problem_by_line_and_writes_nothing(env: dict[str, str], server: object) -> None:
    lines = [_event(1), '{"collection": "customer_events"', _event(2), json.dumps({"collection": "x"})]
    result = memseek(env, "import", "-", stdin="\n".join(lines))
    assert result.returncode == 2
    assert result.stderr.startswith("memseek: error: ") and "nothing was written" in result.stderr
    located = [line.split(":")[0].strip() for line in result.stderr.splitlines()[1:]]
    assert located[0] == "line.2" and len(located) > 1
    assert all(loc.startswith("line.4.") for loc in located[1:])
    assert "Traceback" not in result.stderr


def test_second_start_prints_no_new_key(env: dict[str, str], server: object) -> None:
    _, proc = serve_on_free_port(lambda port: start_memseek(env, "serve", "--port", str(port), "--no-worker"))
    proc.terminate()
    out, _ = proc.communicate(timeout=20)
    assert "msk_" not in out


def test_unreachable_database_url(tmp_path: Path) -> None:
    env = cli_env(DATABASE_URL="postgresql://u@127.0.0.1:1/db", MEMSEEK_HOME=str(tmp_path))
    result = memseek(env, "migrate")
    assert result.returncode == 2
    assert "cannot reach PostgreSQL at 127.0.0.1:1/db" in result.stderr
    assert "Traceback" not in result.stderr


PLAIN_ROLE = "memseek_plain_role"
CREATE_PLAIN_ROLE = f"""DO $$ BEGIN CREATE ROLE {PLAIN_ROLE} LOGIN NOSUPERUSER;
EXCEPTION WHEN duplicate_object THEN NULL; END $$"""


@pytest.fixture(scope="module")
def no_pgvector_url(pg_server_url: str) -> str:
    """A database whose login role is no superuser, so it may not create the pgvector extension."""
    url = make_database(pg_server_url, "memseek_cli_no_vector")
    admin = create_db_engine(Settings(database_url=url), url)
    with admin.connect().execution_options(isolation_level="AUTOCOMMIT") as conn:
        conn.execute(sa.text(CREATE_PLAIN_ROLE))
        conn.execute(sa.text(f'ALTER DATABASE "memseek_cli_no_vector" OWNER TO {PLAIN_ROLE}'))
    admin.dispose()
    return sa.engine.make_url(url).set(username=PLAIN_ROLE).render_as_string(hide_password=False)


@pytest.mark.parametrize("args", [("migrate",), ("workspace", "create", "w"), ("key", "create", "default")])
def test_a_database_without_pgvector_is_a_clear_one_line_error(
    no_pgvector_url: str, tmp_path: Path, args: tuple[str, ...]
) -> None:
    """Issue 2: with DATABASE_URL Memseek uses that server, "PostgreSQL ≥ 15 with pgvector"; one it
    cannot prepare gets a clear error naming it, not a traceback wall (and a non-zero exit)."""
    env = cli_env(DATABASE_URL=no_pgvector_url, MEMSEEK_HOME=str(tmp_path))
    result = memseek(env, *args)
    assert result.returncode == 2, result.stderr
    assert "Traceback" not in result.stderr
    (line,) = result.stderr.strip().splitlines()
    target = describe_target(no_pgvector_url)
    assert line.startswith(f"memseek: error: cannot prepare the database at {target}: "), line
    assert 'permission denied to create extension "vector"' in line, line
    assert "CREATE EXTENSION vector" in line, line  # what to do about it


def test_migrate_down_and_up(env: dict[str, str], pg_server_url: str) -> None:
    scratch = {**env, "DATABASE_URL": make_database(pg_server_url, "memseek_cli_migrations")}
    assert last_line(memseek(scratch, "migrate")) == "upgraded to head"
    assert last_line(memseek(scratch, "migrate", "--downgrade", "base")) == "downgraded to base"
    assert last_line(memseek(scratch, "migrate")) == "upgraded to head"
