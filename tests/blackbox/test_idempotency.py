"""Idempotency keys of `POST /records` (design §3): a replay returns the original record as it is
now, another payload under the same key is a 409 that writes nothing, keys are per workspace.
"""

from __future__ import annotations

import time
from typing import Any

import pytest
from sqlalchemy.engine import Engine

from memseek.runtime import Runtime
from tests.blackbox.design_support import VECTOR
from tests.blackbox.design_support import count_records
from tests.blackbox.design_support import current_flags
from tests.blackbox.design_support import fact
from tests.blackbox.design_support import one_id
from tests.blackbox.design_support import process
from tests.blackbox.design_support import rec
from tests.blackbox.design_support import recent
from tests.blackbox.design_support import retract
from tests.conftest import Client
from tests.conftest import Tenant
from tests.helpers import error
from tests.helpers import fetch
from tests.helpers import ok
from tests.helpers import post_records
from tests.helpers import with_models
from tests.helpers import written

# --- replays --------------------------------------------------------------------------------------


def test_a_repeated_idempotency_key_returns_the_original_record(
    bw: Client, bw_db: Engine, bw_ws: Tenant
) -> None:
    body = rec(text="once", idempotency_key="import-42")
    (first,) = written(bw, body)
    (again,) = written(bw, body)
    assert again == first
    assert count_records(bw_db, bw_ws) == 1


def test_an_idempotency_key_with_a_different_payload_is_409_and_writes_nothing(
    bw: Client, bw_db: Engine, bw_ws: Tenant
) -> None:
    written(bw, rec(text="once", idempotency_key="import-43"))
    response = post_records(bw, rec(text="fresh"), rec(text="changed", idempotency_key="import-43"))
    error(response, 409, "conflict")
    assert count_records(bw_db, bw_ws) == 1


def test_idempotency_keys_are_per_workspace(bw: Client, bw_other: Client) -> None:
    (mine,) = written(bw, rec(idempotency_key="shared-key"))
    (theirs,) = written(bw_other, rec(idempotency_key="shared-key"))
    assert mine["id"] != theirs["id"]
    (theirs_changed,) = written(bw_other, rec(idempotency_key="mine-only", text="other text"))
    assert theirs_changed["id"] != mine["id"]


def test_a_replay_inside_a_mixed_request_writes_only_the_new_records(
    bw: Client, bw_db: Engine, bw_ws: Tenant
) -> None:
    (first,) = written(bw, rec(text="old", idempotency_key="k-1"))
    replay, new = written(bw, rec(text="old", idempotency_key="k-1"), rec(text="new", idempotency_key="k-2"))
    assert replay["id"] == first["id"] and new["id"] != first["id"]
    assert count_records(bw_db, bw_ws) == 2


def test_a_repeated_idempotency_key_returns_the_original(bw: Client, bw_db: Engine, bw_ws: Tenant) -> None:
    """§3: "a repeated `idempotency_key` in the same workspace returns the original record instead
    of writing again"."""
    record = rec(text="once", idempotency_key="abc")
    first = written(bw, record)
    again = written(bw, record)
    assert again[0]["id"] == first[0]["id"]
    assert count_records(bw_db, bw_ws) == 1


def test_a_replay_inside_a_larger_batch_writes_only_the_new_ones(
    bw: Client, bw_db: Engine, bw_ws: Tenant
) -> None:
    """§3 idempotency: the original record is returned, in input order, next to new ones."""
    original = one_id(bw, rec(text="once", idempotency_key="abc"))
    results = written(bw, rec(text="new"), rec(text="once", idempotency_key="abc"))
    assert results[1]["id"] == original
    assert results[0]["id"] != original
    assert count_records(bw_db, bw_ws) == 2


@pytest.mark.parametrize(
    "change",
    [
        pytest.param({"text": "different"}, id="text"),
        pytest.param({"entity": "other"}, id="entity"),
        pytest.param({"content": {"x": 1}}, id="content"),
        pytest.param({"scores": {"importance": 3}}, id="scores"),
        pytest.param({"status": "draft"}, id="status"),
    ],
)
def test_the_same_key_with_a_different_payload_is_409(
    bw: Client, bw_db: Engine, bw_ws: Tenant, change: dict[str, Any]
) -> None:
    """§3: "the same key with a different payload → `409`"."""
    record = rec(text="once", idempotency_key="abc")
    written(bw, record)
    error(post_records(bw, {**record, **change}), 409)
    assert count_records(bw_db, bw_ws) == 1


