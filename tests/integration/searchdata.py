"""Search test data: records written straight into the table, a catalog built in code, and
compiled searches run on a connection the test holds.

Rows are inserted with SQLAlchemy Core so search tests control every column (processing state,
is_current, retraction, timestamps) exactly. Tests that exercise the public write path use
`POST /records` instead.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from collections.abc import Sequence
from dataclasses import dataclass
from dataclasses import replace
from datetime import UTC
from datetime import datetime
from datetime import timedelta
from functools import cache
from typing import Any
from uuid import UUID

import sqlalchemy as sa
from sqlalchemy.engine import Connection
from sqlalchemy.engine import Engine
from sqlalchemy.sql.expression import Executable

from memseek.catalog.catalog import Catalog
from memseek.catalog.conf import PgProfile
from memseek.catalog.models import Collection
from memseek.catalog.rank import load_rank_default
from memseek.db import run_statement
from memseek.db import set_local
from memseek.models.config import ModelDecl
from memseek.models.registry import ModelRegistry
from memseek.paths import resource
from memseek.runtime import Runtime
from memseek.schema import lane_seq
from memseek.schema import records
from memseek.search.compile import CompiledSearch
from memseek.search.compile import Inputs
from memseek.search.compile import Output
from memseek.search.compile import compile_search
from memseek.search.execute import SearchResult
from memseek.search.execute import planner_settings
from memseek.search.execute import runner
from memseek.search.execute import with_fallbacks
from memseek.search.request import parse_search
from memseek.search.resolve import SearchPlan
from memseek.search.resolve import resolve
from memseek.search_state import SearchState
from memseek.settings import Settings
from memseek.write.store import text_columns
from memseek.write.touch import TouchQueue
from tests.conftest import Tenant

NOW = datetime(2026, 7, 1, 12, 0, tzinfo=UTC)
DIM = 384


def hours_ago(hours: float) -> datetime:
    return NOW - timedelta(hours=hours)


def unit(*weights: float) -> list[float]:
    """A 384-d unit vector whose first components are `weights` (normalised)."""
    vector = [*weights, *([0.0] * (DIM - len(weights)))]
    norm = sum(x * x for x in vector) ** 0.5 or 1.0
    return [x / norm for x in vector]


FIELDS = {
    "channel": {"type": "string", "filterable": True, "sortable": True, "returnable": True},
    "amount": {"type": "number", "filterable": True, "sortable": True, "returnable": True},
    "count": {"type": "integer", "filterable": True, "sortable": True},
    "vip": {"type": "boolean", "filterable": True, "sortable": True},
    "tags": {"type": "string_array", "filterable": True, "returnable": True},
    "starts_at": {"type": "datetime", "filterable": True, "sortable": True, "returnable": True,
                  "fallback_paths": ["meta.start"]},
}  # fmt: skip


def collection(name: str = "main", version: int = 1, **extra: Any) -> Collection:
    body: dict[str, Any] = {
        "name": name, "version": version, "active": True, "types": ["event", "note", "fact"],
        "embedding": "default", "fields": FIELDS, "scores": {"importance": {"display": True}},
    }  # fmt: skip
    body.update(extra)
    return Collection.model_validate(body)


def catalog(*collections: Collection, models: Mapping[str, ModelDecl] | None = None) -> Catalog:
    by_name: dict[str, list[Collection]] = {}
    for c in collections or (collection(),):
        by_name.setdefault(c.name, []).append(c)
    decls = models or {"default": ModelDecl(kind="embedding", provider="local", model="all-MiniLM-L6-v2")}
    return Catalog(
        collections={name: tuple(sorted(vs, key=lambda c: c.version)) for name, vs in by_name.items()},
        profiles={"pg_default": PgProfile(backend="pg")},
        models=decls,
        rank_default=load_rank_default(resource("conf") / "rank_default.yaml"),
    )


@dataclass(frozen=True)
class Rec:
    """One record to insert; every column has a test-friendly default."""

    text: str = "a record"
    collection: str = "main"
    collection_version: int = 1
    entity: str = "e1"
    type: str = "event"
    key: str | None = None
    content: Mapping[str, Any] | None = None
    scores: Mapping[str, Any] | None = None
    annotations: Mapping[str, Any] | None = None
    fields: Mapping[str, Any] | None = None
    status: str = "active"
    depth: int = 0
    occurred_at: datetime = NOW
    created_at: datetime | None = None
    last_accessed: datetime | None = None
    processing: str = "ready"
    is_current: bool = True
    retracted: bool = False
    embedding: Sequence[float] | None = None
    embedding_model: str | None = "test-model"
    language: str = "english"
    run_id: str | None = None


def insert(conn: Connection, workspace_id: UUID, *recs: Rec) -> list[UUID]:
    """Insert `recs` in order (so `seq` follows argument order); returns their ids."""
    ids = []
    for rec in recs:
        record_id = uuid.uuid4()
        created = rec.created_at or rec.occurred_at
        conn.execute(sa.insert(records).values(
            workspace_id=workspace_id, id=record_id, lane_seq=lane_seq.next_value(),
            collection=rec.collection, collection_version=rec.collection_version, entity=rec.entity,
            type=rec.type, key=rec.key, text=rec.text, content=dict(rec.content or {}),
            scores=dict(rec.scores or {}), annotations=dict(rec.annotations or {}),
            fields=dict(rec.fields or {}), status=rec.status, depth=rec.depth, derived_from=[],
            run_id=rec.run_id, occurred_at=rec.occurred_at, created_at=created,
            last_accessed=rec.last_accessed or created, processing=rec.processing,
            is_current=rec.is_current, retracted_at=NOW if rec.retracted else None,
            embedding=list(rec.embedding) if rec.embedding is not None else None,
            embedding_model=rec.embedding_model if rec.embedding is not None else None,
            **text_columns(rec.language, rec.text),
        ))  # fmt: skip
        ids.append(record_id)
    return ids


def given(db: Engine, tenant: Tenant, *recs: Rec) -> list[UUID]:
    """`insert` in a transaction of its own, committed: the records' ids in argument order."""
    with db.begin() as conn:
        return insert(conn, tenant.id, *recs)


