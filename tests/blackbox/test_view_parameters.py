"""Calling a view with parameters (spec "Parameter fields", "What is checked, and when"): each
parameter kind checked, defaults applied and echoed, values filling the query as data, and the
second check of the finished request, which blames the parameter that supplied the part.
"""

from __future__ import annotations

from typing import Any

import jsonschema
import pytest

from tests.blackbox.catalog_support import view_entry
from tests.blackbox.conftest import ClientFactory
from tests.blackbox.support import at
from tests.blackbox.support import ids
from tests.blackbox.support import invalid
from tests.blackbox.support import note
from tests.blackbox.support import write
from tests.conftest import Client
from tests.helpers import error
from tests.helpers import locs
from tests.helpers import ok
from tests.helpers import view_query

# --- parameters, kind by kind ---------------------------------------------------------------------


def test_defaults_are_applied_and_omitted_optionals_stay_absent(sx: Client) -> None:
    body = ok(view_query(sx, "sx_contract", {"entity": "maria"}))
    assert body["parameters"] == {"entity": "maria", "horizon": "week", "k": 5}


def test_supplied_parameters_are_echoed(sx: Client) -> None:
    params = {
        "entity": "maria",
        "horizon": "day",
        "channels": ["email"],
        "k": 3,
        "min_amount": 2.5,
        "vip": True,
        "after": "2026-01-01T00:00:00Z",
    }
    body = ok(view_query(sx, "sx_contract", params))
    assert body["parameters"] == params


def test_parameters_fill_the_query(sx: Client) -> None:
    a, b, _c, _d = write(
        sx,
        note("a", entity="maria", content={"channel": "email", "amount": 5, "vip": True}, occurred_at=at(2)),
        note("b", entity="maria", content={"channel": "call", "amount": 50, "vip": True}, occurred_at=at(3)),
        note("c", entity="maria", content={"channel": "note", "amount": 50, "vip": True}, occurred_at=at(4)),
        note("d", entity="maria", content={"channel": "email", "amount": 50}, occurred_at=at(5)),
    )
    assert ok(view_query(sx, "sx_contract", {"entity": "maria", "channels": ["email", "call"], "vip": True}))[
        "input_record_ids"
    ] == [b, a]
    body = ok(
        view_query(
            sx,
            "sx_contract",
            {"entity": "maria", "channels": ["email", "call"], "min_amount": 10, "vip": True, "k": 1},
        )
    )
    assert body["input_record_ids"] == [b]
    assert len(ok(view_query(sx, "sx_contract", {"entity": "maria"}))["hits"]) == 4
    assert ok(view_query(sx, "sx_contract", {"entity": "maria", "after": at(4)}))["hits"][0]["text"] == "d"


@pytest.mark.parametrize(
    ("parameters", "name"),
    [
        pytest.param({}, "entity", id="missing-required"),
        pytest.param({"entity": "maria", "extra": 1}, "extra", id="unknown"),
        pytest.param({"entity": 42}, "entity", id="wrong-type"),
        pytest.param({"entity": "ab"}, "entity", id="min-length"),
        pytest.param({"entity": "a" * 13}, "entity", id="max-length"),
        pytest.param({"entity": "maria", "horizon": "year"}, "horizon", id="enum"),
        pytest.param({"entity": "maria", "channels": []}, "channels", id="min-items"),
        pytest.param({"entity": "maria", "channels": ["email", "call", "note"]}, "channels", id="max-items"),
        pytest.param({"entity": "maria", "channels": ["fax"]}, "channels", id="item-enum"),
        pytest.param({"entity": "maria", "channels": "email"}, "channels", id="array-type"),
        pytest.param({"entity": "maria", "k": 0}, "k", id="minimum"),
        pytest.param({"entity": "maria", "k": 11}, "k", id="maximum"),
        pytest.param({"entity": "maria", "k": 2.5}, "k", id="integer"),
        pytest.param({"entity": "maria", "k": "3"}, "k", id="integer-as-string"),
        pytest.param({"entity": "maria", "k": True}, "k", id="boolean-is-not-integer"),
        pytest.param({"entity": "maria", "min_amount": -1}, "min_amount", id="number-minimum"),
        pytest.param({"entity": "maria", "min_amount": "5"}, "min_amount", id="number-type"),
        pytest.param({"entity": "maria", "vip": "true"}, "vip", id="boolean-type"),
        pytest.param({"entity": "maria", "after": "2026-01-01T00:00:00"}, "after", id="datetime-timezone"),
        pytest.param({"entity": "maria", "after": "yesterday"}, "after", id="datetime-format"),
        pytest.param({"entity": "maria", "after": 1767225600}, "after", id="datetime-type"),
        pytest.param({"entity": None}, "entity", id="null"),
    ],
)
def test_parameter_validation(sx: Client, parameters: dict[str, Any], name: str) -> None:
    invalid(view_query(sx, "sx_contract", parameters), "parameters", name)


