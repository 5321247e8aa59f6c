"""Spec "Errors" (422 / 404 / 503 / 409) in the one error shape, and one search = one profile.

A second small catalog (`sx2_`) spreads collections over three search profiles: two PostgreSQL
profiles and a turbopuffer one whose engine is not available here.
"""

from __future__ import annotations

from typing import Any

from tests.blackbox.support import ids
from tests.blackbox.support import rejects
from tests.blackbox.support import search
from tests.blackbox.support import write
from tests.conftest import Client
from tests.helpers import error


def test_a_single_search_must_resolve_to_one_profile(spread: Client) -> None:
    rejects(
        spread,
        {"mode": "recent", "scope": {"collections": ["sx2_here", "sx2_there"]}},
        "scope",
        "collections",
    )
    rejects(spread, {"mode": "recent"}, "scope", "collections")  # an empty scope spans them too
    assert search(spread, {"mode": "recent", "scope": {"collections": ["sx2_there"]}})["profiles"] == [
        "sx_pg2"
    ]


def one(collection: str) -> dict[str, Any]:
    return {"collection": collection, "entity": "e", "type": "note", "text": "budget"}


def test_each_source_resolves_on_its_own_and_profiles_are_sorted(spread: Client) -> None:
    here, there = write(spread, one("sx2_here"), one("sx2_there"))
    body = search(
        spread,
        {
            "sources": [
                {"name": "b", "mode": "recent", "scope": {"collections": ["sx2_there"]}},
                {"name": "a", "mode": "recent", "scope": {"collections": ["sx2_here"]}},
                {"name": "c", "mode": "recent", "scope": {"collections": ["sx2_there"]}},
            ],
            "fuse": {"kind": "rrf"},
        },
    )
    assert body["profiles"] == ["pg_default", "sx_pg2"]
    assert set(ids(body)) == {here, there}
    assert [b["source"] for b in body["backend"]] == ["b", "a", "c"]


def test_views_list_every_profile_they_resolved_to(spread: Client) -> None:
    (entry,) = [v for v in spread.get("/views").get_json()["views"] if v["name"] == "sx2_both"]
    assert entry["profiles"] == ["pg_default", "sx_pg2"]
    body = spread.post("/views/sx2_both/query", json={}).get_json()
    assert body["profiles"] == ["pg_default", "sx_pg2"] and body["parameters"] == {}


def test_a_profile_whose_engine_is_unavailable_is_503(spread: Client) -> None:
    error(
        spread.post("/search", json={"mode": "text", "q": "x", "scope": {"collections": ["sx2_remote"]}}), 503
    )


def test_an_engine_that_cannot_run_the_mode_is_422(spread: Client) -> None:
    rejects(spread, {"mode": "recent", "scope": {"collections": ["sx2_remote"]}}, "mode")
