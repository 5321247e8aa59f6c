"""`GET /views`, `GET /rank/schema` and definition immutability, against the real database."""

from __future__ import annotations

from pathlib import Path

import pytest
import sqlalchemy as sa
import yaml
from sqlalchemy.engine import Engine

from memseek.api.views import describe_view
from memseek.catalog.load import load_catalog
from memseek.catalog.problems import CatalogError
from memseek.catalog.rank import OPERATORS
from memseek.catalog.rank import rank_hash
from memseek.catalog.rank import to_tree
from memseek.catalog.store import register_definitions
from memseek.runtime import Runtime
from memseek.schema import definitions
from memseek.search.view_checks import VIEW_CHECKS
from memseek.search.views import public_hash
from memseek.settings import Settings
from tests.conftest import Client
from tests.helpers import MINIMAL_CATALOG
from tests.helpers import build_catalog

REFERENCE = Path(__file__).resolve().parents[2] / "conf" / "reference"


def reference_view(file: str, name: str) -> dict[str, object]:
    """A view of the reference catalog as its YAML file defines it."""
    views = yaml.safe_load((REFERENCE / "views" / file).read_text())["views"]
    return next(view for view in views if view["name"] == name)


def test_get_views_lists_every_version_as_the_spec_shows(client: Client, runtime: Runtime) -> None:
    response = client.get("/views")
    assert response.status_code == 200
    views = response.get_json()["views"]
    assert [(v["name"], v["version"]) for v in views] == [
        ("customer_context", 1),
        ("customer_context_fused", 1),
        ("graph_query", 1),
        ("orphan_pages", 1),
        ("proposed_facts", 1),
        ("recall", 1),
        ("recent_activity", 1),
        ("upcoming_calendar", 1),
        ("upcoming_calendar", 2),  # inactive; the support_agent package pins it
    ]
    first = views[0]
    assert first == {
        "name": "customer_context",
        "version": 1,
        "hash": public_hash(runtime.catalog.view_hash(runtime.catalog.view("customer_context"))),
        "active": True,
        "kind": "search",
        "description": reference_view("customers.yaml", "customer_context")["description"],
        "parameters": {
            "entity": {"type": "string", "required": True, "default": None},
            "task": {"type": "string", "required": True, "default": None},
        },
        "input_schema": {
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "type": "object",
            "properties": {
                "entity": {"type": "string", "description": "The customer, e.g. contact.maria."},
                "task": {"type": "string", "description": "What you are trying to do right now, in words."},
            },
            "additionalProperties": False,
            "required": ["entity", "task"],
        },
        "collections": ["customer_events"],
        "required_capabilities": [],
        "profiles": ["pg_default"],
    }
    assert first["hash"].startswith("sha256-")


def test_get_views_graph_and_constrained_contracts(client: Client) -> None:
    views = {v["name"]: v for v in client.get("/views").get_json()["views"] if v["active"]}
    graph = views["graph_query"]
    assert (graph["kind"], graph["collections"], graph["profiles"]) == (
        "graph",
        ["dependencies"],
        ["pg_default"],
    )
    assert graph["input_schema"]["properties"]["depth"] == {
        "type": "integer",
        "description": "How many links to follow from the seed.",
        "minimum": 1,
        "maximum": 16,
        "default": 1,
    }
    assert graph["input_schema"]["properties"]["direction"]["enum"] == ["out", "in", "both"]
    assert graph["parameters"]["predicates"] == {"type": "string_array", "required": False, "default": []}
    orphans = views["orphan_pages"]
    assert (orphans["collections"], orphans["input_schema"]["required"]) == (
        ["components", "dependencies"],
        [],
    )
    calendar = views["upcoming_calendar"]
    assert calendar["required_capabilities"] == ["structured"]
    assert calendar["input_schema"]["properties"]["start"] == {
        "type": "string",
        "format": "date-time",
        "description": "Window start (inclusive), with a timezone.",
    }
    recent = views["recent_activity"]["input_schema"]["properties"]
    assert recent["channels"] == {
        "type": "array",
        "description": "Only events on these channels; omit for every channel.",
        "minItems": 1,
        "maxItems": 3,
        "items": {"type": "string", "enum": ["email", "call", "note"]},
    }


