"""The sync SDK against a running service on real PostgreSQL: records, search in every mode,
views of the reference catalog (search and graph kinds), context, lifecycle, errors."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from datetime import UTC
from datetime import datetime
from typing import Any

import pytest

from memseek.client import AuthenticationError
from memseek.client import InvalidRequest
from memseek.client import Memseek
from memseek.client import NotFound
from memseek.client import Record
from memseek.client import SearchResult
from memseek.client import ViewResult
from memseek.models.local import LocalEmbedder
from tests.conftest import Tenant
from tests.sdk.support import BOB
from tests.sdk.support import MARIA
from tests.sdk.support import component
from tests.sdk.support import event
from tests.sdk.support import link
from tests.sdk.support import meeting
from tests.sdk.support import mirrors_json
from tests.sdk.support import reflection

# --- records ----------------------------------------------------------------------------------


def test_health_needs_no_key(service: str) -> None:
    with Memseek(service, api_key=None) as anonymous:
        health = anonymous.health()
    assert (health.ok, health.status, health.database) == (True, "ok", "ok")
    assert health.catalog_hash is not None and health.catalog_hash.startswith("sha256:")


def test_write_one_or_many_waits_until_processed(m: Memseek) -> None:
    [one] = m.records.write(event("Maria confirmed the Q3 budget."), wait=True)
    many = m.records.write(
        [event("Bob asked for a demo.", BOB), reflection("Maria decides fast.")], wait=True
    )
    assert [w.processing for w in (one, *many)] == ["ready"] * 3
    assert all(w.current for w in (one, *many))
    assert len({one.id, *(w.id for w in many)}) == 3


def test_concurrent_waits_of_one_client_all_come_back_processed(m: Memseek) -> None:
    """More writes waiting at once than the server has wait threads (4 of 8): each still returns
    once its record is processed, the ones past the threads having waited their turn."""
    texts = [f"Maria's note number {n}." for n in range(12)]
    with ThreadPoolExecutor(len(texts)) as pool:
        answers = list(pool.map(lambda text: m.records.write(event(text), wait=True), texts))
    assert [w.processing for [w] in answers] == ["ready"] * len(texts)


def test_written_without_wait_is_still_pending_or_ready(m: Memseek) -> None:
    [written] = m.records.write(event("Maria opened the invoice."))
    assert written.processing in ("pending", "ready")
    assert written.raw == {"id": written.id, "processing": written.processing, "current": written.current}


def test_get_returns_the_whole_record_typed(m: Memseek) -> None:
    moment = datetime(2026, 7, 1, 10, 22, tzinfo=UTC)
    [written] = m.records.write(
        event("Maria confirmed the Q3 budget.", occurred_at=moment, content={"channel": "email"},
              scores={"importance": 7}),
        wait=True,
    )  # fmt: skip
    record = m.records.get(written.id)
    assert isinstance(record, Record)
    assert (record.id, record.entity, record.type) == (written.id, MARIA, "event")
    assert (record.collection, record.collection_version, record.status, record.depth) == (
        "customer_events",
        1,
        "active",
        0,
    )
    assert (record.content, record.scores) == ({"channel": "email"}, {"importance": 7})
    assert record.occurred_at == moment and record.occurred_at.tzinfo is not None
    assert record.created_at is not None and record.last_accessed is not None
    assert (record.processing, record.current, record.retracted_at, record.key) == ("ready", True, None, None)
    assert record.raw["id"] == written.id and record.derived_from == ()


def test_idempotent_write_returns_the_same_record(m: Memseek) -> None:
    first = m.records.write(event("Maria paid.", idempotency_key="pay-1"))
    again = m.records.write(event("Maria paid.", idempotency_key="pay-1"))
    assert [w.id for w in again] == [w.id for w in first]


def test_retract_hides_the_record_from_search(m: Memseek) -> None:
    [written] = m.records.write(event("Maria confirmed the Q3 budget."), wait=True)
    assert m.search(q="budget", mode="text").ids == [written.id]
    record = m.records.retract(written.id, "entered by mistake")
    assert record.retraction_reason == "entered by mistake" and record.retracted_at is not None
    assert m.search(q="budget", mode="text").ids == []


def test_records_forget_erases_an_entity(m: Memseek) -> None:
    """Issue 41 §1: "`.records.write(...)`, ... (and the lifecycle routes of the lifecycle issue
    as they land: delete, list, forget)" — `records.forget` is `entities.forget`
    (`DELETE /entities/{entity}`)."""
    entity = "contact.forget-through-records"
    m.records.write([event("one", entity), event("two", entity)], wait=True)
    done = m.records.forget(entity, reason="erasure request")
    assert (done.state, done.erased, done.entity, done.reason) == ("done", 2, entity, "erasure request")
    assert list(m.records.list(entity=entity)) == []
    with pytest.raises(NotFound):
        m.records.forget(entity)


def test_a_draft_is_approved_or_rejected(m: Memseek) -> None:
    keep, drop = m.records.write(
        [event("Maria's budget is 10k.", key="budget", status="draft"),
         event("Maria's budget is 20k.", key="budget_alt", status="draft")],
        wait=True,
    )  # fmt: skip
    approved = m.records.approve(keep.id)
    assert (approved.status, approved.current, approved.retracted_at) == ("active", True, None)
    rejected = m.records.reject(drop.id, "not confirmed")
    assert rejected.retraction_reason == "not confirmed" and rejected.status == "draft"
    assert m.search(q="budget", mode="text", scope={"status": "all"}).ids == [keep.id]


# --- search -----------------------------------------------------------------------------------


@pytest.fixture
def customer(m: Memseek) -> dict[str, str]:
    """Maria's events and reflection, Bob's event; their ids by a short name."""
    written = m.records.write(
        [
            event("Maria confirmed the Q3 budget.", content={"channel": "email"}, scores={"importance": 7}),
            event("Maria asked about the budget for training.", content={"channel": "call"}),
            event("Bob confirmed the budget too.", BOB),
            reflection("Maria cares about the budget above all."),
        ],
        wait=True,
    )
    return dict(zip(["confirmed", "training", "bob", "reflection"], [w.id for w in written], strict=True))


@pytest.mark.parametrize("mode", ["hybrid", "vector", "text"])
def test_search_modes_with_a_query(m: Memseek, customer: dict[str, str], mode: str) -> None:
    include = ["text", "scores", "collection", "collection_version", "entity", "type", "key", "status",
               "depth", "occurred_at", "created_at", "run_id"]  # fmt: skip
    result = m.search(
        q="budget", mode=mode, scope={"collections": ["customer_events"], "entities": [MARIA]},
        include=include, fields=["channel"], render=True,
    )  # fmt: skip
    assert isinstance(result, SearchResult)
    assert set(result.ids) == {customer["confirmed"], customer["training"]}
    assert [hit.rank for hit in result] == [1, 2] and result[0].score == 1.0
    assert result.ranking.kind == "rank_expression" and result.ranking.scored
    assert result.rendered is not None and result.truncated is False and result.profiles == ("pg_default",)
    assert result.raw["hits"] == [hit.raw for hit in result.hits]
    for hit in result:
        mirrors_json(hit)
        assert hit.entity == MARIA and hit.collection == "customer_events" and hit.fields is not None
        assert hit.rank_score is not None and hit.source_ranks is None


def test_search_recent_takes_no_query(m: Memseek, customer: dict[str, str]) -> None:
    result = m.search({"mode": "recent", "scope": {"entities": [MARIA]}, "k": 2})
    assert result.ids == [customer["reflection"], customer["training"]]


def test_search_structured_has_no_scores(m: Memseek) -> None:
    ids = [w.id for w in m.records.write(
        [meeting("Kick-off", "2026-07-02T09:00:00Z"), meeting("Review", "2026-07-01T09:00:00Z")], wait=True
    )]  # fmt: skip
    result = m.search(
        mode="structured", scope={"collections": ["calendar_events"]},
        order_by=[{"field": "starts_at", "direction": "asc"}], fields=["starts_at", "title"],
    )  # fmt: skip
    assert result.ids == ids[::-1]
    assert (result.ranking.kind, result.ranking.scored) == ("structured", False)
    assert [(hit.score, hit.rank_score) for hit in result] == [(None, None), (None, None)]
    assert [hit.fields and hit.fields["title"] for hit in result] == ["Review", "Kick-off"]


@pytest.mark.parametrize("model", ["all-MiniLM-L6-v2", "all-MiniLM-L6-v2-onnx-int8"])
@pytest.mark.parametrize("mode", ["vector", "hybrid"])
def test_search_with_the_callers_vector(m: Memseek, customer: dict[str, str], mode: str, model: str) -> None:
    """The caller's vector of "budget" (by the catalog's model name or the model id) ranks as the
    service's own embedding of it; hybrid still reads `q` for its keyword side."""
    [vector] = LocalEmbedder().embed(["budget"])
    scope = {"collections": ["customer_events"]}
    mine = m.search(q="budget" if mode == "hybrid" else None, mode=mode, scope=scope, vector=vector,
                    embedding_model=model)  # fmt: skip
    theirs = m.search(q="budget", mode=mode, scope=scope)
    assert mine.ids == theirs.ids and set(mine.ids) == {
        customer["confirmed"],
        customer["training"],
        customer["bob"],
    }
    assert [hit.score for hit in mine] == pytest.approx([hit.score for hit in theirs])


