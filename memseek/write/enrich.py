"""Model enrichments (design "Processing and enrichments"): prompts and strict reading of answers.

`llm_score` asks the chat model for `{"score": number}` within the declared range and stores it in
`scores[name]`; `llm_label` asks for `{"label": one of labels}` and stores
`annotations[name] = {"label": ...}`. An answer of any other shape is a processing failure
(`ModelOutputInvalid`), never a guessed or clamped value.
"""

from __future__ import annotations

import json
import math
from typing import Any
from typing import Protocol
from typing import TypeGuard

from memseek.catalog.conf import LlmLabel
from memseek.catalog.conf import LlmScore
from memseek.models import ModelOutputInvalid


class ChatModel(Protocol):
    """A chat model that answers with one JSON value."""

    def complete_json(self, system: str, user: str) -> Any: ...


class ChatModels(Protocol):
    """The model registry, as far as enrichments use it."""

    def chat(self, alias: str) -> ChatModel: ...


def score_prompt(decl: LlmScore) -> str:
    low, high = decl.range
    return (
        f'{decl.instructions}\nReply with only a JSON object {{"score": N}}, '
        f"where N is a number from {low} to {high}."
    )


def label_prompt(decl: LlmLabel) -> str:
    labels = ", ".join(json.dumps(label) for label in decl.labels)
    head = decl.instructions or "Classify the text."
    return f'{head}\nReply with only a JSON object {{"label": L}}, where L is exactly one of: {labels}.'


def read_score(decl: LlmScore, answer: Any) -> float:
    """The score in `answer`, or ModelOutputInvalid (the worker names the enrichment)."""
    value = answer.get("score") if isinstance(answer, dict) else None
    low, high = decl.range
    if not _finite_number(value) or not low <= value <= high:
        raise ModelOutputInvalid(f'expected {{"score": number in [{low}, {high}]}}, got {_short(answer)}')
    return float(value)


def _finite_number(value: object) -> TypeGuard[int | float]:
    """A finite JSON number (a boolean is not one)."""
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def read_label(decl: LlmLabel, answer: Any) -> str:
    """The label in `answer`, or ModelOutputInvalid (the worker names the enrichment)."""
    value = answer.get("label") if isinstance(answer, dict) else None
    if not isinstance(value, str) or value not in decl.labels:
        raise ModelOutputInvalid(f'expected {{"label": one of {list(decl.labels)}}}, got {_short(answer)}')
    return value


def _short(answer: Any) -> str:
    text = json.dumps(answer, ensure_ascii=False, default=str)
    return text if len(text) <= 200 else text[:200] + "…"


def enrich(models: ChatModels, name: str, decl: LlmScore | LlmLabel, text: str) -> tuple[str, str, Any]:
    """Run one enrichment on `text` → (target: "scores" | "annotations", name, value)."""
    if isinstance(decl, LlmScore):
        answer = models.chat(decl.model).complete_json(score_prompt(decl), text)
        return "scores", name, read_score(decl, answer)
    answer = models.chat(decl.model).complete_json(label_prompt(decl), text)
    return "annotations", name, {"label": read_label(decl, answer)}
