"""`GET /openapi.json`: OpenAPI 3.1, generated from the pydantic models that validate requests.

Each blueprint declares its operations with `document(...)` next to its routes.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from collections.abc import Mapping
from dataclasses import dataclass
from dataclasses import replace
from functools import cache
from typing import Any

from flask import Blueprint
from flask import Response
from flask import current_app
from flask import jsonify
from jsonschema import Draft202012Validator
from pydantic import BaseModel
from pydantic.json_schema import models_json_schema

import memseek
from memseek.errors import Detail
from memseek.errors import RequestInvalid
from memseek.runtime import Runtime
from memseek.storable import PATTERN_FORMS
from memseek.storable import STORABLE

bp = Blueprint("openapi", __name__)

REF = "#/components/schemas/{model}"

Refine = Callable[[Runtime], Mapping[str, Any]]
"""JSON Schema keywords of a value that depend on the deployment (its catalog, its settings)."""


@dataclass(frozen=True, slots=True)
class QueryParam:
    """One query parameter of a route. The server checks every request against these
    declarations (`check_query`) before the route runs, so the document and the server agree."""

    name: str
    type: str
    required: bool = False
    description: str = ""
    bounds: tuple[tuple[str, Any], ...] = ()
    """More JSON Schema keywords of the value, such as (("minimum", 1), ("default", 20))."""
    refine: Refine | None = None
    form: str = ""
    """The values a `pattern` in `bounds` admits, in words: the message a value of another form
    gets (a regular expression tells a caller little). The shared patterns of `storable` have
    their words there (`PATTERN_FORMS`)."""

    def refined(self, refine: Refine) -> QueryParam:
        """This parameter with keywords that depend on the deployment."""
        return replace(self, refine=refine)

    def schema(self, rt: Runtime | None) -> dict[str, Any]:
        """The value's JSON Schema, as documented and as enforced, for this deployment."""
        extra = self.refine(rt) if self.refine is not None and rt is not None else {}
        return {"type": self.type, **dict(self.bounds), **extra}

    def value(self, raw: str, rt: Runtime | None) -> Any:
        """`raw` read as the declared type and checked against `schema`; ValueError says why not."""
        reader = QUERY_READERS[self.type]
        if (match := reader[0].fullmatch(raw)) is None:
            raise ValueError(f"must be {reader[1]}")
        value = reader[2](match[0])
        error = next(iter(_validator(_frozen(self.schema(rt))).iter_errors(value)), None)
        form = self.form or PATTERN_FORMS.get(dict(self.bounds).get("pattern", ""), "")
        if error is not None and error.validator == "pattern" and form:
            raise ValueError(f"must be {form}, not {raw!r}")
        if error is not None:
            raise ValueError(error.message)
        return value


QUERY_READERS: dict[str, tuple[re.Pattern[str], str, Callable[[str], Any]]] = {
    "string": (re.compile(r".*", re.DOTALL), "a string", str),
    "integer": (re.compile(r"-?[0-9]+"), "an integer (decimal digits)", int),
    "number": (re.compile(r"-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?"), "a number", float),
    "boolean": (re.compile(r"true|false"), "true or false", lambda raw: raw == "true"),
}
"""How a query parameter's text reads as each JSON Schema type: (form, what it must be, reader).
One form per type, the one OpenAPI clients send, so nothing is accepted that is not declared."""


def _frozen(schema: dict[str, Any]) -> tuple[tuple[str, Any], ...]:
    return tuple(sorted((key, _hashable(value)) for key, value in schema.items()))


def _hashable(value: Any) -> Any:
    return tuple(value) if isinstance(value, list) else value


@cache
def _validator(schema: tuple[tuple[str, Any], ...]) -> Draft202012Validator:
    return Draft202012Validator({key: list(v) if isinstance(v, tuple) else v for key, v in schema})


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
    """Declare one route for the OpenAPI description (and for the checks every request of it
    gets before the route runs: its query parameters, its body's media type)."""
    OPERATIONS.append(operation)


_RULE_VARIABLE = re.compile(r"<(?:[^:>]+:)?([^>]+)>")
ROUTE_VARIABLES = {"raw_id": "id"}
"""Route variables named differently in the code than in the documented paths."""


