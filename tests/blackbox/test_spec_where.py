"""Spec "Typed filters (`where`)": the operator table, value lists, type checks and AND."""

from __future__ import annotations

from typing import Any

import pytest

from tests.blackbox.support import ids
from tests.blackbox.support import note
from tests.blackbox.support import rejects
from tests.blackbox.support import search
from tests.blackbox.support import write
from tests.conftest import Client

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
