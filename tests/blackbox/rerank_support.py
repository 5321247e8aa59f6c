"""Helpers of the reranking tests: reranked text searches (the judge's scripted replies, and what
it was sent, are `tests.openai_server`'s).
"""

from __future__ import annotations

from typing import Any

NOTES = {"collections": ["sx_notes"]}
IMP = ["score", "importance"]


def text_search(top_n: int, **extra: Any) -> dict[str, Any]:
    """A text search over sx_notes for "budget", ordered by importance, reranked with `top_n`."""
    return {
        "mode": "text",
        "q": "budget",
        "scope": NOTES,
        "rank": IMP,
        "rerank": {"backend": "llm_judge", "top_n": top_n},
        **extra,
    }
