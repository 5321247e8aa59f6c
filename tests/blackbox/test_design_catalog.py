"""Design §1 "Collections", "Models", "Processing and enrichments", §2 the catalog, packages and MCP.

Catalogs are validated through `memseek catalog check DIR` (the CLI entry point, in process; one
real subprocess shows it needs no database) and served through the app.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from flask import Flask

from memseek.catalog.load import load_catalog
from memseek.cli import main
from memseek.errors import StartupError
from memseek.paths import reference_catalog
from memseek.runtime import Runtime
from memseek.settings import Settings
from tests.blackbox.support import mcp_tools
from tests.conftest import Client
from tests.conftest import Tenant
from tests.conftest import client_for
from tests.helpers import catalog_text
from tests.helpers import cli_env
from tests.helpers import error
from tests.helpers import fixture_catalog
from tests.helpers import listed_views
from tests.helpers import memseek
from tests.helpers import ok
from tests.helpers import runtime_for
from tests.helpers import view_query
from tests.helpers import write_files

# --- the design's examples, verbatim --------------------------------------------------------------


def check(
    root: Path,
    capsys: pytest.CaptureFixture[str],
    package: str | None = None,
    monkeypatch: pytest.MonkeyPatch | None = None,
) -> tuple[int, str]:
    """`memseek catalog check ROOT` → (exit code, stdout + stderr)."""
    if package is not None and monkeypatch is not None:
        monkeypatch.setenv("MEMSEEK_PACKAGE", package)
    code = main(["catalog", "check", str(root)])
    captured = capsys.readouterr()
    return code, captured.out + captured.err


def test_the_design_and_spec_examples_load_as_written(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out = check(fixture_catalog(tmp_path, "bw"), capsys)
    assert code == 0, out
    assert "valid" in out


DESIGN_COLLECTION_FILE = "collections/customer_events.yaml"
DESIGN_COLLECTION = catalog_text("bw", DESIGN_COLLECTION_FILE)
"""The design's `customer_events` v2 example, as the `bw` test catalog holds it."""


