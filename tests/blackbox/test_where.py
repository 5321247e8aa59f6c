"""Typed filters (spec "Typed filters"): each operator on its kinds of field, values type-checked
against the declaration, timestamps compared as instants, numbers past float and 64-bit range,
lists of 100, fields declared filterable in every collection searched.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.blackbox.support import at
from tests.blackbox.support import ids
from tests.blackbox.support import matched_or_refused_at
from tests.blackbox.support import names
from tests.blackbox.support import note
from tests.blackbox.support import recent
from tests.blackbox.support import recent_body
from tests.blackbox.support import rejected_at
from tests.blackbox.support import rejects
from tests.blackbox.support import search
from tests.blackbox.support import write
from tests.conftest import Client

# --- operators ------------------------------------------------------------------------------------


CONTENTS = {
    "a": {
        "channel": "email",
        "amount": 10,
        "count": 1,
        "vip": True,
        "tags": ["vip", "at-risk"],
        "starts_at": "2026-07-01T09:00:00Z",
    },
    "b": {
        "channel": "call",
        "amount": 20.5,
        "count": 2,
        "vip": False,
        "tags": ["at-risk"],
        "starts_at": "2026-07-02T09:00:00Z",
    },
    "c": {
        "meta": {"channel": "note"},
        "amount": 30,
        "count": 3,
        "tags": ["new"],
        "starts_at": "2026-07-03T09:00:00+02:00",
    },
    "d": {},
}


@pytest.fixture
def records(sx: Client) -> dict[str, str]:
    written = write(sx, *(note(name, content=content) for name, content in CONTENTS.items()))
    return dict(zip(CONTENTS, written, strict=True))


def matching(client: Client, where: dict[str, Any], records: dict[str, str]) -> set[str]:
    body = search(client, {"mode": "recent", "scope": {"collections": ["sx_notes"]}, "where": where})
    by_id = {record_id: name for name, record_id in records.items()}
    return {by_id[i] for i in ids(body)}


@pytest.mark.parametrize(
    ("where", "expected"),
    [
        pytest.param({"channel": {"eq": "email"}}, {"a"}, id="eq-string"),
        pytest.param({"channel": {"eq": "note"}}, {"c"}, id="eq-fallback-path"),
        pytest.param({"amount": {"eq": 20.5}}, {"b"}, id="eq-number"),
        pytest.param({"count": {"eq": 2}}, {"b"}, id="eq-integer"),
        pytest.param({"vip": {"eq": False}}, {"b"}, id="eq-boolean"),
        pytest.param({"tags": {"eq": ["vip", "at-risk"]}}, {"a"}, id="eq-list-exact"),
        pytest.param({"tags": {"eq": ["at-risk", "vip"]}}, set(), id="eq-list-ordered"),
        pytest.param({"tags": {"eq": ["vip"]}}, set(), id="eq-list-not-subset"),
        pytest.param({"starts_at": {"eq": "2026-07-03T07:00:00Z"}}, {"c"}, id="eq-datetime-instant"),
        pytest.param({"channel": {"in": ["email", "call"]}}, {"a", "b"}, id="in"),
        pytest.param({"count": {"in": [1, 3]}}, {"a", "c"}, id="in-integer"),
        pytest.param({"amount": {"gt": 10}}, {"b", "c"}, id="gt"),
        pytest.param({"amount": {"gte": 10}}, {"a", "b", "c"}, id="gte"),
        pytest.param({"amount": {"lt": 30}}, {"a", "b"}, id="lt"),
        pytest.param({"amount": {"lte": 30}}, {"a", "b", "c"}, id="lte"),
        pytest.param({"count": {"gt": 1.5}}, {"b", "c"}, id="integer-vs-fraction"),
        pytest.param(
            {"starts_at": {"gte": "2026-07-02T09:00:00Z", "lt": "2026-07-03T09:00:00Z"}},
            {"b", "c"},
            id="datetime-range",
        ),
        pytest.param({"starts_at": {"gt": "2026-07-02T10:00:00+01:00"}}, {"c"}, id="datetime-offset"),
        pytest.param({"vip": {"exists": True}}, {"a", "b"}, id="exists-true"),
        pytest.param({"vip": {"exists": False}}, {"c", "d"}, id="exists-false"),
        pytest.param({"channel": {"exists": True}}, {"a", "b", "c"}, id="exists-fallback"),
        pytest.param({"tags": {"contains_any": ["vip", "new"]}}, {"a", "c"}, id="contains-any"),
        pytest.param({"tags": {"contains_all": ["vip", "at-risk"]}}, {"a"}, id="contains-all"),
        pytest.param({"tags": {"contains_all": ["at-risk"]}}, {"a", "b"}, id="contains-all-one"),
        pytest.param({"amount": {"gt": 5, "lt": 25}, "channel": {"in": ["call", "note"]}}, {"b"}, id="and"),
        pytest.param({"amount": {"gt": 15, "lt": 15}}, set(), id="and-contradiction"),
        pytest.param({"channel": {"eq": "email", "exists": True}}, {"a"}, id="and-one-field"),
    ],
)
def test_operators(sx: Client, records: dict[str, str], where: dict[str, Any], expected: set[str]) -> None:
    assert matching(sx, where, records) == expected


@pytest.mark.parametrize(
    ("where", "loc"),
    [
        pytest.param({"channel": {"in": []}}, ("where", "channel", "in"), id="in-empty"),
        pytest.param(
            {"channel": {"in": [f"c{i}" for i in range(101)]}}, ("where", "channel", "in"), id="in-101"
        ),
        pytest.param({"tags": {"contains_any": []}}, ("where", "tags", "contains_any"), id="any-empty"),
        pytest.param(
            {"tags": {"contains_all": [f"t{i}" for i in range(101)]}},
            ("where", "tags", "contains_all"),
            id="all-101",
        ),
        pytest.param(
            {"channel": {"contains_any": ["x"]}},
            ("where", "channel", "contains_any"),
            id="contains-needs-list-field",
        ),
        pytest.param({"channel": {"gt": 3}}, ("where", "channel", "gt"), id="gt-on-string"),
        pytest.param(
            {"amount": {"gt": "2026-01-01T00:00:00Z"}}, ("where", "amount", "gt"), id="number-vs-timestamp"
        ),
        pytest.param({"starts_at": {"gt": 3}}, ("where", "starts_at", "gt"), id="timestamp-vs-number"),
        pytest.param(
            {"starts_at": {"gt": "2026-01-01T00:00:00"}},
            ("where", "starts_at", "gt"),
            id="timestamp-without-timezone",
        ),
        pytest.param({"amount": {"eq": "ten"}}, ("where", "amount", "eq"), id="eq-type"),
        pytest.param({"count": {"in": [1.5]}}, ("where", "count", "in"), id="in-type"),
        pytest.param({"vip": {"eq": 1}}, ("where", "vip", "eq"), id="boolean-type"),
        pytest.param({"channel": {"exists": "yes"}}, ("where", "channel", "exists"), id="exists-bool"),
        pytest.param({"channel": {"like": "e%"}}, ("where", "channel", "like"), id="unknown-operator"),
        pytest.param({"channel": {}}, ("where", "channel"), id="no-operator"),
        pytest.param({"label": {"eq": "x"}}, ("where", "label"), id="not-filterable"),
        pytest.param({"nope": {"eq": "x"}}, ("where", "nope"), id="undeclared"),
    ],
)
def test_invalid_filters(sx: Client, where: dict[str, Any], loc: tuple[str, ...]) -> None:
    rejects(sx, {"mode": "recent", "scope": {"collections": ["sx_notes"]}, "where": where}, *loc)


def test_a_hundred_values_are_fine(sx: Client, records: dict[str, str]) -> None:
    values = ["email", *(f"c{i}" for i in range(99))]
    assert matching(sx, {"channel": {"in": values}}, records) == {"a"}


def test_where_fields_must_be_declared_in_every_collection_searched(sx: Client) -> None:
    rejects(sx, {"mode": "recent", "where": {"amount": {"gt": 1}}}, "where", "amount")
    body = {
        "mode": "recent",
        "scope": {"collections": ["sx_notes", "sx_extra"]},
        "where": {"channel": {"eq": "email"}},
    }
    assert search(sx, body)["hits"] == []


def test_where_filters_apply_in_every_mode(sx: Client, records: dict[str, str]) -> None:
    write(
        sx,
        note("budget email", content={"channel": "email"}),
        note("budget call", content={"channel": "call"}),
    )
    body = {
        "mode": "text",
        "q": "budget",
        "where": {"channel": {"eq": "email"}},
        "scope": {"collections": ["sx_notes"]},
        "include": ["text"],
    }
    assert [h["text"] for h in search(sx, body)["hits"]] == ["budget email"]


WHERE_DATA = {
    "a": {
        "channel": "email",
        "amount": 1.5,
        "count": 1,
        "vip": True,
        "tags": ["vip", "at-risk"],
        "starts_at": at(1),
    },
    "b": {"channel": "call", "amount": 10, "count": 5, "vip": False, "tags": ["vip"], "starts_at": at(5)},
    "c": {"meta": {"channel": "note"}, "amount": -2, "count": 9, "tags": ["at-risk", "vip"]},
    "d": {},
}


@pytest.mark.parametrize(
    ("where", "expected"),
    [
        pytest.param({"channel": {"eq": "email"}}, "a", id="eq-string"),
        pytest.param({"channel": {"eq": "note"}}, "c", id="eq-fallback-path"),
        pytest.param({"vip": {"eq": False}}, "b", id="eq-boolean"),
        pytest.param({"count": {"eq": 5}}, "b", id="eq-integer"),
        pytest.param({"tags": {"eq": ["vip", "at-risk"]}}, "a", id="eq-list-exact-order"),
        pytest.param({"tags": {"eq": ["vip"]}}, "b", id="eq-list-single"),
        pytest.param({"channel": {"in": ["email", "call"]}}, "ab", id="in"),
        pytest.param({"amount": {"gt": 1.5}}, "b", id="gt"),
        pytest.param({"amount": {"gte": 1.5}}, "ab", id="gte"),
        pytest.param({"amount": {"lt": 1.5}}, "c", id="lt"),
        pytest.param({"amount": {"lte": 1.5}}, "ac", id="lte"),
        pytest.param({"count": {"gt": 1, "lt": 9}}, "b", id="range-and"),
        pytest.param({"starts_at": {"gte": at(1), "lt": at(5)}}, "a", id="time-range"),
        pytest.param({"starts_at": {"gt": "2026-07-01T01:00:00+02:00"}}, "ab", id="time-offset"),
        pytest.param({"starts_at": {"exists": True}}, "ab", id="exists-true"),
        pytest.param({"starts_at": {"exists": False}}, "cd", id="exists-false"),
        pytest.param({"channel": {"exists": True}}, "abc", id="exists-fallback"),
        pytest.param({"tags": {"contains_any": ["at-risk", "zzz"]}}, "ac", id="contains-any"),
        pytest.param({"tags": {"contains_all": ["vip", "at-risk"]}}, "ac", id="contains-all"),
        pytest.param({"tags": {"contains_all": ["vip"]}}, "abc", id="contains-all-one"),
        pytest.param({"vip": {"eq": True}, "count": {"lte": 5}}, "a", id="fields-and"),
        pytest.param({"secret": {"exists": False}}, "abcd", id="filterable-not-returnable"),
    ],
)
def test_where_conditions(sx: Client, where: dict[str, Any], expected: str) -> None:
    """The conditions table: eq, in, gt/gte/lt/lte, exists, contains_any, contains_all; "Several
    conditions on one field, and several fields, are combined with AND.\""""
    written_ids = write(sx, *(note(name, content=content) for name, content in WHERE_DATA.items()))
    by_name = dict(zip(WHERE_DATA, written_ids, strict=True))
    got = set(ids(recent(sx, where=where, k=100)))
    assert got == {by_name[name] for name in expected}


NOTES = {"collections": ["sx_notes"]}


@pytest.mark.parametrize(
    "where",
    [
        pytest.param({"label": {"eq": "x"}}, id="not-filterable"),
        pytest.param({"nope": {"eq": "x"}}, id="undeclared"),
        pytest.param({"channel": {"contains_any": ["x"]}}, id="contains-any-on-scalar"),
        pytest.param({"channel": {"contains_all": ["x"]}}, id="contains-all-on-scalar"),
        pytest.param({"channel": {"gt": "a"}}, id="gt-on-string"),
        pytest.param({"vip": {"lt": True}}, id="lt-on-boolean"),
        pytest.param({"tags": {"in": ["x"]}}, id="in-on-list"),
        pytest.param({"channel": {"in": []}}, id="in-empty"),
        pytest.param({"channel": {"in": [f"v{i}" for i in range(101)]}}, id="in-101"),
        pytest.param({"tags": {"contains_any": []}}, id="contains-any-empty"),
        pytest.param({"tags": {"contains_all": [f"v{i}" for i in range(101)]}}, id="contains-all-101"),
        pytest.param({"amount": {"eq": "ten"}}, id="wrong-type"),
        pytest.param({"count": {"eq": 1.5}}, id="integer-not-whole"),
        pytest.param({"starts_at": {"gt": "2026-07-01T00:00:00"}}, id="naive-datetime"),
        pytest.param({"channel": {"like": "x"}}, id="unknown-operator"),
        pytest.param({"channel": {"exists": "yes"}}, id="exists-not-boolean"),
    ],
)
def test_where_is_type_checked(sx: Client, where: dict[str, Any]) -> None:
    """ "Each one must be a field your collection declared as filterable, and contains_any/contains_all
    also require the field to hold a list"; "Value lists ... must be non-empty and hold at most 100
    entries"; "Conditions are type-checked against the declared field\""""
    field = next(iter(where))
    rejected_at(sx, {"mode": "recent", "scope": NOTES, "where": where}, "where", field)


def test_where_value_lists_of_100_are_accepted(sx: Client) -> None:
    """ "at most 100 entries" — 100 is allowed."""
    (record,) = write(sx, note(content={"channel": "v99"}))
    assert ids(recent(sx, where={"channel": {"in": [f"v{i}" for i in range(100)]}})) == [record]


def test_where_on_a_field_missing_from_one_collection_in_scope(sx: Client) -> None:
    """ "Each one must be a field your collection declared as filterable": amount is not declared by
    sx_extra."""
    scope = {"collections": ["sx_notes", "sx_extra"]}
    rejected_at(sx, {"mode": "recent", "scope": scope, "where": {"amount": {"gt": 1}}}, "where", "amount")


def test_where_eq_on_a_list_is_an_exact_ordered_match(sx: Client) -> None:
    """eq: "an exact ordered match for a list\""""
    first, second = write(sx, note(content={"tags": ["x", "y"]}), note(content={"tags": ["y", "x"]}))
    assert ids(recent(sx, where={"tags": {"eq": ["y", "x"]}})) == [second]
    assert ids(recent(sx, where={"tags": {"eq": ["x", "y"]}})) == [first]
    assert ids(recent(sx, where={"tags": {"eq": ["x"]}})) == []


