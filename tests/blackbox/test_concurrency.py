"""Concurrency, atomicity and "a failed write changes nothing", over HTTP (design §1 "Keyed facts",
"Drafts", "Processing and enrichments", §3 `POST /records` atomic batches, idempotency and the
record actions; the spec's `versions: current` and `SEARCH_MAX_CONCURRENCY`).

Threads share one app and send through Flask test clients of their own, released together by a
barrier (`_in_parallel`); nothing synchronises by sleeping. Ingestion order is read through the
spec's tie-breakers: records written with one `occurred_at` tie in a `recent` search, which then
orders them "by ingestion order descending".
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any
from uuid import uuid4

import pytest
from flask import Flask
from sqlalchemy.engine import Engine

from memseek.runtime import Runtime
from tests.blackbox.conftest import ClientFactory
from tests.blackbox.design_support import count_records
from tests.blackbox.design_support import current_flags
from tests.blackbox.design_support import fact
from tests.blackbox.design_support import locked
from tests.blackbox.design_support import one_id
from tests.blackbox.design_support import plan
from tests.blackbox.design_support import process
from tests.blackbox.design_support import rec
from tests.blackbox.design_support import recent
from tests.blackbox.design_support import responses_at_once
from tests.blackbox.design_support import retract
from tests.blackbox.design_support import until
from tests.blackbox.design_support import walk
from tests.blackbox.fusion_support import combined
from tests.blackbox.fusion_support import ranked_by
from tests.blackbox.support import note
from tests.blackbox.support import search
from tests.blackbox.support import vec
from tests.blackbox.support import write
from tests.conftest import Client
from tests.conftest import Tenant
from tests.conftest import client_for
from tests.helpers import error
from tests.helpers import fetch
from tests.helpers import locs
from tests.helpers import ok
from tests.helpers import post_records
from tests.helpers import with_settings
from tests.helpers import written
from tests.helpers import written_ids
from tests.integration.test_lanes import _in_parallel

# --- concurrent writers to one slot ---------------------------------------------------------------


def test_concurrent_writers_to_one_slot_end_with_exactly_one_current_record(
    bw_app: Flask, bw_ws: Tenant
) -> None:
    record_ids: list[str] = []
    lock = threading.Lock()

    def writer(n: int) -> None:
        client = Client(bw_app.test_client(), bw_ws)
        for i in range(5):
            (record_id,) = written_ids(client, fact(f"writer {n} value {i}"))
            with lock:
                record_ids.append(record_id)

    threads = [threading.Thread(target=writer, args=(n,)) for n in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    client = Client(bw_app.test_client(), bw_ws)
    assert len(record_ids) == 20
    assert sum(current_flags(client, *record_ids)) == 1
    assert len(recent(client, "bw_facts")) == 1


def in_threads(count: int, action: Callable[[int], Any]) -> list[Any]:
    """`action(i)` for i in 0 … count-1, each on its own thread, released together; the results in
    that order (`_in_parallel` fails with whatever a thread raised)."""
    results: list[Any] = [None] * count

    def work(index: int) -> None:
        results[index] = action(index)

    _in_parallel(count, work)
    return results


def test_concurrent_writers_to_one_slot_end_with_one_current(
    bw_app: Flask, bw_ws: Tenant, bw: Client
) -> None:
    """§1: "Concurrent writers to one slot must end with exactly one current record." """

    def write(index: int) -> str:
        return one_id(Client(bw_app.test_client(), bw_ws), fact(f"v{index}"))

    ids = in_threads(6, write)
    assert sum(current_flags(bw, *ids)) == 1
    assert len(recent(bw, "bw_facts")) == 1


def newest_first(client: Client, **scope: Any) -> list[dict[str, Any]]:
    """Every record of `bw_facts` a `recent` search returns (k 100), with text, key, entity and
    status: with one `occurred_at` they come in ingestion order descending."""
    body = {
        "mode": "recent",
        "scope": {"collections": ["bw_facts"], **scope},
        "k": 100,
        "include": ["text", "key", "entity", "status"],
    }
    return ok(client.post("/search", json=body))["hits"]  # type: ignore[no-any-return]


def retract_chain(client: Client, count: int) -> list[str]:
    """Retract the current value of the `plan` slot `count` times; the ids retracted, in order."""
    retracted = []
    for _ in range(count):
        (current,) = [hit["id"] for hit in newest_first(client) if hit["key"] == "plan"]
        assert retract(client, current).status_code == 200
        retracted.append(current)
    return retracted


def test_after_concurrent_writes_the_current_value_is_the_last_in_write_order(
    bw_app: Flask, bw_ws: Tenant
) -> None:
    """§1 "Keyed facts": "The newest record written into a slot is its *current* value";
    "Newest" is decided by write order"; "Concurrent writers to one slot must end with exactly one
    current record"; "Retracting the current value makes the newest non-retracted earlier value
    current again". The write order the service assigned is its ingestion order (spec: ties are
    ordered "by ingestion order descending"): the current value is the first of the history, and
    retracting the current value again and again walks the history in that order."""

    def writer(seed: int) -> None:
        client = Client(bw_app.test_client(), bw_ws)
        for n in range(2):
            written_ids(client, plan(f"writer {seed} value {n}"))

    _in_parallel(6, writer)
    client = Client(bw_app.test_client(), bw_ws)
    history = [hit["id"] for hit in newest_first(client, versions="all")]
    assert len(history) == 12
    assert current_flags(client, *history) == [True] + [False] * 11
    assert [hit["id"] for hit in newest_first(client)] == history[:1]
    assert retract_chain(client, 11) == history[:11]
    assert current_flags(client, history[-1]) == [True]


def test_concurrent_bulk_batches_over_shared_slots_keep_write_order(bw_app: Flask, bw_ws: Tenant) -> None:
    """§3: batches of "1–1,000 records, written atomically", and §1: "Concurrent writers to one
    slot must end with exactly one current record" — with batches large enough for a bulk path,
    each filling the same slots in another order. Each batch's `current` flags name the last value
    of each slot inside it, and afterwards every slot's current value is its newest in ingestion
    order."""
    entities = [f"e{n}" for n in range(5)]
    results: list[list[dict[str, Any]]] = [[] for _ in range(4)]

    def writer(seed: int) -> None:
        order = entities[seed:] + entities[:seed]
        batch = [plan(f"b{seed}-{n}-{e}", entity=e) for n in range(25) for e in order]
        results[seed] = written(Client(bw_app.test_client(), bw_ws), *batch)

    _in_parallel(4, writer)
    client = Client(bw_app.test_client(), bw_ws)
    for batch in results:
        assert [r["current"] for r in batch] == [False] * 120 + [True] * 5
    for entity in entities:
        history = [hit["id"] for hit in newest_first(client, versions="all", entities=[entity])]
        assert len(history) == 100
        assert [hit["id"] for hit in newest_first(client, entities=[entity])] == history[:1]
        assert sum(current_flags(client, *history)) == 1


# --- the same request at once ---------------------------------------------------------------------


def test_concurrent_replays_of_one_key_write_one_record(bw_app: Flask, bw_ws: Tenant, bw_db: Engine) -> None:
    """§3: "a repeated `idempotency_key` in the same workspace returns the original record instead
    of writing again" — also when the repeats race."""

    def write(index: int) -> Any:
        response = post_records(Client(bw_app.test_client(), bw_ws), rec(text="once", idempotency_key="race"))
        return response.status_code, response.get_json()

    results = in_threads(6, write)
    assert [status for status, _ in results] == [201] * 6, results
    assert len({body["records"][0]["id"] for _, body in results}) == 1
    assert count_records(bw_db, bw_ws) == 1


