"""Helpers of the reranking tests: what the judge was sent, replies scoring records by their text,
and reranked text searches.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

NOTES = {"collections": ["sx_notes"]}
RECORD = re.compile(r'<record id="([^"]+)">(.*?)</record>')
"""One record of the judge's prompt: its prompt id and text."""
IMP = ["score", "importance"]


def sent(messages: list[dict[str, Any]]) -> dict[str, str]:
    """Prompt id → record text, from the user message the judge received."""
    return dict(RECORD.findall(messages[-1]["content"]))


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


def judge(scores: dict[str, float]) -> Callable[[list[dict[str, Any]]], str]:
    """A reply scoring each record sent by its text (`scores[text]`)."""

    def reply(messages: list[dict[str, Any]]) -> str:
        return json.dumps(
            {"judgments": [{"id": rid, "score": scores[text]} for rid, text in sent(messages).items()]}
        )

    return reply
