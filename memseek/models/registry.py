"""Model aliases → providers: what the rest of Memseek calls to embed text or ask a chat model.

```python
registry = ModelRegistry(catalog.models)
vectors = registry.embedder("default").embed(["some text"])   # list of 384 floats per text
judged = registry.chat("cheap").complete_json(system_prompt, user_prompt)
```

Providers are built on first use and cached per alias; the local ONNX model is loaded once per
process whatever the number of aliases or registries. Building never reads the network or the
environment: an unconfigured HTTP provider fails (ModelUnavailable, 503) when it is called. A
registry also keeps its recent query embeddings (`query_vectors`), dropped by `close`.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from collections.abc import Mapping
from collections.abc import Sequence
from types import MappingProxyType
from typing import Any
from typing import Protocol

from memseek.models import ModelUnavailable
from memseek.models.config import ModelDecl
from memseek.models.local import LocalEmbedder
from memseek.models.openai import OpenAIChat
from memseek.models.openai import OpenAIEmbedder
from memseek.models.query_cache import QueryVectorCache


class Embedder(Protocol):
    """Turns texts into vectors of `dimensions` floats; `model_id` is stored with every vector."""

    @property
    def model_id(self) -> str: ...

    @property
    def dimensions(self) -> int: ...

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """One vector per text, in input order."""
        ...


class ChatModel(Protocol):
    """Answers a system + user prompt with one JSON value."""

    @property
    def model_id(self) -> str: ...

    def complete_json(self, system: str, user: str, *, max_tokens: int | None = None) -> Any:
        """The answer parsed as JSON; raises ModelOutputInvalid when it is not JSON."""
        ...


Environ = Mapping[str, str] | None
_Factory = Callable[[str, ModelDecl, Environ], Any]
_FACTORIES: dict[tuple[str, str], _Factory] = {
    ("embedding", "local"): lambda _alias, decl, _env: LocalEmbedder(
        batch_size=decl.batch_size or 64, threads=decl.threads, query_threads=decl.query_threads
    ),
    ("embedding", "openai"): lambda alias, decl, env: OpenAIEmbedder(decl, alias=alias, environ=env),
    ("chat", "openai"): lambda alias, decl, env: OpenAIChat(decl, alias=alias, environ=env),
}
"""(kind, provider) → constructor; `ModelDecl` rejects every other combination."""


class ModelRegistry:
    """The providers of a catalog's model aliases, built lazily and cached (thread-safe)."""

    def __init__(self, decls: Mapping[str, ModelDecl], environ: Mapping[str, str] | None = None) -> None:
        self.decls: Mapping[str, ModelDecl] = MappingProxyType(dict(decls))
        self._environ = environ
        self._lock = threading.Lock()
        self._providers: dict[str, Any] = {}
        self.query_vectors = QueryVectorCache()
        """Recent query embeddings of this registry's providers (`memseek.search.embed`)."""

    def close(self) -> None:
        """Drop the cached query vectors (the runtime is shutting down)."""
        self.query_vectors.clear()

    def embedder(self, alias: str) -> Embedder:
        """The embedding provider of `alias`."""
        provider: Embedder = self._provider(alias, "embedding")
        return provider

    def load_local(self) -> None:
        """Load every local embedding model the catalog declares now, not on first use:
        reading and verifying the model files takes ~0.4 s, which the first search or processed
        batch after a start would otherwise wait for (`memseek serve` calls this in the
        background)."""
        for alias, decl in self.decls.items():
            if (decl.kind, decl.provider) == ("embedding", "local"):
                local: LocalEmbedder = self._provider(alias, "embedding")  # _FACTORIES' local provider
                local.load()

    def chat(self, alias: str) -> ChatModel:
        """The chat provider of `alias`."""
        provider: ChatModel = self._provider(alias, "chat")
        return provider

    def _provider(self, alias: str, kind: str) -> Any:
        decl = self.decls.get(alias)
        if decl is None or decl.kind != kind:
            # Catalog references are validated at load; callers check request-supplied aliases (422).
            raise ModelUnavailable(f"no {kind} model named {alias!r} in the catalog")
        with self._lock:
            if alias not in self._providers:
                self._providers[alias] = _FACTORIES[decl.kind, decl.provider](alias, decl, self._environ)
            return self._providers[alias]
