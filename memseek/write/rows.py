"""Rows about to be inserted (no database access).

Within one batch the last record written into a lane is its current value (write order decides,
design "Keyed facts"); an automatic link is current exactly when its node is.
"""

from __future__ import annotations

from collections.abc import Mapping
from collections.abc import Sequence
from dataclasses import dataclass
from dataclasses import replace
from datetime import datetime
from typing import Any
from uuid import UUID

Lane = tuple[str, str, str]
"""(collection, entity, key): the lock unit covering a slot's active and draft lanes."""
LaneKey = tuple[str, str, str, str]
"""(collection, entity, key, status): one lane, holding at most one current record."""


@dataclass(frozen=True, slots=True)
class Row:
    """Every column value of one record row the batch will insert."""

    id: UUID
    collection: str
    collection_version: int
    entity: str
    type: str
    key: str | None
    text: str
    content: Mapping[str, Any]
    scores: Mapping[str, float]
    annotations: Mapping[str, Any]
    fields: Mapping[str, Any]
    status: str
    depth: int
    derived_from: tuple[UUID, ...]
    run_id: str | None
    occurred_at: datetime | None
    pending: bool
    is_current: bool
    embedding: Sequence[float] | None
    embedding_model: str | None
    language: str
    idempotency_key: str | None = None
    payload_hash: str | None = None
    link_node_id: UUID | None = None

    @property
    def slot(self) -> Lane | None:
        """The lock unit of a keyed record, None for an event."""
        return None if self.key is None else (self.collection, self.entity, self.key)

    @property
    def lane(self) -> LaneKey | None:
        """(collection, entity, key, status) of a keyed record, None for an event."""
        return None if self.key is None else (self.collection, self.entity, self.key, self.status)


def with_currency(rows: Sequence[Row]) -> list[Row]:
    """Mark all but the last row of each lane as superseded (write order decides)."""
    last: dict[LaneKey, int] = {}
    for position, row in enumerate(rows):
        if row.lane is not None:
            last[row.lane] = position
    return [
        row if row.lane is None or last[row.lane] == position else replace(row, is_current=False)
        for position, row in enumerate(rows)
    ]
