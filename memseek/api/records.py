"""The write API (design §3): `POST /records`, `GET /records/{id}`, retract, approve, reject.

A malformed record id is answered `404` exactly like an unknown one (and like another
workspace's id): a path segment that cannot name a record names nothing.
"""

from __future__ import annotations

import time
from typing import Any
from uuid import UUID

from flask import Blueprint
from flask import Response
from flask import jsonify
from flask import request

from memseek import deadline
from memseek.api.admission import WAIT_LANE
from memseek.api.common import admission
from memseek.api.common import json_object
from memseek.api.common import query
from memseek.api.common import runtime
from memseek.api.common import scoped
from memseek.api.common import workspace
from memseek.api.openapi import Operation
from memseek.api.openapi import QueryParam
from memseek.api.openapi import document
from memseek.errors import Detail
from memseek.errors import NotFound
from memseek.errors import RequestInvalid
from memseek.write import lanes
from memseek.write import store
from memseek.write.ingest import Written
from memseek.write.ingest import write_records
from memseek.write.limits import MAX_RECORDS
from memseek.write.models import EmptyIn
from memseek.write.models import ReasonIn
from memseek.write.models import RecordsIn
from memseek.write.progress import BATCHES

bp = Blueprint("records", __name__)

DEFAULT_WAIT = 10.0
MAX_WAIT = 60.0
RECORDS_SHAPE = '{"records": [{"collection": …, "entity": …, "type": …, "text": …}]}'
"""The body's shape, as a body without `records` is told (GET /collections lists collections and types)."""
WAIT_PATTERN = "^([Tt][Rr][Uu][Ee]|[Ff][Aa][Ll][Ss][Ee]|1|0)$"
"""The spellings `?wait=` takes: true or false in any case, 1 or 0."""
RECHECK = 1.0
"""Seconds a waiting request sleeps without news from this process's worker before it reads its
records' states again (a worker in another process settles records without telling it)."""


def _records_list(body: dict[str, Any]) -> list[Any]:
    """The `records` array of the body; the envelope is checked here, each record later."""
    problems = [Detail((key,), "Extra inputs are not permitted") for key in body if key != "records"]
    items = body.get("records")
    if not isinstance(items, list):
        problems.append(Detail(("records",), f"a list of records is required: {RECORDS_SHAPE}"))
    elif not 1 <= len(items) <= MAX_RECORDS:
        problems.append(Detail(("records",), f"expected 1 to {MAX_RECORDS} records, got {len(items)}"))
    if problems:
        raise RequestInvalid("the request is invalid", problems)
    return items  # type: ignore[return-value]


def wait_params() -> float | None:
    """Seconds to wait for processing (None: do not wait), from `?wait=true&timeout=…` (checked
    against the route's declared parameters, `WAIT_QUERY`, before it runs)."""
    params = query()
    wait = params.get("wait", "false").lower() in ("true", "1")
    return float(params.get("timeout", DEFAULT_WAIT)) if wait else None


def waits(written: Written) -> bool:
    """Whether `?wait=true` has something to wait for: the record or one of its links pending."""
    return written.processing == "pending" or bool(written.pending_links)


def settled(written: list[Written], timeout: float | None) -> list[Written]:
    """`written` as `?wait=` asks: their states after waiting up to `timeout` seconds (None: as
    written). Under `memseek serve` only its wait threads wait (they bound how many do, a
    write queued for one waits its turn); under another server a bounded number of requests wait
    at once (`admission`), and a write past it answers at once with its records' current states."""
    lane = request.environ.get(WAIT_LANE)
    if timeout is None or not any(map(waits, written)) or lane is False:
        return written
    if lane:
        return wait_for(written, timeout)
    with admission().wait_slot(workspace()) as granted:
        return wait_for(written, timeout) if granted else written


