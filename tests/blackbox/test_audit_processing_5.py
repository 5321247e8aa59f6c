"""Audit (processing, enrichments, models, provider failures): design §1 "Processing and
enrichments", "Models", "Records"; §3 `POST /records` (`?wait=true`, `embedding`); the spec's
"Errors" (503) and "Embed once, if needed".

Providers speak the real OpenAI protocol (tests/openai_server.py) with scripted failures and
malformed answers. The `sx_` app's `sx_embed` alias never retries (`max_retries: 0`), so one
scripted failure is one unavailable provider.
"""

from __future__ import annotations

import json
import time
from typing import Any

import pytest

from memseek.runtime import Runtime
from memseek.write.worker import BackgroundWorker
from memseek.write.worker import RetryPolicy
from tests.blackbox.conftest import ClientFactory
from tests.blackbox.design_support import VECTOR
from tests.blackbox.design_support import count_records
from tests.blackbox.design_support import process
from tests.blackbox.design_support import rec
from tests.blackbox.support import EMBED_ENV
from tests.blackbox.support import EMBED_MODEL
from tests.blackbox.support import ids
from tests.blackbox.support import note
from tests.blackbox.support import search
from tests.blackbox.support import vec
from tests.blackbox.support import write
from tests.conftest import Client
from tests.conftest import Tenant
from tests.conftest import client_for
from tests.helpers import error
from tests.helpers import fetch
from tests.helpers import fixture_catalog
from tests.helpers import free_port
from tests.helpers import locs
from tests.helpers import ok
from tests.helpers import post_records
from tests.helpers import runtime_for
from tests.helpers import view_query
from tests.helpers import with_models
from tests.helpers import written
from tests.helpers import written_ids
from tests.openai_server import OpenAIServer
from tests.openai_server import hashed_embedding

# --- a provider that is down: 503, one error shape, nothing internal ------------------------------


COMBINED = {
    "q": "down provider",
    "sources": [
        {"name": "words", "mode": "text", "scope": {"collections": ["sx_notes"]}},
        {"name": "meaning", "mode": "vector", "scope": {"collections": ["sx_vec"]}},
    ],
    "fuse": {"kind": "rrf"},
}
VECTOR_SEARCH = {"q": "down provider", "mode": "vector", "scope": {"collections": ["sx_vec"]}}
READS_NEEDING_EMBEDDINGS = [
    pytest.param("POST", "/search", VECTOR_SEARCH, id="vector"),
    pytest.param("POST", "/search", {**VECTOR_SEARCH, "mode": "hybrid"}, id="hybrid"),
    pytest.param("POST", "/search", COMBINED, id="combined-text-and-vector"),
    pytest.param("GET", "/search?q=down%20provider", None, id="get-search"),
    pytest.param("GET", "/context?q=down%20provider", None, id="get-context"),
]


def leaks(err: dict[str, Any], *secrets: str) -> list[str]:
    """Which of `secrets` (or a traceback) the error's text shows."""
    text = json.dumps(err)
    return [s for s in (*secrets, "Traceback", "scripted") if s in text]


@pytest.mark.parametrize(("method", "path", "body"), READS_NEEDING_EMBEDDINGS)
def test_a_failing_provider_is_503_in_the_one_shape_and_leaks_nothing(
    sx: Client, server: OpenAIServer, method: str, path: str, body: Any
) -> None:
    """Design §1 Models: "A provider that is unconfigured or unreachable makes the reads that need
    it fail with `503` … never silently ranked without it"; §3: "Error body, every route:
    `{"error": {"code", "message", "details"}}`"; brief: "Never let a 500 leak internals"."""
    write(sx, vec("down provider"), note("down provider"))
    server.fail_next(500, times=10)
    err = error(sx.request(method, path, json=body), 503)
    assert leaks(err, server.base_url, server.base_url.rsplit(":", 1)[1], "sx-key") == []


@pytest.mark.parametrize(("method", "path", "body"), READS_NEEDING_EMBEDDINGS)
def test_an_unreachable_provider_is_503_without_its_address(
    sx: Client, sx_with: ClientFactory, server: OpenAIServer, method: str, path: str, body: Any
) -> None:
    """Design §1 Models: "unconfigured or unreachable … fail with `503`"; the address of an
    internal service is not the client's business (docs/models.md: "never the base URL")."""
    write(sx, vec("down provider"), note("down provider"))
    port = free_port()
    client = sx_with(environ={EMBED_ENV: f"http://127.0.0.1:{port}", **server.environ(api_key="sx-key")})
    err = error(client.request(method, path, json=body), 503)
    assert leaks(err, f"127.0.0.1:{port}", str(port)) == []


