"""Blind audit of the write side (design §1, §3, §4), written from the design alone.

Every test quotes the design sentence it checks. Records go through `POST /records` of the `bw`
app (no in-process worker: processing runs only when a test calls `process`).
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.blackbox.design_support import one_id
from tests.blackbox.design_support import rec
from tests.conftest import Client
from tests.helpers import fetch

# --- lengths are characters, and nothing a writer sends leaks a 500 -------------------------------


@pytest.mark.parametrize(
    "record",
    [
        pytest.param(rec(text="é" * 32768), id="text-32768-two-byte-chars"),
        pytest.param(rec(text="😀" * 32768), id="text-32768-astral-chars"),
        pytest.param(rec(entity="é" * 256), id="entity-256-two-byte-chars"),
        pytest.param(rec(entity="😀" * 256), id="entity-256-astral-chars"),
    ],
)
def test_limits_count_characters(bw: Client, record: dict[str, Any]) -> None:
    """§1: entity "1–256 chars"; text "at most `MAX_RECORD_CHARS` (default 32,768)" characters."""
    stored = fetch(bw, one_id(bw, record))
    assert stored["text"] == record["text"] and stored["entity"] == record["entity"]