def test_where_exists_on_an_empty_list_is_present(sx: Client) -> None:
    """exists: "the value is present (`true`) or absent (`false`)" — an empty list is present."""
    (empty,) = write(sx, note(content={"tags": []}))
    assert ids(recent(sx, where={"tags": {"exists": True}})) == [empty]
    assert ids(recent(sx, where={"tags": {"contains_any": ["x"]}})) == []


@pytest.mark.parametrize(
    "where",
    [{"channel": "email"}, {"channel": {}}],
    ids=["bare-value", "no-operator"],
)
def test_where_entries_map_a_field_to_conditions(sx: Client, where: dict[str, Any]) -> None:
    """ "Each entry maps a field name to one or more conditions\""""
    rejected_at(sx, {"mode": "recent", "scope": NOTES, "where": where}, "where", "channel")


@pytest.mark.parametrize(
    ("where", "loc"),
    [
        pytest.param({"tags": {"in": ["vip"]}}, ("where", "tags", "in"), id="in-on-a-list-field"),
        pytest.param({"vip": {"gt": 0}}, ("where", "vip", "gt"), id="gt-on-a-boolean"),
        pytest.param({"tags": {"lte": 3}}, ("where", "tags", "lte"), id="lte-on-a-list-field"),
        pytest.param({"amount": {"eq": [1, 2]}}, ("where", "amount", "eq"), id="list-eq-on-a-number"),
        pytest.param(
            {"channel": {"contains_all": ["a"]}}, ("where", "channel", "contains_all"), id="all-on-scalar"
        ),
    ],
)
def test_operators_only_work_on_their_kinds_of_field(
    sx: Client, where: dict[str, Any], loc: tuple[str, ...]
) -> None:
    """The operator table: "`in` | is one of the listed values | single values", "`gt` … | numbers
    and timestamps", "`eq` | any single value, or an exact ordered match for a list", and
    "contains_any/contains_all also require the field to hold a list"."""
    err = rejects(sx, recent_body(where=where))
    assert any(detail["loc"][: len(loc)] == list(loc) for detail in err["details"]), err["details"]