def test_a_combined_search_is_not_ranked_without_its_vector_source(
    sx: Client, sx_with: ClientFactory
) -> None:
    """Design §1 Models: reads that need the provider "fail with `503` … never silently ranked
    without it" — the text source alone is not an answer."""
    write(sx, vec("down provider"), note("down provider"))
    error(sx_with(environ={}).post("/search", json=COMBINED), 503)


READS_WITHOUT_EMBEDDINGS = [
    pytest.param({"q": "offline words", "mode": "text"}, id="text"),
    pytest.param(
        {"q": "offline words", "mode": "text", "scope": {"collections": ["sx_vec"]}}, id="text-sx-vec"
    ),
    pytest.param({"mode": "recent", "scope": {"collections": ["sx_vec"]}}, id="recent-sx-vec"),
    pytest.param({"q": "offline words", "mode": "recent"}, id="recent-with-q"),
    pytest.param(
        {"mode": "structured", "scope": {"collections": ["sx_notes"]}, "order_by": [{"field": "amount"}]},
        id="structured",
    ),
    pytest.param(
        {
            "q": "offline words",
            "sources": [
                {"name": "words", "mode": "text", "scope": {"collections": ["sx_vec"]}},
                {"name": "latest", "mode": "recent", "scope": {"collections": ["sx_vec"]}},
            ],
            "fuse": {"kind": "rrf"},
        },
        id="combined-text-and-recent",
    ),
]


def embedding_calls(server: OpenAIServer) -> list[Any]:
    """The bodies of the embedding requests the server received."""
    return [r.body for r in server.requests if r.path == "/v1/embeddings"]


@pytest.mark.parametrize("body", READS_WITHOUT_EMBEDDINGS)
def test_text_recent_and_structured_work_while_the_provider_is_down(
    sx: Client, server: OpenAIServer, body: dict[str, Any]
) -> None:
    """Spec: "Text, recent, and structured searches never call the embedding provider" — so a
    provider that is down does not fail them."""
    (vector_id,) = write(sx, vec("offline words"))
    (note_id,) = write(sx, note("offline words", content={"amount": 1}))
    server.fail_next(500, times=10)
    found = ids(search(sx, body))
    assert found and set(found) <= {vector_id, note_id}
    assert embedding_calls(server) == []


def test_views_without_vector_searches_work_while_the_provider_is_down(
    sx: Client, sx_with: ClientFactory
) -> None:
    """Spec: "Text, recent, and structured searches never call the embedding provider"."""
    (record,) = write(sx, note("offline view words", entity="e-view"))
    offline = sx_with(environ={})
    body = ok(view_query(offline, "sx_context", {"entity": "e-view", "task": "offline view words"}))
    assert ids(body) == [record]
    assert ok(view_query(offline, "sx_fused", {"task": "offline view words"}))["hits"]
    assert ok(view_query(offline, "sx_walk", {"seed": "nobody"}))["hits"] == []
    assert ok(offline.get("/views"))["views"]


# --- the query is embedded once per request -------------------------------------------------------


def test_the_query_is_embedded_once_across_every_search_of_a_request(
    sx: Client, server: OpenAIServer
) -> None:
    """Spec: "If any search is vector or hybrid, the query is embedded once and that vector is
    shared"; design §5: "embed — once per request"."""
    write(sx, vec("shared query vector"), note("shared query vector"))
    body = {
        "q": "shared query vector",
        "sources": [
            {"name": "v1", "mode": "vector", "scope": {"collections": ["sx_vec"]}},
            {"name": "v2", "mode": "vector", "scope": {"collections": ["sx_vec"]}, "k": 3},
            {"name": "h", "mode": "hybrid", "scope": {"collections": ["sx_vec"]}},
            {"name": "t", "mode": "text", "scope": {"collections": ["sx_notes"]}},
        ],
        "fuse": {"kind": "rrf"},
    }
    assert len(search(sx, body)["hits"]) == 2
    (call,) = embedding_calls(server)
    texts = call["input"] if isinstance(call["input"], list) else [call["input"]]
    assert texts == ["shared query vector"]


