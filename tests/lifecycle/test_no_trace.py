"""The proof an erasure owes: after an entity is forgotten, no table of the schema holds its
records' text, vectors or ids (every table, found through information_schema, so a table added
later is searched too), and no read returns them — searches in every mode, `GET /search`,
`GET /context`, search views, graph walks, orphan reports, `GET /records`, MCP tool calls and
the SDK. The same reads see everything before the erasure, so each check can fail.

The reference catalog over the SDK's running service (its worker processes the writes);
`zed-service` is a component node with an automatic link, a customer with events and a
calendar, a memory with an idempotency key, and the object of another node's link.
"""

from __future__ import annotations

import json
from datetime import UTC
from datetime import datetime
from typing import Any

import anyio
import pytest
from mcp import Client as McpClient
from sqlalchemy.engine import Engine

from memseek.api.mcp import build_server
from memseek.client import Memseek
from memseek.client import NotFound
from memseek.runtime import Runtime
from tests.conftest import Client
from tests.conftest import Tenant
from tests.helpers import ok
from tests.lifecycle.support import holding
from tests.lifecycle.support import rows

ZED = "zed-service"
MARKER = "quokkazanzibar"
IDEMPOTENCY = "zed-idem-7731"
MEETING = datetime(2031, 5, 4, 9, 30, tzinfo=UTC)


def zed_records() -> list[dict[str, Any]]:
    def record(collection: str, kind: str, text: str, **values: Any) -> dict[str, Any]:
        return {"collection": collection, "entity": ZED, "type": kind, "text": text, **values}

    return [
        record("memories", "note", f"{MARKER} passport 5551234", idempotency_key=IDEMPOTENCY),
        record("customer_events", "event", f"{MARKER} confirmed the budget", content={"channel": "email"}),
        record("calendar_events", "event", f"{MARKER} sync", content={"starts_at": MEETING.isoformat()}),
        record("components", "component", ZED, key=ZED, content={"depends_on": ["db-core"]}),
    ]


SURVIVORS = [
    {"collection": "memories", "entity": "amy", "type": "note", "text": "amy prefers email"},
    {
        "collection": "components",
        "entity": "web-front",
        "type": "component",
        "key": "web-front",
        "text": "web",
    },
    {
        "collection": "dependencies",
        "entity": "web-front",
        "type": "link",
        "text": f"web-front depends_on {ZED}",
        "content": {"from_node": "web-front", "to_node": ZED, "relationship": "depends_on"},
    },
]


def searches() -> list[dict[str, Any]]:
    """One request per mode, over the workspace and scoped to the entity."""
    base = {"include": ["text", "entity"], "k": 50}
    found = [{"q": MARKER, "mode": mode, **base} for mode in ("hybrid", "vector", "text")]
    found += [{"mode": "recent", **base}]
    order = [{"field": "starts_at", "direction": "asc"}]
    found += [
        {"mode": "structured", "scope": {"collections": ["calendar_events"]}, "order_by": order, **base}
    ]
    found += [{**spec, "scope": {**spec.get("scope", {}), "entities": [ZED]}} for spec in found]
    scope = {"collections": ["memories", "customer_events"]}
    sources = [{"name": mode, "mode": mode, "scope": scope, "k": 50} for mode in ("text", "vector")]
    combined = {"q": MARKER, "sources": sources, "fuse": {"kind": "rrf"}, **base}
    return [*found, combined]


VIEWS: list[tuple[str, dict[str, Any]]] = [
    ("customer_context", {"entity": ZED, "task": MARKER}),
    ("customer_context_fused", {"entity": ZED, "task": MARKER}),
    ("upcoming_calendar", {"entity": ZED, "start": "2031-01-01T00:00:00Z", "end": "2032-01-01T00:00:00Z"}),
    ("recent_activity", {"entity": ZED}),
    ("graph_query", {"seed": ZED, "direction": "both"}),
    ("graph_query", {"seed": "web-front"}),
    ("graph_query", {"seed": "db-core", "direction": "in"}),
    ("orphan_pages", {}),
]


def answered(view_response: Any) -> Any:
    """A view's response without the parameters it echoes (the query text is the marker)."""
    return {key: value for key, value in view_response.items() if key != "parameters"}


def http_reads(client: Client) -> list[Any]:
    found: list[Any] = [ok(client.post("/search", json=spec)) for spec in searches()]
    found += [
        ok(client.get(f"/search?q={MARKER}")),
        client.get(f"/context?q={MARKER}").get_data(as_text=True),
    ]
    found += [client.get(f"/context?q={MARKER}&entity={ZED}").get_data(as_text=True)]
    found += [answered(ok(client.post(f"/views/{name}/query", json=params))) for name, params in VIEWS]
    return found + [ok(client.get(f"/records?entity={ZED}")), ok(client.get("/records"))]


