"""Helpers of the combined-search tests: sources ranked by a stored score, RRF requests, `sx_extra`
records, and the judge's calls.
"""

from __future__ import annotations

from typing import Any

from tests.openai_server import OpenAIServer

NOTES = {"collections": ["sx_notes"]}
RRF = {"kind": "rrf"}


def ranked_by(name: str, score: str, weight: float | None = None, **extra: Any) -> dict[str, Any]:
    """A recent source over sx_notes ordered by one stored score (weight omitted → the default)."""
    body: dict[str, Any] = {"name": name, "mode": "recent", "scope": NOTES, "rank": ["score", score], **extra}
    if weight is not None:
        body["weight"] = weight
    return body


def combined(*sources: dict[str, Any], **extra: Any) -> dict[str, Any]:
    """A combined search of `sources` with the default RRF fusion."""
    return {"sources": list(sources), "fuse": RRF, **extra}


def extra(text: str = "x", **values: Any) -> dict[str, Any]:
    """A record of sx_extra."""
    return {"collection": "sx_extra", "entity": "e", "type": "note", "text": text, **values}


def by_id(body: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """The hits of a response keyed by id."""
    return {hit["id"]: hit for hit in body["hits"]}


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