# --- a record that is not ready is never returned -------------------------------------------------


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
Messages = list[dict[str, Any]]


def labelled(score: Any = 7, label: Any = "positive") -> Any:
    """A chat reply: `{"label": label}` to the label prompt, `{"score": score}` to the score one."""

    def reply(messages: Messages) -> str:
        system = " ".join(str(m.get("content")) for m in messages if m.get("role") == "system")
        return json.dumps({"label": label} if '"label"' in system else {"score": score})

    return reply


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
    assert failing in record["processing_error"]
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


# --- embeddings a provider gets wrong -------------------------------------------------------------


def embeddings_body(*vectors: list[float]) -> dict[str, Any]:
    data = [{"object": "embedding", "index": i, "embedding": v} for i, v in enumerate(vectors)]
    return {"object": "list", "data": data, "model": "text-embedding-3-small"}


BAD_EMBEDDINGS = [
    pytest.param(embeddings_body([0.1] * 383), id="too-few-dimensions"),
    pytest.param(embeddings_body([0.1] * 385), id="too-many-dimensions"),
    pytest.param(embeddings_body(), id="no-vector"),
    pytest.param(embeddings_body([0.1] * 384, [0.1] * 384), id="two-vectors-for-one-text"),
    pytest.param({"object": "list", "data": [{"index": 0, "embedding": "x"}]}, id="not-numbers"),
    pytest.param(b"not json at all", id="not-json"),
    pytest.param(
        ('{"data": [{"index": 0, "embedding": [' + ", ".join(["0.1"] * 383 + ["NaN"]) + "]}]}").encode(),
        id="nan",
    ),
]


@pytest.mark.parametrize("answer", BAD_EMBEDDINGS)
def test_a_bad_query_embedding_is_503_never_a_500(sx: Client, server: OpenAIServer, answer: Any) -> None:
    """Spec Errors: "Embeddings … are unavailable → 503"; design §1: "never silently ranked
    without it"."""
    write(sx, vec("bad embedding answer"))
    server.respond_next(answer, times=5)
    err = error(sx.post("/search", json={**VECTOR_SEARCH, "q": "bad embedding answer"}), 503)
    assert leaks(err, server.base_url) == []


@pytest.mark.parametrize("answer", BAD_EMBEDDINGS)
def test_a_bad_record_embedding_fails_the_record_and_stores_no_vector(
    sclient: Client, served: Runtime, openai_server: OpenAIServer, answer: Any
) -> None:
    """Design §1: a provider's failure leaves the record "`pending`, then `failed` — never silently
    ranked without it"; "Store the model id with every vector and never mix models in one index"."""
    openai_server.respond_next(answer, times=50)
    (result,) = written(sclient, rec("bw_remote", text="bad record embedding"))
    process(served, max_attempts=2)
    record = fetch(sclient, result["id"])
    assert record["processing"] == "failed" and record["processing_error"]
    openai_server.reset()  # the provider recovers: the failed record still stays out of searches
    body = {"q": "bad record embedding", "mode": "vector", "scope": {"collections": ["bw_remote"]}}
    assert ids(search(sclient, body)) == []


def test_embeddings_answered_out_of_order_go_to_their_own_records(
    sclient: Client, served: Runtime, openai_server: OpenAIServer
) -> None:
    """Design §1: each record gets its own embedding ("Store the model id with every vector"); the
    OpenAI protocol numbers the answers by `index`."""
    openai_server.reverse_embeddings = True
    texts = ["alpha apples orchard", "bravo boats harbour", "charlie cables network"]
    record_ids = written_ids(sclient, *(rec("bw_remote", text=t) for t in texts))
    process(served)
    openai_server.reverse_embeddings = False
    for text, record_id in zip(texts, record_ids, strict=True):
        body = {"q": text, "mode": "vector", "scope": {"collections": ["bw_remote"]}, "k": 1}
        assert ids(search(sclient, body)) == [record_id]


def test_a_zero_query_vector_is_answered_with_finite_scores_or_503(sx: Client, server: OpenAIServer) -> None:
    """Spec, Rank expressions: "Every value produced must be finite"; Errors: unusable embeddings
    are a 503 — never a 500 or a NaN score."""
    write(sx, vec("zero query vector"))
    server.respond_next(embeddings_body([0.0] * 384), times=2)
    response = sx.post("/search", json={**VECTOR_SEARCH, "q": "zero query vector", "include": ["scores"]})
    if response.status_code != 200:
        error(response, 503)
        return
    for hit in response.get_json()["hits"]:
        assert 0.0 <= hit["score"] <= 1.0


