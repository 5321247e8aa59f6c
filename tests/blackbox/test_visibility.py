"""What a search may see (spec "Scopes" `status`, `versions`; design §1 "Keyed facts", "Drafts"):
only processed, unretracted records of the caller's workspace; current values unless
`versions: all`; a lane per status; observed through every mode, views, `GET /search` and counts.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from flask import Flask

from memseek.models.local import MODEL_ID
from memseek.runtime import Runtime
from tests.blackbox.conftest import environ
from tests.blackbox.design_support import VECTOR
from tests.blackbox.design_support import labelled
from tests.blackbox.design_support import process
from tests.blackbox.design_support import rec
from tests.blackbox.design_support import retract
from tests.blackbox.support import crowd_records
from tests.blackbox.support import ids
from tests.blackbox.support import item
from tests.blackbox.support import listing
from tests.blackbox.support import note
from tests.blackbox.support import query
from tests.blackbox.support import rejects
from tests.blackbox.support import scope_ids
from tests.blackbox.support import search
from tests.blackbox.support import seen
from tests.blackbox.support import sx_catalog
from tests.blackbox.support import vec
from tests.blackbox.support import write
from tests.conftest import Client
from tests.conftest import Tenant
from tests.helpers import app_for
from tests.helpers import fetch
from tests.helpers import ok
from tests.helpers import runtime_for
from tests.helpers import view_query
from tests.helpers import written
from tests.helpers import written_ids
from tests.openai_server import OpenAIServer

# --- status and versions --------------------------------------------------------------------------


def test_status_active_draft_all(sx: Client) -> None:
    active, draft = write(sx, note("a"), note("d", status="draft"))
    assert listing(sx) == [active]
    assert listing(sx, status="active") == [active]
    assert listing(sx, status="draft") == [draft]
    assert set(listing(sx, status="all")) == {active, draft}
    rejects(sx, {"mode": "recent", "scope": {"status": "live"}}, "scope", "status")


def test_versions_current_hides_superseded_values(sx: Client) -> None:
    (old,) = write(sx, note("risk low", type="fact", key="risk"))
    (new,) = write(sx, note("risk high", type="fact", key="risk"))
    assert listing(sx) == [new]
    assert listing(sx, versions="current") == [new]
    assert set(listing(sx, versions="all")) == {old, new}
    rejects(sx, {"mode": "recent", "scope": {"versions": "latest"}}, "scope", "versions")


def test_status_all_shows_current_active_and_current_draft(sx: Client) -> None:
    active, draft = write(
        sx, note("live", type="fact", key="k"), note("proposed", type="fact", key="k", status="draft")
    )
    assert set(listing(sx, status="all")) == {active, draft}


def test_scope_status(sx: Client) -> None:
    """ "status: active # active (default) | draft | all\""""
    active, draft = write(sx, note("a"), note("d", status="draft"))
    assert scope_ids(sx) == {active}
    assert scope_ids(sx, status="active") == {active}
    assert scope_ids(sx, status="draft") == {draft}
    assert scope_ids(sx, status="all") == {active, draft}
    rejects(sx, {"mode": "recent", "scope": {"status": "live"}})


def test_scope_versions_current_and_all(sx: Client) -> None:
    """ "versions: current returns only the latest value of each named fact"; "Use versions: all when
    the history itself is the point"; "With status: all, the current active and current draft values
    can both appear.\""""
    first, second = write(sx, note("v1", type="fact", key="risk"), note("v2", type="fact", key="risk"))
    (draft,) = write(sx, note("proposal", type="fact", key="risk", status="draft"))
    assert scope_ids(sx) == {second}
    assert scope_ids(sx, versions="current") == {second}
    assert scope_ids(sx, versions="all") == {first, second}
    assert scope_ids(sx, status="all") == {second, draft}
    assert scope_ids(sx, status="all", versions="all") == {first, second, draft}


# --- keyed facts: superseded, retracted, restored -------------------------------------------------


def test_retracted_records_are_never_returned(sx: Client) -> None:
    kept, gone = write(sx, note("kept"), note("gone"))
    assert sx.post(f"/records/{gone}/retract", json={"reason": "wrong"}).status_code == 200
    assert listing(sx) == [kept]
    assert listing(sx, versions="all", status="all") == [kept]


def test_retracting_the_current_value_makes_the_previous_one_current(sx: Client) -> None:
    (old,) = write(sx, note("v1", type="fact", key="k"))
    (new,) = write(sx, note("v2", type="fact", key="k"))
    sx.post(f"/records/{new}/retract", json={"reason": "wrong"})
    assert listing(sx) == [old]


def test_retracting_the_current_value_makes_the_previous_current(sx: Client) -> None:
    """versions: current — "Retracting the current value makes the newest non-retracted earlier value
    current again" (design, Keyed facts)."""
    first, second = write(sx, note("v1", type="fact", key="r"), note("v2", type="fact", key="r"))
    ok(sx.post(f"/records/{second}/retract", json={"reason": "wrong"}))
    assert scope_ids(sx) == {first}


