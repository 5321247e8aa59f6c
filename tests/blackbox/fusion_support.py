"""Helpers of the combined-search tests: sources ranked by a stored score, RRF requests, `sx_extra`
records, and the judge's prompt read back.
"""

from __future__ import annotations

from typing import Any

from tests.openai_server import OpenAIServer

# --- used by several test modules -----------------------------------------------------------------


NOTES = {"collections": ["sx_notes"]}


def extra(text: str = "x", **values: Any) -> dict[str, Any]:
    """A record of sx_extra."""
    return {"collection": "sx_extra", "entity": "e", "type": "note", "text": text, **values}


def chat_calls(server: OpenAIServer) -> list[Any]:
    return [r for r in server.requests if r.path == "/v1/chat/completions"]


def source(name: str, score: str, weight: float = 1.0, **extra: Any) -> dict[str, Any]:
    """A recent-mode source over sx_notes ranked by one stored score."""
    return {
        "name": name,
        "mode": "recent",
        "scope": NOTES,
        "rank": ["score", score],
        "weight": weight,
        **extra,
    }
