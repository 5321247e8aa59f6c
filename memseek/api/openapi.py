"""`GET /openapi.json`: OpenAPI 3.1, generated from the pydantic models that validate requests.

Each blueprint declares its operations with `document(...)` next to its routes.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from flask import Blueprint
from flask import Response
from flask import jsonify
from pydantic import BaseModel
from pydantic.json_schema import models_json_schema

import memseek

bp = Blueprint("openapi", __name__)

REF = "#/components/schemas/{model}"


@dataclass(frozen=True, slots=True)
class QueryParam:
    name: str
    type: str
    required: bool = False
    description: str = ""
    bounds: tuple[tuple[str, Any], ...] = ()
    """More JSON Schema keywords of the value, such as (("minimum", 1), ("default", 20))."""


@dataclass(frozen=True, slots=True)
class Operation:
    method: str
    path: str
    summary: str
    body: type[BaseModel] | None = None
    body_required: bool = True
    query: tuple[QueryParam, ...] = ()
    responses: tuple[tuple[int, str], ...] = ((200, "OK"),)
    public: bool = False


OPERATIONS: list[Operation] = []


def document(operation: Operation) -> None:
    """Declare one route for the OpenAPI description."""
    OPERATIONS.append(operation)


ERROR_SCHEMA = {
    "type": "object",
    "required": ["error"],
    "properties": {
        "error": {
            "type": "object",
            "required": ["code", "message", "details"],
            "properties": {
                "code": {"type": "string"},
                "message": {"type": "string"},
                "details": {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "properties": {
                            "loc": {"type": "array", "items": {"type": ["string", "integer"]}},
                            "msg": {"type": "string"},
                        },
                    },
                },
            },
        }
    },
}


PATH_VARIABLE = re.compile(r"\{([^}]+)\}")
PATH_SCHEMAS = {
    "id": {"type": "string", "format": "uuid", "description": "A record id."},
    "name": {"type": "string", "description": "A view or write contract name."},
    "entity": {"type": "string", "description": "An entity (what records are about)."},
    "erasure_id": {"type": "string", "format": "uuid", "description": "An erasure id."},
}


def _path_parameter(name: str) -> dict[str, Any]:
    schema = PATH_SCHEMAS.get(name, {"type": "string"})
    return {"name": name, "in": "path", "required": True, "schema": schema}


def _operation_json(op: Operation) -> dict[str, Any]:
    out: dict[str, Any] = {"summary": op.summary, "responses": {}}
    if op.body is not None:
        ref = {"$ref": REF.format(model=op.body.__name__)}
        out["requestBody"] = {"required": op.body_required, "content": {"application/json": {"schema": ref}}}
    parameters = [_path_parameter(name) for name in PATH_VARIABLE.findall(op.path)]
    parameters += [
        {
            "name": q.name,
            "in": "query",
            "required": q.required,
            "description": q.description,
            "schema": {"type": q.type, **dict(q.bounds)},
        }
        for q in op.query
    ]
    if parameters:
        out["parameters"] = parameters
    for status, text in op.responses:
        out["responses"][str(status)] = {"description": text}
    for status in (401, 404, 409, 413, 422, 503):
        if not (op.public and status == 401):  # no key asked, none refused
            out["responses"].setdefault(str(status), {"$ref": "#/components/responses/Error"})
    if not op.public:
        out["security"] = [{"bearer": []}]
    return out


def build_openapi() -> dict[str, Any]:
    models = sorted({op.body for op in OPERATIONS if op.body}, key=lambda m: m.__name__)
    _, schemas = models_json_schema([(m, "validation") for m in models], ref_template=REF)
    components = dict(schemas.get("$defs", {}))
    components["Error"] = ERROR_SCHEMA
    paths: dict[str, dict[str, Any]] = {}
    for op in sorted(OPERATIONS, key=lambda o: (o.path, o.method)):
        paths.setdefault(op.path, {})[op.method.lower()] = _operation_json(op)
    return {
        "openapi": "3.1.0",
        "info": {"title": "Memseek", "version": memseek.__version__},
        "paths": paths,
        "components": {
            "schemas": components,
            "responses": {
                "Error": {
                    "description": "Error",
                    "content": {"application/json": {"schema": {"$ref": REF.format(model="Error")}}},
                }
            },
            "securitySchemes": {"bearer": {"type": "http", "scheme": "bearer"}},
        },
    }


@bp.get("/openapi.json")
def openapi() -> Response:
    return jsonify(build_openapi())


document(Operation("GET", "/health", "Database reachability and catalog hash", public=True))
document(Operation("GET", "/openapi.json", "This description (no key needed)", public=True))