def test_only_processed_unretracted_records_of_my_workspace(
    sx: Client, sx_app: Flask, other_tenant: Tenant
) -> None:
    """ "Regardless of scope, a search only ever returns records from your own workspace that are
    fully processed and not retracted.\""""
    kept, retracted = write(sx, note("kept"), note("gone"))
    ok(sx.post(f"/records/{retracted}/retract", json={"reason": "wrong"}))
    other = Client(sx_app.test_client(), other_tenant)
    (foreign,) = write(other, note("foreign"))
    assert scope_ids(sx, status="all", versions="all") == {kept}
    assert scope_ids(other) == {foreign}


MODES = ["text", "vector", "hybrid", "recent", "structured"]
"""Every search mode (spec "Choosing a search mode")."""


def fact(mode: str, text: str, key: str = "risk", **values: Any) -> dict[str, Any]:
    """A keyed fact in slot `key` readable by `mode`."""
    return item(mode, text, type="fact", key=key, **values)


@pytest.mark.parametrize("mode", MODES)
def test_a_superseded_value_is_seen_only_with_versions_all(sx: Client, mode: str) -> None:
    """Spec "Scopes": "versions: current returns only the latest value of each named fact … Use
    versions: all when the history itself is the point"; design §1: earlier ones "are superseded
    (hidden by `versions: current`, shown by `versions: all`)"."""
    (old,) = write(sx, fact(mode, "budget risk low"))
    (new,) = write(sx, fact(mode, "budget risk high"))
    assert seen(sx, mode) == {new}
    assert seen(sx, mode, versions="current") == {new}
    assert seen(sx, mode, versions="all") == {old, new}


def retracted(client: Client, record_id: str) -> None:
    assert client.post(f"/records/{record_id}/retract", json={"reason": "wrong"}).status_code == 200


@pytest.mark.parametrize("mode", MODES)
def test_retracting_the_current_value_brings_back_the_previous_one_at_once(sx: Client, mode: str) -> None:
    """Design §1: "Retracting the current value makes the newest non-retracted earlier value
    current again"; "a retracted record is never returned by any read"."""
    first, second, third = (write(sx, fact(mode, f"budget risk {n}"))[0] for n in ("one", "two", "three"))
    retracted(sx, third)
    assert seen(sx, mode) == {second}
    assert seen(sx, mode, versions="all") == {first, second}
    retracted(sx, second)
    assert seen(sx, mode) == {first}
    assert seen(sx, mode, versions="all", status="all") == {first}


@pytest.mark.parametrize("mode", MODES)
def test_retracting_a_superseded_value_changes_only_the_history(sx: Client, mode: str) -> None:
    """Design §1: only retracting *the current value* restores an earlier one; a retracted record
    is never returned, even by `versions: all`."""
    old, new = (write(sx, fact(mode, f"budget {n}"))[0] for n in ("old", "new"))
    retracted(sx, old)
    assert seen(sx, mode) == {new}
    assert seen(sx, mode, versions="all") == {new}


@pytest.mark.parametrize("mode", MODES)
def test_events_are_all_current(sx: Client, mode: str) -> None:
    """Design §1: "Events (`key: null`) are always current" — `versions: current` hides none."""
    events = write(sx, item(mode, "budget a"), item(mode, "budget b"), item(mode, "budget c"))
    assert seen(sx, mode) == set(events)
    assert seen(sx, mode, versions="all") == set(events)


@pytest.mark.parametrize("mode", MODES)
def test_one_slot_per_entity_and_key(sx: Client, mode: str) -> None:
    """Design §1: "A slot is `(workspace, collection, entity, key, status)`": the same key about
    another entity, or another key about the same entity, supersedes nothing."""
    (maria_old,) = write(sx, fact(mode, "budget m1", entity="maria"))
    maria, john, other_key = write(
        sx,
        fact(mode, "budget m2", entity="maria"),
        fact(mode, "budget j1", entity="john"),
        fact(mode, "budget m3", entity="maria", key="tier"),
    )
    assert seen(sx, mode) == {maria, john, other_key}
    assert seen(sx, mode, entities=["maria"]) == {maria, other_key}
    assert seen(sx, mode, entities=["maria"], versions="all") == {maria_old, maria, other_key}


@pytest.mark.parametrize("mode", MODES)
def test_write_order_decides_the_current_value_not_occurred_at(sx: Client, mode: str) -> None:
    """Design §1: "The newest record written into a slot is its *current* value … 'Newest' is
    decided by write order" — a later write about an earlier moment still supersedes."""
    (first,) = write(sx, fact(mode, "budget first", occurred_at="2026-07-02T00:00:00Z"))
    (second,) = write(sx, fact(mode, "budget second", occurred_at="2026-07-01T00:00:00Z"))
    assert seen(sx, mode) == {second}
    assert seen(sx, mode, versions="all") == {first, second}


@pytest.mark.parametrize("mode", MODES)
def test_replaying_an_idempotent_write_does_not_make_it_current_again(sx: Client, mode: str) -> None:
    """Design §3: "a repeated `idempotency_key` in the same workspace returns the original record
    instead of writing again" — nothing is written, so the newer value stays current."""
    original = fact(mode, "budget original", idempotency_key=f"vis6-{mode}")
    (first,) = write(sx, original)
    (newer,) = write(sx, fact(mode, "budget newer"))
    assert write(sx, original) == [first]
    assert seen(sx, mode) == {newer}
    assert seen(sx, mode, versions="all") == {first, newer}


