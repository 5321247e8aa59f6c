"""Providers for the OpenAI-compatible HTTP API (OpenAI, vLLM, Ollama, llama.cpp, TEI…), stdlib only.

`OpenAIEmbedder` posts to `{base}/v1/embeddings`, `OpenAIChat` to `{base}/v1/chat/completions`.
The base URL and API key come from the environment variables the declaration names, read on
every call from an injectable mapping (never at import time). Connection errors, timeouts, 429
and 5xx are retried with exponential backoff; what is left is `ModelUnavailable`. An answer of
the wrong shape is `ModelOutputInvalid` and is never retried: the same request would get it again.
"""

from __future__ import annotations

import http.client
import json
import logging
import os
import time
import urllib.error
import urllib.request
from collections.abc import Mapping
from collections.abc import Sequence
from typing import Any
from typing import TypeVar

from pydantic import BaseModel
from pydantic import ConfigDict
from pydantic import Field
from pydantic import ValidationError

from memseek.logs import log_throttled
from memseek.models import ModelOutputInvalid
from memseek.models import ModelUnavailable
from memseek.models.config import ModelDecl

log = logging.getLogger(__name__)

MAX_BACKOFF_SECONDS = 10.0
_RETRY_STATUSES = frozenset({408, 429}) | frozenset(range(500, 600))
_ERROR_BODY_CHARS = 300


class _Response(BaseModel):
    """Base of the response shapes we read; servers add fields (`object`, `usage`…), so ignore extras."""

    model_config = ConfigDict(frozen=True, extra="ignore", allow_inf_nan=False)


class _EmbeddingItem(_Response):
    index: int = Field(ge=0)
    embedding: list[float] = Field(min_length=1)


class _Embeddings(_Response):
    data: list[_EmbeddingItem]


class _Message(_Response):
    content: str


class _Choice(_Response):
    message: _Message


class _ChatCompletion(_Response):
    choices: list[_Choice] = Field(min_length=1)


ResponseT = TypeVar("ResponseT", bound=_Response)


def endpoint_url(base_url: str, path: str) -> str:
    """`{base}/v1/{path}`, whether or not `base_url` already ends in `/v1`."""
    base = base_url.strip().rstrip("/")
    if not base.endswith("/v1"):
        base += "/v1"
    return f"{base}/{path}"


class _Transient(Exception):
    """A failure worth retrying (connection error, timeout, 429, 5xx)."""


class OpenAIClient:
    """POSTs JSON to one OpenAI-compatible endpoint with retries; shared by the two providers."""

    def __init__(
        self,
        decl: ModelDecl,
        *,
        alias: str,
        environ: Mapping[str, str] | None = None,
        backoff_seconds: float = 0.5,
    ) -> None:
        self.decl = decl
        self.alias = alias
        self._environ = environ
        self._backoff = backoff_seconds

    def unavailable(self, reason: str) -> ModelUnavailable:
        """The error for this model, naming the alias and model but not the URL (it may be internal)."""
        return ModelUnavailable(f"model {self.alias!r} ({self.decl.model}) is unavailable: {reason}")

    def invalid(self, reason: str) -> ModelOutputInvalid:
        """The error for an answer of the wrong shape."""
        return ModelOutputInvalid(
            f"model {self.alias!r} ({self.decl.model}) returned an invalid answer: {reason}"
        )

    def post(self, path: str, body: Mapping[str, Any], shape: type[ResponseT]) -> ResponseT:
        """POST `body` to `{base}/v1/{path}` and parse the answer as `shape`."""
        request = self._request(path, body)
        raw = self._send_with_retries(request)
        try:
            return shape.model_validate_json(raw)
        except ValidationError as exc:
            raise self.invalid(_summary(exc)) from exc

    def _env(self, name: str) -> str:
        value = (os.environ if self._environ is None else self._environ).get(name, "").strip()
        if not value:
            raise self.unavailable(f"environment variable {name} is not set")
        return value

    def _request(self, path: str, body: Mapping[str, Any]) -> urllib.request.Request:
        assert self.decl.base_url_env is not None  # guaranteed by ModelDecl for provider openai
        url = endpoint_url(self._env(self.decl.base_url_env), path)
        if not url.startswith(("http://", "https://")):
            raise self.unavailable(f"{self.decl.base_url_env} must be an http(s) URL")
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        if self.decl.api_key_env is not None:
            headers["Authorization"] = f"Bearer {self._env(self.decl.api_key_env)}"
        return urllib.request.Request(url, data=json.dumps(body).encode(), headers=headers, method="POST")

    def _send_with_retries(self, request: urllib.request.Request) -> bytes:
        retries = self.decl.max_retries
        for attempt in range(retries):
            try:
                return self._send(request)
            except _Transient as exc:
                # a provider that is down fails every call alike: one line per interval
                log_throttled(
                    log, logging.WARNING, f"model-{self.alias}", "model %s: %s; retrying", self.alias, exc
                )
                time.sleep(min(self._backoff * 2**attempt, MAX_BACKOFF_SECONDS))
        try:
            return self._send(request)
        except _Transient as exc:
            raise self.unavailable(f"{exc} after {self.decl.max_retries + 1} attempt(s)") from exc

    def _send(self, request: urllib.request.Request) -> bytes:
        try:
            with urllib.request.urlopen(request, timeout=self.decl.timeout_seconds) as response:
                return bytes(response.read())
        except urllib.error.HTTPError as exc:
            detail = exc.read()[:_ERROR_BODY_CHARS].decode(errors="replace")
            log_throttled(
                log,
                logging.WARNING,
                f"model-{self.alias}-{exc.code}",
                "model %s: HTTP %d from %s: %s",
                self.alias,
                exc.code,
                request.full_url,
                detail,
            )
            if exc.code in _RETRY_STATUSES:
                raise _Transient(f"HTTP {exc.code}") from exc
            raise self.unavailable(f"HTTP {exc.code}") from exc
        except (urllib.error.URLError, http.client.HTTPException, OSError) as exc:
            raise _Transient(self._describe(exc)) from exc

    def _describe(self, exc: Exception) -> str:
        reason = getattr(exc, "reason", exc)  # URLError wraps the socket error
        if isinstance(reason, TimeoutError):
            return f"no answer within {self.decl.timeout_seconds:g} s"
        return f"connection failed ({reason})"


