"""The shared parameter model of views (and artifacts): typed, constrained, self-describing inputs.

Every constraint is checked against the declared type when the model is built, so `minimum` on
a string or `item_enum` on anything but a `string_array` is an error, never a silently ignored
key. Field order matters: each validator sees only the fields declared above it, so `enum` and
`default` come last and are checked against every constraint.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from typing import Any

from pydantic import Field
from pydantic import StrictBool
from pydantic import StrictInt
from pydantic import ValidationInfo
from pydantic import field_validator

from memseek.catalog.base import FieldType
from memseek.catalog.base import NonBlank
from memseek.catalog.base import Number
from memseek.catalog.base import Strict
from memseek.catalog.fields import type_error
from memseek.storable import UNSTORABLE
from memseek.storable import unstorable_values

JSON_SCHEMA_DIALECT = "https://json-schema.org/draft/2020-12/schema"

_APPLIES_TO: dict[str, tuple[str, ...]] = {
    "minimum": ("number", "integer"),
    "maximum": ("number", "integer"),
    "min_length": ("string",),
    "max_length": ("string",),
    "min_items": ("string_array",),
    "max_items": ("string_array",),
    "item_enum": ("string_array",),
}
_LOWER_BOUND = {"maximum": "minimum", "max_length": "min_length", "max_items": "min_items"}


class Parameter(Strict):
    """One typed input of a view: its type, whether it is required, and its constraints."""

    type: FieldType = Field(description="string, string_array, number, integer, boolean or datetime.")
    required: StrictBool = Field(False, description="The caller must supply it (then no default is allowed).")
    description: NonBlank | None = Field(None, description="What a tool-calling client shows for it.")
    minimum: Number | None = Field(None, description="Inclusive lower bound (numbers).")
    maximum: Number | None = Field(None, description="Inclusive upper bound (numbers).")
    min_length: StrictInt | None = Field(None, ge=0, description="Inclusive character-count bound (string).")
    max_length: StrictInt | None = Field(None, ge=0, description="Inclusive character-count bound (string).")
    min_items: StrictInt | None = Field(None, ge=0, description="Inclusive list-length bound (string_array).")
    max_items: StrictInt | None = Field(None, ge=0, description="Inclusive list-length bound (string_array).")
    item_enum: tuple[str, ...] | None = Field(None, description="Allowed list items (string_array).")
    enum: tuple[Any, ...] | None = Field(None, description="The complete set of allowed values.")
    default: Any = Field(None, description="Used when an optional parameter is omitted.")

    @field_validator("minimum", "maximum", "min_length", "max_length", "min_items", "max_items", "item_enum")
    @classmethod
    def _applies_to_type(cls, value: Any, info: ValidationInfo) -> Any:
        name = str(info.field_name)
        declared = info.data.get("type")
        if value is not None and declared is not None and declared not in _APPLIES_TO[name]:
            raise ValueError(f"{name} applies only to {' and '.join(_APPLIES_TO[name])} parameters")
        return value

    @field_validator("minimum", "maximum")
    @classmethod
    def _whole_bounds_for_integers(cls, value: float | None, info: ValidationInfo) -> float | None:
        """Spec: "Bounds on an integer must themselves be whole numbers" — `2` and `2.0` both are
        (kept as the integer 2); `2.5` is not. Any bound must be finite (`.nan` bounds nothing, and
        the published JSON Schema must stay JSON)."""
        if isinstance(value, float) and not math.isfinite(value):
            raise ValueError("bounds must be finite numbers")
        if value is None or info.data.get("type") != "integer" or isinstance(value, int):
            return value
        if not value.is_integer():
            raise ValueError("bounds on an integer parameter must be whole numbers")
        return int(value)

    @field_validator("maximum", "max_length", "max_items")
    @classmethod
    def _lower_not_above_upper(cls, value: float | None, info: ValidationInfo) -> float | None:
        lower_name = _LOWER_BOUND[str(info.field_name)]
        lower = info.data.get(lower_name)
        if value is not None and lower is not None and lower > value:
            raise ValueError(f"{lower_name} ({lower}) may not exceed {info.field_name} ({value})")
        return value

    @field_validator("item_enum")
    @classmethod
    def _item_enum_entries(cls, value: tuple[str, ...] | None) -> tuple[str, ...] | None:
        if value is not None:
            _require_nonempty_unique(value)
        return value

    @field_validator("enum")
    @classmethod
    def _enum_entries(cls, value: tuple[Any, ...] | None, info: ValidationInfo) -> tuple[Any, ...] | None:
        if value is None:
            return None
        _require_nonempty_unique(value)
        for index, entry in enumerate(value):
            problem = value_problem(info.data, entry)
            if problem is not None:
                raise ValueError(f"entry {index} ({entry!r}): {problem}")
        return value

    @field_validator("default")
    @classmethod
    def _default_is_valid(cls, value: Any, info: ValidationInfo) -> Any:
        if info.data.get("required"):
            raise ValueError("a required parameter may not declare a default")
        problem = value_problem(info.data, value)
        if problem is not None:
            raise ValueError(f"the default {value!r} is invalid: {problem}")
        return value

    @property
    def has_default(self) -> bool:
        """Whether a default was declared (`default: null` is refused, so None means none)."""
        return "default" in self.model_fields_set

    def problem(self, value: Any) -> str | None:
        """Why `value` is not acceptable for this parameter, or None when it is."""
        return value_problem(self.__dict__, value)


def _require_nonempty_unique(values: tuple[Any, ...]) -> None:
    if not values:
        raise ValueError("must not be empty")
    keys = [_identity(v) for v in values]
    if len(set(keys)) != len(keys):
        raise ValueError("entries must be unique")


def _identity(value: Any) -> Any:
    """What makes two JSON values one: 1 and 1.0 are the same number, but true is not 1."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return value  # Python compares and hashes numbers by value
    return json.dumps(value, sort_keys=True, default=str)


