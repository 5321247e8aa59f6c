"""JSON in and out: text parsed the same way wherever it enters (request bodies and import
files), a search's response written as the json module writes it, answers ended alike, and the
JSON text the write path casts to json/jsonb in SQL."""

from __future__ import annotations

import json
import math
from typing import Any

import msgspec
import orjson

_DECODER = msgspec.json.Decoder()


def parse_json(raw: bytes) -> Any:
    """`json.loads(raw)`, several times faster where it can be: msgspec parses a large batch with
    vectors without building Python floats twice. Whatever msgspec refuses (NaN,
    Infinity and overflowing numbers, lone surrogates, UTF-16 and byte-order marks: all outside
    strict UTF-8 JSON, all accepted by json) is parsed again by json, so every body gets json's
    result or error. Where both parse, they agree: big integers stay exact in both."""
    try:
        return _DECODER.decode(raw)
    except msgspec.DecodeError:
        return json.loads(raw)


def compact_json(value: Any) -> bytes:
    """`json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)` as UTF-8,
    by orjson where it can: a response of a hundred records encodes tens of times faster. orjson
    writes a non-finite float as `null` where json refuses it, so such a value is refused first,
    with json's error; what orjson itself refuses (integers beyond 64 bits, nesting past 254
    levels) is written by json."""
    if _holds_non_finite(value):
        raise ValueError("Out of range float values are not JSON compliant")
    try:
        return orjson.dumps(value, option=orjson.OPT_NON_STR_KEYS)
    except orjson.JSONEncodeError:
        return json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode()


def json_answer(value: Any) -> bytes:
    """An answer's body that the app writes itself rather than through Flask: `value` as
    `compact_json`, ended as every JSON answer is (`ended_answer`)."""
    return ended_answer(compact_json(value))


def ended_answer(text: bytes) -> bytes:
    """A JSON answer's bytes ending with a line break, as Flask ends its JSON answers: a terminal
    then prints what follows (the next answer, the shell's prompt) on a line of its own."""
    return text + b"\n"


def _holds_non_finite(value: Any) -> bool:
    """Whether a NaN or an infinity is anywhere in `value` (iteratively: any depth json takes)."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, float):
            if not math.isfinite(item):
                return True
        elif isinstance(item, dict):
            stack.extend(item.values())
        elif isinstance(item, list | tuple):
            stack.extend(item)
    return False


def json_text(value: Any) -> str:
    """Compact JSON text (UUIDs and datetimes as strings), for casts to json/jsonb in SQL.

    orjson rather than the json module: it formats floats far faster, and supplied vectors are 384
    floats a record; integers beyond 64 bits, which orjson refuses, take the json module's path.
    """
    try:
        return orjson.dumps(value).decode()
    except orjson.JSONEncodeError:
        return json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)
