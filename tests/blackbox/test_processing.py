"""Processing and enrichments (design §1 "Processing and enrichments", "Models"): pending until
embedded and enriched, enrichment answers checked strictly and never guessed, failures retried,
then failed per record, and the workers that run it.
"""

from __future__ import annotations

import json
import time
from typing import Any

import pytest
from flask import Flask

from memseek.runtime import Runtime
from memseek.write.worker import BackgroundWorker
from memseek.write.worker import RetryPolicy
from memseek.write.worker import process_batch
from tests.blackbox.design_support import labelled
from tests.blackbox.design_support import one_id
from tests.blackbox.design_support import post_raw
from tests.blackbox.design_support import process
from tests.blackbox.design_support import rec
from tests.blackbox.design_support import recent
from tests.blackbox.support import ids
from tests.blackbox.support import search
from tests.conftest import Client
from tests.conftest import Tenant
from tests.conftest import client_for
from tests.helpers import cli_env
from tests.helpers import error
from tests.helpers import fetch
from tests.helpers import locs
from tests.helpers import memseek
from tests.helpers import ok
from tests.helpers import post_records
from tests.helpers import view_query
from tests.helpers import with_models
from tests.helpers import written
from tests.helpers import written_ids
from tests.openai_server import OpenAIServer

# --- pending and ready ----------------------------------------------------------------------------


def test_a_record_with_nothing_to_compute_is_ready_at_once(bw: Client) -> None:
    (result,) = written(bw, rec("bw_plain"))
    assert result["processing"] == "ready"
    assert (recent(bw, "bw_plain")[0]["id"]) == result["id"]


def test_a_record_to_embed_is_pending_and_unsearchable_until_processed(
    bw: Client, bw_runtime: Runtime
) -> None:
    (result,) = written(bw, rec("bw_vec", text="needs a vector"))
    assert result["processing"] == "pending"
    assert fetch(bw, result["id"])["processing"] == "pending"
    assert recent(bw, "bw_vec") == []
    assert process(bw_runtime) == 1
    record = fetch(bw, result["id"])
    assert (record["processing"], record["processing_error"]) == ("ready", None)
    assert [h["id"] for h in recent(bw, "bw_vec")] == [result["id"]]
    body = {"q": "needs a vector", "mode": "vector", "scope": {"collections": ["bw_vec"]}}
    hits = bw.post("/search", json=body).get_json()["hits"]
    assert [h["id"] for h in hits] == [result["id"]]


Messages = list[dict[str, Any]]


def answer(score: Any = 7, label: Any = "positive") -> Any:
    """A chat reply that rates `importance` and labels `sentiment` (whichever the prompt asks)."""

    def reply(messages: Messages) -> str:
        system = " ".join(str(m.get("content")) for m in messages if m.get("role") == "system")
        return json.dumps({"label": label} if '"label"' in system else {"score": score})

    return reply


def replies(server: OpenAIServer, n: int, **values: Any) -> None:
    server.reply_with(*[answer(**values)] * n)


def test_enrichments_run_through_the_cheap_model(
    sclient: Client, served: Runtime, openai_server: OpenAIServer
) -> None:
    replies(openai_server, 2, score=7, label="positive")
    (result,) = written(sclient, rec("bw_enriched", text="Maria confirmed the Q3 budget."))
    assert result["processing"] == "pending"
    process(served)
    record = fetch(sclient, result["id"])
    assert record["processing"] == "ready"
    assert record["scores"] == {"importance": 7}
    assert record["annotations"] == {"sentiment": {"label": "positive"}}
    chats = [r for r in openai_server.requests if r.path.endswith("/chat/completions")]
    assert len(chats) == 2 and all(r.body["model"] == "gpt-4o-mini" for r in chats)
    assert all(r.headers.get("authorization") == "Bearer test-key" for r in chats)
    assert all("Maria confirmed the Q3 budget." in json.dumps(r.body) for r in chats)


def test_the_design_collection_processes_end_to_end(
    sclient: Client, served: Runtime, openai_server: OpenAIServer
) -> None:
    replies(openai_server, 2, score=9, label="neutral")
    (result,) = written(
        sclient,
        rec(
            "customer_events",
            entity="contact.maria",
            text="Maria confirmed the Q3 budget.",
            content={"meta": {"channel": "email"}},
        ),
    )
    assert result["processing"] == "pending"
    process(served)
    record = fetch(sclient, result["id"])
    assert (record["processing"], record["scores"]) == ("ready", {"importance": 9})
    assert record["annotations"] == {"sentiment": {"label": "neutral"}}
    assert record["collection_version"] == 2
    body = ok(view_query(sclient, "customer_context", {"entity": "contact.maria", "task": "Q3 budget"}))
    assert [h["id"] for h in body["hits"]] == [result["id"]]
    assert "importance 9" in body["rendered"]  # scores: importance: {display: true}