# --- supplied embeddings --------------------------------------------------------------------------


def post_raw(client: Client, path: str, raw: str) -> Any:
    """POST `raw` (JSON text that Python's encoder would not produce) to `path`."""
    headers = {**client.tenant.headers, "Content-Type": "application/json"}
    return client.raw.post(path, data=raw, headers=headers)


@pytest.mark.parametrize(
    "raw_values",
    [
        pytest.param(", ".join(['"0.05"'] * 384), id="numeric-strings"),
        pytest.param(", ".join(["true"] * 384), id="booleans"),
        pytest.param(", ".join(["0.05"] * 383 + ["Infinity"]), id="infinity"),
        pytest.param(", ".join(["0.05"] * 383 + ["-Infinity"]), id="minus-infinity"),
        pytest.param(", ".join(["0.05"] * 383 + ["1e400"]), id="overflowing-literal"),
        pytest.param(", ".join(["0.05"] * 383 + ["null"]), id="null-value"),
        pytest.param(", ".join(["[0.05]"] * 384), id="nested-lists"),
    ],
)
def test_a_supplied_embedding_is_a_list_of_finite_floats(
    bw: Client, bw_db: Any, bw_ws: Tenant, raw_values: str
) -> None:
    """Design §3: "optionally `embedding` (a list of finite floats) with `embedding_model` … else
    `422`"; "any invalid record → `422` listing every problem by index, and nothing is written"."""
    body = json.dumps({"records": [rec("bw_vec", embedding_model=DEFAULT_MODEL)]})
    raw = body[:-3] + ', "embedding": [' + raw_values + "]}]}"
    found = locs(post_raw(bw, "/records", raw))
    assert found and all(loc[:3] == ["records", 0, "embedding"] for loc in found), found
    assert count_records(bw_db, bw_ws) == 0


def test_a_wrong_embedding_model_is_located_at_its_record(bw: Client, bw_db: Any, bw_ws: Tenant) -> None:
    """Design §3: "the model id must equal the collection's embedding model id and the dimension
    must match, else `422`"; "any invalid record → `422` listing every problem by index"."""
    good = rec("bw_vec", embedding=VECTOR, embedding_model=DEFAULT_MODEL)
    other_model = rec("bw_vec", embedding=VECTOR, embedding_model="text-embedding-3-small")
    short = rec("bw_vec", embedding=VECTOR[:100], embedding_model=DEFAULT_MODEL)
    found = locs(post_records(bw, good, other_model, short))
    assert found == [["records", 1, "embedding_model"], ["records", 2, "embedding"]]
    assert count_records(bw_db, bw_ws) == 0


def test_a_remote_collection_takes_a_vector_of_its_own_model(
    sclient: Client, openai_server: OpenAIServer
) -> None:
    """Design §3: the writer may supply the vector "with the collection's own model … the record
    then skips the embedding step"."""
    vector = hashed_embedding("supplied remote vector", 384)
    record = rec(
        "bw_remote", text="supplied remote vector", embedding=vector, embedding_model="text-embedding-3-small"
    )
    (result,) = written(sclient, record)
    assert result["processing"] == "ready"
    assert embedding_calls(openai_server) == []
    wrong = rec("bw_remote", text="x", embedding=vector, embedding_model=DEFAULT_MODEL)
    assert locs(post_records(sclient, wrong)) == [["records", 0, "embedding_model"]]


def test_a_supplied_embedding_for_sx_vec_needs_the_declared_model(sx: Client) -> None:
    """Design §3: "the model id must equal the collection's embedding model id"."""
    record = vec("model check", embedding_model=EMBED_MODEL + "-other")
    assert locs(post_records(sx, record)) == [["records", 0, "embedding_model"]]


# --- client enrichments and supplied enrichment values --------------------------------------------


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


# --- failures are per record ----------------------------------------------------------------------


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


# --- graph reads count only processed nodes (`p5_` catalog) ---------------------------------------


def orphan_keys(client: Client) -> list[str]:
    return [hit["key"] for hit in ok(view_query(client, "p5_orphans", {}))["hits"]]


