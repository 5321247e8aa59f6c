"""Check incoming records against the catalog and turn them into rows (no database access).

Every problem of every record is collected as a `Detail` whose `loc` starts with
`("records", index)`, so one 422 lists them all. The database checks that remain
(`derived_from` existence, idempotency) are in `memseek.write.ingest`.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from collections.abc import Mapping
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC
from typing import Any
from typing import Protocol

from pydantic import ValidationError

from memseek.catalog.catalog import Catalog
from memseek.catalog.catalog import UnknownDefinition
from memseek.catalog.fields import MISSING
from memseek.catalog.fields import read_path
from memseek.catalog.fields import type_error
from memseek.catalog.models import Collection
from memseek.errors import Detail
from memseek.errors import Loc
from memseek.errors import details_from_pydantic
from memseek.models.config import accepted_model_names
from memseek.models.vectors import values_problem
from memseek.storable import unstorable_values
from memseek.suggest import hint
from memseek.suggest import nearest
from memseek.write.models import RecordIn


class EmbedderInfo(Protocol):
    """What the write path needs to know about an embedding model."""

    @property
    def model_id(self) -> str: ...

    @property
    def dimensions(self) -> int: ...


class Embedders(Protocol):
    """The model registry, as far as the write path uses it."""

    def embedder(self, alias: str) -> EmbedderInfo: ...


@dataclass(frozen=True, slots=True)
class Checked:
    """A record that passed every check that needs no database."""

    index: int
    record: RecordIn
    collection: Collection
    payload_hash: str
    pending: bool


@dataclass(frozen=True, slots=True)
class Salvaged:
    """A record whose shape is invalid, with its invalid keys set aside (placeholders for the
    required ones): the catalog rules still run on the rest, so one 422 lists every problem of
    the record (design §3), not only its shape problems. It is never written."""

    index: int
    record: RecordIn
    invalid: frozenset[str]

    def keep(self, problems: list[Detail]) -> list[Detail]:
        """The catalog problems that are not about a key already reported (or a placeholder)."""
        return [d for d in problems if len(d.loc) < 3 or str(d.loc[2]) not in self.invalid]


_PLACEHOLDERS = {"entity": "-", "type": "-", "text": "-"}
"""Stand-ins for invalid required keys (their problems are already reported and filtered out)."""
_TOGETHER = ("embedding", "embedding_model")
"""Given together or not at all: the one rule across keys (an error with no key of its own)."""


def parse_records(
    items: list[Any],
) -> tuple[list[tuple[int, RecordIn]], list[Detail], list[Salvaged]]:
    """Validate each item's shape; problems are reported per index, good records returned, and
    what can still be checked against the catalog of the invalid ones."""
    parsed: list[tuple[int, RecordIn]] = []
    problems: list[Detail] = []
    salvaged: list[Salvaged] = []
    for index, item in enumerate(items):
        try:
            parsed.append((index, RecordIn.model_validate(item)))
        except ValidationError as exc:
            errors = exc.errors(include_url=False)
            problems.extend(details_from_pydantic(errors, ("records", index)))
            rest = _salvage(index, item, [e["loc"] for e in errors])
            if rest is not None:
                salvaged.append(rest)
    return parsed, problems, salvaged


def _salvage(index: int, item: Any, locs: list[tuple[Any, ...]]) -> Salvaged | None:
    if not isinstance(item, dict):
        return None
    invalid = {str(loc[0]) for loc in locs if loc}
    if any(not loc for loc in locs) or invalid.intersection(_TOGETHER):
        invalid.update(_TOGETHER)
    if invalid.intersection({"collection", "collection_version"}):
        return None  # which collection version the rules come from is unknown
    rest = {key: value for key, value in item.items() if key not in invalid}
    rest.update({key: value for key, value in _PLACEHOLDERS.items() if key in invalid})
    try:
        return Salvaged(index, RecordIn.model_validate(rest), frozenset(invalid))
    except ValidationError:
        return None


def check_record(
    catalog: Catalog, embedders: Embedders, max_chars: int, index: int, record: RecordIn
) -> tuple[Checked | None, list[Detail]]:
    """Apply every catalog rule to one record."""
    at: Loc = ("records", index)
    collection, problems = _collection(catalog, record, at)
    if collection is None:
        return None, problems
    record = _canonical_model(catalog, embedders, collection, record)
    payload, hash_problems = _payload(record, at)
    problems += hash_problems
    problems += _shape(collection, record, max_chars, at)
    problems += list(field_problems(collection, record.content, (*at, "content")))
    problems += _enrichment_problems(catalog, collection, record, at)
    problems += _embedding_problems(catalog, embedders, collection, record, at)
    if problems:
        return None, problems
    pending = needs_processing(catalog, collection, record.scores, record.annotations, record.embedding)
    return Checked(index, record, collection, payload, pending), []


def _collection(catalog: Catalog, record: RecordIn, at: Loc) -> tuple[Collection | None, list[Detail]]:
    if not catalog.versions(record.collection):
        named = hint(record.collection, catalog.collections, "the collections are")
        return None, [Detail((*at, "collection"), f"unknown collection {record.collection!r}{named}")]
    try:
        return catalog.collection(record.collection, record.collection_version), []
    except UnknownDefinition as exc:
        where = "collection_version" if record.collection_version is not None else "collection"
        return None, [Detail((*at, where), str(exc))]


def _payload(record: RecordIn, at: Loc) -> tuple[str, list[Detail]]:
    """The idempotency digest of the record as sent (when it has a key), and unstorable strings."""
    try:
        # the embedding (finite numbers only, already validated) is most of the record's JSON
        dumped = record.model_dump_json(exclude={"embedding"})
        # U+FFFD: pydantic writes a lone surrogate in an object key as the replacement character
        suspicious = any(mark in dumped for mark in ("\\u0000", "NaN", "Infinity", "\ufffd"))
    except ValueError:  # a lone surrogate inside a string value
        suspicious = True
    if not suspicious and record.idempotency_key is None:
        return "", []
    # python mode: JSON mode would already have replaced lone surrogates in object keys
    problems = list(unstorable_values(record.model_dump(), at)) if suspicious else []
    if record.idempotency_key is None:
        return "", problems
    # occurred_at is stored as an instant, so the same instant in another offset is the same record
    in_utc = record.occurred_at.astimezone(UTC) if record.occurred_at is not None else None
    as_stored = record.model_copy(update={"occurred_at": in_utc})
    payload = as_stored.model_dump(mode="json", exclude={"idempotency_key"})
    dumped = json.dumps(payload, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(dumped.encode("utf-8", "surrogatepass")).hexdigest(), problems


def _unknown_type(name: str, types: Sequence[str]) -> str:
    """The declared types in their declared order, and the nearest to a typo."""
    close = nearest(name, types)
    guess = f"; did you mean {close!r}?" if close is not None else ""
    return f"type {name!r} is not one of {', '.join(types)}{guess}"


def _shape(collection: Collection, record: RecordIn, max_chars: int, at: Loc) -> list[Detail]:
    problems: list[Detail] = []
    name = collection.name
    if record.type not in collection.types:
        problems.append(Detail((*at, "type"), _unknown_type(record.type, collection.types)))
    if collection.keyed is True and record.key is None:
        problems.append(Detail((*at, "key"), f"collection {name!r} is keyed: key is required"))
    if collection.keyed is False and record.key is not None:
        problems.append(Detail((*at, "key"), f"collection {name!r} is not keyed: key must be null"))
    if len(record.text) > max_chars:
        problems.append(Detail((*at, "text"), f"text is longer than {max_chars} characters"))
    return problems


def field_problems(collection: Collection, content: Mapping[str, Any], at: Loc) -> Iterator[Detail]:
    """Declared fields present in `content` (by path or fallback path) with the wrong type."""
    for name, decl in collection.fields.items():
        for path in collection.field_path(name):
            value = read_path(content, path)
            if value is MISSING:
                continue
            error = type_error(decl.type, value)
            if error is not None:
                yield Detail((*at, *path.split(".")), f"field {name!r} at content.{path}: {error}")
            break


def _enrichment_problems(catalog: Catalog, collection: Collection, record: RecordIn, at: Loc) -> list[Detail]:
    """Client enrichments must be supplied; supplied model enrichments must be valid values."""
    problems: list[Detail] = []
    for name in collection.enrichments:
        decl = catalog.enrichments[name]
        if decl.kind == "client" and record.annotations.get(name) is None:
            problems.append(Detail((*at, "annotations", name), f"enrichment {name!r} must be supplied"))
        elif decl.kind == "llm_score" and name in record.scores:
            low, high = decl.range
            if not low <= record.scores[name] <= high:
                problems.append(Detail((*at, "scores", name), f"must be within [{low}, {high}]"))
        elif (
            decl.kind == "llm_label"
            and name in record.annotations
            and label_of(record.annotations[name], decl.labels) is None
        ):
            allowed = ", ".join(decl.labels)
            problems.append(Detail((*at, "annotations", name), f'must be {{"label": one of {allowed}}}'))
    return problems


def label_of(value: Any, labels: tuple[str, ...]) -> str | None:
    """The label of an `{"label": ...}` annotation when it is one of `labels`, else None."""
    if isinstance(value, dict) and set(value) == {"label"} and value["label"] in labels:
        return str(value["label"])
    return None


def _canonical_model(
    catalog: Catalog, embedders: Embedders, collection: Collection, record: RecordIn
) -> RecordIn:
    """A supplied vector named by its `conf/models.yaml` model name carries the embedder's model id.

    Writers know the model by the name the catalog declares (`model: all-MiniLM-L6-v2`); the
    embedder's own id can be more precise (`all-MiniLM-L6-v2-onnx-int8`). Both name the model the
    collection embeds with, and the vector is stored under the embedder's id, as computed ones are.
    """
    decl = catalog.models.get(collection.embedding) if collection.embedding else None
    if decl is None or record.embedding_model is None or record.embedding_model != decl.model:
        return record
    model_id = embedders.embedder(collection.embedding).model_id  # type: ignore[arg-type]
    return record.model_copy(update={"embedding_model": model_id})


def _embedding_problems(
    catalog: Catalog, embedders: Embedders, collection: Collection, record: RecordIn, at: Loc
) -> list[Detail]:
    if record.embedding is None:
        return []
    if collection.embedding is None:
        return [Detail((*at, "embedding"), f"collection {collection.name!r} declares no embedding")]
    model = embedders.embedder(collection.embedding)
    problems: list[Detail] = []
    if record.embedding_model != model.model_id:
        names = accepted_model_names(model.model_id, catalog.models.get(collection.embedding))
        named = " or ".join(map(repr, names))
        msg = (
            f"collection {collection.name!r} embeds with {named} "
            f"(alias {collection.embedding!r}), not {record.embedding_model!r}"
        )
        problems.append(Detail((*at, "embedding_model"), msg))
    if len(record.embedding) != model.dimensions:
        msg = f"expected {model.dimensions} dimensions, got {len(record.embedding)}"
        problems.append(Detail((*at, "embedding"), msg))
    unstorable = values_problem(record.embedding)
    if unstorable is not None:
        problems.append(Detail((*at, "embedding"), unstorable))
    return problems


def needs_processing(
    catalog: Catalog,
    collection: Collection,
    scores: Mapping[str, Any],
    annotations: Mapping[str, Any],
    embedding: Any,
) -> bool:
    """Whether anything must be computed: a missing embedding or a missing model enrichment."""
    if collection.embedding is not None and embedding is None:
        return True
    return bool(missing_enrichments(catalog, collection, scores, annotations))


def missing_enrichments(
    catalog: Catalog, collection: Collection, scores: Mapping[str, Any], annotations: Mapping[str, Any]
) -> list[str]:
    """The model enrichments `collection` requires whose values are not there yet."""
    missing: list[str] = []
    for name in collection.enrichments:
        kind = catalog.enrichments[name].kind
        if (kind == "llm_score" and name not in scores) or (kind == "llm_label" and name not in annotations):
            missing.append(name)
    return missing