def test_supplied_enrichment_values_are_not_computed(sclient: Client, openai_server: OpenAIServer) -> None:
    (result,) = written(
        sclient,
        rec("bw_enriched", scores={"importance": 3}, annotations={"sentiment": {"label": "negative"}}),
    )
    assert result["processing"] == "ready"
    assert openai_server.requests == []


def test_only_the_missing_enrichment_is_computed(
    sclient: Client, served: Runtime, openai_server: OpenAIServer
) -> None:
    replies(openai_server, 1, label="neutral")
    (result,) = written(sclient, rec("bw_enriched", scores={"importance": 3}))
    assert result["processing"] == "pending"
    process(served)
    record = fetch(sclient, result["id"])
    assert record["scores"] == {"importance": 3}
    assert record["annotations"] == {"sentiment": {"label": "neutral"}}
    assert len(openai_server.requests) == 1


@pytest.mark.parametrize(
    ("record", "loc"),
    [
        pytest.param(
            rec("bw_enriched", scores={"importance": 11}), ["scores", "importance"], id="score-above-range"
        ),
        pytest.param(
            rec("bw_enriched", scores={"importance": 0.5}), ["scores", "importance"], id="score-below-range"
        ),
        pytest.param(
            rec("bw_enriched", annotations={"sentiment": {"label": "ecstatic"}}),
            ["annotations", "sentiment"],
            id="label-not-allowed",
        ),
        pytest.param(
            rec("bw_enriched", annotations={"sentiment": "positive"}),
            ["annotations", "sentiment"],
            id="label-not-an-object",
        ),
        pytest.param(rec("bw_client"), ["annotations", "region"], id="client-enrichment-missing"),
        pytest.param(
            rec("bw_client", annotations={"region": None}),
            ["annotations", "region"],
            id="client-enrichment-null",
        ),
    ],
)
def test_invalid_or_missing_enrichment_values_are_422(
    bw: Client, record: dict[str, Any], loc: list[str]
) -> None:
    assert locs(post_records(bw, record)) == [["records", 0, *loc]]


def test_a_client_enrichment_supplied_by_the_writer_is_ready_at_once(bw: Client) -> None:
    (result,) = written(bw, rec("bw_client", annotations={"region": "eu-west"}))
    assert result["processing"] == "ready"
    assert fetch(bw, result["id"])["annotations"] == {"region": "eu-west"}


def test_a_record_needing_nothing_is_ready_and_one_needing_an_embedding_is_pending(
    bw: Client, bw_runtime: Runtime
) -> None:
    """§1: "A written record starts `pending` if anything must be computed for it, else `ready`";
    "only `ready` records are searchable"."""
    plain, vec = written_ids(bw, rec(text="plain one"), rec("bw_vec", text="to embed"))
    assert [fetch(bw, i)["processing"] for i in (plain, vec)] == ["ready", "pending"]
    assert recent(bw, "bw_vec") == []
    process(bw_runtime)
    assert fetch(bw, vec)["processing"] == "ready"
    assert len(recent(bw, "bw_vec")) == 1


def test_supplied_enrichments_are_not_computed(bw: Client) -> None:
    """§1: processing is "each enrichment the collection requires whose value was not supplied by
    the writer"."""
    full = rec("bw_enriched", scores={"importance": 4}, annotations={"sentiment": {"label": "neutral"}})
    half = rec("bw_enriched", scores={"importance": 4})
    assert [r["processing"] for r in written(bw, full, half)] == ["ready", "pending"]


def test_a_failed_record_shows_its_error_and_is_never_searched(bw: Client, bw_runtime: Runtime) -> None:
    """§1: "failures are retried with backoff, then the record is `failed` (visible through
    `GET /records/{id}` with the error, never in search)"; an unconfigured provider makes "the
    records that need it stay `pending`, then `failed`"."""
    record_id = one_id(bw, rec("bw_remote", text="needs the remote model"))
    assert fetch(bw, record_id)["processing"] == "pending"
    process(bw_runtime, max_attempts=2)
    stored = fetch(bw, record_id)
    assert stored["processing"] == "failed"
    assert isinstance(stored["processing_error"], str) and stored["processing_error"]
    assert recent(bw, "bw_remote") == []