def test_every_parameter_problem_at_once(sx: Client) -> None:
    err = invalid(view_query(sx, "sx_contract", {"k": 0, "horizon": "year", "bogus": 1}))
    assert {tuple(d["loc"]) for d in err["details"]} >= {
        ("parameters", "entity"),
        ("parameters", "k"),
        ("parameters", "horizon"),
        ("parameters", "bogus"),
    }


SIZE_BOUNDS = [
    ({"entity": "ab"}, "entity", "must have at least 3 characters"),
    ({"entity": "maria", "channels": []}, "channels", "must have at least 1 item"),
    ({"entity": "maria", "channels": ["email", "call", "note"]}, "channels", "must have at most 2 items"),
]


@pytest.mark.parametrize(("parameters", "name", "msg"), SIZE_BOUNDS)
def test_a_size_bound_is_told_in_words(sx: Client, parameters: dict[str, Any], name: str, msg: str) -> None:
    err = invalid(view_query(sx, "sx_contract", parameters), "parameters", name)
    assert [d["msg"] for d in err["details"]] == [msg]


def test_inclusive_bounds(sx: Client) -> None:
    ok(
        view_query(
            sx, "sx_contract", {"entity": "abc", "k": 1, "min_amount": 0, "channels": ["email", "note"]}
        )
    )
    ok(view_query(sx, "sx_contract", {"entity": "a" * 12, "k": 10, "min_amount": 1000}))


@pytest.mark.parametrize("body", [[], "text", 3])
def test_the_body_must_be_an_object(sx: Client, body: Any) -> None:
    invalid(view_query(sx, "sx_contract", body))


def test_a_view_without_required_parameters_takes_an_empty_body(sx: Client) -> None:
    assert ok(sx.post("/views/sx_orphans/query"))["parameters"] == {"limit": 50}
    assert ok(view_query(sx, "sx_orphans", {}))["parameters"] == {"limit": 50}


BASE = {"entity": "abc"}
CALLS = [
    pytest.param({}, 422, "entity", id="missing-required"),
    pytest.param({**BASE, "extra": 1}, 422, "extra", id="unknown-parameter"),
    pytest.param({**BASE, "entity": 5}, 422, "entity", id="string-given-number"),
    pytest.param({**BASE, "entity": None}, 422, "entity", id="required-null"),
    pytest.param({**BASE, "entity": "ab"}, 422, "entity", id="below-min-length"),
    pytest.param({**BASE, "entity": "x" * 128}, 200, None, id="at-max-length"),
    pytest.param({**BASE, "entity": "x" * 129}, 422, "entity", id="above-max-length"),
    pytest.param({**BASE, "horizon": "day"}, 200, None, id="enum-member"),
    pytest.param({**BASE, "horizon": "month"}, 422, "horizon", id="enum-non-member"),
    pytest.param({**BASE, "channels": ["email", "call", "note"]}, 200, None, id="at-max-items"),
    pytest.param(
        {**BASE, "channels": ["email", "call", "note", "email"]}, 422, "channels", id="above-max-items"
    ),
    pytest.param({**BASE, "channels": ["fax"]}, 422, "channels", id="item-enum-non-member"),
    pytest.param({**BASE, "channels": "email"}, 422, "channels", id="array-given-string"),
    pytest.param({**BASE, "channels": [1]}, 422, "channels", id="array-of-number"),
    pytest.param({**BASE, "k": 1}, 200, None, id="integer-at-minimum"),
    pytest.param({**BASE, "k": 100}, 200, None, id="integer-at-maximum"),
    pytest.param({**BASE, "k": 0}, 422, "k", id="integer-below-minimum"),
    pytest.param({**BASE, "k": 101}, 422, "k", id="integer-above-maximum"),
    pytest.param({**BASE, "k": 2.5}, 422, "k", id="integer-given-fraction"),
    pytest.param({**BASE, "k": "5"}, 422, "k", id="integer-given-string"),
    pytest.param({**BASE, "k": True}, 422, "k", id="integer-given-boolean"),
    pytest.param({**BASE, "ratio": 0.5}, 200, None, id="number-at-minimum"),
    pytest.param({**BASE, "ratio": 2.5}, 200, None, id="number-at-maximum"),
    pytest.param({**BASE, "ratio": 1}, 200, None, id="number-given-integer"),
    pytest.param({**BASE, "ratio": 0.49}, 422, "ratio", id="number-below-minimum"),
    pytest.param({**BASE, "ratio": 2.51}, 422, "ratio", id="number-above-maximum"),
    pytest.param({**BASE, "ratio": "1"}, 422, "ratio", id="number-given-string"),
    pytest.param({**BASE, "ratio": True}, 422, "ratio", id="number-given-boolean"),
    pytest.param({**BASE, "vip": True}, 200, None, id="boolean"),
    pytest.param({**BASE, "vip": "true"}, 422, "vip", id="boolean-given-string"),
    pytest.param({**BASE, "vip": 1}, 422, "vip", id="boolean-given-integer"),
    pytest.param({**BASE, "after": "2026-07-17T09:00:00Z"}, 200, None, id="datetime-utc"),
    pytest.param({**BASE, "after": "2026-07-17T09:00:00+02:00"}, 200, None, id="datetime-offset"),
    pytest.param({**BASE, "after": "2026-07-17T09:00:00"}, 422, "after", id="datetime-no-timezone"),
    pytest.param({**BASE, "after": "yesterday"}, 422, "after", id="datetime-garbage"),
    pytest.param({**BASE, "after": 5}, 422, "after", id="datetime-given-number"),
    pytest.param({**BASE, "tags": ["a"]}, 200, None, id="at-min-items"),
    pytest.param({**BASE, "tags": []}, 422, "tags", id="below-min-items"),
    pytest.param({**BASE, "tags": ["a", "b", "c"]}, 422, "tags", id="above-max-items-2"),
    pytest.param({**BASE, "label": "x"}, 200, None, id="optional-string"),
    pytest.param({**BASE, "label": 3}, 422, "label", id="optional-string-given-number"),
    pytest.param(BASE, 200, None, id="only-required"),
]


