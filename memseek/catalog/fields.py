"""Reading declared fields out of `content`, and their materialised form for SQL.

Writes store each present declared field in `records.fields` (JSONB) in a form typed filters,
sorts and expression indexes can use: strings, numbers and booleans as themselves, string
arrays as arrays, datetimes as integer epoch microseconds (UTC). Absent or JSON-null values are
left out, so `exists` is `fields ? name`.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from datetime import UTC
from datetime import datetime
from typing import TYPE_CHECKING
from typing import Any

from memseek.catalog.base import FieldType

if TYPE_CHECKING:  # models imports this module (through parameters); only the type is needed here
    from memseek.catalog.models import Collection

MISSING: Any = object()
EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def read_path(content: Any, path: str) -> Any:
    """The value at dot path `path` in `content`, or MISSING (JSON null counts as missing)."""
    node = content
    for part in path.split("."):
        if not isinstance(node, dict) or part not in node:
            return MISSING
        node = node[part]
    return MISSING if node is None else node


def read_field(collection: Collection, name: str, content: Any) -> Any:
    """Field `name` of a record written under `collection`: path first, then fallbacks."""
    for path in collection.field_path(name):
        value = read_path(content, path)
        if value is not MISSING:
            return value
    return MISSING


def parse_datetime(value: Any) -> datetime | None:
    """An ISO 8601 timestamp with a timezone that falls within the years 1 to 9999 in UTC (as
    `occurred_at` must), or None."""
    if not isinstance(value, str):
        return None
    try:
        parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
        if parsed.tzinfo is None:
            return None
        parsed.astimezone(UTC)  # 0001-01-01T00:00+01:00 is in year 0 in UTC
    except (ValueError, OverflowError):
        return None
    return parsed


def epoch_micros(moment: datetime) -> int:
    delta = moment - EPOCH
    return (delta.days * 86_400 + delta.seconds) * 1_000_000 + delta.microseconds


def _is_number(value: Any) -> bool:
    """A finite number a float8 can hold, as every score is (10**400 is refused like a score)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return False
    try:
        return math.isfinite(float(value))
    except OverflowError:
        return False


VALID: dict[FieldType, Callable[[Any], bool]] = {
    "string": lambda value: isinstance(value, str),
    "string_array": lambda value: isinstance(value, list) and all(isinstance(v, str) for v in value),
    "number": _is_number,
    "integer": lambda value: isinstance(value, int) and not isinstance(value, bool),
    "boolean": lambda value: isinstance(value, bool),
    "datetime": lambda value: parse_datetime(value) is not None,
}
"""Whether a value is valid for each field type; only the declared type's check runs (a string
field's value is not also tried as a timestamp, which costs a caught exception per value)."""


def type_error(field_type: FieldType, value: Any) -> str | None:
    """Why `value` is not a valid `field_type`, or None when it is."""
    if VALID[field_type](value):
        return None
    if field_type == "datetime":
        return "expected an ISO 8601 timestamp with a timezone, within the years 1 to 9999 in UTC"
    if field_type == "number" and isinstance(value, int | float) and not isinstance(value, bool):
        return "expected a finite number within float8's range (about ±1.8e308)"
    return f"expected {field_type.replace('_', ' ')}, got {type(value).__name__}"


def materialise(field_type: FieldType, value: Any) -> Any:
    """The JSONB form of a valid value (see module docstring)."""
    if field_type == "datetime":
        moment = parse_datetime(value)
        assert moment is not None
        return epoch_micros(moment)
    return value


def materialise_all(collection: Collection, content: Any) -> dict[str, Any]:
    """Every present declared field of `content`, materialised (values must be valid)."""
    out: dict[str, Any] = {}
    for name, decl in collection.fields.items():
        value = read_field(collection, name, content)
        if value is not MISSING:
            out[name] = materialise(decl.type, value)
    return out