@pytest.mark.parametrize("mode", ["text", "vector", "hybrid", "recent"])
def test_retracting_down_to_a_pending_value_shows_no_stale_one(sx: Client, mode: str) -> None:
    """Design §1: retracting the current value makes "the newest non-retracted earlier value
    current again"; spec "Scopes": if that value "is still being processed, versions: current does
    not fall back to the older one"."""
    (oldest,) = write(sx, vec("budget tier bronze", type="fact", key="tier"))
    pending = {"collection": "sx_vec", "entity": "e1", "type": "fact", "key": "tier", "text": "budget silver"}
    (middle,) = written(sx, pending)
    assert middle["processing"] == "pending"
    (newest,) = write(sx, vec("budget tier gold", type="fact", key="tier"))
    body = {**query(mode), "scope": {"collections": ["sx_vec"]}}
    assert ids(search(sx, body)) == [newest]
    retracted(sx, newest)
    assert fetch(sx, middle["id"])["current"] is True
    assert ids(search(sx, body)) == []
    body["scope"]["versions"] = "all"
    assert ids(search(sx, body)) == [oldest]


@pytest.mark.parametrize("mode", ["text", "vector", "hybrid", "recent"])
def test_a_newer_draft_still_processing_hides_the_older_draft_only(sx: Client, mode: str) -> None:
    """Spec "Scopes": no fallback to an older value while the newer one is processed; design §1:
    the draft lane is its own slot, so the active value stays visible."""
    (live,) = write(sx, vec("budget tier gold", type="fact", key="tier"))
    (older_draft,) = write(sx, vec("budget tier platinum", type="fact", key="tier", status="draft"))
    pending = {"collection": "sx_vec", "entity": "e1", "type": "fact", "key": "tier", "text": "budget"}
    (newer_draft,) = written(sx, {**pending, "status": "draft"})
    assert newer_draft["processing"] == "pending"
    scope = {"collections": ["sx_vec"]}
    assert ids(search(sx, {**query(mode), "scope": {**scope, "status": "draft"}})) == []
    assert ids(search(sx, {**query(mode), "scope": {**scope, "status": "all"}})) == [live]
    history = {**scope, "status": "draft", "versions": "all"}
    assert ids(search(sx, {**query(mode), "scope": history})) == [older_draft]


@pytest.mark.parametrize("mode", MODES)
def test_the_type_is_not_part_of_the_slot(sx: Client, mode: str) -> None:
    """Design §1: "A slot is `(workspace, collection, entity, key, status)`" — a later value of
    another type supersedes, and `types` then narrows which current values are eligible; it never
    brings back the superseded one."""
    (as_fact,) = write(sx, fact(mode, "budget as fact"))
    (as_note,) = write(sx, item(mode, "budget as note", type="note", key="risk"))
    assert seen(sx, mode) == {as_note}
    assert seen(sx, mode, types=["fact"]) == set()
    assert seen(sx, mode, types=["fact"], versions="all") == {as_fact}
    assert seen(sx, mode, types=["note"]) == {as_note}


@pytest.mark.parametrize("mode", MODES)
def test_entities_differing_in_case_or_spacing_are_other_slots(sx: Client, mode: str) -> None:
    """Design §1: the slot includes `entity`, stored as written — "Maria", "maria" and "maria "
    name three entities, so none supersedes another."""
    records = write(
        sx, *(fact(mode, f"budget {i}", entity=e) for i, e in enumerate(["maria", "Maria", "maria "]))
    )
    assert seen(sx, mode) == set(records)


def test_a_retracted_record_is_not_returned_by_get_context(bw: Client) -> None:
    """§1: "a retracted record is never returned by any read" — `GET /context` included."""
    (record_id,) = written_ids(
        bw, rec("bw_vec", text="the zebra migration budget", embedding=VECTOR, embedding_model=MODEL_ID)
    )
    before = bw.get("/context?q=zebra%20migration&collection=bw_vec")
    assert before.status_code == 200 and "zebra" in before.get_data(as_text=True)
    assert retract(bw, record_id).status_code == 200
    after = bw.get("/context?q=zebra%20migration&collection=bw_vec")
    assert after.status_code == 200 and "zebra" not in after.get_data(as_text=True)


# --- drafts: a lane per status, approve, reject ---------------------------------------------------


def test_draft_slot_has_its_own_current_value(sx: Client) -> None:
    """A slot is (workspace, collection, entity, key, status): two drafts, only the newer is current."""
    (active,) = write(sx, note("live", type="fact", key="p"))
    _older, newer = write(
        sx, note("d1", type="fact", key="p", status="draft"), note("d2", type="fact", key="p", status="draft")
    )
    assert scope_ids(sx, status="draft") == {newer}
    assert scope_ids(sx, status="all") == {active, newer}


@pytest.mark.parametrize("mode", MODES)
def test_a_draft_is_seen_only_by_status_draft_or_all(sx: Client, mode: str) -> None:
    """Spec "Scopes": "status: active (default) | draft | all"; "(With status: all, the current
    active and current draft values can both appear.)"; design §1: a draft does not supersede the
    active value (the slot includes `status`)."""
    (live,) = write(sx, fact(mode, "budget profile live"))
    (draft,) = write(sx, fact(mode, "budget profile proposed", status="draft"))
    assert seen(sx, mode) == {live}
    assert seen(sx, mode, status="active") == {live}
    assert seen(sx, mode, status="draft") == {draft}
    assert seen(sx, mode, status="all") == {live, draft}


