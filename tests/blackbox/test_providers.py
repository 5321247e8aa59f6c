"""Model providers that are down or answer badly (spec "Errors", "Embed once, if needed"; design
"Models"): 503 in the one error shape without internals, text/recent/structured keep working,
the query is embedded once per request, bad embeddings never become a 500.
"""

from __future__ import annotations

import json
import time
from typing import Any

import pytest

from memseek.runtime import Runtime
from tests.blackbox.conftest import ClientFactory
from tests.blackbox.design_support import embedding_calls
from tests.blackbox.design_support import embeddings_body
from tests.blackbox.design_support import process
from tests.blackbox.design_support import rec
from tests.blackbox.design_support import recent
from tests.blackbox.support import EMBED_ENV
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
from tests.helpers import free_port
from tests.helpers import ok
from tests.helpers import view_query
from tests.helpers import with_models
from tests.helpers import written
from tests.helpers import written_ids
from tests.openai_server import OpenAIServer

# --- a provider that is down ----------------------------------------------------------------------


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


VEC = {"collections": ["sx_vec"]}


def test_embeddings_unavailable_is_503_but_text_still_works(sx: Client, sx_with: ClientFactory) -> None:
    """ "Embeddings ... unavailable → 503"; "Text, recent, and structured searches never call the
    embedding provider.\""""
    write(sx, vec("alpha"))
    down = sx_with(environ={"SX_EMBED_URL": "http://127.0.0.1:9"})
    error(down.post("/search", json={"mode": "vector", "q": "alpha", "scope": VEC}), 503)
    error(down.post("/search", json={"mode": "hybrid", "q": "alpha", "scope": VEC}), 503)
    assert len(search(down, {"mode": "text", "q": "alpha", "scope": VEC})["hits"]) == 1
    assert len(search(down, {"mode": "recent", "scope": VEC})["hits"]) == 1


def test_unavailable_embeddings_are_503(sx: Client, sx_with: ClientFactory) -> None:
    write(sx, vec("budget"))
    offline = sx_with(environ={})
    body = {"mode": "vector", "q": "unembedded query 503", "scope": {"collections": ["sx_vec"]}}
    error(offline.post("/search", json=body), 503)
    error(offline.post("/search", json={**body, "mode": "hybrid"}), 503)
    error(offline.get("/search?q=another%20unembedded%20query"), 503)
    assert offline.post("/search", json={"mode": "text", "q": "budget"}).status_code == 200  # never embeds


def test_a_failing_embedding_provider_is_503(sx: Client, server: OpenAIServer) -> None:
    server.fail_next(500)
    error(
        sx.post("/search", json={"mode": "vector", "q": "fails 503", "scope": {"collections": ["sx_vec"]}}),
        503,
    )


def test_text_recent_and_structured_never_call_the_embedding_provider(
    sx: Client, server: OpenAIServer
) -> None:
    write(sx, note("budget", content={"amount": 1}))
    search(sx, {"mode": "text", "q": "budget"})
    search(sx, {"mode": "recent", "q": "budget"})
    search(
        sx,
        {
            "mode": "structured",
            "q": "budget",
            "scope": {"collections": ["sx_notes"]},
            "order_by": [{"field": "amount"}],
        },
    )
    assert not server.requests


@pytest.fixture
def unreachable(bw_runtime: Runtime) -> Runtime:
    """The `bw` runtime whose OpenAI-protocol provider points at a port nothing listens on."""
    environ = {"OPENAI_BASE_URL": f"http://127.0.0.1:{free_port()}/v1", "OPENAI_API_KEY": "k"}
    return with_models(bw_runtime, environ)


def test_an_unreachable_provider_makes_reads_that_need_it_503(unreachable: Runtime, bw_ws: Tenant) -> None:
    """§1 Models: "A provider that is unconfigured or unreachable makes the reads that need it
    fail with `503`"."""
    client = client_for(unreachable, bw_ws)
    body = {"q": "anything", "mode": "vector", "scope": {"collections": ["bw_remote"]}}
    error(client.post("/search", json=body), 503)


def test_an_unreachable_provider_leaves_records_pending_then_failed(bw: Client, unreachable: Runtime) -> None:
    """§1 Models: "the records that need it stay `pending`, then `failed` — never silently ranked
    without it"; `failed` is "visible through `GET /records/{id}` with the error"."""
    (result,) = written(bw, rec("bw_remote", text="needs the remote model"))
    assert result["processing"] == "pending"
    process(unreachable, max_attempts=2)
    record = fetch(bw, result["id"])
    assert record["processing"] == "failed" and record["processing_error"]
    assert recent(bw, "bw_remote") == []


def test_a_provider_that_does_not_answer_is_503_not_a_hang(sx: Client, server: OpenAIServer) -> None:
    """Design §1 Models: "unconfigured or unreachable makes the reads that need it fail with `503`";
    `sx_embed` declares `timeout_seconds: 5`."""
    server.delay_next(8, times=1)
    started = time.monotonic()
    error(sx.post("/search", json={**VECTOR_SEARCH, "q": "a slow provider"}), 503)
    assert time.monotonic() - started < 7.5


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


# --- the query is embedded once per request -------------------------------------------------------


def test_the_query_is_embedded_once_per_request(sx: Client, server: OpenAIServer) -> None:
    write(sx, vec("budget"))
    search(
        sx,
        {
            "q": "embedded once",
            "sources": [
                {"name": "a", "mode": "vector", "scope": {"collections": ["sx_vec"]}},
                {"name": "b", "mode": "hybrid", "scope": {"collections": ["sx_vec"]}},
            ],
            "fuse": {"kind": "rrf"},
        },
    )
    assert len([r for r in server.requests if r.path == "/v1/embeddings"]) == 1


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


# --- embeddings a provider gets wrong -------------------------------------------------------------


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
