"""Spec "Scopes": which records are eligible at all."""

from __future__ import annotations

from typing import Any

import pytest

from tests.blackbox.support import ago
from tests.blackbox.support import ids
from tests.blackbox.support import link
from tests.blackbox.support import listing
from tests.blackbox.support import note
from tests.blackbox.support import part
from tests.blackbox.support import rejects
from tests.blackbox.support import search
from tests.blackbox.support import vec
from tests.blackbox.support import write
from tests.conftest import Client


def test_an_empty_scope_reads_every_ordinary_collection(sx: Client) -> None:
    written = write(sx, note(), {"collection": "sx_extra", "entity": "e", "type": "note", "text": "x"})
    assert set(listing(sx)) == set(written)
    assert set(ids(search(sx, {"mode": "recent", "k": 100}))) == set(written)


def test_collections_entities_and_types(sx: Client) -> None:
    a, b, c, _ = write(
        sx,
        note(entity="maria", type="event"),
        note(entity="maria", type="note"),
        {"collection": "sx_extra", "entity": "maria", "type": "note", "text": "x"},
        note(entity="john", type="event"),
    )
    assert set(listing(sx, collections=["sx_notes"], entities=["maria"])) == {a, b}
    assert set(listing(sx, entities=["maria"], types=["note"])) == {b, c}
    assert set(listing(sx, collections=["sx_notes", "sx_extra"], entities=["maria"])) == {a, b, c}


@pytest.mark.parametrize("name", ["collections", "entities", "types"])
def test_scope_lists_are_unique_and_at_most_100(sx: Client, name: str) -> None:
    rejects(sx, {"mode": "recent", "scope": {name: ["sx_notes", "sx_notes"]}}, "scope", name)
    rejects(sx, {"mode": "recent", "scope": {name: [f"v{i}" for i in range(101)]}}, "scope", name)


def test_a_hundred_entities_are_fine(sx: Client) -> None:
    (record,) = write(sx, note(entity="v99"))
    assert listing(sx, entities=[f"v{i}" for i in range(100)]) == [record]


def test_unknown_collection_is_invalid(sx: Client) -> None:
    rejects(sx, {"mode": "recent", "scope": {"collections": ["sx_nowhere"]}}, "scope", "collections", 0)


def test_collection_versions_pin_exact_versions(sx: Client) -> None:
    v1, v2 = write(
        sx,
        {"collection": "sx_versioned", "collection_version": 1, "entity": "e", "type": "note", "text": "a"},
        {"collection": "sx_versioned", "entity": "e", "type": "note", "text": "b"},
    )
    assert set(listing(sx, collections=["sx_versioned"])) == {v1, v2}
    assert listing(sx, collections=["sx_versioned"], collection_versions={"sx_versioned": [1]}) == [v1]
    assert listing(sx, collections=["sx_versioned"], collection_versions={"sx_versioned": [2]}) == [v2]


@pytest.mark.parametrize(
    ("scope", "loc"),
    [
        pytest.param({"collection_versions": {"sx_versioned": [1]}}, ("scope",), id="not-in-collections"),
        pytest.param(
            {"collections": ["sx_versioned"], "collection_versions": {"sx_versioned": [3]}},
            ("scope",),
            id="unknown-version",
        ),
        pytest.param(
            {"collections": ["sx_versioned"], "collection_versions": {"sx_versioned": [0]}},
            ("scope", "collection_versions", "sx_versioned"),
            id="not-positive",
        ),
    ],
)
def test_collection_versions_must_resolve(sx: Client, scope: dict[str, Any], loc: tuple[str, ...]) -> None:
    err = rejects(sx, {"mode": "recent", "scope": scope})
    assert any(d["loc"][: len(loc)] == list(loc) for d in err["details"]), err


def test_status_active_draft_all(sx: Client) -> None:
    active, draft = write(sx, note("a"), note("d", status="draft"))
    assert listing(sx) == [active]
    assert listing(sx, status="active") == [active]
    assert listing(sx, status="draft") == [draft]
    assert set(listing(sx, status="all")) == {active, draft}
    rejects(sx, {"mode": "recent", "scope": {"status": "live"}}, "scope", "status")


def test_keyed_true_false_any(sx: Client) -> None:
    fact, event = write(sx, note("f", type="fact", key="risk"), note("e"))
    assert set(listing(sx)) == {fact, event}
    assert set(listing(sx, keyed="any")) == {fact, event}
    assert listing(sx, keyed=True) == [fact]
    assert listing(sx, keyed=False) == [event]
    rejects(sx, {"mode": "recent", "scope": {"keyed": "yes"}}, "scope", "keyed")


def test_versions_current_hides_superseded_values(sx: Client) -> None:
    (old,) = write(sx, note("risk low", type="fact", key="risk"))
    (new,) = write(sx, note("risk high", type="fact", key="risk"))
    assert listing(sx) == [new]
    assert listing(sx, versions="current") == [new]
    assert set(listing(sx, versions="all")) == {old, new}
    rejects(sx, {"mode": "recent", "scope": {"versions": "latest"}}, "scope", "versions")


