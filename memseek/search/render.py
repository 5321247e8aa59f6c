"""Prompt-ready rows: escaped, optionally fenced, bounded by a token budget (pure; no IO).

One row per hit, on one line:

    [id=<uuid>] 2026-07-01T10:22Z | <collection>/<type> | <key> | importance 7 | <text>

Empty parts (no key, no displayed score) are left out. Whitespace runs (line breaks included)
in the text and the key collapse to one space, so a record can never start a row of its own;
the text is shortened from the middle to 500 characters; then `&`, `<` and `>` become the
literal text `\\u0026`, `\\u003c` and `\\u003e`, so no record can close or forge the fence
element.

Token counting (`estimate_tokens`) is a deliberately conservative estimate, not a tokenizer:
the larger of two counts. By characters: one token per 3 ASCII characters (rounded up) plus one
per non-ASCII character; English BPE tokenizers average about 4 characters per token. By pieces,
split as tokenizers split before merging: one per 4 letters of a letter run (rounded up), one
per digit and per other symbol; this is what keeps ids and timestamps (hex, digits, hyphens),
which real tokenizers cut finely, under the estimate (a row with a 53-character text: 89 by
pieces, 51 by characters, 67 with the shipped MiniLM WordPiece tokenizer). The
budget is checked on the sum of the parts' estimates (preamble, fence tags, each row with its
line break, the `[...] truncated` row), which is never smaller than the estimate of the joined block.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC
from datetime import datetime
from uuid import UUID

from memseek.search.request import Fence

ROW_TEXT_CHARS = 500
JSON_TEXT_CHARS = 2000
ROW_MARKER = " [...] "
JSON_MARKER = " [...] truncated [...] "
TRUNCATED_ROW = "[...] truncated"
"""The row that closes a block cut short by its budget (spec: "appends a `[...] truncated` row")."""
_ESCAPES = str.maketrans({"&": "\\u0026", "<": "\\u003c", ">": "\\u003e"})


@dataclass(frozen=True, slots=True)
class RenderRow:
    """What one rendered row shows of a hit."""

    id: UUID
    occurred_at: datetime
    collection: str
    type: str
    key: str | None
    text: str
    display_scores: tuple[tuple[str, float], ...] = ()


def middle_truncate(text: str, limit: int, marker: str) -> str:
    """`text` shortened from the middle to at most `limit` characters, `marker` in the gap."""
    if len(text) <= limit:
        return text
    keep = max(0, limit - len(marker))
    head = (keep + 1) // 2
    tail = keep - head
    return text[:head] + marker + (text[len(text) - tail :] if tail else "")


def json_text(text: str) -> str:
    """The `text` value of a JSON hit: at most 2,000 characters, not prompt-escaped."""
    return middle_truncate(text, JSON_TEXT_CHARS, JSON_MARKER)


def escape(text: str) -> str:
    """Replace `&`, `<` and `>` by their literal escape text."""
    return text.translate(_ESCAPES)


def format_number(value: float) -> str:
    """A displayed score: whole numbers without a decimal point, others to 4 significant digits."""
    if float(value).is_integer() and abs(value) < 1e15:
        return str(int(value))
    return f"{value:.4g}"


def render_row(row: RenderRow) -> str:
    """One escaped row (see the module docstring for the layout)."""
    moment = row.occurred_at.astimezone(UTC).strftime("%Y-%m-%dT%H:%MZ")
    scores = ", ".join(f"{name} {format_number(value)}" for name, value in row.display_scores)
    text = middle_truncate(_one_line(row.text), ROW_TEXT_CHARS, ROW_MARKER)
    parts = [
        f"[id={row.id}] {moment}",
        f"{row.collection}/{row.type}",
        _one_line(row.key or ""),
        scores,
        text,
    ]
    return escape(" | ".join(part for part in parts if part))


def _one_line(text: str) -> str:
    return " ".join(text.split())


def estimate_tokens(text: str) -> int:
    """A conservative token estimate (see the module docstring): the larger of a per-character
    and a per-piece count."""
    ascii_chars = sum(1 for ch in text if ord(ch) < 128)
    by_characters = math.ceil(ascii_chars / 3) + (len(text) - ascii_chars)
    return max(by_characters, sum(map(_piece_tokens, _PIECES.findall(text))))


_PIECES = re.compile(r"[A-Za-z]+|[^\sA-Za-z]")
"""How tokenizers split text before merging, at its finest: letter runs, and each digit or
other symbol on its own."""


def _piece_tokens(piece: str) -> int:
    return math.ceil(len(piece) / 4) if piece[0].isalpha() else 1


def fence_parts(fence: Fence | None) -> tuple[list[str], list[str]]:
    """The lines before and after the rows (preamble and opening tag; closing tag)."""
    if fence is None:
        return [], []
    head = [fence.preamble] if fence.preamble else []
    return [*head, f'<{fence.tag} untrusted="true">'], [f"</{fence.tag}>"]


def render_block(rows: Sequence[RenderRow], fence: Fence | None, budget: int) -> tuple[str, bool]:
    """The rendered block and whether it was cut short by the token `budget`."""
    head, tail = fence_parts(fence)
    used = sum(estimate_tokens(line + "\n") for line in head) + sum(estimate_tokens(line) for line in tail)
    marker_cost = estimate_tokens(TRUNCATED_ROW + "\n")
    if used > budget:  # a budget too small for the fence itself: nothing can be shown
        return "", bool(rows)
    body: list[str] = []
    for index, row in enumerate(rows):
        line = render_row(row)
        cost = estimate_tokens(line + "\n")
        # Keep room for the `[...] truncated` row whenever a later row might not fit.
        reserve = marker_cost if index < len(rows) - 1 else 0
        if used + cost + reserve > budget:
            return _fit_truncated(head, body, tail, used, marker_cost, budget), True
        body.append(line)
        used += cost
    return "\n".join([*head, *body, *tail]), False


def _fit_truncated(
    head: list[str], body: list[str], tail: list[str], used: int, marker: int, budget: int
) -> str:
    if used + marker > budget:  # not even the fence and the marker fit: nothing does
        return ""
    return "\n".join([*head, *body, TRUNCATED_ROW, *tail])
