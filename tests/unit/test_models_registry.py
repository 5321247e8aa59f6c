"""`ModelRegistry`: aliases → cached providers, over the real local model and real HTTP."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from memseek.models import ModelUnavailable
from memseek.models.config import ModelDecl
from memseek.models.local import LocalEmbedder
from memseek.models.local import _loaded as loaded_models
from memseek.models.local import _Options as LocalOptions
from memseek.models.registry import ModelRegistry
from tests.openai_server import OpenAIServer
from tests.openai_server import hashed_embedding

OPENAI = {"provider": "openai", "base_url_env": "OPENAI_BASE_URL", "api_key_env": "OPENAI_API_KEY"}
DECLS = {
    "default": ModelDecl(kind="embedding", provider="local", model="all-MiniLM-L6-v2", batch_size=16),
    "remote": ModelDecl.model_validate({"kind": "embedding", "model": "text-embedding-3-small", **OPENAI}),
    "cheap": ModelDecl.model_validate({"kind": "chat", "model": "gpt-4o-mini", **OPENAI}),
}


@pytest.fixture
def registry(openai_server: OpenAIServer) -> ModelRegistry:
    openai_server.api_key = "sk-test"
    return ModelRegistry(DECLS, openai_server.environ(api_key="sk-test"))


def test_local_alias(registry: ModelRegistry) -> None:
    embedder = registry.embedder("default")
    assert isinstance(embedder, LocalEmbedder) and embedder.batch_size == 16
    assert (embedder.model_id, embedder.dimensions) == ("all-MiniLM-L6-v2-onnx-int8", 384)
    assert embedder.embed(["hello"]) == LocalEmbedder().embed(["hello"])


def test_remote_aliases_use_the_given_environment(
    registry: ModelRegistry, openai_server: OpenAIServer
) -> None:
    remote = registry.embedder("remote")
    assert (remote.model_id, remote.dimensions) == ("text-embedding-3-small", 384)
    assert remote.embed(["hi there"]) == [hashed_embedding("hi there", 384)]
    openai_server.reply_with('{"ok": 1}')
    assert registry.chat("cheap").complete_json("s", "u") == {"ok": 1}
    assert [r.body["model"] for r in openai_server.requests] == ["text-embedding-3-small", "gpt-4o-mini"]


def test_providers_are_cached_per_alias(registry: ModelRegistry) -> None:
    assert registry.embedder("remote") is registry.embedder("remote")
    assert registry.chat("cheap") is registry.chat("cheap")
    assert registry.embedder("default") is not registry.embedder("remote")


@pytest.mark.parametrize(
    ("call", "message"),
    [
        pytest.param(
            lambda r: r.embedder("cheap"), "no embedding model named 'cheap'", id="chat-as-embedder"
        ),
        pytest.param(lambda r: r.chat("default"), "no chat model named 'default'", id="embedder-as-chat"),
        pytest.param(lambda r: r.embedder("nope"), "no embedding model named 'nope'", id="unknown"),
    ],
)
def test_wrong_aliases_are_unavailable(
    registry: ModelRegistry, call: Callable[[ModelRegistry], object], message: str
) -> None:
    with pytest.raises(ModelUnavailable, match=message):
        call(registry)


def test_building_never_needs_configuration() -> None:
    registry = ModelRegistry(DECLS, environ={})
    remote = registry.embedder("remote")  # built fine: the environment is read per call
    with pytest.raises(ModelUnavailable, match="OPENAI_BASE_URL is not set"):
        remote.embed(["x"])
    assert dict(registry.decls) == DECLS


def test_load_local_loads_each_local_embedding_model() -> None:
    """`memseek serve` loads the local model at start (its batch and its query session), and the
    remote aliases beside it are no obstacle. Three and five intra-op threads: sessions no other
    test loads, so the load is this call's."""
    local = ModelDecl(
        kind="embedding", provider="local", model="all-MiniLM-L6-v2", threads=3, query_threads=5
    )
    registry = ModelRegistry({**DECLS, "default": local}, environ={})
    sessions = {LocalOptions(3), LocalOptions(5, spinning=True)}
    assert not sessions & set(loaded_models)
    registry.load_local()
    assert sessions <= set(loaded_models)