@pytest.mark.parametrize(("body", "status", "loc"), CALLS)
def test_view_call_checks_each_parameter(
    bv: Client, body: dict[str, Any], status: int, loc: str | None
) -> None:
    """ "When the view is called, Memseek rejects unknown, missing, wrongly typed, or out-of-range
    parameters" (422, "The request ... is invalid"); inclusive bounds from "Parameter fields"."""
    response = view_query(bv, "bv10_kinds", body)
    if status == 200:
        ok(response)
        return
    err = error(response, 422)
    assert any(d["loc"] and d["loc"][-1] == loc for d in err["details"]), err["details"]


@pytest.mark.parametrize(("body", "status", "loc"), [c for c in CALLS if "after" not in c.values[0]])
def test_published_schema_agrees_with_the_call(
    bv: Client, body: dict[str, Any], status: int, loc: Any
) -> None:
    """ "input_schema is the complete machine-readable contract ... this is what a tool-calling client
    reads": a body the schema accepts is accepted, one it refuses is refused."""
    schema = view_entry(bv, "bv10_kinds", 1)["input_schema"]
    valid = jsonschema.Draft202012Validator(schema).is_valid(body)
    assert valid is (status == 200)


@pytest.mark.parametrize("body", [[], "abc", 5], ids=["list", "string", "number"])
def test_view_body_must_be_an_object(bv: Client, body: Any) -> None:
    """ "Accepts only that view's parameters": a body that is not an object of parameters is 422."""
    error(view_query(bv, "bv10_kinds", body), 422)


def test_view_without_parameters_takes_an_empty_object(bv: Client) -> None:
    """A view with no `parameters` accepts `{}` and refuses any parameter."""
    write(bv, note("plain"))
    body = ok(view_query(bv, "bv10_bare", {}))
    assert body["parameters"] == {}
    assert len(body["hits"]) == 1
    error(view_query(bv, "bv10_bare", {"k": 5}), 422)


@pytest.mark.parametrize(("n", "status"), [(3, 200), (100, 200), (0, 422), (101, 422), (500, 422)])
def test_finished_request_is_validated_a_second_time(bv: Client, n: int, status: int) -> None:
    """ "fills the placeholders, and validates the finished request a second time before running it"
    (an unbounded integer parameter fills `k`, which must be 1–100)."""
    response = view_query(bv, "bv10_freek", {"n": n})
    if status == 200:
        assert len(ok(response)["hits"]) == 0
    else:
        error(response, 422)


def test_defaults_are_applied_and_echoed(bv: Client) -> None:
    """ "parameters shows the values supplied plus any defaults applied; an optional parameter that was
    omitted and has no default stays absent"."""
    body = ok(view_query(bv, "bv10_kinds", {"entity": "abc"}))
    assert body["parameters"] == {"entity": "abc", "horizon": "week", "channels": [], "k": 20}
    body = ok(view_query(bv, "bv10_kinds", {"entity": "abc", "horizon": "day", "vip": False, "ratio": 1.5}))
    assert body["parameters"] == {
        "entity": "abc",
        "horizon": "day",
        "channels": [],
        "k": 20,
        "vip": False,
        "ratio": 1.5,
    }


def test_integer_parameter_drives_k(bv: Client) -> None:
    """A parameter "supplies part of the query itself": `k: "{{k}}"` caps the result count."""
    write(bv, *[note(f"row {i}", entity="abc") for i in range(4)])
    assert len(ok(view_query(bv, "bv10_kinds", {"entity": "abc", "k": 2}))["hits"]) == 2
    assert len(ok(view_query(bv, "bv10_kinds", {"entity": "abc"}))["hits"]) == 4