def test_eq_on_a_list_is_an_exact_ordered_match_even_when_empty(sx: Client) -> None:
    """ "`eq` | equals | any single value, or an exact ordered match for a list": [] matches only
    the record holding an empty list, not the one without the field."""
    empty, _, ordered = write(
        sx,
        note(content={"tags": []}),
        note(content={}),
        note(content={"tags": ["a", "b"]}),
    )
    assert ids(search(sx, recent_body(where={"tags": {"eq": []}}))) == [empty]
    assert ids(search(sx, recent_body(where={"tags": {"eq": ["a", "b"]}}))) == [ordered]
    assert ids(search(sx, recent_body(where={"tags": {"eq": ["b", "a"]}}))) == []


def test_long_and_unicode_filter_values_are_answered(sx: Client) -> None:
    """ "`eq` | equals" and "`in` | is one of the listed values": values of any length or script are
    compared exactly (a long value simply matches nothing)."""
    (record,) = write(sx, note(content={"channel": "электронная почта 📧"}))
    long_values = ["x" * 20_000] + [f"{i}" * 1000 for i in range(99)]
    assert ids(search(sx, recent_body(where={"channel": {"eq": "x" * 20_000}}))) == []
    assert ids(search(sx, recent_body(where={"channel": {"in": long_values}}))) == []
    assert ids(search(sx, recent_body(where={"channel": {"in": ["электронная почта 📧"]}}))) == [record]