def test_a_409_in_a_batch_writes_nothing(bw: Client, bw_db: Engine, bw_ws: Tenant) -> None:
    """§3: "written atomically" — a conflicting record stops the whole batch."""
    written(bw, rec(text="once", idempotency_key="abc"))
    error(post_records(bw, rec(text="new"), rec(text="changed", idempotency_key="abc")), 409)
    assert count_records(bw_db, bw_ws) == 1


def test_a_replayed_fact_does_not_supersede_a_newer_value(bw: Client) -> None:
    """§3: a replay "returns the original record instead of writing again" — it is no new write,
    so the slot's newer value stays current."""
    first = one_id(bw, fact("v1", idempotency_key="f1"))
    second = one_id(bw, fact("v2"))
    (replayed,) = written(bw, fact("v1", idempotency_key="f1"))
    assert replayed["id"] == first
    assert replayed["current"] is False
    assert current_flags(bw, first, second) == [False, True]


def test_a_replay_of_a_retracted_original_returns_it_unchanged(
    bw: Client, bw_db: Engine, bw_ws: Tenant
) -> None:
    """§3: "a repeated `idempotency_key` ... returns the original record instead of writing again"
    — even after the original was retracted (it is not current)."""
    record = rec(text="once", idempotency_key="gone")
    original = one_id(bw, record)
    ok(retract(bw, original))
    (replayed,) = written(bw, record)
    assert replayed["id"] == original and replayed["current"] is False
    assert count_records(bw_db, bw_ws) == 1


def test_a_replay_that_spells_out_the_defaults_is_the_same_payload(
    bw: Client, bw_db: Engine, bw_ws: Tenant
) -> None:
    """§3: "the same key with a different payload → `409`" — the same values spelled out (status
    `active`, empty scores/annotations/derived_from, another key order) are the same payload."""
    first = one_id(bw, rec(text="x", content={"p": 1, "q": 2}, idempotency_key="same"))
    spelled = rec(
        text="x",
        content={"q": 2, "p": 1},
        idempotency_key="same",
        status="active",
        scores={},
        annotations={},
        derived_from=[],
    )
    assert one_id(bw, spelled) == first
    assert count_records(bw_db, bw_ws) == 1


def test_the_same_instant_in_another_offset_is_the_same_payload(
    bw: Client, bw_db: Engine, bw_ws: Tenant
) -> None:
    """§3: "the same key with a different payload → `409`" — `occurred_at` is an instant (stored
    without its offset), so a retry that spells it in UTC writes the same record: a replay."""
    first = one_id(bw, rec(occurred_at="2026-05-01T14:00:00+02:00", idempotency_key="instant"))
    again = one_id(bw, rec(occurred_at="2026-05-01T12:00:00Z", idempotency_key="instant"))
    assert again == first
    assert count_records(bw_db, bw_ws) == 1
    error(post_records(bw, rec(occurred_at="2026-05-01T14:00:00Z", idempotency_key="instant")), 409)


DEFAULT_MODEL = "all-MiniLM-L6-v2"
"""The `model:` of the `bw` catalog's `default` alias (conf/models.yaml)."""


def test_a_replay_with_another_embedding_is_a_conflict(bw: Client, bw_db: Any, bw_ws: Tenant) -> None:
    """Design §3: "the same key with a different payload → `409`" — the vector is part of the
    payload."""
    first = rec("bw_vec", embedding=VECTOR, embedding_model=DEFAULT_MODEL, idempotency_key="vec-1")
    written(bw, first)
    other = {**first, "embedding": [0.06] * 384}
    error(post_records(bw, other), 409)
    assert count_records(bw_db, bw_ws) == 1


# --- one key inside one request -------------------------------------------------------------------


def test_one_key_twice_in_one_batch_writes_one_record(bw: Client, bw_db: Engine, bw_ws: Tenant) -> None:
    """§3: "a repeated `idempotency_key` in the same workspace returns the original record instead
    of writing again" — also when the repeat is in the same request."""
    record = rec(text="once", idempotency_key="dup")
    response = post_records(bw, record, record)
    if response.status_code == 201:
        first, second = response.get_json()["records"]
        assert first["id"] == second["id"]
        assert count_records(bw_db, bw_ws) == 1
    else:
        error(response, response.status_code)
        assert response.status_code in (409, 422)
        assert count_records(bw_db, bw_ws) == 0


def test_one_key_with_two_payloads_in_one_batch_is_refused(bw: Client, bw_db: Engine, bw_ws: Tenant) -> None:
    """§3: "the same key with a different payload → `409`"."""
    response = post_records(bw, rec(text="a", idempotency_key="dup"), rec(text="b", idempotency_key="dup"))
    assert response.status_code in (409, 422), response.get_data(as_text=True)
    error(response, response.status_code)
    assert count_records(bw_db, bw_ws) == 0


