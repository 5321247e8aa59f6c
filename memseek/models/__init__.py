"""Model providers: embeddings (packaged offline ONNX, OpenAI-compatible HTTP) and chat (HTTP).

Importing this package is cheap: onnxruntime and tokenizers load only when the local embedder
is first used. Both errors below are `BackendUnavailable` (503): a read that needs a model that
is unconfigured, unreachable or misbehaving fails instead of being ranked without it.
"""

from __future__ import annotations

from memseek.errors import BackendUnavailable


class ModelUnavailable(BackendUnavailable):
    """The provider is unconfigured (env var unset), unreachable, timing out or failing (5xx/429)."""


class ModelOutputInvalid(BackendUnavailable):
    """The provider answered, but not with what was asked (response shape, JSON, vector length)."""

    code = "model_output_invalid"
