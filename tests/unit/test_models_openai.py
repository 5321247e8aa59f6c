"""The OpenAI-compatible providers, over real HTTP against tests/openai_server.py (no database)."""

from __future__ import annotations

import time
from typing import Any

import pytest

from memseek.errors import BackendUnavailable
from memseek.models import ModelOutputInvalid
from memseek.models import ModelUnavailable
from memseek.models.config import ModelDecl
from memseek.models.openai import OpenAIChat
from memseek.models.openai import OpenAIEmbedder
from memseek.models.openai import endpoint_url
from tests.helpers import free_port
from tests.openai_server import OpenAIServer
from tests.openai_server import hashed_embedding

URL_ENV = "TEST_OPENAI_BASE_URL"
KEY_ENV = "TEST_OPENAI_API_KEY"


def decl(kind: str, **overrides: Any) -> ModelDecl:
    return ModelDecl.model_validate(
        {"kind": kind, "provider": "openai", "model": "m-1", "base_url_env": URL_ENV, **overrides}
    )


def embedder(server: OpenAIServer, suffix: str = "", **overrides: Any) -> OpenAIEmbedder:
    environ = {URL_ENV: server.base_url + suffix}
    return OpenAIEmbedder(
        decl("embedding", **overrides), alias="remote", environ=environ, backoff_seconds=0.01
    )


def chat(server: OpenAIServer, **overrides: Any) -> OpenAIChat:
    environ = {URL_ENV: server.base_url}
    return OpenAIChat(decl("chat", **overrides), alias="cheap", environ=environ, backoff_seconds=0.01)


@pytest.mark.parametrize(
    ("base", "expected"),
    [
        pytest.param("http://h:1", "http://h:1/v1/embeddings", id="bare"),
        pytest.param("http://h:1/", "http://h:1/v1/embeddings", id="slash"),
        pytest.param("http://h:1/v1", "http://h:1/v1/embeddings", id="v1"),
        pytest.param("http://h:1/v1/", "http://h:1/v1/embeddings", id="v1-slash"),
        pytest.param("https://h/openai/v1", "https://h/openai/v1/embeddings", id="prefix"),
    ],
)
def test_endpoint_url(base: str, expected: str) -> None:
    assert endpoint_url(base, "embeddings") == expected


@pytest.mark.parametrize("suffix", ["", "/", "/v1", "/v1/"])
def test_embeddings_match_the_server_in_input_order(openai_server: OpenAIServer, suffix: str) -> None:
    texts = ["the cat sat", "a dog ran", "the cat sat"]
    vectors = embedder(openai_server, suffix).embed(texts)
    assert vectors == [hashed_embedding(text, 384) for text in texts]
    (request,) = openai_server.requests
    assert request.path == "/v1/embeddings"
    assert request.body == {"model": "m-1", "input": texts}
    assert "authorization" not in request.headers


@pytest.mark.parametrize(
    ("count", "batch_size", "sizes"), [(10, 4, [4, 4, 2]), (8, 4, [4, 4]), (3, 256, [3])]
)
def test_batching(openai_server: OpenAIServer, count: int, batch_size: int, sizes: list[int]) -> None:
    texts = [f"text number {i}" for i in range(count)]
    vectors = embedder(openai_server, batch_size=batch_size).embed(texts)
    assert [len(r.body["input"]) for r in openai_server.requests] == sizes
    assert [r.body["input"] for r in openai_server.requests] == [
        texts[i : i + batch_size] for i in range(0, count, batch_size)
    ]
    assert vectors == [hashed_embedding(text, 384) for text in texts]


def test_order_is_restored_from_index(openai_server: OpenAIServer) -> None:
    openai_server.reverse_embeddings = True
    texts = ["alpha", "beta", "gamma", "delta", "epsilon"]
    assert embedder(openai_server, batch_size=2).embed(texts) == [hashed_embedding(t, 384) for t in texts]


def test_no_texts_no_request(openai_server: OpenAIServer) -> None:
    assert embedder(openai_server).embed([]) == []
    assert openai_server.requests == []


def test_explicit_dimensions_are_sent(openai_server: OpenAIServer) -> None:
    openai_server.dimensions = 64
    assert len(embedder(openai_server, dimensions=64).embed(["x"])[0]) == 64
    assert openai_server.requests[0].body["dimensions"] == 64


def test_api_key_is_sent_as_bearer(openai_server: OpenAIServer) -> None:
    openai_server.api_key = "sk-test"
    model = OpenAIEmbedder(
        decl("embedding", api_key_env=KEY_ENV),
        environ={URL_ENV: openai_server.base_url, KEY_ENV: "sk-test"},
    )
    assert len(model.embed(["hello"])) == 1
    assert openai_server.requests[0].headers["authorization"] == "Bearer sk-test"


