"""Memseek on a real Citus cluster: a coordinator and two workers on localhost.

* `memseek migrate` distributes the schema by workspace, idempotently;
* the whole black-box suite and the lifecycle tests (`MODULES`) pass with the cluster's
  coordinator as the database, and every statement they make the service send is planned by
  Citus for one shard (EXPLAIN);
* row-level security holds on the workers (the settings reach them);
* a rebalance while writes and searches run loses nothing and fails nothing.
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest
import sqlalchemy as sa
from sqlalchemy.engine import Engine

from memseek import citus
from memseek import db
from memseek import driver
from memseek import migrate
from memseek.boot import build_runtime
from memseek.search.graph import graph_transaction
from memseek.settings import Settings
from tests.citus import routes
from tests.citus_cluster import Cluster
from tests.conftest import Client
from tests.conftest import client_for
from tests.conftest import make_tenant
from tests.conftest import migrated_engine
from tests.helpers import MINIMAL_CATALOG
from tests.helpers import cli_env
from tests.helpers import memseek

ROOT = Path(__file__).resolve().parents[2]
MODULES = ["tests/blackbox", "tests/lifecycle"]
"""The test directories run on the cluster: the whole black-box suite (every kind of search and
write, processing, isolation, touches) and the lifecycle (erasure, forget, retention, listing,
export and import); each runs on plain PostgreSQL in the ordinary run too, from the same commit."""
PLAIN_ONLY = ["tests/lifecycle/test_list_records.py::test_an_entitys_listing_reads_an_index_of_it"]
"""Left out on the cluster: which index PostgreSQL picks among near-equal ones depends on the
table's pages, and on Citus the earlier modules' rows are deleted from the shared shards, not
truncated; the listing's statements themselves run (and are checked) in the other tests."""
ACROSS = {"worker due"}
"""The statements that read across workspaces on purpose: the background jobs' look-ups of whose
work is due (`citus.claim_in_one_workspace`, the retention sweep's expired workspaces)."""


@pytest.fixture(scope="module")
def blackbox(cluster: Cluster, tmp_path_factory: pytest.TempPathFactory) -> tuple[int, str, Path]:
    """`MODULES` run by pytest on the cluster: exit status, output, routes file."""
    folder = tmp_path_factory.mktemp("blackbox-on-citus")
    report = folder / "routes.jsonl"
    env = {**os.environ, "MEMSEEK_TEST_CITUS": str(cluster.save()), routes.REPORT: str(report)}
    plugins = ["-p", "tests.citus.routes", "-p", "no:cacheprovider"]
    left_out = [f"--deselect={test}" for test in PLAIN_ONLY]
    command = [sys.executable, "-m", "pytest", *MODULES, *left_out, "-q", *plugins]
    done = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True)
    return done.returncode, done.stdout[-6000:] + done.stderr[-2000:], report


def test_blackbox_suite_passes_on_citus(blackbox: tuple[int, str, Path]) -> None:
    status, output, _ = blackbox
    assert status == 0, output


def test_every_statement_is_planned_for_one_shard(blackbox: tuple[int, str, Path]) -> None:
    sent = routes.read(str(blackbox[2]))
    explained = [route for route in sent if route.error is None and route.service]
    assert len(explained) > 100
    fanned = [route for route in explained if not route.single_shard and route.label not in ACROSS]
    assert not fanned, "\n\n".join(f"{r.label} {r.tasks} {r.sql[:600]}" for r in fanned)


@pytest.mark.parametrize(
    "label",
    [
        "POST /search",
        "POST /records",
        "worker claim",
        "GET /records/{id}",
        "touch-on-read",
        "GET /records",
        "DELETE /records/{id}",
        "DELETE /entities/{entity}",
    ],
)
def test_each_kind_of_statement_was_explained(blackbox: tuple[int, str, Path], label: str) -> None:
    explained = [route for route in routes.read(str(blackbox[2])) if route.error is None]
    assert any(route.label == label and route.single_shard for route in explained)


# --- the distributed schema -----------------------------------------------------------------------


@pytest.fixture(scope="module")
def layout(cluster: Cluster) -> Iterator[tuple[Engine, list[str], list[str]]]:
    """A database migrated twice: the engine, what each `memseek migrate` distributed."""
    engine = db.create_db_engine(Settings(database_url=cluster.create_database("memseek_layout")))
    first, second = migrate.upgrade(engine), migrate.upgrade(engine)
    yield engine, first, second
    engine.dispose()


def test_memseek_migrate_says_what_it_distributed_once(cluster: Cluster) -> None:
    env = cli_env(DATABASE_URL=cluster.create_database("memseek_cli"))
    first, again = memseek(env, "migrate"), memseek(env, "migrate")
    assert first.returncode == 0, first.stderr
    assert "distributed table records on workspace_id" in first.stdout.splitlines()
    assert again.stdout.splitlines() == ["upgraded to head"]


