"""`GET /health`: no authentication; database reachability and the catalog hash."""

from __future__ import annotations

import sqlalchemy as sa
from flask import Blueprint
from flask import Response
from flask import jsonify

from memseek.api.common import runtime

bp = Blueprint("health", __name__)


@bp.get("/health")
def health() -> tuple[Response, int]:
    rt = runtime()
    try:
        with rt.engine.connect() as conn:
            conn.execute(sa.text("SELECT 1"))
        database = "ok"
    except sa.exc.SQLAlchemyError:
        database = "unreachable"
    status = 200 if database == "ok" else 503
    body = {
        "status": "ok" if status == 200 else "degraded",
        "database": database,
        "catalog_hash": rt.catalog.hash,
    }
    return jsonify(body), status
