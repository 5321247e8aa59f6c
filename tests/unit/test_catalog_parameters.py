"""View parameters: call-time arguments, template filling, samples and the input schema agents read."""

from __future__ import annotations

from typing import Any

import pytest

from memseek.catalog.models import View
from memseek.catalog.parameters import JSON_SCHEMA_DIALECT
from memseek.catalog.parameters import Parameter
from memseek.catalog.parameters import input_schema
from memseek.catalog.parameters import parameter_summary
from memseek.catalog.template import fill_template
from memseek.catalog.template import placeholder_problems
from memseek.catalog.template import sample_sets
from memseek.catalog.template import validate_arguments
from memseek.errors import RequestInvalid

# The spec's "Parameter fields" example, verbatim.
SPEC_PARAMETERS: dict[str, Any] = {
    "entity": {
        "type": "string",
        "required": True,
        "description": "The contact this search is about.",
        "min_length": 3,
        "max_length": 128,
    },
    "horizon": {
        "type": "string",
        "default": "week",
        "description": "How far ahead to look.",
        "enum": ["day", "week", "quarter"],
    },
    "channels": {
        "type": "string_array",
        "default": [],
        "item_enum": ["email", "call", "note"],
        "max_items": 3,
    },
    "k": {"type": "integer", "default": 20, "minimum": 1, "maximum": 100},
}
VIEW = View.model_validate(
    {"name": "v", "version": 1, "parameters": SPEC_PARAMETERS, "query": {"mode": "recent"}}
)


@pytest.mark.parametrize(
    ("arguments", "loc", "fragment"),
    [
        pytest.param({}, ("parameters", "entity"), "required", id="missing-required"),
        pytest.param(
            {"entity": "maria", "topic": "x"}, ("parameters", "topic"), "unknown parameter", id="unknown"
        ),
        pytest.param({"entity": 42}, ("parameters", "entity"), "expected string", id="wrong-type"),
        pytest.param({"entity": "ab"}, ("parameters", "entity"), "at least 3 characters", id="too-short"),
        pytest.param(
            {"entity": "x" * 129}, ("parameters", "entity"), "at most 128 characters", id="too-long"
        ),
        pytest.param(
            {"entity": "maria", "horizon": "year"}, ("parameters", "horizon"), "one of", id="not-in-enum"
        ),
        pytest.param(
            {"entity": "maria", "channels": ["fax"]},
            ("parameters", "channels"),
            "item 0",
            id="item-not-in-item-enum",
        ),
        pytest.param(
            {"entity": "maria", "channels": ["email", "call", "note", "email"]},
            ("parameters", "channels"),
            "at most 3 items",
            id="too-many-items",
        ),
        pytest.param(
            {"entity": "maria", "channels": "email"},
            ("parameters", "channels"),
            "expected string array",
            id="string-for-list",
        ),
        pytest.param({"entity": "maria", "k": 0}, ("parameters", "k"), "at least 1", id="below-minimum"),
        pytest.param({"entity": "maria", "k": 101}, ("parameters", "k"), "at most 100", id="above-maximum"),
        pytest.param({"entity": "maria", "k": 2.5}, ("parameters", "k"), "expected integer", id="fraction"),
        pytest.param(
            {"entity": "maria", "k": True}, ("parameters", "k"), "expected integer", id="boolean-for-int"
        ),
    ],
)
def test_invalid_arguments(arguments: dict[str, Any], loc: tuple[str, ...], fragment: str) -> None:
    with pytest.raises(RequestInvalid) as caught:
        validate_arguments(VIEW, arguments)
    assert caught.value.status == 422
    assert any(d.loc == loc and fragment in d.msg for d in caught.value.details), caught.value.details


def test_every_argument_problem_at_once() -> None:
    with pytest.raises(RequestInvalid) as caught:
        validate_arguments(VIEW, {"k": "many", "extra": 1})
    assert sorted(d.loc for d in caught.value.details) == [
        ("parameters", "entity"),
        ("parameters", "extra"),
        ("parameters", "k"),
    ]


