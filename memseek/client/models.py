"""What the SDK returns: frozen, typed views of the service's JSON, each keeping it as `raw`.

A value the response left out (an `include` not asked for, a field only combined searches have)
reads as None; `raw` is the JSON exactly as it arrived, for anything a newer service adds.
Timestamps are parsed into timezone-aware `datetime`s; ids stay strings, the form every route
takes back.
"""

from __future__ import annotations

from collections.abc import Iterator
from collections.abc import Mapping
from dataclasses import dataclass
from dataclasses import field
from datetime import datetime
from typing import Any
from typing import Generic
from typing import TypeVar
from typing import overload

Json = dict[str, Any]
T = TypeVar("T")


def _time(value: Any) -> datetime | None:
    return datetime.fromisoformat(value) if isinstance(value, str) else None


def _strings(value: Any) -> tuple[str, ...]:
    return tuple(str(item) for item in value or ())


@dataclass(frozen=True, slots=True)
class Hit:
    """One result: a search hit, a graph view's link citation or an orphan report's node.

    >>> hit = result[0]
    >>> hit.id, hit.rank, hit.score, hit.text
    ('0190…', 1, 1.0, 'Maria confirmed the Q3 budget.')
    """

    id: str
    rank: int | None = None
    score: float | None = None
    rank_score: float | None = None
    source_ranks: dict[str, int] | None = None
    text: str | None = None
    collection: str | None = None
    collection_version: int | None = None
    entity: str | None = None
    type: str | None = None
    key: str | None = None
    status: str | None = None
    depth: int | None = None
    occurred_at: datetime | None = None
    created_at: datetime | None = None
    run_id: str | None = None
    scores: dict[str, float] | None = None
    fields: dict[str, Any] | None = None
    annotations: dict[str, Any] | None = None
    subject: str | None = None
    object: str | None = None
    predicate: str | None = None
    content: dict[str, Any] | None = None
    raw: Json = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Hit:
        known: Json = {name: data.get(name) for name in HIT_PLAIN}
        times: Json = {name: _time(data.get(name)) for name in ("occurred_at", "created_at")}
        return cls(id=str(data["id"]), **known, **times, raw=dict(data))


HIT_PLAIN = tuple(
    name for name in Hit.__dataclass_fields__ if name not in ("id", "occurred_at", "created_at", "raw")
)


@dataclass(frozen=True, slots=True)
class Ranking:
    """The score contract of a response (spec: "How to read score"); `kind` is
    `rank_expression`, `llm_judge`, `rrf` or `structured`."""

    kind: str
    scored: bool
    score_semantics: str | None = None
    score_range: list[float] | None = None
    normalization: str | None = None
    normalization_scope: str | None = None
    calibrated: bool | None = None
    higher_is_better: bool | None = None
    native_score_field: str | None = None

    @classmethod
    def from_json(cls, data: Mapping[str, Any] | None) -> Ranking | None:
        if data is None:
            return None
        optional = {name: data.get(name) for name in RANKING_OPTIONAL}
        return cls(kind=str(data["kind"]), scored=bool(data["scored"]), **optional)


RANKING_OPTIONAL = tuple(name for name in Ranking.__dataclass_fields__ if name not in ("kind", "scored"))


@dataclass(frozen=True, slots=True)
class Hits:
    """A list of hits: iterable, sized and indexable (`for hit in result`, `result[0]`)."""

    hits: tuple[Hit, ...]
    raw: Json = field(repr=False, compare=False)

    def __iter__(self) -> Iterator[Hit]:
        return iter(self.hits)

    def __len__(self) -> int:
        return len(self.hits)

    @overload
    def __getitem__(self, index: int) -> Hit: ...
    @overload
    def __getitem__(self, index: slice) -> tuple[Hit, ...]: ...
    def __getitem__(self, index: int | slice) -> Hit | tuple[Hit, ...]:
        return self.hits[index]

    @property
    def ids(self) -> list[str]:
        """The hits' record ids, in rank order."""
        return [hit.id for hit in self.hits]


def _hits(data: Mapping[str, Any], name: str = "hits") -> tuple[Hit, ...]:
    return tuple(Hit.from_json(hit) for hit in data.get(name) or ())


@dataclass(frozen=True, slots=True)
class SearchResult(Hits):
    """`POST /search`'s response (spec: "What comes back").

    >>> result = m.search(q="budget", mode="hybrid", render=True)
    >>> len(result), result.ranking.kind, result.rendered is not None
    (3, 'rank_expression', True)
    """

    ranking: Ranking
    rendered: str | None
    truncated: bool
    backend: Json | list[Json]
    profiles: tuple[str, ...]
    rerank: Json | None = None
    graph_boost: Json | None = None

    @classmethod
    def from_json(cls, data: Json) -> SearchResult:
        ranking = Ranking.from_json(data["ranking"])
        assert ranking is not None, "every search response has a ranking"
        return cls(
            hits=_hits(data),
            raw=data,
            ranking=ranking,
            rendered=data.get("rendered"),
            truncated=bool(data.get("truncated")),
            backend=data.get("backend") or [],
            profiles=_strings(data.get("profiles")),
            rerank=data.get("rerank"),
            graph_boost=data.get("graph_boost"),
        )