def statuses_in_parallel(app: Flask, workspace: Tenant, send: Any, threads: int = 6) -> list[Any]:
    """Each thread sends `send(client)` at the same moment; the responses in thread order."""
    responses: list[Any] = [None] * threads

    def work(seed: int) -> None:
        responses[seed] = send(Client(app.test_client(), workspace))

    _in_parallel(threads, work)
    return responses


def test_concurrent_requests_with_one_idempotency_key_write_one_record(
    bw_app: Flask, bw_ws: Tenant, bw_db: Engine
) -> None:
    """§3: "a repeated `idempotency_key` in the same workspace returns the original record instead
    of writing again" — also when the repeats arrive at the same moment."""
    body = rec(text="exactly once", idempotency_key="race-1")
    responses = statuses_in_parallel(bw_app, bw_ws, lambda client: post_records(client, body))
    assert [r.status_code for r in responses] == [201] * 6
    assert len({r.get_json()["records"][0]["id"] for r in responses}) == 1
    assert count_records(bw_db, bw_ws) == 1


def test_concurrent_requests_reusing_a_key_with_other_payloads_write_one_record(
    bw_app: Flask, bw_ws: Tenant, bw_db: Engine
) -> None:
    """§3: "the same key with a different payload → `409`": of several different payloads sent at
    once under one key, exactly one is written and every other request is a conflict."""
    counter = iter(range(100))

    def send(client: Client) -> Any:
        return post_records(client, rec(text=f"payload {next(counter)}", idempotency_key="race-2"))

    codes = sorted(r.status_code for r in statuses_in_parallel(bw_app, bw_ws, send))
    assert codes == [201, 409, 409, 409, 409, 409]
    assert count_records(bw_db, bw_ws) == 1


