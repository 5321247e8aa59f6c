"""Pure pieces of the write path: ids, enrichment answers, link content, lane currency (no database)."""

from __future__ import annotations

import time
from dataclasses import replace
from typing import Any
from uuid import UUID

import pytest

from memseek.catalog.conf import LlmLabel
from memseek.catalog.conf import LlmScore
from memseek.catalog.models import Collection
from memseek.models import ModelOutputInvalid
from memseek.write.enrich import label_prompt
from memseek.write.enrich import read_label
from memseek.write.enrich import read_score
from memseek.write.enrich import score_prompt
from memseek.write.ids import uuid7
from memseek.write.ids import uuid7_batch
from memseek.write.lanes import lock_key
from memseek.write.links import link_content
from memseek.write.links import link_values
from memseek.write.rows import Row
from memseek.write.rows import with_currency


def test_uuid7_layout_and_order() -> None:
    before = time.time_ns() // 1_000_000
    ids = uuid7_batch(5000)
    after = time.time_ns() // 1_000_000
    assert ids == sorted(ids) and len(set(ids)) == 5000
    for value in (ids[0], ids[-1]):
        assert value.version == 7 and value.variant == "specified in RFC 4122"
        assert before <= value.int >> 80 <= after + 1
    assert uuid7() > ids[-1]


SCORE = LlmScore(kind="llm_score", instructions="Rate it.", range=(1, 10))
LABEL = LlmLabel(kind="llm_label", labels=("positive", "negative"))


@pytest.mark.parametrize(
    ("answer", "value"),
    [
        pytest.param({"score": 1}, 1.0, id="low-bound"),
        pytest.param({"score": 10.0}, 10.0, id="high-bound"),
        pytest.param({"score": 7.5}, 7.5, id="inside"),
        pytest.param({"score": 0.5}, None, id="below"),
        pytest.param({"score": 11}, None, id="above"),
        pytest.param({"score": "7"}, None, id="string"),
        pytest.param({"score": True}, None, id="bool"),
        pytest.param({"score": float("nan")}, None, id="nan"),
        pytest.param({"rating": 7}, None, id="wrong-key"),
        pytest.param([7], None, id="not-object"),
    ],
)
def test_read_score(answer: Any, value: float | None) -> None:
    if value is None:
        with pytest.raises(ModelOutputInvalid, match=r"number in \[1, 10\]"):
            read_score(SCORE, answer)
    else:
        assert read_score(SCORE, answer) == value


@pytest.mark.parametrize(
    ("answer", "ok"),
    [
        ({"label": "positive"}, True),
        ({"label": "Positive"}, False),
        ({"label": 1}, False),
        ("positive", False),
    ],
)
def test_read_label(answer: Any, ok: bool) -> None:
    if ok:
        assert read_label(LABEL, answer) == "positive"
    else:
        with pytest.raises(ModelOutputInvalid):
            read_label(LABEL, answer)


def test_prompts_state_the_contract() -> None:
    assert "Rate it." in score_prompt(SCORE) and "from 1 to 10" in score_prompt(SCORE)
    assert '"positive", "negative"' in label_prompt(LABEL)


EDGES = Collection.model_validate(
    {
        "name": "edges",
        "version": 1,
        "types": ["link"],
        "fields": {"from_node": {"type": "string", "path": "ends.from"}, "to_node": {"type": "string"}},
    }
)


def test_link_content_uses_declared_paths() -> None:
    content = link_content(EDGES, ("from_node", "to_node", "kind"), ("a", "b", "uses"))
    assert content == {"ends": {"from": "a"}, "to_node": "b", "kind": "uses"}


NODES = Collection.model_validate(
    {
        "name": "nodes",
        "version": 1,
        "types": ["node"],
        "keyed": True,
        "fields": {
            "deps": {"type": "string_array", "fallback_paths": ["old.deps"]},
            "owner": {"type": "string"},
        },
    }
)


@pytest.mark.parametrize(
    ("content", "field", "values"),
    [
        ({"deps": ["a", "b", "a", "", " "]}, "deps", ["a", "b"]),
        ({"old": {"deps": ["z"]}}, "deps", ["z"]),
        ({"owner": "bob"}, "owner", ["bob"]),
        ({"deps": None}, "deps", []),
        ({}, "owner", []),
    ],
)
def test_link_values(content: dict[str, Any], field: str, values: list[str]) -> None:
    assert link_values(NODES, field, content) == values


def _row(key: str | None, status: str = "active") -> Row:
    return Row(
        id=uuid7(),
        collection="c",
        collection_version=1,
        entity="e",
        type="t",
        key=key,
        text="x",
        content={},
        scores={},
        annotations={},
        fields={},
        status=status,
        depth=0,
        derived_from=(),
        run_id=None,
        occurred_at=None,
        pending=False,
        is_current=True,
        embedding=None,
        embedding_model=None,
        language="english",
    )


def test_last_write_of_each_lane_is_current() -> None:
    rows = [_row("a"), _row(None), _row("a", "draft"), _row("b"), _row("a"), _row(None)]
    assert [r.is_current for r in with_currency(rows)] == [False, True, True, True, True, True]
    assert with_currency([replace(rows[0], is_current=True)])[0].is_current


def test_lock_keys_are_stable_and_workspace_bound() -> None:
    ws_a, ws_b = UUID(int=1), UUID(int=2)
    assert lock_key(ws_a, "c", "e", "k") == lock_key(ws_a, "c", "e", "k")
    assert lock_key(ws_a, "c", "e", "k") != lock_key(ws_b, "c", "e", "k")
    assert lock_key(ws_a, "c", "e", "k") != lock_key(ws_a, "c", "ek", "")
    assert -(2**63) <= lock_key(ws_a, "x") < 2**63