def test_defaults_applied_in_declaration_order() -> None:
    values = validate_arguments(VIEW, {"k": 5, "entity": "contact.maria"})
    assert list(values.items()) == [
        ("entity", "contact.maria"),
        ("horizon", "week"),
        ("channels", []),
        ("k", 5),
    ]
    values["channels"].append("email")
    assert VIEW.parameters["channels"].default == []


def test_omitted_optional_without_default_stays_absent() -> None:
    view = View.model_validate(
        {
            "name": "v",
            "version": 1,
            "query": {"mode": "recent"},
            "parameters": {"since": {"type": "datetime"}},
        }
    )
    assert validate_arguments(view, {}) == {}
    assert validate_arguments(view, {"since": "2026-07-17T09:00:00Z"}) == {"since": "2026-07-17T09:00:00Z"}
    with pytest.raises(RequestInvalid, match="invalid"):
        validate_arguments(view, {"since": "2026-07-17T09:00:00"})


def test_arguments_must_be_an_object() -> None:
    with pytest.raises(RequestInvalid) as caught:
        validate_arguments(VIEW, ["maria"])
    assert caught.value.details[0].loc == ("parameters",)


TEMPLATE = {
    "q": "{{task}}",
    "mode": "structured",
    "scope": {"entities": ["{{entity}}"], "collections": ["calendar_events"], "occurred_after": "{{start}}"},
    "where": {"tags": {"contains_any": "{{tags}}"}, "title": {"eq": "Meeting with {{entity}} ({{k}} max)"}},
    "k": "{{k}}",
    "render": "{{render}}",
}


@pytest.mark.parametrize(
    ("values", "expected"),
    [
        pytest.param(
            {
                "task": "prep",
                "entity": "maria",
                "start": "2026-07-17T09:00:00Z",
                "tags": ["vip", "q3"],
                "k": 7,
                "render": True,
            },
            {
                "q": "prep",
                "mode": "structured",
                "scope": {
                    "entities": ["maria"],
                    "collections": ["calendar_events"],
                    "occurred_after": "2026-07-17T09:00:00Z",
                },
                "where": {
                    "tags": {"contains_any": ["vip", "q3"]},
                    "title": {"eq": "Meeting with maria (7 max)"},
                },
                "k": 7,
                "render": True,
            },
            id="typed-whole-values-and-interpolation",
        ),
        pytest.param(
            {"task": "prep", "entity": "maria", "k": 7, "render": False},
            {
                "q": "prep",
                "mode": "structured",
                "scope": {"entities": ["maria"], "collections": ["calendar_events"]},
                "where": {"title": {"eq": "Meeting with maria (7 max)"}},
                "k": 7,
                "render": False,
            },
            id="absent-values-remove-their-key-and-emptied-mappings",
        ),
        pytest.param(
            {"task": "prep", "k": 7, "render": False},
            {
                "q": "prep",
                "mode": "structured",
                "scope": {"collections": ["calendar_events"]},
                "k": 7,
                "render": False,
            },
            id="absent-entity-removes-list-item-and-interpolations",
        ),
    ],
)
def test_fill_template(values: dict[str, Any], expected: dict[str, Any]) -> None:
    assert fill_template(TEMPLATE, values) == expected


def test_fill_template_keeps_written_empties_and_copies_values() -> None:
    tags = ["a"]
    filled = fill_template({"scope": {"types": []}, "where": {}, "t": "{{tags}}"}, {"tags": tags})
    assert filled == {"scope": {"types": []}, "where": {}, "t": ["a"]}
    filled["t"].append("b")
    assert tags == ["a"]


