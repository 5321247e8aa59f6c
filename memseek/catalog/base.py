"""Shared building blocks of every definition model: strictness, names and value types."""

from __future__ import annotations

import math
from typing import Annotated
from typing import Any
from typing import Literal

from pydantic import AfterValidator
from pydantic import BaseModel
from pydantic import ConfigDict
from pydantic import PlainValidator
from pydantic import StrictStr
from pydantic import StringConstraints

NAME_PATTERN = r"^[A-Za-z_][A-Za-z0-9_]{0,62}$"
Name = Annotated[str, StringConstraints(pattern=NAME_PATTERN)]
"""Identifier-safe: names reach SQL comments and JSON paths, never raw SQL values."""
DotPath = Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9_\-]+(\.[A-Za-z0-9_\-]+)*$")]


def not_blank(text: str) -> str:
    """`text` unless it is only whitespace as Python counts it (`str.isspace`), which is what
    rendering collapses: U+001C-U+001F included, which a `\\S` pattern lets through."""
    if not text.strip():
        raise ValueError("must not be blank")
    return text


NonBlank = Annotated[StrictStr, AfterValidator(not_blank)]
"""Prose that must say something: at least one non-space character."""
FieldType = Literal["string", "string_array", "number", "integer", "boolean", "datetime"]
"""The value types of declared fields and of view parameters (one vocabulary for both)."""
TextLanguage = Literal[
    "simple",
    "arabic",
    "armenian",
    "basque",
    "catalan",
    "danish",
    "dutch",
    "english",
    "finnish",
    "french",
    "german",
    "greek",
    "hindi",
    "hungarian",
    "indonesian",
    "irish",
    "italian",
    "lithuanian",
    "nepali",
    "norwegian",
    "portuguese",
    "romanian",
    "russian",
    "serbian",
    "spanish",
    "swedish",
    "tamil",
    "turkish",
    "yiddish",
]
"""A collection's full-text configuration: the ones every supported PostgreSQL (≥ 15) ships."""
Capability = Literal["vector", "text", "recent", "structured"]
"""What a search engine can do; a search mode needs the capability of the same name."""


def _unique(values: tuple[Any, ...]) -> tuple[Any, ...]:
    if len(set(values)) != len(values):
        raise ValueError("entries must be unique")
    return values


Unique = AfterValidator(_unique)
"""Annotate a tuple field with this: its entries must be unique."""


# Values of one of several types are checked by one function each: a union of pydantic types
# reports one problem per alternative, at paths that are not in the file (`keyed.bool`,
# `keyed.literal['any']`, `minimum.int`, `minimum.float`).


def _number(value: Any) -> int | float:
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    if isinstance(value, float) and math.isfinite(value):
        return value
    raise ValueError("must be a finite number")


def _number_or_text(value: Any) -> int | float | str:
    return value if isinstance(value, str) else _number(value)


def _keyed(value: Any) -> bool | str:
    if value is True or value is False or value == "any":
        return value  # type: ignore[no-any-return]
    raise ValueError("must be true, false or any")


Number = Annotated[int | float, PlainValidator(_number, json_schema_input_type=int | float)]
"""A finite integer or decimal (not a boolean)."""
NumberOrText = Annotated[
    int | float | str, PlainValidator(_number_or_text, json_schema_input_type=int | float | str)
]
"""A finite number, or a string (a `{{placeholder}}` the template fills with one)."""
Keyed = Annotated[bool | Literal["any"], PlainValidator(_keyed, json_schema_input_type=bool | Literal["any"])]
"""A collection's `keyed`: true (key required), false (key forbidden) or any."""


class Strict(BaseModel):
    """Base for every definition model: unknown keys are errors, values are immutable."""

    model_config = ConfigDict(extra="forbid", frozen=True)
