"""`GET /records` and `GET /erasures`: keyset pages in a stable order, every state on the audit
path, exact filters, bounded limits, opaque cursors that refuse tampering, undeclared query
parameters refused, and nothing of another workspace."""

from __future__ import annotations

import base64
import json
from typing import Any

import pytest
import sqlalchemy as sa
from sqlalchemy.engine import Engine

from memseek.db import set_local
from memseek.runtime import Runtime
from tests.conftest import Client
from tests.conftest import Tenant
from tests.helpers import app_for
from tests.helpers import error
from tests.helpers import ok
from tests.helpers import with_settings
from tests.helpers import written_ids
from tests.lifecycle.support import delete
from tests.lifecycle.support import fact
from tests.lifecycle.support import note


def pages(client: Client, query: str) -> list[dict[str, Any]]:
    """Every page of `GET /records?query`, following `next_cursor`."""
    found, path = [], f"/records?{query}"
    while True:
        body = ok(client.get(path))
        assert set(body) == {"records", "next_cursor"}
        found.append(body)
        if body["next_cursor"] is None:
            return found
        path = f"/records?{query}&cursor={body['next_cursor']}"


def ids_of(found: list[dict[str, Any]]) -> list[str]:
    return [record["id"] for page in found for record in page["records"]]


def test_pages_are_newest_first_and_cover_every_record_once(lc: Client) -> None:
    written = written_ids(lc, *(note("ann", f"n{n}") for n in range(7)), note("bob", "b"))
    found = pages(lc, "limit=3")
    assert [len(page["records"]) for page in found] == [3, 3, 2]
    assert ids_of(found) == written[::-1]
    assert ids_of(pages(lc, "limit=3&order=oldest")) == written


def test_records_written_between_pages_do_not_shift_them(lc: Client) -> None:
    written = written_ids(lc, *(note("ann", f"n{n}") for n in range(4)))
    first = ok(lc.get("/records?limit=2"))
    written_ids(lc, note("ann", "newer"))
    rest = ok(lc.get(f"/records?limit=2&cursor={first['next_cursor']}"))
    assert [r["id"] for r in first["records"] + rest["records"]] == written[::-1]


def test_every_state_is_listed_with_the_fields_that_say_which(lc: Client) -> None:
    old, current = written_ids(lc, fact("ann", "city", "Lisbon"), fact("ann", "city", "Faro"))
    [draft] = written_ids(lc, fact("ann", "plan", "maybe", status="draft"))
    [retracted] = written_ids(lc, note("ann", "oops"))
    ok(lc.post(f"/records/{retracted}/retract", json={"reason": "typo"}))
    by_id = {r["id"]: r for r in ok(lc.get("/records?entity=ann"))["records"]}
    assert set(by_id) == {old, current, draft, retracted}
    assert by_id[old]["current"] is False and by_id[current]["current"] is True
    assert by_id[draft]["status"] == "draft"
    assert by_id[retracted]["retraction_reason"] == "typo"
    assert {r["processing"] for r in by_id.values()} == {"pending"}  # not processed, still listed
    assert by_id[old] == ok(lc.get(f"/records/{old}"))  # each as GET /records/{id} shows it


@pytest.mark.parametrize(
    ("query", "texts"),
    [
        pytest.param("entity=ann", ["ann city", "ann plan", "ann note"], id="entity"),
        pytest.param("entity=ann&key=city", ["ann city"], id="key"),
        pytest.param("status=draft", ["ann plan"], id="status"),
        pytest.param("type=fact&entity=ann", ["ann city", "ann plan"], id="type"),
        pytest.param("collection=lc_edges", [], id="collection"),
        pytest.param("entity=nobody", [], id="no-match"),
    ],
)
def test_filters_are_exact_matches(lc: Client, query: str, texts: list[str]) -> None:
    written_ids(
        lc,
        note("ann", "ann note"),
        fact("ann", "plan", "ann plan", status="draft"),
        fact("ann", "city", "ann city"),
        note("bob", "bob note"),
    )
    assert [r["text"] for r in ok(lc.get(f"/records?{query}"))["records"]] == texts


