"""Conformance audit of the read side, over HTTP: statements of the spec no earlier suite pinned.

Every read route answers a client mistake with a `422` in the one error shape, never a `500`
(spec, Errors: "The request ... is invalid → 422"). Text PostgreSQL cannot store (a NUL character,
an unpaired surrogate) is such a mistake wherever it appears in a request.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.blackbox.support import ids
from tests.blackbox.support import invalid
from tests.blackbox.support import note
from tests.blackbox.support import search
from tests.blackbox.support import write
from tests.conftest import Client

# --- a scope finds its matches, however many better matches lie outside it ------------------------


LONE = "a long planning meeting where the yearly budget came up once among many other things"
# Spec, Scopes: "scope narrows a search to the records that should even be considered"; every
# proposal is re-checked, so a bounded proposal that holds only records outside the scope must not
# stand for the whole answer. CROWD exceeds the candidates of a default search (k 20 → 200).
CROWD = 250


def crowd(**values: Any) -> list[dict[str, Any]]:
    """CROWD short records that match `budget` better than LONE does."""
    record = {"collection": "sx_extra", "entity": "crowd", "type": "note", "text": "budget budget"}
    return [record | values for _ in range(CROWD)]


@pytest.mark.parametrize(
    ("scope", "lone"),
    [
        pytest.param({"collections": ["sx_notes"]}, note(LONE), id="collection"),
        pytest.param({"types": ["fact"]}, note(LONE, type="fact"), id="type"),
        pytest.param({"status": "draft"}, note(LONE, status="draft"), id="drafts"),
    ],
)
def test_a_search_finds_the_matches_of_its_scope_beside_a_crowd_outside_it(
    sx: Client, scope: dict[str, Any], lone: dict[str, Any]
) -> None:
    write(sx, *crowd())
    (lone_id,) = write(sx, lone)
    body = search(sx, {"q": "budget", "mode": "text", "scope": scope})
    assert ids(body) == [lone_id]


def test_superseded_values_never_crowd_out_the_current_ones(sx: Client) -> None:
    history = [note("budget budget", entity="crowd", key="plan", type="fact") for _ in range(CROWD)]
    *_, current = write(sx, *history)
    (lone_id,) = write(sx, note(LONE))
    body = search(sx, {"q": "budget", "mode": "text", "scope": {"collections": ["sx_notes"]}})
    assert sorted(ids(body)) == sorted([current, lone_id])


# --- GET /search and GET /context: every problem is located at the query parameter ----------------


# Design, errors: "details items carry a loc (JSON path)"; a GET request has no body, so its
# problems are at ["query", <parameter>] — as a missing `q` or an unknown parameter already are.
@pytest.mark.parametrize("route", ["/search", "/context"])
@pytest.mark.parametrize(
    ("query", "parameter"),
    [
        pytest.param("q=%20", "q", id="q-blank"),
        pytest.param("q=x&k=0", "k", id="k-0"),
        pytest.param("q=x&k=101", "k", id="k-101"),
        pytest.param("q=x&entity=", "entity", id="entity-empty"),
        pytest.param("q=x&collection=", "collection", id="collection-empty"),
        pytest.param("q=x&collection=nope", "collection", id="collection-unknown"),
        pytest.param("q=a%00b", "q", id="q-nul"),
    ],
)
def test_get_route_problems_are_located_at_the_query_parameter(
    sx: Client, route: str, query: str, parameter: str
) -> None:
    invalid(sx.get(f"{route}?{query}"), "query", parameter)


@pytest.mark.parametrize(
    ("query", "parameter"),
    [
        pytest.param("q=x&fence_tag=1bad", "fence_tag", id="fence-tag"),
        pytest.param("q=x&fence_preamble=%00", "fence_preamble", id="fence-preamble"),
    ],
)
def test_get_context_fence_problems_are_located_at_the_query_parameter(
    sx: Client, query: str, parameter: str
) -> None:
    invalid(sx.get(f"/context?{query}"), "query", parameter)
