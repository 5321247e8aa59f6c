"""Keyed facts (design §1 "Keyed facts"): a slot is (collection, entity, key, status) and the
newest value written into it is current; a newer value still processing (or failed) hides the
older one; retraction restores the newest earlier value; events are always current.
"""

from __future__ import annotations

from typing import Any

import pytest

from memseek.models.local import MODEL_ID
from memseek.runtime import Runtime
from tests.blackbox.design_support import VECTOR
from tests.blackbox.design_support import current_flags
from tests.blackbox.design_support import fact
from tests.blackbox.design_support import one_id
from tests.blackbox.design_support import process
from tests.blackbox.design_support import rec
from tests.blackbox.design_support import recent
from tests.blackbox.design_support import retract
from tests.blackbox.support import ids
from tests.blackbox.support import search
from tests.blackbox.support import vec
from tests.conftest import Client
from tests.helpers import fetch
from tests.helpers import ok
from tests.helpers import with_models
from tests.helpers import written
from tests.helpers import written_ids
from tests.openai_server import OpenAIServer

# --- which value is current -----------------------------------------------------------------------


def test_the_newest_write_into_a_slot_is_current(bw: Client) -> None:
    (old,) = written_ids(bw, fact("plan A"))
    (new,) = written_ids(bw, fact("plan B"))
    assert current_flags(bw, old, new) == [False, True]
    assert [h["text"] for h in recent(bw, "bw_facts")] == ["plan B"]
    history = recent(bw, "bw_facts", versions="all")
    assert sorted(h["text"] for h in history) == ["plan A", "plan B"]


def test_inside_one_request_the_later_record_wins(bw: Client) -> None:
    first, second = written(bw, fact("one"), fact("two"))
    assert (first["current"], second["current"]) == (False, True)
    assert current_flags(bw, first["id"], second["id"]) == [False, True]


@pytest.mark.parametrize(
    "other",
    [
        pytest.param({"key": "other"}, id="other-key"),
        pytest.param({"entity": "cust-2"}, id="other-entity"),
        pytest.param({"status": "draft"}, id="other-status"),
    ],
)
def test_a_slot_is_collection_entity_key_and_status(bw: Client, other: dict[str, Any]) -> None:
    (a,) = written_ids(bw, fact("a"))
    (b,) = written_ids(bw, fact("b", **other))
    assert current_flags(bw, a, b) == [True, True]


def test_the_same_key_in_another_collection_is_another_slot(bw: Client) -> None:
    (a,) = written_ids(bw, fact("a"))
    (b,) = written_ids(bw, rec("bw_plain", key="plan"))
    assert current_flags(bw, a, b) == [True, True]


def test_events_are_always_current(bw: Client) -> None:
    event_ids = written_ids(bw, rec("bw_events", text="1"), rec("bw_events", text="2"))
    event_ids += written_ids(bw, rec("bw_events", text="3"))
    assert current_flags(bw, *event_ids) == [True, True, True]


def test_a_newer_value_still_processing_hides_the_older_one(bw: Client, bw_runtime: Runtime) -> None:
    """Spec "Scopes": which record is current is decided before readiness — no stale fallback."""
    (old,) = written_ids(
        bw, rec("bw_vec", key="tier", text="tier gold", embedding=VECTOR, embedding_model=MODEL_ID)
    )
    (new,) = written(bw, rec("bw_vec", key="tier", text="tier platinum"))
    assert new["processing"] == "pending" and new["current"] is True
    assert current_flags(bw, old, new["id"]) == [False, True]
    assert recent(bw, "bw_vec") == []  # neither the pending new value nor the stale old one
    process(bw_runtime)
    assert [h["text"] for h in recent(bw, "bw_vec")] == ["tier platinum"]


def test_of_three_values_written_into_a_slot_the_last_is_current(bw: Client) -> None:
    """§1: "The newest record written into a slot is its *current* value; earlier ones are
    superseded"."""
    a, b, c = (one_id(bw, fact(t)) for t in ("v1", "v2", "v3"))
    assert current_flags(bw, a, b, c) == [False, False, True]