def wait_for(written: list[Written], timeout: float) -> list[Written]:
    """Sleep until none of `written` (nor their pending links) is pending or `timeout` seconds
    passed; their latest states. The sleep ends when this process's worker settles a batch, or
    after `RECHECK` seconds (`memseek.write.progress`); each read of the states has the request
    deadline's length of its own, since the wait may outlast the request's."""
    until = time.monotonic() + timeout
    ids = list(dict.fromkeys(i for w in written for i in (w.id, *w.pending_links)))
    budget = runtime().settings.search_timeout_ms / 1000
    while True:
        mark = BATCHES.mark()
        with deadline.renewed(budget), scoped() as conn:
            latest = store.states(conn, workspace(), ids)
        left = until - time.monotonic()
        if left <= 0 or all(state != "pending" for state, _ in latest.values()):
            return [Written(w.id, *latest.get(w.id, (w.processing, w.current))) for w in written]
        BATCHES.wait_past(mark, min(RECHECK, left))


WAIT_QUERY = (
    QueryParam(
        "wait",
        "string",
        description="Return once the written records are processed (or the timeout passes). A "
        "bounded number of requests wait at once; beyond it the write answers at once, its "
        "records `pending`, as without wait. true or false (any case), or 1 or 0.",
        bounds=(("pattern", WAIT_PATTERN),),
        form="true or false (in any case), 1 or 0",
    ),
    QueryParam(
        "timeout",
        "number",
        description="Seconds to wait (default 10, at most 60).",
        bounds=(("minimum", 0), ("maximum", MAX_WAIT), ("default", DEFAULT_WAIT)),
    ),
)
"""`?wait=true&timeout=S` as OpenAPI documents it (`wait_params` reads it)."""


@bp.post("/records")
def post_records() -> tuple[Response, int]:
    timeout = wait_params()
    items = _records_list(json_object())
    with scoped() as conn:
        written = write_records(conn, runtime(), workspace(), items)
    return jsonify({"records": [w.to_json() for w in settled(written, timeout)]}), 201


def _record_id(raw: str) -> UUID:
    try:
        return UUID(raw)
    except ValueError:
        raise NotFound(f"record {raw} not found") from None


def _record_response(record_id: UUID) -> Response:
    with scoped() as conn:
        row = store.fetch(conn, workspace(), record_id)
    if row is None:
        raise NotFound(f"record {record_id} not found")
    return jsonify(store.record_json(row))


@bp.get("/records/<raw_id>")
def get_record(raw_id: str) -> Response:
    record_id = _record_id(raw_id)
    runtime().touches.settle(workspace())  # show the last_accessed an earlier search set
    return _record_response(record_id)


@bp.post("/records/<raw_id>/retract")
def retract(raw_id: str) -> Response:
    record_id, reason = _record_id(raw_id), ReasonIn.model_validate(json_object()).reason
    with scoped() as conn:
        lanes.retract(conn, workspace(), record_id, reason)
    return _record_response(record_id)


@bp.post("/records/<raw_id>/reject")
def reject(raw_id: str) -> Response:
    record_id, reason = _record_id(raw_id), ReasonIn.model_validate(json_object()).reason
    with scoped() as conn:
        lanes.retract(conn, workspace(), record_id, reason, draft_only=True)
    return _record_response(record_id)


@bp.post("/records/<raw_id>/approve")
def approve(raw_id: str) -> Response:
    record_id = _record_id(raw_id)
    EmptyIn.model_validate(json_object(required=False))
    with scoped() as conn:
        lanes.approve(conn, workspace(), record_id)
    return _record_response(record_id)


document(
    Operation(
        "POST",
        "/records",
        "Write 1–1,000 records atomically",
        body=RecordsIn,
        query=WAIT_QUERY,
        responses=((201, "Written: one {id, processing, current} per input record, in order"),),
    )
)
document(Operation("GET", "/records/{id}", "The whole record"))
document(Operation("POST", "/records/{id}/retract", "Retract a record", body=ReasonIn))
document(
    Operation(
        "POST",
        "/records/{id}/approve",
        "Approve a draft into the active lane",
        body=EmptyIn,
        body_required=False,
    )
)
document(Operation("POST", "/records/{id}/reject", "Reject (retract) a draft", body=ReasonIn))
