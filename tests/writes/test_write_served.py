"""Write contracts through `memseek serve`'s own server (the SDK tests' `service`: the
production app and its worker behind `memseek.server`), where a request that waits for
processing must be handed to the server's wait threads."""

from __future__ import annotations

import httpx

from tests.conftest import Tenant

NOTE = {"entity": "contact.maria", "text": "Maria prefers email to calls."}


def test_a_contract_call_with_wait_returns_processed_records(service: str, tenant: Tenant) -> None:
    """Issue 41 §2: `POST /writes/{name}` writes "through `POST /records`' own write path", and
    the route says `?wait=true&timeout=S` "waits for processing exactly as `POST /records` does"
    (design §3: "`?wait=true` … returns once those records are processed or the timeout
    passes, with their states"). Under `memseek serve` the call must not answer `pending` at once."""
    with httpx.Client(base_url=service, headers=tenant.headers, timeout=60) as http:
        response = http.post("/writes/remember?wait=true&timeout=30", json={"parameters": NOTE})
        assert response.status_code == 201, response.text
        (written,) = response.json()["records"]
        assert written["processing"] == "ready"
        assert http.get(f"/records/{written['id']}").json()["processing"] == "ready"
