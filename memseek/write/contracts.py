"""Writing through a write contract: `POST /writes/{name}` and the MCP write tools.

1. The contract is the active version of `name` — the one the deployment package pins when
   `MEMSEEK_PACKAGE` is set — or a 404.
2. The caller's arguments are checked against its parameters exactly as a view's are (unknown,
   missing, wrongly typed or out-of-range → 422 at `("parameters", name)`), defaults applied.
3. The record template is filled and handed, as a batch of one, to `write_records` — the
   function `POST /records` runs — in a transaction confined to the caller's workspace, so every
   record rule, idempotency, lanes, links and processing apply unchanged.
4. A problem the write path finds in the filled record is reported at the parameter whose value
   produced it (`memseek.catalog.writes.blamed`); an idempotency conflict at `idempotency_key`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any
from uuid import UUID

from memseek.catalog.catalog import UnknownDefinition
from memseek.catalog.models import WriteContract
from memseek.catalog.template import validate_arguments
from memseek.catalog.writes import blamed
from memseek.catalog.writes import filled_record
from memseek.db import workspace_transaction
from memseek.errors import Conflict
from memseek.errors import NotFound
from memseek.errors import RequestInvalid
from memseek.runtime import Runtime
from memseek.suggest import hint
from memseek.write.ingest import Written
from memseek.write.ingest import write_records


@dataclass(frozen=True, slots=True)
class ContractWrite:
    """One finished call: the contract version that ran, the parameters it applied (defaults
    included) and what the write path reported for the record."""

    contract: WriteContract
    parameters: dict[str, Any]
    written: list[Written]


def find_write(runtime: Runtime, name: str) -> WriteContract:
    """The version of write contract `name` callers get, or 404."""
    catalog = runtime.catalog
    try:
        return catalog.write(name)
    except UnknownDefinition:
        active = [w.name for w in catalog.all_writes() if catalog.is_active(w)]
        known = hint(name, active, "the active write contracts are")
        raise NotFound(f"no active write contract named {name!r}{known}") from None


def write_through(
    runtime: Runtime, workspace_id: UUID, name: str, arguments: Any, idempotency_key: str | None = None
) -> ContractWrite:
    """Write one record through the active version of contract `name` (see the module docstring)."""
    contract = find_write(runtime, name)
    values = validate_arguments(contract, arguments)
    record = filled_record(contract, values)
    if idempotency_key is not None:
        record["idempotency_key"] = idempotency_key
    try:
        with workspace_transaction(runtime.engine, workspace_id) as conn:
            written = write_records(conn, runtime, workspace_id, [record])
    except (RequestInvalid, Conflict) as exc:
        message = f"write contract {contract.name!r} v{contract.version}: {exc.message}"
        raise type(exc)(message, blamed(contract, exc.details)) from None
    return ContractWrite(contract, values, written)
