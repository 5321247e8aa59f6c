"""Issue 45, "Deadlines on every database wait": a healthy database that is merely slow for a
request — here another session holds a lock its search needs — ends the wait by the request's
deadline. A search is then answered as any search that outlives `SEARCH_TIMEOUT_MS` is:
`503 search_timeout` (docs/operations.md's Configuration table), never the outage's
`backend_unavailable`, and the service serves the next search at once."""

from __future__ import annotations

import time

from sqlalchemy.engine import Engine

from memseek.app import create_app
from memseek.runtime import Runtime
from tests.conftest import Tenant
from tests.helpers import with_settings
from tests.reliability.test_fairness import records_locked

TIMEOUT_MS = 1500


def test_a_search_waiting_on_a_lock_past_its_deadline_is_search_timeout(
    runtime: Runtime, tenant: Tenant, db: Engine
) -> None:
    """Issue 45: "a per-request deadline covering pool checkout, connection health and each
    statement ... server-side"; docs: a healthy but slow database cancels its own statement
    first (a search: `503 search_timeout`)."""
    client = create_app(shared=with_settings(runtime, search_timeout_ms=TIMEOUT_MS)).test_client()
    headers = {"Authorization": f"Bearer {tenant.key}"}
    body = {"q": "alpha", "mode": "text"}
    with records_locked(db):
        started = time.monotonic()
        response = client.post("/search", json=body, headers=headers)
        took = time.monotonic() - started
    assert response.status_code == 503, response.text
    assert response.get_json()["error"]["code"] == "search_timeout", response.text
    assert response.headers["Retry-After"] == "1"
    assert took < TIMEOUT_MS / 1000 + 1.0, took
    assert client.post("/search", json=body, headers=headers).status_code == 200
