"""The record actions (design §1 "Drafts", §3): retract, approve and reject, each once, each
answering with the whole record; drafts have a lane of their own and approval moves a draft into
the active lane.
"""

from __future__ import annotations

from typing import Any

import pytest

from memseek.models.local import MODEL_ID
from memseek.runtime import Runtime
from tests.blackbox.design_support import RECORD_FIELDS
from tests.blackbox.design_support import VECTOR
from tests.blackbox.design_support import current_flags
from tests.blackbox.design_support import fact
from tests.blackbox.design_support import one_id
from tests.blackbox.design_support import process
from tests.blackbox.design_support import rec
from tests.blackbox.design_support import recent
from tests.blackbox.design_support import retract
from tests.blackbox.support import invalid
from tests.conftest import Client
from tests.helpers import error
from tests.helpers import fetch
from tests.helpers import ok
from tests.helpers import written
from tests.helpers import written_ids

# --- retract --------------------------------------------------------------------------------------


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


# --- drafts: approve and reject -------------------------------------------------------------------


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


def test_retract_answers_the_whole_record_and_hides_it_from_search(bw: Client) -> None:
    """§3: "`POST /records/{id}/retract` `{"reason": "..."}`"; §1: "a retracted record is never
    returned by any read"."""
    record_id = one_id(bw, rec(text="to hide"))
    body = ok(retract(bw, record_id, reason="typo"))
    assert set(body) == RECORD_FIELDS
    assert body["retraction_reason"] == "typo"
    assert body["retracted_at"] is not None
    assert body["current"] is False
    assert recent(bw, "bw_plain") == []


@pytest.mark.parametrize(
    "body",
    [
        pytest.param(None, id="no-body"),
        pytest.param({}, id="no-reason"),
        pytest.param({"reason": 5}, id="reason-number"),
        pytest.param({"reason": "x", "extra": 1}, id="unknown-key"),
    ],
)
@pytest.mark.parametrize("action", ["retract", "reject"])
def test_retract_and_reject_need_a_reason(bw: Client, body: Any, action: str) -> None:
    """§3: "`POST /records/{id}/retract` `{"reason": "..."}`; ... `POST /records/{id}/reject`
    `{"reason": "..."}`"."""
    record_id = one_id(bw, rec(status="draft"))
    error(bw.post(f"/records/{record_id}/{action}", json=body), 422)
    assert fetch(bw, record_id)["retracted_at"] is None


def test_approve_moves_a_draft_into_the_active_lane(bw: Client) -> None:
    """§1: "`POST /records/{id}/approve` moves a draft into the active lane, where it becomes the
    current active value of its slot." """
    live = one_id(bw, fact("live"))
    draft = one_id(bw, fact("proposal", status="draft"))
    assert current_flags(bw, live, draft) == [True, True]
    body = ok(bw.post(f"/records/{draft}/approve"))
    assert set(body) == RECORD_FIELDS
    assert body["status"] == "active" and body["current"] is True
    assert current_flags(bw, live, draft) == [False, True]
    assert [h["text"] for h in recent(bw, "bw_facts")] == ["proposal"]


def test_approving_an_older_draft_still_makes_it_the_current_active_value(bw: Client) -> None:
    """§1: an approved draft "becomes the current active value of its slot", even when the active
    value was written after the draft."""
    draft = one_id(bw, fact("proposal", status="draft"))
    live = one_id(bw, fact("live"))
    ok(bw.post(f"/records/{draft}/approve"))
    assert current_flags(bw, live, draft) == [False, True]


def test_retracting_an_approved_draft_restores_the_previous_active_value(bw: Client) -> None:
    """§1: "Retracting the current value makes the newest non-retracted earlier value current
    again." """
    live = one_id(bw, fact("live"))
    draft = one_id(bw, fact("proposal", status="draft"))
    ok(bw.post(f"/records/{draft}/approve"))
    ok(retract(bw, draft))
    assert current_flags(bw, live, draft) == [True, False]