def test_migrate_distributes_once(layout: tuple[Engine, list[str], list[str]]) -> None:
    _, first, second = layout
    assert "distributed table records on workspace_id" in first
    assert [line for line in first if line.startswith("reference")] == [
        f"reference table {name}" for name in citus.REFERENCE_TABLES
    ]
    assert second == []


Layout = tuple[Engine, list[str], list[str]]


def test_every_workspace_table_is_co_located_with_records(layout: Layout) -> None:
    engine, _, _ = layout
    query = sa.text(
        "SELECT table_name::text, citus_table_type, distribution_column, colocation_id FROM citus_tables"
    )
    with engine.connect() as conn:
        tables = {row[0]: row[1:] for row in conn.execute(query)}
        workspace = citus.workspace_tables(conn)
    expected = {
        "records",
        "record_postings",
        "record_touches",
        "processing_queue",
        "erasures",
        "text_corpus",
        "text_lexemes",
    }
    assert expected <= set(workspace)
    anchor = tables["records"][2]
    assert {name: tables[name] for name in workspace} == {
        name: ("distributed", "workspace_id", anchor) for name in workspace
    }
    assert {name: tables[name][0] for name in citus.REFERENCE_TABLES} == dict.fromkeys(
        citus.REFERENCE_TABLES, "reference"
    )


def test_every_unique_index_of_a_workspace_table_holds_workspace_id(
    layout: tuple[Engine, list[str], list[str]],
) -> None:
    engine, _, _ = layout
    query = sa.text(
        "SELECT i.indexrelid::regclass::text FROM pg_index i "
        "WHERE i.indisunique AND i.indrelid::regclass::text = ANY (:tables) AND NOT EXISTS ("
        "SELECT FROM pg_attribute a WHERE a.attrelid = i.indrelid AND a.attname = 'workspace_id' "
        "AND a.attnum = ANY (i.indkey))"
    )
    with engine.connect() as conn:
        assert conn.execute(query, {"tables": citus.workspace_tables(conn)}).scalars().all() == []


def test_the_scoped_role_logs_in_on_every_node(cluster: Cluster, layout: Any) -> None:
    for node in cluster.nodes:
        with node.connect("memseek_layout") as conn:
            row = conn.execute("SELECT rolcanlogin FROM pg_roles WHERE rolname = %s", (citus.SCOPED_ROLE,))
            assert row.fetchone() == (True,)


@pytest.mark.parametrize(("citus_on", "readers"), [(True, 1), (False, 4)], ids=["citus", "plain"])
def test_a_combined_searchs_sources_share_a_snapshot_in_parallel_only_on_one_node(
    layout: Layout, engine: Engine, citus_on: bool, readers: int
) -> None:
    """A snapshot exported on the coordinator does not reach the workers: on Citus the sources
    run one after another in one transaction, on plain PostgreSQL up to the configured number."""
    assert citus.snapshot_readers(layout[0] if citus_on else engine, 4) == readers


# --- isolation on the workers ---------------------------------------------------------------------


def test_row_level_security_holds_on_the_workers(layout: tuple[Engine, list[str], list[str]]) -> None:
    """A statement without its workspace predicate, in workspace A's transaction, sees none of
    B's rows: the policies run on the shards, with the workspace setting sent there."""
    engine, _, _ = layout
    a, b = make_tenant(engine, "rls-a"), make_tenant(engine, "rls-b")
    with engine.begin() as conn:
        conn.execute(sa.text("INSERT INTO record_touches VALUES (:a, gen_random_uuid(), now())"), {"a": a.id})
        conn.execute(sa.text("INSERT INTO record_touches VALUES (:b, gen_random_uuid(), now())"), {"b": b.id})
    with db.workspace_transaction(engine, a.id) as conn:
        seen = conn.execute(sa.text("SELECT workspace_id FROM record_touches")).scalars().all()
        assert conn.execute(sa.text("SELECT current_user")).scalar_one() == citus.SCOPED_ROLE
    assert seen == [a.id]


# --- graph reads -----------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def written(cluster: Cluster) -> Iterator[tuple[Engine, list[Client]]]:
    """A database with a note written in each of two workspaces: the engine and their clients."""
    url = cluster.create_database("memseek_graph_reads")
    settings = Settings(
        database_url=url, memseek_catalog=MINIMAL_CATALOG, run_worker=False, touch_on_read=False
    )
    with migrated_engine(settings) as engine:
        runtime = build_runtime(settings, engine=engine)
        clients = [client_for(runtime, make_tenant(engine, f"graph-{i}")) for i in range(2)]
        for client in clients:
            note = {"collection": "plain", "entity": "e", "type": "note", "text": "a note"}
            assert client.post("/records", json={"records": [note]}).status_code == 201
        yield engine, clients
        runtime.close()


WORKER_USER = sa.text("SELECT current_user, count(*) FROM records WHERE workspace_id = :ws")
"""Routed to the workspace's worker whole: its `current_user` is the worker's."""