def test_a_client_enrichment_must_be_supplied(bw: Client) -> None:
    """§1 enrichments: `kind: client` — "the writer must supply annotations.region"."""
    ok_id = one_id(bw, rec("bw_client", annotations={"region": "eu"}))
    assert fetch(bw, ok_id)["processing"] == "ready"
    response = post_records(bw, rec("bw_client"))
    assert response.status_code == 422 or fetch(bw, response.get_json()["records"][0]["id"])[
        "processing"
    ] in (
        "pending",
        "failed",
    )


# --- enrichment answers: strict, never guessed ----------------------------------------------------


@pytest.mark.parametrize(
    ("raw_score", "raw_label", "failing"),
    [
        pytest.param('{"score": true}', '{"label": "positive"}', "importance", id="score-boolean"),
        pytest.param('{"score": "7"}', '{"label": "positive"}', "importance", id="score-numeric-string"),
        pytest.param('{"score": NaN}', '{"label": "positive"}', "importance", id="score-nan"),
        pytest.param('{"score": Infinity}', '{"label": "positive"}', "importance", id="score-infinity"),
        pytest.param('{"score": 1e999}', '{"label": "positive"}', "importance", id="score-overflow"),
        pytest.param('{"score": null}', '{"label": "positive"}', "importance", id="score-null"),
        pytest.param('{"score": 10.001}', '{"label": "positive"}', "importance", id="score-just-above"),
        pytest.param('{"score": 0.999}', '{"label": "positive"}', "importance", id="score-just-below"),
        pytest.param('{"score": [7]}', '{"label": "positive"}', "importance", id="score-list"),
        pytest.param("[7]", '{"label": "positive"}', "importance", id="answer-list"),
        pytest.param('{"score": 7}', '{"label": "Positive"}', "sentiment", id="label-other-case"),
        pytest.param('{"score": 7}', '{"label": " positive"}', "sentiment", id="label-padded"),
        pytest.param('{"score": 7}', '{"label": null}', "sentiment", id="label-null"),
        pytest.param('{"score": 7}', '{"label": ["positive"]}', "sentiment", id="label-list"),
        pytest.param('{"score": 7}', '"positive"', "sentiment", id="answer-bare-string"),
    ],
)
def test_an_invalid_enrichment_answer_fails_the_record_after_its_retries(
    sclient: Client,
    served: Runtime,
    openai_server: OpenAIServer,
    raw_score: str,
    raw_label: str,
    failing: str,
) -> None:
    """Design §1: `llm_score` "range: [1, 10]", `llm_label` "labels: [positive, neutral,
    negative]"; "failures are retried with backoff, then the record is `failed` (visible through
    `GET /records/{id}` with the error, never in search)" — never a guessed value."""

    def reply(messages: Messages) -> str:
        return raw_label if '"label"' in messages[0]["content"] else raw_score

    openai_server.reply_with(*[reply] * 20)
    (result,) = written(sclient, rec("bw_enriched", text="judge me strictly"))
    process(served, max_attempts=2)
    record = fetch(sclient, result["id"])
    assert record["processing"] == "failed"
    assert record["processing_error"].count(f"enrichment {failing!r}") == 1, record["processing_error"]
    if failing == "importance":
        assert "importance" not in record["scores"]
    else:
        assert "sentiment" not in record["annotations"]
    body = {"mode": "recent", "scope": {"collections": ["bw_enriched"]}}
    assert ids(search(sclient, body)) == []


@pytest.mark.parametrize(
    ("score", "label"),
    [
        pytest.param(1, "negative", id="lowest-score"),
        pytest.param(10, "neutral", id="highest-score"),
        pytest.param(10.0, "positive", id="highest-as-float"),
    ],
)
def test_answers_at_the_ends_of_the_range_are_stored(
    sclient: Client, served: Runtime, openai_server: OpenAIServer, score: float, label: str
) -> None:
    """Design §1: `range: [1, 10]`, `labels: [positive, neutral, negative]`; "All succeed →
    `ready`"."""
    openai_server.reply_with(*[labelled(score=score, label=label)] * 4)
    (result,) = written(sclient, rec("bw_enriched", text="the ends of the range"))
    process(served)
    record = fetch(sclient, result["id"])
    assert record["processing"] == "ready"
    assert record["scores"] == {"importance": score}
    assert record["annotations"] == {"sentiment": {"label": label}}


