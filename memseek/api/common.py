"""Helpers every blueprint shares: the runtime, the caller's workspace, the JSON body."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any
from uuid import UUID

import msgspec
from flask import current_app
from flask import g
from flask import request
from sqlalchemy.engine import Connection

from memseek.db import workspace_transaction
from memseek.errors import Detail
from memseek.errors import RequestInvalid
from memseek.runtime import Runtime


def runtime() -> Runtime:
    return current_app.extensions["memseek"]  # type: ignore[no-any-return]


def workspace() -> UUID:
    """The authenticated caller's workspace."""
    return g.workspace_id  # type: ignore[no-any-return]


@contextmanager
def scoped() -> Iterator[Connection]:
    """A transaction confined to the caller's workspace."""
    with workspace_transaction(runtime().engine, workspace()) as conn:
        yield conn


def json_body(*, required: bool = True) -> Any:
    """The request body parsed as JSON; a clear 422 when it is missing or not JSON."""
    raw = request.get_data(cache=True)
    if not raw.strip():
        if required:
            raise RequestInvalid("a JSON body is required", [Detail(("body",), "missing")])
        return {}
    try:
        return parse_json(raw)
    except (ValueError, UnicodeDecodeError) as exc:
        raise RequestInvalid("the body is not valid JSON", [Detail(("body",), str(exc))]) from None
    except RecursionError:
        raise RequestInvalid("the body is nested too deeply", [Detail(("body",), "too deep")]) from None


_DECODER = msgspec.json.Decoder()


def parse_json(raw: bytes) -> Any:
    """`json.loads(raw)`, several times faster where it can be: msgspec parses a 1,000-record
    batch with vectors in ~17 ms where the json module took ~106. Whatever msgspec refuses (NaN,
    Infinity and overflowing numbers, lone surrogates, UTF-16 and byte-order marks: all outside
    strict UTF-8 JSON, all accepted by json) is parsed again by json, so every body gets json's
    result or error. Where both parse, they agree: big integers stay exact in both."""
    try:
        return _DECODER.decode(raw)
    except msgspec.DecodeError:
        return json.loads(raw)
