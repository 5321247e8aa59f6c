"""Audit (processing, enrichments, models, provider failures): design §1 "Processing and
enrichments", "Models", "Records"; §3 `POST /records` (`?wait=true`, `embedding`); the spec's
"Errors" (503) and "Embed once, if needed".

Providers speak the real OpenAI protocol (tests/openai_server.py) with scripted failures and
malformed answers. The `sx_` app's `sx_embed` alias never retries (`max_retries: 0`), so one
scripted failure is one unavailable provider.
"""

from __future__ import annotations

from typing import Any

import pytest

from memseek.runtime import Runtime
from tests.blackbox.design_support import VECTOR
from tests.blackbox.design_support import labelled
from tests.blackbox.design_support import process
from tests.blackbox.design_support import rec
from tests.blackbox.support import ids
from tests.blackbox.support import search
from tests.blackbox.support import vec
from tests.blackbox.support import write
from tests.conftest import Client
from tests.conftest import Tenant
from tests.conftest import client_for
from tests.helpers import fetch
from tests.helpers import fixture_catalog
from tests.helpers import ok
from tests.helpers import runtime_for
from tests.helpers import view_query
from tests.helpers import with_models
from tests.helpers import written
from tests.helpers import written_ids
from tests.openai_server import OpenAIServer

# --- a record that is not ready is never returned -------------------------------------------------


PENDING_READS = [
    pytest.param("POST", "/search", {"q": "pendingword", "mode": "text"}, id="text"),
    pytest.param("POST", "/search", {"mode": "recent", "scope": {"collections": ["sx_vec"]}}, id="recent"),
    pytest.param("POST", "/search", {"q": "pendingword twin", "mode": "vector"}, id="vector"),
    pytest.param("POST", "/search", {"q": "pendingword twin", "mode": "hybrid"}, id="hybrid"),
    pytest.param(
        "POST",
        "/search",
        {
            "q": "pendingword",
            "sources": [
                {"name": "t", "mode": "text", "scope": {"collections": ["sx_vec"]}},
                {"name": "r", "mode": "recent", "scope": {"collections": ["sx_vec"]}},
            ],
            "fuse": {"kind": "rrf"},
        },
        id="combined",
    ),
    pytest.param("GET", "/search?q=pendingword%20twin", None, id="get-search"),
]


def pending_and_ready(sx: Client) -> tuple[str, str]:
    """A `sx_vec` record left `pending` (no vector supplied, no worker) and a ready twin."""
    unembedded = {
        k: v for k, v in vec("pendingword twin", entity="e-p").items() if not k.startswith("embedding")
    }
    (pending,) = written(sx, unembedded)
    assert pending["processing"] == "pending"
    (ready,) = write(sx, vec("pendingword twin", entity="e-p"))
    return pending["id"], ready


@pytest.mark.parametrize(("method", "path", "body"), PENDING_READS)
def test_a_pending_record_is_returned_by_no_search_mode(
    sx: Client, method: str, path: str, body: Any
) -> None:
    """Design §1 Records: "only `ready` records are searchable"; spec: the re-check reapplies
    "processing state"."""
    pending, ready = pending_and_ready(sx)
    assert ids(ok(sx.request(method, path, json=body))) == [ready]
    assert fetch(sx, pending)["processing"] == "pending"


def test_a_pending_record_is_not_in_get_context(sx: Client) -> None:
    """Design §1 Records: "only `ready` records are searchable"."""
    pending, ready = pending_and_ready(sx)
    response = sx.get("/context?q=pendingword%20twin")
    assert response.status_code == 200
    text = response.get_data(as_text=True)
    assert ready in text and pending not in text


def test_a_pending_record_without_a_vector_never_reaches_vector_signals(
    sx: Client, sx_runtime: Runtime, server: OpenAIServer
) -> None:
    """Design §1: "All succeed → `ready`"; processing the pending record makes it searchable
    (the test's control: the same search that did not return it now does)."""
    pending, ready = pending_and_ready(sx)
    body = {"q": "pendingword twin", "mode": "vector", "scope": {"collections": ["sx_vec"]}}
    assert ids(search(sx, body)) == [ready]
    process(sx_runtime)
    assert fetch(sx, pending)["processing"] == "ready"
    assert set(ids(search(sx, body))) == {pending, ready}


DEFAULT_MODEL = "all-MiniLM-L6-v2"
"""The `model:` of the `bw` catalog's `default` alias (conf/models.yaml)."""