def test_drafts_have_their_own_current_value(bw: Client) -> None:
    """§1 slot includes status: the newest draft is the current draft; rejecting it restores the
    earlier draft; the active lane is untouched."""
    live = one_id(bw, fact("live"))
    d1 = one_id(bw, fact("d1", status="draft"))
    d2 = one_id(bw, fact("d2", status="draft"))
    assert current_flags(bw, live, d1, d2) == [True, False, True]
    body = ok(bw.post(f"/records/{d2}/reject", json={"reason": "no"}))
    assert body["retraction_reason"] == "no" and body["retracted_at"] is not None
    assert current_flags(bw, live, d1, d2) == [True, True, False]


def test_approving_the_current_draft_restores_the_earlier_draft(bw: Client) -> None:
    """§1: the approved draft leaves the draft lane; the newest remaining draft becomes current
    there."""
    d1 = one_id(bw, fact("d1", status="draft"))
    d2 = one_id(bw, fact("d2", status="draft"))
    ok(bw.post(f"/records/{d2}/approve"))
    assert current_flags(bw, d1, d2) == [True, True]
    assert fetch(bw, d1)["status"] == "draft"


@pytest.mark.parametrize("action", ["approve", "reject"])
def test_approve_and_reject_apply_to_drafts_only(bw: Client, action: str) -> None:
    """§1: approve "moves a draft"; reject "retracts a draft"."""
    active = one_id(bw, rec())
    response = bw.post(f"/records/{active}/{action}", json={"reason": "x"} if action == "reject" else None)
    assert response.status_code in (409, 422), response.get_data(as_text=True)
    error(response, response.status_code)
    stored = fetch(bw, active)
    assert stored["status"] == "active" and stored["retracted_at"] is None


@pytest.mark.parametrize("action", ["approve", "reject", "retract"])
def test_actions_on_a_retracted_record_are_refused(bw: Client, action: str) -> None:
    """§1: a retracted record is gone from every read; it cannot be approved, rejected or retracted
    again."""
    draft = one_id(bw, rec(status="draft"))
    ok(retract(bw, draft, reason="first"))
    response = bw.post(f"/records/{draft}/{action}", json=None if action == "approve" else {"reason": "x"})
    assert response.status_code in (404, 409, 422), response.get_data(as_text=True)
    stored = fetch(bw, draft)
    assert stored["retraction_reason"] == "first" and stored["status"] == "draft"


def test_an_approved_event_draft_stays_current(bw: Client) -> None:
    """§1: "Events (`key: null`) are always current"; an approved draft event is active."""
    draft = one_id(bw, rec(status="draft"))
    body = ok(bw.post(f"/records/{draft}/approve"))
    assert body["status"] == "active" and body["current"] is True


def test_retracting_an_approved_draft_restores_the_value_written_after_it(bw: Client) -> None:
    """§1: approve "moves a draft into the active lane, where it becomes the current active value";
    retracting it "makes the newest non-retracted earlier value current again" — earlier in the
    lane, so the active value written after the draft but before its approval."""
    old = one_id(bw, fact("old"))
    draft = one_id(bw, fact("proposal", status="draft"))
    live = one_id(bw, fact("live"))
    ok(bw.post(f"/records/{draft}/approve"))
    assert current_flags(bw, old, live, draft) == [False, False, True]
    ok(retract(bw, draft))
    assert current_flags(bw, old, live, draft) == [False, True, False]


def test_get_shows_a_retracted_record_with_its_retraction(bw: Client) -> None:
    """§3: `GET /records/{id}` carries "`retracted_at` and `retraction_reason`" — the one read
    that still answers a retracted record (search never does)."""
    record_id = one_id(bw, rec())
    ok(retract(bw, record_id, reason="duplicate"))
    stored = fetch(bw, record_id)
    assert stored["retraction_reason"] == "duplicate" and stored["retracted_at"] is not None
    assert stored["current"] is False


