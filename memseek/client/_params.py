"""View parameters checked before sending, against the active version's published `input_schema`.

The service checks a view call's parameters and reports every problem at once, one per
parameter, at `loc` `["parameters", NAME]`: unknown names first (in the order given), then the
declared parameters in declaration order. This module gives the same report from the JSON
Schema (`jsonschema`, draft 2020-12), so a bad call fails the same way without a round trip.
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
    declared: list[str] = list(schema.get("properties", {}))
    found: dict[str, str] = {}
    for error in _validator(json.dumps(schema, sort_keys=True)).iter_errors(dict(arguments)):
        for name, msg in _located(error, declared):
            found.setdefault(name, msg)
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