def test_a_record_with_its_vector_but_enrichments_pending_is_not_searchable(
    sclient: Client, served: Runtime, openai_server: OpenAIServer
) -> None:
    """Design §1: "Processing = its embedding … plus each enrichment the collection requires whose
    value was not supplied"; "only `ready` records are searchable" — a supplied vector alone does
    not make it ready, and a record that then fails stays out of every search."""
    record = rec(
        "customer_events", text="vector but no enrichments", embedding=VECTOR, embedding_model=DEFAULT_MODEL
    )
    (result,) = written(sclient, record)
    assert result["processing"] == "pending"
    searches = [
        {"q": "vector but no enrichments", "mode": mode, "scope": {"collections": ["customer_events"]}}
        for mode in ("vector", "hybrid", "text", "recent")
    ]
    assert [ids(search(sclient, body)) for body in searches] == [[], [], [], []]
    openai_server.reply_with(*[labelled(score=42)] * 20)
    process(served, max_attempts=2)
    fetched = fetch(sclient, result["id"])
    assert fetched["processing"] == "failed" and fetched["processing_error"]
    assert [ids(search(sclient, body)) for body in searches] == [[], [], [], []]


# --- graph reads count only processed nodes (`p5_` catalog) ---------------------------------------


def orphan_keys(client: Client) -> list[str]:
    return [hit["key"] for hit in ok(view_query(client, "p5_orphans", {}))["hits"]]


@pytest.fixture(scope="module")
def p5_runtime(bw_runtime: Runtime, tmp_path_factory: pytest.TempPathFactory) -> Runtime:
    """The `bw` catalog plus a node collection embedded by the `remote` (OpenAI-protocol) model."""
    return runtime_for(bw_runtime, fixture_catalog(tmp_path_factory.mktemp("p5-catalog"), "bw", "p5"))


def test_orphan_reports_count_only_fully_processed_nodes(
    p5_runtime: Runtime, bw_ws: Tenant, openai_server: OpenAIServer
) -> None:
    """Spec, Orphan reports: "Nodes are counted when they are current, active, fully processed, and
    not retracted"."""
    client = client_for(p5_runtime, bw_ws)
    node = {"collection": "p5_parts", "entity": "parts", "type": "component", "text": "a part"}
    pending, failing = written_ids(client, {**node, "key": "pending-part"}, {**node, "key": "failing-part"})
    assert orphan_keys(client) == []
    process(with_models(p5_runtime, {}), max_attempts=1)  # nothing due is left: both fail
    assert [fetch(client, i)["processing"] for i in (pending, failing)] == ["failed", "failed"]
    assert orphan_keys(client) == []
    (ready,) = written_ids(client, {**node, "key": "ready-part"})
    process(with_models(p5_runtime, openai_server.environ(api_key="k")))
    assert fetch(client, ready)["processing"] == "ready"
    assert orphan_keys(client) == ["ready-part"]


# --- processing never changes which value is current, nor un-retracts -----------------------------


def test_graph_boost_walks_only_processed_links(
    p5_runtime: Runtime, bw_ws: Tenant, openai_server: OpenAIServer
) -> None:
    """Spec, Graph views: "Walks skip links that are unprocessed"; design §1 Graph data: "a link
    written directly is live as soon as it is processed" — `graph_boost` walks the same links."""
    client = client_for(p5_runtime, bw_ws)
    edge = {"src": "maya", "dst": "proj", "rel": "owns"}
    link = {
        "collection": "p5_rel",
        "entity": "maya",
        "type": "link",
        "text": "maya owns proj",
        "content": edge,
    }
    (link_result,) = written(client, link)
    assert link_result["processing"] == "pending"
    (target,) = written_ids(client, rec("bw_plain", entity="proj", text="project note"))
    body = {
        "mode": "recent",
        "scope": {"collections": ["bw_plain"]},
        "graph_boost": {"graph": "p5_walk", "anchor": "maya", "weight": 0.5},
    }
    before = search(client, body)
    assert (before["graph_boost"]["matched_records"], before["graph_boost"]["edge_count"]) == (0, 0)
    walked = ok(view_query(client, "p5_walk", {"seed": "maya"}))
    assert walked["hits"] == []
    process(with_models(p5_runtime, openai_server.environ(api_key="k")))
    after = search(client, body)
    assert (after["graph_boost"]["matched_records"], after["graph_boost"]["edge_count"]) == (1, 1)
    assert ids(after) == [target]
