"""Issue 42, item 7: the reference catalog a newcomer reaches first works in every mode.

Each collection an application writes to declares a sortable field, so a `structured` listing
works on it as the spec's examples do, ordered exactly as asked (missing values last); every
view, write contract and parameter carries a description.
"""

from __future__ import annotations

from typing import Any

import pytest

from memseek.catalog.load import load_catalog
from memseek.paths import reference_catalog
from memseek.runtime import Runtime
from memseek.search.view_checks import VIEW_CHECKS
from memseek.write.worker import run_worker
from tests.conftest import Client
from tests.helpers import ok
from tests.helpers import written_ids

MODES = ("vector", "text", "hybrid", "recent", "structured")


def record(collection: str, kind: str, value: str | None, field: str, **extra: Any) -> dict[str, Any]:
    content = {field: value} if value is not None else {}
    return {
        "collection": collection,
        "entity": "e1",
        "type": kind,
        "text": f"budget {value}",
        "content": content,
        **extra,
    }


@pytest.mark.parametrize(
    ("collection", "kind", "field", "extra"),
    [
        pytest.param("customer_events", "event", "channel", {}, id="customer_events-channel"),
        pytest.param("customer_events", "note", "source", {}, id="customer_events-source"),
        pytest.param("components", "component", "owner", {"key": "k"}, id="components-owner"),
        pytest.param("memories", "note", "source", {}, id="memories-source"),
        pytest.param("reflections", "reflection", "topic", {}, id="reflections-topic"),
    ],
)
def test_structured_search_orders_each_reference_collection(
    client: Client, runtime: Runtime, collection: str, kind: str, field: str, extra: dict[str, Any]
) -> None:
    values = ["b", None, "c", "a"]
    keyed = [{**extra, "key": f"{extra['key']}{i}"} if "key" in extra else extra for i in range(len(values))]
    ids = written_ids(
        client, *(record(collection, kind, v, field, **k) for v, k in zip(values, keyed, strict=True))
    )
    run_worker(runtime, once=True)
    body = {
        "mode": "structured",
        "scope": {"collections": [collection], "entities": ["e1"]},
        "order_by": [{"field": field, "direction": "desc"}],
        "fields": [field],
    }
    hits = ok(client.post("/search", json=body))["hits"]
    assert [hit["fields"][field] for hit in hits] == ["c", "b", "a", None]  # missing values last
    assert sorted(hit["id"] for hit in hits) == sorted(ids)


@pytest.mark.parametrize("mode", MODES)
def test_every_mode_reads_customer_events(client: Client, runtime: Runtime, mode: str) -> None:
    written_ids(client, record("customer_events", "event", "email", "channel"))
    run_worker(runtime, once=True)
    body: dict[str, Any] = {"mode": mode, "scope": {"collections": ["customer_events"]}}
    if mode in ("vector", "text", "hybrid"):
        body["q"] = "budget"
    if mode == "structured":
        body["order_by"] = [{"field": "channel"}]
    assert len(ok(client.post("/search", json=body))["hits"]) == 1


def test_collections_lists_every_mode_for_the_collections_applications_write(client: Client) -> None:
    entries = {c["name"]: c for c in ok(client.get("/collections"))["collections"]}
    for name in ("customer_events", "reflections", "calendar_events", "memories", "components"):
        assert entries[name]["modes"] == list(MODES), name
        assert entries[name]["description"], name


def test_every_reference_view_write_and_parameter_is_described() -> None:
    """What `GET /views`, `GET /writes`, MCP tools and the inspector's forms show a newcomer."""
    catalog = load_catalog(reference_catalog(), view_checks=VIEW_CHECKS)
    definitions = [*catalog.all_views(), *(w for versions in catalog.writes.values() for w in versions)]
    assert len(definitions) >= 10
    bare = [
        f"{d.name} v{d.version}" + (f" {name}" if name else "")
        for d in definitions
        for name, described in [("", d.description), *((n, p.description) for n, p in d.parameters.items())]
        if not (described or "").strip()
    ]
    assert bare == []