def test_a_vector_of_another_model_is_invalid_at_its_loc(m: Memseek) -> None:
    source = {"name": "a", "mode": "vector", "scope": {"collections": ["customer_events"]}}
    spec = {"sources": [source, {**source, "name": "b", "vector": [0.1] * 3, "embedding_model": "other"}],
            "fuse": {"kind": "rrf"}}  # fmt: skip
    with pytest.raises(InvalidRequest) as caught:
        m.search(spec, vector=[0.1] * 384, embedding_model="all-MiniLM-L6-v2")
    assert caught.value.locs == [["sources", 1, "embedding_model"], ["sources", 1, "vector"]]


def test_combined_search_reports_source_ranks(m: Memseek, customer: dict[str, str]) -> None:
    maria_events = {"collections": ["customer_events"], "entities": [MARIA]}
    spec: dict[str, Any] = {
        "q": "budget",
        "sources": [
            {"name": "events", "mode": "hybrid", "scope": maria_events},
            {"name": "reflections", "mode": "vector", "scope": {"collections": ["reflections"]}},
        ],
        "fuse": {"kind": "rrf"},
    }
    result = m.search(spec, k=3)  # keywords join (and win over) the mapping
    assert result.ranking.kind == "rrf" and len(result) == 3
    assert set(result.ids) == {customer["confirmed"], customer["training"], customer["reflection"]}
    by_id = {hit.id: hit for hit in result}
    assert list(by_id[customer["reflection"]].source_ranks or {}) == ["reflections"]
    assert list(by_id[customer["confirmed"]].source_ranks or {}) == ["events"]
    assert isinstance(result.backend, list)
    assert {backend["source"] for backend in result.backend} == {"events", "reflections"}


