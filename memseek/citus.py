"""Memseek on a Citus cluster: the distributed schema, and session state in a form workers receive.

Every statement of Memseek belongs to one workspace, so the workspace is the distribution key:
each table with a `workspace_id` column is distributed on it, all co-located with `records` (a
workspace's rows of every table sit on one node, so a statement joining them runs there whole),
and the tables read before a workspace is known, or shared by all workspaces, are reference
tables copied to every node. A statement that names `workspace_id = :ws` on each distributed
table it reads is then routed by Citus to the one shard holding that workspace (docs/scaling.md).

Nothing here runs on plain PostgreSQL: `enabled` is false there, the migrations and the executor
behave exactly as before.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from collections.abc import Mapping
from typing import Any
from weakref import WeakKeyDictionary

import sqlalchemy as sa
from sqlalchemy.engine import Connection
from sqlalchemy.engine import Engine

from memseek.paths import resource

DISTRIBUTION_COLUMN = "workspace_id"
ANCHOR = "records"
"""The distributed table every other one is co-located with."""
REFERENCE_TABLES = ("workspaces", "api_keys", "definitions")
"""Copied to every node, in this order (a reference table's foreign keys need their targets
first): workspaces and catalog definitions are shared by all workspaces, and a key is looked up by
its digest before its workspace is known, so `api_keys` is one although it has a `workspace_id`."""
SCOPED_ROLE = "memseek_scoped"
TRIGGERS = "citus_postings.sql"
"""The postings triggers' bodies as Citus can run them on a shard (the script says why)."""
PROPAGATE = "SELECT set_config('citus.propagate_set_commands', 'local', true)"
"""Citus sends a transaction's `SET LOCAL` settings to the workers it opens connections to in
that transaction only with this setting; `set_config()` settings never reach them. It is itself
set by `set_config()`: sent first in a pipeline (`db.run_statement`), a statement runs before
PostgreSQL opens the pipeline's implicit transaction block, and a `SET LOCAL` there is logged as
a warning ("SET LOCAL can only be used in transaction blocks") on every search."""
UNDISTRIBUTABLE = {("plan_cache_mode", "force_generic_plan"): "auto"}
"""Planner settings Citus cannot honour, and what is sent instead: Citus cannot build a
distributed generic plan for a statement with CTEs ("could not create distributed plan"), while
under `auto` it keeps custom plans where no generic one can be distributed."""
OWNER_RIGHTS = {"role": "none"}
"""The role setting graph reads run with on Citus (`graph_settings`): none switched to, so the
statement runs as the login role, the tables' owner. On one node a graph read looks links up
through the `graph_records` view, whose owner's rights let the graph expression indexes serve
`fields ->> 'end' = node` (row-level security evaluates a statement's non-leakproof conditions
only after its own, so not as index conditions; migration 0007). Citus expands the view on the
coordinator and sends the worker a statement over the shard itself, where the transaction's
role meets row-level security again and every step of a walk reads all of a workspace's links.
The view's own workspace filter and every statement's `workspace_id = :ws` still confine the
read to the request's workspace."""
_NAME = re.compile(r"[a-z_][a-z0-9_]*(\.[a-z_][a-z0-9_]*)?")
_ENABLED: WeakKeyDictionary[Engine, bool] = WeakKeyDictionary()


def present(conn: Connection) -> bool:
    """Whether the database `conn` is connected to has the `citus` extension."""
    query = sa.text("SELECT EXISTS (SELECT FROM pg_extension WHERE extname = 'citus')")
    return bool(conn.execute(query).scalar_one())


def enabled(conn: Connection) -> bool:
    """`present`, asked once per engine: an operator creates the extension before `memseek
    migrate`, never while the service runs."""
    engine = conn.engine
    if engine not in _ENABLED:
        _ENABLED[engine] = present(conn)
    return _ENABLED[engine]


def enabled_on(engine: Engine) -> bool:
    """`enabled` for an engine, connecting once if it was not asked yet."""
    if engine not in _ENABLED:
        with engine.connect() as conn:
            return enabled(conn)
    return _ENABLED[engine]


def graph_settings(engine: Engine) -> dict[str, str]:
    """The settings a graph read's workspace transaction adds: `OWNER_RIGHTS` on Citus, none on
    plain PostgreSQL, where the `graph_records` view gives the owner's rights already."""
    return dict(OWNER_RIGHTS) if enabled_on(engine) else {}


