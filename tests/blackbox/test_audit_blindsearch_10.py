"""Blind black-box audit of single searches, written from the spec alone (views-and-search.md:
modes, query fields, scopes, typed filters, rendering, fences, response values, errors, ordering,
deployment limits) and the design's `GET /search` / `GET /context` routes.

Every expected answer is computed by hand from small data written over HTTP.
"""

from __future__ import annotations

from typing import Any

from tests.blackbox.conftest import ClientFactory
from tests.blackbox.support import note
from tests.blackbox.support import rejected_at
from tests.blackbox.support import write
from tests.conftest import Client
from tests.helpers import error

# --- further statements ---------------------------------------------------------------------------


def test_rank_expression_limits(sx: Client) -> None:
    """ "At most 16 nodes and 5 levels deep\""""
    deep: Any = ["const", 1]
    for _ in range(5):
        deep = ["sum", [deep]]
    rejected_at(sx, {"mode": "recent", "rank": deep}, "rank")
    wide = ["sum", [["const", i] for i in range(16)]]
    rejected_at(sx, {"mode": "recent", "rank": wide}, "rank")
    rejected_at(
        sx,
        {"mode": "recent", "rank": ["decay", ["age_hours", "occurred_at"], {"midpoint": 0, "exponent": 1}]},
        "rank",
    )


NOTES = {"collections": ["sx_notes"]}


def test_reranking_model_unavailable_is_503(sx: Client, sx_with: ClientFactory, server: Any) -> None:
    """ "Embeddings, search credentials, or the reranking model are unavailable → 503\""""
    write(sx, note("apple pie"))
    down = sx_with(environ={"SX_EMBED_URL": server.base_url})
    body = {"mode": "text", "q": "apple", "scope": NOTES, "rerank": {"backend": "llm_judge", "top_n": 3}}
    error(down.post("/search", json=body), 503)
