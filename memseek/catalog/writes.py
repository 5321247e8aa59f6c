"""Write contracts: their load-time checks, and the filled record a call hands to the write path.

A write contract fixes everything about a record but the values its parameters supply: the
collection (and optionally its version), the type (or an enum of types), the status and whether
it is a keyed fact. At load, every check below runs and every problem is reported, each at its
YAML path inside the definition:

* every `{{placeholder}}` is well formed, outside mapping keys, and names a declared parameter;
  every declared parameter is used somewhere (one no template uses would be accepted from a
  caller and then silently dropped);
* views and write contracts share one namespace: both become agent tools under their name;
* the collection (and pinned version) exists, and unpinned it has an active version; it
  requires no `client` enrichment, which no contract parameter can supply;
* `type` is one of the collection's types, or one whole placeholder of a string parameter whose
  `enum` lists only types of the collection;
* `key` agrees with the collection's `keyed`; `entity`, `text` and `key` are text (a whole
  placeholder names a string parameter) and always have a value (every parameter they use is
  required or has a default);
* `occurred_at` is a fixed timestamp with a timezone or one whole datetime placeholder;
* `scores` are declared by the collection (or computed by an `llm_score` enrichment it
  requires), each a finite number or one whole number placeholder;
* every declared field the `content` template fills, at its path or a fallback path, gets the
  declared type: a literal of that type, or a parameter of that type (an integer parameter also
  fills a number field), or interpolated text for a string field.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from collections.abc import Sequence
from typing import Any

from memseek.catalog.base import FieldType
from memseek.catalog.catalog import Catalog
from memseek.catalog.catalog import UnknownDefinition
from memseek.catalog.catalog import known_scores
from memseek.catalog.conf import ClientEnrichment
from memseek.catalog.fields import MISSING
from memseek.catalog.fields import parse_datetime
from memseek.catalog.fields import type_error
from memseek.catalog.models import Collection
from memseek.catalog.models import RecordTemplate
from memseek.catalog.models import WriteContract
from memseek.catalog.parameters import Parameter
from memseek.catalog.problems import Found
from memseek.catalog.template import PLACEHOLDER
from memseek.catalog.template import fill_template
from memseek.catalog.template import placeholder_names
from memseek.catalog.template import placeholder_problems
from memseek.catalog.template import placeholders_at
from memseek.errors import Detail
from memseek.errors import Loc

MAX_LABEL_CHARS = 256
"""Entities and keys are 1-256 characters on every write (`memseek.write.models.Label`)."""
TEXT_PARTS: tuple[Loc, ...] = (("key",), ("record", "entity"), ("record", "text"))
"""The parts that must be text (the entity, the record text and a keyed fact's slot)."""
ALWAYS_GIVEN: tuple[Loc, ...] = (("type",), *TEXT_PARTS)
"""Where a missing value would leave the record without a required part."""


def write_problems(contract: WriteContract, catalog: Catalog) -> Found:
    """Every problem of one write contract version (paths relative to the definition)."""
    found = _placeholder_problems(contract) + _unused(contract) + _always_given(contract)
    found += _text_problems(contract) + _occurred_at_problems(contract)
    if contract.name in catalog.views:
        msg = f"view {contract.name!r} has this name; views and write contracts share one namespace (tools)"
        found.append((("name",), msg))
    collection, target_problems = _target(contract, catalog)
    if collection is None:
        return found + target_problems
    return (
        found
        + _type_problems(contract, collection)
        + _key_problems(contract, collection)
        + _score_problems(contract, collection, catalog)
        + _content_problems(contract, collection)
        + _enrichment_problems(collection, catalog)
    )


def _template(contract: WriteContract) -> dict[str, Any]:
    """The placeholder-bearing parts of the definition, by their YAML paths."""
    parts: dict[str, Any] = {
        "type": contract.type,
        "record": contract.record.model_dump(exclude_defaults=True),
    }
    return parts | ({"key": contract.key} if contract.key is not None else {})


def _at(template: Mapping[str, Any], loc: Loc) -> Any:
    node: Any = template
    for part in loc:
        node = node.get(part, MISSING) if isinstance(node, dict) else MISSING
    return node


def _whole(value: Any) -> str | None:
    """The parameter a value that is one whole placeholder names, else None."""
    match = PLACEHOLDER.fullmatch(value) if isinstance(value, str) else None
    return match.group(1) if match else None


def _placeholder_problems(contract: WriteContract) -> Found:
    return [(d.loc, d.msg) for d in placeholder_problems(_template(contract), contract.parameters)]


def _unused(contract: WriteContract) -> Found:
    used = placeholder_names(_template(contract))
    return [
        (("parameters", name), "declared but used nowhere: no placeholder in type, key or record names it")
        for name in contract.parameters
        if name not in used
    ]


def _always_given(contract: WriteContract) -> Found:
    """`type`, `key`, `entity` and `text` may use only parameters that always have a value: an
    omitted optional one would remove the value, and the write would fail on every such call."""
    template = _template(contract)
    return [
        (loc, f"{{{{{name}}}}} must always have a value: make {name!r} required or give it a default")
        for loc in ALWAYS_GIVEN
        for name in sorted(placeholder_names(_at(template, loc)))
        if _sometimes_absent(contract.parameters.get(name))
    ]


def _sometimes_absent(parameter: Parameter | None) -> bool:
    return parameter is not None and not parameter.required and not parameter.has_default


def _text_problems(contract: WriteContract) -> Found:
    template, found = _template(contract), []
    for loc in TEXT_PARTS:
        value = _at(template, loc)
        if value is MISSING:
            continue
        problem = _text_problem(value, contract.parameters, limited=loc[-1] != "text")
        if problem is not None:
            found.append((loc, problem))
    return found


def _text_problem(value: str, parameters: Mapping[str, Parameter], limited: bool) -> str | None:
    name = _whole(value)
    if name is not None:
        declared = parameters.get(name)
        return (
            None
            if declared is None or declared.type == "string"
            else f"{{{{{name}}}}} is a {declared.type} parameter, not a string"
        )
    if PLACEHOLDER.search(value):
        return None
    if not value.strip():
        return "must not be blank"
    return (
        f"must be at most {MAX_LABEL_CHARS} characters" if limited and len(value) > MAX_LABEL_CHARS else None
    )


def _occurred_at_problems(contract: WriteContract) -> Found:
    value = contract.record.occurred_at
    if value is None:
        return []
    name = _whole(value)
    declared = contract.parameters.get(name) if name is not None else None
    if name is not None and (declared is None or declared.type == "datetime"):
        return []
    if name is None and not PLACEHOLDER.search(value) and parse_datetime(value) is not None:
        return []
    return [
        (("record", "occurred_at"), "must be one whole {{datetime parameter}} or a timestamp with a timezone")
    ]


def _target(contract: WriteContract, catalog: Catalog) -> tuple[Collection | None, Found]:
    """The collection version calls write into: the pinned one, else the active one."""
    name, pinned = contract.collection, contract.collection_version
    if not catalog.versions(name):
        return None, [(("collection",), f"unknown collection {name!r}")]
    try:
        return catalog.collection(name, pinned), []
    except UnknownDefinition:
        if pinned is not None:
            return None, [(("collection_version",), f"collection {name!r} has no version {pinned}")]
        return None, [(("collection",), f"collection {name!r} has no active version to write into")]


def _label(collection: Collection) -> str:
    return f"collection {collection.name} v{collection.version}"


def _type_problems(contract: WriteContract, collection: Collection) -> Found:
    types, name = collection.types, _whole(contract.type)
    if name is None:
        if contract.type in types:
            return []
        return [
            (
                ("type",),
                f"must be a type of {_label(collection)} ({', '.join(types)}) or one whole {{{{parameter}}}}",
            )
        ]
    parameter = contract.parameters.get(name)
    if parameter is None:
        return []  # an undeclared placeholder, reported as such
    if parameter.type != "string" or parameter.enum is None:
        return [
            (
                ("type",),
                f"{{{{{name}}}}} must be a string parameter with an enum of types of {_label(collection)}",
            )
        ]
    return [
        (
            ("parameters", name, "enum", i),
            f"{value!r} is not a type of {_label(collection)} ({', '.join(types)})",
        )
        for i, value in enumerate(parameter.enum)
        if value not in types
    ]


def _key_problems(contract: WriteContract, collection: Collection) -> Found:
    if contract.key is None and collection.keyed is True:
        return [(("key",), f"{_label(collection)} is keyed: true; every record needs a key: declare one")]
    if contract.key is not None and collection.keyed is False:
        return [(("key",), f"{_label(collection)} is keyed: false; its records take no key")]
    return []


def _score_problems(contract: WriteContract, collection: Collection, catalog: Catalog) -> Found:
    known = known_scores([collection], catalog)
    found: Found = []
    for name, value in contract.record.scores.items():
        loc = ("record", "scores", name)
        if name not in known:
            found.append((loc, f"{_label(collection)} declares no score named {name!r}"))
        problem = _number_problem(value, contract.parameters)
        if problem is not None:
            found.append((loc, problem))
    return found


def _number_problem(value: Any, parameters: Mapping[str, Parameter]) -> str | None:
    if isinstance(value, float | int) and not isinstance(value, bool):
        return None if math.isfinite(value) else "must be a finite number"
    name = _whole(value)
    declared = parameters.get(name) if name is not None else None
    if name is not None and (declared is None or declared.type in ("number", "integer")):
        return None
    return "must be a number or one whole {{number or integer parameter}}"


def _content_problems(contract: WriteContract, collection: Collection) -> Found:
    """Each declared field the template fills, at its path or a fallback path, gets its type."""
    content = contract.record.content
    found: Found = []
    for field, decl in collection.fields.items():
        for path in collection.field_path(field):
            value = _at(content, tuple(path.split(".")))
            problem = (
                None if value is MISSING or value is None else _fills(decl.type, value, contract.parameters)
            )
            if problem is not None:
                loc = ("record", "content", *path.split("."))
                found.append((loc, f"field {field!r} of {_label(collection)} is a {decl.type}: {problem}"))
    return found


def _fills(field_type: FieldType, value: Any, parameters: Mapping[str, Parameter]) -> str | None:
    """Why the template `value` does not always give a `field_type` value, or None."""
    if not placeholder_names(value):
        return type_error(field_type, value)
    name = _whole(value)
    if name is not None:
        declared = parameters.get(name)
        if (
            declared is None
            or declared.type == field_type
            or (declared.type, field_type) == ("integer", "number")
        ):
            return None
        return f"{{{{{name}}}}} is a {declared.type} parameter"
    if isinstance(value, str):
        return None if field_type == "string" else "text with placeholders is a string"
    if isinstance(value, list) and field_type == "string_array":
        return next((p for item in value if (p := _fills("string", item, parameters)) is not None), None)
    return f"expected {field_type.replace('_', ' ')}"


def _enrichment_problems(collection: Collection, catalog: Catalog) -> Found:
    return [
        (
            ("collection",),
            f"{_label(collection)} requires the client enrichment {name!r}, which no write contract supplies",
        )
        for name in collection.enrichments
        if isinstance(catalog.enrichments.get(name), ClientEnrichment)
    ]


def written_types(contract: WriteContract) -> tuple[str, ...]:
    """The record types a contract can write: its fixed type, or its type parameter's enum."""
    name = _whole(contract.type)
    parameter = contract.parameters.get(name) if name is not None else None
    return tuple(parameter.enum) if parameter is not None and parameter.enum else (contract.type,)


# --- calls -------------------------------------------------------------------------------------


def filled_record(contract: WriteContract, values: Mapping[str, Any]) -> dict[str, Any]:
    """The record one call writes, as `POST /records` takes it: the template filled with the
    call's (validated) parameter values; an omitted optional value removes what it would fill."""
    filled: dict[str, Any] = fill_template(contract.template(), values)
    return filled


def blamed(contract: WriteContract, details: Sequence[Detail]) -> list[Detail]:
    """The write path's problems with the filled record (`loc` `("records", 0, ...)`), each moved
    to the parameter(s) whose value produced it — `("parameters", name)` — or, for a value the
    contract fixes, to its place in the definition (`("record", "text")`, `("type",)`)."""
    out: list[Detail] = []
    for detail in details:
        for moved in _blame(contract, detail):
            if moved not in out:
                out.append(moved)
    return out


def _blame(contract: WriteContract, detail: Detail) -> list[Detail]:
    rest = detail.loc[2:] if detail.loc[:2] == ("records", 0) else detail.loc
    if rest[:1] == ("idempotency_key",):
        return [Detail(rest, detail.msg)]
    names = placeholders_at(contract.template(), rest) or []
    where = "/".join(str(part) for part in rest) or "the record"
    if names:
        return [
            Detail(("parameters", name), f"{detail.msg} (at {where} in the written record)") for name in names
        ]
    in_record = bool(rest) and rest[0] in RecordTemplate.model_fields
    return [Detail(("record", *rest) if in_record else rest, detail.msg)]
