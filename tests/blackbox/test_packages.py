"""Packages (design §2 "Packages and MCP"): `MEMSEEK_PACKAGE` selects one package, whose pinned
versions answer and whose `mcp.tools` are the agent tools; a package naming what is not loaded
is refused.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from flask import Flask

from memseek.runtime import Runtime
from tests.blackbox.catalog_support import call_tool
from tests.blackbox.catalog_support import check
from tests.blackbox.catalog_support import one_view
from tests.blackbox.support import at
from tests.blackbox.support import check_catalog
from tests.blackbox.support import invalid
from tests.blackbox.support import mcp_tools
from tests.blackbox.support import note
from tests.blackbox.support import with_views
from tests.blackbox.support import write
from tests.conftest import Client
from tests.conftest import Tenant
from tests.conftest import client_for
from tests.helpers import error
from tests.helpers import fixture_catalog
from tests.helpers import listed_views
from tests.helpers import ok
from tests.helpers import runtime_for
from tests.helpers import view_query
from tests.helpers import write_files

# --- packages -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "where"),
    [
        pytest.param(
            "package:\n  name: p\n  views: {customer_context: 9}\n", "package.views", id="version-missing"
        ),
        pytest.param("package:\n  name: p\n  views: {nothing: 1}\n", "package.views", id="view-missing"),
        pytest.param(
            "package:\n  name: p\n  views: {customer_context: 1}\n  mcp: {tools: [bw_graph]}\n",
            "package.mcp.tools",
            id="tool-not-in-views",
        ),
        pytest.param(
            "package:\n  name: p\n  views: {customer_context: 1}\n  mcp: {resources: []}\n",
            "package.mcp.resources",
            id="mcp-unknown-key",
        ),
        pytest.param("package:\n  views: {customer_context: 1}\n", "package.name", id="name-missing"),
        pytest.param("package:\n  name: p\n  views: {}\n", "package.views", id="no-views"),
    ],
)
def test_each_package_key_is_checked(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str, where: str
) -> None:
    code, out = check(fixture_catalog(tmp_path, "bw", files={"packages/p.yaml": text}), capsys)
    assert code != 0, out
    assert "packages/p.yaml" in out and where in out, out


def test_memseek_package_must_name_a_loaded_package(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    code, out = check(fixture_catalog(tmp_path, "bw"), capsys, "support_agent", monkeypatch)
    assert code == 0, out
    code, out = check(fixture_catalog(tmp_path, "bw"), capsys, "nobody", monkeypatch)
    assert code != 0 and "MEMSEEK_PACKAGE" in out


CALENDAR = {"entity": "maria", "start": "2026-07-01T00:00:00Z", "end": "2026-08-01T00:00:00Z"}


def test_without_a_package_active_true_decides(bw: Client) -> None:
    listed = listed_views(bw)
    assert listed[("upcoming_calendar", 1)]["active"] is True
    assert listed[("upcoming_calendar", 2)]["active"] is False
    assert listed[("bw_graph", 1)]["active"] is True
    assert ok(view_query(bw, "upcoming_calendar", CALENDAR))["view"]["version"] == 1


@pytest.fixture
def packaged(bw_runtime: Runtime, bw_ws: Tenant) -> Client:
    """A client of the `bw` catalog served with MEMSEEK_PACKAGE=support_agent."""
    return client_for(runtime_for(bw_runtime, memseek_package="support_agent"), bw_ws)


def test_a_package_pins_the_versions_that_answer(packaged: Client) -> None:
    listed = listed_views(packaged)
    assert listed[("upcoming_calendar", 2)]["active"] is True
    assert listed[("upcoming_calendar", 1)]["active"] is False
    assert listed[("customer_context", 1)]["active"] is True
    assert listed[("bw_graph", 1)]["active"] is False  # not in the package
    assert ok(view_query(packaged, "upcoming_calendar", CALENDAR))["view"]["version"] == 2
    error(packaged.post("/views/bw_graph/query", json={"seed": "x"}), 404)


def test_the_packages_mcp_tools_are_the_agent_tools(packaged: Client) -> None:
    assert sorted(mcp_tools(packaged)) == ["customer_context"]


def test_without_a_package_every_active_view_is_a_tool(bw: Client) -> None:
    assert sorted(mcp_tools(bw)) == ["bw_graph", "customer_context", "upcoming_calendar"]


def test_package_pins_the_active_versions(pkg_app: Flask, tenant: Tenant, server: Any) -> None:
    """ "MEMSEEK_PACKAGE selects one package; its pinned versions become the active ones for
    POST /views/{name}/query"."""
    client = Client(pkg_app.test_client(), tenant)
    write(client, note("1", entity="pk"), note("2", entity="pk"))
    body = ok(view_query(client, "bv10_ver", {"entity": "pk"}))
    assert body["view"]["version"] == 1
    assert len(body["hits"]) == 1
    views = listed_views(client)
    assert views[("bv10_ver", 1)]["active"] is True
    assert views[("bv10_ver", 2)]["active"] is False


