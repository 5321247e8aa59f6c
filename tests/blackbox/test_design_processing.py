"""Design §1 "Processing and enrichments" and "Models": pending → ready | failed, retries, the cheap model.

The `cheap` chat model and the `remote` embeddings speak the OpenAI protocol; they are served by
the local test server (`openai_server`), configured through the environment variables the design's
conf/models.yaml names (OPENAI_BASE_URL, OPENAI_API_KEY).
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from flask import Flask

from memseek.runtime import Runtime
from memseek.write.worker import RetryPolicy
from memseek.write.worker import process_batch
from tests.blackbox.design_support import process
from tests.blackbox.design_support import rec
from tests.blackbox.design_support import recent
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


# --- failures: retried, then failed; never guessed ------------------------------------------------


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
