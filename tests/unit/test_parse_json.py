"""`jsontext.parse_json` answers exactly as `json.loads`: same value, same types, same errors."""

from __future__ import annotations

import json
import math

import pytest

from memseek.jsontext import parse_json

SAME_AS_JSON = [
    pytest.param(b'{"records": [{"text": "a", "embedding": [0.1, -2.5e-3, 1e-7]}]}', id="batch"),
    pytest.param(b'{"a": 1, "a": 2}', id="duplicate key: the last wins"),
    pytest.param(b"123456789012345678901234567890", id="integer beyond 64 bits stays exact"),
    pytest.param(b"-9223372036854775809", id="below int64 stays exact"),
    pytest.param(b"[1.7976931348623157e308, -0.0, 5e-324]", id="float edges"),
    pytest.param(b'"\\u0000 \\ud83d\\ude00"', id="escapes and a surrogate pair"),
    pytest.param(b"  {}  ", id="surrounding whitespace"),
    pytest.param(b"[NaN, Infinity, -Infinity]", id="json's non-standard constants"),
    pytest.param(b"1e400", id="overflowing literal (json: inf)"),
    pytest.param(b'"\\ud800"', id="lone surrogate"),
    pytest.param(b"\xef\xbb\xbf{}", id="UTF-8 byte-order mark"),
    pytest.param("{}".encode("utf-16"), id="UTF-16"),
]


def _same(left: object, right: object) -> bool:
    """Equal values of equal types, NaN equal to NaN."""
    if isinstance(left, float) and isinstance(right, float) and math.isnan(left):
        return math.isnan(right)
    if isinstance(left, list) and isinstance(right, list):
        return len(left) == len(right) and all(map(_same, left, right))
    if isinstance(left, dict) and isinstance(right, dict):
        return left.keys() == right.keys() and all(_same(left[k], right[k]) for k in left)
    return type(left) is type(right) and left == right


@pytest.mark.parametrize("raw", SAME_AS_JSON)
def test_parse_json_gives_jsons_value(raw: bytes) -> None:
    assert _same(parse_json(raw), json.loads(raw))


@pytest.mark.parametrize(
    "raw",
    [b'{"a": 1} x', b'{"a": "\xff"}', b"[1, 2", b"", b"[" * 5000 + b"]" * 5000],
    ids=["trailing data", "invalid UTF-8", "truncated", "empty", "nested too deep"],
)
def test_parse_json_raises_jsons_error(raw: bytes) -> None:
    with pytest.raises(Exception) as expected:
        json.loads(raw)
    with pytest.raises(expected.type):
        parse_json(raw)
