"""Letter-precise audit of the two documents against the service, over HTTP.

Each test states the sentence of `views-and-search.md` (the spec) or `memseek.md` (the design) it
checks, with expected values taken from that sentence, on points no other black-box test pins.
"""

from __future__ import annotations

import pytest

from tests.blackbox.support import search
from tests.blackbox.support import write
from tests.conftest import Client

# --- spec: the public score "If all values tie: every value becomes 1" (combined searches too) ----


def test_a_merged_pool_that_ties_scores_1_everywhere(sx: Client) -> None:
    one, two = write(
        sx,
        {"collection": "sx_notes", "entity": "tie", "type": "note", "text": "left"},
        {"collection": "sx_extra", "entity": "tie", "type": "note", "text": "right"},
    )
    body = search(
        sx,
        {
            "sources": [
                {"name": "a", "mode": "recent", "scope": {"collections": ["sx_notes"], "entities": ["tie"]}},
                {"name": "b", "mode": "recent", "scope": {"collections": ["sx_extra"], "entities": ["tie"]}},
            ],
            "fuse": {"kind": "rrf"},
        },
    )
    assert {hit["id"] for hit in body["hits"]} == {one, two}
    assert [hit["score"] for hit in body["hits"]] == [1.0, 1.0]
    assert [hit["rank_score"] for hit in body["hits"]] == [pytest.approx(1 / 61)] * 2
    assert [hit["rank"] for hit in body["hits"]] == [1, 2]
    assert body["ranking"]["kind"] == "rrf"