def snapshot_readers(engine: Engine, wanted: int) -> int:
    """How many transactions may read one exported snapshot at once: `wanted` on plain
    PostgreSQL, one on Citus. A snapshot exported on the coordinator never reaches the workers:
    each transaction reads its shard in a worker transaction of its own, whose snapshot that
    worker takes when the transaction first reaches it, so parallel readers would read different
    moments. One transaction reaches the shard over one connection, in one REPEATABLE READ
    snapshot, so its statements read one moment there."""
    return 1 if enabled_on(engine) else wanted


def set_local_statements(settings: Mapping[str, str]) -> list[str]:
    """`settings` (name → value) as `SET LOCAL` statements that reach the workers: propagation
    first (`PROPAGATE`), then each setting, with the values Citus cannot honour replaced. The
    names come from code (checked here), each value is quoted as a string literal
    (standard-conforming strings)."""
    statements = [PROPAGATE]
    for name, value in settings.items():
        if not _NAME.fullmatch(name):
            raise ValueError(f"not a setting name: {name!r}")
        value = UNDISTRIBUTABLE.get((name, value), value)
        statements.append(f"SET LOCAL {name} = '{value.replace(chr(39), chr(39) * 2)}'")
    return statements


def claim_in_one_workspace(
    conn: Connection,
    claim: sa.Select[Any],
    oldest: sa.Select[Any],
    *workspace: sa.ColumnElement[Any],
    enter: Callable[[Any], None] | None = None,
) -> sa.Select[Any] | None:
    """`claim`, a SELECT … FOR UPDATE SKIP LOCKED across workspaces (a job queue's), as it can run
    here: unchanged on plain PostgreSQL; on Citus, which locks rows only in a statement routed to
    one shard, confined to the workspace `oldest` (the same rows, unlocked, their workspace id)
    reads first, by `workspace_id = :ws` on each of the `workspace` columns. None when `oldest`
    finds none.

    `enter`, called on Citus with that workspace's id before the claim is returned, switches a
    transaction that goes on confined to it (role and row-level security) before it locks
    anything: Citus reaches a worker over one connection per role, so rows the login role's
    connection locked would block the scoped role's statements of the same transaction."""
    if not enabled(conn):
        return claim
    found = conn.execute(oldest).scalar()
    if found is None:
        return None
    if enter is not None:
        enter(found)
    return claim.where(*(column == found for column in workspace))


def returning_rows(statement: sa.Insert) -> sa.Insert:
    """`statement`, an INSERT … SELECT whose SELECT reads no distributed table (a batch from a JSON
    document, ids from an array), returning a constant per row, never read. Citus computes such
    a SELECT on the coordinator and passes its rows to the shard as an INSERT … SELECT over an
    intermediate result when the statement returns rows, but otherwise as a COPY, which
    PostgreSQL refuses into a table with row-level security. On plain PostgreSQL the rows are
    a few bytes each."""
    return statement.returning(sa.literal_column("1"))


# --- the distributed schema ----------------------------------------------------------------------


def distribute(conn: Connection) -> list[str]:
    """Make the schema distributed, idempotently: each of `REFERENCE_TABLES` a reference table,
    each other table with a `workspace_id` column distributed on it and co-located with `records`,
    the functions Memseek's statements and triggers call present on every node, and the scoped
    role able to log in (a worker is reached by a new connection as the role the transaction runs
    as). Returns what it changed, one line each. Runs after every migration (`memseek.migrate`):
    a table a new migration adds is distributed by the next `memseek migrate`."""
    for_migration(conn)
    conn.execute(sa.text("SET LOCAL citus.enable_local_reference_table_foreign_keys = off"))
    done = [*_truncate_triggers(conn), *_reference(conn), *_distributed(conn), *_functions(conn)]
    conn.execute(sa.text((resource("sql") / TRIGGERS).read_text()))
    conn.execute(sa.text(f"ALTER ROLE {SCOPED_ROLE} LOGIN"))
    return done


def for_migration(conn: Connection) -> None:
    """Settings of a transaction that changes the distributed schema (a migration, `distribute`):
    triggers allowed on distributed tables, which Citus refuses unless told they are safe
    (Memseek's, keeping postings and BM25 statistics beside each record, write only the
    co-located shards of the same workspace); and each node reached over one connection
    (`citus.multi_shard_modify_mode = sequential`), because Citus refuses to create or replace a
    function after a parallel operation in the same transaction (a table distributed with its
    rows, a migration's UPDATE). Nothing on plain PostgreSQL."""
    if present(conn):
        conn.execute(sa.text("SET LOCAL citus.enable_unsafe_triggers = on"))
        conn.execute(sa.text("SET LOCAL citus.multi_shard_modify_mode = sequential"))


