"""Scopes (spec "Scopes"): collections, entities (matched exactly), types, collection versions,
keyed, strict time bounds on `occurred_at` and derivation depth, in every mode; and a scope finds
its matches however many better matches lie outside it.
"""

from __future__ import annotations

from datetime import datetime
from datetime import timedelta
from typing import Any
from urllib.parse import quote

import pytest

from tests.blackbox.support import ago
from tests.blackbox.support import at
from tests.blackbox.support import ids
from tests.blackbox.support import item
from tests.blackbox.support import link
from tests.blackbox.support import listing
from tests.blackbox.support import matched_or_refused_at
from tests.blackbox.support import note
from tests.blackbox.support import part
from tests.blackbox.support import query
from tests.blackbox.support import recent_body
from tests.blackbox.support import rejected_at
from tests.blackbox.support import rejects
from tests.blackbox.support import scope_ids
from tests.blackbox.support import search
from tests.blackbox.support import seen
from tests.blackbox.support import vec
from tests.blackbox.support import write
from tests.conftest import Client
from tests.helpers import fetch
from tests.helpers import ok

# --- collections, entities, types, collection versions --------------------------------------------


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


def test_keyed_true_false_any(sx: Client) -> None:
    fact, event = write(sx, note("f", type="fact", key="risk"), note("e"))
    assert set(listing(sx)) == {fact, event}
    assert set(listing(sx, keyed="any")) == {fact, event}
    assert listing(sx, keyed=True) == [fact]
    assert listing(sx, keyed=False) == [event]
    rejects(sx, {"mode": "recent", "scope": {"keyed": "yes"}}, "scope", "keyed")


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


def test_scope_collections_entities_types(sx: Client) -> None:
    """scope: collections ("which drawers to open"), entities ("whose memory"), types."""
    a, b, c = write(
        sx,
        note("a", entity="maria"),
        note("b", entity="omar", type="event"),
        {"collection": "sx_extra", "entity": "maria", "type": "note", "text": "c"},
    )
    both = ["sx_notes", "sx_extra"]
    assert set(ids(search(sx, {"mode": "recent", "scope": {"collections": both}}))) == {a, b, c}
    assert set(ids(search(sx, {"mode": "recent", "scope": {"collections": ["sx_extra"]}}))) == {c}
    assert set(
        ids(search(sx, {"mode": "recent", "scope": {"collections": both, "entities": ["maria"]}}))
    ) == {a, c}
    assert scope_ids(sx, types=["event"]) == {b}
    assert scope_ids(sx, types=["event", "note"]) == {a, b}


def test_empty_scope_means_everything_in_ordinary_collections(sx: Client) -> None:
    """ "An empty scope means "everything this workspace can see" in ordinary collections.\""""
    a, c = write(sx, note("a"), {"collection": "sx_extra", "entity": "e", "type": "note", "text": "c"})
    assert {a, c} <= set(ids(search(sx, {"mode": "recent"})))


def test_scope_collection_versions(sx: Client) -> None:
    """ "collection_versions: {customer_events: [1]} # optionally: exact versions"."""
    base = {"collection": "sx_versioned", "entity": "e1", "type": "note"}
    old, new = write(sx, {**base, "collection_version": 1, "text": "v1"}, {**base, "text": "v2"})
    scope: dict[str, Any] = {"collections": ["sx_versioned"]}
    assert set(ids(search(sx, {"mode": "recent", "scope": scope}))) == {old, new}
    for version, expected in ((1, old), (2, new)):
        pinned = {**scope, "collection_versions": {"sx_versioned": [version]}}
        assert ids(search(sx, {"mode": "recent", "scope": pinned})) == [expected]


def test_scope_collection_versions_names_must_be_in_collections(sx: Client) -> None:
    """ "Any name in collection_versions must also appear in collections.\""""
    scope = {"collections": ["sx_notes"], "collection_versions": {"sx_versioned": [1]}}
    rejects(sx, {"mode": "recent", "scope": scope})
    rejects(sx, {"mode": "recent", "scope": {"collection_versions": {"sx_notes": [1]}}})