@pytest.fixture(scope="module")
def p5_runtime(bw_runtime: Runtime, tmp_path_factory: pytest.TempPathFactory) -> Runtime:
    """The `bw` catalog plus a node collection embedded by the `remote` (OpenAI-protocol) model."""
    return runtime_for(bw_runtime, fixture_catalog(tmp_path_factory.mktemp("p5-catalog"), "bw", "p5"))


def test_orphan_reports_count_only_fully_processed_nodes(
    p5_runtime: Runtime, bw_ws: Tenant, openai_server: OpenAIServer
) -> None:
    """Spec, Orphan reports: "Nodes are counted when they are current, active, fully processed, and
    not retracted"."""
    client = client_for(p5_runtime, bw_ws)
    node = {"collection": "p5_parts", "entity": "parts", "type": "component", "text": "a part"}
    pending, failing = written_ids(client, {**node, "key": "pending-part"}, {**node, "key": "failing-part"})
    assert orphan_keys(client) == []
    process(with_models(p5_runtime, {}), max_attempts=1)  # nothing due is left: both fail
    assert [fetch(client, i)["processing"] for i in (pending, failing)] == ["failed", "failed"]
    assert orphan_keys(client) == []
    (ready,) = written_ids(client, {**node, "key": "ready-part"})
    process(with_models(p5_runtime, openai_server.environ(api_key="k")))
    assert fetch(client, ready)["processing"] == "ready"
    assert orphan_keys(client) == ["ready-part"]


# --- validation comes before the provider ---------------------------------------------------------


INVALID_VECTOR_READS = [
    pytest.param(
        "POST",
        "/search",
        {**VECTOR_SEARCH, "scope": {"collections": ["sx_no_such_collection"]}},
        id="unknown-collection",
    ),
    pytest.param("POST", "/search", {**VECTOR_SEARCH, "k": 0}, id="k-zero"),
    pytest.param("POST", "/search", {**VECTOR_SEARCH, "where": {"nope": {"eq": 1}}}, id="unknown-field"),
    pytest.param("POST", "/search", {**VECTOR_SEARCH, "rank": [["similarity"]]}, id="bad-rank"),
    pytest.param(
        "POST",
        "/search",
        {**COMBINED, "sources": [*COMBINED["sources"], COMBINED["sources"][0]]},
        id="dup-source",
    ),
    pytest.param(
        "POST",
        "/search",
        {
            "q": "down provider",
            "mode": "recent",
            "rank": ["similarity"],
            "scope": {"collections": ["sx_vec"]},
        },
        id="similarity-in-recent",
    ),
    pytest.param(
        "POST",
        "/search",
        {"q": "down provider", "mode": "text", "rank": ["similarity"], "scope": {"collections": ["sx_vec"]}},
        id="similarity-in-text",
    ),
    pytest.param("GET", "/search?q=down%20provider&k=0", None, id="get-search-k-zero"),
    pytest.param("GET", "/search?q=down%20provider&collection=sx_notes", None, id="get-search-no-embedding"),
    pytest.param("GET", "/context?q=down%20provider&k=abc", None, id="get-context-bad-k"),
]


@pytest.mark.parametrize(("method", "path", "body"), INVALID_VECTOR_READS)
def test_an_invalid_request_is_422_even_while_the_provider_is_down(
    sx: Client, server: OpenAIServer, method: str, path: str, body: Any
) -> None:
    """Spec, the data path: "Resolve. Validate the request, collection versions, engine
    capabilities, field permissions, ranking formula…" comes before "Embed once, if needed"; Errors:
    "The request or a catalog reference is invalid → 422"."""
    server.fail_next(500, times=10)
    error(sx.request(method, path, json=body), 422)
    assert embedding_calls(server) == []


# --- processing never changes which value is current, nor un-retracts -----------------------------


def test_a_provider_that_does_not_answer_is_503_not_a_hang(sx: Client, server: OpenAIServer) -> None:
    """Design §1 Models: "unconfigured or unreachable makes the reads that need it fail with `503`";
    `sx_embed` declares `timeout_seconds: 5`."""
    server.delay_next(8, times=1)
    started = time.monotonic()
    error(sx.post("/search", json={**VECTOR_SEARCH, "q": "a slow provider"}), 503)
    assert time.monotonic() - started < 7.5


