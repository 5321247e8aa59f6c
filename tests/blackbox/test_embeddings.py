"""Record vectors (design §1 "Models", §3 `embedding`): a supplied embedding of the collection's
model skips the embedding step; one that does not fit is refused; vectors a column cannot hold.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from sqlalchemy.engine import Engine

from memseek.models.local import MODEL_ID
from memseek.runtime import Runtime
from tests.blackbox.design_support import VECTOR
from tests.blackbox.design_support import count_records
from tests.blackbox.design_support import embedding_calls
from tests.blackbox.design_support import embeddings_body
from tests.blackbox.design_support import post_raw
from tests.blackbox.design_support import process
from tests.blackbox.design_support import rec
from tests.blackbox.design_support import refused_at
from tests.blackbox.support import EMBED_MODEL
from tests.blackbox.support import ids
from tests.blackbox.support import search
from tests.blackbox.support import vec
from tests.blackbox.support import write
from tests.conftest import Client
from tests.conftest import Tenant
from tests.helpers import error
from tests.helpers import fetch
from tests.helpers import locs
from tests.helpers import post_records
from tests.helpers import written
from tests.helpers import written_ids
from tests.openai_server import OpenAIServer
from tests.openai_server import hashed_embedding

# --- supplied embeddings --------------------------------------------------------------------------


def test_a_supplied_embedding_of_the_collections_model_skips_the_embedding_step(bw: Client) -> None:
    (result,) = written(bw, rec("bw_vec", embedding=VECTOR, embedding_model=MODEL_ID))
    assert result["processing"] == "ready"
    assert fetch(bw, result["id"])["processing"] == "ready"


def test_the_model_named_in_models_yaml_is_the_embedding_model_id(bw: Client) -> None:
    """conf/models.yaml says `model: all-MiniLM-L6-v2`: a writer may name the model that way."""
    (result,) = written(bw, rec("bw_vec", embedding=VECTOR, embedding_model="all-MiniLM-L6-v2"))
    assert result["processing"] == "ready"


@pytest.mark.parametrize(
    ("record", "loc"),
    [
        pytest.param(
            rec("bw_vec", embedding=VECTOR, embedding_model="text-embedding-3-small"),
            ["embedding_model"],
            id="other-model",
        ),
        pytest.param(
            rec("bw_vec", embedding=VECTOR, embedding_model="default"),
            ["embedding_model"],
            id="alias-is-not-a-model-id",
        ),
        pytest.param(
            rec("bw_vec", embedding=VECTOR[:383], embedding_model=MODEL_ID),
            ["embedding"],
            id="too-few-dimensions",
        ),
        pytest.param(
            rec("bw_vec", embedding=[*VECTOR, 0.1], embedding_model=MODEL_ID),
            ["embedding"],
            id="too-many-dimensions",
        ),
        pytest.param(
            rec("bw_vec", embedding=["x"] * 384, embedding_model=MODEL_ID), ["embedding"], id="not-numbers"
        ),
        pytest.param(rec("bw_vec", embedding=[], embedding_model=MODEL_ID), ["embedding"], id="empty"),
        pytest.param(
            rec("bw_plain", embedding=VECTOR, embedding_model=MODEL_ID),
            ["embedding"],
            id="collection-without-embedding",
        ),
    ],
)
def test_a_supplied_embedding_that_does_not_fit_is_422(
    bw: Client, bw_db: Engine, bw_ws: Tenant, record: dict[str, Any], loc: list[str]
) -> None:
    refused_at(bw, bw_db, bw_ws, record, loc)


def test_a_non_finite_embedding_value_is_422(bw: Client) -> None:
    body = {"records": [rec("bw_vec", embedding_model=MODEL_ID)]}
    raw = json.dumps(body)[:-3] + ', "embedding": [' + ", ".join(["0.1"] * 383 + ["NaN"]) + "]}]}"
    response = bw.raw.post(
        "/records", data=raw, headers={**bw.tenant.headers, "Content-Type": "application/json"}
    )
    error(response, 422)


def test_a_supplied_embedding_skips_the_embedding_step(bw: Client) -> None:
    """§3: "the record then skips the embedding step"."""
    (result,) = written(bw, rec("bw_vec", embedding=VECTOR, embedding_model=MODEL_ID))
    assert result["processing"] == "ready"


DEFAULT_MODEL = "all-MiniLM-L6-v2"
"""The `model:` of the `bw` catalog's `default` alias (conf/models.yaml)."""


