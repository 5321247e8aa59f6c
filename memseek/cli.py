"""The `memseek` command: serve, migrate, workspaces and keys, catalog checks.

Every command reads the same environment as the service (`DATABASE_URL`, `MEMSEEK_HOME`,
`MEMSEEK_CATALOG`, ...). A command that creates a key prints it alone on the last line of
standard output, so scripts can capture it with `tail -n 1`.
"""

from __future__ import annotations

import argparse
import io
import logging
import os
import sys
import threading
import time
from collections.abc import Sequence
from contextlib import closing
from pathlib import Path
from typing import TYPE_CHECKING
from typing import BinaryIO
from uuid import UUID

from memseek import auth
from memseek import migrate
from memseek.db import check_reachable
from memseek.db import create_db_engine
from memseek.errors import ConfigError
from memseek.errors import MemseekError
from memseek.errors import NotFound
from memseek.errors import StartupError
from memseek.errors import Unauthorized
from memseek.settings import Settings

if TYPE_CHECKING:  # the commands that build a runtime import what they run (start-up stays quick)
    from memseek.runtime import Runtime
    from memseek.write.bulk import Imported
    from memseek.write.worker import BackgroundWorker

log = logging.getLogger(__name__)


def _engine(settings: Settings):  # type: ignore[no-untyped-def]
    engine = create_db_engine(settings)
    check_reachable(engine)
    return engine


def cmd_serve(args: argparse.Namespace, settings: Settings) -> int:
    from memseek.app import create_app
    from memseek.boot import build_runtime
    from memseek.serve import make_server

    with closing(build_runtime(settings)) as runtime:
        _default_workspace(runtime)
        app = create_app(shared=runtime, threads=args.threads)
        # requests are served meanwhile; a load failure is the first embedding's to report
        threading.Thread(target=_load_models, args=(runtime,), name="memseek-model-load", daemon=True).start()
        worker = _in_process_worker(runtime) if settings.run_worker and not args.no_worker else None
        server = make_server(app, args.host, args.port, args.threads)
        print(f"Memseek listening on http://{args.host}:{server.effective_port}", file=sys.stderr, flush=True)
        server.run()
        if worker is not None:  # its threads use the engine the runtime closes next
            worker.stop()
    return 0


def _default_workspace(runtime: Runtime) -> None:
    """Create the workspace `default` on first start, and print its key once."""
    with runtime.engine.begin() as conn:
        if auth.workspace_id(conn, "default") is None:
            _, key = auth.create_workspace(conn, "default")
            print("Created workspace 'default'. Its API key (shown once):", flush=True)
            print(key, flush=True)


def _in_process_worker(runtime: Runtime) -> BackgroundWorker:
    from memseek.write.worker import start_background_worker

    return start_background_worker(runtime)


def _load_models(runtime: Runtime) -> None:
    try:
        runtime.models.load_local()
    except Exception:
        log.warning("loading the local model at start failed; it is loaded on first use", exc_info=True)


def cmd_worker(args: argparse.Namespace, settings: Settings) -> int:
    from memseek.boot import build_runtime
    from memseek.write.worker import RetryPolicy
    from memseek.write.worker import run_worker

    policy = RetryPolicy(max_attempts=args.max_attempts)
    with closing(build_runtime(settings)) as runtime:
        processed = run_worker(runtime, batch=args.batch, once=args.once, policy=policy)
    if args.once:
        print(f"processed {processed} records")
    return 0


def cmd_migrate(args: argparse.Namespace, settings: Settings) -> int:
    engine = _engine(settings)
    if args.downgrade:
        migrate.downgrade(engine, args.downgrade)
        print(f"downgraded to {args.downgrade}")
    else:
        migrate.upgrade(engine, args.revision)
        print(f"upgraded to {args.revision}")
    return 0


def cmd_workspace_create(args: argparse.Namespace, settings: Settings) -> int:
    engine = _engine(settings)
    migrate.upgrade(engine)
    with engine.begin() as conn:
        workspace, key = auth.create_workspace(conn, args.name)
    print(f"workspace {args.name} ({workspace}) created; its key:")
    print(key)
    return 0


def cmd_key_create(args: argparse.Namespace, settings: Settings) -> int:
    with _engine(settings).begin() as conn:
        key = auth.create_key(conn, args.workspace)
    print(f"new key for workspace {args.workspace}:")
    print(key)
    return 0


