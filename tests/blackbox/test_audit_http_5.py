"""Audit of auth, workspace isolation, the HTTP conventions, configuration and the CLI.

Design §1 "Workspace and authentication", §3 "HTTP API beyond the spec", §4 "Configuration" and
the spec's "Errors" and "Deployment limits", on corners the other black-box files do not pin.
Each test quotes the sentence it checks; expected values come from the documents.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.blackbox.conftest import ClientFactory
from tests.blackbox.support import at
from tests.blackbox.support import invalid
from tests.blackbox.support import link
from tests.blackbox.support import note
from tests.blackbox.support import part
from tests.blackbox.support import search
from tests.blackbox.support import vec
from tests.blackbox.support import write
from tests.conftest import Client
from tests.helpers import error
from tests.helpers import fetch
from tests.helpers import ok
from tests.helpers import touches_written
from tests.helpers import view_query

# --- MAX_QUERY_CHARS: characters, at the exact boundary -------------------------------------------


NOTES = {"collections": ["sx_notes"]}


@pytest.mark.parametrize("char", ["a", "é", "語", "😀"], ids=["ascii", "latin", "cjk", "astral"])
def test_max_query_chars_counts_characters_not_bytes(sx: Client, char: str) -> None:
    """Spec: "`MAX_QUERY_CHARS` Maximum length of the query text `q` (8,192 by default)"; design
    §4 `MAX_QUERY_CHARS` default 8192. 8,192 characters pass whatever their UTF-8 length; 8,193
    are a 422 at `q`."""
    assert search(sx, {"mode": "text", "q": char * 8192, "scope": NOTES})["hits"] == []
    invalid(sx.post("/search", json={"mode": "text", "q": char * 8193, "scope": NOTES}), "q")


def test_max_query_chars_bounds_get_search_and_get_context_exactly(sx: Client) -> None:
    """Spec: `MAX_QUERY_CHARS` bounds "the query text `q`" (8,192 by default) — `GET /search` and
    `GET /context` take `q` as a query parameter."""
    for route in ("/search", "/context"):
        assert sx.get(f"{route}?q={'a' * 8192}&collection=sx_vec").status_code == 200, route
        invalid(sx.get(f"{route}?q={'a' * 8193}&collection=sx_vec"), "query", "q")


def test_max_query_chars_bounds_a_combined_search_and_a_view_exactly(sx: Client) -> None:
    """Spec: `MAX_QUERY_CHARS` (8,192 by default) — for a combined search's shared `q` and for the
    `q` a view fills from its parameters."""
    sources = [
        {"name": "a", "mode": "text", "scope": NOTES},
        {"name": "b", "mode": "recent", "scope": {"collections": ["sx_extra"]}},
    ]
    combined = {"sources": sources, "fuse": {"kind": "rrf"}}
    assert search(sx, {**combined, "q": "b" * 8192})["hits"] == []
    invalid(sx.post("/search", json={**combined, "q": "b" * 8193}), "q")
    assert ok(view_query(sx, "sx_context", {"entity": "e", "task": "c" * 8192}))["hits"] == []
    invalid(view_query(sx, "sx_context", {"entity": "e", "task": "c" * 8193}), "parameters", "task")


# --- MAX_RESPONSE_BYTES: the exact byte count, every route, and no touch --------------------------


LISTING = {"entity": "lister", "start": "2026-07-01T00:00:00Z", "end": "2026-08-01T00:00:00Z"}


@pytest.mark.parametrize(
    ("method", "path", "body"),
    [
        pytest.param("POST", "/views/sx_listing/query", LISTING, id="search-view"),
        pytest.param("POST", "/views/sx_walk/query", {"seed": "hub", "limit": 500}, id="graph-view"),
        pytest.param("POST", "/views/sx_orphans/query", {"limit": 500}, id="orphans-view"),
        # not GET /search: its default formula ages last_accessed, so two calls' scores (and
        # their digits) differ by the time between them; test_a_response_too_large_touches_nothing
        # covers its 409
    ],
)
def test_the_response_limit_is_the_exact_byte_count_on_every_route(
    sx: Client, sx_with: ClientFactory, method: str, path: str, body: Any
) -> None:
    """Spec: "`MAX_RESPONSE_BYTES` | Size of the whole JSON response, past which you get `409`";
    "The whole response is size-bounded" — a response of exactly the limit passes."""
    write(
        sx,
        *(note(f"row {i}", entity="lister", content={"starts_at": at(i + 1, 9)}) for i in range(3)),
        *(link("hub", "r", f"leaf{i}") for i in range(3)),
        *(part(f"p{i}") for i in range(3)),
        *(vec(f"alpha {i}") for i in range(3)),
    )
    unbounded = sx.request(method, path, json=body)
    assert unbounded.status_code == 200, unbounded.get_data(as_text=True)
    size = len(unbounded.get_data())
    touches_written(sx)
    assert sx_with(max_response_bytes=size).request(method, path, json=body).status_code == 200
    too_small = sx_with(max_response_bytes=size - 1).request(method, path, json=body)
    error(too_small, 409, "response_too_large")


@pytest.mark.parametrize(
    ("method", "path", "body"),
    [
        pytest.param("POST", "/search", {"mode": "recent", "include": ["text"]}, id="post-search"),
        pytest.param("GET", "/search?q=unread&collection=sx_vec", None, id="get-search"),
        pytest.param("POST", "/views/sx_context/query", {"entity": "e1", "task": "unread"}, id="view"),
    ],
)
def test_a_response_too_large_touches_nothing(
    sx: Client, sx_with: ClientFactory, method: str, path: str, body: Any
) -> None:
    """Spec: "Exceeding the limit does not silently drop results: the request fails with 409
    response_too_large"; "Afterwards, returned records have their "last read" timestamp updated"
    — a request that failed returned no records."""
    records = write(sx, note("unread " + "x" * 500), vec("unread " + "y" * 500))
    before = [fetch(sx, record)["last_accessed"] for record in records]
    small = sx_with(max_response_bytes=300)
    error(small.request(method, path, json=body), 409, "response_too_large")
    touches_written(small)
    assert [fetch(sx, record)["last_accessed"] for record in records] == before
