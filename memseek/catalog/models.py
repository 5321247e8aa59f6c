"""Catalog definitions as strict, frozen pydantic models: collections, views, write contracts and
packages.

Collections, views and write contracts share one versioned identity: a stable name, a positive
integer version, at most one active version per name, immutable once loaded. Records store the
collection version they were written under, and every field read uses the declaration of *that*
version. The conf files (profiles, models, enrichments) are in `memseek.catalog.conf`.
"""

from __future__ import annotations

from typing import Annotated
from typing import Any
from typing import Literal

from pydantic import Field
from pydantic import StrictBool
from pydantic import StrictInt
from pydantic import StrictStr
from pydantic import ValidationInfo
from pydantic import field_validator

from memseek.catalog.base import Capability
from memseek.catalog.base import DotPath
from memseek.catalog.base import FieldType
from memseek.catalog.base import Keyed
from memseek.catalog.base import Name
from memseek.catalog.base import NonBlank
from memseek.catalog.base import NumberOrText
from memseek.catalog.base import Strict
from memseek.catalog.base import TextLanguage
from memseek.catalog.base import Unique
from memseek.catalog.parameters import Parameter

MAX_VERSION = 2**31 - 1
"""Definition versions are stored in PostgreSQL `integer` columns."""
ACTIVATED_KINDS = ("collection", "view", "write")
"""The kinds whose versions `active` switches on: at most one active version per name, and `active`
is left out of their hash (switching versions is a roll-out, not a change to either)."""


class FieldDecl(Strict):
    """A declared field: where it lives in `content` and what reads may do with it."""

    type: FieldType = Field(description="Value type; writes with another type are rejected.")
    path: DotPath | None = Field(None, description="Dot path inside content; default: the field name.")
    fallback_paths: tuple[DotPath, ...] = Field((), description="Tried in order when path is absent.")
    filterable: StrictBool = False
    sortable: StrictBool = False
    returnable: StrictBool = False
    description: str | None = None


class ScoreDecl(Strict):
    """A stored score name; `display` shows it in rendered rows."""

    display: StrictBool = False
    description: str | None = None


class LinkDecl(Strict):
    """An automatic link: each value of `field` becomes a link record in `edges`."""

    field: Name
    predicate: str = Field(min_length=1, max_length=128)
    edges: Name


MAX_RETENTION_DAYS = 1_000_000
"""The longest retention: about 2,700 years, so that `now() - days` stays within PostgreSQL's
timestamp range."""


class Retention(Strict):
    """How long a collection keeps its records: the workers erase those whose `field` lies more
    than `days` days in the past (docs/lifecycle.md, "Retention")."""

    field: Literal["occurred_at", "created_at"] = Field(
        description="occurred_at (when it happened) or created_at (when it was written)."
    )
    days: StrictInt = Field(gt=0, le=MAX_RETENTION_DAYS, description="A positive whole number of days.")


class Versioned(Strict):
    """The identity collections and views share."""

    name: Name
    version: StrictInt = Field(
        gt=0, le=MAX_VERSION, description="Positive integer; publish a new one to change a contract."
    )
    active: StrictBool = Field(False, description="At most one active version per name.")
    description: NonBlank | None = None


class Collection(Versioned):
    """One version of a collection."""

    types: Annotated[tuple[Name, ...], Unique] = Field(min_length=1)
    keyed: Keyed = "any"
    search_profile: Name = "pg_default"
    allowed_search_profiles: Annotated[tuple[Name, ...], Unique] = ()
    embedding: Name | None = None
    text_language: TextLanguage = Field("english", description="PostgreSQL full-text configuration.")
    fields: dict[Name, FieldDecl] = Field(default_factory=dict)
    scores: dict[Name, ScoreDecl] = Field(default_factory=dict)
    enrichments: Annotated[tuple[Name, ...], Unique] = ()
    links: tuple[LinkDecl, ...] = ()
    retention: Retention | None = Field(
        None, description="Erase records older than this; the active version's rule applies to every version."
    )

    def field_path(self, name: str) -> tuple[str, ...]:
        """The paths tried for field `name`, in order."""
        decl = self.fields[name]
        return (decl.path or name, *decl.fallback_paths)


ViewKind = Literal["search", "graph", "graph_orphans"]
GRAPH_KINDS: tuple[ViewKind, ...] = ("graph", "graph_orphans")


class GraphBlock(Strict):
    """Where a graph view's links live and which declared fields hold their ends and kind."""

    edges: Name = Field(description="The edges collection holding one link record per link.")
    subject: Name = Field(description="Declared string field of the edges collection: where a link starts.")
    object: Name = Field(description="Declared string field of the edges collection: where a link ends.")
    predicate: Name = Field(description="Declared string field of the edges collection: the link kind.")
    nodes: Name | None = Field(None, description="graph_orphans only: the keyed nodes collection.")