def test_scope_keyed(sx: Client) -> None:
    """ "keyed: ... true returns only named, updatable facts, false only things that happened, and any
    returns both.\""""
    event, fact = write(sx, note("event"), note("fact", type="fact", key="k1"))
    assert scope_ids(sx, keyed=True) == {fact}
    assert scope_ids(sx, keyed=False) == {event}
    assert scope_ids(sx, keyed="any") == {event, fact}
    assert scope_ids(sx) == {event, fact}


@pytest.mark.parametrize("key", ["collections", "entities", "types"])
def test_each_scope_list_is_unique_and_at_most_100(sx: Client, key: str) -> None:
    """ "collections, entities, and types are unique lists of up to 100 entries each.\""""
    values = {"collections": "sx_notes", "entities": "e1", "types": "note"}
    rejects(sx, {"mode": "recent", "scope": {key: [values[key], values[key]]}}, "scope", key)
    rejects(sx, {"mode": "recent", "scope": {key: [f"x{i}" for i in range(101)]}}, "scope", key)


def test_scope_lists_of_100_are_accepted(sx: Client) -> None:
    """ "unique lists of up to 100 entries each" — 100 is allowed."""
    (record,) = write(sx, note(entity="e99"))
    assert scope_ids(sx, entities=[f"e{i}" for i in range(100)]) == {record}


def test_pinned_collection_version_must_resolve(sx: Client) -> None:
    """ "every collection and pinned collection version resolves\""""
    scope = {"collections": ["sx_notes"], "collection_versions": {"sx_notes": [9]}}
    rejects(sx, {"mode": "recent", "scope": scope})


@pytest.mark.parametrize(
    "scope",
    [{"keyed": "yes"}, {"versions": "latest"}, {"depth_lte": "one"}],
    ids=["keyed", "versions", "depth"],
)
def test_scope_values_are_typed(sx: Client, scope: dict[str, Any]) -> None:
    """keyed: true | false | any; versions: current | all; depth_lte a number of links."""
    rejected_at(sx, {"mode": "recent", "scope": scope}, "scope", next(iter(scope)))


ENTITIES = ["maria", "Maria", "MARIA", "maria ", " maria", "ma ria", "maría", "Zoë", "zoë", "客户-7"]
MODES = ["text", "vector", "hybrid", "recent", "structured"]
"""Every search mode (spec "Choosing a search mode")."""


@pytest.mark.parametrize("mode", MODES)
def test_entities_match_exactly(sx: Client, mode: str) -> None:
    """Spec "Scopes": "entities … whose memory"; design §1: `entity` is "who/what the record is
    about" — stored as written (1–256 characters), so a scope names exactly those entities."""
    written_ids = write(sx, *(item(mode, f"budget {i}", entity=e) for i, e in enumerate(ENTITIES)))
    by_entity = dict(zip(ENTITIES, written_ids, strict=True))
    for entity in ENTITIES:
        assert seen(sx, mode, entities=[entity]) == {by_entity[entity]}, entity
    assert seen(sx, mode, entities=["maria", "Zoë"]) == {by_entity["maria"], by_entity["Zoë"]}
    assert seen(sx, mode, entities=["mari"]) == set()


def test_get_search_entity_matches_exactly(sx: Client) -> None:
    """Spec: `GET /search` takes "optional `entity`" (a one-entity scope of a hybrid search)."""
    written_ids = write(sx, *(vec(f"budget {i}", entity=e) for i, e in enumerate(ENTITIES)))
    for entity, record in zip(ENTITIES, written_ids, strict=True):
        body = ok(sx.get(f"/search?q=budget&k=100&entity={quote(entity)}"))
        assert ids(body) == [record], entity


# --- time bounds ----------------------------------------------------------------------------------


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


def test_scope_time_bounds_are_strict(sx: Client) -> None:
    """ "Both comparisons are strict: a record sitting exactly on a bound is excluded.\""""
    first, middle, last = write(
        sx, note("1", occurred_at=at(1)), note("2", occurred_at=at(2)), note("3", occurred_at=at(3))
    )
    assert scope_ids(sx, occurred_after=at(1), occurred_before=at(3)) == {middle}
    assert scope_ids(sx, occurred_after=at(1)) == {middle, last}
    assert scope_ids(sx, occurred_before=at(3)) == {first, middle}
    assert scope_ids(sx, occurred_after="2026-07-01T02:00:00+02:00") == {middle, last}


