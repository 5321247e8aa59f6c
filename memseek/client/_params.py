"""View parameters checked before sending, against the active version's published `input_schema`.

The service checks a view call's parameters and reports every problem at once, one per
parameter, at `loc` `["parameters", NAME]`: unknown names first (in the order given), then the
declared parameters in declaration order. This module gives the same report from the JSON
Schema (`jsonschema`, draft 2020-12), so a bad call fails the same way without a round trip,
each problem in the service's own words (its `value_problem` and `type_error`, whose messages
`TIMESTAMP`, `FINITE` and the wording functions below repeat: the SDK imports nothing of the server).
Types follow the service's rules, which are stricter than JSON Schema's: an integer is not
`2.0` and a number is finite; `date-time` needs a timezone. A graph view's `seed` is checked
trimmed, as the service trims it, and `{"parameters": {...}}` is read as the parameters.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable
from collections.abc import Mapping
from datetime import datetime
from functools import lru_cache
from typing import TYPE_CHECKING
from typing import Any

from memseek.client.errors import ErrorDetail
from memseek.client.errors import InvalidRequest
from memseek.client.models import ViewInfo

if TYPE_CHECKING:  # jsonschema is imported on first use: importing the SDK stays cheap
    from jsonschema.protocols import Validator


class ViewCache:
    """The active version of each view, from the last `GET /views` this client made.

    Kept until the service answers a view call 404 or 422 (the catalog may have changed), or
    until a call fails the cached contract (which is then fetched again before the SDK refuses
    a call the service might take).
    """

    def __init__(self) -> None:
        # replaced whole, never changed in place: threads sharing a client read one or the other
        self._active: dict[str, ViewInfo] | None = None

    def knows(self, name: str) -> bool:
        active = self._active
        return active is not None and name in active

    def get(self, name: str) -> ViewInfo | None:
        return (self._active or {}).get(name)

    def load(self, views: Iterable[ViewInfo]) -> None:
        self._active = {view.name: view for view in views if view.active}

    def clear(self) -> None:
        self._active = None


def check_parameters(view: ViewInfo, arguments: Mapping[str, Any]) -> InvalidRequest | None:
    """The 422 the service would answer for calling `view` with `arguments`, or None."""
    arguments = _unwrapped(view, arguments)
    if view.kind == "graph" and isinstance(arguments.get("seed"), str):
        arguments = {**arguments, "seed": arguments["seed"].strip()}
    details = _problems(view.input_schema, arguments)
    if not details:
        return None
    return InvalidRequest(
        f"the parameters of view {view.name!r} are invalid",
        status=422,
        code="invalid_request",
        details=details,
    )


def _unwrapped(view: ViewInfo, arguments: Mapping[str, Any]) -> Mapping[str, Any]:
    """`{"parameters": {...}}` stands for the parameters themselves, unless the view declares a
    parameter of that name (the service reads the body so)."""
    inner = arguments.get("parameters")
    if set(arguments) != {"parameters"} or "parameters" in view.input_schema.get("properties", {}):
        return arguments
    return inner if isinstance(inner, dict) else arguments


def _problems(schema: Mapping[str, Any], arguments: Mapping[str, Any]) -> list[ErrorDetail]:
    properties: Mapping[str, Any] = schema.get("properties", {})
    declared: list[str] = list(properties)
    found: dict[str, str] = {}
    for error in _validator(json.dumps(schema, sort_keys=True)).iter_errors(dict(arguments)):
        for name, msg in _located(error, declared):
            wording = _wording(properties.get(name, {}), arguments.get(name)) if error.path else None
            found.setdefault(name, wording or msg)
    order = [name for name in arguments if name not in declared] + declared
    return [ErrorDetail(("parameters", name), found[name]) for name in order if name in found]


def _located(error: Any, declared: list[str]) -> list[tuple[str, str]]:
    """The parameter(s) a jsonschema error is about, with the service's wording where it has one."""
    if error.path:
        return [(str(error.path[0]), error.message)]
    if error.validator == "required":
        return [(name, "required") for name in error.validator_value if name not in error.instance]
    if error.validator == "additionalProperties":
        expected = f"expected one of: {', '.join(declared)}" if declared else "this view takes no parameters"
        return [(name, f"unknown parameter; {expected}") for name in error.instance if name not in declared]
    return []


