"""Collection definitions (design §1) as strict, frozen pydantic models.

A collection is versioned like a view: a stable name, a positive integer version, at most one
active version per name, immutable once loaded. Records store the version they were written
under, and every field read uses the declaration of *that* version.
"""

from __future__ import annotations

from typing import Annotated
from typing import Literal

from pydantic import BaseModel
from pydantic import ConfigDict
from pydantic import Field
from pydantic import StringConstraints
from pydantic import field_validator

Name = Annotated[str, StringConstraints(pattern=r"^[A-Za-z_][A-Za-z0-9_]{0,62}$")]
"""Identifier-safe: names reach SQL comments and JSON paths, never raw SQL values."""
DotPath = Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9_\-]+(\.[A-Za-z0-9_\-]+)*$")]
FieldType = Literal["string", "string_array", "number", "integer", "boolean", "datetime"]


class Strict(BaseModel):
    """Base for every definition model: unknown keys are errors, values are immutable."""

    model_config = ConfigDict(extra="forbid", frozen=True)


class FieldDecl(Strict):
    """A declared field: where it lives in `content` and what reads may do with it."""

    type: FieldType = Field(description="Value type; writes with another type are rejected.")
    path: DotPath | None = Field(None, description="Dot path inside content; default: the field name.")
    fallback_paths: tuple[DotPath, ...] = Field((), description="Tried in order when path is absent.")
    filterable: bool = False
    sortable: bool = False
    returnable: bool = False
    description: str | None = None


class ScoreDecl(Strict):
    """A stored score name; `display` shows it in rendered rows."""

    display: bool = False
    description: str | None = None


class LinkDecl(Strict):
    """An automatic link: each value of `field` becomes a link record in `edges`."""

    field: Name
    predicate: str = Field(min_length=1, max_length=128)
    edges: Name


class Collection(Strict):
    """One version of a collection."""

    name: Name
    version: int = Field(gt=0)
    active: bool = False
    description: str | None = None
    types: tuple[Name, ...] = Field(min_length=1)
    keyed: bool | Literal["any"] = "any"
    search_profile: Name = "pg_default"
    allowed_search_profiles: tuple[Name, ...] = ()
    embedding: Name | None = None
    text_language: Literal["english", "simple"] = "english"
    fields: dict[Name, FieldDecl] = Field(default_factory=dict)
    scores: dict[Name, ScoreDecl] = Field(default_factory=dict)
    enrichments: tuple[Name, ...] = ()
    links: tuple[LinkDecl, ...] = ()

    @field_validator("types", "allowed_search_profiles", "enrichments")
    @classmethod
    def _unique(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        if len(set(value)) != len(value):
            raise ValueError("entries must be unique")
        return value

    def field_path(self, name: str) -> tuple[str, ...]:
        """The paths tried for field `name`, in order."""
        decl = self.fields[name]
        return (decl.path or name, *decl.fallback_paths)