@pytest.mark.parametrize("mode", MODES)
def test_each_status_is_its_own_lane(sx: Client, mode: str) -> None:
    """Design §1: a slot is "(workspace, collection, entity, key, status)" — the newest draft
    supersedes older drafts only, and `versions: all` shows each lane's history."""
    (live,) = write(sx, fact(mode, "budget live"))
    (d1,) = write(sx, fact(mode, "budget draft one", status="draft"))
    (d2,) = write(sx, fact(mode, "budget draft two", status="draft"))
    assert seen(sx, mode) == {live}
    assert seen(sx, mode, status="draft") == {d2}
    assert seen(sx, mode, status="draft", versions="all") == {d1, d2}
    assert seen(sx, mode, status="all") == {live, d2}
    assert seen(sx, mode, status="all", versions="all") == {live, d1, d2}
    assert seen(sx, mode, versions="all") == {live}


@pytest.mark.parametrize("mode", MODES)
def test_approving_a_draft_makes_it_the_current_active_value(sx: Client, mode: str) -> None:
    """Design §1 Drafts: "`POST /records/{id}/approve` moves a draft into the active lane, where
    it becomes the current active value of its slot" (the old active value is superseded)."""
    (live,) = write(sx, fact(mode, "budget profile v1"))
    (draft,) = write(sx, fact(mode, "budget profile v2", status="draft"))
    assert sx.post(f"/records/{draft}/approve").status_code == 200
    assert seen(sx, mode) == {draft}
    assert seen(sx, mode, versions="all") == {live, draft}
    assert seen(sx, mode, status="draft") == set()
    assert seen(sx, mode, status="draft", versions="all") == set()
    assert seen(sx, mode, status="all") == {draft}


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("approved", [0, 1], ids=["older-draft", "newer-draft"])
def test_approval_leaves_the_newest_remaining_draft_current(sx: Client, mode: str, approved: int) -> None:
    """Design §1 Drafts: approve "moves a draft into the active lane, where it becomes the current
    active value of its slot"; what stays in the draft lane keeps the write-order rule ("The newest
    record written into a slot is its current value")."""
    (live,) = write(sx, fact(mode, "budget live"))
    drafts = [write(sx, fact(mode, f"budget draft {n}", status="draft"))[0] for n in range(2)]
    assert sx.post(f"/records/{drafts[approved]}/approve").status_code == 200
    remaining = drafts[1 - approved]
    assert seen(sx, mode) == {drafts[approved]}
    assert seen(sx, mode, versions="all") == {live, drafts[approved]}
    assert seen(sx, mode, status="draft") == {remaining}
    assert seen(sx, mode, status="all") == {drafts[approved], remaining}


@pytest.mark.parametrize("mode", MODES)
def test_a_rejected_draft_is_seen_by_no_search(sx: Client, mode: str) -> None:
    """Design §1: "`POST /records/{id}/reject` retracts a draft with a reason"; spec: a search
    "only ever returns records … not retracted"."""
    (live,) = write(sx, fact(mode, "budget live"))
    (draft,) = write(sx, fact(mode, "budget proposal", status="draft"))
    assert sx.post(f"/records/{draft}/reject", json={"reason": "no"}).status_code == 200
    assert seen(sx, mode, status="draft") == set()
    assert seen(sx, mode, status="all", versions="all") == {live}


@pytest.mark.parametrize("mode", MODES)
def test_rejecting_the_newest_draft_brings_back_the_earlier_draft(sx: Client, mode: str) -> None:
    """Design §1: reject "retracts a draft"; "Retracting the current value makes the newest
    non-retracted earlier value current again" — in the draft lane."""
    d1, d2 = (write(sx, fact(mode, f"budget draft {n}", status="draft"))[0] for n in ("one", "two"))
    assert sx.post(f"/records/{d2}/reject", json={"reason": "no"}).status_code == 200
    assert seen(sx, mode, status="draft") == {d1}


@pytest.mark.parametrize("mode", MODES)
def test_draft_events_are_all_current(sx: Client, mode: str) -> None:
    """Design §1: "Events (`key: null`) are always current" — proposals too; spec: "status: draft"
    shows them."""
    drafts = write(sx, *(item(mode, f"budget maybe {n}", status="draft") for n in range(3)))
    assert seen(sx, mode, status="draft") == set(drafts)
    assert seen(sx, mode) == set()


@pytest.mark.parametrize("mode", MODES)
def test_the_status_a_hit_reports_follows_the_scope(sx: Client, mode: str) -> None:
    """Spec "Optional values on each result": "`status` | `active` or `draft`; which values can
    appear follows `scope.status`"."""
    live, draft = write(sx, item(mode, "budget live"), item(mode, "budget maybe", status="draft"))
    for status, expected in [("active", {live: "active"}), ("draft", {draft: "draft"})]:
        body = search(sx, {**query(mode, status=status), "include": ["status"]})
        assert {h["id"]: h["status"] for h in body["hits"]} == expected
    body = search(sx, {**query(mode, status="all"), "include": ["status"]})
    assert {h["id"]: h["status"] for h in body["hits"]} == {live: "active", draft: "draft"}