def test_each_parameter_kind_filters(bv: Client) -> None:
    """Placeholders filled from each kind: string (entity), number (where gte), boolean (where eq),
    string_array (contains_any), datetime (occurred_after, strict)."""
    rows = write(
        bv,
        note("a", entity="abc", content={"amount": 5, "vip": True, "tags": ["x"]}, occurred_at=at(2)),
        note("b", entity="abc", content={"amount": 1, "vip": False, "tags": ["y"]}, occurred_at=at(3)),
        note("c", entity="zzz", content={"amount": 9, "vip": True, "tags": ["x"]}, occurred_at=at(4)),
    )
    a, b, _ = rows

    def hits(**params: Any) -> set[str]:
        return set(ids(ok(view_query(bv, "bv10_kinds", {"entity": "abc", **params}))))

    assert hits() == {a, b}
    assert hits(ratio=2) == {a}
    assert hits(vip=False) == {b}
    assert hits(tags=["y"]) == {b}
    assert hits(after=at(2)) == {b}
    assert hits(label="none") == set()


CHARACTERS = [
    pytest.param("\u00e9\u00e9\u00e9", 200, id="three-two-byte-characters"),
    pytest.param("\u65e5\u672c", 422, id="two-three-byte-characters"),
    pytest.param("\u00e9" * 128, 200, id="128-characters-256-bytes"),
    pytest.param("\U0001f600" * 3, 200, id="three-astral-characters"),
]


@pytest.mark.parametrize(("entity", "status"), CHARACTERS)
def test_string_parameter_length_bounds_count_characters_not_bytes(
    bv: Client, entity: str, status: int
) -> None:
    """ "min_length, max_length — Inclusive character-count bounds" (not bytes)."""
    response = view_query(bv, "bv10_kinds", {"entity": entity})
    if status == 200:
        ok(response)
    else:
        error(response, 422)


@pytest.mark.parametrize(
    "raw",
    ['{"entity": "abc", "ratio": NaN}', '{"entity": "abc", "ratio": Infinity}', '{"n": NaN}'],
    ids=["nan-bounded", "infinity-bounded", "nan-as-integer"],
)
def test_non_finite_numbers_are_refused(bv: Client, raw: str) -> None:
    """A number parameter is "wrongly typed" when it is not a finite number (422)."""
    name = "bv10_freek" if '"n"' in raw else "bv10_kinds"
    response = bv.raw.open(
        f"/views/{name}/query",
        method="POST",
        data=raw,
        content_type="application/json",
        headers=bv.tenant.headers,
    )
    error(response, 422)


@pytest.mark.parametrize(
    ("value", "status"),
    [("2026-07-17", 422), ("2026-07-17T09:00:00.123456Z", 200), ("2026-07-17T09:00Z", 200), ("", 422)],
    ids=["date-only", "microseconds", "no-seconds", "empty"],
)
def test_datetime_parameter_forms(bv: Client, value: str, status: int) -> None:
    """ "Datetime values must include a timezone (2026-07-17T09:00:00Z)"."""
    response = view_query(bv, "bv10_kinds", {"entity": "abc", "after": value})
    if status == 200:
        ok(response)
    else:
        error(response, 422)


@pytest.mark.parametrize(
    ("value", "status"), [(2, 200), (5, 422), ("2", 422)], ids=["member", "non-member", "string"]
)
def test_integer_enum_is_enforced_at_call(bv: Client, value: Any, status: int) -> None:
    """ "enum — The complete set of allowed values" on any type (here an integer)."""
    response = view_query(bv, "bv10_enums", {"size": value})
    if status == 200:
        ok(response)
    else:
        err = error(response, 422)
        assert any(d["loc"][-1] == "size" for d in err["details"]), err


def test_placeholder_inside_a_longer_string(bv: Client) -> None:
    """ "Anything in {{double braces}} is a placeholder filled in from a parameter": inside `q` too."""
    [hit] = write(bv, note("quarterly budget review", entity="pp"))
    body = ok(view_query(bv, "bv10_partial", {"task": "review"}))
    assert ids(body) == [hit]


def test_graph_view_call_echoes_its_defaults(bv: Client) -> None:
    """The graph wrapper: view, parameters with the defaults applied, hits, input_record_ids, backend."""
    body = ok(view_query(bv, "bv10_walk", {"seed": "nowhere/at-all"}))
    assert body["view"] == {"name": "bv10_walk", "version": 1, "hash": view_entry(bv, "bv10_walk", 1)["hash"]}
    assert body["parameters"] == {
        "seed": "nowhere/at-all",
        "predicates": [],
        "direction": "out",
        "depth": 1,
        "limit": 20,
    }
    assert body["hits"] == [] and body["input_record_ids"] == [] and body["truncated"] is False
    assert isinstance(body["backend"], list)


def test_whole_float_for_an_integer_is_refused(bv: Client) -> None:
    """Reading left open by the documents: `5.0` for an `integer` parameter is refused at the call
    (loc `["parameters", "k"]`) although JSON Schema 2020-12 counts it an integer."""
    err = error(view_query(bv, "bv10_kinds", {"entity": "abc", "k": 5.0}), 422)
    assert ["parameters", "k"] in [d["loc"] for d in err["details"]]


def test_supplied_values_are_echoed_as_supplied(bv: Client) -> None:
    """ "parameters shows the values supplied": a datetime comes back as sent, a list keeps its order."""
    supplied = {"entity": "x", "start": "2026-07-05T00:00:00Z", "end": "2026-07-06T02:00:00+02:00"}
    assert ok(view_query(bv, "bv10_list", supplied))["parameters"] == supplied
    body = ok(view_query(bv, "bv10_kinds", {"entity": "abc", "tags": ["b", "a"]}))
    assert body["parameters"]["tags"] == ["b", "a"]