@pytest.mark.parametrize(
    "condition",
    [
        pytest.param({"eq": 0.1}, id="eq"),
        pytest.param({"in": [0.3, 0.1]}, id="in"),
        pytest.param({"gte": 0.1}, id="gte"),
        pytest.param({"lte": 0.1}, id="lte"),
        pytest.param({"gt": 0.09999999999999999, "lt": 0.10000000000000002}, id="between-neighbours"),
    ],
)
def test_a_decimal_fraction_matches_itself(sx: Client, condition: dict[str, Any]) -> None:
    """ "`eq` | equals | any single value" and "`gt`, `gte`, `lt`, `lte` | greater/less than (or
    equal)": the JSON number 0.1 written on a record equals the JSON number 0.1 in a filter."""
    (record,) = write(sx, note(content={"amount": 0.1}))
    assert ids(search(sx, recent_body(where={"amount": condition}))) == [record]


def test_subnormal_and_extreme_number_bounds_are_answered(sx: Client) -> None:
    """ "`gt`, `gte`, `lt`, `lte` | … | numbers": any finite JSON number is a bound."""
    (record,) = write(sx, note(content={"amount": 1e-320}))
    assert ids(search(sx, recent_body(where={"amount": {"eq": 5e-324}}))) == []
    assert ids(search(sx, recent_body(where={"amount": {"gt": 5e-324, "lt": 1e-300}}))) == [record]
    assert ids(search(sx, recent_body(where={"amount": {"gt": -1.7976931348623157e308}}))) == [record]


