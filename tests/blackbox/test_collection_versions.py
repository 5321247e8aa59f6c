"""Collection versions and declared fields over time (design §1 "Collections": every field read
uses the declaration of the version a record was written under; spec "Typed filters",
"Ordering and ties", "What comes back"). Records of `av6_ev` v1 are written by an app over the
old catalog; a new app over the catalog that gained v2 reads both.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

import pytest

from memseek.runtime import Runtime
from tests.blackbox.design_support import current_flags
from tests.blackbox.design_support import rec
from tests.blackbox.design_support import retract
from tests.blackbox.support import ids
from tests.blackbox.support import rejects
from tests.blackbox.support import search
from tests.blackbox.support import write
from tests.conftest import Client
from tests.conftest import Tenant
from tests.conftest import client_for
from tests.helpers import locs
from tests.helpers import ok
from tests.helpers import post_records
from tests.helpers import written_ids

# --- reading each record with its own version -----------------------------------------------------


def scope(*versions: int, collection: str = "av6_ev") -> dict[str, Any]:
    pinned = {"collection_versions": {collection: list(versions)}} if versions else {}
    return {"collections": [collection], **pinned}


def listing(client: Client, *versions: int, **body: Any) -> dict[str, Any]:
    """A `recent` search of av6_ev (its versions pinned when given), k 100."""
    return search(client, {"mode": "recent", "scope": scope(*versions), "k": 100, **body})


def ev(text: str, content: dict[str, Any], **values: Any) -> dict[str, Any]:
    return {"collection": "av6_ev", "entity": "e", "type": "note", "text": text, "content": content, **values}


@pytest.fixture
def new(av6_new_runtime: Runtime, tenant: Tenant) -> Client:
    return client_for(av6_new_runtime, tenant)


@pytest.fixture
def old(av6_old_runtime: Runtime, tenant: Tenant) -> Client:
    return client_for(av6_old_runtime, tenant)


@pytest.fixture
def moved(old: Client, new: Client) -> dict[str, str]:
    """Records with `channel` at both v1's path (`channel`) and v2's (`meta.channel`), or one of them."""
    both = {"channel": "email", "meta": {"channel": "call"}}
    (v1_both, v1_nested) = write(old, ev("v1 both", both), ev("v1 nested", {"meta": {"channel": "chat"}}))
    (v2_both, v2_top) = write(new, ev("v2 both", both), ev("v2 top", {"channel": "fax"}))
    return {"v1_both": v1_both, "v1_nested": v1_nested, "v2_both": v2_both, "v2_top": v2_top}


def test_records_written_before_v2_keep_their_version(new: Client, moved: dict[str, str]) -> None:
    """Design §1 Records: `collection_version` is "the collection version the record was written
    under (the active one unless the writer pins a version)"."""
    body = listing(new, include=["collection_version"])
    versions = {hit["id"]: hit["collection_version"] for hit in body["hits"]}
    assert versions == {moved["v1_both"]: 1, moved["v1_nested"]: 1, moved["v2_both"]: 2, moved["v2_top"]: 2}


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        pytest.param("email", {"v1_both"}, id="v1-path"),
        pytest.param("call", {"v2_both"}, id="v2-path"),
        pytest.param("chat", set(), id="v2-path-on-a-v1-record"),
        pytest.param("fax", set(), id="v1-path-on-a-v2-record"),
    ],
)
def test_where_reads_each_record_with_its_own_version(
    new: Client, moved: dict[str, str], value: str, expected: set[str]
) -> None:
    """Design §1: "every field read uses the declaration of *that* version"; spec Typed filters:
    "every condition is re-checked against the system of record"."""
    names = {record_id: name for name, record_id in moved.items()}
    body = listing(new, where={"channel": {"eq": value}})
    assert {names[i] for i in ids(body)} == expected


def test_exists_reads_each_record_with_its_own_version(new: Client, moved: dict[str, str]) -> None:
    """Spec Typed filters: "`exists` | the value is present (`true`) or absent (`false`)", read with
    the record's own version's path (design §1)."""
    body = listing(new, where={"channel": {"exists": False}})
    assert set(ids(body)) == {moved["v1_nested"], moved["v2_top"]}