def test_get_views_needs_a_key(app, db) -> None:  # type: ignore[no-untyped-def]
    assert app.test_client().get("/views").status_code == 401


def test_active_is_package_aware(tmp_path: Path) -> None:
    root = build_catalog(
        tmp_path,
        {
            "views/ask2.yaml": "views:\n  - {name: ask, version: 2, query: {mode: recent}}\n",
            "packages/app.yaml": "package: {name: app, views: {ask: 2}}\n",
        },
    )
    for package, active in ((None, {1}), ("app", {2})):
        catalog = load_catalog(root, package=package, view_checks=VIEW_CHECKS)
        described = [describe_view(catalog, v, Settings()) for v in catalog.views["ask"]]
        assert {d["version"] for d in described if d["active"]} == active


def test_rank_schema(client: Client, runtime: Runtime) -> None:
    response = client.get("/rank/schema")
    assert response.status_code == 200
    body = response.get_json()
    operators = {op["name"]: op for op in body["grammar"]["operators"]}
    assert list(operators) == list(OPERATORS)
    assert operators["similarity"] | {"description": ""} == {
        "name": "similarity",
        "kind": "signal",
        "syntax": "[similarity]",
        "args": [],
        "arity": 0,
        "description": "",
        "modes": ["hybrid", "vector"],
        "in_boost": False,
    }
    assert (operators["product"]["args"], operators["product"]["kind"]) == (["factor", "a"], "shaper")
    assert operators["decay"]["args"] == ["a", "{midpoint: m, exponent: e}"]
    assert operators["score"]["modes"] == ["hybrid", "recent", "text", "vector"]
    assert all(op["description"] for op in operators.values())
    assert body["limits"] == {"max_nodes": 16, "max_levels": 5}
    defaults = body["defaults"]
    rank_default = runtime.catalog.rank_default
    assert rank_default is not None
    assert (defaults["hash"], defaults["candidates"]) == (rank_hash(rank_default), 200)
    assert defaults["variants"]["structured"] is None
    for mode in ("hybrid", "vector", "text", "recent"):
        assert defaults["variants"][mode] == to_tree(rank_default.variants[mode])
    assert defaults["variants"]["text"][1][2] == ["product", 1.0, ["normalize", ["score", "importance"]]]
    assert body["engines"] == {
        "memory_tpuf": {
            "backend": "turbopuffer",
            "layout": "shared",
            "consistency": "strong",
            "enabled_if_credentials": True,
            "capabilities": ["text", "vector"],
            "modes": ["vector", "text", "hybrid"],
        },
        "pg_default": {
            "backend": "pg",
            "capabilities": ["recent", "structured", "text", "vector"],
            "modes": ["vector", "text", "hybrid", "recent", "structured"],
        },
    }


def test_openapi_documents_the_routes(client: Client) -> None:
    paths = client.get("/openapi.json").get_json()["paths"]
    assert "get" in paths["/views"] and "get" in paths["/rank/schema"]


@pytest.fixture
def conn(engine: Engine):  # type: ignore[no-untyped-def]
    """A connection whose transaction is rolled back: stored definitions are global, not per test."""
    with engine.connect() as connection:
        transaction = connection.begin()
        yield connection
        transaction.rollback()