def _placed(conn: Connection, kind: str) -> set[str]:
    """The tables already of `kind` ('reference' or 'distributed'; a table Citus added to its
    metadata as a local one, for a foreign key to a reference table, is neither yet)."""
    query = sa.text("SELECT table_name::text FROM citus_tables WHERE citus_table_type = :kind")
    return set(conn.execute(query, {"kind": kind}).scalars())


def _reference(conn: Connection) -> list[str]:
    placed = _placed(conn, "reference")
    todo = [name for name in REFERENCE_TABLES if name not in placed]
    for name in todo:
        conn.execute(sa.text("SELECT create_reference_table(:t)"), {"t": name})
    return [f"reference table {name}" for name in todo]


def workspace_tables(conn: Connection) -> list[str]:
    """The tables of the current schema with a `workspace_id` column, `records` first (the others'
    foreign keys point at it), then by name; reference tables excluded."""
    query = sa.text(
        "SELECT c.relname FROM pg_class c JOIN pg_attribute a ON a.attrelid = c.oid "
        "WHERE c.relnamespace = current_schema()::regnamespace AND c.relkind IN ('r', 'p') "
        "AND a.attname = :column AND NOT a.attisdropped"
    )
    names = set(conn.execute(query, {"column": DISTRIBUTION_COLUMN}).scalars()) - set(REFERENCE_TABLES)
    return sorted(names, key=lambda name: (name != ANCHOR, name))


def _distributed(conn: Connection) -> list[str]:
    placed = _placed(conn, "distributed")
    todo = [name for name in workspace_tables(conn) if name not in placed]
    for name in todo:
        _replica_identity(conn, name)
        colocate = "none" if name == ANCHOR else ANCHOR
        conn.execute(
            sa.text("SELECT create_distributed_table(:t, :c, colocate_with => :with)"),
            {"t": name, "c": DISTRIBUTION_COLUMN, "with": colocate},
        )
    return [f"distributed table {name} on {DISTRIBUTION_COLUMN}" for name in todo]


def _replica_identity(conn: Connection, table: str) -> None:
    """A table without a primary key identifies changed rows by all columns, so that moving its
    shards online (logical replication, `citus_rebalance_start`) can follow updates and deletes."""
    query = sa.text(
        "SELECT NOT EXISTS (SELECT FROM pg_index WHERE indrelid = CAST(:t AS regclass) AND indisprimary)"
    )
    if conn.execute(query, {"t": table}).scalar_one():
        conn.execute(sa.text(f'ALTER TABLE "{table}" REPLICA IDENTITY FULL'))


def _functions(conn: Connection) -> list[str]:
    """Memseek's own functions (`memseek_*`) not yet on every node, made present there."""
    query = sa.text(
        "SELECT p.oid::regprocedure::text FROM pg_proc p "
        "WHERE p.pronamespace = current_schema()::regnamespace AND p.proname LIKE 'memseek\\_%' "
        "AND NOT EXISTS (SELECT FROM pg_dist_object o "
        "WHERE o.classid = 'pg_proc'::regclass AND o.objid = p.oid)"
    )
    todo = list(conn.execute(query).scalars())
    for signature in todo:
        conn.execute(sa.text("SELECT create_distributed_function(:f)"), {"f": signature})
    return [f"function {signature} on every node" for signature in todo]


def _truncate_triggers(conn: Connection) -> list[str]:
    """Drop the triggers that fire on TRUNCATE of a table yet to be distributed: on a shard, a
    trigger truncating another distributed table is a nested distributed statement, which Citus
    refuses. Before distributing, so that no shard is created with one. Memseek never truncates;
    on Citus, a TRUNCATE names every table it empties (docs/scaling.md)."""
    query = sa.text(
        "SELECT t.tgrelid::regclass::text, t.tgname FROM pg_trigger t "
        "WHERE NOT t.tgisinternal AND t.tgtype & 32 <> 0 AND t.tgrelid::regclass::text = ANY (:tables) "
        "AND NOT EXISTS (SELECT FROM citus_tables c WHERE c.table_name = t.tgrelid::regclass "
        "AND c.citus_table_type = 'distributed')"
    )
    todo = list(conn.execute(query, {"tables": workspace_tables(conn)}))
    for table, trigger in todo:
        conn.execute(sa.text(f'DROP TRIGGER "{trigger}" ON {table}'))
    return [f"trigger {trigger} on TRUNCATE of {table} dropped" for table, trigger in todo]
