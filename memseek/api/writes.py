"""`GET /writes` and `POST /writes/{name}`: write contracts over HTTP (docs/writes.md).

`GET /writes` lists every loaded version with its input contract, as `GET /views` does for
views (the `input_schema` comes from the same code). `POST /writes/{name}` takes
`{"parameters": {...}, "idempotency_key": "..."}` and writes one record through the active
version (`memseek.write.contracts.write_through`, which runs `POST /records`' own write path);
`?wait=true&timeout=S` waits for processing exactly as `POST /records` does.
"""

from __future__ import annotations

from typing import Any

from flask import Blueprint
from flask import Response
from flask import jsonify
from pydantic import BaseModel
from pydantic import ConfigDict
from pydantic import Field

from memseek.api.common import json_object
from memseek.api.common import runtime
from memseek.api.common import workspace
from memseek.api.openapi import Operation
from memseek.api.openapi import document
from memseek.api.records import WAIT_QUERY
from memseek.api.records import settled
from memseek.api.records import wait_params
from memseek.catalog.catalog import Catalog
from memseek.catalog.models import WriteContract
from memseek.catalog.parameters import input_schema
from memseek.catalog.parameters import parameter_summary
from memseek.catalog.writes import written_types
from memseek.search.views import public_hash
from memseek.write.contracts import ContractWrite
from memseek.write.contracts import find_write
from memseek.write.contracts import write_through
from memseek.write.ingest import Written
from memseek.write.models import Label

bp = Blueprint("writes", __name__)


class WriteCallIn(BaseModel):
    """`POST /writes/{name}`: the contract's parameters, and an optional idempotency key."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    parameters: dict[str, Any] = Field(
        default_factory=dict,
        description="The contract's parameters by name; `GET /writes` gives each version's input_schema.",
    )
    idempotency_key: Label | None = Field(
        None,
        description="Repeat-safe writes: the same key with the same parameters returns the first "
        "record; with other parameters it is a 409. Shared with POST /records in the workspace.",
    )


def identity(catalog: Catalog, contract: WriteContract) -> dict[str, Any]:
    """`{name, version, hash}`: the exact definition a call ran (the hash as views show theirs)."""
    digest = public_hash(catalog.write_hash(contract))
    return {"name": contract.name, "version": contract.version, "hash": digest}


def describe_write(catalog: Catalog, contract: WriteContract) -> dict[str, Any]:
    """One entry of `GET /writes`: identity, activity (package-aware), what it writes and the
    input contract."""
    return {
        **identity(catalog, contract),
        "active": catalog.is_active(contract),
        "description": contract.description,
        "collection": contract.collection,
        "collection_version": contract.collection_version,
        "types": list(written_types(contract)),
        "keyed": contract.key is not None,
        "status": contract.status,
        "parameters": parameter_summary(contract.parameters),
        "input_schema": input_schema(contract.parameters),
    }


def call_json(catalog: Catalog, result: ContractWrite, written: list[Written]) -> dict[str, Any]:
    """The answer to one call: the contract version, the parameters applied and the record."""
    return {
        "write": identity(catalog, result.contract),
        "parameters": result.parameters,
        "records": [w.to_json() for w in written],
    }


@bp.get("/writes")
def list_writes() -> Response:
    catalog = runtime().catalog
    return jsonify({"writes": [describe_write(catalog, w) for w in catalog.all_writes()]})


@bp.post("/writes/<name>")
def call_write(name: str) -> tuple[Response, int]:
    timeout = wait_params()
    find_write(runtime(), name)  # an unknown name is a 404 whatever the body holds
    body = WriteCallIn.model_validate(json_object(required=False))
    result = write_through(runtime(), workspace(), name, body.parameters, body.idempotency_key)
    return jsonify(call_json(runtime().catalog, result, settled(result.written, timeout))), 201


document(Operation("GET", "/writes", "Every loaded write contract version and its input contract"))
document(
    Operation(
        "POST",
        "/writes/{name}",
        "Write one record through the active version of a write contract",
        body=WriteCallIn,
        body_required=False,
        query=WAIT_QUERY,
        responses=(
            (201, "Written: the contract version, the parameters applied and {id, processing, current}"),
        ),
    )
)
