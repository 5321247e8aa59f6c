"""The write API's request bodies as strict, frozen pydantic models.

These check what can be checked without the catalog or the database (shapes, lengths, finite
numbers, timezones). Catalog rules (types, keyed, declared fields, enrichments, embedding model)
are in `memseek.write.prepare`; existence of `derived_from` ids in `memseek.write.ingest`.
"""

from __future__ import annotations

from datetime import UTC
from datetime import datetime
from typing import Annotated
from typing import Any
from typing import Literal
from uuid import UUID

from pydantic import AfterValidator
from pydantic import AwareDatetime
from pydantic import BaseModel
from pydantic import BeforeValidator
from pydantic import ConfigDict
from pydantic import Field
from pydantic import StrictFloat
from pydantic import StrictInt
from pydantic import StrictStr
from pydantic import StringConstraints
from pydantic import WithJsonSchema
from pydantic import field_validator
from pydantic import model_validator
from pydantic.config import JsonDict

from memseek.catalog.base import not_blank
from memseek.storable import STORABLE_NON_BLANK
from memseek.write.limits import MAX_RECORDS

MAX_DERIVED_FROM = 100
MAX_EMBEDDING_DIMENSIONS = 16000
MAX_JSON_DEPTH = 128
"""How deeply `content` and `annotations` may nest objects and arrays."""

NON_BLANK: JsonDict = {"pattern": r"\S"}
"""What the OpenAPI document states of a non-blank text; `not_blank` checks it, so that a blank
one is told "must not be blank", not a regular expression."""
Label = Annotated[
    StrictStr,
    StringConstraints(min_length=1, max_length=256),
    AfterValidator(not_blank),
    WithJsonSchema({"type": "string", "minLength": 1, "maxLength": 256, **NON_BLANK}),
]
"""A short non-blank identifier-like string (entity, key, run id, idempotency key)."""
MapKey = Annotated[str, StringConstraints(min_length=1, max_length=128)]


Finite = Annotated[StrictFloat, Field(allow_inf_nan=False)]
"""A finite JSON number (json.loads accepts NaN, Infinity and overflowing literals; all are rejected)."""


def _timestamp_text(value: Any) -> Any:
    """Timestamps must be ISO 8601 strings: a bare number has no visible timezone."""
    if isinstance(value, datetime | str):
        return value
    raise ValueError("expected an ISO 8601 timestamp string with a timezone")


def _representable(value: datetime) -> datetime:
    """The instant must fall within the years 1-9999 in UTC, where every client can read it back."""
    try:
        value.astimezone(UTC)
    except OverflowError:
        raise ValueError("must fall within the years 1 to 9999 in UTC") from None
    return value


Timestamp = Annotated[AwareDatetime, BeforeValidator(_timestamp_text), AfterValidator(_representable)]


def _depth(value: Any) -> int:
    """How many objects and arrays deep `value` nests (level by level: no recursion limit to hit,
    and one pass over each level's containers instead of a stack entry per value)."""
    depth, level = 0, [value]
    while containers := [item for item in level if isinstance(item, dict | list)]:
        depth += 1
        level = [child for c in containers for child in (c.values() if isinstance(c, dict) else c)]
    return depth


def _shallow(value: dict[str, Any]) -> dict[str, Any]:
    if _depth(value) > MAX_JSON_DEPTH:
        raise ValueError(f"nested more than {MAX_JSON_DEPTH} levels deep")
    return value


JsonObject = Annotated[dict[str, Any], AfterValidator(_shallow)]


class RecordIn(BaseModel):
    """One record to write (design §3 `POST /records`)."""

    # NaN/Infinity inside `content` serialise as themselves, so the write path can find them
    model_config = ConfigDict(extra="forbid", frozen=True, ser_json_inf_nan="constants")

    collection: StrictStr = Field(description="Collection name.")
    collection_version: Annotated[StrictInt, Field(gt=0)] | None = Field(
        None, description="Pin a collection version; default: the active one."
    )
    entity: Label = Field(description="Who or what the record is about (1–256 characters).")
    type: StrictStr = Field(description="One of the collection version's types.")
    key: Label | None = Field(None, description="Fact-slot name for a keyed fact; null for an event.")
    text: Annotated[StrictStr, AfterValidator(not_blank)] = Field(
        json_schema_extra=NON_BLANK, description="Non-blank, at most MAX_RECORD_CHARS characters."
    )
    content: JsonObject = Field(default_factory=dict, description="The original JSON payload.")
    occurred_at: Timestamp | None = Field(None, description="When it happened; timezone required.")
    scores: dict[MapKey, Finite] = Field(default_factory=dict, description="Name → finite number.")
    annotations: Annotated[dict[MapKey, Any], AfterValidator(_shallow)] = Field(
        default_factory=dict, description="Processor name → JSON value."
    )
    status: Literal["active", "draft"] = Field("active", description="draft records are proposals.")
    derived_from: list[UUID] = Field(
        default_factory=list, max_length=MAX_DERIVED_FROM, description="Ids of the records it derives from."
    )
    run_id: Label | None = Field(None, description="The automated run that produced it.")
    idempotency_key: Label | None = Field(None, description="Repeat-safe writes: same key → same record.")
    embedding: list[Finite] | None = Field(
        None,
        min_length=1,
        max_length=MAX_EMBEDDING_DIMENSIONS,
        description="A vector already computed with the collection's embedding model.",
    )
    embedding_model: StrictStr | None = Field(None, description="The model id that produced `embedding`.")

    @field_validator("derived_from")
    @classmethod
    def _unique_parents(cls, value: list[UUID]) -> list[UUID]:
        if len(set(value)) != len(value):
            raise ValueError("ids must be unique")
        return value

    @model_validator(mode="after")
    def _embedding_pair(self) -> RecordIn:
        if (self.embedding is None) != (self.embedding_model is None):
            raise ValueError("embedding and embedding_model are given together or not at all")
        return self


class RecordsIn(BaseModel):
    """`POST /records`: 1–1,000 records written atomically."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    records: list[RecordIn] = Field(min_length=1, max_length=MAX_RECORDS)


def _storable(value: str) -> str:
    if "\x00" in value or any("\ud800" <= char <= "\udfff" for char in value):
        raise ValueError("must not contain NUL characters or unpaired surrogates")
    return value


Reason = Annotated[
    StrictStr,
    Field(
        min_length=1,
        max_length=2000,
        description="Why (non-blank; no NUL character or unpaired surrogate).",
        json_schema_extra={"pattern": STORABLE_NON_BLANK},
    ),
    AfterValidator(not_blank),
    AfterValidator(_storable),
]
"""Why a record is retracted, rejected or erased: 1–2,000 characters PostgreSQL can store."""


class ReasonIn(BaseModel):
    """`POST /records/{id}/retract` and `/reject`: why."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    reason: Reason


class EraseIn(BaseModel):
    """`DELETE /records/{id}` and `DELETE /entities/{entity}`: optionally why (kept in the erasure
    log), or no body at all."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    reason: Reason | None = None


class EmptyIn(BaseModel):
    """`POST /records/{id}/approve` takes no fields (an empty object or no body)."""

    model_config = ConfigDict(extra="forbid", frozen=True)
