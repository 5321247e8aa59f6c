"""`GET /records`: a workspace's records page by page, in every state (the audit path).

Records are listed in ingestion order (`seq`, unique and increasing), newest first by default:
a total order, so a page boundary is one number and pages never overlap or skip a record, even
while records are written (they land before the first page of a newest-first listing, after the
last of an oldest-first one). Every state is listed — pending, failed, drafts, superseded,
retracted — each record as `GET /records/{id}` shows it, whose fields say which state it is in.
Filters are exact matches; `entity` is optional, so a whole workspace can be listed (and
exported, `memseek.write.export`). An entity's records are read through `records_entity`
(workspace, entity, seq), the workspace's through `records_seq`, each page a range scan.
"""

from __future__ import annotations

from collections.abc import Iterator
from collections.abc import Sequence
from dataclasses import asdict
from dataclasses import dataclass
from typing import Any
from typing import Literal
from uuid import UUID

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from memseek.schema import record_columns
from memseek.schema import records
from memseek.write.store import RECORD_COLUMNS

r = records.c
Order = Literal["newest", "oldest"]
LISTED_COLUMNS = (*RECORD_COLUMNS, "seq", "lane_seq", "link_node_id")
"""What a listed row carries: the record as the API shows it, and what export keeps besides."""


@dataclass(frozen=True, slots=True)
class RecordFilter:
    """Which records a listing shows (None: any) and in which order."""

    entity: str | None = None
    collection: str | None = None
    type: str | None = None
    status: str | None = None
    key: str | None = None
    order: Order = "newest"

    def listing(self) -> dict[str, Any]:
        """What a cursor of this listing is bound to (`memseek.write.pages`)."""
        return {"route": "records", **asdict(self)}

    def where(self, workspace_id: UUID) -> list[sa.ColumnElement[bool]]:
        """The listing's conditions (bound values, exact matches)."""
        found = [r.workspace_id == workspace_id]
        for name in ("entity", "collection", "type", "status", "key"):
            value = getattr(self, name)
            if value is not None:
                found.append(r[name] == value)
        return found


def _next_rows(
    workspace_id: UUID,
    which: RecordFilter,
    after: int | None,
    limit: int,
    columns: Sequence[sa.ColumnElement[Any]],
) -> sa.Select[Any]:
    """The statement reading the next `limit` records of `which` past `after` (None: from the
    start), each row with `LISTED_COLUMNS` and `columns`: one index range scan."""
    newest = which.order == "newest"
    where = which.where(workspace_id)
    if after is not None:
        where.append(r.seq < after if newest else r.seq > after)
    return (
        sa.select(*record_columns(LISTED_COLUMNS, workspace_id), *columns)
        .where(*where)
        .order_by(r.seq.desc() if newest else r.seq)
        .limit(limit)
    )


def list_records(
    conn: Connection,
    workspace_id: UUID,
    which: RecordFilter,
    after: int | None,
    limit: int,
    columns: Sequence[sa.ColumnElement[Any]] = (),
) -> list[Any]:
    """Up to `limit` records of `which` past ingestion position `after` (None: from the start),
    each row with `LISTED_COLUMNS` and `columns` (more SQL expressions)."""
    return list(conn.execute(_next_rows(workspace_id, which, after, limit, columns)))


LISTED_OVERHEAD = 1024
"""Bytes a listed record takes besides its text, content, annotations and scores (ids, names,
timestamps, states and the JSON around them), generously: the estimate below only decides which
rows are fetched, the route measures the page it writes."""


def listed_size() -> sa.ColumnElement[int]:
    """About how many bytes a record takes in a listing, computed where it is stored (the
    text's length without decompressing it, the JSON columns as text)."""
    as_json = (r.content, r.annotations, r.scores)
    json_text = [sa.func.octet_length(sa.cast(column, sa.Text)) for column in as_json]
    return sa.func.octet_length(r.text) + sum(json_text, sa.literal(LISTED_OVERHEAD))


def bounded_records(
    conn: Connection, workspace_id: UUID, which: RecordFilter, after: int | None, limit: int, max_bytes: int
) -> tuple[list[Any], int]:
    """The next records of `which` past `after`, at most `limit`, that start within `max_bytes`
    by `listed_size` (the first always), and how many of the next `limit + 1` records there are
    (more than the rows returned: the listing goes on). The running size is computed in the
    statement over those `limit + 1` rows, so a page of large records never fetches the records
    past the bound."""
    page = _next_rows(workspace_id, which, after, limit + 1, [listed_size().label("listed_bytes")]).subquery()
    order = page.c.seq.desc() if which.order == "newest" else page.c.seq
    sized = sa.select(
        page,
        sa.func.sum(page.c.listed_bytes).over(order_by=order).label("listed_through"),
        sa.func.count().over().label("listed_next"),
    ).subquery()
    order = sized.c.seq.desc() if which.order == "newest" else sized.c.seq
    stmt = sa.select(sized).where(sized.c.listed_through - sized.c.listed_bytes <= max_bytes).order_by(order)
    rows = list(conn.execute(stmt))
    return rows, rows[0].listed_next if rows else 0


def all_records(
    conn: Connection,
    workspace_id: UUID,
    which: RecordFilter,
    columns: Sequence[sa.ColumnElement[Any]] = (),
    page: int = 500,
) -> Iterator[Any]:
    """Every record of `which`, `page` at a time (one statement each), rows as `list_records`'."""
    after: int | None = None
    while rows := list_records(conn, workspace_id, which, after, page, columns):
        yield from rows
        if len(rows) < page:
            return
        after = rows[-1].seq
