"""The runtime's model registry is built from the loaded catalog's model aliases."""

from __future__ import annotations

from memseek.models.local import LocalEmbedder
from memseek.runtime import Runtime


def test_runtime_models_follow_the_catalog(runtime: Runtime) -> None:
    assert dict(runtime.models.decls) == dict(runtime.catalog.models)
    default = runtime.models.embedder("default")
    assert default.model_id == "all-MiniLM-L6-v2-onnx-int8"
    assert default.embed(["hello"]) == LocalEmbedder().embed(["hello"])
