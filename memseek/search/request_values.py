"""The value types of a search request's fields: JSON arrays held as tuples with their bounds
checked on the raw input, finite scalars, bounds that are numbers or aware timestamps.

They are pydantic `Annotated` types shared by the request models (`memseek.search.request`), so
each rule and its error message is written once.
"""

from __future__ import annotations

import math
import re
from datetime import datetime
from functools import partial
from typing import Annotated
from typing import Any
from typing import Literal
from typing import get_args

from pydantic import AfterValidator
from pydantic import AwareDatetime
from pydantic import BeforeValidator
from pydantic import Field
from pydantic import PlainSerializer
from pydantic import PlainValidator
from pydantic import SerializationInfo
from pydantic import StrictInt
from pydantic import StrictStr
from pydantic import StringConstraints
from pydantic import TypeAdapter
from pydantic import ValidationError
from pydantic.config import JsonDict
from pydantic_core import PydanticCustomError

MAX_LIST = 100
MAX_OUTPUT_NAMES = 16
MAX_VECTOR_DIMENSIONS = 16000
"""The longest `vector` parsed (the write path's bound); the collection's model decides the width."""

Include = Literal[
    "text", "scores", "collection", "collection_version", "entity", "type",
    "key", "status", "depth", "occurred_at", "created_at", "run_id",
]  # fmt: skip


def invalid(msg: str) -> PydanticCustomError:
    # The message goes in as context: a brace in user data must never read as a template field.
    return PydanticCustomError("invalid", "{msg}", {"msg": msg})


def _unique(values: tuple[Any, ...]) -> tuple[Any, ...]:
    repeated = sorted({str(v) for v in values if values.count(v) > 1})
    if repeated:
        raise invalid(f"entries must be unique; repeated: {', '.join(repeated)}")
    return values


def raw_length(min_items: int, max_items: int, value: Any) -> Any:
    if not isinstance(value, list | tuple):
        raise invalid("must be a list")
    if len(value) < min_items:
        raise invalid(f"must hold at least {min_items} entr{'y' if min_items == 1 else 'ies'}")
    if len(value) > max_items:
        raise invalid(f"must hold at most {max_items} entries")
    return value


def list_rules(max_items: int, min_items: int = 0, unique: bool = False) -> list[Any]:
    """The rules of a JSON array held as a tuple: `Annotated[tuple[item, ...], *list_rules(...)]`.

    Lengths are checked on the raw input: pydantic's own tuple bounds count only the items that
    validated, which adds a misleading "too short" next to the real item errors.
    """
    bounds: JsonDict = {"minItems": min_items, "maxItems": max_items}
    if unique:
        bounds["uniqueItems"] = True
    metadata: list[Any] = [
        BeforeValidator(partial(raw_length, min_items, max_items)),
        Field(json_schema_extra=bounds),
    ]
    if unique:
        metadata.append(AfterValidator(_unique))
    return metadata


def _number(value: Any) -> int | float | None:
    """The value if it is a finite number; booleans are not numbers."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return value if isinstance(value, int) or math.isfinite(value) else None


def _timestamp(value: Any) -> Any:
    # Only ISO strings (or YAML's datetimes): pydantic would otherwise read 0, and "1767225600",
    # as Unix seconds.
    if not isinstance(value, str | datetime) or (isinstance(value, str) and _NUMERAL.fullmatch(value)):
        raise invalid("must be an ISO 8601 timestamp with a timezone")
    return value


_NUMERAL = re.compile(r"\s*[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?\s*")
"""A string that is only a number (pydantic reads such a string as Unix time)."""


def _scalar(value: Any) -> bool | int | float | str:
    if isinstance(value, str | bool) or _number(value) is not None:
        return value  # type: ignore[no-any-return]
    raise invalid("must be a string, a finite number or a boolean")


def _bound(value: Any) -> float | int | datetime:
    if isinstance(value, int | float) and not isinstance(value, bool):
        if _number(value) is None:
            raise invalid("must be a finite number")
        return value
    try:
        return _AWARE.validate_python(value)
    except ValidationError:
        raise invalid("must be a number or an ISO 8601 timestamp with a timezone") from None


def _keyed(value: Any) -> bool | str:
    if value is True or value is False or value == "any":
        return value  # type: ignore[no-any-return]
    raise invalid("must be true, false or any")


def _eq_value(value: Any) -> Any:
    if not isinstance(value, list | tuple):
        return _scalar(value)
    if len(value) > MAX_LIST:
        raise invalid(f"a list value holds at most {MAX_LIST} entries")
    return tuple(_scalar(v) for v in value)


def _serialize(value: Any, info: SerializationInfo) -> Any:
    # Explicit, because pydantic's union serializer behind a PlainValidator warns in JSON mode.
    if not info.mode_is_json():
        return value
    if isinstance(value, tuple):
        return list(value)
    return value.isoformat() if isinstance(value, datetime) else value


Text = Annotated[StrictStr, StringConstraints(min_length=1, max_length=512)]
"""A non-empty name or value."""
Timestamp = Annotated[AwareDatetime, BeforeValidator(_timestamp)]
_AWARE: TypeAdapter[datetime] = TypeAdapter(Timestamp)
Scalar = Annotated[
    bool | int | float | str,
    PlainValidator(_scalar, json_schema_input_type=bool | int | float | str),
    PlainSerializer(_serialize),
]
Bound = Annotated[
    int | float | datetime,
    PlainValidator(_bound, json_schema_input_type=int | float | AwareDatetime),
    PlainSerializer(_serialize),
]
EqValue = Annotated[
    Scalar | tuple[Scalar, ...],
    PlainValidator(
        _eq_value, json_schema_input_type=bool | int | float | str | list[bool | int | float | str]
    ),
    PlainSerializer(_serialize),
]
Positive = Annotated[StrictInt, Field(gt=0)]
Keyed = Annotated[
    bool | Literal["any"],
    PlainValidator(_keyed, json_schema_input_type=bool | Literal["any"]),
    PlainSerializer(_serialize),
]
Names = Annotated[tuple[Text, ...], *list_rules(MAX_LIST, unique=True)]
OutputNames = Annotated[tuple[Text, ...], *list_rules(MAX_OUTPUT_NAMES, unique=True)]
Versions = Annotated[tuple[Positive, ...], *list_rules(MAX_LIST, min_items=1, unique=True)]
Values = Annotated[tuple[Scalar, ...], *list_rules(MAX_LIST, min_items=1)]
StringValues = Annotated[tuple[StrictStr, ...], *list_rules(MAX_LIST, min_items=1)]
Includes = Annotated[tuple[Include, ...], *list_rules(len(get_args(Include)), unique=True)]
Number = Annotated[float, Field(strict=True, allow_inf_nan=False)]
QueryVector = Annotated[tuple[Number, ...], *list_rules(MAX_VECTOR_DIMENSIONS, min_items=1)]