def test_graph_boost_walks_only_processed_links(
    p5_runtime: Runtime, bw_ws: Tenant, openai_server: OpenAIServer
) -> None:
    """Spec, Graph views: "Walks skip links that are unprocessed"; design §1 Graph data: "a link
    written directly is live as soon as it is processed" — `graph_boost` walks the same links."""
    client = client_for(p5_runtime, bw_ws)
    edge = {"src": "maya", "dst": "proj", "rel": "owns"}
    link = {
        "collection": "p5_rel",
        "entity": "maya",
        "type": "link",
        "text": "maya owns proj",
        "content": edge,
    }
    (link_result,) = written(client, link)
    assert link_result["processing"] == "pending"
    (target,) = written_ids(client, rec("bw_plain", entity="proj", text="project note"))
    body = {
        "mode": "recent",
        "scope": {"collections": ["bw_plain"]},
        "graph_boost": {"graph": "p5_walk", "anchor": "maya", "weight": 0.5},
    }
    before = search(client, body)
    assert (before["graph_boost"]["matched_records"], before["graph_boost"]["edge_count"]) == (0, 0)
    walked = ok(view_query(client, "p5_walk", {"seed": "maya"}))
    assert walked["hits"] == []
    process(with_models(p5_runtime, openai_server.environ(api_key="k")))
    after = search(client, body)
    assert (after["graph_boost"]["matched_records"], after["graph_boost"]["edge_count"]) == (1, 1)
    assert ids(after) == [target]


def test_a_wrong_model_and_a_wrong_dimension_are_both_listed(bw: Client, bw_db: Any, bw_ws: Tenant) -> None:
    """Design §3: "the model id must equal the collection's embedding model id and the dimension must
    match, else `422`"; "any invalid record → `422` listing every problem by index"."""
    record = rec("bw_vec", embedding=VECTOR[:10], embedding_model="text-embedding-3-small")
    found = {tuple(loc) for loc in locs(post_records(bw, record))}
    assert found == {("records", 0, "embedding_model"), ("records", 0, "embedding")}
    assert count_records(bw_db, bw_ws) == 0


def test_a_supplied_vector_needs_no_configured_provider(bw: Client) -> None:
    """Design §3: a supplied vector "skips the embedding step"; §1 Models: an unconfigured provider
    fails "the reads that need it" — this write does not need it (the `bw` app has no
    OPENAI_BASE_URL)."""
    vector = hashed_embedding("supplied offline", 384)
    record = rec(
        "bw_remote", text="supplied offline", embedding=vector, embedding_model="text-embedding-3-small"
    )
    (result,) = written(bw, record)
    assert result["processing"] == "ready"
    assert ids(search(bw, {"mode": "recent", "scope": {"collections": ["bw_remote"]}})) == [result["id"]]


# --- no workspace learns what another one searched ------------------------------------------------


@pytest.mark.parametrize("down", [False, True], ids=["provider-up", "provider-down"])
def test_another_workspaces_query_is_not_reused(
    sx: Client, sx_app: Any, other_tenant: Tenant, server: OpenAIServer, down: bool
) -> None:
    """Design §1 Workspace: "Nothing ever crosses a workspace boundary: not in results, counts,
    graph walks, boosts, errors or timing-visible behaviour that we can avoid"; §1 Models: a
    provider that is unreachable "makes the reads that need it fail with `503`". Whether workspace
    B's search calls the provider (its time, its 503) must not depend on what A searched before."""
    other = Client(sx_app.test_client(), other_tenant)
    body = {**VECTOR_SEARCH, "q": "a phrase only workspace a searched"}
    search(sx, body)
    server.reset()
    if down:
        server.fail_next(500, times=5)
        error(other.post("/search", json=body), 503)
    else:
        search(other, body)
    assert len(embedding_calls(server)) == 1


# --- finite floats that a vector column cannot hold -----------------------------------------------


@pytest.mark.parametrize(
    "value",
    [
        pytest.param(1e39, id="above-float4"),
        pytest.param(-1e39, id="below-float4"),
        pytest.param(1e308, id="huge"),
        pytest.param(1e-50, id="tiny"),
    ],
)
def test_a_supplied_vector_of_extreme_finite_floats_is_stored_or_refused(
    bw: Client, bw_db: Any, bw_ws: Tenant, value: float
) -> None:
    """Design §3: `embedding` is "a list of finite floats" … "else `422`"; never a 500."""
    response = post_records(bw, rec("bw_vec", embedding=[value] * 384, embedding_model=DEFAULT_MODEL))
    if response.status_code == 201:
        assert response.get_json()["records"][0]["processing"] == "ready"
        search(bw, {"q": "a note", "mode": "vector", "scope": {"collections": ["bw_vec"]}})
    else:
        assert {loc[2] for loc in locs(response)} == {"embedding"}
        assert count_records(bw_db, bw_ws) == 0