def fields_of(body: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {hit["id"]: hit["fields"] for hit in body["hits"]}


def test_fields_of_a_moved_path_are_null_where_the_own_version_finds_nothing(
    new: Client, moved: dict[str, str]
) -> None:
    """Spec What comes back: "Each value is read using the declaration stored with that record's
    exact collection version … a value that is not present comes back as null"."""
    assert fields_of(listing(new, fields=["channel"])) == {
        moved["v1_both"]: {"channel": "email"},
        moved["v1_nested"]: {"channel": None},
        moved["v2_both"]: {"channel": "call"},
        moved["v2_top"]: {"channel": None},
    }


def ordered(
    client: Client, field: str, direction: str, *versions: int, collection: str = "av6_ev"
) -> list[str]:
    body = {
        "mode": "structured",
        "scope": scope(*versions, collection=collection),
        "order_by": [{"field": field, "direction": direction}],
        "k": 100,
    }
    return ids(search(client, body))


@pytest.mark.parametrize(
    ("direction", "expected"),
    [
        pytest.param("asc", ["v2_both", "v1_both", "v1_nested", "v2_top"], id="asc"),
        pytest.param("desc", ["v1_both", "v2_both", "v1_nested", "v2_top"], id="desc"),
    ],
)
def test_order_by_reads_each_record_with_its_own_version(
    new: Client, moved: dict[str, str], direction: str, expected: list[str]
) -> None:
    """Spec Ordering and ties: "Missing values always sort last, including in descending sorts.
    Remaining ties use ingestion order ascending" — a value is missing when the record's own
    version finds none ("call" < "email"; v1_nested was written before v2_top)."""
    assert ordered(new, "channel", direction) == [moved[name] for name in expected]


def instant(value: str) -> datetime:
    return datetime.fromisoformat(value.replace("Z", "+00:00"))


@pytest.fixture
def dated(old: Client, new: Client) -> dict[str, str]:
    """`when`: v1 reads `when`; v2 reads `at`, falling back to `when`."""
    (v1,) = write(old, ev("v1", {"when": "2026-07-03T00:00:00Z", "at": "2026-07-01T00:00:00Z"}))
    (fallback, main_path, neither) = write(
        new,
        ev("v2 fallback", {"when": "2026-07-04T02:00:00+02:00"}),
        ev("v2 path", {"at": "2026-07-02T00:00:00Z", "when": "2026-07-09T00:00:00Z"}),
        ev("v2 neither", {"time": "2026-07-05T00:00:00Z"}),
    )
    return {"v1": v1, "fallback": fallback, "path": main_path, "neither": neither}


def test_a_fallback_path_applies_only_to_the_version_declaring_it(new: Client, dated: dict[str, str]) -> None:
    """Design §1: "fallback_paths: [meta.channel]   # tried in order when `path` is absent", and
    "every field read uses the declaration of *that* version": the v1 record is read at `when`
    although v2 would read its `at`."""
    got = fields_of(listing(new, fields=["when"]))
    values = {name: got[record_id]["when"] for name, record_id in dated.items()}
    assert values["neither"] is None
    assert {name: instant(v) for name, v in values.items() if v is not None} == {
        "v1": instant("2026-07-03T00:00:00Z"),
        "fallback": instant("2026-07-04T00:00:00Z"),
        "path": instant("2026-07-02T00:00:00Z"),
    }


@pytest.mark.parametrize(
    ("condition", "expected"),
    [
        pytest.param({"lt": "2026-07-02T12:00:00Z"}, {"path"}, id="before-the-2nd-noon"),
        pytest.param({"gte": "2026-07-03T00:00:00+00:00"}, {"v1", "fallback"}, id="from-the-3rd"),
        pytest.param({"eq": "2026-07-04T00:00:00Z"}, {"fallback"}, id="fallback-instant"),
        pytest.param({"gt": "2026-07-08T00:00:00Z"}, set(), id="the-v2-records-when-is-not-read"),
        pytest.param({"lte": "2026-07-01T00:00:00Z"}, set(), id="the-v1-records-at-is-not-read"),
    ],
)
def test_datetime_filters_read_each_version_and_its_fallbacks(
    new: Client, dated: dict[str, str], condition: dict[str, str], expected: set[str]
) -> None:
    """Spec Typed filters: "`gt`, `gte`, `lt`, `lte` | greater/less than (or equal) | numbers and
    timestamps", each record read with its own version's path and fallbacks (design §1)."""
    names = {record_id: name for name, record_id in dated.items()}
    assert {names[i] for i in ids(listing(new, where={"when": condition}))} == expected


def test_datetime_order_reads_each_version_and_its_fallbacks(new: Client, dated: dict[str, str]) -> None:
    """Spec Ordering and ties: each `order_by` field honours its direction, missing values last."""
    expected = ["fallback", "v1", "path", "neither"]
    assert ordered(new, "when", "desc") == [dated[name] for name in expected]


def test_a_string_array_read_through_a_fallback_in_v2_only(old: Client, new: Client) -> None:
    """Design §1: fallback paths are tried "when `path` is absent", in the record's own version:
    v1 reads `info.tags`; v2 reads `tags`, then `info.tags`."""
    (v1,) = write(old, ev("v1", {"tags": ["x"], "info": {"tags": ["y"]}}))
    (v2_top, v2_info) = write(new, ev("v2 top", {"tags": ["x"]}), ev("v2 info", {"info": {"tags": ["y"]}}))
    assert set(ids(listing(new, where={"tags": {"contains_any": ["y"]}}))) == {v1, v2_info}
    assert set(ids(listing(new, where={"tags": {"contains_all": ["x"]}}))) == {v2_top}
    assert fields_of(listing(new, fields=["tags"])) == {
        v1: {"tags": ["y"]},
        v2_top: {"tags": ["x"]},
        v2_info: {"tags": ["y"]},
    }


def test_a_record_pinned_to_v1_is_checked_and_read_as_v1(new: Client) -> None:
    """Design §1 Records: the version is "the active one unless the writer pins a version"; "On
    write, every declared field present in `content` … must have the declared type" — of that
    version: `kind` is a string in v1 and an integer in v2."""
    content = {"channel": "email", "meta": {"channel": "call"}, "kind": "word"}
    assert locs(post_records(new, ev("unpinned", content))) == [["records", 0, "content", "kind"]]
    (pinned,) = write(new, ev("pinned", content, collection_version=1))
    body = listing(new, 1, include=["collection_version"], fields=["channel", "kind"])
    (hit,) = body["hits"]
    assert (hit["id"], hit["collection_version"]) == (pinned, 1)
    assert hit["fields"] == {"channel": "email", "kind": "word"}
    assert ids(listing(new, 1, where={"kind": {"eq": "word"}})) == [pinned]


# --- which versions a search can reach ------------------------------------------------------------


def test_scope_collection_versions_pins_exact_versions(new: Client, moved: dict[str, str]) -> None:
    """Spec Scopes: "collection_versions: {customer_events: [1]}   # optionally: exact versions"."""
    assert set(ids(listing(new, 1))) == {moved["v1_both"], moved["v1_nested"]}
    assert set(ids(listing(new, 2))) == {moved["v2_both"], moved["v2_top"]}
    assert set(ids(listing(new, 1, 2))) == set(moved.values())


@pytest.mark.parametrize(
    ("body", "loc"),
    [
        pytest.param({"where": {"tier": {"eq": "gold"}}}, ("where", "tier"), id="where-v2-only-field"),
        pytest.param(
            {"mode": "structured", "order_by": [{"field": "tier"}]},
            ("order_by", 0, "field"),
            id="order-by-v2-only-field",
        ),
        pytest.param({"fields": ["tier"]}, ("fields", 0), id="fields-v2-only-field"),
        pytest.param({"where": {"kind": {"eq": "word"}}}, ("where", "kind"), id="where-type-changed-string"),
        pytest.param({"where": {"kind": {"eq": 3}}}, ("where", "kind"), id="where-type-changed-integer"),
        pytest.param({"where": {"kind": {"exists": True}}}, ("where", "kind"), id="exists-type-changed"),
        pytest.param(
            {"mode": "structured", "order_by": [{"field": "kind"}]},
            ("order_by", 0, "field"),
            id="order-by-type-changed",
        ),
        pytest.param({"where": {"hidden": {"eq": "x"}}}, ("where", "hidden"), id="filterable-in-v2-only"),
        pytest.param(
            {"mode": "structured", "order_by": [{"field": "hidden"}]},
            ("order_by", 0, "field"),
            id="sortable-in-v2-only",
        ),
        pytest.param({"fields": ["hidden"]}, ("fields", 0), id="returnable-in-v2-only"),
    ],
)
@pytest.mark.parametrize(
    "versions", [pytest.param((), id="unpinned"), pytest.param((1, 2), id="both-pinned")]
)
def test_a_field_must_be_usable_in_every_version_the_search_reaches(
    new: Client, body: dict[str, Any], loc: tuple[Any, ...], versions: tuple[int, ...]
) -> None:
    """Spec: "You can only filter and sort on declared fields"; "every field you filter on, sort by,
    or ask to have returned exists — with compatible declarations — in every collection version the
    view could read from"; "Every requested field must be returnable in all collection versions the
    search could reach"; errors: "The request or a catalog reference is invalid | `422`"."""
    request = {"mode": "recent", "scope": scope(*versions), **body}
    rejects(new, request, *loc)


@pytest.mark.parametrize(
    ("versions", "body"),
    [
        pytest.param((2,), {"where": {"tier": {"eq": "gold"}}}, id="where-v2-only-field"),
        pytest.param(
            (2,), {"mode": "structured", "order_by": [{"field": "tier"}]}, id="order-by-v2-only-field"
        ),
        pytest.param((2,), {"fields": ["tier", "hidden"]}, id="fields-v2-only"),
        pytest.param((1,), {"where": {"kind": {"eq": "word"}}}, id="v1-type"),
        pytest.param((2,), {"where": {"kind": {"gt": 2}}}, id="v2-type"),
        pytest.param((2,), {"where": {"hidden": {"eq": "x"}}}, id="filterable-in-v2"),
    ],
)
def test_pinning_the_versions_that_declare_a_field_makes_it_usable(
    new: Client, old: Client, versions: tuple[int, ...], body: dict[str, Any]
) -> None:
    """Spec Scopes: `collection_versions` narrows the versions read, so the field rules apply to
    those versions only (test_response pins `extra` the same way)."""
    (v1,) = write(old, ev("v1", {"kind": "word", "tier": "gold", "hidden": "x"}))
    (v2,) = write(new, ev("v2", {"kind": 3, "tier": "gold", "hidden": "x"}))
    body = {"mode": "recent", "scope": scope(*versions), **body}
    assert ids(search(new, body)) == ([v1] if versions == (1,) else [v2])


def test_a_field_only_v2_declares_is_null_on_v2_records_without_it(new: Client) -> None:
    """Spec What comes back: "a value that is not present comes back as null"; sorting: "Missing
    values always sort last, including in descending sorts"."""
    (gold, none, silver) = write(
        new,
        ev("gold", {"tier": "gold"}),
        ev("none", {"meta": {"tier": "x"}}),
        ev("silver", {"tier": "silver"}),
    )
    assert fields_of(listing(new, 2, fields=["tier"])) == {
        gold: {"tier": "gold"},
        none: {"tier": None},
        silver: {"tier": "silver"},
    }
    assert ordered(new, "tier", "desc", 2) == [silver, gold, none]
    assert ordered(new, "tier", "asc", 2) == [gold, silver, none]
    assert ids(listing(new, 2, where={"tier": {"in": ["gold", "silver", "x"]}})) == [silver, gold]


@pytest.mark.parametrize(
    ("versions", "direction", "expected"),
    [
        pytest.param(1, "asc", ["10", "9", "word", None], id="v1-strings-asc"),
        pytest.param(1, "desc", ["word", "9", "10", None], id="v1-strings-desc"),
        pytest.param(2, "asc", [9, 10, None], id="v2-integers-asc"),
        pytest.param(2, "desc", [10, 9, None], id="v2-integers-desc"),
    ],
)
def test_a_field_whose_type_changed_sorts_by_the_pinned_versions_type(
    old: Client, new: Client, versions: int, direction: str, expected: list[Any]
) -> None:
    """Spec Ordering and ties: each `order_by` field honours its direction, missing values last;
    `kind` is a string in v1 (so "10" < "9") and an integer in v2 (9 < 10)."""
    write(old, *(ev(f"v1 {v}", {} if v is None else {"kind": v}) for v in [None, "9", "word", "10"]))
    write(new, *(ev(f"v2 {v}", {} if v is None else {"kind": v}) for v in [None, 10, 9]))
    body = {
        "mode": "structured",
        "scope": scope(versions),
        "order_by": [{"field": "kind", "direction": direction}],
        "fields": ["kind"],
    }
    assert [hit["fields"]["kind"] for hit in search(new, body)["hits"]] == expected


def test_annotations_must_be_required_by_every_version_reached(new: Client) -> None:
    """Spec What comes back: "The enrichment must exist and be required by every collection version
    the search could reach" (v2 of av6_enr requires the client enrichment `region`, v1 nothing)."""
    base = {"collection": "av6_enr", "entity": "e", "type": "note"}
    (v1,) = write(new, {**base, "text": "v1", "collection_version": 1})
    assert locs(post_records(new, {**base, "text": "v2 without"}))[0][:2] == ["records", 0]
    (v2,) = write(new, {**base, "text": "v2", "annotations": {"region": "eu"}})
    enr = {"collections": ["av6_enr"]}
    rejects(new, {"mode": "recent", "scope": enr, "annotations": ["region"]}, "annotations", 0)
    pinned = {**enr, "collection_versions": {"av6_enr": [2]}}
    (hit,) = search(new, {"mode": "recent", "scope": pinned, "annotations": ["region"]})["hits"]
    assert (hit["id"], hit["annotations"]) == (v2, {"region": "eu"})
    assert set(ids(search(new, {"mode": "recent", "scope": enr}))) == {v1, v2}


# --- keyed facts across versions ------------------------------------------------------------------


def test_a_slot_spans_collection_versions(old: Client, new: Client) -> None:
    """Design §1 Keyed facts: "A slot is `(workspace, collection, entity, key, status)`. The newest
    record written into a slot is its *current* value" — the version is not part of the slot."""
    fact = {"collection": "av6_slot", "entity": "e", "type": "fact", "key": "plan"}
    (first,) = write(old, {**fact, "text": "first", "content": {"v": "one"}})
    (second,) = write(new, {**fact, "text": "second", "content": {"value": "two"}})
    slot = {"collections": ["av6_slot"]}
    current = search(new, {"mode": "recent", "scope": slot, "fields": ["v"]})
    assert [(hit["id"], hit["fields"]) for hit in current["hits"]] == [(second, {"v": "two"})]
    history = search(new, {"mode": "recent", "scope": {**slot, "versions": "all"}, "fields": ["v"]})
    assert fields_of(history) == {first: {"v": "one"}, second: {"v": "two"}}


def test_an_approved_draft_keeps_the_version_it_was_written_under(old: Client, new: Client) -> None:
    """Design §1: "Records store the version they were written under, and every field read uses the
    declaration of *that* version"; "`POST /records/{id}/approve` moves a draft into the active
    lane, where it becomes the current active value of its slot"."""
    fact = {"collection": "av6_slot", "entity": "e", "type": "fact", "key": "plan"}
    write(new, {**fact, "text": "v2 active", "content": {"value": "two", "v": "x"}})
    (draft,) = write(
        old, {**fact, "text": "v1 draft", "status": "draft", "content": {"v": "one", "value": "y"}}
    )
    approved = ok(new.post(f"/records/{draft}/approve"))
    assert (approved["collection_version"], approved["current"]) == (1, True)
    body = {"mode": "recent", "scope": {"collections": ["av6_slot"]}, "fields": ["v"]}
    assert [(hit["id"], hit["fields"]) for hit in search(new, body)["hits"]] == [(draft, {"v": "one"})]


def test_a_slot_spans_the_versions_of_its_collection(bw: Client) -> None:
    """§1: "A slot is `(workspace, collection, entity, key, status)`" — the collection, not its
    version: a value written under a pinned older version supersedes the active version's."""
    (newer_version,) = written_ids(bw, rec("customer_events", key="tier", text="gold"))
    (pinned,) = written_ids(bw, rec("customer_events", collection_version=1, key="tier", text="platinum"))
    assert current_flags(bw, newer_version, pinned) == [False, True]
    assert retract(bw, pinned).status_code == 200
    assert current_flags(bw, newer_version) == [True]


# --- rendered rows show each version's displayed scores -------------------------------------------


def test_rendered_rows_show_the_scores_each_version_displays(old: Client, new: Client) -> None:
    """Design §1: `scores: importance: {display: true}  # shown in rendered rows`; spec "Each rendered
    row holds … any enrichment scores marked for display" — marked in the record's own version (v1
    displays importance, v2 does not)."""
    (v1,) = write(old, ev("old row", {}, scores={"importance": 7}))
    (v2,) = write(new, ev("new row", {}, scores={"importance": 7}))
    rows = listing(new, render=True)["rendered"].splitlines()
    (old_row,) = [row for row in rows if v1 in row]
    (new_row,) = [row for row in rows if v2 in row]
    assert "| importance 7 |" in old_row
    assert "importance" not in new_row


# --- materialised values: big integers, instants, numeric strings, nested paths -------------------


BIG = 2**53


def num(text: str, **content: Any) -> dict[str, Any]:
    return {"collection": "av6_num", "entity": "e", "type": "note", "text": text, "content": content}


def test_integers_past_2_to_the_53_compare_and_sort_exactly(new: Client) -> None:
    """Spec Typed filters: "`eq` | equals"; "`gt` … | numbers and timestamps"; Ordering: each
    order_by field honours its direction. 2^53 + 1 is not 2^53 (a double cannot tell them apart)."""
    low, mid, high = write(new, num("low", n=BIG), num("mid", n=BIG + 1), num("high", n=BIG + 2))
    scoped = {"mode": "recent", "scope": scope(collection="av6_num"), "k": 100}
    assert ids(search(new, {**scoped, "where": {"n": {"eq": BIG + 1}}})) == [mid]
    assert set(ids(search(new, {**scoped, "where": {"n": {"gt": BIG}}}))) == {mid, high}
    assert set(ids(search(new, {**scoped, "where": {"n": {"in": [BIG, BIG + 2]}}}))) == {low, high}
    assert ordered(new, "n", "desc", collection="av6_num") == [high, mid, low]
    got = fields_of(search(new, {**scoped, "fields": ["n"]}))
    assert got == {low: {"n": BIG}, mid: {"n": BIG + 1}, high: {"n": BIG + 2}}


INSTANTS = {
    "year-1": "0001-01-01T00:00:00Z",
    "pre-epoch-offset": "1970-01-01T00:30:00+01:00",  # 1969-12-31T23:30Z
    "pre-epoch": "1969-12-31T23:59:59Z",
    "epoch": "1970-01-01T00:00:00Z",
    "offset": "2026-07-01T02:00:00+02:00",  # 2026-07-01T00:00Z
    "one-microsecond-later": "2026-07-01T00:00:00.000001Z",
    "west": "2026-06-30T21:00:00-03:00",  # 2026-07-01T00:00Z, written after "offset"
}


def test_datetimes_sort_by_instant_whatever_their_offset(new: Client) -> None:
    """Spec Typed filters: timestamps compare as moments; Ordering and ties: "honoring each
    direction … Remaining ties use ingestion order ascending" (offset and west are one instant)."""
    written = dict(
        zip(INSTANTS, write(new, *(num(name, t=value) for name, value in INSTANTS.items())), strict=True)
    )
    ascending = [
        "year-1",
        "pre-epoch-offset",
        "pre-epoch",
        "epoch",
        "offset",
        "west",
        "one-microsecond-later",
    ]
    assert ordered(new, "t", "asc", collection="av6_num") == [written[name] for name in ascending]
    descending = [
        "one-microsecond-later",
        "offset",
        "west",
        "epoch",
        "pre-epoch",
        "pre-epoch-offset",
        "year-1",
    ]
    assert ordered(new, "t", "desc", collection="av6_num") == [written[name] for name in descending]


@pytest.mark.parametrize(
    ("condition", "expected"),
    [
        pytest.param(
            {"lt": "1970-01-01T00:00:00Z"}, {"year-1", "pre-epoch-offset", "pre-epoch"}, id="before-epoch"
        ),
        pytest.param(
            {"gt": "1969-12-31T23:30:00Z", "lt": "1970-01-01T00:00:00Z"}, {"pre-epoch"}, id="strict"
        ),
        pytest.param({"eq": "1969-12-31T23:30:00-00:00"}, {"pre-epoch-offset"}, id="eq-pre-epoch-instant"),
        pytest.param({"eq": "2026-07-01T00:00:00Z"}, {"offset", "west"}, id="eq-one-instant-two-offsets"),
        pytest.param({"gt": "2026-07-01T00:00:00Z"}, {"one-microsecond-later"}, id="microsecond"),
        pytest.param({"lte": "0001-01-01T00:00:00+00:00"}, {"year-1"}, id="year-1"),
    ],
)
def test_datetime_filters_compare_instants(
    new: Client, condition: dict[str, str], expected: set[str]
) -> None:
    """Spec Typed filters: "`gt`, `gte`, `lt`, `lte` | greater/less than (or equal) | numbers and
    timestamps"; "`eq` | equals"."""
    written = dict(
        zip(write(new, *(num(name, t=value) for name, value in INSTANTS.items())), INSTANTS, strict=True)
    )
    body = {"mode": "recent", "scope": scope(collection="av6_num"), "k": 100, "where": {"t": condition}}
    assert {written[i] for i in ids(search(new, body))} == expected


def test_numeric_strings_stay_strings(new: Client) -> None:
    """Design §1: "every declared field present in `content` … must have the declared type, else the
    write is rejected with a `422` naming the record index, field and path"; a string field compares
    strings, so "10" sorts before "9"; spec Typed filters: conditions are type-checked."""
    response = post_records(new, num("quoted", x="42"))
    assert locs(response) == [["records", 0, "content", "x"]]
    assert "x" in response.get_json()["error"]["details"][0]["msg"]
    nine, ten, hundred = write(new, num("nine", s="9"), num("ten", s="10"), num("hundred", s="100"))
    assert ordered(new, "s", "asc", collection="av6_num") == [ten, hundred, nine]
    scoped = {"mode": "recent", "scope": scope(collection="av6_num")}
    assert ids(search(new, {**scoped, "where": {"s": {"eq": "10"}}})) == [ten]
    rejects(new, {**scoped, "where": {"s": {"eq": 10}}}, "where", "s", "eq")
    rejects(new, {**scoped, "where": {"x": {"eq": "42"}}}, "where", "x", "eq")


@pytest.mark.parametrize(
    ("content", "value"),
    [
        pytest.param({"a": {"b": {"c": "deep"}}}, "deep", id="nested"),
        pytest.param({"a": {"b": "flat"}}, None, id="stops-at-a-string"),
        pytest.param({"a": {"b": {"d": "other"}}}, None, id="sibling-key"),
        pytest.param({"a.b.c": "dotted"}, None, id="dotted-key-is-not-a-path"),
        pytest.param({"a": [{"b": {"c": "in-list"}}]}, None, id="list-on-the-way"),
    ],
)
def test_a_dot_path_reads_nested_objects(new: Client, content: dict[str, Any], value: str | None) -> None:
    """Design §1: "path: channel          # dot path inside `content`"; spec: "a value that is not
    present comes back as null", and `exists` is true exactly when the value is present."""
    (record,) = write(new, num("nested", **content))
    scoped = {"mode": "recent", "scope": scope(collection="av6_num")}
    assert fields_of(search(new, {**scoped, "fields": ["deep"]})) == {record: {"deep": value}}
    present = ids(search(new, {**scoped, "where": {"deep": {"exists": True}}}))
    assert present == ([record] if value is not None else [])
