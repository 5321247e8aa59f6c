"""Embed the query once per request (IO), only when a vector or hybrid search needs it.

Text, recent and structured searches never reach this module. A provider that is unconfigured
or unreachable raises `ModelUnavailable` (503) from the provider itself; a vector of the wrong
width or with non-finite values is `ModelOutputInvalid` (503) here, before Postgres would fail
with "expected N dimensions". Recent query vectors are kept in the model registry's cache
(`memseek.models.query_cache`), keyed by the workspace, the provider's model id and the exact
query text.

A statement receives the vector in pgvector's binary form (`QueryVectorType`, with the dumpers
`memseek.db` registers on every connection): formatting hundreds of floats as text costs more
than the whole binary encoding.
"""

from __future__ import annotations

from typing import Any
from uuid import UUID

import sqlalchemy as sa
from pgvector import Vector

from memseek.models.query_cache import QueryVector
from memseek.models.registry import ModelRegistry
from memseek.models.vectors import checked_vector
from memseek.schema import EMBEDDING_DIM


class QueryVectorType(sa.types.UserDefinedType[Any]):
    """The query vector as a statement parameter: a `pgvector.Vector`, which psycopg sends in
    pgvector's binary form. The dumpers carry no type OID (it differs per database), so the
    server types the parameter from its use (`embedding <=> $1`)."""

    cache_ok = True

    def get_col_spec(self, **kw: Any) -> str:
        return f"VECTOR({EMBEDDING_DIM})"

    def bind_processor(self, dialect: Any) -> Any:
        return lambda values: None if values is None else Vector(list(values))


def embed_query(models: ModelRegistry, alias: str, q: str, workspace_id: UUID) -> QueryVector:
    """The embedding of `q` by model alias `alias`, cached per workspace in `models`' cache (a
    shared entry would leak across workspaces: `memseek.models.query_cache.QueryKey`)."""
    embedder = models.embedder(alias)
    key = (workspace_id, embedder.model_id, q)
    cached = models.query_vectors.get(key)
    if cached is not None:
        return cached
    (values,) = embedder.embed([q])
    vector = QueryVector(checked_vector(values, alias), embedder.model_id)
    models.query_vectors.put(key, vector)
    return vector