@pytest.mark.parametrize(
    "scope",
    [
        pytest.param({"occurred_after": "2026-07-01T00:00:00"}, id="after-naive"),
        pytest.param({"occurred_before": "2026-07-01T00:00:00"}, id="before-naive"),
        pytest.param({"occurred_after": at(2), "occurred_before": at(1)}, id="after-later"),
        pytest.param({"occurred_after": at(2), "occurred_before": at(2)}, id="after-equal"),
    ],
)
def test_scope_time_bound_rules(sx: Client, scope: dict[str, Any]) -> None:
    """ "Time bounds must include a timezone, and occurred_after must be earlier than occurred_before.\""""
    rejects(sx, {"mode": "recent", "scope": scope})


@pytest.mark.parametrize("mode", MODES)
def test_time_bounds_are_strict_to_the_microsecond(sx: Client, mode: str) -> None:
    """Spec "Scopes": "Both comparisons are strict: a record sitting exactly on a bound is
    excluded." — in every mode, one microsecond inside a bound is inside."""
    on_after, after_inside, middle, before_inside, on_before = write(
        sx,
        item(mode, "budget 1", occurred_at="2026-03-01T00:00:00Z"),
        item(mode, "budget 2", occurred_at="2026-03-01T00:00:00.000001Z"),
        item(mode, "budget 3", occurred_at="2026-03-15T12:00:00Z"),
        item(mode, "budget 4", occurred_at="2026-03-31T23:59:59.999999Z"),
        item(mode, "budget 5", occurred_at="2026-04-01T00:00:00Z"),
    )
    bounds = {"occurred_after": "2026-03-01T00:00:00Z", "occurred_before": "2026-04-01T00:00:00Z"}
    assert seen(sx, mode, **bounds) == {after_inside, middle, before_inside}
    # the same instants written with other offsets
    shifted = {"occurred_after": "2026-03-01T02:00:00+02:00", "occurred_before": "2026-03-31T19:00:00-05:00"}
    assert seen(sx, mode, **shifted) == {after_inside, middle, before_inside}
    assert seen(sx, mode, occurred_after="2026-03-31T23:59:59.999999Z") == {on_before}
    assert seen(sx, mode, occurred_before="2026-03-01T00:00:00.000001Z") == {on_after}
    assert seen(sx, mode, occurred_after="2026-02-28T23:59:59.999999Z") == {
        on_after,
        after_inside,
        middle,
        before_inside,
        on_before,
    }


@pytest.mark.parametrize("mode", MODES)
def test_time_bounds_read_occurred_at_not_created_at(sx: Client, mode: str) -> None:
    """Spec "Scopes": "occurred_after / occurred_before # time bounds" over when a record happened
    (design §1: `occurred_at` "when it happened"; `created_at` "when it was written")."""
    (past,) = write(sx, item(mode, "budget past", occurred_at="2020-06-01T00:00:00Z"))
    assert seen(sx, mode, occurred_before="2021-01-01T00:00:00Z") == {past}
    assert seen(sx, mode, occurred_after="2021-01-01T00:00:00Z") == set()


@pytest.mark.parametrize("mode", MODES)
def test_a_record_sits_exactly_on_the_bound_its_own_occurred_at_names(sx: Client, mode: str) -> None:
    """Spec "Scopes": "Both comparisons are strict: a record sitting exactly on a bound is
    excluded"; design §1: `occurred_at` "defaults to `created_at`" — the instant a hit reports
    (`include: occurred_at`) is the one the bounds compare, to the microsecond."""
    (record,) = write(sx, item(mode, "budget now"))
    (hit,) = search(sx, {**query(mode), "include": ["occurred_at"]})["hits"]
    moment = datetime.fromisoformat(hit["occurred_at"])
    assert moment == datetime.fromisoformat(fetch(sx, record)["created_at"])
    step = timedelta(microseconds=1)
    assert seen(sx, mode, occurred_after=hit["occurred_at"]) == set()
    assert seen(sx, mode, occurred_before=hit["occurred_at"]) == set()
    inside = {"occurred_after": (moment - step).isoformat(), "occurred_before": (moment + step).isoformat()}
    assert seen(sx, mode, **inside) == {record}


