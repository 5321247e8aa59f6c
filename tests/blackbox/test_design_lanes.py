"""Design §1 "Keyed facts", "Drafts", "Graph data" and §3 `GET /records/{id}`, retract, approve, reject."""

from __future__ import annotations

import threading
from typing import Any

import pytest
from flask import Flask

from memseek.models.local import MODEL_ID
from memseek.runtime import Runtime
from tests.blackbox.design_support import RECORD_FIELDS
from tests.blackbox.design_support import VECTOR
from tests.blackbox.design_support import current_flags
from tests.blackbox.design_support import fact
from tests.blackbox.design_support import process
from tests.blackbox.design_support import rec
from tests.blackbox.design_support import recent
from tests.blackbox.design_support import retract
from tests.blackbox.design_support import walk
from tests.conftest import Client
from tests.conftest import Tenant
from tests.helpers import error
from tests.helpers import fetch
from tests.helpers import written
from tests.helpers import written_ids

# --- keyed facts: which value is current ----------------------------------------------------------


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


def test_retracting_the_current_value_restores_the_newest_earlier_one(bw: Client) -> None:
    a, b, c = (written_ids(bw, fact(text))[0] for text in ("a", "b", "c"))
    response = retract(bw, c, "typo")
    assert response.status_code == 200
    assert current_flags(bw, a, b, c) == [False, True, False]
    record = fetch(bw, c)
    assert record["retraction_reason"] == "typo" and record["retracted_at"] is not None
    assert [h["text"] for h in recent(bw, "bw_facts")] == ["b"]
    assert retract(bw, b).status_code == 200
    assert current_flags(bw, a, b, c) == [True, False, False]


def test_retracting_a_superseded_value_leaves_the_current_one(bw: Client) -> None:
    a, b = (written_ids(bw, fact(text))[0] for text in ("a", "b"))
    assert retract(bw, a).status_code == 200
    assert current_flags(bw, a, b) == [False, True]


def test_a_retracted_record_is_never_returned_by_a_read(bw: Client) -> None:
    (event,) = written_ids(bw, rec("bw_events", text="forget me"))
    assert retract(bw, event).status_code == 200
    assert recent(bw, "bw_events") == []
    assert recent(bw, "bw_events", versions="all", status="all") == []
    assert fetch(bw, event)["current"] is False


def test_retract_needs_a_reason_and_cannot_repeat(bw: Client) -> None:
    (event,) = written_ids(bw, rec("bw_events"))
    error(bw.post(f"/records/{event}/retract", json={}), 422)
    error(bw.post(f"/records/{event}/retract", json={"reason": "   "}), 422)
    error(bw.post(f"/records/{event}/retract"), 422)
    error(bw.post(f"/records/{event}/retract", json={"reason": "x", "extra": 1}), 422)
    assert fetch(bw, event)["retracted_at"] is None
    assert retract(bw, event).status_code == 200
    error(retract(bw, event), 409, "conflict")


def test_retract_answers_with_the_retracted_record(bw: Client) -> None:
    (event,) = written_ids(bw, rec("bw_events"))
    body = retract(bw, event, "duplicate").get_json()
    assert set(body) == RECORD_FIELDS
    assert body["id"] == event and body["retraction_reason"] == "duplicate"


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


# --- drafts ---------------------------------------------------------------------------------------


def test_approving_a_draft_makes_it_the_current_active_value(bw: Client) -> None:
    (live,) = written_ids(bw, fact("profile v1"))
    (draft,) = written_ids(bw, fact("profile v2 proposed", status="draft"))
    assert current_flags(bw, live, draft) == [True, True]
    assert [h["text"] for h in recent(bw, "bw_facts")] == ["profile v1"]
    assert [h["text"] for h in recent(bw, "bw_facts", status="draft")] == ["profile v2 proposed"]
    response = bw.post(f"/records/{draft}/approve")
    assert response.status_code == 200
    approved = response.get_json()
    assert set(approved) == RECORD_FIELDS
    assert (approved["id"], approved["status"], approved["current"]) == (draft, "active", True)
    assert current_flags(bw, live, draft) == [False, True]
    assert [h["text"] for h in recent(bw, "bw_facts")] == ["profile v2 proposed"]
    assert recent(bw, "bw_facts", status="draft") == []


def test_approve_takes_an_empty_object_and_nothing_else(bw: Client) -> None:
    (draft,) = written_ids(bw, fact("d", status="draft"))
    error(bw.post(f"/records/{draft}/approve", json={"force": True}), 422)
    assert bw.post(f"/records/{draft}/approve", json={}).status_code == 200