@pytest.mark.parametrize(
    ("parameters", "name"),
    [
        pytest.param({"n": 4}, "n", id="integer-outside-enum"),
        pytest.param({"x": 1.0}, "x", id="number-outside-enum"),
        pytest.param({"x": 1}, "x", id="integer-for-number-outside-enum"),
        pytest.param({"tags": ["c"]}, "tags", id="item-outside-item-enum"),
        pytest.param({"tags": ["a", "b", "a"]}, "tags", id="above-max-items"),
        pytest.param({"flag": 0}, "flag", id="number-for-boolean"),
        pytest.param({"since": "2026-01-01"}, "since", id="date-without-time-or-zone"),
    ],
)
def test_number_enums_and_defaults_are_enforced_at_call_time(
    s3: Client, parameters: dict[str, Any], name: str
) -> None:
    """Spec: "Memseek rejects unknown, missing, wrongly typed, or out-of-range parameters"; enum is
    "The complete set of allowed values" for any type."""
    invalid(view_query(s3, "s3_kinds", parameters), "parameters", name)


def test_defaults_of_every_type_are_applied_and_echoed(s3: Client) -> None:
    """Spec: "parameters shows the values supplied plus any defaults applied; an optional parameter
    that was omitted and has no default stays absent"."""
    body = ok(view_query(s3, "s3_kinds", {"x": 1.5}))
    assert body["parameters"] == {
        "n": 2,
        "x": 1.5,
        "flag": False,
        "since": "2026-01-01T00:00:00Z",
        "tags": [],
    }


def test_a_digit_string_is_not_a_datetime_parameter(sx: Client) -> None:
    """ "Time bounds must include a timezone": a datetime parameter feeding occurred_after is the
    same bound, so "1767225600" is refused naming the parameter."""
    err = view_query(sx, "sx_contract", {"entity": "e1x", "after": "1767225600"})
    assert err.status_code == 422, err.get_json()


@pytest.mark.parametrize("raw", ["1e999", "-1e999", "NaN", "Infinity"])
def test_a_number_parameter_must_be_finite(sx: Client, raw: str) -> None:
    """Spec: `number` is a parameter type and "Memseek rejects ... wrongly typed, or out-of-range
    parameters"; JSON has no infinite or NaN numbers."""
    data = f'{{"entity": "maria", "min_amount": {raw}}}'.encode()
    response = sx.post("/views/sx_contract/query", data=data, headers={"Content-Type": "application/json"})
    found = [d["loc"] for d in invalid(response)["details"]]
    if raw not in ("NaN", "Infinity"):  # not JSON at all: a malformed body may be refused as such
        assert ["parameters", "min_amount"] in found, found


EMOJI = "\U0001f600"  # one character outside the Basic Multilingual Plane: 4 bytes of UTF-8


@pytest.mark.parametrize(
    ("entity", "accepted"),
    [
        pytest.param(EMOJI * 3, True, id="3-characters"),
        pytest.param(EMOJI * 12, True, id="12-characters"),
        pytest.param(EMOJI * 2, False, id="2-characters"),
        pytest.param(EMOJI * 13, False, id="13-characters"),
    ],
)
def test_length_bounds_count_a_wide_character_once(sx: Client, entity: str, accepted: bool) -> None:
    """Spec: "`min_length`, `max_length` | `string` | Inclusive character-count bounds"
    (`sx_contract.entity` declares 3 and 12)."""
    response = view_query(sx, "sx_contract", {"entity": entity})
    if accepted:
        assert ok(response)["parameters"]["entity"] == entity
    else:
        invalid(response, "parameters", "entity")


@pytest.mark.parametrize(
    "moment",
    ["2026-07-17T09:00:00Z", "2026-07-17T11:00:00+02:00", "2026-07-17T09:00:00.250000+00:00"],
)
def test_a_datetime_with_a_timezone_is_accepted_and_echoed(sx: Client, moment: str) -> None:
    """Spec: "Datetime values must include a timezone (`2026-07-17T09:00:00Z`)"; "parameters shows
    the values supplied"."""
    body = ok(view_query(sx, "sx_contract", {"entity": "maria", "after": moment}))
    assert body["parameters"]["after"] == moment


# --- the second check of the finished request -----------------------------------------------------


def test_a_list_parameter_is_checked_again_inside_the_query(ald: Client) -> None:
    # spec: scope.entities is a unique list of up to 100 entries
    ok(view_query(ald, "ald_list", {"who": [f"e{i}" for i in range(100)]}))
    invalid(view_query(ald, "ald_list", {"who": [f"e{i}" for i in range(101)]}), "parameters", "who")
    invalid(view_query(ald, "ald_list", {"who": ["a", "a"]}), "parameters", "who")


