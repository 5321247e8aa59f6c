"""Search profiles (spec "How a search actually runs", "Errors"): one search runs in one profile,
each source of a combined search resolves on its own, `profiles` lists them sorted, and an
engine that is not available is a 503.
"""

from __future__ import annotations

from typing import Any

import pytest
from flask import Flask

from memseek.runtime import Runtime
from tests.blackbox.conftest import environ
from tests.blackbox.fusion_support import by_id
from tests.blackbox.fusion_support import combined
from tests.blackbox.support import ids
from tests.blackbox.support import note
from tests.blackbox.support import rejects
from tests.blackbox.support import search
from tests.blackbox.support import write
from tests.conftest import Client
from tests.conftest import Tenant
from tests.helpers import app_for
from tests.helpers import error
from tests.helpers import fixture_catalog
from tests.helpers import listed_views
from tests.helpers import ok
from tests.helpers import runtime_for
from tests.helpers import view_query
from tests.openai_server import OpenAIServer

# --- one search, one profile ----------------------------------------------------------------------


@pytest.fixture(scope="module")
def profiles_app(
    runtime: Runtime, sx_server: OpenAIServer, tmp_path_factory: pytest.TempPathFactory
) -> Flask:
    return app_for(
        runtime_for(
            runtime, fixture_catalog(tmp_path_factory.mktemp("sx2-catalog"), "sx2"), environ(sx_server)
        )
    )


@pytest.fixture
def spread(profiles_app: Flask, tenant: Tenant) -> Client:
    return Client(profiles_app.test_client(), tenant)


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


def test_one_source_must_resolve_to_one_profile(spread: Client) -> None:
    err = rejects(
        spread,
        {
            "sources": [{"name": "s", "mode": "recent", "scope": {"collections": ["sx2_here", "sx2_there"]}}],
            "fuse": {"kind": "rrf"},
        },
    )
    assert ["sources", 0, "scope", "collections"] in [d["loc"] for d in err["details"]]


NOTES = {"collections": ["sx_notes"]}


def test_profiles_are_sorted_and_deduplicated(sx: Client) -> None:
    body = search(
        sx,
        {
            "q": "x",
            "sources": [
                {"name": "a", "mode": "text", "scope": NOTES},
                {"name": "b", "mode": "recent", "scope": {"collections": ["sx_extra"]}},
            ],
            "fuse": {"kind": "rrf"},
        },
    )
    assert body["profiles"] == ["pg_default"]


FAR = {"collections": ["c5_far_notes"]}


def far(text: str = "far", **values: Any) -> dict[str, Any]:
    """A record of c5_far_notes (indexed in the c5_far profile)."""
    return {"collection": "c5_far_notes", "entity": "e", "type": "note", "text": text, **values}


def test_sources_may_read_different_profiles(c5: Client) -> None:
    """ "A single search must resolve to exactly one search profile. If leaving collections empty
    would span collections indexed in different places, … split the request into several
    searches" and "profiles: The search setups actually used, sorted and deduplicated"."""
    (near,) = write(c5, note("near"))
    (away,) = write(c5, far())
    body = search(
        c5,
        combined(
            {"name": "near", "mode": "recent", "scope": NOTES},
            {"name": "far", "mode": "recent", "scope": FAR, "weight": 2},
            {"name": "again", "mode": "recent", "scope": FAR},
        ),
    )
    assert ids(body) == [away, near]
    assert body["profiles"] == ["c5_far", "pg_default"]
    assert [(b["source"], b["name"]) for b in body["backend"]] == [
        ("near", "pg"),
        ("far", "pg"),
        ("again", "pg"),
    ]
    assert by_id(body)[away]["rank_score"] == pytest.approx(2 / 61 + 1 / 61)


@pytest.mark.parametrize(
    ("body", "loc"),
    [
        pytest.param(
            combined(
                {"name": "both", "mode": "recent", "scope": {"collections": ["sx_notes", "c5_far_notes"]}}
            ),
            ("sources", 0),
            id="one-source-across-profiles",
        ),
        pytest.param(
            {"mode": "recent", "scope": {"collections": ["sx_notes", "c5_far_notes"]}},
            ("scope",),
            id="one-search-across-profiles",
        ),
    ],
)
def test_one_search_reads_one_profile(c5: Client, body: dict[str, Any], loc: tuple[Any, ...]) -> None:
    """ "Each source must name its collections explicitly, and all collections in one source must be
    indexed in the same place" and "A single search must resolve to exactly one search profile"."""
    err = rejects(c5, body)
    assert any(d["loc"][: len(loc)] == list(loc) for d in err["details"]), err["details"]


def test_a_view_whose_sources_run_in_two_profiles_lists_both(c5: Client) -> None:
    """ "profiles shows which search setups it resolved to. A search view can list several profiles
    when its sources run independently"; its response reports "The search setups actually
    used"."""
    entry = listed_views(c5)[("c5_split", 1)]
    assert entry["profiles"] == ["c5_far", "pg_default"]
    assert sorted(entry["collections"]) == ["c5_far_notes", "sx_notes"]
    write(c5, note("near"), far())
    body = ok(view_query(c5, "c5_split", {}))
    assert body["profiles"] == ["c5_far", "pg_default"]
    assert [b["source"] for b in body["backend"]] == ["near", "far"]
