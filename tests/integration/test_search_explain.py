"""`memseek explain`: the exact SQL of a search, values inlined, and EXPLAIN ANALYZE on request."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy.engine import Engine

from memseek.cli import main
from tests.conftest import Tenant
from tests.helpers import run_script
from tests.helpers import script_statements
from tests.integration.searchdata import Rec
from tests.integration.searchdata import insert

BODY = {"q": "budget's review", "mode": "text", "scope": {"collections": ["memories"], "entities": ["e1"]}}


@pytest.fixture
def env(monkeypatch: pytest.MonkeyPatch, database_url: str) -> None:
    monkeypatch.setenv("DATABASE_URL", database_url)


def explained(db: Engine, tenant: Tenant, tmp_path: Path, capsys: Any, body: dict[str, Any]) -> list[str]:
    """`memseek explain` output lines for `body`, over one stored record."""
    with db.begin() as conn:
        insert(conn, tenant.id, Rec(text="budget review", collection="memories"))
    request = tmp_path / "search.json"
    request.write_text(json.dumps(body))
    assert main(["explain", str(request), "--workspace", "tenant-a"]) == 0
    return capsys.readouterr().out.splitlines()


def test_explain_prints_runnable_sql(
    env: None, db: Engine, tenant: Tenant, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    lines = explained(db, tenant, tmp_path, capsys, BODY)
    assert lines[:4] == [
        "BEGIN;",
        "SET LOCAL role = 'memseek_scoped';",
        f"SET LOCAL memseek.workspace_id = '{tenant.id}';",
        "-- search (single): text, profile pg_default",
    ]
    assert lines[-1] == "ROLLBACK;"
    settings = [line for line in lines[4:] if line.startswith("SET LOCAL ")]
    assert settings == ["SET LOCAL plan_cache_mode = 'force_custom_plan';", "SET LOCAL jit = 'off';"]
    sql = "\n".join(line for line in lines[4:-1] if line not in settings).strip().rstrip(";")
    assert "/* memseek POST /search */" in sql and "'budget''s review'" in sql and tenant.id.hex in sql
    with db.begin() as conn:  # the printed script runs as printed, as the workspace's role
        assert [len(rows) for rows in run_script(conn, "\n".join(lines))] == [1]


def test_explain_analyze_from_stdin(
    env: None, db: Engine, tenant: Tenant, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # a real standard input: text over bytes, which `memseek explain -` reads as bytes
    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(json.dumps(BODY).encode())))
    assert main(["explain", "--workspace", "tenant-a", "--analyze"]) == 0
    out = capsys.readouterr().out
    assert "-- EXPLAIN (ANALYZE, BUFFERS)" in out and "Execution Time" in out


def test_explain_unknown_workspace(
    env: None, db: Engine, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    request = tmp_path / "search.json"
    request.write_text(json.dumps(BODY))
    assert main(["explain", str(request), "--workspace", "nope"]) == 2
    assert "no workspace named 'nope'" in capsys.readouterr().err


def test_explain_prints_the_exact_keyword_statement_of_a_broad_scope(
    env: None, db: Engine, tenant: Tenant, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    lines = explained(db, tenant, tmp_path, capsys, {**BODY, "scope": {"collections": ["memories"]}})
    fence = lines.index("-- run instead when the statement above reports short:")
    bounded, exact = [s for s in script_statements("\n".join(lines)) if "/* memseek" in s]
    assert "text_postings" in bounded and "text_postings" not in exact
    assert exact in "\n".join(lines[fence:])
    with db.begin() as conn:  # both run as printed, and agree on this one record
        ran = [[row._mapping for row in rows] for rows in run_script(conn, "\n".join(lines))][-2:]
    assert ran[0][0]["short"] is False and "short" not in ran[1][0]
    assert [row["id"] for row in ran[0]] == [row["id"] for row in ran[1]] != [None]


def test_explain_prints_a_broad_hybrid_searchs_fallbacks_with_their_ef_search(
    env: None, db: Engine, tenant: Tenant, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """k 10 → 100 candidates: the first statement's semantic list is 50 long (ef_search 63), its
    fallbacks' 100 (125); each fallback is planned for its request's values."""
    body = {"q": "budget", "mode": "hybrid", "k": 10, "scope": {"collections": ["memories"]}}
    lines = explained(db, tenant, tmp_path, capsys, body)
    fences = [
        i for i, line in enumerate(lines) if line == "-- run instead when the statement above reports short:"
    ]
    assert len(fences) == 2
    ef = [line for line in lines if line.startswith("SET LOCAL hnsw.ef_search")]
    assert ef == [f"SET LOCAL hnsw.ef_search = '{n}';" for n in (63, 125, 125)]
    custom = "SET LOCAL plan_cache_mode = 'force_custom_plan';"
    assert all(lines[fence + 1 : fence + 3] == [custom, ef[1]] for fence in fences)