def value_problem(spec: Mapping[str, Any], value: Any) -> str | None:
    """Why `value` breaks the type or a constraint in `spec` (a parameter's fields), or None.

    Works on a partially validated parameter too (a missing type or constraint is skipped), which
    is how `enum` entries and `default` are checked while the model is being built.
    """
    declared = spec.get("type")
    if declared is None:
        return None
    problem = type_error(declared, value)
    if problem is not None:
        return problem
    for check in (_storable_problem, _bounds_problem, _size_problem, _item_enum_problem, _enum_problem):
        problem = check(spec, value)
        if problem is not None:
            return problem
    return None


def _storable_problem(spec: Mapping[str, Any], value: Any) -> str | None:
    return UNSTORABLE if any(True for _ in unstorable_values(value)) else None


def _bounds_problem(spec: Mapping[str, Any], value: Any) -> str | None:
    if spec.get("minimum") is not None and value < spec["minimum"]:
        return f"must be at least {spec['minimum']}"
    if spec.get("maximum") is not None and value > spec["maximum"]:
        return f"must be at most {spec['maximum']}"
    return None


def _count(number: int, unit: str) -> str:
    """`1 item`, `3 items`: the bound as the message reads it."""
    return f"{number} {unit}" if number == 1 else f"{number} {unit}s"


def _size_problem(spec: Mapping[str, Any], value: Any) -> str | None:
    for low, high, unit in (("min_length", "max_length", "character"), ("min_items", "max_items", "item")):
        if spec.get(low) is not None and len(value) < spec[low]:
            return f"must have at least {_count(spec[low], unit)}"
        if spec.get(high) is not None and len(value) > spec[high]:
            return f"must have at most {_count(spec[high], unit)}"
    return None


def _item_enum_problem(spec: Mapping[str, Any], value: Any) -> str | None:
    allowed = spec.get("item_enum")
    if allowed is not None:
        for index, item in enumerate(value):
            if item not in allowed:
                return f"item {index} ({item!r}) must be one of {list(allowed)}"
    return None


def _enum_problem(spec: Mapping[str, Any], value: Any) -> str | None:
    allowed = spec.get("enum")
    if allowed is not None and value not in allowed:
        return f"must be one of {list(allowed)}"
    return None


_JSON_TYPES: dict[str, dict[str, Any]] = {
    "string": {"type": "string"},
    "string_array": {"type": "array"},
    "number": {"type": "number"},
    "integer": {"type": "integer"},
    "boolean": {"type": "boolean"},
    "datetime": {"type": "string", "format": "date-time"},
}
_JSON_KEYWORDS = {
    "description": "description",
    "enum": "enum",
    "minimum": "minimum",
    "maximum": "maximum",
    "min_length": "minLength",
    "max_length": "maxLength",
    "min_items": "minItems",
    "max_items": "maxItems",
}


def property_schema(parameter: Parameter) -> dict[str, Any]:
    """The JSON Schema (draft 2020-12) of one parameter: every declared constraint included."""
    schema = dict(_JSON_TYPES[parameter.type])
    for attribute, keyword in _JSON_KEYWORDS.items():
        value = getattr(parameter, attribute)
        if value is not None:
            schema[keyword] = list(value) if isinstance(value, tuple) else value
    if parameter.type == "string_array":
        items: dict[str, Any] = {"type": "string"}
        if parameter.item_enum is not None:
            items["enum"] = list(parameter.item_enum)
        schema["items"] = items
    if parameter.has_default:
        schema["default"] = parameter.default
    return schema


def input_schema(parameters: Mapping[str, Parameter]) -> dict[str, Any]:
    """The complete machine-readable input contract of a view (what tool-calling clients read)."""
    return {
        "$schema": JSON_SCHEMA_DIALECT,
        "type": "object",
        "properties": {name: property_schema(p) for name, p in parameters.items()},
        "additionalProperties": False,
        "required": [name for name, p in parameters.items() if p.required],
    }


def parameter_summary(parameters: Mapping[str, Parameter]) -> dict[str, dict[str, Any]]:
    """The compact, human-readable summary `GET /views` shows: type, required, default."""
    return {
        name: {"type": p.type, "required": p.required, "default": p.default if p.has_default else None}
        for name, p in parameters.items()
    }