@dataclass(frozen=True, slots=True)
class ViewRef:
    """Which definition ran (a view, or a write contract): name, version and the hash that pins it."""

    name: str
    version: int
    hash: str


@dataclass(frozen=True, slots=True)
class GraphPath:
    """One path of a graph walk: `depth` links, `edge_ids` of those links, `depth + 1` nodes."""

    nodes: tuple[str, ...]
    edge_ids: tuple[str, ...]
    depth: int


@dataclass(frozen=True, slots=True)
class ViewResult(Hits):
    """`POST /views/{name}/query`'s response (spec: "The view response wrapper").

    Search views fill `ranking`, `rendered` and `profiles`; graph views `paths`, `nodes` and
    `citations`; orphan reports `orphans`. `truncated` means what the kind says it means: the
    rendered block was cut (search), or more paths or nodes existed than `limit` (graph kinds).

    >>> result = m.views.query("graph_query", seed="people/maya", depth=2)
    >>> [path.nodes for path in result.paths]
    [('people/maya', 'companies/acme')]
    """

    view: ViewRef
    parameters: Json
    input_record_ids: tuple[str, ...]
    truncated: bool
    profiles: tuple[str, ...]
    backend: list[Json]
    ranking: Ranking | None = None
    rendered: str | None = None
    paths: tuple[GraphPath, ...] | None = None
    nodes: tuple[str, ...] | None = None
    citations: tuple[Hit, ...] | None = None
    orphans: tuple[Hit, ...] | None = None

    @classmethod
    def from_json(cls, data: Json) -> ViewResult:
        view = data["view"]
        return cls(
            hits=_hits(data),
            raw=data,
            view=ViewRef(str(view["name"]), int(view["version"]), str(view["hash"])),
            parameters=dict(data.get("parameters") or {}),
            input_record_ids=_strings(data.get("input_record_ids")),
            truncated=bool(data.get("truncated")),
            profiles=_strings(data.get("profiles")),
            backend=list(data.get("backend") or []),
            ranking=Ranking.from_json(data.get("ranking")),
            rendered=data.get("rendered"),
            paths=_paths(data.get("paths")),
            nodes=_strings(data["nodes"]) if "nodes" in data else None,
            citations=_hits(data, "citations") if "citations" in data else None,
            orphans=_hits(data, "orphans") if "orphans" in data else None,
        )


def _paths(paths: Any) -> tuple[GraphPath, ...] | None:
    if paths is None:
        return None
    return tuple(GraphPath(_strings(p["nodes"]), _strings(p["edge_ids"]), int(p["depth"])) for p in paths)


def _contract(data: Json) -> Json:
    """What a view and a write contract both publish: their identity and input contract."""
    return {
        "name": str(data["name"]),
        "version": int(data["version"]),
        "active": bool(data.get("active")),
        "description": data.get("description"),
        "input_schema": dict(data.get("input_schema") or {}),
    }


@dataclass(frozen=True, slots=True)
class ViewInfo:
    """One entry of `GET /views`: a loaded view version and its input contract.

    `input_schema` is the JSON Schema the SDK checks parameters against before sending;
    `parameters` the compact summary (type, required, default per parameter).
    """

    name: str
    version: int
    active: bool
    kind: str
    hash: str
    parameters: Json
    input_schema: Json
    description: str | None = None
    collections: tuple[str, ...] = ()
    required_capabilities: tuple[str, ...] = ()
    profiles: tuple[str, ...] = ()
    raw: Json = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def from_json(cls, data: Json) -> ViewInfo:
        return cls(
            **_contract(data),
            kind=str(data.get("kind", "search")),
            hash=str(data["hash"]),
            parameters=dict(data.get("parameters") or {}),
            collections=_strings(data.get("collections")),
            required_capabilities=_strings(data.get("required_capabilities")),
            profiles=_strings(data.get("profiles")),
            raw=data,
        )


@dataclass(frozen=True, slots=True)
class Written:
    """One record of a write, in input order: its id, `processing` state (`pending`, `ready`,
    `failed`) and whether it is the `current` value of its lane."""

    id: str
    processing: str
    current: bool
    raw: Json = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def from_json(cls, data: Json) -> Written:
        return cls(str(data["id"]), str(data["processing"]), bool(data["current"]), raw=data)