TIMESTAMP = "expected an ISO 8601 timestamp with a timezone, within the years 1 to 9999 in UTC"
FINITE = "expected a finite number within float8's range (about ±1.8e308)"
TYPE_NAMES = {
    "string": "string",
    "array": "string array",
    "number": "number",
    "integer": "integer",
    "boolean": "boolean",
}


def _wording(prop: Mapping[str, Any], value: Any) -> str | None:
    """The service's own message for `value` of a parameter published as `prop`, from the same
    checks in the same order (type, bounds, sizes, item enum, enum): a caller matching on the
    service's `msg` sees it whichever side refused. None where none of them applies."""
    for check in (_type_wording, _bounds_wording, _size_wording, _enum_wording):
        message = check(prop, value)
        if message is not None:
            return message
    return None


def _type_wording(prop: Mapping[str, Any], value: Any) -> str | None:
    kind = prop.get("type")
    if prop.get("format") == "date-time":
        return None if isinstance(value, str) and _is_timestamp(value) else TIMESTAMP
    valid = {
        "string": isinstance(value, str),
        "array": isinstance(value, list) and all(isinstance(item, str) for item in value),
        "number": _is_finite_number(value),
        "integer": isinstance(value, int) and not isinstance(value, bool),
        "boolean": isinstance(value, bool),
    }
    if kind not in valid or valid[kind]:
        return None
    if kind == "number" and isinstance(value, int | float) and not isinstance(value, bool):
        return FINITE
    return f"expected {TYPE_NAMES[kind]}, got {type(value).__name__}"


def _bounds_wording(prop: Mapping[str, Any], value: Any) -> str | None:
    if "minimum" in prop and value < prop["minimum"]:
        return f"must be at least {prop['minimum']}"
    if "maximum" in prop and value > prop["maximum"]:
        return f"must be at most {prop['maximum']}"
    return None


def _count(number: int, unit: str) -> str:
    """`1 item`, `3 items`: the bound as the message reads it."""
    return f"{number} {unit}" if number == 1 else f"{number} {unit}s"


def _size_wording(prop: Mapping[str, Any], value: Any) -> str | None:
    for low, high, unit in (("minLength", "maxLength", "character"), ("minItems", "maxItems", "item")):
        if low in prop and len(value) < prop[low]:
            return f"must have at least {_count(prop[low], unit)}"
        if high in prop and len(value) > prop[high]:
            return f"must have at most {_count(prop[high], unit)}"
    return None


def _enum_wording(prop: Mapping[str, Any], value: Any) -> str | None:
    allowed = prop.get("items", {}).get("enum")
    for index, item in enumerate(value if allowed is not None else ()):
        if item not in allowed:
            return f"item {index} ({item!r}) must be one of {allowed}"
    if "enum" in prop and value not in prop["enum"]:
        return f"must be one of {prop['enum']}"
    return None


@lru_cache(maxsize=256)
def _validator(schema_json: str) -> Validator:
    """A draft 2020-12 validator with the service's types and timestamp format (one per schema)."""
    from jsonschema import Draft202012Validator
    from jsonschema import FormatChecker
    from jsonschema import validators

    types = Draft202012Validator.TYPE_CHECKER.redefine_many(
        {
            "integer": lambda _, value: isinstance(value, int) and not isinstance(value, bool),
            "number": lambda _, value: _is_finite_number(value),
        }
    )
    formats = FormatChecker(formats=())
    formats.checks("date-time")(_is_timestamp)
    cls = validators.extend(Draft202012Validator, type_checker=types)  # type: ignore[no-untyped-call]
    return cls(json.loads(schema_json), format_checker=formats)  # type: ignore[no-any-return]


def _is_finite_number(value: Any) -> bool:
    if isinstance(value, bool):
        return False
    return isinstance(value, int) or (isinstance(value, float) and math.isfinite(value))


def _is_timestamp(value: object) -> bool:
    """ISO 8601 with a timezone, as the service parses it; a non-string is the type's problem."""
    if not isinstance(value, str):
        return True
    try:
        parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return False
    return parsed.tzinfo is not None