def test_graph_reads_reach_the_worker_as_the_owner_other_requests_as_the_scoped_role(
    written: tuple[Engine, list[Client]],
) -> None:
    engine, (client, _) = written
    ws = client.tenant.id
    with db.workspace_transaction(engine, ws) as conn:
        scoped = conn.execute(WORKER_USER, {"ws": ws}).one()
    with graph_transaction(engine, ws) as conn:
        owner = conn.execute(WORKER_USER, {"ws": ws}).one()
    assert scoped == (citus.SCOPED_ROLE, 1)
    assert owner == (engine.url.username, 1)


def test_graph_records_confine_a_graph_read_to_its_workspace(written: tuple[Engine, list[Client]]) -> None:
    """Without row-level security on the worker, the view's own filter (the workspace setting,
    sent along) still hides the other workspace's rows from a statement that names none."""
    engine, clients = written
    for client in clients:
        with graph_transaction(engine, client.tenant.id) as conn:
            seen = conn.execute(sa.text("SELECT workspace_id FROM graph_records")).scalars().all()
        assert seen == [client.tenant.id]


ONE = sa.select(sa.literal(1).label("one"))


def test_settings_sent_with_a_statement_raise_no_warning(written: tuple[Engine, list[Client]]) -> None:
    engine, (client, _) = written
    notices: list[psycopg.errors.Diagnostic] = []
    with db.scoped_connection(engine) as conn:
        raw = driver.psycopg_connection(conn)
        raw.add_notice_handler(notices.append)
        try:
            rows = db.run_statement(conn, ONE, workspace_id=client.tenant.id)
        finally:
            raw.remove_notice_handler(notices.append)
    assert rows == [{"one": 1}]
    assert notices == []


# --- a rebalance under load -----------------------------------------------------------------------

WRITERS = 4
BATCH = 5
SEARCH = {"q": "rebalance", "mode": "text", "scope": {"collections": ["plain"]}}


def _load(client: Client, stop: threading.Event, written: Counter[str], failures: list[str]) -> None:
    """Write batches and search them until `stop`, counting what was written, noting failures."""
    n = 0
    while not stop.is_set():
        batch = [
            {"collection": "plain", "entity": "e", "type": "note", "text": f"rebalance note {n} {i}"}
            for i in range(BATCH)
        ]
        response = client.post("/records", json={"records": batch})
        if response.status_code != 201:
            failures.append(f"write {response.status_code} {response.get_data(as_text=True)[:300]}")
            continue
        written[str(client.tenant.id)] += BATCH
        found = client.post("/search", json=SEARCH)
        if found.status_code != 200:
            failures.append(f"search {found.status_code} {found.get_data(as_text=True)[:300]}")
        n += 1


def _placements(engine: Engine) -> Counter[int]:
    query = "SELECT nodeport FROM citus_shards WHERE table_name = 'records'::regclass"
    with engine.connect() as conn:
        return Counter(conn.execute(sa.text(query)).scalars())


def test_rebalance_while_writing_and_searching_loses_nothing(cluster: Cluster) -> None:
    url = cluster.create_database("memseek_rebalance", spread=False)
    settings = Settings(
        database_url=url, memseek_catalog=MINIMAL_CATALOG, run_worker=False, touch_on_read=False
    )
    with migrated_engine(settings) as engine:
        runtime = build_runtime(settings, engine=engine)
        clients = [client_for(runtime, make_tenant(engine, f"rebalance-{i}")) for i in range(WRITERS)]
        assert set(_placements(engine)) == {cluster.workers[0].port}
        stop, written, failures = threading.Event(), Counter[str](), list[str]()
        threads = [threading.Thread(target=_load, args=(c, stop, written, failures)) for c in clients]
        for thread in threads:
            thread.start()
        _rebalance(engine, cluster)
        time.sleep(1)  # writes and searches after the last move too
        stop.set()
        for thread in threads:
            thread.join()
        runtime.close()
        assert failures == []
        assert set(_placements(engine)) == {worker.port for worker in cluster.workers}
        assert _stored(engine) == written


def _rebalance(engine: Engine, cluster: Cluster) -> None:
    worker = cluster.workers[1]
    with engine.connect().execution_options(isolation_level="AUTOCOMMIT") as conn:
        conn.execute(
            sa.text("SELECT citus_set_node_property(:h, :p, 'shouldhaveshards', true)"),
            {"h": "127.0.0.1", "p": worker.port},
        )
        conn.execute(sa.text("SELECT citus_rebalance_start()"))
        conn.execute(sa.text("SELECT citus_rebalance_wait()"))


def _stored(engine: Engine) -> Counter[str]:
    with engine.connect() as conn:
        rows = conn.execute(sa.text("SELECT workspace_id::text, count(*) FROM records GROUP BY 1"))
        return Counter({workspace: count for workspace, count in rows})