RECENT: dict[str, Any] = {"mode": "recent", "scope": NOTES}


@pytest.mark.parametrize(
    ("condition", "record_tags"),
    [
        pytest.param({"channel": {"in": [*names(99, "c"), "email"]}}, None, id="in"),
        pytest.param({"tags": {"contains_any": [*names(99, "t"), "vip"]}}, ["vip"], id="contains-any"),
        pytest.param({"tags": {"contains_all": names(100, "t")}}, names(100, "t")[::-1], id="contains-all"),
    ],
)
def test_a_value_list_of_100_entries_is_applied_in_full(
    sx: Client, condition: dict[str, Any], record_tags: list[str] | None
) -> None:
    """Spec: "Value lists (in, contains_any, contains_all) must be non-empty and hold at most 100
    entries" — at 100 the 100th entry counts like the first."""
    content: dict[str, Any] = {"channel": "email"}
    if record_tags is not None:
        content["tags"] = record_tags
    match, _other = write(
        sx, note("match", content=content), note("other", content={"channel": "x", "tags": ["x"]})
    )
    assert ids(search(sx, {**RECENT, "where": condition})) == [match]


# --- timestamps -----------------------------------------------------------------------------------


def test_where_timestamps_compare_as_instants(sx: Client) -> None:
    """gt/gte/lt/lte/eq on timestamps: the same instant written with another offset is equal."""
    (record,) = write(sx, note(content={"starts_at": "2026-07-01T12:00:00+02:00"}))
    assert ids(recent(sx, where={"starts_at": {"eq": "2026-07-01T10:00:00Z"}})) == [record]
    assert ids(recent(sx, where={"starts_at": {"in": ["2026-07-01T10:00:00+00:00"]}})) == [record]
    assert ids(recent(sx, where={"starts_at": {"gt": "2026-07-01T10:00:00Z"}})) == []
    assert ids(recent(sx, where={"starts_at": {"gte": "2026-07-01T10:00:00Z"}})) == [record]