@pytest.mark.parametrize(
    ("action", "body"),
    [
        pytest.param("retract", {"reason": "dup"}, id="retract"),
        pytest.param("reject", {"reason": "no"}, id="reject"),
        pytest.param("approve", {}, id="approve"),
    ],
)
def test_a_record_action_sent_several_times_at_once_succeeds_once(
    bw_app: Flask, bw_ws: Tenant, bw: Client, action: str, body: dict[str, Any]
) -> None:
    """§3 record actions change a record's state once: a second retract, reject or approve of the
    same record is a `409` conflict — also when they race."""
    (draft,) = written_ids(bw, fact("proposal", status="draft"))
    responses = statuses_in_parallel(
        bw_app, bw_ws, lambda client: client.post(f"/records/{draft}/{action}", json=body)
    )
    assert sorted(r.status_code for r in responses) == [200, 409, 409, 409, 409, 409]
    for response in responses:
        if response.status_code == 409:
            error(response, 409, "conflict")


# --- different actions on one slot at once --------------------------------------------------------


def test_concurrent_retractions_of_the_current_value_leave_one_current(
    bw_app: Flask, bw_ws: Tenant, bw: Client
) -> None:
    """§1: "Retracting the current value makes the newest non-retracted earlier value current
    again"; exactly one current per slot."""
    ids = [one_id(bw, fact(f"v{i}")) for i in range(5)]

    def retract_one(index: int) -> int:
        return int(retract(Client(bw_app.test_client(), bw_ws), ids[index + 1]).status_code)

    statuses = in_threads(4, retract_one)
    assert statuses == [200] * 4
    assert current_flags(bw, *ids) == [True, False, False, False, False]


def test_concurrent_approvals_into_one_slot_leave_one_current(
    bw_app: Flask, bw_ws: Tenant, bw: Client
) -> None:
    """§1: "Concurrent writers to one slot must end with exactly one current record." """
    drafts = [one_id(bw, fact(f"d{i}", status="draft")) for i in range(4)]
    live = one_id(bw, fact("live"))

    def approve(index: int) -> int:
        client = Client(bw_app.test_client(), bw_ws)
        return int(client.post(f"/records/{drafts[index]}/approve").status_code)

    assert in_threads(4, approve) == [200] * 4
    assert sum(current_flags(bw, live, *drafts)) == 1
    assert len(recent(bw, "bw_facts")) == 1


