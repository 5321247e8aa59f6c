"""The bulk source of the batch insert (COPY into the session's stage): the same stored rows as the
JSON source, escaping of awkward strings, atomicity, and every write rule of `test_records` and
`test_lanes` run again with COPY forced for every batch."""

from __future__ import annotations

import functools
import uuid
from collections.abc import Callable
from collections.abc import Iterator
from dataclasses import replace
from datetime import UTC
from datetime import datetime
from datetime import timedelta
from datetime import timezone
from typing import Any

import pytest
import sqlalchemy as sa
from sqlalchemy.engine import Engine

from memseek.db import workspace_transaction
from memseek.write import store
from memseek.write.rows import Row
from tests.conftest import Client
from tests.conftest import Tenant
from tests.conftest import make_tenant
from tests.helpers import written
from tests.integration import test_lanes
from tests.integration import test_records
from tests.integration.write_support import count
from tests.integration.write_support import record_in

LOCAL_MODEL = "all-MiniLM-L6-v2-onnx-int8"

AWKWARD = (
    "tab\there, newline\nthere, carriage\rreturn, backslash \\ and \\N and \\\\N, "
    "quotes \" ' `, commas , semicolons ; pipes |, braces {} [] (), "
    "accents é ü ß, CJK 記憶, RTL עברית, emoji 🧠 and 👩\u200d💻, combining e\u0301, "
    "zero width \u200b, BOM \ufeff, U+FFFF \uffff, max \U0010ffff"
)
"""Every character COPY's text format escapes, and UTF-8 of every length (no NUL: the write path
refuses NUL before any statement runs, tested below)."""