def plans(body: dict[str, Any], cat: Catalog | None = None) -> tuple[SearchPlan, ...]:
    """The resolved search plans of a request body (top-level q copied into sources)."""
    spec = parse_search(body)
    plan = resolve(spec, cat or catalog(), None)
    return tuple(replace(p, q=p.q if p.q is not None else spec.q) for p in plan.searches)


TEXT_OUTPUT = Output(text=True)


def compiled(
    body: dict[str, Any],
    workspace_id: UUID,
    vector: Sequence[float] | None = None,
    cat: Catalog | None = None,
    output: Output = TEXT_OUTPUT,
    large_workspace: bool = False,
) -> CompiledSearch:
    """The compiled statement of a single-search body."""
    (plan,) = plans(body, cat)
    model = "test-model" if vector is not None else None
    inputs = Inputs(workspace_id, NOW, vector, model, large_workspace=large_workspace)
    return compile_search(plan, inputs, output, "test")


EMBED_MODEL = "hashed-bow"
"""Model id of the test embedding alias (tests/openai_server.py's bag-of-words vectors)."""
EMBED_URL_ENV = "MEMSEEK_TEST_EMBED_URL"


def hashed_models(base_url: str | None) -> ModelRegistry:
    """A registry whose `default` alias embeds through the local OpenAI-protocol test server."""
    decl = ModelDecl(
        kind="embedding",
        provider="openai",
        model=EMBED_MODEL,
        base_url_env=EMBED_URL_ENV,
        max_retries=0,
        timeout_seconds=5,
    )
    return ModelRegistry({"default": decl}, environ={EMBED_URL_ENV: base_url} if base_url else {})


def runtime_for(settings: Settings, engine: Engine, cat: Catalog, models: ModelRegistry) -> Runtime:
    return Runtime(
        settings=settings,
        engine=engine,
        catalog=cat,
        models=models,
        touches=TouchQueue(engine),
        search=SearchState.open(engine),
    )


# --- compiled searches on a held connection ---------------------------------------------------------


@cache
def pgvector(engine: Engine) -> tuple[int, ...]:
    """The pgvector version of `engine`'s database, as a runtime reads it."""
    return SearchState.open(engine).pgvector


def prepare_transaction(conn: Connection, search: CompiledSearch) -> dict[str, str]:
    """Set the search's planner settings for the rest of the caller's transaction; returns them."""
    settings = planner_settings(pgvector(conn.engine), search)
    set_local(conn, settings)
    return settings


def run_compiled(conn: Connection, search: CompiledSearch) -> SearchResult:
    """Run `search` in the caller's transaction as a combined search's share runs (each statement
    with its planner settings for it alone), without the timeout and the learned plan choice of a
    request."""
    return with_fallbacks(search, runner(conn, search, planner_settings(pgvector(conn.engine), search)))


def execute_compiled(conn: Connection, search: CompiledSearch) -> SearchResult:
    """Run `search` in a transaction that already has its planner settings (`prepare_transaction`),
    each statement as the transaction stands (a fallback's wider settings set before it)."""

    def run(statement: Executable, widen: Mapping[str, str]) -> Sequence[Any]:
        set_local(conn, widen)
        return run_statement(conn, statement, search.params)

    return with_fallbacks(search, run)