def test_the_design_collection_example_loads_on_the_shipped_conf(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Without conf files of its own: `default`, `importance`, `sentiment` and both profiles are shipped."""
    code, out = check(fixture_catalog(tmp_path, files={"collections/c.yaml": DESIGN_COLLECTION}), capsys)
    assert code == 0, out


def test_catalog_check_needs_no_database(bw_catalog: Path) -> None:
    env = cli_env(DATABASE_URL="postgresql://nobody@127.0.0.1:9/none", MEMSEEK_HOME="/nonexistent/home")
    result = memseek(env, "catalog", "check", str(bw_catalog))
    assert result.returncode == 0, result.stderr
    assert "valid" in result.stdout


def test_catalog_check_reports_every_problem_at_once_and_exits_non_zero(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    files = {
        "collections/a.yaml": "collections:\n  - {name: a, version: 1, types: [x], keyed: maybe}\n"
        "  - {name: b, version: 1, types: [x], embedding: nowhere}\n",
        "collections/z.yaml": "collections:\n  - {name: z, version: 1, types: []}\n",
        "views/v.yaml": "views:\n  - name: v\n    version: 1\n"
        "    query: {mode: recent, scope: {collections: [nope]}}\n",
    }
    result = memseek(cli_env(), "catalog", "check", str(write_files(tmp_path, files)))
    assert result.returncode != 0
    out = result.stdout + result.stderr
    assert "collections/a.yaml: collection a v1: collections[0].keyed" in out
    assert "collections/a.yaml: collection b v1: collections[1].embedding" in out
    assert "collections/z.yaml: collection z v1: collections[0].types" in out
    assert "views/v.yaml: view v v1: views[0].query.scope.collections[0]" in out
    assert "Traceback" not in out


# --- collections: every key -----------------------------------------------------------------------


EDGES = "  - {name: edges, version: 1, active: true, types: [link], keyed: false}\n"


def collections_file(*items: str) -> dict[str, str]:
    return {"collections/c.yaml": "collections:\n" + "".join(items)}


@pytest.mark.parametrize(
    ("yaml", "where"),
    [
        pytest.param(
            "  - {name: c, version: 1, types: [x], keyed: maybe}\n",
            "collections[0].keyed",
            id="keyed-not-true-false-any",
        ),
        pytest.param(
            "  - {name: c, version: 1, types: [x], keyed: 'yes'}\n",
            "collections[0].keyed",
            id="keyed-string-yes",
        ),
        pytest.param("  - {name: c, version: 1, types: []}\n", "collections[0].types", id="types-empty"),
        pytest.param("  - {name: c, version: 1}\n", "collections[0].types", id="types-missing"),
        pytest.param(
            "  - {name: c, version: 1, types: [x, x]}\n", "collections[0].types", id="types-repeated"
        ),
        pytest.param("  - {name: c, version: 0, types: [x]}\n", "collections[0].version", id="version-zero"),
        pytest.param(
            "  - {name: c, version: one, types: [x]}\n", "collections[0].version", id="version-word"
        ),
        pytest.param("  - {name: c, types: [x]}\n", "collections[0].version", id="version-missing"),
        pytest.param(
            "  - {name: 'bad name', version: 1, types: [x]}\n", "collections[0].name", id="name-bad"
        ),
        pytest.param(
            "  - {name: c, version: 1, types: [x], active: maybe}\n",
            "collections[0].active",
            id="active-not-boolean",
        ),
        pytest.param(
            "  - {name: c, version: 1, types: [x], search_profile: nope}\n",
            "collections[0].search_profile",
            id="search-profile-unknown",
        ),
        pytest.param(
            "  - {name: c, version: 1, types: [x], allowed_search_profiles: [nope]}\n",
            "collections[0].allowed_search_profiles[0]",
            id="allowed-profile-unknown",
        ),
        pytest.param(
            "  - {name: c, version: 1, types: [x], search_profile: pg_default,"
            " allowed_search_profiles: [memory_tpuf]}\n",
            "collections[0].search_profile",
            id="profile-not-allowed",
        ),
        pytest.param(
            "  - {name: c, version: 1, types: [x], embedding: nope}\n",
            "collections[0].embedding",
            id="embedding-unknown-alias",
        ),
        pytest.param(
            "  - {name: c, version: 1, types: [x], embedding: cheap}\n",
            "collections[0].embedding",
            id="embedding-is-a-chat-model",
        ),
        pytest.param(
            "  - {name: c, version: 1, types: [x], text_language: klingon}\n",
            "collections[0].text_language",
            id="text-language-unknown",
        ),
        pytest.param(
            "  - {name: c, version: 1, types: [x], fields: {f: {type: float}}}\n",
            "collections[0].fields.f.type",
            id="field-type-unknown",
        ),
        pytest.param(
            "  - {name: c, version: 1, types: [x], fields: {f: {path: a}}}\n",
            "collections[0].fields.f.type",
            id="field-type-missing",
        ),
        pytest.param(
            "  - {name: c, version: 1, types: [x], fields: {f: {type: string, indexed: true}}}\n",
            "collections[0].fields.f.indexed",
            id="field-unknown-key",
        ),
        pytest.param(
            "  - {name: c, version: 1, types: [x], fields: {f: {type: string, filterable: maybe}}}\n",
            "collections[0].fields.f.filterable",
            id="field-filterable-not-boolean",
        ),
        pytest.param(
            "  - {name: c, version: 1, types: [x], fields: {f: {type: string, path: 'a..b'}}}\n",
            "collections[0].fields.f.path",
            id="field-path-malformed",
        ),
        pytest.param(
            "  - {name: c, version: 1, types: [x], fields: {f: {type: string, fallback_paths: a}}}\n",
            "collections[0].fields.f.fallback_paths",
            id="field-fallback-not-a-list",
        ),
        pytest.param(
            "  - {name: c, version: 1, types: [x], scores: {importance: {display: maybe}}}\n",
            "collections[0].scores.importance.display",
            id="score-display-not-boolean",
        ),
        pytest.param(
            "  - {name: c, version: 1, types: [x], scores: {importance: {colour: red}}}\n",
            "collections[0].scores.importance.colour",
            id="score-unknown-key",
        ),
        pytest.param(
            "  - {name: c, version: 1, types: [x], enrichments: [nope]}\n",
            "collections[0].enrichments[0]",
            id="enrichment-unknown",
        ),
        pytest.param(
            "  - {name: c, version: 1, types: [x], keyed: true, fields: {d: {type: string}},"
            " links: [{field: missing, predicate: p, edges: edges}]}\n" + EDGES,
            "collections[0].links[0].field",
            id="link-field-undeclared",
        ),
        pytest.param(
            "  - {name: c, version: 1, types: [x], keyed: true, fields: {d: {type: number}},"
            " links: [{field: d, predicate: p, edges: edges}]}\n" + EDGES,
            "collections[0].links[0].field",
            id="link-field-not-a-string",
        ),
        pytest.param(
            "  - {name: c, version: 1, types: [x], keyed: true, fields: {d: {type: string}},"
            " links: [{field: d, predicate: p, edges: nowhere}]}\n",
            "collections[0].links[0].edges",
            id="link-edges-unknown",
        ),
        pytest.param(
            "  - {name: c, version: 1, types: [x], keyed: true, fields: {d: {type: string}},"
            " links: [{field: d, edges: edges}]}\n" + EDGES,
            "collections[0].links[0].predicate",
            id="link-predicate-missing",
        ),
        pytest.param(
            "  - {name: c, version: 1, types: [x], indexes: [a]}\n",
            "collections[0].indexes",
            id="unknown-key",
        ),
    ],
)
def test_each_collection_key_is_checked(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], yaml: str, where: str
) -> None:
    code, out = check(write_files(tmp_path, collections_file(yaml)), capsys)
    assert code != 0, out
    assert "collections/c.yaml: collection " in out
    assert where in out, out


def test_identity_rules_of_collections(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    files = collections_file(
        "  - {name: c, version: 1, active: true, types: [x]}\n",
        "  - {name: c, version: 2, active: true, types: [x]}\n",
        "  - {name: d, version: 1, types: [x]}\n",
        "  - {name: d, version: 1, types: [y]}\n",
    )
    code, out = check(write_files(tmp_path, files), capsys)
    assert code != 0
    assert "collection c" in out and "active" in out
    assert "collection d v1" in out


@pytest.mark.parametrize(
    "yaml",
    [
        pytest.param("  - {name: c, version: 1, types: [x], keyed: true}\n", id="keyed-true"),
        pytest.param("  - {name: c, version: 1, types: [x], keyed: false}\n", id="keyed-false"),
        pytest.param("  - {name: c, version: 1, types: [x], keyed: any}\n", id="keyed-any"),
        pytest.param("  - {name: c, version: 1, types: [x]}\n", id="defaults"),
        pytest.param(
            "  - {name: c, version: 1, types: [x], text_language: german}\n", id="text-language-german"
        ),
        pytest.param(
            "  - {name: c, version: 1, types: [x], text_language: simple}\n", id="text-language-simple"
        ),
        pytest.param("  - {name: c, version: 1, types: [x], embedding: remote}\n", id="embedding-remote"),
        pytest.param(
            "  - {name: c, version: 1, types: [x], search_profile: memory_tpuf,"
            " allowed_search_profiles: [memory_tpuf]}\n",
            id="turbopuffer-profile",
        ),
        pytest.param(
            "  - name: c\n    version: 1\n    types: [x]\n    fields:\n"
            + "".join(
                f"      f_{t}: {{type: {t}, filterable: true, sortable: true, returnable: true}}\n"
                for t in ("string", "string_array", "number", "integer", "boolean", "datetime")
            ),
            id="every-field-type",
        ),
        pytest.param(
            "  - {name: c, version: 1, types: [x], enrichments: [importance, sentiment, region]}\n",
            id="shipped-enrichments",
        ),
    ],
)
def test_valid_collection_declarations_load(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], yaml: str
) -> None:
    code, out = check(write_files(tmp_path, collections_file(yaml)), capsys)
    assert code == 0, out


# --- conf files -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "text", "where"),
    [
        pytest.param(
            "search_profiles.yaml",
            "profiles:\n  p: {backend: pg, layout: shared}\n",
            "profiles.p",
            id="pg-takes-no-options",
        ),
        pytest.param(
            "search_profiles.yaml",
            "profiles:\n  p: {backend: turbopuffer, layout: sideways}\n",
            "profiles.p.layout",
            id="turbopuffer-layout",
        ),
        pytest.param(
            "search_profiles.yaml",
            "profiles:\n  p: {backend: turbopuffer, consistency: weak}\n",
            "profiles.p.consistency",
            id="turbopuffer-consistency",
        ),
        pytest.param(
            "search_profiles.yaml",
            "profiles:\n  p: {backend: turbopuffer, enabled_if_credentials: x}\n",
            "profiles.p.enabled_if_credentials",
            id="turbopuffer-credentials-flag",
        ),
        pytest.param(
            "search_profiles.yaml", "profiles:\n  p: {backend: elastic}\n", "profiles.p", id="unknown-backend"
        ),
        pytest.param(
            "models.yaml",
            "models:\n  m: {kind: chat, provider: local, model: all-MiniLM-L6-v2}\n",
            "models.m",
            id="local-chat-model",
        ),
        pytest.param(
            "models.yaml",
            "models:\n  m: {kind: embedding, provider: magic, model: x}\n",
            "models.m.provider",
            id="unknown-provider",
        ),
        pytest.param(
            "models.yaml",
            "models:\n  m: {kind: embedding, provider: openai}\n",
            "models.m.model",
            id="model-missing",
        ),
        pytest.param(
            "models.yaml",
            "models:\n  m: {kind: embedding, provider: openai, model: x}\n",
            "models.m",
            id="openai-without-base-url-env",
        ),
        pytest.param(
            "models.yaml",
            "models:\n  m: {kind: speech, provider: openai, model: x, base_url_env: U}\n",
            "models.m.kind",
            id="unknown-kind",
        ),
        pytest.param(
            "enrichments.yaml",
            "enrichments:\n  e: {kind: llm_score, instructions: Rate.}\n",
            "enrichments.e.range",
            id="llm-score-without-range",
        ),
        pytest.param(
            "enrichments.yaml",
            "enrichments:\n  e: {kind: llm_score, instructions: Rate., range: [10, 1]}\n",
            "enrichments.e.range",
            id="llm-score-range-reversed",
        ),
        pytest.param(
            "enrichments.yaml",
            "enrichments:\n  e: {kind: llm_score, range: [1, 10]}\n",
            "enrichments.e.instructions",
            id="llm-score-without-instructions",
        ),
        pytest.param(
            "enrichments.yaml",
            "enrichments:\n  e: {kind: llm_label}\n",
            "enrichments.e.labels",
            id="llm-label-without-labels",
        ),
        pytest.param(
            "enrichments.yaml",
            "enrichments:\n  e: {kind: llm_label, labels: []}\n",
            "enrichments.e.labels",
            id="llm-label-no-labels",
        ),
        pytest.param(
            "enrichments.yaml", "enrichments:\n  e: {kind: guess}\n", "enrichments.e", id="unknown-kind"
        ),
        pytest.param(
            "enrichments.yaml",
            "enrichments:\n  e: {kind: client, range: [1, 2]}\n",
            "enrichments.e.range",
            id="client-takes-no-range",
        ),
        pytest.param(
            "rank_default.yaml",
            "candidates: 200\nvariants:\n  text: [similarity]\n",
            "variants.text",
            id="rank-default-signal-outside-its-mode",
        ),
        pytest.param(
            "rank_default.yaml",
            "candidates: 200\nvariants:\n  text: [wobble]\n  vector: [const, 1]\n"
            "  hybrid: [const, 1]\n  recent: [const, 1]\n",
            "variants.text",
            id="rank-default-bad-operator",
        ),
        pytest.param(
            "rank_default.yaml",
            "candidates: 0\nvariants:\n  text: [const, 1]\n  vector: [const, 1]\n"
            "  hybrid: [const, 1]\n  recent: [const, 1]\n",
            "candidates",
            id="rank-default-candidates",
        ),
        pytest.param(
            "rank_default.yaml",
            "candidates: 200\nvariants:\n  text: [score, nobody_declares_this]\n"
            "  vector: [const, 1]\n  hybrid: [const, 1]\n  recent: [const, 1]\n",
            "variants.text",
            id="rank-default-unknown-score",
        ),
    ],
)
def test_each_conf_file_is_checked(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str, text: str, where: str
) -> None:
    code, out = check(write_files(tmp_path, {f"conf/{name}": text}), capsys)
    assert code != 0, out
    assert f"conf/{name}" in out and where in out, out


DESIGN_CONF = ("search_profiles.yaml", "models.yaml", "enrichments.yaml")
"""The design's conf file examples, as the `bw` test catalog holds them."""


def test_the_conf_examples_load_as_written(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    files = {
        **{f"conf/{name}": catalog_text("bw", f"conf/{name}") for name in DESIGN_CONF},
        "conf/rank_default.yaml": "candidates: 200\nvariants:\n"
        "  text:\n    - sum\n    - - [product, 1.0, [normalize, [text_match]]]\n"
        "      - [product, 1.0, [decay, [age_hours, last_accessed], {midpoint: 24, exponent: 1}]]\n"
        "  vector: [normalize, [similarity]]\n  hybrid: [max, [[similarity], [text_match]]]\n"
        "  recent: [decay, [age_hours, occurred_at], {midpoint: 24, exponent: 1}]\n",
    }
    code, out = check(write_files(tmp_path, files), capsys)
    assert code == 0, out


def test_an_unknown_conf_file_is_reported(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out = check(write_files(tmp_path, {"conf/profiles.yaml": "profiles: {}\n"}), capsys)
    assert code != 0 and "conf/profiles.yaml" in out


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


# --- immutability ---------------------------------------------------------------------------------


def test_changing_a_loaded_version_is_refused(bw_runtime: Runtime, tmp_path: Path) -> None:
    changed = DESIGN_COLLECTION.replace(
        "types: [event, note, reflection]", "types: [event, note, reflection, call]"
    )
    with pytest.raises(StartupError) as raised:
        runtime_for(bw_runtime, fixture_catalog(tmp_path, "bw", files={DESIGN_COLLECTION_FILE: changed}))
    message = str(raised.value)
    assert "customer_events" in message and "v2" in message
    assert "new version" in message


def test_comments_order_and_active_flags_are_not_changes(bw_runtime: Runtime, tmp_path: Path) -> None:
    views = catalog_text("bw", "views/views.yaml")
    swapped = views.replace(
        "    active: true\n    parameters:\n      entity: {type: string, required: true}\n      start:",
        "    parameters:\n      entity: {type: string, required: true}\n      start:",
        1,
    )
    swapped = swapped.replace(
        "  - name: upcoming_calendar\n    version: 2\n",
        "  - name: upcoming_calendar\n    version: 2\n    active: true\n",
    )
    assert swapped != views
    files = {"views/views.yaml": "# reordered and re-commented\n" + swapped}
    runtime = runtime_for(bw_runtime, fixture_catalog(tmp_path, "bw", files=files))
    assert runtime.catalog.view("upcoming_calendar").version == 2


def test_an_invalid_catalog_refuses_to_start(bw_url: str, tmp_path: Path) -> None:
    root = write_files(tmp_path, collections_file("  - {name: c, version: 1, types: [x], keyed: maybe}\n"))
    result = memseek(
        cli_env(DATABASE_URL=bw_url, MEMSEEK_CATALOG=str(root)), "serve", "--port", "1", timeout=120
    )
    assert result.returncode != 0
    assert "collections/c.yaml: collection c v1: collections[0].keyed" in result.stderr
    assert "Traceback" not in result.stderr


# --- the reference catalog ------------------------------------------------------------------------


def test_the_reference_catalog_holds_the_spec_examples() -> None:
    catalog = load_catalog(reference_catalog())
    customer = catalog.view("customer_context")
    assert customer.query is not None and customer.query["mode"] == "hybrid"
    assert customer.query["scope"]["collections"] == ["customer_events"]
    calendar = catalog.view("upcoming_calendar")
    assert calendar.query is not None and calendar.query["mode"] == "structured"
    fused = [v for versions in catalog.views.values() for v in versions if v.query and "sources" in v.query]
    assert any(
        [s["name"] for s in v.query["sources"]] == ["events", "reflections"]  # type: ignore[index]
        for v in fused
    )
    assert catalog.view("graph_query").kind == "graph"
    assert catalog.view("orphan_pages").kind == "graph_orphans"


def test_the_reference_rank_default_adds_normalised_importance(app: Flask, tenant: Any) -> None:
    client = Client(app.test_client(), tenant)
    defaults = client.get("/rank/schema").get_json()["defaults"]["variants"]
    recency = ["product", 1.0, ["decay", ["age_hours", "last_accessed"], {"midpoint": 24, "exponent": 1}]]
    importance = ["product", 1.0, ["normalize", ["score", "importance"]]]
    relevance = {  # spec "Rank expressions": the shipped defaults, N(importance) added as a third term
        "text": ["normalize", ["text_match"]],
        "vector": ["normalize", ["similarity"]],
        "hybrid": ["normalize", ["max", [["similarity"], ["text_match"]]]],
    }
    for mode, signal in relevance.items():
        assert defaults[mode] == ["sum", [["product", 1.0, signal], recency, importance]], mode


def test_the_reference_catalog_serves_the_spec_views(app: Flask, tenant: Any) -> None:
    client = Client(app.test_client(), tenant)
    names = {v["name"] for v in client.get("/views").get_json()["views"]}
    assert {"customer_context", "upcoming_calendar", "graph_query", "orphan_pages"} <= names


def test_the_default_runtime_uses_the_reference_catalog() -> None:
    assert Settings.from_env({}).memseek_catalog == reference_catalog()
    assert (reference_catalog() / "collections").is_dir()


# --- view parameters (spec "Parameter fields"): constraints are checked against the type at load ---


SEARCH_QUERY = "    query: {mode: recent, scope: {collections: [bw_plain]}}\n"


@pytest.mark.parametrize(
    "parameter",
    [
        pytest.param("{type: string, required: 'yes'}", id="required-not-boolean"),
        pytest.param(
            "{type: datetime, default: '2026-01-01T00:00:00'}", id="datetime-default-without-timezone"
        ),
        pytest.param("{type: string, min_length: 3, enum: [ab, abc]}", id="enum-entry-breaks-min-length"),
        pytest.param("{type: integer, minimum: 1, maximum: 5, default: 9}", id="default-above-maximum"),
        pytest.param("{type: string_array, item_enum: [a, b], default: [c]}", id="default-item-not-allowed"),
        pytest.param("{type: string_array, max_items: 1, default: [a, b]}", id="default-too-many-items"),
        pytest.param("{type: boolean, minimum: 0}", id="minimum-on-boolean"),
        pytest.param("{type: integer, min_length: 1}", id="min-length-on-integer"),
        pytest.param("{type: string, default: null, required: true}", id="required-and-default-null"),
    ],
)
def test_each_parameter_constraint_is_checked_against_its_type(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], parameter: str
) -> None:
    files = {
        "views/p.yaml": f"views:\n  - name: p\n    version: 1\n    parameters:\n"
        f"      x: {parameter}\n{SEARCH_QUERY}",
    }
    code, out = check(fixture_catalog(tmp_path, "bw", files=files), capsys)
    assert code != 0, out
    assert "views/p.yaml: view p v1: views[0].parameters.x" in out, out