def cmd_key_revoke(args: argparse.Namespace, settings: Settings) -> int:
    with _engine(settings).begin() as conn:
        auth.revoke_key(conn, args.prefix)
    print(f"revoked key {args.prefix[: auth.PREFIX_CHARS]}…")
    return 0


def _workspace_named(runtime: Runtime, name: str) -> UUID:
    """The id of the workspace `name`; NotFound when there is none."""
    with runtime.engine.connect() as conn:
        workspace = auth.workspace_id(conn, name)
    if workspace is None:
        raise NotFound(f"no workspace named {name!r}")
    return workspace


def cmd_mcp(args: argparse.Namespace, settings: Settings) -> int:
    from memseek.api.mcp import serve_stdio
    from memseek.boot import build_runtime

    key = os.environ.get("MEMSEEK_API_KEY", "").strip()
    if not key:
        raise ConfigError("set MEMSEEK_API_KEY to the workspace key the MCP server runs as")
    with closing(build_runtime(settings)) as runtime:
        with runtime.engine.connect() as conn:
            try:
                workspace = auth.authenticate(conn, f"Bearer {key}")
            except Unauthorized:
                raise ConfigError("MEMSEEK_API_KEY is not a live key of any workspace") from None
        # as under `memseek serve`: what the agent's write tools store becomes readable with no
        # other process running (RUN_WORKER=false leaves processing to `memseek worker`)
        worker = _in_process_worker(runtime) if settings.run_worker else None
        try:
            serve_stdio(runtime, workspace)
        finally:
            if worker is not None:  # its threads use the engine the runtime closes next
                worker.stop()
    return 0


def _import_source(name: str) -> BinaryIO:
    """The file to import, open for both passes (standard input is read once, into memory)."""
    if name == "-":
        return io.BytesIO(sys.stdin.buffer.read())
    try:
        return Path(name).open("rb")  # noqa: SIM115 -- the caller's `with` closes it
    except OSError as exc:
        raise ConfigError(f"cannot read {name}: {exc.strerror}") from None


def cmd_import(args: argparse.Namespace, settings: Settings) -> int:
    from memseek.boot import build_runtime
    from memseek.write import bulk
    from memseek.write.models import MAX_RECORDS

    jobs = bulk.DEFAULT_JOBS if args.jobs is None else args.jobs
    batch = MAX_RECORDS if args.batch is None else args.batch
    if not 1 <= jobs <= bulk.MAX_JOBS:
        raise ConfigError(f"--jobs must be from 1 to {bulk.MAX_JOBS}")
    if not 1 <= batch <= MAX_RECORDS:
        raise ConfigError(f"--batch must be from 1 to {MAX_RECORDS}")
    with closing(build_runtime(settings)) as runtime:
        done = _import_file(runtime, args, jobs, batch)
    print(
        f"imported {done.records} records in {done.seconds:.1f} s ({done.per_second:.0f} records/s); "
        f"{done.pending} pending processing"
    )
    return 0


def _import_file(runtime: Runtime, args: argparse.Namespace, jobs: int, batch: int) -> Imported:
    """Check the whole file, then write it (nothing is written from a file with a bad line)."""
    from memseek.write import bulk

    workspace = _workspace_named(runtime, args.workspace)
    with _import_source(args.file) as source:
        started = time.perf_counter()
        records = bulk.check_file(runtime, source, batch)
        print(f"{records} records checked in {time.perf_counter() - started:.1f} s", flush=True)
        source.seek(0)
        return bulk.write_file(runtime, workspace, source, jobs=jobs, batch=batch)


def cmd_catalog_check(args: argparse.Namespace, settings: Settings) -> int:
    from memseek.catalog.load import load_catalog
    from memseek.search.view_checks import VIEW_CHECKS

    catalog = load_catalog(Path(args.dir), package=settings.memseek_package, view_checks=VIEW_CHECKS)
    print(f"catalog {args.dir} is valid ({catalog.hash})")
    return 0