@pytest.mark.parametrize(
    "raw_values",
    [
        pytest.param(", ".join(['"0.05"'] * 384), id="numeric-strings"),
        pytest.param(", ".join(["true"] * 384), id="booleans"),
        pytest.param(", ".join(["0.05"] * 383 + ["Infinity"]), id="infinity"),
        pytest.param(", ".join(["0.05"] * 383 + ["-Infinity"]), id="minus-infinity"),
        pytest.param(", ".join(["0.05"] * 383 + ["1e400"]), id="overflowing-literal"),
        pytest.param(", ".join(["0.05"] * 383 + ["null"]), id="null-value"),
        pytest.param(", ".join(["[0.05]"] * 384), id="nested-lists"),
    ],
)
def test_a_supplied_embedding_is_a_list_of_finite_floats(
    bw: Client, bw_db: Any, bw_ws: Tenant, raw_values: str
) -> None:
    """Design §3: "optionally `embedding` (a list of finite floats) with `embedding_model` … else
    `422`"; "any invalid record → `422` listing every problem by index, and nothing is written"."""
    body = json.dumps({"records": [rec("bw_vec", embedding_model=DEFAULT_MODEL)]})
    raw = body[:-3] + ', "embedding": [' + raw_values + "]}]}"
    found = locs(post_raw(bw, "/records", raw))
    assert found and all(loc[:3] == ["records", 0, "embedding"] for loc in found), found
    assert count_records(bw_db, bw_ws) == 0


def test_a_wrong_embedding_model_is_located_at_its_record(bw: Client, bw_db: Any, bw_ws: Tenant) -> None:
    """Design §3: "the model id must equal the collection's embedding model id and the dimension
    must match, else `422`"; "any invalid record → `422` listing every problem by index"."""
    good = rec("bw_vec", embedding=VECTOR, embedding_model=DEFAULT_MODEL)
    other_model = rec("bw_vec", embedding=VECTOR, embedding_model="text-embedding-3-small")
    short = rec("bw_vec", embedding=VECTOR[:100], embedding_model=DEFAULT_MODEL)
    found = locs(post_records(bw, good, other_model, short))
    assert found == [["records", 1, "embedding_model"], ["records", 2, "embedding"]]
    assert count_records(bw_db, bw_ws) == 0


def test_a_remote_collection_takes_a_vector_of_its_own_model(
    sclient: Client, openai_server: OpenAIServer
) -> None:
    """Design §3: the writer may supply the vector "with the collection's own model … the record
    then skips the embedding step"."""
    vector = hashed_embedding("supplied remote vector", 384)
    record = rec(
        "bw_remote", text="supplied remote vector", embedding=vector, embedding_model="text-embedding-3-small"
    )
    (result,) = written(sclient, record)
    assert result["processing"] == "ready"
    assert embedding_calls(openai_server) == []
    wrong = rec("bw_remote", text="x", embedding=vector, embedding_model=DEFAULT_MODEL)
    assert locs(post_records(sclient, wrong)) == [["records", 0, "embedding_model"]]


def test_a_supplied_embedding_for_sx_vec_needs_the_declared_model(sx: Client) -> None:
    """Design §3: "the model id must equal the collection's embedding model id"."""
    record = vec("model check", embedding_model=EMBED_MODEL + "-other")
    assert locs(post_records(sx, record)) == [["records", 0, "embedding_model"]]


def test_a_wrong_model_and_a_wrong_dimension_are_both_listed(bw: Client, bw_db: Any, bw_ws: Tenant) -> None:
    """Design §3: "the model id must equal the collection's embedding model id and the dimension must
    match, else `422`"; "any invalid record → `422` listing every problem by index"."""
    record = rec("bw_vec", embedding=VECTOR[:10], embedding_model="text-embedding-3-small")
    found = {tuple(loc) for loc in locs(post_records(bw, record))}
    assert found == {("records", 0, "embedding_model"), ("records", 0, "embedding")}
    assert count_records(bw_db, bw_ws) == 0


def test_a_supplied_vector_needs_no_configured_provider(bw: Client) -> None:
    """Design §3: a supplied vector "skips the embedding step"; §1 Models: an unconfigured provider
    fails "the reads that need it" — this write does not need it (the `bw` app has no
    OPENAI_BASE_URL)."""
    vector = hashed_embedding("supplied offline", 384)
    record = rec(
        "bw_remote", text="supplied offline", embedding=vector, embedding_model="text-embedding-3-small"
    )
    (result,) = written(bw, record)
    assert result["processing"] == "ready"
    assert ids(search(bw, {"mode": "recent", "scope": {"collections": ["bw_remote"]}})) == [result["id"]]


def test_a_zero_vector_record_is_answered_with_finite_scores(sx: Client) -> None:
    """Design §3: `embedding` is "a list of finite floats"; spec: "Every value produced must be
    finite" — a record whose vector has no direction never turns a search into a 500 or NaN."""
    write(sx, vec("zero record vector", embedding=[0.0] * 384), vec("zero record vector"))
    for mode in ("vector", "hybrid"):
        body = {"q": "zero record vector", "mode": mode, "scope": {"collections": ["sx_vec"]}}
        hits = search(sx, body)["hits"]
        assert len(hits) == 2 and all(0.0 <= hit["score"] <= 1.0 for hit in hits)


# --- finite floats that a vector column cannot hold -----------------------------------------------


