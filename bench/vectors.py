"""Vectors from the local model (`memseek.models.local`), cached on disk by text hash.

The cache is one SQLite file per model under `bench/results/cache/`; a text's key is the
sha256 of its UTF-8 bytes, its value the float32 vector. Benchmarks precompute vectors before
the service starts, so embedding never competes with the measured service for the two cores.
"""

from __future__ import annotations

import hashlib
import os
import sqlite3
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from bench import RESULTS_DIR
from memseek.models.local import MODEL_ID
from memseek.models.local import LocalEmbedder

CHUNK = 512


def text_key(text: str) -> bytes:
    return hashlib.sha256(text.encode("utf-8")).digest()


class VectorCache:
    """Vectors for texts, computed once with the local model and kept in SQLite."""

    def __init__(self, path: Path | None = None, embedder: LocalEmbedder | None = None) -> None:
        self.path = path or RESULTS_DIR / "cache" / f"vectors-{MODEL_ID}.sqlite"
        self.path.parent.mkdir(parents=True, exist_ok=True)
        # One ONNX thread per core: nothing else runs while the cache fills (about twice the
        # texts/s of one thread on 2 cores), and the raw-model baselines build their own
        # one-thread embedder.
        self.embedder = embedder or LocalEmbedder(batch_size=64, threads=os.cpu_count() or 1)
        self.db = sqlite3.connect(self.path, timeout=120)
        self.db.execute("CREATE TABLE IF NOT EXISTS vectors (key BLOB PRIMARY KEY, vec BLOB NOT NULL)")
        self.computed = 0

    def close(self) -> None:
        self.db.close()

    def _lookup(self, keys: Sequence[bytes]) -> dict[bytes, np.ndarray]:
        found: dict[bytes, np.ndarray] = {}
        for start in range(0, len(keys), 900):  # SQLite's bound-parameter limit
            part = keys[start : start + 900]
            marks = ",".join("?" * len(part))
            for key, blob in self.db.execute(f"SELECT key, vec FROM vectors WHERE key IN ({marks})", part):
                found[key] = np.frombuffer(blob, dtype=np.float32)
        return found

    def vectors(self, texts: Sequence[str], progress: str = "") -> np.ndarray:
        """One unit vector per text (float32 matrix, input order); missing ones are embedded now."""
        keys = [text_key(t) for t in texts]
        found = self._lookup(list(dict.fromkeys(keys)))
        missing = list({k: t for k, t in zip(keys, texts, strict=True) if k not in found}.items())
        started = time.perf_counter()
        for start in range(0, len(missing), CHUNK):
            part = missing[start : start + CHUNK]
            vecs = np.asarray(self.embedder.embed([t for _, t in part]), dtype=np.float32)
            rows = [(k, v.tobytes()) for (k, _), v in zip(part, vecs, strict=True)]
            self.db.executemany("INSERT OR REPLACE INTO vectors VALUES (?, ?)", rows)
            self.db.commit()
            found.update({k: v for (k, _), v in zip(part, vecs, strict=True)})
            self.computed += len(part)
            if progress:
                done = start + len(part)
                rate = done / max(time.perf_counter() - started, 1e-9)
                print(f"  {progress}: embedded {done}/{len(missing)} new texts ({rate:.0f}/s)", flush=True)
        return (
            np.stack([found[k] for k in keys])
            if keys
            else np.zeros((0, self.embedder.dimensions), np.float32)
        )


@dataclass(frozen=True, slots=True)
class ModelThroughput:
    """The raw model: texts per second for one batch call (no cache, no database)."""

    texts: int
    seconds: float
    batch_size: int
    threads: int

    @property
    def per_second(self) -> float:
        return self.texts / self.seconds


def model_throughput(texts: Sequence[str], *, batch_size: int = 64, threads: int = 1) -> ModelThroughput:
    """Time `LocalEmbedder.embed` over `texts` (after loading the model and one warm-up batch)."""
    embedder = LocalEmbedder(batch_size=batch_size, threads=threads)
    embedder.load()
    embedder.embed(list(texts[:8]))
    started = time.perf_counter()
    embedder.embed(list(texts))
    return ModelThroughput(len(texts), time.perf_counter() - started, batch_size, threads)


def as_json_vector(vec: np.ndarray) -> list[float]:
    """A vector for a JSON body: 8 decimals moves each component by at most 5e-9 and halves the payload."""
    return np.round(vec.astype(np.float64), 8).tolist()