def mcp_reads(runtime: Runtime, tenant: Tenant) -> list[Any]:
    async def calls() -> list[Any]:
        async with McpClient(build_server(runtime, lambda _ctx: tenant.id)) as session:
            results = [await session.call_tool(name, params) for name, params in VIEWS]
        return [answered(r.structured_content) for r in results]

    return anyio.run(calls)  # type: ignore[no-any-return]


def sdk_reads(m: Memseek) -> list[Any]:
    found: list[Any] = [m.search(spec).raw for spec in searches()]
    found += [m.context(MARKER), m.context(MARKER, entity=ZED)]
    found += [answered(m.views.query(name, params).raw) for name, params in VIEWS]
    return found + [[r.raw for r in m.records.list()], [r.raw for r in m.records.list(entity=ZED)]]


def seen(reads: list[Any]) -> str:
    return json.dumps(reads)


@pytest.fixture
def zed(m: Memseek, client: Client, db: Engine) -> dict[str, Any]:
    """The entity's records and the survivors, processed; its ids (automatic link included) and
    the memory's vector."""
    m.records.write(SURVIVORS[:2], wait=True)
    written = m.records.write(zed_records(), wait=True)
    m.records.write(SURVIVORS[2:], wait=True)
    ids = [w.id for w in written]
    link = rows(db, "SELECT id::text FROM records WHERE link_node_id = :node", node=ids[3])
    vector = rows(db, "SELECT embedding::text AS v FROM records WHERE id = :id", id=ids[0])[0]["v"]
    return {"ids": [*ids, link[0]["id"]], "vector": vector}


def test_nothing_of_a_forgotten_entity_remains_or_is_returned(
    zed: dict[str, Any], m: Memseek, client: Client, runtime: Runtime, tenant: Tenant, db: Engine
) -> None:
    needles = [MARKER, *zed["ids"]]
    channels = [seen(http_reads(client)), seen(mcp_reads(runtime, tenant)), seen(sdk_reads(m))]
    for needle in needles:  # every read path can see it, so the checks below can fail
        in_a_view = needle not in (zed["ids"][0], zed["ids"][3])  # views show no memory, no linked node
        assert [needle in channel for channel in channels] == [True, in_a_view, True], needle
    stored = [IDEMPOTENCY, *needles]  # the idempotency key no read shows
    held = {"records", "record_postings", "record_touches", "text_lexemes"}
    assert set(holding(db, stored, zed["vector"])) >= held

    erasure = m.entities.forget(ZED, reason="erasure request")  # touches of the reads above still queued
    assert erasure.done and erasure.counts == {
        "calendar_events": 1,
        "components": 1,
        "customer_events": 1,
        "dependencies": 2,
        "memories": 1,
    }
    assert runtime.touches.flush(timeout=30)

    assert holding(db, stored, zed["vector"]) == {}
    after = seen([http_reads(client), mcp_reads(runtime, tenant), sdk_reads(m)])
    assert [needle for needle in needles if needle in after] == []
    assert "amy prefers email" in after and "web-front" in after  # the reads still work
    for record_id in zed["ids"]:
        with pytest.raises(NotFound):
            m.records.get(record_id)
    logged = [e.raw for e in m.erasures.list()]
    assert [e["entity"] for e in logged] == [ZED]
    assert [needle for needle in needles if needle in json.dumps(logged)] == []


def test_an_erased_records_id_is_left_only_in_the_log(
    zed: dict[str, Any], m: Memseek, runtime: Runtime, db: Engine
) -> None:
    note_id = zed["ids"][0]
    answer = m.records.delete(note_id, reason="one record")
    assert (answer.erased, answer.entity, answer.counts) == (note_id, ZED, {"memories": 1})
    assert runtime.touches.flush(timeout=30)
    assert holding(db, [note_id, IDEMPOTENCY], zed["vector"]) == {"erasures": 1}
    assert rows(db, "SELECT record_id::text AS id FROM erasures") == [{"id": note_id}]
    # The event and meeting stay, and so does the count of records holding the marker's lexeme
    # (one BM25 statistics row, docs/search.md "BM25"): theirs, not the erased note's.
    assert holding(db, [MARKER]) == {"records": 2, "record_postings": 2, "text_lexemes": 1}