@pytest.mark.parametrize(
    "value",
    [
        pytest.param(1e39, id="above-float4"),
        pytest.param(-1e39, id="below-float4"),
        pytest.param(1e308, id="huge"),
        pytest.param(1e-50, id="tiny"),
    ],
)
def test_a_supplied_vector_of_extreme_finite_floats_is_stored_or_refused(
    bw: Client, bw_db: Any, bw_ws: Tenant, value: float
) -> None:
    """Design §3: `embedding` is "a list of finite floats" … "else `422`"; never a 500."""
    response = post_records(bw, rec("bw_vec", embedding=[value] * 384, embedding_model=DEFAULT_MODEL))
    if response.status_code == 201:
        assert response.get_json()["records"][0]["processing"] == "ready"
        search(bw, {"q": "a note", "mode": "vector", "scope": {"collections": ["bw_vec"]}})
    else:
        assert {loc[2] for loc in locs(response)} == {"embedding"}
        assert count_records(bw_db, bw_ws) == 0


VECTOR_SEARCH = {"q": "down provider", "mode": "vector", "scope": {"collections": ["sx_vec"]}}


@pytest.mark.parametrize("value", [1e39, 1e308], ids=["above-float4", "huge"])
def test_a_query_vector_of_extreme_floats_is_503_or_answered(
    sx: Client, server: OpenAIServer, value: float
) -> None:
    """Spec Errors: unusable embeddings → 503; design: "Never let a 500 leak internals"."""
    write(sx, vec("extreme query vector"))
    server.respond_next(embeddings_body([value] * 384), times=2)
    response = sx.post("/search", json={**VECTOR_SEARCH, "q": "extreme query vector"})
    if response.status_code != 200:
        error(response, 503)


@pytest.mark.parametrize("value", [1e39, 1e308], ids=["above-float4", "huge"])
def test_a_record_vector_of_extreme_floats_fails_the_record(
    sclient: Client, served: Runtime, openai_server: OpenAIServer, value: float
) -> None:
    """Design §1: a provider's unusable answer leaves the record "`pending`, then `failed`"; a
    record that is processed is `ready` — never a stuck queue or a half-visible record."""
    openai_server.respond_next(embeddings_body([value] * 384), times=50)
    (result,) = written(sclient, rec("bw_remote", text="extreme record vector"))
    process(served, max_attempts=2)
    assert fetch(sclient, result["id"])["processing"] in ("failed", "ready")


@pytest.mark.parametrize("value", [1e39, 1e308], ids=["above-float4", "huge"])
def test_an_unstorable_vector_fails_only_its_own_record(
    sclient: Client, served: Runtime, openai_server: OpenAIServer, value: float
) -> None:
    """Design §1: "All succeed → `ready`; failures are retried with backoff, then the record is
    `failed`" — the record whose vector is unusable, not its neighbour in the batch."""
    answer = embeddings_body([value] * 384, hashed_embedding("healthy neighbour", 384))
    openai_server.respond_next(answer, times=10)
    texts = ("poisoned", "healthy neighbour")
    record_ids = written_ids(sclient, *(rec("bw_remote", text=t) for t in texts))
    process(served, max_attempts=2)
    assert sorted(fetch(sclient, i)["processing"] for i in record_ids) == ["failed", "ready"]


def test_the_processing_error_shows_no_sql(
    sclient: Client, served: Runtime, openai_server: OpenAIServer
) -> None:
    """Design §1: a failed record is "visible through `GET /records/{id}` with the error"; brief and
    docs/models.md: errors never leak internals (statements, workspace ids, the provider's URL)."""
    openai_server.respond_next(embeddings_body([1e39] * 384), times=10)
    (record_id,) = written_ids(sclient, rec("bw_remote", text="poisoned"))
    process(served, max_attempts=1)
    record = fetch(sclient, record_id)
    assert record["processing"] == "failed" and record["processing_error"]
    shown = record["processing_error"]
    assert [w for w in ("UPDATE", "SELECT", "[SQL", "param_", sclient.tenant.id) if str(w) in shown] == []


def test_a_record_with_everything_supplied_is_ready_at_once(bw: Client) -> None:
    """Design §1: "A written record starts `pending` if anything must be computed for it, else
    `ready`"; Processing = the embedding plus "each enrichment the collection requires whose value
    was not supplied by the writer" (the `bw` app has no OpenAI-protocol provider configured)."""
    record = rec(
        "customer_events",
        text="all supplied",
        embedding=VECTOR,
        embedding_model=DEFAULT_MODEL,
        scores={"importance": 2},
        annotations={"sentiment": {"label": "negative"}},
    )
    (result,) = written(bw, record)
    assert result["processing"] == "ready"
    fetched = fetch(bw, result["id"])
    assert (fetched["processing"], fetched["processing_error"]) == ("ready", None)
    body = {"q": "all supplied", "mode": "vector", "scope": {"collections": ["customer_events"]}}
    assert ids(search(bw, body)) == [result["id"]]
