"""Audit (processing, enrichments, models, provider failures): design §1 "Processing and
enrichments", "Models", "Records"; §3 `POST /records` (`?wait=true`, `embedding`); the spec's
"Errors" (503) and "Embed once, if needed".

Providers speak the real OpenAI protocol (tests/openai_server.py) with scripted failures and
malformed answers. The `sx_` app's `sx_embed` alias never retries (`max_retries: 0`), so one
scripted failure is one unavailable provider.
"""

from __future__ import annotations

import pytest

from memseek.runtime import Runtime
from tests.blackbox.design_support import process
from tests.blackbox.design_support import rec
from tests.blackbox.support import ids
from tests.blackbox.support import search
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
