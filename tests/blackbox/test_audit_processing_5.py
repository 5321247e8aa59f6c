"""Audit (processing, enrichments, models, provider failures): design §1 "Processing and
enrichments", "Models", "Records"; §3 `POST /records` (`?wait=true`, `embedding`); the spec's
"Errors" (503) and "Embed once, if needed".

Providers speak the real OpenAI protocol (tests/openai_server.py) with scripted failures and
malformed answers. The `sx_` app's `sx_embed` alias never retries (`max_retries: 0`), so one
scripted failure is one unavailable provider.
"""

from __future__ import annotations

from memseek.runtime import Runtime
from tests.blackbox.design_support import process
from tests.conftest import Client
from tests.conftest import Tenant
from tests.conftest import client_for
from tests.helpers import fetch
from tests.helpers import ok
from tests.helpers import view_query
from tests.helpers import with_models
from tests.helpers import written_ids
from tests.openai_server import OpenAIServer

# --- graph reads count only processed nodes (`p5_` catalog) ---------------------------------------


def orphan_keys(client: Client) -> list[str]:
    return [hit["key"] for hit in ok(view_query(client, "p5_orphans", {}))["hits"]]


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
