"""Design §3 `POST /records`: the body, every RecordIn field and rule, atomicity, idempotency, wait."""

from __future__ import annotations

import json
from typing import Any

import pytest
from sqlalchemy.engine import Engine

from memseek.models.local import MODEL_ID
from tests.blackbox.design_support import VECTOR
from tests.blackbox.design_support import rec
from tests.blackbox.design_support import refused_at
from tests.conftest import Client
from tests.conftest import Tenant
from tests.helpers import error
from tests.helpers import fetch
from tests.helpers import written

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
