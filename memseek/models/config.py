"""One model alias of `conf/models.yaml` (design §1 "Models") as a strict, frozen pydantic model.

```yaml
models:
  default: {kind: embedding, provider: local, model: all-MiniLM-L6-v2}
  remote:  {kind: embedding, provider: openai, model: text-embedding-3-small,
            base_url_env: OPENAI_BASE_URL, api_key_env: OPENAI_API_KEY}
  cheap:   {kind: chat, provider: openai, model: gpt-4o-mini,
            base_url_env: OPENAI_BASE_URL, api_key_env: OPENAI_API_KEY}
```

The declaration names environment variables, never their values: URLs and keys are read when the
provider is built, so a catalog loads (and validates) on a machine without credentials.
"""

from __future__ import annotations

from typing import Annotated
from typing import Any
from typing import Literal

from pydantic import BaseModel
from pydantic import ConfigDict
from pydantic import Field
from pydantic import StringConstraints
from pydantic import model_validator

LOCAL_MODEL = "all-MiniLM-L6-v2"
"""The only model the offline `local` provider ships."""
LOCAL_DIMENSIONS = 384

EnvName = Annotated[str, StringConstraints(pattern=r"^[A-Za-z_][A-Za-z0-9_]*$")]
"""An environment variable name (the value is looked up when the provider is built)."""

_DEFAULT_BATCH = {"local": 8, "openai": 256}
"""Texts per provider call. Local: the ONNX model pads each call to its longest text, so small calls
over length-sorted texts waste least (the ingest bench measures batch 8 beside batch 64:
docs/benchmarks.md)."""
_EMBEDDING_ONLY = ("dimensions", "batch_size")


class ModelDecl(BaseModel):
    """One model alias: what it is (`kind`), who serves it (`provider`) and how to reach it."""

    # strict: a YAML value of the wrong type is an error, never converted (`dimensions: true` is 1)
    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)

    kind: Literal["embedding", "chat"] = Field(description="embedding → vectors; chat → JSON completions.")
    provider: Literal["local", "openai"] = Field(
        description="local: packaged offline ONNX model; openai: any OpenAI-compatible HTTP API."
    )
    model: str = Field(
        min_length=1, max_length=200, description="Model name sent to (or run by) the provider."
    )
    base_url_env: EnvName | None = Field(
        None, description="Environment variable holding the base URL (openai provider; required)."
    )
    api_key_env: EnvName | None = Field(
        None, description="Environment variable holding the API key (openai provider; optional)."
    )
    dimensions: int | None = Field(
        LOCAL_DIMENSIONS,
        gt=0,
        le=16000,
        description="Vector length (embeddings only; default 384). When stated explicitly for provider "
        "openai it is also sent as the request's `dimensions` (OpenAI text-embedding-3 shortening).",
    )
    batch_size: int | None = Field(
        None,
        gt=0,
        le=4096,
        description="Texts per provider call (embeddings only; default 8 local, 256 openai).",
    )
    timeout_seconds: float = Field(30.0, gt=0, le=600, description="Per-request timeout (openai provider).")
    max_retries: int = Field(
        3, ge=0, le=10, description="Retries on connection errors, 429 and 5xx (openai)."
    )
    threads: int = Field(1, ge=1, le=64, description="ONNX intra-op threads (local provider).")
    query_threads: int | None = Field(
        None,
        ge=1,
        le=64,
        description="ONNX intra-op threads for one text, a search's query, while the cores are idle "
        "(local provider; default: onnxruntime's own pool, a thread per physical core, up to 4).",
    )

    @model_validator(mode="before")
    @classmethod
    def _fill_defaults(cls, data: Any) -> Any:
        """Defaults that depend on kind/provider; values for the wrong kind are left for `_check`."""
        if not isinstance(data, dict):
            return data
        filled = dict(data)
        if filled.get("kind") == "chat":
            filled.setdefault("dimensions", None)
        else:
            filled.setdefault("batch_size", _DEFAULT_BATCH.get(str(filled.get("provider")), 64))
        return filled

    @model_validator(mode="after")
    def _check(self) -> ModelDecl:
        if self.kind == "chat":
            given = [name for name in _EMBEDDING_ONLY if getattr(self, name) is not None]
            if given:
                raise ValueError(f"{', '.join(given)} only apply to embedding models")
        elif self.dimensions is None:
            raise ValueError("embedding models need dimensions")
        if self.provider == "local":
            self._check_local()
        elif self.base_url_env is None:
            raise ValueError("provider openai requires base_url_env")
        elif given := sorted({"threads", "query_threads"} & self.model_fields_set):
            raise ValueError(f"{', '.join(given)} only apply to provider local")
        return self

    def _check_local(self) -> None:
        if self.kind != "embedding":
            raise ValueError("provider local serves embeddings only")
        if self.model != LOCAL_MODEL:
            raise ValueError(f"provider local only ships model {LOCAL_MODEL!r}")
        if self.dimensions != LOCAL_DIMENSIONS:
            raise ValueError(f"{LOCAL_MODEL} has {LOCAL_DIMENSIONS} dimensions")
        remote = [name for name in ("base_url_env", "api_key_env") if getattr(self, name) is not None]
        if remote:
            raise ValueError(f"{', '.join(remote)} do not apply to provider local")
        if "timeout_seconds" in self.model_fields_set or "max_retries" in self.model_fields_set:
            raise ValueError("timeout_seconds and max_retries do not apply to provider local")


def accepted_model_names(model_id: str, decl: ModelDecl | None) -> tuple[str, ...]:
    """The names a supplied vector's `embedding_model` may give for one alias: its embedder's id
    and the model name conf/models.yaml declares (the one `GET /collections` shows)."""
    return tuple(sorted({model_id} | ({decl.model} if decl is not None else set())))