def test_an_entitys_listing_reads_an_index_of_it(lc: Client, db: Engine) -> None:
    """An index serves the listing; sequential scans are disabled for the plan because on the
    test's few rows one would be cheapest whatever the indexes. The workspace is a literal (on
    Citus a plan with server-side parameters holds no worker's plan), the setting sent as the
    service sends its own (on Citus, one the workers receive)."""
    with db.begin() as conn:
        set_local(conn, {"enable_seqscan": "off"})
        plan = conn.execute(
            sa.text(
                f"EXPLAIN SELECT id FROM records WHERE workspace_id = '{lc.tenant.id}' AND entity = 'ann' "
                "ORDER BY seq DESC LIMIT 51"
            )
        ).all()
    assert "records_entity" in json.dumps([tuple(row) for row in plan])


def _b64(text: str) -> str:
    return base64.urlsafe_b64encode(text.encode()).decode().rstrip("=")


@pytest.mark.parametrize(
    ("query", "loc"),
    [
        pytest.param("limit=0", ["query", "limit"], id="limit-zero"),
        pytest.param("limit=501", ["query", "limit"], id="limit-above-max"),
        pytest.param("limit=ten", ["query", "limit"], id="limit-not-a-number"),
        pytest.param("limit=-1", ["query", "limit"], id="limit-negative"),
        pytest.param("status=retracted", ["query", "status"], id="status-unknown"),
        pytest.param("order=random", ["query", "order"], id="order-unknown"),
        pytest.param("entitty=ann", ["query", "entitty"], id="unknown-parameter"),
        pytest.param("entity=a&entity=b", ["query", "entity"], id="repeated"),
        pytest.param("cursor=abc", ["query", "cursor"], id="cursor-garbage"),
        pytest.param("cursor=", ["query", "cursor"], id="cursor-empty"),
        pytest.param("cursor=" + _b64("[" * 100_000), ["query", "cursor"], id="cursor-nested-deeply"),
        pytest.param("entity=a%00b", ["query", "entity"], id="entity-with-nul"),
    ],
)
def test_invalid_query_parameters_are_422(lc: Client, query: str, loc: list[str]) -> None:
    assert [d["loc"] for d in error(lc.get(f"/records?{query}"), 422, "invalid_request")["details"]] == [loc]


def test_limit_500_is_allowed_and_50_is_the_default(lc: Client) -> None:
    written_ids(lc, *(note("ann", f"n{n}") for n in range(55)))
    assert len(ok(lc.get("/records"))["records"]) == 50
    assert len(ok(lc.get("/records?limit=500"))["records"]) == 55


def _forged(cursor: str, change: Any) -> str:
    data = json.loads(base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)))
    change(data)
    return _b64(json.dumps(data))


@pytest.mark.parametrize(
    "tamper",
    [
        pytest.param(lambda c: c[:-3], id="truncated"),
        pytest.param(lambda c: _forged(c, lambda d: d.update(after="7")), id="position-as-text"),
        pytest.param(lambda c: _forged(c, lambda d: d.update(of="0" * 16)), id="other-digest"),
        pytest.param(lambda c: _forged(c, lambda d: d.update(extra=1)), id="extra-key"),
        pytest.param(lambda c: _forged(c, lambda d: d.pop("of")), id="no-digest"),
        pytest.param(lambda c: _forged(c, lambda d: d.update(after=-1)), id="negative-position"),
        pytest.param(lambda c: _forged(c, lambda d: d.update(after=2**70)), id="position-past-bigint"),
        pytest.param(lambda c: _forged(c, lambda d: d.update(after=True)), id="position-a-boolean"),
        pytest.param(lambda c: _forged(c, lambda d: d.update(after=[1])), id="position-a-list"),
    ],
)
def test_a_tampered_cursor_is_422(lc: Client, tamper: Any) -> None:
    written_ids(lc, *(note("ann", f"n{n}") for n in range(3)))
    cursor = ok(lc.get("/records?limit=1"))["next_cursor"]
    assert ok(lc.get(f"/records?limit=1&cursor={cursor}"))["records"]
    error(lc.get(f"/records?limit=1&cursor={tamper(cursor)}"), 422, "invalid_request")


