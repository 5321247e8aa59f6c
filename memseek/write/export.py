"""`memseek export`: a workspace's records (or one entity's, one collection's) as JSON Lines that
`memseek import` restores as they were (`memseek.write.restore`).

The first line is a header, `{"memseek_export": 1, "workspace": …, "exported_at": …, "filter":
{…}}`; each further line is one record: everything `GET /records/{id}` shows (ids, keys, states,
timestamps, `derived_from`, `run_id`, scores, annotations, content) plus what a restore needs to
rebuild the row: `lane_seq` (its position in its lane: only the order matters), `link_node_id`,
`idempotency_key` and `payload_hash` (so a replay of the same write still finds it), and the
vector with its model id. Lines follow ingestion order, oldest first, read in one snapshot
(REPEATABLE READ), so the file is one consistent moment of the workspace.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import asdict
from dataclasses import replace
from datetime import UTC
from datetime import datetime
from typing import Any
from typing import BinaryIO
from uuid import UUID

from sqlalchemy.engine import Engine

from memseek.db import EXPORT
from memseek.db import workspace_transaction
from memseek.jsontext import json_text
from memseek.schema import records
from memseek.write import store
from memseek.write.listing import RecordFilter
from memseek.write.listing import all_records

FORMAT = 1
HEADER = "memseek_export"
"""The header line's key: its presence tells `memseek import` a file is an export."""
ROW_COLUMNS = ("lane_seq", "link_node_id", "idempotency_key", "payload_hash", "embedding_model")
"""What an exported record carries beyond its API form (besides the vector)."""


def exported(row: Any) -> dict[str, Any]:
    """One record as an export line holds it."""
    line = store.record_json(row)
    m = row._mapping
    line.update({name: m[name] for name in ROW_COLUMNS})
    line["link_node_id"] = None if m["link_node_id"] is None else str(m["link_node_id"])
    line["embedding"] = None if m["embedding"] is None else [float(x) for x in m["embedding"]]
    return line


def export_lines(engine: Engine, workspace_id: UUID, name: str, which: RecordFilter) -> Iterator[bytes]:
    """The export of `which` in workspace `workspace_id` (named `name`), line by line."""
    which = replace(which, order="oldest")
    chosen = {key: value for key, value in asdict(which).items() if value is not None and key != "order"}
    header = {
        HEADER: FORMAT,
        "workspace": name,
        "exported_at": datetime.now(UTC).isoformat(),
        "filter": chosen,
    }
    yield json_text(header).encode() + b"\n"
    extra = [records.c[name] for name in ("idempotency_key", "payload_hash", "embedding", "embedding_model")]
    with workspace_transaction(engine, workspace_id, snapshot=EXPORT) as conn:
        for row in all_records(conn, workspace_id, which, extra):
            yield json_text(exported(row)).encode() + b"\n"


def export_file(engine: Engine, workspace_id: UUID, name: str, which: RecordFilter, out: BinaryIO) -> int:
    """Write the export of `which` to `out`; how many records it holds."""
    count = -1  # the header is not a record
    for line in export_lines(engine, workspace_id, name, which):
        out.write(line)
        count += 1
    return count