def test_status_all_shows_current_active_and_current_draft(sx: Client) -> None:
    active, draft = write(
        sx, note("live", type="fact", key="k"), note("proposed", type="fact", key="k", status="draft")
    )
    assert set(listing(sx, status="all")) == {active, draft}


def test_a_newer_value_still_processing_hides_the_older_one(sx: Client) -> None:
    (old,) = write(sx, vec("risk low", type="fact", key="risk"))
    assert listing(sx, collections=["sx_vec"]) == [old]
    pending = {"collection": "sx_vec", "entity": "e1", "type": "fact", "key": "risk", "text": "risk high"}
    response = sx.post("/records", json={"records": [pending]})  # nobody embeds it: stays pending
    assert response.status_code == 201 and response.get_json()["records"][0]["processing"] == "pending"
    assert listing(sx, collections=["sx_vec"]) == []
    assert listing(sx, collections=["sx_vec"], versions="all") == [old]


def test_occurred_bounds_are_strict(sx: Client) -> None:
    early, middle, late = write(
        sx,
        note(occurred_at="2026-01-01T00:00:00Z"),
        note(occurred_at="2026-01-15T00:00:00Z"),
        note(occurred_at="2026-02-01T00:00:00Z"),
    )
    bounds = {"occurred_after": "2026-01-01T00:00:00Z", "occurred_before": "2026-02-01T00:00:00Z"}
    assert listing(sx, **bounds) == [middle]
    assert set(listing(sx, occurred_after="2025-12-31T23:59:59Z")) == {early, middle, late}
    assert listing(sx, occurred_before="2026-01-01T00:00:01+00:00") == [early]
    assert listing(sx, occurred_after="2026-01-31T20:00:00-05:00") == []  # = 2026-02-01T01:00Z


@pytest.mark.parametrize(
    "scope",
    [
        pytest.param({"occurred_after": "2026-01-01T00:00:00"}, id="after-no-timezone"),
        pytest.param({"occurred_before": "2026-01-01"}, id="before-date-only"),
        pytest.param({"occurred_after": 1767225600}, id="epoch-number"),
        pytest.param(
            {"occurred_after": "2026-02-01T00:00:00Z", "occurred_before": "2026-01-01T00:00:00Z"},
            id="after-later-than-before",
        ),
        pytest.param(
            {"occurred_after": "2026-01-01T00:00:00Z", "occurred_before": "2026-01-01T00:00:00Z"},
            id="empty-range",
        ),
    ],
)
def test_time_bounds_need_a_timezone_and_an_order(sx: Client, scope: dict[str, Any]) -> None:
    rejects(sx, {"mode": "recent", "scope": scope})


def test_depth_lte_limits_how_derived_records_may_be(sx: Client) -> None:
    (origin,) = write(sx, note("evidence"))
    (derived,) = write(sx, note("derived", derived_from=[origin]))
    (deeper,) = write(sx, note("deeper", derived_from=[derived]))
    assert listing(sx, depth_lte=0) == [origin]
    assert set(listing(sx, depth_lte=1)) == {origin, derived}
    assert set(listing(sx)) == {origin, derived, deeper}
    (hit,) = search(sx, {"mode": "recent", "scope": {"depth_lte": 0}, "include": ["depth"]})["hits"]
    assert hit["depth"] == 0
    rejects(sx, {"mode": "recent", "scope": {"depth_lte": -1}}, "scope", "depth_lte")


def test_retracted_records_are_never_returned(sx: Client) -> None:
    kept, gone = write(sx, note("kept"), note("gone"))
    assert sx.post(f"/records/{gone}/retract", json={"reason": "wrong"}).status_code == 200
    assert listing(sx) == [kept]
    assert listing(sx, versions="all", status="all") == [kept]


def test_retracting_the_current_value_makes_the_previous_one_current(sx: Client) -> None:
    (old,) = write(sx, note("v1", type="fact", key="k"))
    (new,) = write(sx, note("v2", type="fact", key="k"))
    sx.post(f"/records/{new}/retract", json={"reason": "wrong"})
    assert listing(sx) == [old]


def test_scope_rejects_unknown_types(sx: Client) -> None:
    rejects(
        sx, {"mode": "recent", "scope": {"collections": ["sx_extra"], "types": ["fact"]}}, "scope", "types", 0
    )


def test_recent_candidates_honour_the_scope(sx: Client) -> None:
    """A selective scope still finds its records behind many newer ones."""
    (target,) = write(sx, note("old one", entity="needle", occurred_at=ago(100)))
    write(sx, *(note(f"n{i}", occurred_at=ago(i)) for i in range(150)))
    assert listing(sx, entities=["needle"]) == [target]


def test_an_empty_scope_leaves_out_graph_links(sx: Client) -> None:
    (event,) = write(sx, note("budget depends"))
    (node,) = write(sx, part("engine", ["fuel"]))  # also writes an automatic link
    (direct,) = write(sx, link("a", "depends", "b"))
    assert set(listing(sx)) == {event, node}
    assert ids(search(sx, {"mode": "text", "q": "depends"})) == [event]
    named = listing(sx, collections=["sx_links"])  # named explicitly, links are searchable
    assert direct in named and len(named) == 2
