"""A large forget survives `kill -9`: a real `memseek serve` (its in-process worker erasing in
batches) is killed while a batch is in flight, and once restarted it finishes the erasure with
nothing of the entity left and nothing else touched — another entity's records and another
workspace's, counted before and after. Also `memseek forget`, the command."""

from __future__ import annotations

import signal
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa
from sqlalchemy.engine import Engine

from memseek.db import create_db_engine
from memseek.settings import Settings
from tests.conftest import make_database
from tests.helpers import cli_env
from tests.helpers import http_call
from tests.helpers import last_line
from tests.helpers import memseek
from tests.helpers import serve_on_free_port
from tests.helpers import start_memseek
from tests.lifecycle import support

BIG = 4000
BLOCKED_FROM = 1000
"""The first record (in ingestion order) the test holds locked: the worker commits the batches
before it, then waits inside the batch holding it."""


@pytest.fixture(scope="module")
def env(pg_server_url: str, tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    url = make_database(pg_server_url, "memseek_lc_crash")
    catalog = support.write_catalog(tmp_path_factory.mktemp("lc-crash-catalog"))
    home = tmp_path_factory.mktemp("home")
    return cli_env(DATABASE_URL=url, MEMSEEK_HOME=str(home), MEMSEEK_CATALOG=str(catalog))


@pytest.fixture(scope="module")
def engine(env: dict[str, str]) -> Iterator[Engine]:
    url = env["DATABASE_URL"]
    engine = create_db_engine(Settings(database_url=url), url)
    yield engine
    engine.dispose()


def serve(env: dict[str, str]) -> tuple[int, subprocess.Popen[str]]:
    return serve_on_free_port(
        lambda port: start_memseek(env, "serve", "--port", str(port), output=subprocess.DEVNULL)
    )


def post(port: int, key: str, records: list[dict[str, Any]]) -> None:
    for start in range(0, len(records), 1000):  # 1,000 a request: the COPY path
        status, body = http_call(port, "POST", "/records", key, {"records": records[start : start + 1000]})
        assert status == 201, body


HELD = (
    "SELECT 1 FROM records WHERE workspace_id = :ws AND id IN (SELECT id FROM records "
    "WHERE workspace_id = :ws AND entity = 'big' ORDER BY seq OFFSET :skip LIMIT 5) FOR UPDATE"
)
"""Locks records of the third batch (a subquery: `FOR UPDATE` beside `OFFSET` would lock the
skipped rows too), naming the workspace on both (Citus locks rows only on one shard)."""


def counts(engine: Engine) -> dict[tuple[str, str], int]:
    sql = "SELECT w.name, r.entity, count(*) AS n FROM records r JOIN workspaces w ON w.id = r.workspace_id"
    sql += " GROUP BY 1, 2"
    with engine.connect() as conn:
        return {(row.name, row.entity): row.n for row in conn.execute(sa.text(sql))}


def progress(port: int, key: str, erasure_id: str) -> dict[str, Any]:
    status, body = http_call(port, "GET", f"/erasures/{erasure_id}", key)
    assert status == 200, body
    return body  # type: ignore[no-any-return]


def test_a_forget_killed_mid_way_completes_after_a_restart(env: dict[str, str], engine: Engine) -> None:
    assert memseek(env, "migrate").returncode == 0
    mine = last_line(memseek(env, "workspace", "create", "mine"))
    theirs = last_line(memseek(env, "workspace", "create", "theirs"))
    port, proc = serve(env)
    try:
        big = [support.event("lc_expiring", "big", f"big {n}") for n in range(BIG)]
        post(port, mine, big + [support.edge("web", "web", "big"), support.edge("big", "big", "db")])
        post(port, mine, [support.event("lc_expiring", "small", f"small {n}") for n in range(50)])
        post(port, theirs, [support.event("lc_expiring", "big", f"their {n}") for n in range(50)])
        before = counts(engine)
        assert before[("mine", "big")] == BIG + 1 and before[("mine", "web")] == 1

        with engine.begin() as hold:  # a batch past the first two will wait on these rows
            ws = hold.execute(sa.text("SELECT id FROM workspaces WHERE name = 'mine'")).scalar_one()
            hold.execute(sa.text(HELD), {"ws": ws, "skip": BLOCKED_FROM})
            status, started = http_call(port, "DELETE", "/entities/big", mine, {"reason": "crash test"})
            assert status == 202, started
            erasure_id = started["erasure_id"]
            deadline = time.monotonic() + 120
            while progress(port, mine, erasure_id)["erased"] < BLOCKED_FROM and time.monotonic() < deadline:
                time.sleep(0.1)
            mid_way = progress(port, mine, erasure_id)
            assert (mid_way["state"], mid_way["erased"]) == ("running", BLOCKED_FROM)
            proc.send_signal(signal.SIGKILL)
            proc.wait(timeout=30)
            assert counts(engine)[("mine", "big")] == BIG + 1 - BLOCKED_FROM  # committed batches only
        # the hold is released: the killed worker's batch rolls back, and a new process takes over

        port, proc = serve(env)
        deadline = time.monotonic() + 180
        while progress(port, mine, erasure_id)["state"] != "done" and time.monotonic() < deadline:
            time.sleep(0.2)
        done = progress(port, mine, erasure_id)
        assert done["state"] == "done" and done["counts"] == {"lc_expiring": BIG, "lc_edges": 2}
        after = counts(engine)
        assert ("mine", "big") not in after and ("mine", "web") not in after
        assert after == {key: n for key, n in before.items() if key not in (("mine", "big"), ("mine", "web"))}
        status, listing = http_call(port, "GET", "/records?entity=big", mine)
        assert (status, listing["records"]) == (200, [])
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def test_the_forget_command_waits_and_prints_progress(
    env: dict[str, str], engine: Engine, tmp_path: Path
) -> None:
    assert memseek(env, "migrate").returncode == 0
    key = last_line(memseek(env, "workspace", "create", "cli"))
    port, proc = serve(env)
    try:
        post(port, key, [support.event("lc_expiring", "carl", f"carl {n}") for n in range(1200)])
        post(port, key, [support.event("lc_expiring", "dora", "dora")])
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    result = memseek(env, "forget", "carl", "--workspace", "cli", "--reason", "asked by carl")
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0].startswith("erasure ") and lines[0].endswith(": forgetting 'carl'")
    assert lines[1:3] == ["  500 records erased so far", "  1000 records erased so far"]
    assert lines[-1].endswith("done: 1200 records erased (lc_expiring: 1200)")
    with engine.connect() as conn:
        entry = conn.execute(
            sa.text("SELECT requested_by, reason, state FROM erasures WHERE entity = 'carl'")
        ).one()
    assert tuple(entry) == ("cli", "asked by carl", "done")
    assert ("cli", "dora") in counts(engine) and ("cli", "carl") not in counts(engine)
    missing = memseek(env, "forget", "carl", "--workspace", "cli")
    assert missing.returncode == 2 and missing.stderr.startswith(
        "memseek: error: no records about entity 'carl'"
    )