def test_context_is_the_rendered_block(m: Memseek, customer: dict[str, str]) -> None:
    text = m.context("budget", entity=MARIA, collection="customer_events", k=1, fence_tag="records",
                     fence_preamble="Memory records follow.")  # fmt: skip
    lines = text.splitlines()
    assert lines[0] == "Memory records follow." and lines[1] == '<records untrusted="true">'
    assert lines[-1] == "</records>" and len(lines) == 4
    assert lines[2].startswith("[id=") and "customer_events/event" in lines[2]
    bare = m.context("budget", entity=BOB)
    assert bare.startswith(f"[id={customer['bob']}]") and "<records" not in bare


# --- views ------------------------------------------------------------------------------------


def test_views_list_publishes_every_version(m: Memseek) -> None:
    views = {(v.name, v.version): v for v in m.views.list()}
    calendar = views[("upcoming_calendar", 2)]
    assert (calendar.active, calendar.kind) == (False, "search")
    assert calendar.description == calendar.raw.get("description")  # published by newer services
    assert calendar.input_schema["required"] == ["entity", "start", "end"]
    assert calendar.parameters["limit"] == {"type": "integer", "required": False, "default": 50}
    assert calendar.hash.startswith("sha256-") and calendar.collections == ("calendar_events",)
    graph = views[("graph_query", 1)]
    assert (graph.active, graph.kind) == (True, "graph") and set(graph.input_schema["properties"]) == {
        "seed", "predicates", "direction", "depth", "limit"
    }  # fmt: skip
    assert (views[("customer_context", 1)].description or "").startswith("The 20 past events of one customer")


