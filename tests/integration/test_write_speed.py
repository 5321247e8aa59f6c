"""What the write-speed work (migration 0005, the batch insert's row source) must leave unchanged."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import sqlalchemy as sa
from sqlalchemy.engine import Engine

from tests.conftest import Client
from tests.helpers import written
from tests.integration.write_support import count
from tests.integration.write_support import record_in

LOCAL_MODEL = "all-MiniLM-L6-v2-onnx-int8"


def test_supplied_vector_is_stored_as_sent_in_single_precision(wclient: Client, db: Any) -> None:
    vector = [((i * 7919) % 1000 - 500) / 3001.0 for i in range(383)] + [-3e-8]
    [result] = written(wclient, record_in("w_local", embedding=vector, embedding_model=LOCAL_MODEL))
    with db.connect() as conn:
        stored = conn.execute(
            sa.text("SELECT embedding::text FROM records WHERE id = :id"), {"id": result["id"]}
        ).scalar_one()
    assert np.array_equal(
        np.array(stored.strip("[]").split(","), dtype=np.float32), np.array(vector, dtype=np.float32)
    )


def test_postings_of_a_batch_are_those_of_each_record(wclient: Client, db: Any) -> None:
    written(wclient, *(record_in("w_events", text=f"alpha beta beta gamma {n} delta") for n in range(30)))
    query = sa.text(
        "SELECT (SELECT count(*) FROM record_postings) AS stored, "
        "(SELECT count(*) FROM records r, memseek_postings_of(r.tsv)) AS computed, "
        "(SELECT count(*) FROM record_postings p JOIN records r ON r.id = p.record_id "
        " JOIN memseek_postings_of(r.tsv) c ON c.lexeme = p.lexeme AND c.impact = p.impact) AS same"
    )
    with db.connect() as conn:
        stored, computed, same = conn.execute(query).one()
    assert stored == computed == same > 30


def test_postings_function_is_inlined(db: Any) -> None:
    """Not STRICT, so the trigger's INSERT … SELECT computes postings in its plan, not a call per record."""
    with db.connect() as conn:
        plan = "\n".join(
            conn.execute(
                sa.text("EXPLAIN SELECT * FROM records r CROSS JOIN LATERAL memseek_postings_of(r.tsv)")
            ).scalars()
        )
    assert "memseek_postings_of" not in plan


def test_truncating_workspaces_empties_postings(wclient: Client, db: Any) -> None:
    written(wclient, record_in("w_events", text="postings to be truncated"))
    assert count(db, "record_postings") > 0
    with db.begin() as conn:
        conn.execute(sa.text("TRUNCATE workspaces CASCADE"))
    assert count(db, "record_postings") == 0


@pytest.mark.parametrize(
    ("stored", "kept"),
    [
        pytest.param("'cat':1,2,3,7 'dog':4", "'cat':1,2 'dog':4", id="third-and-later-positions-go"),
        pytest.param("'o''neil':1,2,3 'a\\\\b':4,5,6", "'o''neil':1,2 'a\\\\b':4,5", id="quote-backslash"),
        pytest.param("'no positions' 'x':1", "'no positions' 'x':1", id="lexeme-without-positions"),
        pytest.param("", "", id="empty"),
    ],
)
def test_stored_full_text_keeps_two_positions_per_lexeme(db: Engine, stored: str, kept: str) -> None:
    """`memseek_rank_positions` (sql/0010_rank_positions.sql): every lexeme stays, with its
    first two positions, whatever characters it holds."""
    sql = sa.text("SELECT memseek_rank_positions(CAST(:doc AS tsvector)) = CAST(:kept AS tsvector)")
    with db.connect() as conn:
        assert conn.execute(sql, {"doc": stored, "kept": kept}).scalar() is True


@pytest.mark.parametrize("records", [1, 150], ids=["json-path", "copy-path"])
def test_a_record_with_its_embedding_is_stored_whole_in_its_row(
    wclient: Client, db: Any, records: int
) -> None:
    """Migration 0011: a 384-d embedding and 600 characters of text stay on the heap page, so a
    search's distance and `ts_rank_cd` read no TOAST (both write paths: JSON rows and COPY)."""
    vector = [((i * 7919) % 1000 - 500) / 3001.0 for i in range(384)]
    text = " ".join(f"word{n} memory" for n in range(50))[:600]
    batch = [record_in("w_local", text=text, embedding=vector, embedding_model=LOCAL_MODEL)] * records
    ids = [result["id"] for result in written(wclient, *batch)]
    toasted = sa.text(
        "SELECT count(*) FROM records WHERE id = ANY(CAST(:ids AS uuid[])) AND ("
        " pg_column_toast_chunk_id(embedding) IS NOT NULL OR pg_column_toast_chunk_id(tsv) IS NOT NULL"
        " OR pg_column_toast_chunk_id(text) IS NOT NULL)"
    )
    parameters = sa.text("SELECT reloptions FROM pg_class WHERE oid = 'records'::regclass")
    with db.connect() as conn:
        assert conn.execute(toasted, {"ids": ids}).scalar() == 0
        options = conn.execute(parameters).scalar()
    assert options == ["toast_tuple_target=8160"]
