"""The loaded catalog: every definition, validated and frozen, with lookups by name.

Built only by `memseek.catalog.load.load_catalog`; services never read YAML themselves.
Which view or write contract version is *active* is package-aware: with a deployment package
(`MEMSEEK_PACKAGE`) its pinned versions are the active ones, otherwise `active: true` decides.
"""

from __future__ import annotations

from collections.abc import Mapping
from collections.abc import Sequence
from dataclasses import dataclass
from dataclasses import field
from functools import cached_property
from typing import Any
from typing import TypeVar

from memseek.catalog.base import Capability
from memseek.catalog.conf import Enrichment
from memseek.catalog.conf import LlmScore
from memseek.catalog.conf import SearchProfile
from memseek.catalog.models import Collection
from memseek.catalog.models import Package
from memseek.catalog.models import Retention
from memseek.catalog.models import View
from memseek.catalog.models import WriteContract
from memseek.catalog.rank import RankDefault
from memseek.catalog.rank import RankedMode
from memseek.catalog.rank import RankNode
from memseek.models.config import ModelDecl

Contract = View | WriteContract
"""What a caller invokes by name with typed parameters, and what an agent gets as a tool."""
C = TypeVar("C", View, WriteContract)


class UnknownDefinition(LookupError):
    """A name or (name, version) the catalog does not hold."""


@dataclass(frozen=True, slots=True)
class Definition:
    """One stored definition: its identity, content hash and the body that was hashed."""

    kind: str
    name: str
    version: int
    hash: str
    body: Any
    file: str

    @property
    def label(self) -> str:
        """`kind name vN`, as problems name it."""
        return f"{self.kind} {self.name} v{self.version}"


@dataclass(frozen=True, slots=True)
class Footprint:
    """What a view can be seen to read: collection names and the search profiles they resolve to."""

    collections: tuple[str, ...] = ()
    profiles: tuple[str, ...] = ()


@dataclass(frozen=True)
class Catalog:
    """Every loaded definition. `collections`, `views` and `writes` map name → all versions,
    ascending."""

    collections: Mapping[str, tuple[Collection, ...]] = field(default_factory=dict)
    views: Mapping[str, tuple[View, ...]] = field(default_factory=dict)
    writes: Mapping[str, tuple[WriteContract, ...]] = field(default_factory=dict)
    packages: Mapping[str, Package] = field(default_factory=dict)
    package: Package | None = None
    profiles: Mapping[str, SearchProfile] = field(default_factory=dict)
    models: Mapping[str, ModelDecl] = field(default_factory=dict)
    enrichments: Mapping[str, Enrichment] = field(default_factory=dict)
    rank_default: RankDefault | None = None
    definitions: tuple[Definition, ...] = ()
    footprints: Mapping[tuple[str, int], Footprint] = field(default_factory=dict)
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

    def active_collection_names(self) -> tuple[str, ...]:
        """Names of the collections with an active version, sorted."""
        return tuple(
            sorted(name for name, versions in self.collections.items() if any(c.active for c in versions))
        )

    @cached_property
    def retention_rules(self) -> Mapping[str, Retention]:
        """collection → rule for every collection whose active version declares retention, by
        name. Worked out once per catalog (it never changes once loaded): every write asks."""
        active = (self.collection(name) for name in self.active_collection_names())
        return {
            collection.name: collection.retention for collection in active if collection.retention is not None
        }

    def view(self, name: str, version: int | None = None) -> View:
        """Version `version` of view `name`, or its active version (package-aware) when None."""
        return self._version(self.views.get(name, ()), version, f"view {name!r}")

    def _version(self, versions: tuple[C, ...], version: int | None, label: str) -> C:
        for candidate in versions:
            if (candidate.version == version) if version is not None else self.is_active(candidate):
                return candidate
        wanted = f"version {version}" if version is not None else "an active version"
        raise UnknownDefinition(f"{label} has no {wanted}")

    def all_views(self) -> tuple[View, ...]:
        """Every loaded view version, by name then version."""
        return tuple(view for name in sorted(self.views) for view in self.views[name])

    def is_active(self, contract: Contract) -> bool:
        """Whether `contract` (a view or write contract version) is the version callers get:
        pinned by the package, else `active: true`."""
        if self.package is not None:
            pins = self.package.writes if isinstance(contract, WriteContract) else self.package.views
            return pins.get(contract.name) == contract.version
        return contract.active

    def active_views(self, kind: str | None = None) -> tuple[View, ...]:
        """The active version of every view (optionally of one kind), by name."""
        return tuple(v for v in self.all_views() if self.is_active(v) and kind in (None, v.kind))

    def write(self, name: str, version: int | None = None) -> WriteContract:
        """Version `version` of write contract `name`, or its active version (package-aware)."""
        return self._version(self.writes.get(name, ()), version, f"write contract {name!r}")

    def all_writes(self) -> tuple[WriteContract, ...]:
        """Every loaded write contract version, by name then version."""
        return tuple(write for name in sorted(self.writes) for write in self.writes[name])

    def tools(self) -> tuple[Contract, ...]:
        """The views and write contracts exposed as agent tools: the package's `mcp.tools`, else
        every active view, then every active write contract (names never collide: load checks)."""
        if self.package is None:
            active_writes = tuple(w for w in self.all_writes() if self.is_active(w))
            return (*self.active_views(), *active_writes)
        pinned = self.package.views
        return tuple(self.view(n) if n in pinned else self.write(n) for n in self.package.mcp.tools)

    def hash_of(self, kind: str, name: str, version: int = 1) -> str:
        """The content hash of one loaded definition."""
        for definition in self.definitions:
            if (definition.kind, definition.name, definition.version) == (kind, name, version):
                return definition.hash
        raise UnknownDefinition(f"{kind} {name!r} v{version} is not loaded")

    def view_hash(self, view: View) -> str:
        """The content hash of a view version (what `view.hash` in responses pins)."""
        return self.hash_of("view", view.name, view.version)

    def write_hash(self, write: WriteContract) -> str:
        """The content hash of a write contract version (what `write.hash` in responses pins)."""
        return self.hash_of("write", write.name, write.version)

    def footprint(self, view: View) -> Footprint:
        """The collections and profiles a view resolved to at load time."""
        return self.footprints.get((view.name, view.version), Footprint())

    def capabilities(self, profile: str) -> frozenset[Capability]:
        """What the engine behind search profile `profile` can do."""
        return self.profiles[profile].capabilities

    def default_rank(self, mode: RankedMode) -> RankNode:
        """The deployment's default formula for a scored mode."""
        if self.rank_default is None:
            raise UnknownDefinition("the catalog has no rank default")
        return self.rank_default.variants[mode]


def known_scores(versions: Sequence[Collection], catalog: Catalog) -> frozenset[str]:
    """Score names the records of `versions` can carry: declared scores and llm_score enrichments."""
    names = {name for c in versions for name in c.scores}
    names |= {e for c in versions for e in c.enrichments if isinstance(catalog.enrichments.get(e), LlmScore)}
    return frozenset(names)
