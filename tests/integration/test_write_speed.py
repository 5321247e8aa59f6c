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