@pytest.mark.parametrize("k", [0, 101])
def test_a_count_parameter_is_checked_against_the_query_limits(ald: Client, k: int) -> None:
    # spec: k (default 20, between 1 and 100)
    invalid(view_query(ald, "ald_list", {"who": ["e"], "k": k}), "parameters", "k")


def test_a_count_parameter_at_the_query_limits_is_accepted(ald: Client) -> None:
    assert ok(view_query(ald, "ald_list", {"who": ["e"], "k": 100}))["parameters"]["k"] == 100
    assert ok(view_query(ald, "ald_list", {"who": ["e"], "k": 1}))["parameters"]["k"] == 1


@pytest.mark.parametrize("moments", [(at(5), at(5)), (at(6), at(5))])
def test_timestamp_parameters_are_checked_as_a_range(ald: Client, moments: tuple[str, str]) -> None:
    # spec: occurred_after must be earlier than occurred_before
    after, before = moments
    found = locs(view_query(ald, "ald_list", {"who": ["e"], "after": after, "before": before}))
    assert found and all(loc[:1] == ["parameters"] for loc in found), found
    assert any(loc in (["parameters", "after"], ["parameters", "before"]) for loc in found), found


def test_timestamp_bounds_filled_by_parameters_are_strict(ald: Client, sx: Client) -> None:
    inside, _edge = write(
        sx, note("in", entity="t", occurred_at=at(3)), note("edge", entity="t", occurred_at=at(4))
    )
    body = ok(view_query(ald, "ald_list", {"who": ["t"], "after": at(2), "before": at(4)}))
    assert body["input_record_ids"] == [inside]
    assert body["parameters"] == {"who": ["t"], "k": 20, "after": at(2), "before": at(4)}


def test_a_view_without_parameters_rejects_any(ald: Client) -> None:
    assert ok(view_query(ald, "ald_plain", {}))["parameters"] == {}
    assert locs(view_query(ald, "ald_plain", {"entity": "x"})) == [["parameters", "entity"]]


def test_a_null_body_is_not_a_parameters_object(ald: Client) -> None:
    response = ald.post("/views/ald_list/query", data=b"null", headers={"Content-Type": "application/json"})
    error(response, 422, "invalid_request")


SECOND_CHECK = [
    pytest.param("av5_knobs", {"task": ""}, "task", id="q-empty-for-a-text-search"),
    pytest.param("av5_knobs", {"task": "x", "mode": "sideways"}, "mode", id="mode-not-a-mode"),
    pytest.param("av5_knobs", {"task": "x", "cands": 0}, "cands", id="candidates-below-1"),
    pytest.param("av5_knobs", {"task": "x", "cands": 1001}, "cands", id="candidates-above-1000"),
    pytest.param("av5_knobs", {"task": "x", "inc": ["text", "bogus"]}, "inc", id="include-unknown-value"),
    pytest.param("av5_knobs", {"task": "x", "fld": ["label"]}, "fld", id="field-not-returnable"),
    pytest.param(
        "av5_knobs", {"task": "x", "fld": [f"f{i}" for i in range(17)]}, "fld", id="fields-above-16"
    ),
    pytest.param("av5_knobs", {"task": "x", "cols": ["sx_nowhere"]}, "cols", id="collection-unknown"),
    pytest.param("av5_knobs", {"task": "x", "status": "archived"}, "status", id="status-not-a-status"),
    pytest.param("av5_judged", {"task": "x", "top": 0}, "top", id="rerank-top-n-below-1"),
    pytest.param("av5_judged", {"task": "x", "top": 21}, "top", id="rerank-top-n-above-20"),
    pytest.param("av5_fused", {"task": "x", "sk": 0}, "sk", id="source-k-below-1"),
    pytest.param("av5_fused", {"task": "x", "sk": 101}, "sk", id="source-k-above-100"),
    pytest.param("av5_fused", {"task": "x", "w": 0}, "w", id="weight-not-above-0"),
    pytest.param("av5_fused", {"task": "x", "w": 100.5}, "w", id="weight-above-100"),
    pytest.param("av5_fused", {"task": "x", "rc": 0}, "rc", id="rank-constant-below-1"),
    pytest.param("av5_fused", {"task": "x", "rc": 1001}, "rc", id="rank-constant-above-1000"),
    pytest.param("av5_fused", {"task": "x", "fk": 101}, "fk", id="merged-k-above-100"),
    pytest.param("av5_boosted", {"anchor": "   "}, "anchor", id="anchor-blank-after-trim"),
    pytest.param("av5_boosted", {"anchor": "a" * 129}, "anchor", id="anchor-above-128"),
    pytest.param("av5_boosted", {"anchor": "a", "d": 5}, "d", id="boost-depth-above-4"),
    pytest.param("av5_boosted", {"anchor": "a", "d": 0}, "d", id="boost-depth-below-1"),
    pytest.param("av5_boosted", {"anchor": "a", "gw": 0}, "gw", id="boost-weight-not-above-0"),
    pytest.param("av5_boosted", {"anchor": "a", "gw": 1.5}, "gw", id="boost-weight-above-1"),
    pytest.param("av5_boosted", {"anchor": "a", "gl": 101}, "gl", id="boost-limit-above-100"),
    pytest.param("av5_sorted", {"entity": "e", "dir": "up"}, "dir", id="direction-not-asc-or-desc"),
]