@pytest.mark.parametrize("bound", ["occurred_after", "occurred_before"])
def test_a_digit_string_is_not_a_time_bound(sx: Client, bound: str) -> None:
    """ "occurred_after: "2026-01-01T00:00:00Z" # time bounds, timezone required" and "Time bounds
    must include a timezone": a string of digits is no ISO timestamp and names no timezone."""
    rejects(sx, recent_body(scope={bound: "1767225600"}), "scope", bound)


AT_TEN = {"occurred_at": "2026-07-01T10:00:00Z"}
STARTS = {"content": {"starts_at": "2026-07-01T10:00:00.000001Z"}}
NOTES = {"collections": ["sx_notes"]}


def bounded(after: str | None = None, before: str | None = None, **starts_at: str) -> dict[str, Any]:
    """A recent search with strict time bounds and conditions `starts_at` on starts_at."""
    scope = {"occurred_after": after, "occurred_before": before}
    where = {"starts_at": starts_at} if starts_at else {}
    return recent_body(scope={**NOTES, **{key: value for key, value in scope.items() if value}}, where=where)


@pytest.mark.parametrize(
    ("record", "query", "found"),
    [
        pytest.param(AT_TEN, bounded(after="2026-07-01T15:30:00+05:30"), False, id="after-east"),
        pytest.param(AT_TEN, bounded(before="2026-07-01T06:00:00-04:00"), False, id="before-west"),
        pytest.param(AT_TEN, bounded(after="2026-07-01T15:29:59.999999+05:30"), True, id="after-1us"),
        pytest.param(AT_TEN, bounded(before="2026-07-01T10:00:00.000001Z"), True, id="before-1us"),
        pytest.param(AT_TEN, bounded(after="2026-07-02T00:00:00+14:00"), False, id="after-plus-14"),
        pytest.param(AT_TEN, bounded(before="2026-06-30T22:00:00-12:00"), False, id="before-minus-12"),
        pytest.param(STARTS, bounded(gt="2026-07-01T12:00:00.000001+02:00"), False, id="gt-same-instant"),
        pytest.param(STARTS, bounded(gte="2026-07-01T12:00:00.000001+02:00"), True, id="gte-same-instant"),
        pytest.param(STARTS, bounded(lt="2026-07-01T05:00:00.000001-05:00"), False, id="lt-same-instant"),
        pytest.param(STARTS, bounded(lte="2026-07-01T05:00:00.000001-05:00"), True, id="lte-same-instant"),
        pytest.param(STARTS, bounded(gt="2026-07-01T10:00:00Z"), True, id="gt-1us-earlier"),
        pytest.param(STARTS, bounded(lt="2026-07-01T10:00:00.000002Z"), True, id="lt-1us-later"),
    ],
)
def test_time_bounds_compare_instants_across_offsets(
    sx: Client, record: dict[str, Any], query: dict[str, Any], found: bool
) -> None:
    """ "Both comparisons are strict: a record sitting exactly on a bound is excluded" (scope) and
    "`gt`, `gte`, `lt`, `lte` | greater/less than (or equal) | numbers and timestamps" (where): a
    bound written in another offset, to the microsecond, is the same instant."""
    (written,) = write(sx, note(**record))
    assert ids(search(sx, query)) == ([written] if found else [])


def test_a_fractional_second_on_the_record_counts(sx: Client) -> None:
    """ "Both comparisons are strict": a record one microsecond after the bound is not on it."""
    (record,) = write(sx, note(occurred_at="2026-07-01T10:00:00.000001Z"))
    assert ids(search(sx, recent_body(scope={"occurred_after": "2026-07-01T12:00:00+02:00"}))) == [record]
    assert ids(search(sx, recent_body(scope={"occurred_before": "2026-07-01T10:00:00.000001+00:00"}))) == []