def _summary(exc: ValidationError) -> str:
    first = exc.errors()[0]
    where = ".".join(str(part) for part in first["loc"]) or "body"
    return f"{where}: {first['msg']} ({exc.error_count()} problem(s))"


class _Provider:
    """What both providers share: the declaration and a client for its endpoint."""

    kind = ""

    def __init__(
        self,
        decl: ModelDecl,
        *,
        alias: str | None = None,
        environ: Mapping[str, str] | None = None,
        backoff_seconds: float = 0.5,
    ) -> None:
        if decl.provider != "openai" or decl.kind != self.kind:
            raise ValueError(f"{type(self).__name__} needs an openai {self.kind} model, got {decl!r}")
        self.decl = decl
        self.model_id = decl.model
        self._client = OpenAIClient(
            decl, alias=alias or decl.model, environ=environ, backoff_seconds=backoff_seconds
        )


class OpenAIEmbedder(_Provider):
    """Embeddings from `POST /v1/embeddings`, batched by `decl.batch_size`, returned in input order."""

    kind = "embedding"

    def __init__(self, decl: ModelDecl, **options: Any) -> None:
        super().__init__(decl, **options)
        assert decl.dimensions is not None and decl.batch_size is not None  # ModelDecl fills both
        self.dimensions = decl.dimensions
        self.batch_size = decl.batch_size

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """One vector of `dimensions` floats per text, in input order."""
        vectors: list[list[float]] = []
        for start in range(0, len(texts), self.batch_size):
            vectors.extend(self._embed_batch(list(texts[start : start + self.batch_size])))
        return vectors

    @property
    def _hint(self) -> str:
        if "dimensions" in self.decl.model_fields_set:
            return ""
        return f" (declare `dimensions: {self.dimensions}` to ask the provider for shortened vectors)"

    def _embed_batch(self, texts: list[str]) -> list[list[float]]:
        body: dict[str, Any] = {"model": self.model_id, "input": texts}
        if "dimensions" in self.decl.model_fields_set:
            body["dimensions"] = self.dimensions
        answer = self._client.post("embeddings", body, _Embeddings)
        by_index = {item.index: item.embedding for item in answer.data}
        if len(answer.data) != len(texts) or sorted(by_index) != list(range(len(texts))):
            raise self._client.invalid(f"expected one embedding per index 0..{len(texts) - 1}")
        wrong = sorted({len(vector) for vector in by_index.values()} - {self.dimensions})
        if wrong:
            raise self._client.invalid(
                f"embeddings have {wrong[0]} dimensions, expected {self.dimensions}{self._hint}"
            )
        return [by_index[i] for i in range(len(texts))]


class OpenAIChat(_Provider):
    """JSON-mode chat completions from `POST /v1/chat/completions` (temperature 0)."""

    kind = "chat"

    def complete_json(self, system: str, user: str, *, max_tokens: int | None = None) -> Any:
        """The model's answer to `system` + `user`, parsed as JSON (any JSON value)."""
        body: dict[str, Any] = {
            "model": self.model_id,
            "messages": [{"role": "system", "content": system}, {"role": "user", "content": user}],
            "temperature": 0,
            "response_format": {"type": "json_object"},
        }
        if max_tokens is not None:
            body["max_tokens"] = max_tokens
        content = self._client.post("chat/completions", body, _ChatCompletion).choices[0].message.content
        try:
            return json.loads(content)
        except ValueError as exc:
            raise self._client.invalid(f"message content is not JSON ({exc})") from exc