@dataclass(frozen=True, slots=True)
class Record:
    """The whole record (`GET /records/{id}`), in any state: pending, failed, superseded
    (`current` false), retracted (`retracted_at` and `retraction_reason` set)."""

    id: str
    collection: str
    collection_version: int
    entity: str
    type: str
    key: str | None
    text: str
    content: Json
    scores: dict[str, float]
    annotations: Json
    status: str
    depth: int
    derived_from: tuple[str, ...]
    run_id: str | None
    occurred_at: datetime | None
    created_at: datetime | None
    last_accessed: datetime | None
    processing: str
    processing_error: str | None
    current: bool
    retracted_at: datetime | None
    retraction_reason: str | None
    raw: Json = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def from_json(cls, data: Json) -> Record:
        plain: Json = {name: data.get(name) for name in RECORD_PLAIN}
        times: Json = {name: _time(data.get(name)) for name in RECORD_TIMES}
        return cls(**plain, **times, derived_from=_strings(data.get("derived_from")), raw=data)


RECORD_TIMES = ("occurred_at", "created_at", "last_accessed", "retracted_at")
RECORD_PLAIN = tuple(
    name for name in Record.__dataclass_fields__ if name not in (*RECORD_TIMES, "derived_from", "raw")
)


@dataclass(frozen=True, slots=True)
class Health:
    """`GET /health`: `status` is `ok` or `degraded`, `database` `ok` or `unreachable`."""

    status: str
    database: str
    catalog_hash: str | None
    raw: Json = field(default_factory=dict, repr=False, compare=False)

    @property
    def ok(self) -> bool:
        return self.status == "ok"

    @classmethod
    def from_json(cls, data: Json) -> Health:
        return cls(str(data["status"]), str(data["database"]), data.get("catalog_hash"), raw=data)


@dataclass(frozen=True, slots=True)
class WriteInfo:
    """One entry of `GET /writes`: a write contract version and its input contract."""

    name: str
    version: int
    active: bool
    description: str | None
    input_schema: Json
    raw: Json = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def from_json(cls, data: Json) -> WriteInfo:
        return cls(**_contract(data), raw=data)


@dataclass(frozen=True, slots=True)
class WriteCall:
    """The answer of `POST /writes/{name}`: the contract version that ran (`write`), the
    parameters applied (defaults included) and the records it wrote (ids and states)."""

    write: ViewRef
    parameters: Json
    records: tuple[Written, ...]
    raw: Json = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def from_json(cls, data: Json) -> WriteCall:
        ran = data["write"]
        return cls(
            write=ViewRef(str(ran["name"]), int(ran["version"]), str(ran["hash"])),
            parameters=dict(data.get("parameters") or {}),
            records=tuple(Written.from_json(r) for r in data.get("records") or ()),
            raw=data,
        )


@dataclass(frozen=True, slots=True)
class Erased:
    """The answer of `DELETE /records/{id}`: the erased record's id, collection and entity, the
    erasure log entry that proves it, and how many records of each collection went (its
    automatic links count)."""

    erased: str
    collection: str
    entity: str
    erasure_id: str
    counts: dict[str, int]
    raw: Json = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def from_json(cls, data: Json) -> Erased:
        plain = {name: str(data[name]) for name in ("erased", "collection", "entity", "erasure_id")}
        return cls(**plain, counts=dict(data.get("counts") or {}), raw=data)


@dataclass(frozen=True, slots=True)
class Erasure:
    """One entry of the erasure log (`GET /erasures/{id}`): what was named (`record_id`, or
    `entity` and `collection`, or a retention rule), why and by whom, its `state` (`running`,
    `done`) and how many records of each collection it erased so far."""

    id: str
    kind: str
    state: str
    record_id: str | None
    entity: str | None
    collection: str | None
    retention: Json | None
    reason: str | None
    requested_by: str | None
    counts: dict[str, int]
    erased: int
    started_at: datetime | None
    finished_at: datetime | None
    raw: Json = field(default_factory=dict, repr=False, compare=False)

    @property
    def done(self) -> bool:
        return self.state == "done"

    @classmethod
    def from_json(cls, data: Json) -> Erasure:
        plain: Json = {name: data.get(name) for name in ERASURE_PLAIN}
        times: Json = {name: _time(data.get(name)) for name in ("started_at", "finished_at")}
        return cls(**plain, **times, counts=dict(data.get("counts") or {}), raw=data)


ERASURE_PLAIN = tuple(
    name
    for name in Erasure.__dataclass_fields__
    if name not in ("counts", "started_at", "finished_at", "raw")
)


@dataclass(frozen=True, slots=True)
class Page(Generic[T]):
    """One page of a listing and the cursor of the next (None on the last)."""

    items: tuple[T, ...]
    next_cursor: str | None
