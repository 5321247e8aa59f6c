"""Black-box conformance tests of the design (write side, auth, catalog, CLI): the `bw` catalog.

Everything runs over HTTP (Flask test client) or the `memseek` command in a subprocess, against a
database of its own (`memseek_bw`), so the design's examples can be loaded verbatim — the
`customer_events` v2 collection, the spec's `customer_context` and `upcoming_calendar` views, the
`support_agent` package — without clashing with the other suites' definitions. The catalog is the
test catalog `bw` (tests/fixtures/catalogs/bw/): its conf files are the design's and the spec's
examples exactly as written. The `bw_*` fixtures are in this folder's conftest; requests go through
`tests.helpers`.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import sqlalchemy as sa
from flask import Flask
from sqlalchemy.engine import Engine

from memseek.runtime import Runtime
from memseek.write.worker import RetryPolicy
from memseek.write.worker import process_batch
from tests.conftest import Client
from tests.conftest import Tenant
from tests.helpers import fetch
from tests.helpers import locs
from tests.helpers import ok
from tests.helpers import post_records
from tests.helpers import view_query
from tests.helpers import written_ids
from tests.integration.test_lanes import _in_parallel
from tests.openai_server import OpenAIServer

# --- request helpers ----------------------------------------------------------------------------


def rec(collection: str = "bw_plain", text: str = "a note", **values: Any) -> dict[str, Any]:
    """A valid RecordIn for `collection`."""
    kinds = {
        "bw_facts": "fact",
        "bw_events": "event",
        "bw_nodes": "node",
        "bw_edges": "link",
        "customer_events": "event",
        "calendar_events": "event",
    }
    body: dict[str, Any] = {
        "collection": collection,
        "entity": "cust-1",
        "type": kinds.get(collection, "note"),
        "text": text,
    }
    if collection in ("bw_facts", "bw_nodes"):
        body["key"] = "slot"
    body.update(values)
    return body


def fact(text: str, key: str = "plan", **values: Any) -> dict[str, Any]:
    """A record of the keyed `bw_facts` in slot `key`."""
    return rec("bw_facts", text=text, key=key, **values)


VECTOR = [0.05] * 384
"""A vector a writer supplies for `bw_vec` (with the local model's id), so it is ready at once."""
RECORD_FIELDS = {
    "id", "collection", "collection_version", "entity", "type", "key", "text", "content", "scores",
    "annotations", "status", "depth", "derived_from", "run_id", "occurred_at", "created_at",
    "last_accessed", "processing", "processing_error", "current", "retracted_at", "retraction_reason",
}  # fmt: skip
"""The keys of a whole record (`GET /records/{id}`, the record actions' answers)."""


def current_flags(client: Client, *record_ids: str) -> list[bool]:
    """`current` of each record, in order."""
    return [fetch(client, i)["current"] for i in record_ids]


def retract(client: Client, record_id: str, reason: str = "wrong") -> Any:
    """`POST /records/{record_id}/retract` (the response)."""
    return client.post(f"/records/{record_id}/retract", json={"reason": reason})


def walk(client: Client, seed: str, **parameters: Any) -> dict[str, Any]:
    """`bw_graph` from `seed`, expecting 200."""
    return ok(view_query(client, "bw_graph", {"seed": seed, **parameters}))


def count_records(engine: Engine, workspace: Tenant) -> int:
    with engine.connect() as conn:
        query = sa.text("SELECT count(*) FROM records WHERE workspace_id = :ws")
        return int(conn.execute(query, {"ws": workspace.id}).scalar_one())


def process(runtime: Runtime, max_attempts: int = 5) -> int:
    """Run the worker until nothing is due (retries are due at once); how many were processed."""
    policy = RetryPolicy(max_attempts=max_attempts, base_delay=0.0)
    total = 0
    while (done := process_batch(runtime, 64, policy)) > 0:
        total += done
    return total


def recent(client: Client, collection: str, **scope: Any) -> list[dict[str, Any]]:
    """The hits of a `recent` search over `collection` (with `text`, `key` and `entity`)."""
    body = {
        "mode": "recent",
        "scope": {"collections": [collection], **scope},
        "k": 100,
        "include": ["text", "key", "entity", "status"],
    }
    return ok(client.post("/search", json=body))["hits"]  # type: ignore[no-any-return]


# --- used by several subject modules --------------------------------------------------------------


def one_id(client: Client, record: dict[str, Any], query: str = "") -> str:
    (record_id,) = written_ids(client, record, query=query)
    return record_id


WHEN = "2026-05-01T12:00:00Z"
"""One `occurred_at` for every record of a lane, so a `recent` search ties them all and orders
them by ingestion order (spec "Ordering and ties")."""


def plan(text: str, **values: Any) -> dict[str, Any]:
    """A value of the `plan` slot of `cust-1` in `bw_facts`, at `WHEN`."""
    return fact(text, occurred_at=WHEN, **values)


def responses_at_once(app: Flask, workspace: Tenant, sends: list[Callable[[Client], Any]]) -> list[Any]:
    """Each `sends[i](client)` on its own thread and client, all released together; the responses
    in that order."""
    responses: list[Any] = [None] * len(sends)

    def work(seed: int) -> None:
        responses[seed] = sends[seed](Client(app.test_client(), workspace))

    _in_parallel(len(sends), work)
    return responses


@contextmanager
def locked(engine: Engine, table: str, mode: str) -> Iterator[Callable[[], bool]]:
    """Hold `table` locked in `mode` until the block ends; yields a check of whether some
    statement is waiting for that table."""
    waiting = sa.text("SELECT count(*) FROM pg_locks WHERE NOT granted AND relation = CAST(:t AS regclass)")
    with engine.connect() as holder, engine.connect() as watcher, holder.begin():
        holder.execute(sa.text(f"LOCK TABLE {table} IN {mode} MODE"))
        yield lambda: bool(watcher.execute(waiting, {"t": table}).scalar_one())
        watcher.rollback()


def until(condition: Callable[[], bool], seconds: float = 30) -> None:
    """Poll `condition` until it holds (a condition decides, not a delay; fails after `seconds`)."""
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, "the condition never held"
        time.sleep(0.01)


Messages = list[dict[str, Any]]


def embedding_calls(server: OpenAIServer) -> list[Any]:
    """The bodies of the embedding requests the server received."""
    return [r.body for r in server.requests if r.path == "/v1/embeddings"]


def post_raw(client: Client, path: str, raw: str) -> Any:
    """POST `raw` (JSON text that Python's encoder would not produce) to `path`."""
    headers = {**client.tenant.headers, "Content-Type": "application/json"}
    return client.raw.post(path, data=raw, headers=headers)


def labelled(score: Any = 7, label: Any = "positive") -> Any:
    """A chat reply: `{"label": label}` to the label prompt, `{"score": score}` to the score one."""

    def reply(messages: Messages) -> str:
        system = " ".join(str(m.get("content")) for m in messages if m.get("role") == "system")
        return json.dumps({"label": label} if '"label"' in system else {"score": score})

    return reply


def embeddings_body(*vectors: list[float]) -> dict[str, Any]:
    data = [{"object": "embedding", "index": i, "embedding": v} for i, v in enumerate(vectors)]
    return {"object": "list", "data": data, "model": "text-embedding-3-small"}


def raw(app: Flask, method: str, path: str, body: Any = None, headers: dict[str, str] | None = None) -> Any:
    return app.test_client().open(path, method=method, json=body, headers=headers or {})


def refused_at(
    client: Client, engine: Engine, workspace: Tenant, record: dict[str, Any], loc: list[Any]
) -> None:
    """Writing `record` alone is a 422 with a detail at `records[0].<loc>`, and nothing is written."""
    found = locs(post_records(client, record))
    assert any(found_loc[: 2 + len(loc)] == ["records", 0, *loc] for found_loc in found), found
    assert count_records(engine, workspace) == 0