def test_search_view(m: Memseek, customer: dict[str, str]) -> None:
    result = m.views.query("customer_context", {"entity": MARIA}, task="budget")
    assert isinstance(result, ViewResult)
    assert (result.view.name, result.view.version) == ("customer_context", 1)
    assert result.parameters == {"entity": MARIA, "task": "budget"}
    assert set(result.ids) == {customer["confirmed"], customer["training"]}
    assert result.input_record_ids == tuple(result.ids)
    assert result.ranking is not None and result.ranking.kind == "rank_expression"
    assert result.rendered is not None and result.paths is None and result.citations is None


def test_fused_view_and_parameter_defaults(m: Memseek, customer: dict[str, str]) -> None:
    fused = m.views.query("customer_context_fused", entity=MARIA, task="budget")
    assert fused.ranking is not None and fused.ranking.kind == "rrf"
    assert all(hit.source_ranks for hit in fused) and customer["reflection"] in fused.ids
    recent = m.views.query("recent_activity", entity=MARIA, channels=["email"])
    assert recent.parameters == {"entity": MARIA, "channels": ["email"], "k": 20}
    assert recent.ids == [customer["confirmed"]] and recent[0].fields == {"channel": "email"}


def test_view_parameters_take_datetimes(m: Memseek) -> None:
    ids = [w.id for w in m.records.write(
        [meeting("Kick-off", "2026-07-02T09:00:00Z"), meeting("Later", "2026-09-01T09:00:00Z")], wait=True
    )]  # fmt: skip
    start, end = datetime(2026, 7, 1, tzinfo=UTC), datetime(2026, 8, 1, tzinfo=UTC)
    result = m.views.query("upcoming_calendar", entity=MARIA, start=start, end=end)
    assert result.ids == ids[:1] and result.parameters["start"] == start.isoformat()


def test_graph_view(m: Memseek) -> None:
    advises, _ = (w.id for w in m.records.write(
        [link("people/maya", "advises", "companies/acme"), link("companies/acme", "owns", "companies/beta")],
        wait=True,
    ))  # fmt: skip
    result = m.views.query("graph_query", seed="  people/maya ", predicates=["advises"], depth=2)
    assert result.parameters == {"seed": "people/maya", "predicates": ["advises"], "direction": "out",
                                 "depth": 2, "limit": 20}  # fmt: skip
    assert result.nodes == ("companies/acme", "people/maya") and result.truncated is False
    [path] = result.paths or ()
    assert (path.nodes, path.edge_ids, path.depth) == (("people/maya", "companies/acme"), (advises,), 1)
    assert result.ids == [advises] and result.input_record_ids == (advises,)
    [hit] = result.citations or ()
    assert (hit.subject, hit.predicate, hit.object) == ("people/maya", "advises", "companies/acme")
    assert hit.content is not None and hit.content["relationship"] == "advises" and hit.rank is None
    assert result.ranking is None and result.backend == [{"kind": "graph", "name": "postgresql"}]