@pytest.mark.parametrize("mode", ["text", "vector", "hybrid", "recent"])
def test_approval_over_a_pending_value_and_its_retraction(sx: Client, mode: str) -> None:
    """Design §1 Drafts: approval moves a draft "into the active lane, where it becomes the current
    active value of its slot"; Keyed facts: retracting it makes "the newest non-retracted earlier
    value current again" — here a value still being processed, which hides the older one (spec
    "Scopes": no stale fallback)."""
    (oldest,) = write(sx, vec("budget tier bronze", type="fact", key="tier"))
    pending = {"collection": "sx_vec", "entity": "e1", "type": "fact", "key": "tier", "text": "budget silver"}
    (middle,) = written(sx, pending)
    (draft,) = write(sx, vec("budget tier gold", type="fact", key="tier", status="draft"))
    body = {**query(mode), "scope": {"collections": ["sx_vec"]}}
    assert ids(search(sx, body)) == []
    assert sx.post(f"/records/{draft}/approve").status_code == 200
    assert ids(search(sx, body)) == [draft]
    retracted(sx, draft)
    assert fetch(sx, middle["id"])["current"] is True
    assert ids(search(sx, body)) == []
    body["scope"]["versions"] = "all"
    assert ids(search(sx, body)) == [oldest]


@pytest.mark.parametrize("mode", MODES)
def test_keyed_picks_facts_or_events_and_keeps_the_version_rule(sx: Client, mode: str) -> None:
    """Spec "Scopes": "keyed … true returns only named, updatable facts, false only things that
    happened, and any returns both"; versions still applies to the facts."""
    (old,) = write(sx, fact(mode, "budget fact old"))
    new, event = write(sx, fact(mode, "budget fact new"), item(mode, "budget event"))
    assert seen(sx, mode, keyed=True) == {new}
    assert seen(sx, mode, keyed=False) == {event}
    assert seen(sx, mode, keyed="any") == {new, event}
    assert seen(sx, mode, keyed=True, versions="all") == {old, new}
    assert seen(sx, mode, keyed=False, versions="all") == {event}


# --- records still being processed ----------------------------------------------------------------


def test_a_newer_value_still_processing_hides_the_older_one(sx: Client) -> None:
    (old,) = write(sx, vec("risk low", type="fact", key="risk"))
    assert listing(sx, collections=["sx_vec"]) == [old]
    pending = {"collection": "sx_vec", "entity": "e1", "type": "fact", "key": "risk", "text": "risk high"}
    response = sx.post("/records", json={"records": [pending]})  # nobody embeds it: stays pending
    assert response.status_code == 201 and response.get_json()["records"][0]["processing"] == "pending"
    assert listing(sx, collections=["sx_vec"]) == []
    assert listing(sx, collections=["sx_vec"], versions="all") == [old]


def test_a_newer_pending_value_hides_the_older_one(sx: Client) -> None:
    """ "If a newer value exists but is still being processed, versions: current does not fall back to
    the older one.\""""
    base = {"collection": "sx_tagged", "entity": "e1", "type": "note", "key": "slot"}
    values = {"annotations": {"sx_region": "eu"}}
    (old,) = write(sx, {**base, "text": "old", "scores": {"sx_rating": 3}, **values})
    ok_response = sx.post("/records", json={"records": [{**base, "text": "new", **values}]})
    assert ok_response.status_code == 201
    found = set(ids(search(sx, {"mode": "recent", "scope": {"collections": ["sx_tagged"]}})))
    assert old not in found


@pytest.mark.parametrize("mode", ["text", "vector", "hybrid", "recent"])
def test_a_newer_value_still_processing_hides_the_older_one_in_every_mode(sx: Client, mode: str) -> None:
    """Spec "Scopes": "Which record counts as current is decided before readiness is considered.
    If a newer value exists but is still being processed, versions: current does not fall back to
    the older one"; design §1: "only `ready` records are searchable"."""
    (old,) = write(sx, vec("budget tier gold", type="fact", key="tier"))
    pending = {"collection": "sx_vec", "entity": "e1", "type": "fact", "key": "tier", "text": "budget tier"}
    (result,) = written(sx, pending)  # nobody embeds it: it stays pending
    assert result["processing"] == "pending"
    body = {**query(mode), "scope": {"collections": ["sx_vec"]}}
    assert ids(search(sx, body)) == []
    body["scope"]["versions"] = "all"
    assert ids(search(sx, body)) == [old]


@pytest.mark.parametrize("mode", ["text", "vector", "hybrid", "recent"])
def test_a_pending_draft_is_seen_by_no_status(sx: Client, mode: str) -> None:
    """Spec "Scopes": "Regardless of scope, a search only ever returns records … that are fully
    processed"."""
    pending = {"collection": "sx_vec", "entity": "e1", "type": "note", "text": "budget", "status": "draft"}
    (result,) = written(sx, pending)
    assert result["processing"] == "pending"
    body = {**query(mode), "scope": {"collections": ["sx_vec"], "status": "all", "versions": "all"}}
    assert ids(search(sx, body)) == []


PENDING_READS = [
    pytest.param("POST", "/search", {"q": "pendingword", "mode": "text"}, id="text"),
    pytest.param("POST", "/search", {"mode": "recent", "scope": {"collections": ["sx_vec"]}}, id="recent"),
    pytest.param("POST", "/search", {"q": "pendingword twin", "mode": "vector"}, id="vector"),
    pytest.param("POST", "/search", {"q": "pendingword twin", "mode": "hybrid"}, id="hybrid"),
    pytest.param(
        "POST",
        "/search",
        {
            "q": "pendingword",
            "sources": [
                {"name": "t", "mode": "text", "scope": {"collections": ["sx_vec"]}},
                {"name": "r", "mode": "recent", "scope": {"collections": ["sx_vec"]}},
            ],
            "fuse": {"kind": "rrf"},
        },
        id="combined",
    ),
    pytest.param("GET", "/search?q=pendingword%20twin", None, id="get-search"),
]


