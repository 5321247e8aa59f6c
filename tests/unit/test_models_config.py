"""`ModelDecl`: one entry of conf/models.yaml — defaults by kind/provider and every rejection."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

from memseek.models.config import ModelDecl

OPENAI = {"provider": "openai", "base_url_env": "OPENAI_BASE_URL", "api_key_env": "OPENAI_API_KEY"}
LOCAL = {"kind": "embedding", "provider": "local", "model": "all-MiniLM-L6-v2"}


@pytest.mark.parametrize(
    ("entry", "expected"),
    [
        pytest.param(
            LOCAL,
            {"dimensions": 384, "batch_size": 8, "threads": 1, "base_url_env": None},
            id="design-default",
        ),
        pytest.param(
            {"kind": "embedding", "model": "text-embedding-3-small", **OPENAI},
            {"dimensions": 384, "batch_size": 256, "timeout_seconds": 30.0, "max_retries": 3},
            id="design-remote",
        ),
        pytest.param(
            {"kind": "chat", "model": "gpt-4o-mini", **OPENAI},
            {"dimensions": None, "batch_size": None, "api_key_env": "OPENAI_API_KEY"},
            id="design-cheap",
        ),
        pytest.param(
            {**LOCAL, "threads": 2, "batch_size": 8}, {"threads": 2, "batch_size": 8}, id="local-tuned"
        ),
        pytest.param(
            {"kind": "embedding", "model": "nomic", "provider": "openai", "base_url_env": "OLLAMA_URL"},
            {"api_key_env": None},
            id="openai-without-key",
        ),
    ],
)
def test_valid_declarations_and_defaults(entry: dict[str, Any], expected: dict[str, Any]) -> None:
    decl = ModelDecl.model_validate(entry)
    assert {name: getattr(decl, name) for name in expected} == expected


@pytest.mark.parametrize(
    ("entry", "message"),
    [
        pytest.param({**LOCAL, "kind": "chat"}, "embeddings only", id="local-chat"),
        pytest.param({**LOCAL, "model": "bge-small-en-v1.5"}, "only ships", id="local-other-model"),
        pytest.param({**LOCAL, "dimensions": 768}, "384 dimensions", id="local-dimensions"),
        pytest.param({**LOCAL, "base_url_env": "X"}, "do not apply to provider local", id="local-url"),
        pytest.param({**LOCAL, "timeout_seconds": 5}, "do not apply to provider local", id="local-timeout"),
        pytest.param(
            {"kind": "chat", "provider": "openai", "model": "m"}, "requires base_url_env", id="no-url"
        ),
        pytest.param(
            {"kind": "chat", "model": "m", **OPENAI, "dimensions": 8},
            "only apply to embedding",
            id="chat-dim",
        ),
        pytest.param(
            {"kind": "chat", "model": "m", **OPENAI, "batch_size": 8},
            "only apply to embedding",
            id="chat-batch",
        ),
        pytest.param(
            {"kind": "chat", "model": "m", **OPENAI, "threads": 2}, "threads only apply", id="openai-threads"
        ),
        pytest.param(
            {"kind": "embedding", "model": "m", **OPENAI, "query_threads": 2},
            "query_threads only apply to provider local",
            id="openai-query-threads",
        ),
        pytest.param(
            {"kind": "embedding", "model": "m", **OPENAI, "dimensions": None},
            "need dimensions",
            id="dim-null",
        ),
        pytest.param({**LOCAL, "provider": "azure"}, "Input should be 'local' or 'openai'", id="provider"),
        pytest.param({**LOCAL, "kind": "rerank"}, "Input should be 'embedding' or 'chat'", id="kind"),
        pytest.param({**LOCAL, "extra": 1}, "Extra inputs are not permitted", id="unknown-key"),
        pytest.param(
            {"kind": "chat", "model": "m", **OPENAI, "base_url_env": "not-an-env"}, "pattern", id="env-name"
        ),
        pytest.param({**LOCAL, "batch_size": 0}, "greater than 0", id="batch-zero"),
        pytest.param(
            {"kind": "chat", "model": "m", **OPENAI, "max_retries": -1}, "greater than or equal", id="retries"
        ),
        pytest.param({"kind": "chat", "model": "", **OPENAI}, "at least 1 character", id="empty-model"),
        # issue 3: a wrong type is an error, never converted (`true` is no width of 1, "384" no number)
        pytest.param({**LOCAL, "dimensions": True}, "valid integer", id="dimensions-boolean"),
        pytest.param({**LOCAL, "dimensions": "384"}, "valid integer", id="dimensions-string"),
        pytest.param({**LOCAL, "batch_size": "8"}, "valid integer", id="batch-size-string"),
        pytest.param({**LOCAL, "model": 5}, "valid string", id="model-number"),
        pytest.param(
            {"kind": "chat", "model": "m", **OPENAI, "timeout_seconds": "30"},
            "valid number",
            id="timeout-string",
        ),
    ],
)
def test_invalid_declarations(entry: dict[str, Any], message: str) -> None:
    with pytest.raises(ValidationError, match=message):
        ModelDecl.model_validate(entry)


def test_declarations_are_frozen_and_hashable() -> None:
    decl = ModelDecl.model_validate(LOCAL)
    with pytest.raises(ValidationError):
        decl.threads = 2  # type: ignore[misc]
    assert hash(decl) == hash(ModelDecl.model_validate(LOCAL))