def test_a_digit_string_is_not_a_timestamp_filter(sx: Client) -> None:
    """ "`gt`, `gte`, `lt`, `lte` — numbers and timestamps" and "Conditions are type-checked against
    the declared field": "1767225600" is a string, neither a number nor a timestamp with a zone."""
    rejects(sx, recent_body(where={"starts_at": {"gt": "1767225600"}}), "where", "starts_at", "gt")


@pytest.mark.parametrize(
    "where",
    [
        pytest.param({"starts_at": {"eq": "2026-07-01T12:00:00+02:00"}}, id="eq-other-offset"),
        pytest.param({"starts_at": {"in": ["2026-07-01T05:00:00-05:00"]}}, id="in-other-offset"),
        pytest.param({"starts_at": {"gt": "0001-01-01T00:00:00+23:59"}}, id="gt-year-1-east"),
        pytest.param({"starts_at": {"lt": "9999-12-31T23:59:59-23:59"}}, id="lt-year-9999-west"),
    ],
)
def test_timestamp_values_are_instants_whatever_their_offset(sx: Client, where: dict[str, Any]) -> None:
    """ "`eq` | equals | any single value", "`in` | is one of the listed values" and "`gt` … |
    numbers and timestamps": a timestamp names an instant; its offset is only how it is written,
    even at the ends of the calendar."""
    (record,) = write(sx, note(content={"starts_at": "2026-07-01T10:00:00Z"}))
    assert ids(search(sx, recent_body(where=where))) == [record]


