"""Keyed-fact lanes, drafts, retraction and automatic links (design "Keyed facts", "Drafts", "Graph data")."""

from __future__ import annotations

import random
import threading
from collections.abc import Callable
from functools import partial
from typing import Any

import pytest
import sqlalchemy as sa
from sqlalchemy.engine import Engine

from memseek.db import workspace_transaction
from memseek.errors import Conflict
from memseek.runtime import Runtime
from memseek.write import lanes
from memseek.write.ingest import write_records
from tests.conftest import Client
from tests.conftest import Tenant
from tests.helpers import details
from tests.helpers import error
from tests.helpers import fetch
from tests.helpers import ok
from tests.helpers import written
from tests.helpers import written_ids
from tests.integration.write_support import count
from tests.integration.write_support import record_in


def fact(text: str, **values: Any) -> dict[str, Any]:
    return record_in("w_facts", text=text, **values)


def states(engine: Engine, collection: str | None = None) -> dict[str, tuple[bool, str]]:
    """text → (is_current, status) of every record (optionally of one collection)."""
    query = "SELECT text, is_current, status FROM records WHERE coalesce(:c, collection) = collection"
    with engine.connect() as conn:
        rows = conn.execute(sa.text(query), {"c": collection})
        return {row.text: (row.is_current, row.status) for row in rows}


def current_texts(engine: Engine, collection: str | None = None) -> set[str]:
    return {text for text, (current, _) in states(engine, collection).items() if current}


def action(client: Client, record_id: str, name: str, reason: str | None = "because") -> Any:
    return client.post(f"/records/{record_id}/{name}", json=None if reason is None else {"reason": reason})


class TestSupersede:
    def test_newest_write_is_current(self, wclient: Client, db: Engine) -> None:
        [v1] = written(wclient, fact("v1"))
        [v2] = written(wclient, fact("v2"))
        assert (v1["current"], v2["current"]) == (True, True)
        assert fetch(wclient, v1["id"])["current"] is False and fetch(wclient, v2["id"])["current"] is True

    def test_write_order_inside_a_batch(self, wclient: Client, db: Engine) -> None:
        results = written(wclient, fact("v1"), fact("other", key="k2"), fact("v2"))
        assert [r["current"] for r in results] == [False, True, True]
        assert current_texts(db) == {"other", "v2"}

    def test_pending_newer_value_hides_older(self, wclient: Client, db: Engine) -> None:
        model = "all-MiniLM-L6-v2-onnx-int8"
        [old] = written(wclient, record_in("w_local", key="k", embedding=[0.1] * 384, embedding_model=model))
        [new] = written(wclient, record_in("w_local", key="k", text="newer"))
        assert (old["processing"], new["processing"]) == ("ready", "pending")
        assert fetch(wclient, old["id"])["current"] is False and new["current"] is True

    def test_events_are_always_current(self, wclient: Client, db: Engine) -> None:
        written(wclient, record_in("w_events", text="a"), record_in("w_events", text="b"))
        written(wclient, record_in("w_events", text="c"))
        assert current_texts(db) == {"a", "b", "c"}

    def test_lanes_are_per_entity_key_and_status(self, wclient: Client, db: Engine) -> None:
        written(wclient, fact("a"), fact("b", entity="e2"), fact("c", key="k2"), fact("d", status="draft"))
        assert current_texts(db) == {"a", "b", "c", "d"}


class TestRetract:
    def test_retracting_current_restores_newest_earlier(self, wclient: Client, db: Engine) -> None:
        ids = written_ids(wclient, fact("v1"), fact("v2"), fact("v3"))
        retracted = ok(action(wclient, ids[1], "retract", "wrong"))
        assert retracted["retraction_reason"] == "wrong" and retracted["retracted_at"]
        assert current_texts(db) == {"v3"}
        action(wclient, ids[2], "retract")
        assert current_texts(db) == {"v1"}
        action(wclient, ids[0], "retract")
        assert current_texts(db) == set()

    def test_retracted_event(self, wclient: Client, db: Engine) -> None:
        [event] = written(wclient, record_in("w_events"))
        record = action(wclient, event["id"], "retract").get_json()
        assert record["current"] is False and record["retraction_reason"] == "because"

    def test_retract_twice_is_409(self, wclient: Client, db: Engine) -> None:
        [event] = written(wclient, record_in("w_events"))
        action(wclient, event["id"], "retract")
        error(action(wclient, event["id"], "retract"), 409, "conflict")

    @pytest.mark.parametrize("body", [None, {}, {"reason": " "}, {"reason": "x", "extra": 1}, {"reason": 5}])
    def test_reason_is_required(self, wclient: Client, db: Engine, body: Any) -> None:
        [event] = written(wclient, record_in("w_events"))
        error(wclient.post(f"/records/{event['id']}/retract", json=body), 422, "invalid_request")
        assert fetch(wclient, event["id"])["retracted_at"] is None