def test_package_exposes_only_its_views(pkg_app: Flask, tenant: Tenant, server: Any) -> None:
    """ "A deployment package decides which exact versions it exposes": a view outside it has no
    active version (404)."""
    client = Client(pkg_app.test_client(), tenant)
    error(view_query(client, "bv10_ctx", {"entity": "abc", "task": "x"}), 404)


def test_unknown_package_refuses_to_start(bv_runtime: Runtime, bv_root: Path) -> None:
    """A package name that the catalog does not define cannot be selected."""
    with pytest.raises(Exception):  # noqa: B017, PT011 — the document names no exception type
        runtime_for(bv_runtime, bv_root, memseek_package="bv10_none")


BAD_PACKAGES = [
    pytest.param("package:\n  name: bv10_p\n  views: {bv10_case: 9}\n", id="unknown-version"),
    pytest.param("package:\n  name: bv10_p\n  views: {bv10_nope: 1}\n", id="unknown-view"),
    pytest.param(
        "package:\n  name: bv10_p\n  views: {bv10_case: 1}\n  mcp: {tools: [bv10_other]}\n",
        id="tool-outside-views",
    ),
]
SEARCH_QUERY_LINE = "    query: {mode: recent, scope: {collections: [sx_notes]}}\n"


@pytest.mark.parametrize("package", BAD_PACKAGES)
def test_bad_package_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str], package: str) -> None:
    """A package pins "exact versions this deployment exposes" and mcp tools are "which of those
    become agent tools": references outside that are refused at load."""
    root = with_views(tmp_path, one_view("1", SEARCH_QUERY_LINE))
    write_files(root, {"packages/bv10.yaml": package})
    code, _ = check_catalog(root, capsys)
    assert code != 0


def test_a_package_pins_what_answers_what_is_listed_and_what_is_a_tool(av5_pkg: Client) -> None:
    """Design: "`MEMSEEK_PACKAGE` selects one package; its pinned versions become the active ones for
    `POST /views/{name}/query`"; `mcp.tools` — "which of those become agent tools"; each tool has
    "the view's `input_schema`". Spec: "view.hash pins the exact definition that ran"."""
    views = listed_views(av5_pkg)
    assert views[("av5_pick", 2)]["active"] is True and views[("av5_pick", 1)]["active"] is False
    assert views[("av5_knobs", 1)]["active"] is False and views[("av5_walk", 1)]["active"] is True
    body = ok(view_query(av5_pkg, "av5_pick", {"entity": "e"}))
    assert body["view"] == {"name": "av5_pick", "version": 2, "hash": views[("av5_pick", 2)]["hash"]}
    assert body["parameters"] == {"entity": "e", "topic": "a"}
    invalid(view_query(av5_pkg, "av5_pick", {"entity": "e", "topic": "c"}), "parameters", "topic")
    error(view_query(av5_pkg, "av5_knobs", {"task": "x"}), 404, "not_found")
    listed = mcp_tools(av5_pkg)
    assert set(listed) == {"av5_pick", "av5_walk"}
    assert listed["av5_pick"]["inputSchema"] == views[("av5_pick", 2)]["input_schema"]
    assert listed["av5_walk"]["inputSchema"] == views[("av5_walk", 1)]["input_schema"]
    result = call_tool(av5_pkg, "av5_pick", {"entity": "e"})["result"]
    assert result.get("isError") is not True
    assert result["structuredContent"]["view"] == body["view"]


def test_a_package_decides_which_versions_are_exposed(
    sx: Client, sx_runtime: Runtime, tenant: Tenant
) -> None:
    packaged = client_for(runtime_for(sx_runtime, memseek_package="sx_pkg"), tenant)
    (record,) = write(sx, note("newest", entity="e", occurred_at=at(9)))
    body = ok(view_query(packaged, "sx_context", {"entity": "e"}))
    assert body["view"]["version"] == 2 and body["input_record_ids"] == [record]
    error(view_query(packaged, "sx_contract", {"entity": "maria"}), 404, "not_found")
    views = listed_views(packaged)
    assert views[("sx_context", 2)]["active"] is True and views[("sx_context", 1)]["active"] is False
    assert views[("sx_contract", 1)]["active"] is False  # listed (every loaded version), not exposed