@pytest.mark.parametrize("status", [500, 502, 503, 429, 408])
def test_retries_transient_statuses_then_succeeds(openai_server: OpenAIServer, status: int) -> None:
    openai_server.fail_next(status, times=2)
    assert embedder(openai_server).embed(["x"]) == [hashed_embedding("x", 384)]
    assert len(openai_server.requests) == 3


def test_gives_up_after_max_retries(openai_server: OpenAIServer) -> None:
    openai_server.fail_next(503, times=10)
    with pytest.raises(
        ModelUnavailable, match=r"'remote' \(m-1\) is unavailable: HTTP 503 after 3 attempt"
    ) as exc:
        embedder(openai_server, max_retries=2).embed(["x"])
    assert len(openai_server.requests) == 3
    assert isinstance(exc.value, BackendUnavailable) and exc.value.status == 503
    assert openai_server.base_url not in exc.value.message  # the URL may be internal


def test_backoff_grows_exponentially(openai_server: OpenAIServer) -> None:
    openai_server.fail_next(500, times=3)
    model = OpenAIEmbedder(decl("embedding"), environ={URL_ENV: openai_server.base_url}, backoff_seconds=0.1)
    started = time.monotonic()
    model.embed(["x"])
    assert time.monotonic() - started >= 0.1 + 0.2 + 0.4


@pytest.mark.parametrize("status", [400, 401, 404])
def test_client_errors_are_not_retried(openai_server: OpenAIServer, status: int) -> None:
    openai_server.fail_next(status, times=5)
    with pytest.raises(ModelUnavailable, match=f"HTTP {status}$"):
        embedder(openai_server).embed(["x"])
    assert len(openai_server.requests) == 1


def test_wrong_api_key_is_unavailable(openai_server: OpenAIServer) -> None:
    openai_server.api_key = "sk-right"
    model = OpenAIChat(
        decl("chat", api_key_env=KEY_ENV), environ={URL_ENV: openai_server.base_url, KEY_ENV: "no"}
    )
    with pytest.raises(ModelUnavailable, match="HTTP 401"):
        model.complete_json("s", "u")


def test_timeout_then_success(openai_server: OpenAIServer) -> None:
    openai_server.delay_next(1.0)
    assert embedder(openai_server, timeout_seconds=0.2, max_retries=1).embed(["x"]) == [
        hashed_embedding("x", 384)
    ]
    assert len(openai_server.requests) == 2


def test_timeouts_exhaust_retries(openai_server: OpenAIServer) -> None:
    openai_server.delay_next(1.0, times=2)
    started = time.monotonic()
    with pytest.raises(ModelUnavailable, match=r"no answer within 0.2 s after 2 attempt"):
        embedder(openai_server, timeout_seconds=0.2, max_retries=1).embed(["x"])
    assert time.monotonic() - started < 0.9


def test_unreachable_server() -> None:
    url = f"http://127.0.0.1:{free_port()}"  # nobody listens there
    model = OpenAIEmbedder(decl("embedding", max_retries=1), environ={URL_ENV: url}, backoff_seconds=0.01)
    with pytest.raises(ModelUnavailable, match="connection failed .* after 2 attempt"):
        model.embed(["x"])


@pytest.mark.parametrize(
    ("environ", "overrides", "message"),
    [
        pytest.param({}, {}, f"{URL_ENV} is not set", id="url-unset"),
        pytest.param({URL_ENV: "  "}, {}, f"{URL_ENV} is not set", id="url-blank"),
        pytest.param({URL_ENV: "ftp://h"}, {}, "must be an http", id="url-scheme"),
        pytest.param(
            {URL_ENV: "http://h"}, {"api_key_env": KEY_ENV}, f"{KEY_ENV} is not set", id="key-unset"
        ),
    ],
)
def test_unconfigured_is_unavailable(
    openai_server: OpenAIServer, environ: dict[str, str], overrides: dict[str, Any], message: str
) -> None:
    for model in (
        OpenAIEmbedder(decl("embedding", **overrides), environ=environ),
        OpenAIChat(decl("chat", **overrides), environ=environ),
    ):
        with pytest.raises(ModelUnavailable, match=message):
            model.embed(["x"]) if isinstance(model, OpenAIEmbedder) else model.complete_json("s", "u")
    assert openai_server.requests == []


def test_environment_is_read_at_call_time(openai_server: OpenAIServer) -> None:
    environ: dict[str, str] = {}
    model = OpenAIEmbedder(decl("embedding"), environ=environ)
    with pytest.raises(ModelUnavailable):
        model.embed(["x"])
    environ[URL_ENV] = openai_server.base_url
    assert len(model.embed(["x"])) == 1


