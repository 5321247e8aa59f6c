"""The loaded catalog: every definition, validated and frozen, with lookups by name.

Built only by `memseek.catalog.load.load_catalog`; services never read YAML themselves.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from dataclasses import field

from memseek.catalog.models import Collection


class UnknownDefinition(LookupError):
    """A name or (name, version) the catalog does not hold."""


@dataclass(frozen=True)
class Catalog:
    """Every loaded definition. `collections` maps name → all versions, ascending."""

    collections: Mapping[str, tuple[Collection, ...]] = field(default_factory=dict)
    hash: str = "sha256:"

    def collection(self, name: str, version: int | None = None) -> Collection:
        """Version `version` of collection `name`, or its active version when None."""
        versions = self.collections.get(name, ())
        for candidate in versions:
            if (candidate.version == version) if version is not None else candidate.active:
                return candidate
        wanted = f"version {version}" if version is not None else "an active version"
        raise UnknownDefinition(f"collection {name!r} has no {wanted}")

    def versions(self, name: str) -> tuple[Collection, ...]:
        """Every loaded version of collection `name` (empty when unknown)."""
        return self.collections.get(name, ())
