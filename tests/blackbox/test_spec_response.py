"""Spec "What comes back": response keys, per-hit values, include, fields, annotations, sizes."""

from __future__ import annotations

from tests.blackbox.conftest import ClientFactory
from tests.blackbox.support import note
from tests.blackbox.support import search
from tests.blackbox.support import write
from tests.conftest import Client
from tests.helpers import error


def test_response_too_large_is_409_and_drops_nothing(sx: Client, sx_with: ClientFactory) -> None:
    write(sx, *(note("x" * 1500) for _ in range(10)))
    small = sx_with(max_response_bytes=4000)
    err = error(
        small.post("/search", json={"mode": "recent", "include": ["text"]}), 409, "response_too_large"
    )
    assert err["message"]
    assert len(search(small, {"mode": "recent", "k": 1, "include": ["text"]})["hits"]) == 1


def test_response_too_large_applies_to_views(sx: Client, sx_with: ClientFactory) -> None:
    write(sx, *(note("budget " + "x" * 1500, entity="big") for _ in range(10)))
    small = sx_with(max_response_bytes=2000)
    response = small.post("/views/sx_context/query", json={"entity": "big", "task": "budget"})
    error(response, 409, "response_too_large")
