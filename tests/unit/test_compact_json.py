"""`jsontext.compact_json` writes what `json.dumps(..., ensure_ascii=False, separators=(",", ":"),
allow_nan=False)` writes (the same JSON value; floats may be spelled differently, `1e-05` as
`0.00001`), and refuses what it refuses, with its error."""

from __future__ import annotations

import json
from typing import Any

import pytest

from memseek.jsontext import compact_json
from memseek.jsontext import ended_answer
from memseek.jsontext import json_answer


def _json_module(value: Any) -> bytes:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode()


NESTED: Any = 0
for _ in range(300):
    NESTED = [NESTED]

SAME_AS_JSON = [
    pytest.param({"hits": [{"id": "a", "score": 0.25, "rank": 1}], "rendered": None}, id="a response"),
    pytest.param({"text": 'Lisbon, é ü 😀 \u2028 "quoted" \\ \n'}, id="non-ASCII and escapes"),
    pytest.param([1e-05, 2.5e-07, 1e300, -0.0, 5e-324, 0.30000000000000004], id="float spellings"),
    pytest.param({"big": 123456789012345678901234567890}, id="integer beyond 64 bits"),
    pytest.param({2: "a", True: "b", None: "c", 1.5: "d"}, id="keys that are not strings"),
    pytest.param((1, (2, 3)), id="tuples"),
    pytest.param(NESTED, id="nested past orjson's 254 levels"),
]


@pytest.mark.parametrize("value", SAME_AS_JSON)
def test_compact_json_writes_jsons_value(value: Any) -> None:
    assert json.loads(compact_json(value)) == json.loads(_json_module(value))


@pytest.mark.parametrize(
    "value",
    [float("nan"), {"score": float("inf")}, {"hits": [{"values": [1.0, -float("inf")]}]}, [[[float("nan")]]]],
    ids=["nan", "inf in a dict", "deep in a list", "nested lists"],
)
def test_compact_json_refuses_non_finite_floats_as_json_does(value: Any) -> None:
    with pytest.raises(ValueError) as expected:
        _json_module(value)
    with pytest.raises(ValueError, match=str(expected.value)):
        compact_json(value)


def test_compact_json_is_compact_utf8() -> None:
    assert compact_json({"t": "é", "a": [1, 2]}) == '{"t":"é","a":[1,2]}'.encode()


def test_an_answer_is_compact_json_ending_with_a_line_break() -> None:
    """What the app writes itself ends as Flask's JSON answers do (one answer a terminal line)."""
    assert json_answer({"t": "é", "a": [1, 2]}) == '{"t":"é","a":[1,2]}\n'.encode()
    assert ended_answer(b'{"jsonrpc":"2.0"}') == b'{"jsonrpc":"2.0"}\n'