def documented_path(rule: str) -> str:
    """The documented path of a Flask rule: `/records/<raw_id>/retract` → `/records/{id}/retract`."""
    return _RULE_VARIABLE.sub(lambda m: "{" + ROUTE_VARIABLES.get(m[1], m[1]) + "}", rule)


def operation_for(method: str, rule: str) -> Operation | None:
    """The declared operation of a matched route (None for an undeclared one)."""
    path = documented_path(rule)
    return next((op for op in OPERATIONS if op.method == method and op.path == path), None)


def check_query(op: Operation, args: Mapping[str, list[str]], rt: Runtime | None) -> dict[str, Any]:
    """The declared query parameters of `op`, read and checked (`QueryParam.value`); a 422 at
    `["query", name]` lists every unknown, repeated, missing or invalid one."""
    declared = {param.name: param for param in op.query}
    values: dict[str, Any] = {}
    problems = [Detail(("query", name), _unknown(op)) for name in args if name not in declared]
    for name, param in declared.items():
        given = args.get(name, [])
        if len(given) > 1:
            problems.append(Detail(("query", name), "give this parameter once"))
        elif given:
            try:
                values[name] = param.value(given[0], rt)
            except ValueError as exc:
                problems.append(Detail(("query", name), str(exc)))
        elif param.required:
            problems.append(Detail(("query", name), "Field required"))
    if problems:
        raise RequestInvalid("the query parameters are invalid", problems)
    return values


def check_path(variables: Mapping[str, Any]) -> None:
    """A matched route's variables checked against their documented schemas (`PATH_SCHEMAS`): a
    `422` at `["path", name]` for a value the document declares invalid (an entity no record could
    be about, such as one holding a NUL character). A well-formed id that names nothing is the
    route's own `404`."""
    problems = []
    for raw_name, value in variables.items():
        name = ROUTE_VARIABLES.get(raw_name, raw_name)
        schema = _frozen(PATH_SCHEMAS.get(name, {"type": "string"}))
        if (error := next(iter(_validator(schema).iter_errors(value)), None)) is not None:
            problems.append(Detail(("path", name), error.message))
    if problems:
        raise RequestInvalid("the path is invalid", problems)


def _unknown(op: Operation) -> str:
    names = ", ".join(param.name for param in op.query)
    return f"unknown query parameter; this route takes {names or 'none'}"


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
    "entity": {"type": "string", "pattern": STORABLE, "description": "An entity (what records are about)."},
    "erasure_id": {"type": "string", "format": "uuid", "description": "An erasure id."},
}


def _path_parameter(name: str) -> dict[str, Any]:
    schema = PATH_SCHEMAS.get(name, {"type": "string"})
    return {"name": name, "in": "path", "required": True, "schema": schema}


def _operation_json(op: Operation, rt: Runtime | None) -> dict[str, Any]:
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
            "schema": q.schema(rt),
        }
        for q in op.query
    ]
    if parameters:
        out["parameters"] = parameters
    for status, text in op.responses:
        out["responses"][str(status)] = {"description": text}
    statuses = (401, 404, 409, 413, 415, 422, 429, 503) if op.body else (401, 404, 409, 422, 429, 503)
    for status in statuses:
        if not (op.public and status == 401):  # no key asked, none refused
            out["responses"].setdefault(str(status), {"$ref": "#/components/responses/Error"})
    if not op.public:
        out["security"] = [{"bearer": []}]
    return out


def build_openapi(rt: Runtime | None = None) -> dict[str, Any]:
    """The OpenAPI document; with `rt`, as strict as that deployment's server (its catalog's
    collections, its limits)."""
    models = sorted({op.body for op in OPERATIONS if op.body}, key=lambda m: m.__name__)
    _, schemas = models_json_schema([(m, "validation") for m in models], ref_template=REF)
    components = dict(schemas.get("$defs", {}))
    components["Error"] = ERROR_SCHEMA
    paths: dict[str, dict[str, Any]] = {}
    for op in sorted(OPERATIONS, key=lambda o: (o.path, o.method)):
        paths.setdefault(op.path, {})[op.method.lower()] = _operation_json(op, rt)
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
    return jsonify(build_openapi(current_app.extensions["memseek"]))


document(Operation("GET", "/health", "Database reachability and catalog hash", public=True))
document(Operation("GET", "/openapi.json", "This description (no key needed)", public=True))
