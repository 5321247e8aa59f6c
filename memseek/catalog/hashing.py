"""Definition hashes: what makes a loaded `(kind, name, version)` identifiable and immutable.

A definition's hash covers its YAML content in canonical JSON (sorted keys, no whitespace), so
comments, key order and formatting do not count — and neither does `active`: switching which
version is active is how a new version is rolled out, not a change to the old one. The catalog
hash covers every definition hash plus which versions are active and which package is selected.

Identities: collections, views, write contracts and packages by name and version; conf entries
(search profiles, model aliases, enrichments) by name, as version 1; the rank default by its own
hash.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import replace
from typing import TYPE_CHECKING
from typing import Any

from memseek.catalog.catalog import Catalog
from memseek.catalog.catalog import Definition
from memseek.catalog.models import ACTIVATED_KINDS

if TYPE_CHECKING:
    from memseek.catalog.load import Entry

UNHASHED_KEYS = frozenset({"active"})


def plain(value: Any) -> Any:
    """`value` as JSON data: mapping keys as strings, tuples as lists."""
    if isinstance(value, dict):
        return {str(key): plain(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [plain(item) for item in value]
    return value


def content_hash(value: Any) -> str:
    """`sha256:` + the hex digest of the canonical JSON of `value`."""
    canonical = json.dumps(
        plain(value), sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str
    )
    return "sha256:" + hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def definition_body(entry: Entry) -> Any:
    """What is hashed and stored for one definition."""
    body = plain(entry.raw)
    if entry.kind in ACTIVATED_KINDS:
        body = {key: value for key, value in body.items() if key not in UNHASHED_KEYS}
    return body


def finish(catalog: Catalog, entries: Sequence[Entry]) -> Catalog:
    """The catalog with its definitions (body and hash each) and the catalog hash."""
    definitions = []
    for entry in entries:
        body = definition_body(entry)
        digest = content_hash(body)
        # The rank default has no name of its own: it is recorded under its hash, so any catalog
        # may bring its own formulas (and every formula ever loaded stays on record).
        name = digest if entry.kind == "rank_default" else entry.name
        definitions.append(Definition(entry.kind, name, entry.version, digest, body, entry.file))
    summary = [[d.kind, d.name, d.version, d.hash, _active(catalog, d)] for d in definitions]
    package = catalog.package.name if catalog.package else None
    catalog_hash = content_hash({"definitions": sorted(summary), "package": package})
    return replace(catalog, definitions=tuple(definitions), hash=catalog_hash)


def _active(catalog: Catalog, definition: Definition) -> bool:
    if definition.kind == "collection":
        return catalog.collection(definition.name, definition.version).active
    if definition.kind == "view":
        return catalog.is_active(catalog.view(definition.name, definition.version))
    if definition.kind == "write":
        return catalog.is_active(catalog.write(definition.name, definition.version))
    return True