def test_concurrent_writes_and_retractions_leave_one_current(
    bw_app: Flask, bw_ws: Tenant, bw: Client
) -> None:
    """§1: exactly one current record per slot, whatever the interleaving of writes and
    retractions."""
    ids = [one_id(bw, fact(f"v{i}")) for i in range(3)]

    def act(index: int) -> str | None:
        client = Client(bw_app.test_client(), bw_ws)
        if index % 2:
            ok(retract(client, ids[2 - index // 2]))
            return None
        return one_id(client, fact(f"new{index}"))

    new = [i for i in in_threads(4, act) if i is not None]
    flags = current_flags(bw, *ids, *new)
    assert sum(flags) == 1, flags


def test_concurrent_approvals_in_one_slot_end_with_one_current_active_value(
    bw_app: Flask, bw_ws: Tenant
) -> None:
    """§1: "Concurrent writers to one slot must end with exactly one current record" — approvals
    and writes into the same slot at once included."""
    client = Client(bw_app.test_client(), bw_ws)
    drafts = [written_ids(client, fact(f"draft {n}", status="draft"))[0] for n in range(4)]

    def work(seed: int) -> None:
        mine = Client(bw_app.test_client(), bw_ws)
        if seed < len(drafts):
            assert mine.post(f"/records/{drafts[seed]}/approve").status_code == 200
        else:
            written_ids(mine, fact(f"write {seed}"))

    _in_parallel(6, work)
    active = [h for h in recent(client, "bw_facts", versions="all") if h["status"] == "active"]
    assert len(active) == 6
    assert len(recent(client, "bw_facts")) == 1
    assert sum(current_flags(client, *(h["id"] for h in active))) == 1


def test_approve_and_reject_of_one_draft_at_once_one_wins(bw_app: Flask, bw_ws: Tenant, bw: Client) -> None:
    """§1 "Drafts": approve "moves a draft into the active lane", reject "retracts a draft"; §3
    "`409` (conflict)". Sent at the same moment, exactly one succeeds; the other finds the record no
    longer a pending draft and is a `409`, and the record ends in the winner's state."""
    (live,) = written_ids(bw, plan("live value"))
    (draft,) = written_ids(bw, plan("proposal", status="draft"))
    approve, reject = responses_at_once(
        bw_app,
        bw_ws,
        [
            lambda client: client.post(f"/records/{draft}/approve"),
            lambda client: client.post(f"/records/{draft}/reject", json={"reason": "no"}),
        ],
    )
    assert sorted([approve.status_code, reject.status_code]) == [200, 409]
    loser = reject if approve.status_code == 200 else approve
    error(loser, 409, "conflict")
    record = fetch(bw, draft)
    if approve.status_code == 200:
        assert (record["status"], record["current"], record["retracted_at"]) == ("active", True, None)
        assert current_flags(bw, live) == [False]
    else:
        assert (record["status"], record["current"]) == ("draft", False)
        assert record["retraction_reason"] == "no"
        assert current_flags(bw, live) == [True]
    assert len(newest_first(bw)) == 1 and newest_first(bw, status="draft") == []


def test_retracting_the_current_value_while_a_new_one_is_written(
    bw_app: Flask, bw_ws: Tenant, bw: Client
) -> None:
    """§1: "Retracting the current value makes the newest non-retracted earlier value current
    again", and the newest record written is current. Whichever lands first, the new value ends
    current, the retracted one retracted, and the slot has one current value."""
    older, current = written_ids(bw, plan("older"), plan("current"))
    retracted, new = responses_at_once(
        bw_app,
        bw_ws,
        [lambda client: retract(client, current), lambda client: post_records(client, plan("newest"))],
    )
    assert (retracted.status_code, new.status_code) == (200, 201)
    (new_id,) = [r["id"] for r in new.get_json()["records"]]
    assert current_flags(bw, older, current, new_id) == [False, False, True]
    assert fetch(bw, current)["retracted_at"] is not None
    assert [hit["text"] for hit in newest_first(bw)] == ["newest"]


def test_retracting_the_two_newest_values_at_once_restores_the_third(
    bw_app: Flask, bw_ws: Tenant, bw: Client
) -> None:
    """§1: "Retracting the current value makes the newest non-retracted earlier value current
    again" — the newest *non-retracted* one, also when the value just below the current one is
    being retracted at the same moment."""
    first, second, third = written_ids(bw, plan("first"), plan("second"), plan("third"))
    responses = responses_at_once(
        bw_app, bw_ws, [lambda client: retract(client, third), lambda client: retract(client, second)]
    )
    assert [r.status_code for r in responses] == [200, 200]
    assert current_flags(bw, first, second, third) == [True, False, False]
    assert [hit["text"] for hit in newest_first(bw)] == ["first"]


def test_retract_and_approve_racing_in_one_slot(bw_app: Flask, bw_ws: Tenant, bw: Client) -> None:
    """§1: approve makes a draft "the current active value of its slot"; retracting the current
    value restores the newest earlier one. Retracting the live value while a draft of the slot is
    approved ends with the approved draft current either way (it entered the active lane last)."""
    older, live = written_ids(bw, plan("older"), plan("live"))
    (draft,) = written_ids(bw, plan("proposal", status="draft"))
    responses = responses_at_once(
        bw_app,
        bw_ws,
        [lambda client: retract(client, live), lambda client: client.post(f"/records/{draft}/approve")],
    )
    assert [r.status_code for r in responses] == [200, 200]
    assert current_flags(bw, older, live, draft) == [False, False, True]
    assert [hit["text"] for hit in newest_first(bw)] == ["proposal"]


def test_retract_and_approve_of_one_draft_at_once_end_in_the_same_state(
    bw_app: Flask, bw_ws: Tenant, bw: Client
) -> None:
    """§1: approve moves a live draft into the active lane as its current value; "Retracting the
    current value makes the newest non-retracted earlier value current again"; a retracted draft
    cannot be approved (§3 `409`). Retract and approve of one draft at once: either the retract
    lands first (approve → `409`) or the approval does (then the approved value is retracted and
    the old live value restored). Both orders end the same: the live value current, the draft
    retracted and not current."""
    (live,) = written_ids(bw, plan("live"))
    (draft,) = written_ids(bw, plan("proposal", status="draft"))
    retracted, approved = responses_at_once(
        bw_app,
        bw_ws,
        [lambda client: retract(client, draft), lambda client: client.post(f"/records/{draft}/approve")],
    )
    assert retracted.status_code == 200
    assert approved.status_code in (200, 409)
    if approved.status_code == 409:
        error(approved, 409, "conflict")
    record = fetch(bw, draft)
    assert (record["current"], record["retraction_reason"]) == (False, "wrong")
    assert current_flags(bw, live) == [True]
    assert [hit["text"] for hit in newest_first(bw, status="all")] == ["live"]


def test_approving_one_draft_while_rejecting_the_other_empties_the_draft_lane(
    bw_app: Flask, bw_ws: Tenant, bw: Client
) -> None:
    """§1 "Drafts": approve "moves a draft into the active lane"; reject "retracts a draft"; when a
    current value leaves its lane "the newest non-retracted earlier value" becomes current. With
    two drafts of one slot, approving the newer while rejecting the older at the same moment
    leaves the approved one the current active value and no current draft, in either order."""
    (live,) = written_ids(bw, plan("live"))
    older, newer = written_ids(bw, plan("draft 1", status="draft"), plan("draft 2", status="draft"))
    responses = responses_at_once(
        bw_app,
        bw_ws,
        [
            lambda client: client.post(f"/records/{newer}/approve"),
            lambda client: client.post(f"/records/{older}/reject", json={"reason": "no"}),
        ],
    )
    assert [r.status_code for r in responses] == [200, 200]
    assert current_flags(bw, live, older, newer) == [False, False, True]
    assert [hit["text"] for hit in newest_first(bw)] == ["draft 2"]
    assert newest_first(bw, status="draft") == []


def test_approving_a_draft_while_a_newer_draft_is_written(bw_app: Flask, bw_ws: Tenant, bw: Client) -> None:
    """§1 "Drafts": approve moves a draft into the active lane "where it becomes the current active
    value of its slot"; the newest record written into the draft lane is its current value.
    Approving the current draft while a new draft of the slot is written ends, in either order,
    with the approved record the active value and the new draft the current draft."""
    (live,) = written_ids(bw, plan("live"))
    (draft,) = written_ids(bw, plan("proposal 1", status="draft"))
    approved, new = responses_at_once(
        bw_app,
        bw_ws,
        [
            lambda client: client.post(f"/records/{draft}/approve"),
            lambda client: post_records(client, plan("proposal 2", status="draft")),
        ],
    )
    assert (approved.status_code, new.status_code) == (200, 201)
    (new_id,) = [r["id"] for r in new.get_json()["records"]]
    assert current_flags(bw, live, draft, new_id) == [False, True, True]
    assert [hit["text"] for hit in newest_first(bw)] == ["proposal 1"]
    assert [hit["text"] for hit in newest_first(bw, status="draft")] == ["proposal 2"]


def test_a_replay_superseded_by_its_own_batch_is_reported_not_current(bw: Client) -> None:
    """§3: a repeated `idempotency_key` "returns the original record instead of writing again";
    the `201` lists `{"id", "processing", "current"}` per record; §1: a slot has exactly one
    current value, the newest written. A batch that replays a slot's value and then writes a
    newer value of the same slot leaves the replayed record superseded: the response must not
    call both records current."""
    original = plan("original", idempotency_key="replayed")
    (first,) = written(bw, original)
    replay, newer = written(bw, original, plan("newer"))
    assert replay["id"] == first["id"] and newer["current"] is True
    assert current_flags(bw, first["id"]) == [False]
    assert replay["current"] is False


def test_crossed_idempotent_batches_at_once_write_each_record_once(
    bw_app: Flask, bw_ws: Tenant, bw_db: Engine
) -> None:
    """§3: "a repeated `idempotency_key` in the same workspace returns the original record instead
    of writing again", batches "written atomically": the same two keyed records sent at once in
    opposite orders by several clients are written once each, and every response names the same
    two ids."""
    a = plan("a", key="ka", idempotency_key="cross-a")
    b = plan("b", key="kb", idempotency_key="cross-b")
    sends: list[Callable[[Client], Any]] = [
        lambda client, n=n: post_records(client, *((a, b) if n % 2 else (b, a))) for n in range(6)
    ]
    responses = responses_at_once(bw_app, bw_ws, sends)
    assert [r.status_code for r in responses] == [201] * 6
    pairs = set()
    for n, response in enumerate(responses):
        ids = [r["id"] for r in response.get_json()["records"]]
        pairs.add(tuple(ids if n % 2 else ids[::-1]))
    assert len(pairs) == 1
    assert count_records(bw_db, bw_ws) == 2


# --- 1,000-record batches: all or nothing ---------------------------------------------------------


def thousand(last: dict[str, Any]) -> list[dict[str, Any]]:
    """999 valid records and `last` at index 999."""
    return [rec(text=f"bulk {n}", content={"n": n}) for n in range(999)] + [last]


@pytest.mark.parametrize(
    ("last", "loc"),
    [
        pytest.param(rec(text="   "), ["text"], id="blank-text"),
        pytest.param(rec(content={"i": "seven"}), ["content", "i"], id="declared-field-type"),
        pytest.param(rec(derived_from=[str(uuid4())]), ["derived_from", 0], id="unknown-parent"),
        pytest.param(rec(colour="red"), ["colour"], id="unknown-key"),
    ],
)
def test_one_bad_record_at_index_999_writes_nothing(
    bw: Client, bw_db: Engine, bw_ws: Tenant, last: dict[str, Any], loc: list[Any]
) -> None:
    """§3: "1–1,000 records, written atomically: any invalid record → `422` listing every problem by
    index, and nothing is written"."""
    (before,) = written_ids(bw, rec(text="already there"))
    found = locs(post_records(bw, *thousand(last)))
    assert found and all(found_loc[:2] == ["records", 999] for found_loc in found), found
    assert ["records", 999, *loc] in [found_loc[: 2 + len(loc)] for found_loc in found]
    assert count_records(bw_db, bw_ws) == 1
    assert fetch(bw, before)["current"] is True


def test_an_idempotency_conflict_at_index_999_writes_nothing(
    bw: Client, bw_db: Engine, bw_ws: Tenant
) -> None:
    """§3: "the same key with a different payload → `409`", in a batch "written atomically": the
    999 valid records before it are not written either."""
    written(bw, rec(text="original", idempotency_key="bulk-key"))
    error(post_records(bw, *thousand(rec(text="changed", idempotency_key="bulk-key"))), 409, "conflict")
    assert count_records(bw_db, bw_ws) == 1


def test_problems_at_both_ends_of_a_full_batch_are_all_listed(
    bw: Client, bw_db: Engine, bw_ws: Tenant
) -> None:
    """§3: "any invalid record → `422` listing every problem by index": the first, a middle and the
    last record of a full batch are each named."""
    batch = thousand(rec(text=""))
    batch[0] = rec(type="nope")
    batch[500] = rec(derived_from=[str(uuid4())])
    found = {tuple(loc[:3]) for loc in locs(post_records(bw, *batch))}
    assert found == {("records", 0, "type"), ("records", 500, "derived_from"), ("records", 999, "text")}
    assert count_records(bw_db, bw_ws) == 0


def test_a_record_with_a_catalog_problem_also_has_its_unknown_parent_listed(
    bw: Client, bw_db: Engine, bw_ws: Tenant
) -> None:
    """§3: "any invalid record → `422` listing *every* problem by index": a record of an undeclared
    type whose parent does not exist has both problems listed."""
    missing = str(uuid4())
    found = [tuple(loc[:3]) for loc in locs(post_records(bw, rec(type="nope", derived_from=[missing])))]
    assert sorted(found) == [("records", 0, "derived_from"), ("records", 0, "type")]
    assert count_records(bw_db, bw_ws) == 0


def test_1001_records_are_refused_at_the_records_list(bw: Client, bw_db: Engine, bw_ws: Tenant) -> None:
    """§3: `{"records": [RecordIn, …]}`, "1–1,000 records"; "`details` items carry a `loc` (JSON
    path)": too many records is a problem of the `records` list itself, not of any one record."""
    found = locs(post_records(bw, *[rec(text=f"r{n}") for n in range(1001)]))
    assert found and all(loc[:1] == ["records"] for loc in found), found
    assert count_records(bw_db, bw_ws) == 0


def test_inside_a_full_batch_the_last_value_of_a_slot_wins(bw: Client) -> None:
    """§1: "The newest record written into a slot is its *current* value" — write order inside one
    batch of 1,000 (the bulk path) too: of the values at indexes 0, 500 and 999, the last is
    current, and retracting it restores the one at 500, then the one at 0."""
    batch = thousand(plan("at 999"))
    batch[0], batch[500] = plan("at 0"), plan("at 500")
    results = written(bw, *batch)
    assert [results[i]["current"] for i in (0, 500, 999)] == [False, False, True]
    ids = [results[i]["id"] for i in (0, 500, 999)]
    assert [hit["id"] for hit in newest_first(bw, versions="all")] == ids[::-1]
    assert retract_chain(bw, 2) == ids[:0:-1]
    assert current_flags(bw, *ids) == [True, False, False]


def test_a_refused_batch_leaves_its_slots_as_they_were(bw: Client, bw_db: Engine, bw_ws: Tenant) -> None:
    """§3: a batch is "written atomically" and "the same key with a different payload → `409`":
    a batch that would have superseded a slot's value but is refused for a reused key supersedes
    nothing — the old value stays current and is still what a search returns."""
    (live,) = written_ids(bw, plan("live"))
    written(bw, rec(text="original", idempotency_key="reused"))
    batch = [plan("would supersede"), plan("draft", status="draft")]
    error(post_records(bw, *batch, rec(text="changed", idempotency_key="reused")), 409, "conflict")
    assert current_flags(bw, live) == [True]
    assert [hit["text"] for hit in newest_first(bw)] == ["live"]
    assert newest_first(bw, status="draft") == []
    assert count_records(bw_db, bw_ws) == 2


def test_concurrent_node_writes_leave_the_links_of_the_current_node(bw_app: Flask, bw_ws: Tenant) -> None:
    """§1 "Graph data" (spec "Graph views"): "A link produced automatically from a node stays live
    only while that exact node record is still current"; "Concurrent writers to one slot must end
    with exactly one current record". After four clients rewrite one node at once, the walk from
    it shows exactly the links of its current value."""

    def writer(seed: int) -> None:
        client = Client(bw_app.test_client(), bw_ws)
        for n in range(3):
            node = rec(
                "bw_nodes", key="api", text=f"api {seed}-{n}", content={"depends_on": [f"d{seed}", f"x{n}"]}
            )
            written_ids(client, node)

    _in_parallel(4, writer)
    client = Client(bw_app.test_client(), bw_ws)
    body = {"mode": "recent", "scope": {"collections": ["bw_nodes"]}, "include": ["text"]}
    (current,) = ok(client.post("/search", json=body))["hits"]
    seed, n = current["text"].removeprefix("api ").split("-")
    assert walk(client, "api")["nodes"] == sorted(["api", f"d{seed}", f"x{n}"])


WHEN = "2026-05-01T12:00:00Z"
"""One `occurred_at` for every record of a lane, so a `recent` search ties them all and orders
them by ingestion order (spec "Ordering and ties")."""


def test_workers_racing_writers_leave_the_last_written_value_current(
    bw_runtime: Runtime, bw_app: Flask, bw_ws: Tenant
) -> None:
    """§1: "Newest" is decided by write order, never by processing state"; "Processing runs in
    workers that claim batches from a Postgres queue (`FOR UPDATE SKIP LOCKED`)"; "A crash at any
    point loses nothing". Two workers process while a client writes five values of one slot that
    need embedding: afterwards every value is `ready`, and the last one written is the one current
    value, the only one a search returns."""

    def work(seed: int) -> None:
        if seed == 0:
            client = Client(bw_app.test_client(), bw_ws)
            for n in range(5):
                written_ids(client, rec("bw_vec", key="tier", text=f"tier {n}", occurred_at=WHEN))
        else:
            for _ in range(5):
                process(bw_runtime)

    _in_parallel(3, work)
    process(bw_runtime)
    client = Client(bw_app.test_client(), bw_ws)
    body = {"mode": "recent", "scope": {"collections": ["bw_vec"], "versions": "all"}, "include": ["text"]}
    history = ok(client.post("/search", json=body))["hits"]
    assert [hit["text"] for hit in history] == [f"tier {n}" for n in range(4, -1, -1)]
    assert current_flags(client, *(hit["id"] for hit in history)) == [True] + [False] * 4
    assert all(fetch(client, hit["id"])["processing"] == "ready" for hit in history)
    current = ok(client.post("/search", json={**body, "scope": {"collections": ["bw_vec"]}}))["hits"]
    assert [hit["text"] for hit in current] == ["tier 4"]


# --- reads while writes supersede values ----------------------------------------------------------


def one_current_per_lane(hits: list[dict[str, Any]]) -> None:
    """No two hits share a lane (collection, entity, key, status)."""
    lanes = [(hit["entity"], hit["key"], hit["status"]) for hit in hits if hit["key"] is not None]
    assert len(lanes) == len(set(lanes)), hits


@pytest.mark.parametrize(
    "concurrency", [pytest.param(1, id="one-at-a-time"), pytest.param(2, id="in-parallel")]
)
def test_a_combined_search_never_returns_two_values_of_one_slot(
    bw_runtime: Runtime, bw_ws: Tenant, bw_db: Engine, bw: Client, concurrency: int
) -> None:
    """Spec "Scopes": "`versions: current` returns only the latest value of each named fact"; a
    combined request's sources ("Searches run concurrently", at most `SEARCH_MAX_CONCURRENCY` at
    once) answer one request. When the current value of a slot is retracted while the request is
    between its two sources, the response must not hold the retracted value (from the first
    source) *and* the value it restored (from the second): no single moment had both current.

    Placing the retraction there without sleeping: the `text` source reads the keyword postings
    (docs/search.md), which a retraction never writes, so holding that table locked parks exactly
    the `text` source, after the `recent` one ran (one source at a time, in request order) or
    while it runs (two at once). Every source reads the snapshot the request's first transaction
    took (docs/search.md, "Combined searches"), so the answer is the slot before the retraction."""
    older, newer = written_ids(bw, plan("plan gold"), plan("plan silver"))
    settings = with_settings(bw_runtime, search_max_concurrency=concurrency, touch_on_read=False)
    searcher = client_for(settings, bw_ws)
    scope = {"collections": ["bw_facts"]}
    body = {
        "q": "plan",
        "sources": [
            {"name": "recent", "mode": "recent", "scope": scope},
            {"name": "text", "mode": "text", "scope": scope},
        ],
        "fuse": {"kind": "rrf"},
        "include": ["text", "key", "entity", "status"],
    }
    assert [hit["id"] for hit in ok(searcher.post("/search", json=body))["hits"]] == [newer]
    responses: list[Any] = []
    with locked(bw_db, "record_postings", "ACCESS EXCLUSIVE") as someone_waits:
        thread = threading.Thread(target=lambda: responses.append(searcher.post("/search", json=body)))
        thread.start()
        until(someone_waits)
        assert retract(bw, newer).status_code == 200
    thread.join(60)
    assert current_flags(bw, older, newer) == [True, False]
    hits = ok(responses[0])["hits"]
    one_current_per_lane(hits)
    assert [hit["id"] for hit in hits] == [newer]


def test_searches_racing_superseding_writes_never_show_two_values_of_a_slot(
    bw_app: Flask, bw_ws: Tenant, bw: Client
) -> None:
    """Spec "Scopes": "`versions: current` returns only the latest value of each named fact";
    design §1: "Concurrent writers to one slot must end with exactly one current record". While
    one client keeps superseding the values of three slots, single searches running at the same
    time each see at most one value per slot."""
    written_ids(bw, *(plan(f"start {key}", key=key) for key in ("a", "b", "c")))
    seen: list[list[dict[str, Any]]] = []

    def work(seed: int) -> None:
        client = Client(bw_app.test_client(), bw_ws)
        for n in range(15):
            if seed == 0:
                written_ids(client, *(plan(f"v{n} {key}", key=key) for key in ("c", "a", "b")))
            else:
                seen.append(newest_first(client))

    _in_parallel(4, work)
    assert len(seen) == 45
    for hits in seen:
        one_current_per_lane(hits)
    assert sorted(hit["text"] for hit in newest_first(bw)) == ["v14 a", "v14 b", "v14 c"]


def test_many_combined_searches_at_once_all_answer_the_same(bw_app: Flask, bw_ws: Tenant, bw: Client) -> None:
    """Spec: "`SEARCH_MAX_CONCURRENCY` | How many searches within one request run at once" (design
    default 4); "1 to 8 sources"; "Searches run concurrently, but ordering stays deterministic".
    Eight requests of eight sources each, sent at once, all answer `200` with the same hits as
    the request sent alone."""
    written_ids(
        bw, *(fact(f"value {n}", key=f"k{n}", occurred_at=f"2026-05-0{n + 1}T00:00:00Z") for n in range(6))
    )
    scope = {"collections": ["bw_facts"]}
    body = {
        "sources": [{"name": f"s{n}", "mode": "recent", "scope": scope, "weight": n + 1} for n in range(8)],
        "fuse": {"kind": "rrf"},
        "include": ["text"],
    }
    alone = ok(bw.post("/search", json=body))["hits"]
    assert len(alone) == 6
    responses = responses_at_once(bw_app, bw_ws, [lambda client: client.post("/search", json=body)] * 8)
    assert [r.status_code for r in responses] == [200] * 8
    assert all(r.get_json()["hits"] == alone for r in responses)


NOTES = {"collections": ["sx_notes"]}
VECS = {"collections": ["sx_vec"]}


def test_search_max_concurrency_never_changes_the_result(sx: Client, sx_with: ClientFactory) -> None:
    """Spec: "`SEARCH_MAX_CONCURRENCY` | How many searches within one request run at once";
    "Searches run concurrently, but ordering stays deterministic: which search finishes first never
    changes the result."""
    write(sx, *(note(f"budget {i}") for i in range(4)), *(vec(f"budget {i}") for i in range(4)))
    body = {
        "q": "budget",
        "sources": [
            {"name": "a", "mode": "text", "scope": NOTES},
            {"name": "b", "mode": "vector", "scope": VECS},
            {"name": "c", "mode": "recent", "scope": NOTES, "weight": 0.5},
        ],
        "fuse": {"kind": "rrf"},
        "include": ["text"],
    }
    expected = search(sx, body)
    for limit in (1, 2, 3):
        assert (
            search(sx_with(search_max_concurrency=limit, touch_on_read=False), body)["hits"]
            == expected["hits"]
        )


def test_one_search_at_a_time_gives_the_same_answer(sx: Client, sx_with: ClientFactory) -> None:
    """ "Searches run concurrently, but ordering stays deterministic: which search finishes first
    never changes the result" (SEARCH_MAX_CONCURRENCY: "How many searches within one request run
    at once")."""
    write(sx, *(note(f"n{i}", scores={"importance": i % 4, "urgency": i % 3}) for i in range(9)))
    body = combined(
        ranked_by("a", "importance"), ranked_by("b", "urgency", 1.3), ranked_by("c", "hidden", 0.7)
    )
    together = search(sx, body)
    alone = ok(sx_with(search_max_concurrency=1).post("/search", json=body))
    assert together["hits"] == alone["hits"]
    assert together["backend"] == alone["backend"]