def test_reject_answers_with_the_whole_record(bw: Client) -> None:
    """§3 `GET /records/{id}` lists the whole record; reject answers with the same shape as
    retract and approve do."""
    (draft,) = written_ids(bw, fact("proposal", status="draft"))
    body = ok(bw.post(f"/records/{draft}/reject", json={"reason": "no"}))
    assert set(body) == RECORD_FIELDS
    assert body == fetch(bw, draft)


def test_retracting_an_approved_value_restores_the_previous_active_one(bw: Client) -> None:
    """§1 Drafts: approval makes the draft "the current active value of its slot"; Keyed facts:
    retracting the current value makes the newest non-retracted earlier value current again."""
    (live,) = written_ids(bw, fact("v1"))
    (draft,) = written_ids(bw, fact("v2 proposed", status="draft"))
    assert bw.post(f"/records/{draft}/approve").status_code == 200
    assert retract(bw, draft).status_code == 200
    assert current_flags(bw, live, draft) == [True, False]
    assert [h["text"] for h in recent(bw, "bw_facts")] == ["v1"]


def test_an_approved_draft_still_processing_hides_the_old_value_until_ready(
    bw: Client, bw_runtime: Runtime
) -> None:
    """§1: approval makes the draft "the current active value of its slot"; "only `ready` records
    are searchable" and a newer value still being processed hides the older one (no stale
    fallback)."""
    (live,) = written_ids(
        bw, rec("bw_vec", key="tier", text="tier gold", embedding=VECTOR, embedding_model=MODEL_ID)
    )
    (draft,) = written(bw, rec("bw_vec", key="tier", text="tier platinum", status="draft"))
    assert draft["processing"] == "pending"
    approved = ok(bw.post(f"/records/{draft['id']}/approve"))
    assert (approved["status"], approved["current"], approved["processing"]) == ("active", True, "pending")
    assert current_flags(bw, live) == [False]
    assert recent(bw, "bw_vec") == []
    process(bw_runtime)
    assert [h["text"] for h in recent(bw, "bw_vec")] == ["tier platinum"]


# --- once each ------------------------------------------------------------------------------------


def test_a_second_reject_is_a_conflict(bw: Client) -> None:
    (draft,) = written_ids(bw, fact("proposal", status="draft"))
    assert bw.post(f"/records/{draft}/reject", json={"reason": "no"}).status_code == 200
    error(bw.post(f"/records/{draft}/reject", json={"reason": "no"}), 409, "conflict")
    error(bw.post(f"/records/{draft}/retract", json={"reason": "no"}), 409, "conflict")
    assert fetch(bw, draft)["retraction_reason"] == "no"


def test_an_approved_record_is_no_longer_a_draft(bw: Client) -> None:
    (draft,) = written_ids(bw, fact("proposal", status="draft"))
    assert bw.post(f"/records/{draft}/approve").status_code == 200
    error(bw.post(f"/records/{draft}/reject", json={"reason": "late"}), 409, "conflict")
    error(bw.post(f"/records/{draft}/approve"), 409, "conflict")
    record = fetch(bw, draft)
    assert (record["status"], record["current"], record["retracted_at"]) == ("active", True, None)


def test_retracting_the_current_draft_restores_the_earlier_draft(bw: Client) -> None:
    first, second = (written_ids(bw, fact(text, status="draft"))[0] for text in ("d1", "d2"))
    response = bw.post(f"/records/{second}/retract", json={"reason": "withdrawn"})
    assert response.status_code == 200
    assert response.get_json()["retraction_reason"] == "withdrawn"
    assert [fetch(bw, i)["current"] for i in (first, second)] == [True, False]
    assert [h["text"] for h in recent(bw, "bw_facts", status="draft")] == ["d1"]


