"""`db.run_statement` sends exactly what `Connection.execute` would send, and reads the same rows:
the tripwire on a real database for what `memseek.driver` relies on of SQLAlchemy (the unit
half, tests/unit/test_driver.py, needs no database)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest
import sqlalchemy as sa
from sqlalchemy.engine import Engine

from memseek.db import run_statement
from memseek.db import workspace_transaction
from memseek.driver import native_placeholders
from tests.conftest import Tenant
from tests.integration.searchdata import Rec
from tests.integration.searchdata import compiled
from tests.integration.searchdata import insert
from tests.integration.searchdata import unit

RECORDS = [
    Rec(text="refund request for the outage", entity="e1", embedding=unit(1.0, 0.2), fields={"amount": 3}),
    Rec(text="budget review", entity="e2", embedding=unit(0.1, 1.0), fields={"amount": 9}),
    Rec(
        text="outage postmortem", entity="e3", type="note", embedding=unit(1.0, 1.0), scores={"importance": 7}
    ),
]


@contextmanager
def sent(engine: Engine) -> Iterator[list[tuple[str, Any]]]:
    """(statement, parameters) as the engine's listeners see each statement, after the label."""
    seen: list[tuple[str, Any]] = []

    def listen(conn: Any, cursor: Any, statement: str, parameters: Any, *args: Any) -> None:
        seen.append((statement, parameters))

    sa.event.listen(engine, "before_cursor_execute", listen)
    try:
        yield seen
    finally:
        sa.event.remove(engine, "before_cursor_execute", listen)


@pytest.mark.parametrize(
    "body",
    [
        pytest.param({"mode": "vector", "q": "x"}, id="vector"),
        pytest.param({"mode": "hybrid", "q": "refund outage"}, id="hybrid"),
        pytest.param({"mode": "text", "q": "outage"}, id="text"),
        pytest.param({"mode": "recent", "scope": {"entities": ["e1", "e3"]}}, id="recent-in-list"),
        pytest.param(
            {"mode": "structured", "where": {"amount": {"gte": 1}}, "order_by": [{"field": "amount"}]},
            id="structured",
        ),
    ],
)
def test_run_statement_sends_and_reads_what_connection_execute_would(
    db: Engine, tenant: Tenant, body: dict[str, Any]
) -> None:
    with db.begin() as conn:
        insert(conn, tenant.id, *RECORDS)
    search = compiled({**body, "k": 10}, tenant.id, vector=unit(1.0, 0.5))
    with workspace_transaction(db, tenant.id) as conn, sent(db) as seen:
        expected = [dict(row) for row in conn.execute(search.statement, search.params).mappings()]
        rows = run_statement(conn, search.statement, search.params)
    [(pyformat_sql, values), (native_sql, args)] = seen
    converted, names = native_placeholders(pyformat_sql)
    assert native_sql == converted
    assert args == [values[name] for name in names]
    assert rows == expected and any(row["id"] is not None for row in rows)