@pytest.mark.parametrize(
    ("body", "message"),
    [
        pytest.param(b"not json", "Invalid JSON", id="not-json"),
        pytest.param({"object": "list"}, "data: Field required", id="no-data"),
        pytest.param({"data": [{"index": 0}]}, "embedding: Field required", id="no-embedding"),
        pytest.param({"data": [{"index": 0, "embedding": ["a"]}]}, "valid number", id="not-numbers"),
        pytest.param({"data": [{"index": 0, "embedding": []}]}, "at least 1 item", id="empty-vector"),
        pytest.param({"data": []}, r"one embedding per index 0\.\.0", id="missing"),
        pytest.param(
            {"data": [{"index": 1, "embedding": [1.0] * 384}]}, "one embedding per index", id="bad-index"
        ),
        pytest.param(
            {"data": [{"index": 0, "embedding": [1.0] * 384}] * 2}, "one embedding per index", id="duplicate"
        ),
        pytest.param(
            {"data": [{"index": 0, "embedding": [1.0] * 383}]}, "383 dimensions, expected 384", id="short"
        ),
    ],
)
def test_malformed_embeddings_are_invalid(openai_server: OpenAIServer, body: Any, message: str) -> None:
    openai_server.respond_next(body)
    with pytest.raises(ModelOutputInvalid, match=message):
        embedder(openai_server).embed(["x"])
    assert len(openai_server.requests) == 1  # never retried


@pytest.mark.parametrize(
    ("overrides", "hint"),
    [
        pytest.param(
            {}, " (declare `dimensions: 384` to ask the provider for shortened vectors)", id="implicit"
        ),
        pytest.param({"dimensions": 384}, "", id="explicit"),
    ],
)
def test_dimension_mismatch_is_invalid(
    openai_server: OpenAIServer, overrides: dict[str, Any], hint: str
) -> None:
    openai_server.dimensions = 1536
    with pytest.raises(ModelOutputInvalid) as exc:
        embedder(openai_server, **overrides).embed(["x"])
    assert exc.value.message.endswith(f"1536 dimensions, expected 384{hint}")
    assert exc.value.status == 503


def test_chat_sends_json_mode_request_and_parses_answer(openai_server: OpenAIServer) -> None:
    openai_server.reply_with('{"scores": [0.9, 0.1]}')
    assert chat(openai_server).complete_json("judge these", "records…") == {"scores": [0.9, 0.1]}
    (request,) = openai_server.requests
    assert request.path == "/v1/chat/completions"
    assert request.body == {
        "model": "m-1",
        "messages": [{"role": "system", "content": "judge these"}, {"role": "user", "content": "records…"}],
        "temperature": 0,
        "response_format": {"type": "json_object"},
    }


def test_chat_max_tokens_and_scripted_callable(openai_server: OpenAIServer) -> None:
    openai_server.reply_with(lambda messages: f'{{"echo": "{messages[1]["content"]}"}}', "[1, 2]")
    model = chat(openai_server)
    assert model.complete_json("s", "hello", max_tokens=50) == {"echo": "hello"}
    assert model.complete_json("s", "again") == [1, 2]
    assert [r.body.get("max_tokens") for r in openai_server.requests] == [50, None]


def test_chat_retries_then_succeeds(openai_server: OpenAIServer) -> None:
    openai_server.fail_next(429)
    openai_server.reply_with('{"ok": true}')
    assert chat(openai_server).complete_json("s", "u") == {"ok": True}
    assert len(openai_server.requests) == 2


@pytest.mark.parametrize(
    ("script", "message"),
    [
        pytest.param({"reply": '{"scores": [0.9'}, "message content is not JSON", id="truncated-json"),
        pytest.param({"reply": "Sure! Here you go"}, "message content is not JSON", id="prose"),
        pytest.param({"body": {"choices": []}}, "at least 1 item", id="no-choices"),
        pytest.param(
            {"body": {"choices": [{"message": {"content": None}}]}}, "valid string", id="null-content"
        ),
        pytest.param({"body": {"error": "x"}}, "choices: Field required", id="no-choices-key"),
        pytest.param({"body": b"<html>"}, "Invalid JSON", id="html"),
    ],
)
def test_chat_invalid_answers(openai_server: OpenAIServer, script: dict[str, Any], message: str) -> None:
    if "reply" in script:
        openai_server.reply_with(script["reply"])
    else:
        openai_server.respond_next(script["body"])
    with pytest.raises(ModelOutputInvalid, match=message):
        chat(openai_server).complete_json("s", "u")


def test_providers_reject_the_wrong_declaration() -> None:
    with pytest.raises(ValueError, match="needs an openai chat model"):
        OpenAIChat(decl("embedding"))
    local = ModelDecl(kind="embedding", provider="local", model="all-MiniLM-L6-v2")
    with pytest.raises(ValueError, match="needs an openai embedding model"):
        OpenAIEmbedder(local)