@pytest.mark.parametrize("value", [1e39, 1e308], ids=["above-float4", "huge"])
def test_a_query_vector_of_extreme_floats_is_503_or_answered(
    sx: Client, server: OpenAIServer, value: float
) -> None:
    """Spec Errors: unusable embeddings → 503; design: "Never let a 500 leak internals"."""
    write(sx, vec("extreme query vector"))
    server.respond_next(embeddings_body([value] * 384), times=2)
    response = sx.post("/search", json={**VECTOR_SEARCH, "q": "extreme query vector"})
    if response.status_code != 200:
        error(response, 503)


@pytest.mark.parametrize("value", [1e39, 1e308], ids=["above-float4", "huge"])
def test_a_record_vector_of_extreme_floats_fails_the_record(
    sclient: Client, served: Runtime, openai_server: OpenAIServer, value: float
) -> None:
    """Design §1: a provider's unusable answer leaves the record "`pending`, then `failed`"; a
    record that is processed is `ready` — never a stuck queue or a half-visible record."""
    openai_server.respond_next(embeddings_body([value] * 384), times=50)
    (result,) = written(sclient, rec("bw_remote", text="extreme record vector"))
    process(served, max_attempts=2)
    assert fetch(sclient, result["id"])["processing"] in ("failed", "ready")


@pytest.mark.parametrize("value", [1e39, 1e308], ids=["above-float4", "huge"])
def test_an_unstorable_vector_fails_only_its_own_record(
    sclient: Client, served: Runtime, openai_server: OpenAIServer, value: float
) -> None:
    """Design §1: "All succeed → `ready`; failures are retried with backoff, then the record is
    `failed`" — the record whose vector is unusable, not its neighbour in the batch."""
    answer = embeddings_body([value] * 384, hashed_embedding("healthy neighbour", 384))
    openai_server.respond_next(answer, times=10)
    texts = ("poisoned", "healthy neighbour")
    record_ids = written_ids(sclient, *(rec("bw_remote", text=t) for t in texts))
    process(served, max_attempts=2)
    assert sorted(fetch(sclient, i)["processing"] for i in record_ids) == ["failed", "ready"]


def test_the_processing_error_shows_no_sql(
    sclient: Client, served: Runtime, openai_server: OpenAIServer
) -> None:
    """Design §1: a failed record is "visible through `GET /records/{id}` with the error"; brief and
    docs/models.md: errors never leak internals (statements, workspace ids, the provider's URL)."""
    openai_server.respond_next(embeddings_body([1e39] * 384), times=10)
    (record_id,) = written_ids(sclient, rec("bw_remote", text="poisoned"))
    process(served, max_attempts=1)
    record = fetch(sclient, record_id)
    assert record["processing"] == "failed" and record["processing_error"]
    shown = record["processing_error"]
    assert [w for w in ("UPDATE", "SELECT", "[SQL", "param_", sclient.tenant.id) if str(w) in shown] == []


def test_a_record_with_everything_supplied_is_ready_at_once(bw: Client) -> None:
    """Design §1: "A written record starts `pending` if anything must be computed for it, else
    `ready`"; Processing = the embedding plus "each enrichment the collection requires whose value
    was not supplied by the writer" (the `bw` app has no OpenAI-protocol provider configured)."""
    record = rec(
        "customer_events",
        text="all supplied",
        embedding=VECTOR,
        embedding_model=DEFAULT_MODEL,
        scores={"importance": 2},
        annotations={"sentiment": {"label": "negative"}},
    )
    (result,) = written(bw, record)
    assert result["processing"] == "ready"
    fetched = fetch(bw, result["id"])
    assert (fetched["processing"], fetched["processing_error"]) == ("ready", None)
    body = {"q": "all supplied", "mode": "vector", "scope": {"collections": ["customer_events"]}}
    assert ids(search(bw, body)) == [result["id"]]