# --- numbers --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("where", "loc"),
    [
        pytest.param({"amount": {"eq": True}}, ("where", "amount", "eq"), id="number-eq-true"),
        pytest.param({"amount": {"gt": True}}, ("where", "amount", "gt"), id="number-gt-true"),
        pytest.param({"count": {"in": [True, 1]}}, ("where", "count", "in"), id="integer-in-true"),
        pytest.param({"amount": {"eq": "10"}}, ("where", "amount", "eq"), id="number-eq-digits"),
        pytest.param({"count": {"gte": "1"}}, ("where", "count", "gte"), id="integer-gte-digits"),
        pytest.param({"channel": {"eq": 5}}, ("where", "channel", "eq"), id="string-eq-number"),
        pytest.param({"channel": {"in": ["a", 5]}}, ("where", "channel", "in"), id="string-in-number"),
        pytest.param(
            {"tags": {"contains_any": [5]}}, ("where", "tags", "contains_any"), id="contains-number"
        ),
        pytest.param({"vip": {"in": ["true"]}}, ("where", "vip", "in"), id="boolean-in-string"),
        pytest.param({"starts_at": {"eq": 5}}, ("where", "starts_at", "eq"), id="timestamp-eq-number"),
        pytest.param({"amount": {"exists": 1}}, ("where", "amount", "exists"), id="exists-one"),
    ],
)
def test_conditions_are_type_checked_against_the_field(
    sx: Client, where: dict[str, Any], loc: tuple[str, ...]
) -> None:
    """ "Conditions are type-checked against the declared field": booleans are not numbers, digit
    strings are not numbers, numbers are not strings."""
    err = rejects(sx, recent_body(where=where))
    assert any(detail["loc"][: len(loc)] == list(loc) for detail in err["details"]), err["details"]


PAST_64_BITS = 2**70


@pytest.mark.parametrize(
    ("where", "expected"),
    [
        pytest.param({"count": {"eq": PAST_64_BITS}}, set(), id="integer-eq-past-64-bits"),
        pytest.param({"count": {"in": [PAST_64_BITS, 3]}}, {"three"}, id="integer-in-past-64-bits"),
        pytest.param({"count": {"lt": -PAST_64_BITS}}, set(), id="integer-lt-minus-past-64-bits"),
        pytest.param({"amount": {"eq": 10**30}}, set(), id="number-eq-1e30"),
        pytest.param({"amount": {"lte": 10**30}}, {"three", "big"}, id="number-lte-1e30"),
        pytest.param({"amount": {"eq": 2.5}}, {"three"}, id="number-eq-fraction"),
        pytest.param({"amount": {"gt": 2.5, "lte": 1e300}}, {"big"}, id="number-range-1e300"),
        pytest.param({"amount": {"eq": 1e-300}}, set(), id="number-eq-tiny"),
    ],
)
def test_number_filters_past_float_and_64_bits(sx: Client, where: dict[str, Any], expected: set[str]) -> None:
    """ "any single value" / "is one of the listed values" / "greater/less than (or equal)": a value
    no stored number equals simply matches nothing, however large."""
    three, big = write(
        sx,
        note("three", content={"count": 3, "amount": 2.5}),
        note("big", content={"count": 4, "amount": 1e20}),
    )
    names = {three: "three", big: "big"}
    assert {names[i] for i in ids(search(sx, recent_body(where=where)))} == expected


def test_an_in_list_may_repeat_a_value(sx: Client) -> None:
    """ "Value lists (in, contains_any, contains_all) must be non-empty and hold at most 100
    entries" — uniqueness is not required of them (it is of scope lists)."""
    (record,) = write(sx, note(content={"channel": "email", "tags": ["vip"]}))
    where = {"channel": {"in": ["email", "email"]}, "tags": {"contains_all": ["vip", "vip"]}}
    assert ids(search(sx, recent_body(where=where))) == [record]