@pytest.mark.parametrize(("view", "parameters", "name"), SECOND_CHECK)
def test_the_second_check_blames_the_parameter_that_supplied_the_part(
    av5: Client, view: str, parameters: dict[str, Any], name: str
) -> None:
    """Spec, "What is checked, and when": "When the view is called, Memseek rejects unknown,
    missing, wrongly typed, or out-of-range parameters, applies defaults, fills the placeholders,
    and validates the finished request a second time before running it. That second check matters
    when a parameter supplies part of the query itself"; each bound is the spec's own (q required
    for text; `params.candidates` 1-1000; include's list; fields "At most 16 names" and returnable;
    status active|draft|all; top_n 1-20; a source's k 1-100; weight "greater than 0 and at most
    100"; rank_constant 1-1000; k 1-100; anchor "trimmed, 1-128 characters"; depth 1-4; weight
    "above 0 and at most 1"; limit 1-100; direction asc or desc). Errors: "The request or a
    catalog reference is invalid | 422"."""
    found = locs(view_query(av5, view, parameters))
    assert ["parameters", name] in found, found
    assert all(loc[0] == "parameters" for loc in found), found


def test_a_parameter_that_overflows_the_formula_is_422_not_500(av5: Client, sx: Client) -> None:
    """Spec: "Every value produced must be finite" (rank expressions); a view call "validates the
    finished request"; Errors: an invalid request is `422`."""
    write(sx, note("weighty", scores={"importance": 10}))
    found = locs(view_query(av5, "av5_weighted", {"w": 1e308}))
    assert ["parameters", "w"] in found, found


def test_parameters_that_fit_every_part_run(av5: Client, sx: Client) -> None:
    """Spec: defaults are applied and "parameters shows the values supplied plus any defaults
    applied"; the bounds of the table above are inclusive."""
    (record,) = write(sx, note("alpha budget", content={"channel": "email"}))
    body = ok(view_query(av5, "av5_knobs", {"task": "budget", "cands": 1000, "inc": ["text", "depth"]}))
    assert body["parameters"] == {
        "task": "budget",
        "mode": "text",
        "cands": 1000,
        "status": "active",
        "inc": ["text", "depth"],
        "fld": ["channel"],
        "cols": ["sx_notes"],
        "depth": 0,
    }
    (hit,) = body["hits"]
    assert hit["id"] == record and hit["text"] == "alpha budget" and hit["depth"] == 0
    assert hit["fields"] == {"channel": "email"}
    fused = ok(view_query(av5, "av5_fused", {"task": "budget", "sk": 100, "w": 100, "rc": 1000, "fk": 100}))
    assert fused["input_record_ids"] == [record]
    assert fused["hits"][0]["rank_score"] == pytest.approx(100 / (1000 + 1))


@pytest.mark.parametrize(
    "extra",
    [
        pytest.param({"k": 100}, id="k"),
        pytest.param({"scope": {"collections": ["sx_extra"]}}, id="scope"),
        pytest.param({"collections": ["sx_extra"]}, id="collections"),
        pytest.param({"rank": ["const", 1]}, id="rank"),
        pytest.param({"mode": "recent"}, id="mode"),
        pytest.param({"q": "other"}, id="q"),
        pytest.param({"where": {}}, id="where"),
        pytest.param({"include": ["scores"]}, id="include"),
        pytest.param({"version": 2}, id="version"),
    ],
)
def test_a_caller_cannot_widen_the_view(sx: Client, extra: dict[str, Any]) -> None:
    """Spec: callers "cannot widen the scope, change the ranking, or ask for more results than you
    allowed"; `POST /views/{name}/query` "Accepts only that view's parameters"; "choosing exact
    versions is something a deployment package does, not something a caller does"; unknown
    parameters are rejected."""
    (key,) = extra
    found = locs(view_query(sx, "sx_context", {"entity": "e1", "task": "x", **extra}))
    assert found == [["parameters", key]], found


def test_a_version_in_the_query_string_selects_nothing(av5: Client) -> None:
    """Spec: "A view is always addressed by name, and the name resolves to whichever version is
    currently active. There is no version in the URL"."""
    response = av5.post("/views/av5_pick/query?version=2", json={"entity": "e"})
    if response.status_code != 422:
        assert ok(response)["view"]["version"] == 1


WINDOW = {"start": "2026-07-02T00:00:00Z", "end": "2026-07-03T00:00:00Z"}