def test_definitions_are_stored_once_and_immutable(conn: sa.Connection, tmp_path: Path) -> None:
    catalog = load_catalog(MINIMAL_CATALOG, view_checks=VIEW_CHECKS)
    register_definitions(conn, catalog)
    register_definitions(conn, catalog)  # the same content again is fine
    stored = conn.execute(
        sa.select(
            definitions.c.kind,
            definitions.c.name,
            definitions.c.version,
            definitions.c.hash,
            definitions.c.body,
        ).where(definitions.c.name == "ask")
    ).one()
    assert (stored.kind, stored.version, stored.hash) == ("view", 1, catalog.hash_of("view", "ask"))
    assert "active" not in stored.body and stored.body["query"]["mode"] == "hybrid"
    views = (MINIMAL_CATALOG / "views" / "views.yaml").read_text()
    text_mode = views.replace("mode: hybrid", "mode: text")
    changed = load_catalog(build_catalog(tmp_path, {"views/views.yaml": text_mode}), view_checks=VIEW_CHECKS)
    with pytest.raises(CatalogError) as caught:
        register_definitions(conn, changed)
    (problem,) = caught.value.problems
    assert str(problem).startswith(
        "views/views.yaml: view ask v1: content differs from the stored view ask v1"
    )
    assert "publish a new version" in str(problem)


def test_switching_active_and_new_versions_register(conn: sa.Connection, tmp_path: Path) -> None:
    register_definitions(conn, load_catalog(MINIMAL_CATALOG, view_checks=VIEW_CHECKS))
    views = (MINIMAL_CATALOG / "views" / "views.yaml").read_text()
    root = build_catalog(
        tmp_path,
        {
            "views/views.yaml": views.replace(
                "  - name: ask\n    version: 1\n    active: true\n", "  - name: ask\n    version: 1\n"
            ),
            "views/ask2.yaml": "views:\n  - {name: ask, version: 2, active: true, query: {mode: recent}}\n",
        },
    )
    register_definitions(conn, load_catalog(root, view_checks=VIEW_CHECKS))
    count = conn.execute(
        sa.select(sa.func.count())
        .select_from(definitions)
        .where(definitions.c.kind == "view", definitions.c.name == "ask")
    ).scalar_one()
    assert count == 2


def test_runtime_registered_the_reference_catalog(runtime: Runtime, engine: Engine) -> None:
    with engine.connect() as connection:
        columns = (definitions.c.kind, definitions.c.name, definitions.c.version, definitions.c.hash)
        rows = connection.execute(sa.select(*columns)).all()
    stored = {(r.kind, r.name, r.version): r.hash for r in rows}
    for d in runtime.catalog.definitions:
        assert stored[(d.kind, d.name, d.version)] == d.hash


def test_a_catalog_may_bring_its_own_rank_default(conn: sa.Connection, runtime: Runtime) -> None:
    """The reference catalog's formulas and the shipped ones (MINIMAL_CATALOG) are both stored, by hash."""
    minimal = load_catalog(MINIMAL_CATALOG, view_checks=VIEW_CHECKS)
    register_definitions(conn, minimal)
    stored = set(
        conn.execute(sa.select(definitions.c.name).where(definitions.c.kind == "rank_default")).scalars()
    )
    names = {
        d.name
        for catalog in (minimal, runtime.catalog)
        for d in catalog.definitions
        if d.kind == "rank_default"
    }
    assert len(names) == 2 and names <= stored


def test_deployment_conf_is_recorded_as_last_loaded(conn: sa.Connection, tmp_path: Path) -> None:
    register_definitions(conn, load_catalog(MINIMAL_CATALOG, view_checks=VIEW_CHECKS))
    cheap = (
        "models:\n  cheap: {kind: chat, provider: openai, model: another-chat-model,"
        " base_url_env: OTHER_BASE_URL}\n"
    )
    repointed = load_catalog(build_catalog(tmp_path, {"conf/models.yaml": cheap}), view_checks=VIEW_CHECKS)
    register_definitions(conn, repointed)  # an operator setting, not a versioned contract
    stored = conn.execute(
        sa.select(definitions.c.hash, definitions.c.body).where(
            definitions.c.kind == "model", definitions.c.name == "cheap"
        )
    ).one()
    assert stored.hash == repointed.hash_of("model", "cheap")
    assert stored.body["model"] == "another-chat-model"