class View(Versioned):
    """One version of a view: a named, typed, bounded read."""

    kind: ViewKind = Field("search", description="search, graph or graph_orphans.")
    parameters: dict[Name, Parameter] = Field(default_factory=dict, description="The typed inputs.")
    query: dict[str, Any] | None = Field(
        None, validate_default=True, description="kind search: the search request template."
    )
    required_capabilities: Annotated[tuple[Capability, ...], Unique] = Field(
        (), description="kind search: what the engines behind its collections must be able to do."
    )
    graph: GraphBlock | None = Field(
        None, validate_default=True, description="Graph kinds: the link mapping."
    )

    @field_validator("query")
    @classmethod
    def _query_for_searches(cls, value: dict[str, Any] | None, info: ValidationInfo) -> dict[str, Any] | None:
        kind = info.data.get("kind")
        if kind == "search" and value is None:
            raise ValueError("a search view needs a query")
        if kind in GRAPH_KINDS and value is not None:
            raise ValueError(f"a {kind} view takes no query")
        return value

    @field_validator("required_capabilities")
    @classmethod
    def _capabilities(cls, value: tuple[str, ...], info: ValidationInfo) -> tuple[str, ...]:
        if value and info.data.get("kind") in GRAPH_KINDS:
            raise ValueError("only search views declare required_capabilities")
        return value

    @field_validator("graph")
    @classmethod
    def _graph_for_graph_kinds(cls, value: GraphBlock | None, info: ValidationInfo) -> GraphBlock | None:
        kind = info.data.get("kind")
        if kind == "search" and value is not None:
            raise ValueError("a search view takes no graph block")
        if kind in GRAPH_KINDS and value is None:
            raise ValueError(f"a {kind} view needs a graph block")
        if value is not None and (value.nodes is None) != (kind == "graph"):
            raise ValueError("graph.nodes is required for graph_orphans and not allowed for graph")
        return value


class RecordTemplate(Strict):
    """The record a write contract writes: each value fixed, or filled from `{{placeholders}}`
    exactly as a view's query template is (`memseek.catalog.template`)."""

    entity: StrictStr = Field(description="Who or what the record is about.")
    text: StrictStr = Field(description="The record text.")
    occurred_at: StrictStr | None = Field(
        None, description="One whole datetime placeholder, or a fixed timestamp; omitted: when written."
    )
    content: dict[str, Any] = Field(
        default_factory=dict, description="The JSON payload; declared fields must get their declared type."
    )
    scores: dict[Name, NumberOrText] = Field(
        default_factory=dict, description="Declared score name → a number or one whole number placeholder."
    )


class WriteContract(Versioned):
    """One version of a write contract: a named, typed, bounded write an agent or application may
    make. Everything but the parameters' values is fixed by the definition: the collection, the
    record type (or an enum of types), the status and whether the record is a keyed fact."""

    description: NonBlank = Field(description="What it writes and when to call it: what an agent reads.")
    collection: Name = Field(description="The collection written into.")
    collection_version: Annotated[StrictInt, Field(gt=0, le=MAX_VERSION)] | None = Field(
        None, description="Pin a collection version; default: the active one."
    )
    type: StrictStr = Field(
        description="A type of the collection, or one whole placeholder of a string parameter whose "
        "enum lists types of the collection."
    )
    status: Literal["active", "draft"] = Field(
        "active", description="draft: a proposal a person or the application approves."
    )
    key: StrictStr | None = Field(
        None, description="Omitted: an event. A fixed string or a template: the keyed fact's slot."
    )
    parameters: dict[Name, Parameter] = Field(default_factory=dict, description="The typed inputs.")
    record: RecordTemplate = Field(description="What the record holds, placeholders filled per call.")

    def template(self) -> dict[str, Any]:
        """The record as `POST /records` takes it, placeholders still unfilled."""
        fixed: dict[str, Any] = {"collection": self.collection, "type": self.type, "status": self.status}
        if self.collection_version is not None:
            fixed["collection_version"] = self.collection_version
        if self.key is not None:
            fixed["key"] = self.key
        return {**fixed, **self.record.model_dump(exclude_defaults=True)}


class Mcp(Strict):
    """Which of a package's views and write contracts become agent tools."""

    tools: Annotated[tuple[Name, ...], Unique] = Field(
        (), description="Names; each must be one of the package's views or write contracts."
    )


class Package(Strict):
    """A deployment package: the exact view and write contract versions a deployment exposes, and
    its agent tools."""

    name: Name
    version: StrictInt = Field(
        1, gt=0, le=MAX_VERSION, description="Publish a new version to change what the package pins."
    )
    description: NonBlank | None = None
    views: dict[Name, Annotated[StrictInt, Field(gt=0)]] = Field(
        min_length=1, description="View name → the exact version this deployment exposes."
    )
    writes: dict[Name, Annotated[StrictInt, Field(gt=0)]] = Field(
        default_factory=dict, description="Write contract name → the exact version this deployment exposes."
    )
    mcp: Mcp = Field(default_factory=Mcp, description="Omitted: the package exposes no agent tools.")