@pytest.mark.parametrize("status", [401, 404, 500])
def test_a_chat_provider_error_fails_the_record_with_the_error_and_no_address(
    sclient: Client, served: Runtime, openai_server: OpenAIServer, status: int
) -> None:
    """Design §1: "failures are retried with backoff, then the record is `failed` (visible through
    `GET /records/{id}` with the error)"; Models: "the records that need it stay `pending`, then
    `failed`"."""
    openai_server.fail_next(status, times=200)
    (result,) = written(sclient, rec("bw_enriched", text="the chat model fails"))
    process(served, max_attempts=1)
    record = fetch(sclient, result["id"])
    assert record["processing"] == "failed"
    assert record["processing_error"] and str(status) in record["processing_error"]
    assert (record["scores"], record["annotations"]) == ({}, {})
    assert openai_server.base_url not in record["processing_error"]
    assert "test-key" not in record["processing_error"]


def test_a_missing_client_enrichment_is_located_at_its_record(sx: Client) -> None:
    """Design §1: `region: kind: client  # the writer must supply annotations.region`; §3: "any
    invalid record → `422` listing every problem by index"."""
    good = {
        "collection": "sx_tagged",
        "entity": "e",
        "type": "note",
        "text": "t",
        "annotations": {"sx_region": "eu"},
    }
    missing = {**good, "annotations": {}}
    in_scores = {**good, "annotations": {}, "scores": {"sx_region": 1}}
    assert locs(post_records(sx, good, missing, in_scores)) == [
        ["records", 1, "annotations", "sx_region"],
        ["records", 2, "annotations", "sx_region"],
    ]


@pytest.mark.parametrize(
    ("raw_score", "accepted"),
    [
        pytest.param("true", False, id="boolean"),
        pytest.param('"5"', False, id="numeric-string"),
        pytest.param("0", False, id="below"),
        pytest.param("1", True, id="lowest"),
        pytest.param("10", True, id="highest"),
        pytest.param("1e400", False, id="overflow"),
    ],
)
def test_a_supplied_llm_score_is_a_number_within_its_range(
    sx: Client, raw_score: str, accepted: bool
) -> None:
    """Design §1: records' `scores` are "name → finite number"; `llm_score` `range: [1, 10]`;
    a supplied value is not computed again."""
    record = {
        "collection": "sx_tagged",
        "entity": "e",
        "type": "note",
        "text": "t",
        "annotations": {"sx_region": "eu"},
    }
    raw = json.dumps({"records": [record]})[:-3] + ', "scores": {"sx_rating": ' + raw_score + "}}]}"
    response = post_raw(sx, "/records", raw)
    if accepted:
        assert response.status_code == 201, response.get_data(as_text=True)
        assert response.get_json()["records"][0]["processing"] == "ready"
    else:
        assert locs(response) == [["records", 0, "scores", "sx_rating"]]


# --- failures: retried, then failed; per record ---------------------------------------------------


@pytest.mark.parametrize(
    "bad",
    [
        pytest.param({"score": 11}, id="score-out-of-range"),
        pytest.param({"score": "seven"}, id="score-not-a-number"),
        pytest.param({"label": "ecstatic"}, id="label-not-allowed"),
        pytest.param({"rating": 7}, id="wrong-shape"),
    ],
)
def test_invalid_model_output_fails_the_record_and_is_never_guessed(
    sclient: Client, served: Runtime, openai_server: OpenAIServer, bad: dict[str, Any]
) -> None:
    openai_server.reply_with(*[json.dumps(bad)] * 20)
    (result,) = written(sclient, rec("bw_enriched", text="rate me"))
    process(served, max_attempts=3)
    record = fetch(sclient, result["id"])
    assert record["processing"] == "failed"
    assert record["processing_error"] and (
        "importance" in record["processing_error"] or "sentiment" in record["processing_error"]
    )
    assert (record["scores"], record["annotations"]) == ({}, {})  # nothing clamped or guessed
    assert recent(sclient, "bw_enriched") == []


def test_non_json_model_output_fails_the_record(
    sclient: Client, served: Runtime, openai_server: OpenAIServer
) -> None:
    openai_server.reply_with(*["about seven, I think"] * 20)
    (result,) = written(sclient, rec("bw_enriched"))
    process(served, max_attempts=2)
    record = fetch(sclient, result["id"])
    assert (record["processing"], record["scores"], record["annotations"]) == ("failed", {}, {})
    assert record["processing_error"]