@pytest.mark.parametrize(
    ("condition", "expected"),
    [
        pytest.param({"gt": 1.5}, [4, 3, 2], id="fractional-bound"),
        pytest.param({"lte": 1e300, "gte": -1e300}, [4, 3, 2, 1, 0], id="bounds-past-any-integer"),
        pytest.param({"lt": PAST_64_BITS, "gt": -PAST_64_BITS}, [4, 3, 2, 1, 0], id="bounds-past-64-bits"),
        pytest.param({"gte": 2**63 - 1}, [], id="int64-max"),
        pytest.param({"lte": -(2**63)}, [], id="int64-min"),
    ],
)
def test_integer_fields_compare_with_any_number(
    sx: Client, condition: dict[str, Any], expected: list[int]
) -> None:
    """ "`gt`, `gte`, `lt`, `lte` | greater/less than (or equal) | numbers and timestamps": an integer
    field compares by value with any number, fractional or beyond 64 bits."""
    written = write(sx, *(note(f"n{i}", content={"count": i}, occurred_at=at(1, i)) for i in range(5)))
    assert ids(search(sx, recent_body(where={"count": condition}))) == [written[i] for i in expected]


@pytest.mark.parametrize(
    "literal",
    [
        pytest.param(1e20, id="1e20-with-exponent"),
        pytest.param(10**20, id="1e20-as-digits"),
        pytest.param(10**30, id="1e30-as-digits"),
    ],
)
def test_a_number_range_takes_any_json_number(sx: Client, literal: float) -> None:
    """Spec, Typed filters: "`gt`, `gte`, `lt`, `lte` | greater/less than (or equal) | numbers and
    timestamps". JSON does not tell 1e20 from 100000000000000000000 (what JavaScript's
    JSON.stringify writes for 1e20)."""
    (record,) = write(sx, note(content={"amount": 5}))
    assert ids(search(sx, {"mode": "recent", "scope": NOTES, "where": {"amount": {"lt": literal}}})) == [
        record
    ]
    assert search(sx, {"mode": "recent", "scope": NOTES, "where": {"amount": {"gte": literal}}})["hits"] == []


@pytest.mark.parametrize(
    ("values", "matched"),
    [
        pytest.param([5, 6.5], ["five", "six_and_a_half"], id="integer-then-fraction"),
        pytest.param([7, 6.5], ["six_and_a_half"], id="fraction-after-a-miss"),
        pytest.param([5, 1e20], ["five"], id="integer-then-large"),
    ],
)
def test_in_on_a_number_field_matches_every_listed_value(
    sx: Client, values: list[float], matched: list[str]
) -> None:
    """Spec, Typed filters: "`in` | is one of the listed values | single values"; "every condition
    is re-checked against the system of record before results are returned — a filter is never
    merely approximate"."""
    five, six_and_a_half = write(sx, note(content={"amount": 5}), note(content={"amount": 6.5}))
    records = {"five": five, "six_and_a_half": six_and_a_half}
    body = search(sx, {"mode": "recent", "scope": NOTES, "where": {"amount": {"in": values}}})
    assert sorted(ids(body)) == sorted(records[name] for name in matched)


def test_an_integer_filter_past_64_bits_is_answered_or_blamed_on_itself(sx: Client) -> None:
    """Spec, Typed filters: "Conditions are type-checked against the declared field"; Errors: an
    invalid request is a 422 (design: "details items carry a loc (JSON path)") — not a complaint
    about a rank formula the request does not have."""
    write(sx, note(content={"count": 3}))
    response = sx.post("/search", json={"mode": "recent", "scope": NOTES, "where": {"count": {"eq": 2**63}}})
    assert matched_or_refused_at(response, ["where", "count", "eq"]) in ([], None)