def pending_and_ready(sx: Client) -> tuple[str, str]:
    """A `sx_vec` record left `pending` (no vector supplied, no worker) and a ready twin."""
    unembedded = {
        k: v for k, v in vec("pendingword twin", entity="e-p").items() if not k.startswith("embedding")
    }
    (pending,) = written(sx, unembedded)
    assert pending["processing"] == "pending"
    (ready,) = write(sx, vec("pendingword twin", entity="e-p"))
    return pending["id"], ready


@pytest.mark.parametrize(("method", "path", "body"), PENDING_READS)
def test_a_pending_record_is_returned_by_no_search_mode(
    sx: Client, method: str, path: str, body: Any
) -> None:
    """Design §1 Records: "only `ready` records are searchable"; spec: the re-check reapplies
    "processing state"."""
    pending, ready = pending_and_ready(sx)
    assert ids(ok(sx.request(method, path, json=body))) == [ready]
    assert fetch(sx, pending)["processing"] == "pending"


def test_a_pending_record_is_not_in_get_context(sx: Client) -> None:
    """Design §1 Records: "only `ready` records are searchable"."""
    pending, ready = pending_and_ready(sx)
    response = sx.get("/context?q=pendingword%20twin")
    assert response.status_code == 200
    text = response.get_data(as_text=True)
    assert ready in text and pending not in text


def test_a_pending_record_without_a_vector_never_reaches_vector_signals(
    sx: Client, sx_runtime: Runtime, server: OpenAIServer
) -> None:
    """Design §1: "All succeed → `ready`"; processing the pending record makes it searchable
    (the test's control: the same search that did not return it now does)."""
    pending, ready = pending_and_ready(sx)
    body = {"q": "pendingword twin", "mode": "vector", "scope": {"collections": ["sx_vec"]}}
    assert ids(search(sx, body)) == [ready]
    process(sx_runtime)
    assert fetch(sx, pending)["processing"] == "ready"
    assert set(ids(search(sx, body))) == {pending, ready}


DEFAULT_MODEL = "all-MiniLM-L6-v2"
"""The `model:` of the `bw` catalog's `default` alias (conf/models.yaml)."""


def test_a_record_with_its_vector_but_enrichments_pending_is_not_searchable(
    sclient: Client, served: Runtime, openai_server: OpenAIServer
) -> None:
    """Design §1: "Processing = its embedding … plus each enrichment the collection requires whose
    value was not supplied"; "only `ready` records are searchable" — a supplied vector alone does
    not make it ready, and a record that then fails stays out of every search."""
    record = rec(
        "customer_events", text="vector but no enrichments", embedding=VECTOR, embedding_model=DEFAULT_MODEL
    )
    (result,) = written(sclient, record)
    assert result["processing"] == "pending"
    searches = [
        {"q": "vector but no enrichments", "mode": mode, "scope": {"collections": ["customer_events"]}}
        for mode in ("vector", "hybrid", "text", "recent")
    ]
    assert [ids(search(sclient, body)) for body in searches] == [[], [], [], []]
    openai_server.reply_with(*[labelled(score=42)] * 20)
    process(served, max_attempts=2)
    fetched = fetch(sclient, result["id"])
    assert fetched["processing"] == "failed" and fetched["processing_error"]
    assert [ids(search(sclient, body)) for body in searches] == [[], [], [], []]


# --- collection versions --------------------------------------------------------------------------


Q = "budget"
"""Every record below holds this word, so a text search matches all of them."""


def versioned(text: str, version: int | None = None, **values: Any) -> dict[str, Any]:
    record = {"collection": "sx_versioned", "entity": "e", "type": "note", "text": text, **values}
    return record if version is None else {**record, "collection_version": version}


@pytest.mark.parametrize("mode", ["text", "recent"])
def test_pinning_a_version_never_brings_back_a_superseded_value(sx: Client, mode: str) -> None:
    """Spec "Scopes": "versions: current returns only the latest value of each named fact" and
    "Which record counts as current is decided before readiness"; design §1: the slot is
    "(workspace, collection, entity, key, status)" — the collection, not its version. Pinning
    `collection_versions` narrows which records are eligible; it does not pick another current
    value."""
    (under_v2,) = write(sx, versioned("budget tier gold", key="tier"))
    (under_v1,) = write(sx, versioned("budget tier platinum", version=1, key="tier"))
    scope = {"collections": ["sx_versioned"]}
    body = {"mode": mode, "q": Q, "k": 100}
    assert ids(search(sx, {**body, "scope": scope})) == [under_v1]
    pinned_v2 = {**scope, "collection_versions": {"sx_versioned": [2]}}
    assert ids(search(sx, {**body, "scope": pinned_v2})) == []
    assert ids(search(sx, {**body, "scope": {**pinned_v2, "versions": "all"}})) == [under_v2]
    pinned_v1 = {**scope, "collection_versions": {"sx_versioned": [1]}}
    assert ids(search(sx, {**body, "scope": pinned_v1})) == [under_v1]
    both = {**scope, "collection_versions": {"sx_versioned": [1, 2]}, "versions": "all"}
    assert set(ids(search(sx, {**body, "scope": both}))) == {under_v1, under_v2}