def test_a_failure_is_retried_and_a_later_success_makes_the_record_ready(
    sclient: Client, served: Runtime, openai_server: OpenAIServer
) -> None:
    openai_server.reply_with("not json", "not json", answer(), answer())
    (result,) = written(sclient, rec("bw_enriched"))
    policy = RetryPolicy(max_attempts=5, base_delay=0.0)
    assert process_batch(served, 64, policy) == 1
    assert fetch(sclient, result["id"])["processing"] == "pending"
    assert process_batch(served, 64, policy) == 1
    record = fetch(sclient, result["id"])
    assert (record["processing"], record["scores"]) == ("ready", {"importance": 7})


def test_retries_back_off(sclient: Client, served: Runtime, openai_server: OpenAIServer) -> None:
    openai_server.reply_with(*["not json"] * 4)
    written(sclient, rec("bw_enriched"))
    assert process_batch(served, 64, RetryPolicy(max_attempts=5)) == 1
    # the next attempt is scheduled seconds ahead, so nothing is due right now
    assert process_batch(served, 64, RetryPolicy(max_attempts=5)) == 0


def test_an_unconfigured_provider_leaves_records_pending_then_failed(bw: Client, bw_runtime: Runtime) -> None:
    unconfigured = with_models(bw_runtime, {})
    (result,) = written(bw, rec("bw_remote", text="needs the remote model"))
    assert result["processing"] == "pending"
    assert process_batch(unconfigured, 64, RetryPolicy(max_attempts=2, base_delay=0.0)) == 1
    assert fetch(bw, result["id"])["processing"] == "pending"
    process(unconfigured, max_attempts=2)
    record = fetch(bw, result["id"])
    assert record["processing"] == "failed"
    assert "OPENAI_BASE_URL" in record["processing_error"]


def test_reads_that_need_an_unavailable_provider_are_503(bw_runtime: Runtime, bw_ws: Tenant) -> None:
    client = client_for(with_models(bw_runtime, {}), bw_ws)
    body = {"q": "anything", "mode": "vector", "scope": {"collections": ["bw_remote"]}}
    error(client.post("/search", json=body), 503)
    # reads that do not need it still work
    assert (
        client.post("/search", json={"mode": "recent", "scope": {"collections": ["bw_remote"]}}).status_code
        == 200
    )


def test_remote_embeddings_come_from_the_openai_protocol(
    sclient: Client, served: Runtime, openai_server: OpenAIServer
) -> None:
    (result,) = written(sclient, rec("bw_remote", text="remote vector"))
    process(served)
    assert fetch(sclient, result["id"])["processing"] == "ready"
    calls = [r for r in openai_server.requests if r.path.endswith("/embeddings")]
    assert calls and calls[0].body["model"] == "text-embedding-3-small"
    body = {"q": "remote vector", "mode": "vector", "scope": {"collections": ["bw_remote"]}}
    assert [h["id"] for h in sclient.post("/search", json=body).get_json()["hits"]] == [result["id"]]


def test_memseek_worker_processes_pending_records(bw: Client, bw_url: str, bw_catalog: Any) -> None:
    pending = written_ids(bw, rec("bw_vec", text="one"), rec("bw_vec", text="two"))
    env = cli_env(DATABASE_URL=bw_url, MEMSEEK_CATALOG=str(bw_catalog))
    result = memseek(env, "worker", "--once")
    assert result.returncode == 0, result.stderr
    assert [fetch(bw, i)["processing"] for i in pending] == ["ready", "ready"]


def test_the_in_process_worker_of_serve_processes_records(
    bw_runtime: Runtime, bw_app: Flask, bw_ws: Tenant
) -> None:
    from memseek.write.worker import start_background_worker

    worker = start_background_worker(bw_runtime)
    try:
        (result,) = written(Client(bw_app.test_client(), bw_ws), rec("bw_vec"), query="?wait=true&timeout=30")
    finally:
        worker.stop()
    assert result["processing"] == "ready"