def cmd_explain(args: argparse.Namespace, settings: Settings) -> int:
    import json

    from memseek.boot import build_runtime
    from memseek.search.request import parse_search
    from memseek.search.service import explain_search
    from memseek.search.views import explain_view

    raw = sys.stdin.read() if args.file == "-" else Path(args.file).read_text(encoding="utf-8")
    try:
        body = json.loads(raw)
    except ValueError as exc:
        raise ConfigError(f"the input is not valid JSON: {exc}") from None
    with closing(build_runtime(settings)) as runtime:
        workspace = _workspace_named(runtime, args.workspace)
        if args.view is not None:
            print(explain_view(runtime, workspace, args.view, body, analyze=args.analyze))
        else:
            spec = parse_search(body, max_query_chars=settings.max_query_chars)
            print(explain_search(runtime, workspace, spec, analyze=args.analyze))
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="memseek", description=__doc__.splitlines()[0])
    parser.add_argument("-v", "--verbose", action="store_true", help="log debug output")
    sub = parser.add_subparsers(dest="command", required=True)

    serve = sub.add_parser("serve", help="run the HTTP service (and one in-process worker)")
    serve.add_argument("--host", default="127.0.0.1")
    serve.add_argument("--port", type=int, default=8000)
    serve.add_argument(
        "--threads", "--workers", type=int, default=8, help="request-handling threads of the WSGI server"
    )
    serve.add_argument("--no-worker", action="store_true", help="do not process records in-process")
    serve.set_defaults(handler=cmd_serve)

    worker = sub.add_parser("worker", help="process pending records (embeddings, enrichments)")
    worker.add_argument(
        "--batch", type=int, help="records claimed per transaction (default: as the in-process worker)"
    )
    worker.add_argument("--once", action="store_true", help="exit when nothing is due instead of waiting")
    worker.add_argument("--max-attempts", type=int, default=5, help="tries before a record is failed")
    worker.set_defaults(handler=cmd_worker)

    mig = sub.add_parser("migrate", help="upgrade (or downgrade) the database schema")
    mig.add_argument("--revision", default="head")
    mig.add_argument("--downgrade", metavar="REVISION", help="downgrade to REVISION (e.g. base)")
    mig.set_defaults(handler=cmd_migrate)

    ws = sub.add_parser("workspace", help="manage workspaces").add_subparsers(dest="action", required=True)
    ws_create = ws.add_parser("create", help="create a workspace and print its first key")
    ws_create.add_argument("name")
    ws_create.set_defaults(handler=cmd_workspace_create)

    key = sub.add_parser("key", help="manage API keys").add_subparsers(dest="action", required=True)
    key_create = key.add_parser("create", help="create a key for WORKSPACE and print it")
    key_create.add_argument("workspace")
    key_create.set_defaults(handler=cmd_key_create)
    key_revoke = key.add_parser("revoke", help="revoke the key starting with PREFIX")
    key_revoke.add_argument("prefix")
    key_revoke.set_defaults(handler=cmd_key_revoke)

    mcp = sub.add_parser(
        "mcp",
        help="serve the agent tools over MCP on stdio (key from MEMSEEK_API_KEY; one in-process worker)",
    )
    mcp.set_defaults(handler=cmd_mcp)

    imp = sub.add_parser(
        "import", help="write records from a JSON Lines file (one POST /records record per line), in parallel"
    )
    imp.add_argument("file", help="the JSON Lines file, or - for standard input")
    imp.add_argument("--workspace", default="default", help="workspace the records are written to")
    imp.add_argument("--jobs", type=int, help="parallel writers, an entity's records all in one (default 2)")
    imp.add_argument("--batch", type=int, help="records per transaction (default and most: 1,000)")
    imp.set_defaults(handler=cmd_import)

    cat = sub.add_parser("catalog", help="catalog tools").add_subparsers(dest="action", required=True)
    check = cat.add_parser("check", help="validate a catalog directory without a database")
    check.add_argument("dir")
    check.set_defaults(handler=cmd_catalog_check)

    explain = sub.add_parser("explain", help="print the SQL a search or view call runs (values inlined)")
    explain.add_argument(
        "file",
        nargs="?",
        default="-",
        help="JSON search request, or the view's parameters with --view (default: stdin)",
    )
    explain.add_argument("--view", metavar="NAME", help="explain a call of the active view NAME (any kind)")
    explain.add_argument("--workspace", default="default", help="workspace the search runs in")
    explain.add_argument("--analyze", action="store_true", help="also run EXPLAIN (ANALYZE, BUFFERS)")
    explain.set_defaults(handler=cmd_explain)

    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    logging.basicConfig(
        level=logging.DEBUG if args.verbose else logging.INFO,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )
    logging.getLogger("alembic").setLevel(logging.DEBUG if args.verbose else logging.WARNING)
    try:
        settings = Settings.from_env()
        return int(args.handler(args, settings))
    except (StartupError, ConfigError, MemseekError) as exc:
        print(f"memseek: error: {exc}", file=sys.stderr)
        for detail in getattr(exc, "details", ()):
            print(f"  {'.'.join(str(part) for part in detail.loc)}: {detail.msg}", file=sys.stderr)
        return 2