class TestDrafts:
    def test_approve_moves_draft_into_active_lane(self, wclient: Client, db: Engine) -> None:
        active, d1, d2 = written_ids(
            wclient, fact("active"), fact("d1", status="draft"), fact("d2", status="draft")
        )
        approved = ok(action(wclient, d2, "approve", reason=None))
        assert (approved["status"], approved["current"]) == ("active", True)
        assert states(db) == {"active": (False, "active"), "d1": (True, "draft"), "d2": (True, "active")}
        action(wclient, d2, "retract")  # the approved value has the newest active lane position
        assert current_texts(db) == {"active", "d1"}
        assert fetch(wclient, active)["current"] and fetch(wclient, d1)["current"]

    def test_approve_superseded_draft(self, wclient: Client, db: Engine) -> None:
        d1, _ = written_ids(wclient, fact("d1", status="draft"), fact("d2", status="draft"))
        action(wclient, d1, "approve", reason=None)
        assert states(db) == {"d1": (True, "active"), "d2": (True, "draft")}

    def test_approve_event_draft(self, wclient: Client, db: Engine) -> None:
        [event] = written(wclient, record_in("w_events", status="draft"))
        assert action(wclient, event["id"], "approve", reason=None).get_json()["status"] == "active"

    @pytest.mark.parametrize("kind", ["active", "retracted-draft", "approved-draft"])
    def test_approve_needs_a_live_draft(self, wclient: Client, db: Engine, kind: str) -> None:
        [record] = written(wclient, fact("x", status="active" if kind == "active" else "draft"))
        if kind == "retracted-draft":
            action(wclient, record["id"], "reject")
        if kind == "approved-draft":
            action(wclient, record["id"], "approve", reason=None)
        error(action(wclient, record["id"], "approve", reason=None), 409, "conflict")

    def test_approve_rejects_a_body_with_fields(self, wclient: Client, db: Engine) -> None:
        [draft] = written(wclient, fact("d", status="draft"))
        error(wclient.post(f"/records/{draft['id']}/approve", json={"x": 1}), 422, "invalid_request")

    def test_reject_retracts_a_draft(self, wclient: Client, db: Engine) -> None:
        d1, d2 = written_ids(wclient, fact("d1", status="draft"), fact("d2", status="draft"))
        record = action(wclient, d2, "reject", "no").get_json()
        assert record["retraction_reason"] == "no" and record["current"] is False
        assert current_texts(db) == {"d1"}

    def test_reject_non_draft_is_409(self, wclient: Client, db: Engine) -> None:
        [record] = written(wclient, fact("a"))
        error(action(wclient, record["id"], "reject"), 409, "conflict")
        assert fetch(wclient, record["id"])["retracted_at"] is None


def _lane_invariant(engine: Engine) -> None:
    """Every lane: exactly one current record, the non-retracted one written last."""
    query = """
        SELECT collection, entity, key, status,
               count(*) FILTER (WHERE is_current) AS current,
               (array_agg(id ORDER BY lane_seq DESC) FILTER (WHERE retracted_at IS NULL))[1] AS newest,
               (array_agg(id) FILTER (WHERE is_current))[1] AS current_id
        FROM records WHERE key IS NOT NULL GROUP BY 1, 2, 3, 4"""
    with engine.connect() as conn:
        lanes_found = conn.execute(sa.text(query)).all()
    assert lanes_found
    for lane in lanes_found:
        assert lane.current == (1 if lane.newest else 0), lane
        assert lane.current_id == lane.newest, lane