@pytest.fixture
def copy_always(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setattr(store, "COPY_MIN_ROWS", 1)
    yield


def _rows() -> list[Row]:
    """A batch touching every column type, with the awkward values in every string column."""
    parent = uuid.uuid4()
    base: dict[str, Any] = {
        "collection": "w_any",
        "collection_version": 1,
        "type": "fact",
        "scores": {"importance": 2.5, "big": 1e300, "tiny": -5e-324},
        "fields": {},
        "status": "active",
        "depth": 0,
        "derived_from": (),
        "run_id": None,
        "occurred_at": None,
        "pending": False,
        "is_current": True,
        "embedding": None,
        "embedding_model": None,
        "language": "english",
    }
    content = {
        "s": AWKWARD,
        AWKWARD: [1, 2.5, -0.0, 10**30, 1.5e3, True, None, {"nested": {"deeper": ["\\u0000 as text"]}}],
        "json escapes": '\\" \\\\ \\n \\t \\u00e9 /',
    }

    def row(**values: Any) -> Row:
        return Row(**{"id": uuid.uuid4(), "key": None, "content": {}, "annotations": {}, **base, **values})

    return [
        row(
            entity=AWKWARD,
            key=AWKWARD,
            text=AWKWARD,
            content=content,
            annotations={"note": AWKWARD, "deep": [[[]]]},
            idempotency_key=AWKWARD,
            payload_hash="ab" * 32,
            run_id=AWKWARD,
        ),
        row(
            entity="e",
            text="an event",
            type="event",
            depth=2,
            derived_from=(parent, uuid.uuid4()),
            occurred_at=datetime(1, 1, 1, tzinfo=UTC),
        ),
        row(
            entity="e",
            key="k",
            text="a draft, far in time",
            content={"x": 1},
            link_node_id=parent,
            status="draft",
            is_current=False,
            occurred_at=datetime(9999, 12, 31, 23, 59, tzinfo=timezone(timedelta(hours=23, minutes=59))),
        ),
        row(
            entity="v",
            text="a vector",
            collection="w_local",
            type="note",
            pending=True,
            embedding=[((i * 7919) % 1000 - 500) / 3001.0 for i in range(383)] + [-3e-8],
            embedding_model=LOCAL_MODEL,
            language="simple",
        ),
    ]


COMPARED = [c for c in store.INSERT_COLUMNS if c not in ("workspace_id", "id", "lane_seq")]


def _stored(conn: Any, workspace_id: uuid.UUID) -> list[dict[str, Any]]:
    columns = ", ".join(f"{name}::text AS {name}" for name in COMPARED)
    rows = conn.execute(
        sa.text(f"SELECT {columns} FROM records WHERE workspace_id = :ws ORDER BY seq"), {"ws": workspace_id}
    )
    return [dict(row._mapping) for row in rows]


def test_copy_stores_the_same_rows_as_the_json_source(db: Engine, tenant: Tenant) -> None:
    other = make_tenant(db, "tenant-b").id
    batch = _rows()
    with db.begin() as conn:  # one transaction: now() is the same for both
        for workspace_id, copy in ((tenant.id, False), (other, True)):
            store.insert_rows(conn, workspace_id, [_fresh(r) for r in batch], copy=copy)
        by_json, by_copy = _stored(conn, tenant.id), _stored(conn, other)
    assert len(by_json) == len(batch)
    assert by_copy == by_json
    assert by_copy[0]["text"] == AWKWARD and by_copy[0]["entity"] == AWKWARD


def _fresh(row: Row) -> Row:
    return replace(row, id=uuid.uuid4())


def test_copy_under_row_level_security_and_twice_in_one_transaction(db: Engine, tenant: Tenant) -> None:
    """The scoped role (row-level security on records) writes through the stage; a second batch in
    the same transaction does not see the first's stage rows."""
    with workspace_transaction(db, tenant.id) as conn:
        store.insert_rows(conn, tenant.id, [_fresh(r) for r in _rows()], copy=True)
        store.insert_rows(conn, tenant.id, [_fresh(r) for r in _rows()[1:]], copy=True)
    assert count(db, "records") == 2 * len(_rows()) - 1
    assert count(db, "processing_queue") == 2


def test_copy_failure_changes_nothing(db: Engine, tenant: Tenant) -> None:
    """A database error during the bulk insert (here a second current value in one lane, refused
    by the unique index) rolls the whole request back, stage included."""
    rows = [_fresh(r) for r in _rows()]
    clash = [rows[0], _fresh(rows[0])]
    with pytest.raises(sa.exc.IntegrityError), workspace_transaction(db, tenant.id) as conn:
        store.insert_rows(conn, tenant.id, rows[1:], copy=True)
        store.insert_rows(conn, tenant.id, clash, copy=True)
    assert count(db, "records") == 0
    assert count(db, "record_postings") == 0
    assert count(db, "processing_queue") == 0
    with workspace_transaction(db, tenant.id) as conn:  # the session's stage is usable again
        store.insert_rows(conn, tenant.id, rows[1:], copy=True)
    assert count(db, "records") == len(rows) - 1


def test_large_request_takes_the_copy_path(
    wclient: Client, db: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen: list[bool] = []
    original = store._copy_to_stage
    monkeypatch.setattr(store, "_copy_to_stage", lambda *a: seen.append(True) or original(*a))
    small = written(
        wclient, *(record_in("w_events", text=f"small {n}") for n in range(store.COPY_MIN_ROWS - 1))
    )
    assert not seen
    large = written(
        wclient, *(record_in("w_events", text=f"large {n} {AWKWARD}") for n in range(store.COPY_MIN_ROWS))
    )
    assert seen == [True]
    assert count(db, "records") == len(small) + len(large)
    with db.connect() as conn:
        texts = conn.execute(sa.text("SELECT text FROM records ORDER BY seq")).scalars().all()
    assert texts[len(small) :] == [f"large {n} {AWKWARD}" for n in range(store.COPY_MIN_ROWS)]


def test_nul_is_refused_before_copy_and_nothing_is_written(
    wclient: Client, db: Engine, copy_always: None
) -> None:
    good = [record_in("w_events", text=f"fine {n}") for n in range(5)]
    bad = record_in("w_events", text="nul \x00 inside", content={"k": "also \x00"})
    response = wclient.post("/records", {"records": [*good, bad]})
    assert response.status_code == 422
    locs = [d["loc"] for d in response.get_json()["error"]["details"]]
    assert ["records", 5, "text"] in locs
    assert count(db, "records") == 0


def _through_copy(test: Callable[..., None]) -> Callable[..., None]:
    """`test` (same fixtures and parameters) with every batch written through COPY."""

    @functools.wraps(test)
    def again(*args: Any, **kwargs: Any) -> None:
        test(*args, **kwargs)

    return pytest.mark.usefixtures("copy_always")(again)


# Every write rule again, through COPY (idempotency, lanes, links, derived_from, 422 atomicity …).
for _module in (test_records, test_lanes):
    for _name, _test in list(vars(_module).items()):
        if _name.startswith("test_") and callable(_test):
            globals()[f"{_name}__copy"] = _through_copy(_test)
