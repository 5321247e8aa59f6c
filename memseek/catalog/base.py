"""Shared building blocks of every definition model: strictness, names and value types."""

from __future__ import annotations

from typing import Annotated
from typing import Any
from typing import Literal

from pydantic import AfterValidator
from pydantic import BaseModel
from pydantic import ConfigDict
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


class Strict(BaseModel):
    """Base for every definition model: unknown keys are errors, values are immutable."""

    model_config = ConfigDict(extra="forbid", frozen=True)