def test_in_one_batch_the_last_into_a_slot_is_current(bw: Client) -> None:
    """§1: "Concurrent writers to one slot must end with exactly one current record"; write order
    within a batch is input order."""
    results = written(bw, fact("v1"), fact("v2"))
    assert current_flags(bw, *(r["id"] for r in results)) == [False, True]
    assert [r["current"] for r in results] == [False, True]


@pytest.mark.parametrize(
    "other",
    [
        pytest.param({"entity": "cust-2"}, id="entity"),
        pytest.param({"key": "other"}, id="key"),
        pytest.param({"status": "draft"}, id="status"),
    ],
)
def test_another_entity_key_or_status_is_another_slot(bw: Client, other: dict[str, Any]) -> None:
    """§1: "A slot is `(workspace, collection, entity, key, status)`." """
    a = one_id(bw, fact("v1"))
    b = one_id(bw, fact("v2", **other))
    assert current_flags(bw, a, b) == [True, True]


def test_keyed_records_in_two_collections_are_two_slots(bw: Client) -> None:
    """§1: the slot includes the collection."""
    a = one_id(bw, fact("v1"))
    b = one_id(bw, rec(key="plan", type="fact"))
    assert current_flags(bw, a, b) == [True, True]


def test_records_without_a_key_are_always_current(bw: Client) -> None:
    """§1: "Events (`key: null`) are always current." """
    ids = written_ids(bw, rec(), rec(), rec("bw_events"), rec("bw_events"))
    assert current_flags(bw, *ids) == [True] * 4


def test_a_newer_value_still_processing_hides_the_older(bw: Client, bw_runtime: Runtime) -> None:
    """§1: ""Newest" is decided by write order, never by processing state — a newer value still
    being processed hides the older one (spec: no stale fallback)."""
    old = one_id(
        bw, rec("bw_vec", type="fact", key="k", text="old", embedding=VECTOR, embedding_model=MODEL_ID)
    )
    new = one_id(bw, rec("bw_vec", type="fact", key="k", text="new"))
    assert fetch(bw, new)["processing"] == "pending"
    assert current_flags(bw, old, new) == [False, True]
    assert recent(bw, "bw_vec") == []
    process(bw_runtime)
    assert [h["text"] for h in recent(bw, "bw_vec")] == ["new"]


def test_retracting_the_current_value_restores_the_newest_earlier_one(bw: Client) -> None:
    """§1: "Retracting the current value makes the newest non-retracted earlier value current
    again." """
    a, b, c = (one_id(bw, fact(t)) for t in ("v1", "v2", "v3"))
    ok(retract(bw, b))
    assert current_flags(bw, a, b, c) == [False, False, True]
    ok(retract(bw, c))
    assert current_flags(bw, a, b, c) == [True, False, False]
    assert [h["text"] for h in recent(bw, "bw_facts")] == ["v1"]
    ok(retract(bw, a))
    assert current_flags(bw, a, b, c) == [False, False, False]
    assert recent(bw, "bw_facts") == []


def test_a_write_after_retraction_becomes_current(bw: Client) -> None:
    """§1: the newest record written into a slot is current."""
    a = one_id(bw, fact("v1"))
    ok(retract(bw, a))
    b = one_id(bw, fact("v2"))
    assert current_flags(bw, a, b) == [False, True]


def test_retracting_every_value_of_a_slot_leaves_none_and_a_new_write_is_current(bw: Client) -> None:
    """§1: "Retracting the current value makes the newest non-retracted earlier value current
    again"; with none left the slot is empty until the next write, which is current."""
    a, b = (written_ids(bw, fact(text))[0] for text in ("a", "b"))
    assert retract(bw, b).status_code == 200 and retract(bw, a).status_code == 200
    assert current_flags(bw, a, b) == [False, False]
    assert recent(bw, "bw_facts") == []
    (c,) = written(bw, fact("c"))
    assert c["current"] is True
    assert current_flags(bw, a, b, c["id"]) == [False, False, True]
    assert [h["text"] for h in recent(bw, "bw_facts")] == ["c"]