def test_orphan_report(m: Memseek) -> None:
    m.records.write([component("billing", ["ledger"]), component("ledger"), component("lonely")], wait=True)
    result = m.views.query("orphan_pages")
    assert [(hit.entity, hit.key) for hit in result.orphans or ()] == [("lonely", "lonely")]
    assert result.ids == [hit.id for hit in result.orphans or ()] and result.parameters == {"limit": 50}


# --- errors -----------------------------------------------------------------------------------


@pytest.mark.parametrize("record_id", ["0190a0b1-0000-7000-8000-000000000000", "not-a-uuid"])
def test_unknown_record_is_not_found(m: Memseek, record_id: str) -> None:
    with pytest.raises(NotFound) as caught:
        m.records.get(record_id)
    assert (caught.value.status, caught.value.code) == (404, "not_found")


def test_another_workspace_s_record_is_not_found(m: Memseek, service: str, other_tenant: Tenant) -> None:
    with Memseek(service, other_tenant.key) as other:
        [theirs] = other.records.write(event("Bob's secret."))
    with pytest.raises(NotFound):
        m.records.get(theirs.id)


def test_bad_search_is_invalid_with_its_loc(m: Memseek) -> None:
    with pytest.raises(InvalidRequest) as caught:
        m.search(q="budget", mode="hybrid", k=500, include=["colour"])
    error = caught.value
    assert (error.status, error.code) == (422, "invalid_request")
    assert error.locs == [["k"], ["include", 0]]
    assert error.body is not None and error.body["error"]["code"] == "invalid_request"
    assert "k" in str(error)


def test_error_details_are_the_services_own(m: Memseek) -> None:
    """Issue 41 §1: "one `MemseekError` hierarchy mapping the service's error body (`status`,
    `code`, `message`, `details`)" — each detail reads as the body's `{"loc", "msg"}` object, and
    as attributes, its `loc` the JSON list the service wrote."""
    with pytest.raises(InvalidRequest) as caught:
        m.search(q="budget", mode="hybrid", k=500)
    (detail,) = caught.value.details
    assert caught.value.body is not None
    assert caught.value.details == caught.value.body["error"]["details"]
    assert (detail.loc, detail["loc"], detail.msg) == (["k"], ["k"], detail["msg"])


def test_bad_record_is_invalid_with_its_loc(m: Memseek) -> None:
    with pytest.raises(InvalidRequest) as caught:
        m.records.write([event("fine"), event("   ")])
    assert ["records", 1, "text"] in caught.value.locs


def test_bad_key_is_an_authentication_error(service: str) -> None:
    with Memseek(service, "msk_not-a-real-key") as stranger, pytest.raises(AuthenticationError) as caught:
        stranger.search(q="budget", mode="text")
    assert (caught.value.status, caught.value.code) == (401, "unauthorized")


def test_no_key_is_an_authentication_error(service: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("MEMSEEK_API_KEY", raising=False)
    with Memseek(service) as anonymous, pytest.raises(AuthenticationError) as caught:
        anonymous.views.list()
    assert (caught.value.status, caught.value.code) == (401, "unauthorized")
    assert "pass api_key= or set MEMSEEK_API_KEY" in caught.value.message  # what to do


def test_unknown_view_is_not_found(m: Memseek) -> None:
    with pytest.raises(NotFound) as caught:
        m.views.query("no_such_view", entity=MARIA)
    assert "no_such_view" in caught.value.message


def test_nan_is_refused_before_sending(m: Memseek) -> None:
    with pytest.raises(InvalidRequest) as caught:
        m.records.write(event("scored", scores={"importance": float("nan")}))
    assert (caught.value.status, caught.value.locs, caught.value.body) == (422, [["body"]], None)


def test_request_reaches_any_route(m: Memseek) -> None:
    schema = m.request("GET", "/rank/schema")
    assert schema["limits"] == {"max_nodes": 16, "max_levels": 5}
    with pytest.raises(InvalidRequest) as caught:
        m.request("POST", "/search", json={"mode": "hybrid"})
    assert caught.value.locs == [["q"]]