def test_a_failing_provider_fails_only_the_records_that_need_it(bw: Client, bw_runtime: Runtime) -> None:
    """Design §1 Models: "the records that need it stay `pending`, then `failed`"; Processing: "All
    succeed → `ready`" — a record of a collection embedded by another model is not held back."""
    unconfigured = with_models(bw_runtime, {})
    remote, local = written_ids(bw, rec("bw_remote", text="needs remote"), rec("bw_vec", text="needs local"))
    process(unconfigured, max_attempts=2)
    assert [fetch(bw, i)["processing"] for i in (remote, local)] == ["failed", "ready"]


def test_an_enrichment_failure_fails_only_its_own_record(
    sclient: Client, served: Runtime, openai_server: OpenAIServer
) -> None:
    """Design §1: failures are retried, "then the record is `failed`" — the record, not its batch."""

    def reply(messages: Messages) -> str:
        if "poison" in json.dumps(messages):
            return "no json here"
        return '{"label": "neutral"}' if '"label"' in messages[0]["content"] else '{"score": 4}'

    openai_server.reply_with(*[reply] * 40)
    poisoned, healthy = written_ids(
        sclient, rec("bw_enriched", text="poison"), rec("bw_enriched", text="fine")
    )
    process(served, max_attempts=2)
    assert [fetch(sclient, i)["processing"] for i in (poisoned, healthy)] == ["failed", "ready"]
    assert ids(search(sclient, {"mode": "recent", "scope": {"collections": ["bw_enriched"]}})) == [healthy]


def test_the_error_shown_is_the_last_attempts(
    sclient: Client, served: Runtime, openai_server: OpenAIServer
) -> None:
    """Design §1: "failures are retried with backoff, then the record is `failed` (visible through
    `GET /records/{id}` with the error)" — the error that made it fail, after the last try."""
    openai_server.fail_next(401, times=2)  # first attempt: both chat calls refused
    openai_server.reply_with(*['{"mood": "fine"}'] * 10)  # second attempt: answers of the wrong shape
    (result,) = written(sclient, rec("bw_enriched", text="two different failures"))
    process(served, max_attempts=2)
    record = fetch(sclient, result["id"])
    assert record["processing"] == "failed"
    assert "401" not in record["processing_error"] and "mood" in record["processing_error"]


def test_a_transient_provider_error_is_retried_to_ready(
    sclient: Client, served: Runtime, openai_server: OpenAIServer
) -> None:
    """Design §1: "failures are retried with backoff" and "All succeed → `ready`"."""
    openai_server.fail_next(503, times=1)
    (result,) = written(sclient, rec("bw_remote", text="one hiccup"))
    process(served, max_attempts=2)
    assert fetch(sclient, result["id"])["processing"] == "ready"


def test_wait_returns_the_failed_state_as_soon_as_processing_gives_up(
    bw: Client, bw_runtime: Runtime
) -> None:
    """Design §3: `?wait=true` "returns once those records are processed or the timeout passes, with
    their states"; §1: after the last try "the record is `failed`"."""
    worker = BackgroundWorker(
        with_models(bw_runtime, {}), policy=RetryPolicy(max_attempts=1, base_delay=0.0), idle_seconds=0.2
    ).start()
    try:
        started = time.monotonic()
        (result,) = written(bw, rec("bw_remote", text="gives up"), query="?wait=true&timeout=30")
        elapsed = time.monotonic() - started
    finally:
        worker.stop()
    assert result["processing"] == "failed"
    assert elapsed < 20
    assert fetch(bw, result["id"])["processing_error"]


def test_a_record_ready_after_a_retry_shows_no_processing_error(
    bw: Client, served: Runtime, openai_server: Any
) -> None:
    """§1: "failures are retried with backoff, then the record is `failed` (visible through `GET
    /records/{id}` with the error)"; a record that ends `ready` has no error to show."""
    failed_once: set[bool] = set()

    def reply(messages: list[dict[str, Any]]) -> str:
        """Each enrichment's first answer is not JSON, its second valid, whatever order the
        worker asks in (the score and the label are separate requests)."""
        label = '"label"' in messages[0]["content"]
        if label not in failed_once:
            failed_once.add(label)
            return "not json"
        return '{"label": "neutral"}' if label else '{"score": 7}'

    openai_server.reply_with(*[reply] * 20)  # enough for other pending records a worker claims too
    (result,) = written(bw, rec("bw_enriched"))
    process(served, max_attempts=5)
    record = fetch(bw, result["id"])
    assert (record["processing"], record["processing_error"]) == ("ready", None)
    assert record["scores"] == {"importance": 7} and record["annotations"] == {
        "sentiment": {"label": "neutral"}
    }