@pytest.mark.parametrize(
    ("view", "parameters", "name"),
    [
        pytest.param("s3_window", {**WINDOW, "start": "2026-07-04T00:00:00Z"}, "start", id="window-reversed"),
        pytest.param("s3_window", {**WINDOW, "end": WINDOW["start"]}, "start", id="window-empty"),
        pytest.param("s3_people", {"people": ["maria", "maria"]}, "people", id="entities-repeated"),
        pytest.param(
            "s3_people", {"people": [f"p{i}" for i in range(101)]}, "people", id="entities-over-100"
        ),
        pytest.param("s3_values", {"channels": []}, "channels", id="in-list-empty"),
        pytest.param(
            "s3_values", {"channels": [f"c{i}" for i in range(101)]}, "channels", id="in-list-over-100"
        ),
    ],
)
def test_the_finished_request_is_validated_a_second_time(
    s3: Client, view: str, parameters: dict[str, Any], name: str
) -> None:
    """Spec: the view "validates the finished request a second time before running it. That second
    check matters when a parameter supplies part of the query itself, such as a timestamp or a
    list"; "occurred_after must be earlier than occurred_before"; "collections, entities, and types
    are unique lists of up to 100 entries each"; "Value lists (in, contains_any, contains_all) must
    be non-empty and hold at most 100 entries"."""
    invalid(view_query(s3, view, parameters), "parameters", name)


def test_a_time_window_view_honours_strict_bounds(s3: Client) -> None:
    """Spec: "Both comparisons are strict: a record sitting exactly on a bound is excluded"."""
    _on_start, inside, _on_end = write(
        s3,
        note("start", occurred_at=WINDOW["start"]),
        note("inside", occurred_at="2026-07-02T12:00:00Z"),
        note("end", occurred_at=WINDOW["end"]),
    )
    assert ok(view_query(s3, "s3_window", WINDOW))["input_record_ids"] == [inside]


def test_a_view_whose_parameter_breaks_the_query_blames_the_parameter(sx_with: ClientFactory) -> None:
    client = sx_with(max_query_chars=5)
    invalid(
        client.post("/views/sx_context/query", json={"entity": "e", "task": "far too long"}),
        "parameters",
        "task",
    )


# --- a parameter is a value, never a template -----------------------------------------------------


def test_a_parameter_value_is_data_not_a_template(sx: Client) -> None:
    """Spec: "Anything in {{double braces}} is a placeholder filled in from a parameter the caller
    supplies" — in the view's definition; a supplied value is never expanded again."""
    write(sx, note("budget plan", entity="budget"))
    assert ids(ok(view_query(sx, "sx_context", {"entity": "budget", "task": "budget"})))
    body = ok(view_query(sx, "sx_context", {"entity": "budget", "task": "{{entity}}"}))
    assert body["hits"] == [] and body["parameters"]["task"] == "{{entity}}"


@pytest.mark.parametrize(
    "task",
    [
        pytest.param('budget "quoted" \\ back', id="quotes-and-backslash"),
        pytest.param("budget {{entity}} }} {{", id="placeholder-lookalike"),
        pytest.param("budget: plan", id="yaml-mapping"),
        pytest.param("- budget", id="yaml-sequence"),
        pytest.param("&anchor *alias !tag budget", id="yaml-anchors"),
        pytest.param("budget # comment", id="yaml-comment"),
        pytest.param("budget\nsecond: line", id="newline"),
        pytest.param("budget & plan | !x", id="tsquery-syntax"),
        pytest.param("budget 😀", id="emoji"),
    ],
)
def test_a_view_parameter_is_the_query_text_verbatim(sx: Client, task: str) -> None:
    """Spec: Memseek "fills the placeholders, and validates the finished request"; the view
    response's `parameters` "shows the values supplied". A string parameter holding YAML, JSON or
    tsquery syntax is text: echoed as supplied, and its words are searched."""
    (record,) = write(sx, note("the budget plan", entity="e1"))
    body = ok(view_query(sx, "sx_context", {"entity": "e1", "task": task}))
    assert body["parameters"] == {"entity": "e1", "task": task}
    assert [hit["id"] for hit in body["hits"]] == [record]


@pytest.mark.parametrize(
    "task",
    [pytest.param("123", id="number"), pytest.param("true", id="boolean"), pytest.param("null", id="null")],
)
def test_a_view_string_parameter_that_looks_like_a_scalar_stays_a_string(sx: Client, task: str) -> None:
    """Spec: "Memseek rejects ... wrongly typed ... parameters ... fills the placeholders, and
    validates the finished request a second time": `task` is a string, so a q of "123" is the
    string `123`, a valid query text — 200, echoed as the string supplied."""
    (record,) = write(sx, note(f"code {task} here", entity="e1"))
    body = ok(view_query(sx, "sx_context", {"entity": "e1", "task": task}))
    assert body["parameters"]["task"] == task
    assert [hit["id"] for hit in body["hits"]] == [record]


WIDE = "😀"
"""One character outside the Basic Multilingual Plane: two UTF-16 units, four UTF-8 bytes."""


def test_a_view_entity_parameter_of_wide_characters(sx: Client) -> None:
    """Spec: a view's parameters fill its scope; an entity is "1–256 chars" (design §1)."""
    entity = "contact." + WIDE + "マリア"
    (record,) = write(sx, note("the budget plan", entity=entity), note("the budget plan", entity="e1"))[:1]
    body = ok(view_query(sx, "sx_context", {"entity": entity, "task": "budget"}))
    assert [hit["id"] for hit in body["hits"]] == [record]