def _in_parallel(threads: int, work: Callable[[int], None]) -> None:
    """Run `work(seed)` for seeds 0 … threads-1, each on its own thread, all released at once;
    fails with whatever any of them raised."""
    barrier = threading.Barrier(threads)
    errors: list[BaseException] = []

    def run(seed: int) -> None:
        try:
            barrier.wait()
            work(seed)
        except BaseException as exc:  # noqa: BLE001 (reported below)
            errors.append(exc)

    workers = [threading.Thread(target=run, args=(seed,)) for seed in range(threads)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(120)
    assert not errors, errors


def test_concurrent_writers_leave_one_current_per_lane(write_runtime: Runtime, tenant: Tenant) -> None:
    """Threads on separate connections write overlapping lanes in different orders, and retract."""
    rounds, keys = 8, ["k1", "k2", "k3"]

    def writer(seed: int) -> None:
        rng = random.Random(seed)
        for n in range(rounds):
            batch = [fact(f"t{seed}-{n}-{k}", key=k) for k in rng.sample(keys, len(keys))]
            with workspace_transaction(write_runtime.engine, tenant.id) as conn:
                results = write_records(conn, write_runtime, tenant.id, batch)
            if n % 3 == 2:
                with workspace_transaction(write_runtime.engine, tenant.id) as conn:
                    lanes.retract(conn, tenant.id, results[0].id, "concurrent retract")

    _in_parallel(6, writer)
    _lane_invariant(write_runtime.engine)


def _live_links(engine: Engine) -> set[tuple[str, str, str]]:
    """(status, node key, needed value) of every live `needs` link."""
    query = """SELECT status, content->>'subject' AS node, content->>'object' AS target FROM records
               WHERE collection = 'w_edges' AND is_current AND retracted_at IS NULL
                 AND content->>'predicate' = 'needs'"""
    with engine.connect() as conn:
        return {(row.status, row.node, row.target) for row in conn.execute(sa.text(query))}


def _links_of_current_nodes(engine: Engine) -> set[tuple[str, str, str]]:
    query = "SELECT status, key, content FROM records WHERE collection = 'w_nodes' AND is_current"
    with engine.connect() as conn:
        rows = conn.execute(sa.text(query)).all()
    return {(row.status, row.key, target) for row in rows for target in row.content["needs"]}


def _mixed_batch(rng: random.Random, tag: str, targets: list[str]) -> list[dict[str, Any]]:
    """Both fact lanes in a random order and one of two nodes, each active or draft at random."""
    statuses = ["active", "draft"]
    keys = rng.sample(["k1", "k2"], 2)
    batch = [fact(f"f{tag}-{key}", key=key, status=rng.choice(statuses)) for key in keys]
    needs = {"needs": rng.sample(targets, 2)}
    node = record_in(
        "w_nodes", text=f"n{tag}", key=rng.choice(["n1", "n2"]), content=needs, status=rng.choice(statuses)
    )
    return [*batch, node]


def test_concurrent_drafts_approvals_and_links_keep_every_invariant(
    write_runtime: Runtime, tenant: Tenant
) -> None:
    """Threads write active and draft values of shared lanes (facts, and nodes with links), and
    approve, reject or retract one of each batch, on separate connections in different orders:
    every lane still has one current record, the newest non-retracted one, and the live links
    are exactly those of the current nodes."""
    rounds, targets, engine = 6, ["a", "b", "c", "d"], write_runtime.engine
    reject = partial(lanes.retract, reason="rejected", draft_only=True)
    retract = partial(lanes.retract, reason="retracted")

    def worker(seed: int) -> None:
        rng = random.Random(seed)
        for n in range(rounds):
            batch = _mixed_batch(rng, f"{seed}-{n}", targets)
            with workspace_transaction(engine, tenant.id) as conn:
                results = write_records(conn, write_runtime, tenant.id, batch)
            act = rng.choice([lanes.approve, reject, retract])
            try:
                with workspace_transaction(engine, tenant.id) as conn:
                    act(conn, tenant.id, rng.choice(results).id)
            except Conflict:  # e.g. approving a value that is not a draft
                pass

    _in_parallel(6, worker)
    _lane_invariant(engine)
    live = _live_links(engine)
    assert live == _links_of_current_nodes(engine)
    assert live


class TestAutomaticLinks:
    def node(self, text: str, needs: list[str], owner: str | None = None, **values: Any) -> dict[str, Any]:
        content: dict[str, Any] = {"needs": needs}
        if owner:
            content["owner"] = owner
        return record_in("w_nodes", text=text, content=content, **values)

    def links(self, engine: Engine) -> list[Any]:
        query = """SELECT text, is_current, status, depth, derived_from, link_node_id, entity, type, content,
                          fields, processing
                   FROM records WHERE collection = 'w_edges' ORDER BY seq"""
        with engine.connect() as conn:
            return conn.execute(sa.text(query)).all()

    def test_one_link_per_value(self, wclient: Client, db: Engine) -> None:
        [parent] = written(wclient, record_in("w_any", text="evidence"))
        [node] = written(wclient, self.node("n1", ["a", "b", "a", " "], "bob", derived_from=[parent["id"]]))
        links = self.links(db)
        assert [link.text for link in links] == ["k1 needs a", "k1 needs b", "k1 owned_by bob"]
        first = links[0]
        assert str(first.link_node_id) == node["id"] and [str(p) for p in first.derived_from] == [node["id"]]
        assert (first.depth, first.entity, first.type, first.status) == (2, "e1", "link", "active")
        assert first.content == {"subject": "k1", "object": "a", "predicate": "needs"} == first.fields
        assert all(link.is_current and link.processing == "ready" for link in links)

    def test_links_follow_their_node(self, wclient: Client, db: Engine) -> None:
        [v1] = written(wclient, self.node("v1", ["a", "b"]))
        [v2] = written(wclient, self.node("v2", ["c"]))
        assert current_texts(db, "w_edges") == {"k1 needs c"}
        action(wclient, v2["id"], "retract")
        assert current_texts(db, "w_edges") == {"k1 needs a", "k1 needs b"}
        action(wclient, v1["id"], "retract")
        assert current_texts(db, "w_edges") == set()

    def test_retracted_link_stays_hidden_when_its_node_returns(self, wclient: Client, db: Engine) -> None:
        [v1] = written(wclient, self.node("v1", ["a", "b"]))
        with db.connect() as conn:
            link_a = conn.execute(sa.text("SELECT id FROM records WHERE text = 'k1 needs a'")).scalar_one()
        action(wclient, str(link_a), "retract")
        [v2] = written(wclient, self.node("v2", ["c"]))
        action(wclient, v2["id"], "retract")
        assert current_texts(db, "w_edges") == {"k1 needs b"}

    def test_links_inside_one_batch_follow_currency(self, wclient: Client, db: Engine) -> None:
        written(wclient, self.node("v1", ["a"]), self.node("v2", ["b"]))
        assert current_texts(db, "w_edges") == {"k1 needs b"}

    def test_draft_node_links_are_drafts_until_approved(self, wclient: Client, db: Engine) -> None:
        [active] = written(wclient, self.node("live", ["a"]))
        [draft] = written(wclient, self.node("proposal", ["b"], status="draft"))
        assert {link.text: link.status for link in self.links(db)} == {
            "k1 needs a": "active",
            "k1 needs b": "draft",
        }
        action(wclient, draft["id"], "approve", reason=None)
        assert {link.text: (link.status, link.is_current) for link in self.links(db)} == {
            "k1 needs a": ("active", False),
            "k1 needs b": ("active", True),
        }
        assert fetch(wclient, active["id"])["current"] is False

    def test_edges_needing_a_client_enrichment_refuse_the_node(self, wclient: Client, db: Engine) -> None:
        """An automatic link has no writer to supply a `client` enrichment: the node is refused
        with the reason (422, nothing written), a node without link values is not."""
        before = count(db)
        body = {"records": [record_in("w_any"), record_in("w_client_nodes", content={"owner": "bob"})]}
        [detail] = details(wclient.post("/records", json=body))
        assert detail["loc"] == ["records", 1, "links", 0]
        assert "requires client enrichment 'w_region'" in detail["msg"]
        assert count(db) == before
        written(wclient, record_in("w_client_nodes", content={}))
        assert current_texts(db, "w_client_edges") == set()

    def test_reference_graph_uses_the_view_field_names(self, client: Client, db: Engine) -> None:
        body = {
            "collection": "components",
            "entity": "repo",
            "type": "component",
            "key": "api",
            "text": "the api",
            "content": {"depends_on": ["db"]},
        }
        [node] = written(client, body)
        with db.connect() as conn:
            link = conn.execute(
                sa.text(
                    "SELECT text, content, processing, link_node_id FROM records "
                    "WHERE collection = 'dependencies'"
                )
            ).one()
        assert link.text == "api depends_on db"
        assert link.content == {"from_node": "api", "to_node": "db", "relationship": "depends_on"}
        assert link.processing == "ready" and str(link.link_node_id) == node["id"]  # no embedding