# --- crowds of invisible rows never push a visible one out ----------------------------------------


LONE = "a long planning meeting where the yearly budget came up once among many other things"


@pytest.mark.parametrize("mode", ["vector", "hybrid", "text", "recent"])
@pytest.mark.parametrize(
    ("values", "scope"),
    [
        pytest.param({"type": "fact", "key": "plan"}, {}, id="superseded"),
        pytest.param({"status": "draft"}, {}, id="drafts"),
        pytest.param({}, {"depth_lte": 0}, id="too-deep"),
        pytest.param(
            {"occurred_at": "2020-01-01T00:00:00Z"}, {"occurred_after": "2021-01-01T00:00:00Z"}, id="too-old"
        ),
        pytest.param({}, {"entities": ["lone"]}, id="other-entity"),
    ],
)
def test_invisible_rows_never_crowd_out_the_visible_ones(
    sx: Client, mode: str, values: dict[str, Any], scope: dict[str, Any]
) -> None:
    """Spec "How a search actually runs": "every rule is reapplied: workspace, processing state,
    retraction, scope, current-version" and "params.candidates … Raise it when a record you know
    should match never appears" — with the default candidates, a scope that has matches of its own
    returns them however many better-matching ineligible rows exist."""
    (origin,) = write(sx, note("budget origin"))
    (lone,) = write(sx, vec(LONE, entity="lone", occurred_at="2025-01-01T00:00:00Z"))  # the oldest but one
    records = crowd_records(**values)
    if scope.get("depth_lte") == 0:
        records = [{**r, "derived_from": [origin]} for r in records]
    *_, last = write(sx, *records)
    body = {"q": Q, "mode": mode, "k": 10, "scope": {"collections": ["sx_vec"], **scope}}
    expected = {lone, last} if "key" in values else {lone}
    assert set(ids(search(sx, body))) == expected


# Spec, Scopes: "scope narrows a search to the records that should even be considered"; every
# proposal is re-checked, so a bounded proposal that holds only records outside the scope must not
# stand for the whole answer. CROWD exceeds the candidates of a default search (k 20 → 200).
CROWD = 250


@pytest.mark.parametrize(
    ("values", "scope"),
    [
        pytest.param({"type": "fact", "key": "plan"}, {}, id="superseded"),
        pytest.param({"status": "draft"}, {}, id="drafts"),
        pytest.param(
            {"occurred_at": "2020-01-01T00:00:00Z"}, {"occurred_after": "2021-01-01T00:00:00Z"}, id="too-old"
        ),
        pytest.param({}, {"entities": ["lone"]}, id="other-entity"),
    ],
)
def test_invisible_rows_sorting_first_never_crowd_out_a_structured_list(
    sx: Client, values: dict[str, Any], scope: dict[str, Any]
) -> None:
    """Spec: structured mode is "Filter and sort exactly"; "every rule is reapplied" — rows the
    scope excludes, however many sort before the visible one, never take its place."""
    (lone,) = write(sx, note("lone", entity="lone", content={"amount": 5}))
    crowd = [note("crowd", entity="crowd", content={"amount": 1}, **values) for _ in range(CROWD)]
    *_, last = write(sx, *crowd)
    body = {
        "mode": "structured",
        "k": 2,
        "order_by": [{"field": "amount"}],
        "scope": {"collections": ["sx_notes"], **scope},
    }
    assert ids(search(sx, body)) == ([last, lone] if "key" in values else [lone])


@pytest.mark.parametrize("mode", ["vector", "hybrid", "text", "recent"])
def test_retracted_rows_never_crowd_out_the_visible_ones(sx: Client, mode: str) -> None:
    """Spec "Scopes": "a search only ever returns records … not retracted"; "every rule is
    reapplied … retraction"."""
    (lone,) = write(sx, vec(LONE, entity="lone", occurred_at="2025-01-01T00:00:00Z"))
    crowd = write(sx, *crowd_records())
    for record in crowd:
        retracted(sx, record)
    body = {"q": Q, "mode": mode, "k": 10, "scope": {"collections": ["sx_vec"]}}
    assert ids(search(sx, body)) == [lone]


def test_superseded_values_never_crowd_out_the_current_ones(sx: Client) -> None:
    history = [note("budget budget", entity="crowd", key="plan", type="fact") for _ in range(CROWD)]
    *_, current = write(sx, *history)
    (lone_id,) = write(sx, note(LONE))
    body = search(sx, {"q": "budget", "mode": "text", "scope": {"collections": ["sx_notes"]}})
    assert sorted(ids(body)) == sorted([current, lone_id])


# --- combined searches and views ------------------------------------------------------------------


