"""The `memseek` command, run as a real subprocess with the service's environment."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import make_database


@pytest.fixture(scope="module")
def cli_env(pg_server_url: str, tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    url = make_database(pg_server_url, "memseek_cli")
    home = tmp_path_factory.mktemp("home")
    return {**os.environ, "DATABASE_URL": url, "MEMSEEK_HOME": str(home)}


def memseek(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "memseek", *args], env=env, capture_output=True, text=True, timeout=120
    )


def last_line(result: subprocess.CompletedProcess[str]) -> str:
    assert result.returncode == 0, result.stderr
    return result.stdout.strip().splitlines()[-1]


def get(port: int, path: str, key: str | None = None) -> tuple[int, dict]:  # type: ignore[type-arg]
    request = urllib.request.Request(f"http://127.0.0.1:{port}{path}")
    if key:
        request.add_header("Authorization", f"Bearer {key}")
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, json.load(response)
    except urllib.error.HTTPError as exc:
        return exc.code, json.load(exc)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="module")
def server(cli_env: dict[str, str]) -> Iterator[tuple[int, str, subprocess.Popen[str]]]:
    assert memseek(cli_env, "migrate").returncode == 0
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "memseek", "serve", "--port", str(port), "--threads", "4"],
        env=cli_env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
    key = _read_key(proc)
    _wait_healthy(port, proc)
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


def _wait_healthy(port: int, proc: subprocess.Popen[str]) -> None:
    for _ in range(200):
        try:
            if get(port, "/health")[0] == 200:
                return
        except OSError:
            time.sleep(0.1)
    raise AssertionError("service never became healthy")


def test_serve_prints_default_key_and_serves(server: tuple[int, str, subprocess.Popen[str]]) -> None:
    port, key, _ = server
    assert get(port, "/health")[1]["database"] == "ok"
    assert get(port, "/openapi.json", key)[0] == 200
    status, body = get(port, "/openapi.json", "msk_wrong")
    assert status == 401 and body["error"]["code"] == "unauthorized"


Server = tuple[int, str, subprocess.Popen[str]]


def test_workspace_and_key_commands(cli_env: dict[str, str], server: Server) -> None:
    port, _, _ = server
    first = last_line(memseek(cli_env, "workspace", "create", "acme"))
    assert first.startswith("msk_")
    second = last_line(memseek(cli_env, "key", "create", "acme"))
    assert second.startswith("msk_") and second != first
    assert get(port, "/openapi.json", second)[0] == 200
    assert memseek(cli_env, "key", "revoke", second[:16]).returncode == 0
    assert get(port, "/openapi.json", second)[0] == 401
    assert get(port, "/openapi.json", first)[0] == 200


@pytest.mark.parametrize(
    "args",
    [
        pytest.param(("workspace", "create", "default"), id="duplicate-workspace"),
        pytest.param(("key", "create", "no-such-workspace"), id="unknown-workspace"),
        pytest.param(("key", "revoke", "msk_zzzzzzzz"), id="unknown-prefix"),
    ],
)
def test_admin_errors_are_one_line(cli_env: dict[str, str], server: object, args: tuple[str, ...]) -> None:
    result = memseek(cli_env, *args)
    assert result.returncode != 0
    assert result.stderr.startswith("memseek: error:")
    assert "Traceback" not in result.stderr


def test_second_start_prints_no_new_key(cli_env: dict[str, str], server: object) -> None:
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "memseek", "serve", "--port", str(port), "--no-worker"],
        env=cli_env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
    try:
        _wait_healthy(port, proc)
    finally:
        proc.terminate()
        out, _ = proc.communicate(timeout=20)
    assert "msk_" not in out


def test_unreachable_database_url(tmp_path: Path) -> None:
    env = {**os.environ, "DATABASE_URL": "postgresql://u@127.0.0.1:1/db", "MEMSEEK_HOME": str(tmp_path)}
    result = memseek(env, "migrate")
    assert result.returncode == 2
    assert "cannot reach PostgreSQL at 127.0.0.1:1/db" in result.stderr
    assert "Traceback" not in result.stderr


def test_migrate_down_and_up(cli_env: dict[str, str], pg_server_url: str) -> None:
    scratch = {**cli_env, "DATABASE_URL": make_database(pg_server_url, "memseek_cli_migrations")}
    assert last_line(memseek(scratch, "migrate")) == "upgraded to head"
    assert last_line(memseek(scratch, "migrate", "--downgrade", "base")) == "downgraded to base"
    assert last_line(memseek(scratch, "migrate")) == "upgraded to head"
