"""Orphan reports (`kind: graph_orphans`) through `POST /views/{name}/query`, on real PostgreSQL."""

from __future__ import annotations

from typing import Any

import pytest
from flask import Flask

from memseek.runtime import Runtime
from memseek.search.views import public_hash
from tests.conftest import Client
from tests.conftest import Tenant
from tests.helpers import locs
from tests.helpers import ok
from tests.helpers import view_query
from tests.helpers import written_ids
from tests.integration.view_support import NODES
from tests.integration.view_support import Graph
from tests.integration.view_support import link_body
from tests.integration.view_support import part_body


def orphans(client: Client, **parameters: Any) -> dict[str, Any]:
    return ok(view_query(client, "g_orphans", parameters))


def keys(body: dict[str, Any]) -> list[str]:
    return [o["key"] for o in body["orphans"]]


def test_the_response(vclient: Client, view_runtime: Runtime) -> None:
    [lonely] = written_ids(vclient, part_body("svc", "lonely"))
    written_ids(vclient, part_body("svc", "api", ["db"]), part_body("svc", "db"))
    catalog = view_runtime.catalog
    orphan = {"id": lonely, "entity": "svc", "key": "lonely", "text": "component lonely", "content": {}}
    body = ok(vclient.post("/views/g_orphans/query"))  # no body: every parameter takes its default
    assert body == {
        "view": {
            "name": "g_orphans",
            "version": 1,
            "hash": public_hash(catalog.view_hash(catalog.view("g_orphans"))),
        },
        "parameters": {"limit": 50},
        "hits": [orphan],
        "orphans": [orphan],
        "input_record_ids": [lonely],
        "truncated": False,
        "profiles": ["pg_default"],
        "backend": [{"kind": "graph", "name": "postgresql"}],
    }


def test_ordered_by_entity_then_key_and_truncated(vclient: Client) -> None:
    written_ids(
        vclient, *(part_body(entity, key) for entity, key in [("b", "x"), ("a", "z"), ("a", "B"), ("B", "a")])
    )
    assert [(o["entity"], o["key"]) for o in orphans(vclient)["orphans"]] == [
        ("B", "a"), ("a", "B"), ("a", "z"), ("b", "x"),
    ]  # fmt: skip
    assert (keys(orphans(vclient, limit=4)), orphans(vclient, limit=4)["truncated"]) == (
        ["a", "B", "z", "x"],
        False,
    )
    cut = orphans(vclient, limit=3)
    assert (keys(cut), cut["truncated"], cut["input_record_ids"]) == (
        ["a", "B", "z"], True, [o["id"] for o in cut["orphans"]],
    )  # fmt: skip


def test_a_link_at_either_end_is_enough(vclient: Client) -> None:
    written_ids(vclient, part_body("e", "subject"), part_body("e", "object"), part_body("e", "alone"))
    written_ids(vclient, link_body("subject", "rel", "elsewhere"), link_body("nowhere", "rel", "object"))
    assert keys(orphans(vclient)) == ["alone"]


DEAD = [
    pytest.param({"processing": "pending"}, id="pending"),
    pytest.param({"is_current": False}, id="superseded"),
    pytest.param({"retracted_at": "2026-01-01T00:00:00Z"}, id="retracted"),
    pytest.param({"status": "draft"}, id="draft"),
    pytest.param({"collection": "g_notes"}, id="not-a-link"),
]


@pytest.mark.parametrize("state", DEAD)
def test_dead_links_do_not_count(vclient: Client, graph: Graph, state: dict[str, Any]) -> None:
    graph.node("e", "n")
    graph.link("n", "rel", "m", **state)
    graph.link("m", "rel", "n", **state)
    assert keys(orphans(vclient)) == ["n"]


@pytest.mark.parametrize(
    "state",
    [
        pytest.param({"is_current": False}, id="superseded"),
        pytest.param({"processing": "pending"}, id="pending"),
        pytest.param({"processing": "failed"}, id="failed"),
        pytest.param({"status": "draft"}, id="draft"),
        pytest.param({"retracted_at": "2026-01-01T00:00:00Z"}, id="retracted"),
    ],
)
def test_only_current_active_ready_nodes_are_reported(
    vclient: Client, graph: Graph, state: dict[str, Any]
) -> None:
    graph.node("e", "counted")
    graph.node("e", "skipped", **state)
    graph.record(NODES, "e", "an event in the nodes collection", key=None)
    graph.record("g_notes", "e", "a keyed note", key="other-collection")
    assert keys(orphans(vclient)) == ["counted"]


def test_an_outdated_revision_never_hides_an_isolated_node(vclient: Client) -> None:
    written_ids(vclient, part_body("svc", "api", ["db"]), part_body("svc", "db"))
    assert keys(orphans(vclient)) == []
    written_ids(vclient, part_body("svc", "api", []))  # the new revision no longer depends on db
    assert keys(orphans(vclient)) == ["api", "db"]


def test_a_directly_written_link_counts_at_once(vclient: Client) -> None:
    written_ids(vclient, part_body("svc", "db"))
    written_ids(vclient, link_body("api", "depends_on", "db"))
    assert keys(orphans(vclient)) == []


def test_reports_stay_in_their_workspace(view_app: Flask, vclient: Client, other_tenant: Tenant) -> None:
    written_ids(vclient, part_body("svc", "db"))
    other = Client(view_app.test_client(), other_tenant)
    written_ids(other, link_body("api", "depends_on", "db"), part_body("svc", "cache"))
    assert keys(orphans(vclient)) == ["db"]
    assert keys(orphans(other)) == ["cache"]


@pytest.mark.parametrize(
    ("parameters", "loc"),
    [
        pytest.param({"limit": 0}, ["parameters", "limit"], id="zero"),
        pytest.param({"limit": 501}, ["parameters", "limit"], id="over-500"),
        pytest.param({"limit": 2.5}, ["parameters", "limit"], id="not-integer"),
        pytest.param({"seed": "x"}, ["parameters", "seed"], id="unknown"),
    ],
)
def test_invalid_parameters_are_422(vclient: Client, parameters: dict[str, Any], loc: list[Any]) -> None:
    assert loc in locs(view_query(vclient, "g_orphans", parameters))