def test_a_cursor_only_continues_its_own_listing(lc: Client) -> None:
    written_ids(lc, *(note("ann", f"n{n}") for n in range(3)))
    cursor = ok(lc.get("/records?limit=1&entity=ann"))["next_cursor"]
    for other in ("entity=bob", "", "entity=ann&order=oldest"):
        error(lc.get(f"/records?limit=1&{other}&cursor={cursor}"), 422)
    assert ok(lc.get(f"/records?limit=1&entity=ann&cursor={cursor}"))["records"]


def test_another_workspaces_records_are_never_listed(lc: Client, lc_other: Client) -> None:
    written_ids(lc_other, note("ann", "theirs"))
    assert ok(lc.get("/records?entity=ann")) == {"records": [], "next_cursor": None}
    assert ok(lc.get("/erasures")) == {"erasures": [], "next_cursor": None}


def test_the_erasure_log_pages_newest_first(lc: Client, lc_other: Client) -> None:
    ids = written_ids(lc, *(note(f"e{n}", f"n{n}") for n in range(5)))
    written_ids(lc_other, note("e0", "theirs"))
    logged = [ok(delete(lc, f"/entities/e{n}"))["id"] for n in range(4)]
    logged.append(ok(delete(lc, f"/records/{ids[4]}"))["erasure_id"])
    first = ok(lc.get("/erasures?limit=2"))
    second = ok(lc.get(f"/erasures?limit=2&cursor={first['next_cursor']}"))
    third = ok(lc.get(f"/erasures?limit=2&cursor={second['next_cursor']}"))
    listed = [e["id"] for page in (first, second, third) for e in page["erasures"]]
    assert listed == logged[::-1] and third["next_cursor"] is None
    error(lc.get(f"/erasures?cursor={ok(lc.get('/records?limit=1'))['next_cursor'] or 'x'}"), 422)
    error(lc.get("/erasures?entity=e1"), 422)
    error(lc_other.get(f"/erasures/{logged[0]}"), 404, "not_found")
    error(lc.get("/erasures/not-a-uuid"), 404, "not_found")


@pytest.mark.parametrize(
    "position",
    [
        pytest.param("not-an-id", id="text"),
        pytest.param(7, id="number"),
        pytest.param(None, id="null"),
    ],
)
def test_an_erasure_cursor_naming_no_erasure_is_422(lc: Client, position: Any) -> None:
    for n in range(2):
        [record_id] = written_ids(lc, note("ann", f"n{n}"))
        ok(delete(lc, f"/records/{record_id}"))
    cursor = ok(lc.get("/erasures?limit=1"))["next_cursor"]
    assert len(ok(lc.get(f"/erasures?limit=1&cursor={cursor}"))["erasures"]) == 1
    forged = _forged(cursor, lambda d: d.update(after=position))
    error(lc.get(f"/erasures?limit=1&cursor={forged}"), 422, "invalid_request")


# --- the response bound ---------------------------------------------------------------------------


@pytest.fixture
def lc_small(lc_runtime: Runtime, tenant: Tenant) -> Client:
    """A client of the `lc_` catalog's app whose responses are bounded at 64 KiB."""
    return Client(app_for(with_settings(lc_runtime, max_response_bytes=64 * 1024)).test_client(), tenant)


def test_a_page_ends_early_rather_than_pass_max_response_bytes(lc_small: Client) -> None:
    """Design §4: `MAX_RESPONSE_BYTES` bounds "the whole JSON response" (spec: "Size of the whole
    JSON response"). A listing page (issue 43 §4: "bounded `limit`") holds at most `limit`
    records and ends before it would pass the bound, its `next_cursor` naming the rest, so
    nothing is dropped and every page stays within the bound; a single record larger than the
    bound is still listed, alone on its page (the audit path shows every record)."""
    text = "x" * 20_000  # about 20 KB per listed record: three fit in 64 KiB, four do not
    written = written_ids(lc_small, *(note("ann", f"{n} {text}") for n in range(8)))
    found = pages(lc_small, "entity=ann&limit=500&order=oldest")
    assert ids_of(found) == written
    assert [len(page["records"]) for page in found] == [3, 3, 2]
    assert all(len(json.dumps(page).encode()) <= 64 * 1024 for page in found)
    [huge] = written_ids(lc_small, note("bob", "y" * 30_000, content={"attachment": "z" * 40_000}))
    assert [page["records"][0]["id"] for page in pages(lc_small, "entity=bob&limit=5")] == [huge]