def test_placeholder_problems() -> None:
    template = {"q": "{{task}} {{nope}}", "scope": {"entities": ["{{entity"]}, "where": {"{{f}}": {}}}
    details = placeholder_problems(template, {"task": Parameter(type="string")}, ("query",))
    assert [(d.loc, d.msg) for d in details] == [
        (("query", "q"), "{{nope}} names no declared parameter"),
        (
            ("query", "scope", "entities", 0),
            "malformed placeholder: write {{name}} with a declared parameter name",
        ),
        (("query", "where", "{{f}}"), "placeholders are not allowed in keys"),
    ]


def test_sample_values_satisfy_every_constraint() -> None:
    parameters = {
        "a": Parameter(type="string", min_length=10, max_length=12),
        "b": Parameter(type="string", max_length=2),
        "c": Parameter(type="string_array", min_items=3, item_enum=("x", "y")),
        "d": Parameter(type="integer", minimum=5, maximum=9),
        "e": Parameter(type="number", maximum=-1.5),
        "f": Parameter(type="datetime"),
        "g": Parameter(type="boolean"),
        "h": Parameter(type="datetime"),
        "i": Parameter(type="string", enum=("z", "y")),
        "j": Parameter(type="integer", default=3),
    }
    rising, falling = sample_sets(parameters)
    for samples in (rising, falling):
        for name, parameter in parameters.items():
            assert parameter.problem(samples[name]) is None, (name, samples[name])
        assert (samples["i"], samples["j"]) == ("z", 3)
    assert rising["f"] < rising["h"]
    assert falling["f"] > falling["h"]
    assert {name: value for name, value in rising.items() if name not in "fh"} == {
        name: value for name, value in falling.items() if name not in "fh"
    }


def test_one_sample_set_without_two_datetime_parameters() -> None:
    assert sample_sets({"f": Parameter(type="datetime"), "d": Parameter(type="integer")}) == [
        {"f": "2001-01-01T00:00:00Z", "d": 1}
    ]


@pytest.mark.parametrize(
    ("enum", "unique"),
    [
        pytest.param((1, 1.0), False, id="1-and-1.0-are-one-number"),
        pytest.param((2, 2.5), True, id="distinct-numbers"),
        pytest.param((1e300, 10.0**300), False, id="same-float-written-twice"),
    ],
)
def test_number_enum_entries_are_unique_by_value(enum: tuple[float, ...], unique: bool) -> None:
    """Spec, "Parameter fields": `enum` is "the complete set of allowed values, non-empty and unique"."""
    if unique:
        assert Parameter(type="number", enum=enum).enum == enum
    else:
        with pytest.raises(ValueError, match="unique"):
            Parameter(type="number", enum=enum)


def test_input_schema_of_the_spec_example() -> None:
    entity_only = {"entity": Parameter(type="string", required=True)}
    assert input_schema(entity_only) == {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object",
        "properties": {"entity": {"type": "string"}},
        "additionalProperties": False,
        "required": ["entity"],
    }
    assert parameter_summary(entity_only) == {"entity": {"type": "string", "required": True, "default": None}}


def test_input_schema_carries_every_constraint() -> None:
    schema = input_schema(VIEW.parameters)
    assert schema["$schema"] == JSON_SCHEMA_DIALECT
    assert schema["properties"] == {
        "entity": {
            "type": "string",
            "description": "The contact this search is about.",
            "minLength": 3,
            "maxLength": 128,
        },
        "horizon": {
            "type": "string",
            "description": "How far ahead to look.",
            "enum": ["day", "week", "quarter"],
            "default": "week",
        },
        "channels": {
            "type": "array",
            "maxItems": 3,
            "items": {"type": "string", "enum": ["email", "call", "note"]},
            "default": [],
        },
        "k": {"type": "integer", "minimum": 1, "maximum": 100, "default": 20},
    }
    assert schema["required"] == ["entity"]
    datetime_schema = input_schema({"t": Parameter(type="datetime", min_length=None)})["properties"]["t"]
    assert datetime_schema == {"type": "string", "format": "date-time"}
    assert parameter_summary(VIEW.parameters)["k"] == {"type": "integer", "required": False, "default": 20}