def test_after_equal_to_before_in_other_offsets_is_422(sx: Client) -> None:
    """ "occurred_after must be earlier than occurred_before": the same instant written in two
    offsets is not earlier."""
    scope = {"occurred_after": "2026-07-01T12:00:00+02:00", "occurred_before": "2026-07-01T10:00:00Z"}
    rejects(sx, recent_body(scope=scope))


@pytest.mark.parametrize(
    "scope",
    [
        pytest.param({"occurred_after": "0001-01-01T00:00:00+23:59"}, id="after-year-1-east"),
        pytest.param({"occurred_before": "9999-12-31T23:59:59-23:59"}, id="before-year-9999-west"),
    ],
)
def test_time_bounds_at_the_ends_of_the_calendar(sx: Client, scope: dict[str, str]) -> None:
    """ "occurred_after / occurred_before … time bounds, timezone required": any valid timestamp with
    a timezone is a bound, even one whose UTC instant falls outside years 1-9999."""
    (record,) = write(sx, note(occurred_at="2026-07-01T10:00:00Z"))
    assert ids(search(sx, recent_body(scope=scope))) == [record]


# --- derivation depth -----------------------------------------------------------------------------


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


def test_scope_depth_lte(sx: Client) -> None:
    """ "records you ingested are depth 0, records derived from them are deeper"; depth_lte limits it."""
    (root,) = write(sx, note("root"))
    (child,) = write(sx, note("child", derived_from=[root]))
    (grandchild,) = write(sx, note("grandchild", derived_from=[child]))
    assert scope_ids(sx, depth_lte=0) == {root}
    assert scope_ids(sx, depth_lte=1) == {root, child}
    assert scope_ids(sx, depth_lte=2) == {root, child, grandchild}


SEMANTIC = ("vector", "hybrid")
"""Modes that need embeddings: they read `sx_vec`; the others read `sx_notes`."""


@pytest.mark.parametrize("mode", MODES)
def test_depth_lte_in_every_mode(sx: Client, mode: str) -> None:
    """Spec "Scopes": "records you ingested are depth 0, records derived from them are deeper";
    "depth_lte: 0 means 'only original evidence, nothing machine-written'"; design §1: depth is
    "1 + max(depth of derived_from)"."""
    (origin,) = write(sx, item(mode, "budget evidence"))
    elsewhere = item("text" if mode in SEMANTIC else "vector", "budget elsewhere")  # another collection
    (other_origin,) = write(sx, elsewhere)
    (derived,) = write(sx, item(mode, "budget derived", derived_from=[origin, other_origin]))
    (deeper,) = write(sx, item(mode, "budget deeper", derived_from=[derived, origin]))
    assert seen(sx, mode, depth_lte=0) == {origin}
    assert seen(sx, mode, depth_lte=1) == {origin, derived}
    assert seen(sx, mode, depth_lte=2) == {origin, derived, deeper}
    assert seen(sx, mode) >= {origin, derived, deeper}


def test_depth_lte_zero_leaves_out_automatic_links(sx: Client) -> None:
    """Design §1 Graph data: an automatic link is written with "`derived_from: [node id]`, `depth:
    node depth + 1`"; spec: "depth_lte: 0 means 'only original evidence, nothing
    machine-written'" — a link written directly is depth 0."""
    write(sx, part("engine", ["fuel"]))
    (direct,) = write(sx, link("pump", "needs", "valve"))
    scope = {"collections": ["sx_links"], "depth_lte": 0}
    assert ids(search(sx, {"mode": "recent", "k": 100, "scope": scope})) == [direct]
    assert ids(search(sx, {"mode": "text", "q": "needs", "k": 100, "scope": scope})) == [direct]
    everything = search(sx, {"mode": "recent", "k": 100, "scope": {"collections": ["sx_links"]}})
    assert len(everything["hits"]) == 2


def test_a_large_depth_bound_is_answered_or_blamed_on_itself(sx: Client) -> None:
    """Spec, Scopes: "depth_lte filters by how far a record is from original evidence: records you
    ingested are depth 0" — a bound no record reaches keeps every record."""
    (record,) = write(sx, note())
    response = sx.post("/search", json={"mode": "recent", "scope": {"depth_lte": 2**31}})
    assert matched_or_refused_at(response, ["scope", "depth_lte"]) in ([record], None)


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