def test_retracting_a_newer_value_still_processing_restores_the_older_one(
    bw: Client, bw_runtime: Runtime
) -> None:
    """§1: "a newer value still being processed hides the older one"; "Retracting the current
    value makes the newest non-retracted earlier value current again"."""
    (old,) = written_ids(
        bw, rec("bw_vec", key="tier", text="tier gold", embedding=VECTOR, embedding_model=MODEL_ID)
    )
    (new,) = written_ids(bw, rec("bw_vec", key="tier", text="tier platinum"))
    assert recent(bw, "bw_vec") == []
    assert retract(bw, new).status_code == 200
    assert current_flags(bw, old, new) == [True, False]
    assert [h["text"] for h in recent(bw, "bw_vec")] == ["tier gold"]
    process(bw_runtime)
    assert [h["text"] for h in recent(bw, "bw_vec")] == ["tier gold"]


# --- processing never changes which value is current ----------------------------------------------


def test_a_newer_value_that_failed_still_hides_the_older(bw: Client, bw_runtime: Runtime) -> None:
    """§1: ""Newest" is decided by write order, never by processing state"; failed records are
    "never in search"."""
    supplied = {"scores": {"importance": 3}, "annotations": {"sentiment": {"label": "neutral"}}}
    old = one_id(bw, rec("bw_enriched", type="fact", key="k", text="old", **supplied))
    new = one_id(bw, rec("bw_enriched", type="fact", key="k", text="new"))
    process(bw_runtime, max_attempts=1)
    assert fetch(bw, new)["processing"] == "failed"
    assert current_flags(bw, old, new) == [False, True]
    assert recent(bw, "bw_enriched") == []


DEFAULT_MODEL = "all-MiniLM-L6-v2"
"""The `model:` of the `bw` catalog's `default` alias (conf/models.yaml)."""


def test_a_newer_value_that_fails_still_hides_the_older_one(bw: Client, bw_runtime: Runtime) -> None:
    """Design §1 Records: "'Newest' is decided by write order, never by processing state"; spec:
    "If a newer value exists but is still being processed, versions: current does not fall back to
    the older one"; a `failed` record is "never in search"."""
    older = rec(
        "customer_events", key="tier", text="gold tier", embedding=VECTOR, embedding_model=DEFAULT_MODEL
    )
    older["scores"], older["annotations"] = {"importance": 5}, {"sentiment": {"label": "neutral"}}
    (old_id,) = written_ids(bw, older)
    (new_id,) = written_ids(bw, rec("customer_events", key="tier", text="platinum tier"))
    process(with_models(bw_runtime, {}), max_attempts=1)  # `cheap` is unconfigured: the enrichments fail
    assert [fetch(bw, i)["processing"] for i in (old_id, new_id)] == ["ready", "failed"]
    assert [fetch(bw, i)["current"] for i in (old_id, new_id)] == [False, True]
    body = {"mode": "recent", "scope": {"collections": ["customer_events"]}}
    assert ids(search(bw, body)) == []
    assert ids(search(bw, {**body, "scope": {**body["scope"], "versions": "all"}})) == [old_id]


def test_processing_a_retracted_record_keeps_it_retracted(
    sx: Client, sx_runtime: Runtime, server: OpenAIServer
) -> None:
    """Design §1 Records: "a retracted record is never returned by any read" — finishing its
    processing afterwards changes nothing."""
    unembedded = {k: v for k, v in vec("retracted while pending").items() if not k.startswith("embedding")}
    (record,) = written(sx, unembedded)
    assert record["processing"] == "pending"
    assert sx.post(f"/records/{record['id']}/retract", json={"reason": "wrong"}).status_code == 200
    process(sx_runtime)
    fetched = fetch(sx, record["id"])
    assert fetched["retracted_at"] is not None and fetched["retraction_reason"] == "wrong"
    body = {"q": "retracted while pending", "mode": "hybrid", "scope": {"collections": ["sx_vec"]}}
    assert ids(search(sx, body)) == []
    assert ids(search(sx, {"mode": "recent", "scope": {"collections": ["sx_vec"]}})) == []