def test_after_approval_the_newest_remaining_draft_is_current(bw: Client) -> None:
    first, second = (written_ids(bw, fact(text, status="draft"))[0] for text in ("d1", "d2"))
    assert current_flags(bw, first, second) == [False, True]
    assert bw.post(f"/records/{second}/approve").status_code == 200
    assert current_flags(bw, first, second) == [True, True]
    assert [h["text"] for h in recent(bw, "bw_facts", status="draft")] == ["d1"]


def test_only_live_drafts_can_be_approved(bw: Client) -> None:
    (active,) = written_ids(bw, fact("live"))
    error(bw.post(f"/records/{active}/approve"), 409, "conflict")
    (draft,) = written_ids(bw, fact("d", key="other", status="draft"))
    assert bw.post(f"/records/{draft}/reject", json={"reason": "no"}).status_code == 200
    error(bw.post(f"/records/{draft}/approve"), 409, "conflict")


def test_rejecting_a_draft_retracts_it_with_the_reason(bw: Client) -> None:
    (live,) = written_ids(bw, fact("live"))
    (draft,) = written_ids(bw, fact("proposal", status="draft"))
    response = bw.post(f"/records/{draft}/reject", json={"reason": "not accurate"})
    assert response.status_code == 200
    record = response.get_json()
    assert record["retraction_reason"] == "not accurate" and record["retracted_at"] is not None
    assert record["status"] == "draft" and record["current"] is False
    assert current_flags(bw, live) == [True]
    assert recent(bw, "bw_facts", status="draft") == []


def test_reject_needs_a_reason_and_a_draft(bw: Client) -> None:
    (draft,) = written_ids(bw, fact("proposal", status="draft"))
    error(bw.post(f"/records/{draft}/reject", json={}), 422)
    (active,) = written_ids(bw, fact("live", key="x"))
    error(bw.post(f"/records/{active}/reject", json={"reason": "no"}), 409, "conflict")
    assert fetch(bw, active)["retracted_at"] is None


def test_draft_events_are_proposals_too(bw: Client) -> None:
    (draft,) = written_ids(bw, rec("bw_events", text="maybe happened", status="draft"))
    assert recent(bw, "bw_events") == []
    assert [h["text"] for h in recent(bw, "bw_events", status="draft")] == ["maybe happened"]
    assert bw.post(f"/records/{draft}/approve").status_code == 200
    assert [h["text"] for h in recent(bw, "bw_events")] == ["maybe happened"]


# --- automatic links ------------------------------------------------------------------------------


def test_writing_a_node_writes_one_link_per_value(bw: Client) -> None:
    (node,) = written_ids(
        bw, rec("bw_nodes", key="api", text="the api", content={"depends_on": ["db", "cache"]})
    )
    result = walk(bw, "api")
    assert result["nodes"] == ["api", "cache", "db"]
    links = {(h["subject"], h["predicate"], h["object"]): h for h in result["hits"]}
    assert set(links) == {("api", "depends_on", "db"), ("api", "depends_on", "cache")}
    node_record = fetch(bw, node)
    for hit in links.values():
        link = fetch(bw, hit["id"])
        assert link["collection"] == "bw_edges" and link["key"] is None
        assert link["derived_from"] == [node]
        assert link["depth"] == node_record["depth"] + 1
        assert link["content"]["src"] == "api" and link["content"]["rel"] == "depends_on"
        assert link["content"]["dst"] in ("db", "cache")


def test_a_derived_nodes_links_are_one_deeper(bw: Client) -> None:
    (evidence,) = written_ids(bw, rec(text="evidence"))
    (node,) = written_ids(
        bw, rec("bw_nodes", key="svc", derived_from=[evidence], content={"depends_on": ["x"]})
    )
    (hit,) = walk(bw, "svc")["hits"]
    assert (fetch(bw, node)["depth"], fetch(bw, hit["id"])["depth"]) == (1, 2)


def test_a_nodes_links_are_live_only_while_it_is_current(bw: Client) -> None:
    (v1,) = written_ids(bw, rec("bw_nodes", key="api", content={"depends_on": ["db"]}))
    (v2,) = written_ids(bw, rec("bw_nodes", key="api", content={"depends_on": ["queue"]}))
    assert walk(bw, "api")["nodes"] == ["api", "queue"]
    assert retract(bw, v2).status_code == 200
    assert walk(bw, "api")["nodes"] == ["api", "db"]
    assert current_flags(bw, v1) == [True]


def test_a_link_written_directly_is_live_at_once(bw: Client) -> None:
    written_ids(bw, rec("bw_edges", text="a uses b", content={"src": "a", "dst": "b", "rel": "uses"}))
    result = walk(bw, "a")
    assert result["nodes"] == ["a", "b"]
    assert [(h["subject"], h["object"], h["predicate"]) for h in result["hits"]] == [("a", "b", "uses")]