def test_a_key_repeated_inside_one_request_names_one_record(bw: Client, bw_db: Engine, bw_ws: Tenant) -> None:
    """§3: "a repeated `idempotency_key` in the same workspace returns the original record instead
    of writing again" — within one batch too; results stay "in input order"."""
    first, again, other = written(
        bw, rec(text="once", idempotency_key="b-1"), rec(text="once", idempotency_key="b-1"), rec(text="x")
    )
    assert again == first and other["id"] != first["id"]
    assert count_records(bw_db, bw_ws) == 2


def test_a_key_repeated_inside_one_request_with_another_payload_is_409(
    bw: Client, bw_db: Engine, bw_ws: Tenant
) -> None:
    """§3: "the same key with a different payload → `409`"; the batch is "written atomically"."""
    response = post_records(
        bw, rec(text="one", idempotency_key="b-2"), rec(text="two", idempotency_key="b-2")
    )
    err = error(response, 409, "conflict")
    assert [d["loc"][:2] for d in err["details"]] == [["records", 1]]
    assert count_records(bw_db, bw_ws) == 0


def test_member_order_in_content_is_not_a_different_payload(bw: Client, bw_db: Engine, bw_ws: Tenant) -> None:
    """§1: `content` is "preserved byte-for-byte in meaning"; JSON object member order carries no
    meaning, so the same record sent with its members reordered is a replay, not a `409`."""
    (first,) = written(bw, rec(content={"x": 1, "y": {"p": 1, "q": 2}}, idempotency_key="b-3"))
    (again,) = written(bw, rec(content={"y": {"q": 2, "p": 1}, "x": 1}, idempotency_key="b-3"))
    assert again["id"] == first["id"]
    assert count_records(bw_db, bw_ws) == 1


def test_a_replay_returns_the_original_record_as_it_is_now(bw: Client, bw_db: Engine, bw_ws: Tenant) -> None:
    """§3: a replay "returns the original record instead of writing again" — even after a newer
    value superseded it, and after it was retracted; nothing new is written."""
    (original,) = written(bw, fact("plan A", idempotency_key="b-4"))
    written(bw, fact("plan B"))
    (replay,) = written(bw, fact("plan A", idempotency_key="b-4"))
    assert (replay["id"], replay["current"]) == (original["id"], False)
    assert retract(bw, original["id"]).status_code == 200
    (replay,) = written(bw, fact("plan A", idempotency_key="b-4"))
    assert (replay["id"], replay["current"]) == (original["id"], False)
    assert count_records(bw_db, bw_ws) == 2
    assert [h["text"] for h in recent(bw, "bw_facts")] == ["plan B"]


def test_a_key_used_in_another_workspace_is_no_conflict(bw: Client, bw_other: Client) -> None:
    """§1: "Nothing ever crosses a workspace boundary: not in … errors"; idempotency is "in the
    same workspace"."""
    (mine,) = written(bw, rec(text="mine", idempotency_key="b-5"))
    (theirs,) = written(bw_other, rec(text="theirs, different", idempotency_key="b-5"))
    assert theirs["id"] != mine["id"]
    assert fetch(bw_other, theirs["id"])["text"] == "theirs, different"
    error(bw.get(f"/records/{theirs['id']}"), 404, "not_found")


def test_a_replay_with_wait_reports_the_failed_state_at_once(bw: Client, bw_runtime: Runtime) -> None:
    """§3: `?wait=true` "returns once those records are processed or the timeout passes, with
    their states"; §1 processing state is `pending`, `ready` or `failed` — a failed record is
    processed, so the wait ends at once and reports `failed`."""
    body = rec("bw_remote", text="needs the remote model", idempotency_key="b-6")
    (first,) = written(bw, body)
    process(with_models(bw_runtime, {}), max_attempts=1)
    assert fetch(bw, first["id"])["processing"] == "failed"
    started = time.monotonic()
    (replay,) = written(bw, body, query="?wait=true&timeout=30")
    assert (replay["id"], replay["processing"]) == (first["id"], "failed")
    assert time.monotonic() - started < 10


def test_a_replay_reports_the_processing_state_reached_since(bw: Client, bw_runtime: Runtime) -> None:
    """§3: a replay "returns the original record" — its `{id, processing, current}` as they are now,
    not as they were when it was first written."""
    body = rec("bw_vec", text="embed me once", idempotency_key="b-7")
    (first,) = written(bw, body)
    assert first["processing"] == "pending"
    process(bw_runtime)
    (replay,) = written(bw, body)
    assert replay == {**first, "processing": "ready"}