def test_each_source_sees_its_own_status_and_versions(sx: Client) -> None:
    """Spec "Combining several searches": "Each source takes its own mode, scope, where, …" —
    so one source may read the live values and another the proposals or the history."""
    (old,) = write(sx, note("budget v1", type="fact", key="plan"))
    (live,) = write(sx, note("budget v2", type="fact", key="plan"))
    (draft,) = write(sx, note("budget v3", type="fact", key="plan", status="draft"))
    body = {
        "q": Q,
        "sources": [
            {"name": "live", "mode": "text", "scope": {"collections": ["sx_notes"]}},
            {"name": "proposed", "mode": "text", "scope": {"collections": ["sx_notes"], "status": "draft"}},
            {"name": "history", "mode": "recent", "scope": {"collections": ["sx_notes"], "versions": "all"}},
        ],
        "fuse": {"kind": "rrf"},
        "k": 10,
    }
    hits = {h["id"]: set(h["source_ranks"]) for h in search(sx, body)["hits"]}
    assert hits == {live: {"live", "history"}, old: {"history"}, draft: {"proposed"}}


SEMANTIC = ("vector", "hybrid")
"""Modes that need embeddings: they read `sx_vec`; the others read `sx_notes`."""


def viewed(client: Client, mode: str, **parameters: Any) -> set[str]:
    """The ids `vis6_scoped` returns in `mode` for entity `e1`."""
    cols = ["sx_vec"] if mode in SEMANTIC else ["sx_notes"]
    body = ok(view_query(client, "vis6_scoped", {"entity": "e1", "mode": mode, "cols": cols, **parameters}))
    assert body["input_record_ids"] == ids(body)
    return set(ids(body))


@pytest.fixture(scope="module")
def vis6_runtime(
    runtime: Runtime, sx_server: OpenAIServer, tmp_path_factory: pytest.TempPathFactory
) -> Runtime:
    root: Path = tmp_path_factory.mktemp("vis6-catalog")
    return runtime_for(runtime, sx_catalog(root, "vis6"), environ(sx_server))


@pytest.fixture
def vis6(vis6_runtime: Runtime, tenant: Tenant, server: OpenAIServer) -> Client:
    return Client(app_for(vis6_runtime).test_client(), tenant)


@pytest.mark.parametrize("mode", ["text", "vector", "hybrid", "recent"])
def test_a_view_sees_what_its_scope_allows(vis6: Client, mode: str) -> None:
    """Spec: a view "runs the same engine, so its results … mean exactly what they mean above";
    "Scopes" (status, versions, retraction, depth, time bounds) apply to its templated scope."""
    (old,) = write(vis6, fact(mode, "budget v1"))
    (live,) = write(vis6, fact(mode, "budget v2", occurred_at="2026-05-01T00:00:00Z"))
    (draft,) = write(vis6, fact(mode, "budget v3", status="draft"))
    (derived,) = write(vis6, item(mode, "budget derived", derived_from=[live]))
    (gone,) = write(vis6, item(mode, "budget gone"))
    retracted(vis6, gone)
    assert viewed(vis6, mode) == {live, derived}
    assert viewed(vis6, mode, versions="all") == {old, live, derived}
    assert viewed(vis6, mode, status="draft") == {draft}
    assert viewed(vis6, mode, status="all") == {live, draft, derived}
    assert viewed(vis6, mode, depth=0) == {live}
    assert viewed(vis6, mode, after="2026-05-01T00:00:00Z") == {derived}
    assert sorted(viewed(vis6, mode, status="all", versions="all")) == sorted({old, live, draft, derived})
    retracted(vis6, live)
    assert viewed(vis6, mode) == {old, derived}
    assert fetch(vis6, old)["current"] is True
    for other in ("E1", " e1", "e1 "):
        assert viewed(vis6, mode, entity=other) == set()


def test_get_search_and_get_context_read_current_active_values_only(sx: Client) -> None:
    """Spec: `GET /search` "translates your request into a hybrid … search" with the default
    scope (status active, versions current); design §3: `GET /context` is "a hybrid search"."""
    write(sx, vec("budget plan oldvalue", type="fact", key="plan"))
    (live,) = write(sx, vec("budget plan livevalue", type="fact", key="plan"))
    write(sx, vec("budget plan draftvalue", type="fact", key="plan", status="draft"))
    (gone,) = write(sx, vec("budget plan gonevalue"))
    retracted(sx, gone)
    assert ids(ok(sx.get("/search?q=budget%20plan&k=100"))) == [live]
    response = sx.get("/context?q=budget%20plan&k=100")
    assert response.status_code == 200
    text = response.get_data(as_text=True)
    assert "livevalue" in text
    assert not [word for word in ("oldvalue", "draftvalue", "gonevalue") if word in text]


def test_a_view_pinning_a_collection_version_reads_only_that_version(vis6: Client) -> None:
    """Spec "Scopes": "collection_versions: {customer_events: [1]} # optionally: exact versions";
    "every collection and pinned collection version resolves" for a view — and the current value
    of a slot is decided across versions (design §1: the slot names the collection)."""
    (event_v1,) = write(vis6, versioned("budget event one", version=1))
    write(vis6, versioned("budget event two"))
    (fact_v1,) = write(vis6, versioned("budget tier one", version=1, key="tier"))
    (fact_v2,) = write(vis6, versioned("budget tier two", key="tier"))
    assert set(ids(ok(view_query(vis6, "vis6_pinned", {})))) == {event_v1}
    assert set(ids(ok(view_query(vis6, "vis6_pinned", {"versions": "all"})))) == {event_v1, fact_v1}
    retracted(vis6, fact_v2)
    assert set(ids(ok(view_query(vis6, "vis6_pinned", {})))) == {event_v1, fact_v1}