def test_rejecting_the_current_draft_restores_the_earlier_draft(bw: Client) -> None:
    # design: reject retracts a draft; retracting the current value restores the newest earlier one
    (live,) = written_ids(bw, fact("live"))
    first, second = (written_ids(bw, fact(text, status="draft"))[0] for text in ("d1", "d2"))
    assert bw.post(f"/records/{second}/reject", json={"reason": "no"}).status_code == 200
    assert [fetch(bw, i)["current"] for i in (live, first, second)] == [True, True, False]
    assert [h["text"] for h in recent(bw, "bw_facts", status="draft")] == ["d1"]
    assert [h["text"] for h in recent(bw, "bw_facts")] == ["live"]


def test_approving_a_superseded_draft_makes_it_the_current_active_value(bw: Client) -> None:
    (live,) = written_ids(bw, fact("live"))
    first, second = (written_ids(bw, fact(text, status="draft"))[0] for text in ("d1", "d2"))
    response = bw.post(f"/records/{first}/approve")
    assert response.status_code == 200
    assert (response.get_json()["status"], response.get_json()["current"]) == ("active", True)
    assert [fetch(bw, i)["current"] for i in (live, first, second)] == [False, True, True]
    assert [h["text"] for h in recent(bw, "bw_facts")] == ["d1"]
    assert [h["text"] for h in recent(bw, "bw_facts", status="draft")] == ["d2"]


@pytest.mark.parametrize("action", ["retract", "reject"])
@pytest.mark.parametrize("reason", [5, None, ["why"], {"text": "why"}])
def test_a_reason_must_be_a_string_at_its_loc(bw: Client, action: str, reason: Any) -> None:
    (draft,) = written_ids(bw, fact("proposal", status="draft"))
    invalid(bw.post(f"/records/{draft}/{action}", json={"reason": reason}), "reason")
    assert fetch(bw, draft)["retracted_at"] is None


@pytest.mark.parametrize("body", [[], "yes", 3])
def test_approve_takes_no_body_but_an_object(bw: Client, body: Any) -> None:
    (draft,) = written_ids(bw, fact("proposal", status="draft"))
    error(bw.post(f"/records/{draft}/approve", json=body), 422, "invalid_request")
    assert fetch(bw, draft)["status"] == "draft"


def test_a_retracted_record_can_still_be_fetched_by_id(bw: Client) -> None:
    # design §3: GET /records/{id} shows retracted_at and retraction_reason
    (event,) = written_ids(bw, rec("bw_events"))
    assert bw.post(f"/records/{event}/retract", json={"reason": "dup"}).status_code == 200
    record = fetch(bw, event)
    assert record["retraction_reason"] == "dup" and record["retracted_at"] is not None


@pytest.mark.parametrize("suffix", ["/retract", "/reject", "/approve"])
def test_record_actions_on_an_unknown_id_are_404(bw: Client, suffix: str) -> None:
    body = {} if suffix == "/approve" else {"reason": "x"}
    error(bw.post(f"/records/0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b{suffix}", json=body), 404, "not_found")
    error(bw.post(f"/records/not-a-uuid{suffix}", json=body), 404, "not_found")


# --- odd action bodies ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("path", "body"),
    [
        pytest.param("/retract", {"reason": "a\x00b"}, id="retract-nul-reason"),
        pytest.param("/reject", {"reason": "a\x00b"}, id="reject-nul-reason"),
        pytest.param("/retract", {"reason": "r" * 100_000}, id="retract-long-reason"),
        pytest.param("/retract", [], id="retract-list-body"),
        pytest.param("/approve", {"unexpected": 1}, id="approve-with-body"),
    ],
)
def test_odd_action_bodies_never_500(bw: Client, path: str, body: Any) -> None:
    """§3 "Error body, every route": a request is answered in the one error shape or succeeds."""
    draft = one_id(bw, rec(status="draft"))
    response = bw.post(f"/records/{draft}{path}", json=body)
    assert response.status_code < 500, response.get_data(as_text=True)
    if response.status_code >= 400:
        error(response, response.status_code)
