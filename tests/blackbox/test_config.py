"""Configuration (design §4): every variable, its default and its refusal naming it, and the
deployment ceilings, which narrow the spec's ranges and never widen them.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from memseek.errors import ConfigError
from memseek.paths import reference_catalog
from memseek.settings import Settings
from tests.blackbox.conftest import ClientFactory
from tests.blackbox.support import invalid
from tests.blackbox.support import link
from tests.blackbox.support import mcp_tools
from tests.blackbox.support import part
from tests.blackbox.support import write
from tests.conftest import Client
from tests.helpers import cli_env
from tests.helpers import memseek
from tests.helpers import ok
from tests.helpers import view_query

# --- the configuration variables ------------------------------------------------------------------


DEFAULTS = {
    "database_url": None, "memseek_package": None, "max_query_chars": 8192, "max_graph_depth": 16,
    "max_graph_paths": 500, "search_render_tokens": 16000, "max_response_bytes": 4 * 1024 * 1024,
    "search_max_concurrency": 4, "touch_on_read": True, "max_record_chars": 32768,
    "search_timeout_ms": 30_000,
}  # fmt: skip


def test_the_design_defaults() -> None:
    settings = Settings.from_env({})
    assert {name: getattr(settings, name) for name in DEFAULTS} == DEFAULTS
    assert settings.memseek_catalog == reference_catalog()
    assert str(settings.memseek_home)


@pytest.mark.parametrize(
    ("variable", "raw", "attribute", "value"),
    [
        (
            "DATABASE_URL",
            "postgresql://u@db.example:5432/mem",
            "database_url",
            "postgresql://u@db.example:5432/mem",
        ),
        ("MEMSEEK_HOME", "/var/lib/memseek", "memseek_home", Path("/var/lib/memseek")),
        ("MEMSEEK_CATALOG", "/etc/memseek/catalog", "memseek_catalog", Path("/etc/memseek/catalog")),
        ("MEMSEEK_PACKAGE", "support_agent", "memseek_package", "support_agent"),
        ("MAX_QUERY_CHARS", "100", "max_query_chars", 100),
        ("MAX_GRAPH_DEPTH", "4", "max_graph_depth", 4),
        ("MAX_GRAPH_PATHS", "50", "max_graph_paths", 50),
        ("SEARCH_RENDER_TOKENS", "2000", "search_render_tokens", 2000),
        ("MAX_RESPONSE_BYTES", "65536", "max_response_bytes", 65536),
        ("SEARCH_MAX_CONCURRENCY", "2", "search_max_concurrency", 2),
        ("SEARCH_TIMEOUT_MS", "2500", "search_timeout_ms", 2500),
        ("TOUCH_ON_READ", "false", "touch_on_read", False),
        ("TOUCH_ON_READ", "0", "touch_on_read", False),
        ("TOUCH_ON_READ", "TRUE", "touch_on_read", True),
        ("MAX_RECORD_CHARS", "1000", "max_record_chars", 1000),
    ],
    ids=lambda v: v if isinstance(v, str) and v.isupper() else None,
)
def test_every_design_variable_is_read(variable: str, raw: str, attribute: str, value: Any) -> None:
    assert getattr(Settings.from_env({variable: raw}), attribute) == value


@pytest.mark.parametrize(
    ("variable", "raw"),
    [
        ("MAX_RECORD_CHARS", "lots"),
        ("MAX_QUERY_CHARS", "0"),
        ("TOUCH_ON_READ", "perhaps"),
        ("MAX_RESPONSE_BYTES", "-1"),
        ("SEARCH_MAX_CONCURRENCY", "two"),
        ("SEARCH_TIMEOUT_MS", "0"),
    ],
)
def test_an_invalid_variable_stops_the_command_naming_it(variable: str, raw: str) -> None:
    with pytest.raises(ConfigError):
        Settings.from_env({variable: raw})
    result = memseek(cli_env(**{variable: raw}), "catalog", "check", str(reference_catalog()))
    assert result.returncode != 0
    assert variable in result.stderr and "Traceback" not in result.stderr


@pytest.mark.parametrize(
    ("variable", "raw"),
    [
        pytest.param("MAX_QUERY_CHARS", "many", id="MAX_QUERY_CHARS"),
        pytest.param("MAX_GRAPH_DEPTH", "0", id="MAX_GRAPH_DEPTH"),
        pytest.param("MAX_GRAPH_PATHS", "-3", id="MAX_GRAPH_PATHS"),
        pytest.param("SEARCH_RENDER_TOKENS", "1.5", id="SEARCH_RENDER_TOKENS"),
        pytest.param("MAX_RESPONSE_BYTES", "0", id="MAX_RESPONSE_BYTES"),
        pytest.param("SEARCH_MAX_CONCURRENCY", "0", id="SEARCH_MAX_CONCURRENCY"),
        pytest.param("TOUCH_ON_READ", "2", id="TOUCH_ON_READ"),
        pytest.param("MAX_RECORD_CHARS", "0", id="MAX_RECORD_CHARS"),
    ],
)
def test_every_limit_variable_refuses_a_value_that_is_not_a_positive_count(variable: str, raw: str) -> None:
    """§4 lists each variable with its default and meaning: limits and counts are positive
    integers, `TOUCH_ON_READ` a boolean; anything else stops the service naming the variable."""
    with pytest.raises(ConfigError, match=variable):
        Settings.from_env({variable: raw})


@pytest.mark.parametrize(
    ("variable", "attribute", "value"),
    [
        pytest.param("MAX_GRAPH_DEPTH", "max_graph_depth", 1, id="MAX_GRAPH_DEPTH"),
        pytest.param("MAX_GRAPH_PATHS", "max_graph_paths", 1, id="MAX_GRAPH_PATHS"),
        pytest.param("SEARCH_MAX_CONCURRENCY", "search_max_concurrency", 1, id="SEARCH_MAX_CONCURRENCY"),
        pytest.param("MAX_QUERY_CHARS", "max_query_chars", 1, id="MAX_QUERY_CHARS"),
    ],
)
def test_the_smallest_limits_are_accepted(variable: str, attribute: str, value: int) -> None:
    """§4: each limit is a deployment setting; 1 is the smallest meaningful value."""
    assert getattr(Settings.from_env({variable: str(value)}), attribute) == value


def test_an_empty_variable_means_its_default() -> None:
    """§4: "`MEMSEEK_PACKAGE` | none"; an exported but empty variable is treated as unset."""
    settings = Settings.from_env({"MEMSEEK_PACKAGE": "", "DATABASE_URL": "", "MAX_QUERY_CHARS": ""})
    assert (settings.memseek_package, settings.database_url, settings.max_query_chars) == (None, None, 8192)


@pytest.mark.parametrize(
    "url",
    [
        pytest.param("mysql://user@localhost/memseek", id="another-database"),
        pytest.param("sqlite:///memseek.db", id="sqlite"),
        pytest.param("not a url", id="not-a-url"),
    ],
)
def test_a_database_url_that_is_not_postgresql_is_refused_naming_the_variable(url: str) -> None:
    """§4: `DATABASE_URL` names "an existing PostgreSQL ≥ 15 with pgvector ≥ 0.7"; a setting that
    cannot be one stops the command with a message naming the variable, as every other invalid
    variable does (never a traceback)."""
    result = memseek(cli_env(DATABASE_URL=url), "workspace", "create", "probe", timeout=60)
    assert result.returncode != 0
    assert "Traceback" not in result.stderr, result.stderr
    assert "DATABASE_URL" in result.stderr, result.stderr


# --- deployment ceilings --------------------------------------------------------------------------


def ceiling_client(sx_with: ClientFactory, **settings: int) -> Client | None:
    """A client whose deployment sets `settings`, or None when the settings refuse such values
    (also acceptable: the variable is then named)."""
    environ = {name.upper(): str(value) for name, value in settings.items()}
    try:
        Settings.from_env(environ)
    except ConfigError as exc:
        assert any(name in str(exc) for name in environ), exc
        return None
    return sx_with(**settings)


@pytest.mark.parametrize(
    ("view", "parameters", "loc"),
    [
        pytest.param("sx_walk", {"seed": "a", "depth": 17}, "depth", id="walk-depth-17"),
        pytest.param("sx_walk", {"seed": "a", "limit": 501}, "limit", id="walk-limit-501"),
        pytest.param("sx_orphans", {"limit": 501}, "limit", id="orphans-limit-501"),
    ],
)
def test_a_ceiling_above_the_spec_range_does_not_widen_it(
    sx_with: ClientFactory, view: str, parameters: dict[str, Any], loc: str
) -> None:
    """Spec: "depth is how many links to follow (1–16) and limit caps how many paths come back
    (1–500). Your deployment may impose lower ceilings than those."; orphans: "limit is its only
    parameter, accepting 1–500". A deployment ceiling only lowers these ranges."""
    client = ceiling_client(sx_with, max_graph_depth=20, max_graph_paths=1000)
    if client is None:
        return
    invalid(view_query(client, view, parameters), "parameters", loc)
    schema = next(v for v in ok(client.get("/views"))["views"] if v["name"] == view)["input_schema"]
    assert schema["properties"][loc]["maximum"] == {"depth": 16, "limit": 500}[loc]


NOTES = {"collections": ["sx_notes"]}


@pytest.mark.parametrize(
    ("boost", "loc"),
    [
        pytest.param({"depth": 5}, "depth", id="depth-5"),
        pytest.param({"limit": 101}, "limit", id="limit-101"),
    ],
)
def test_a_ceiling_above_the_spec_range_does_not_widen_graph_boost(
    sx_with: ClientFactory, boost: dict[str, Any], loc: str
) -> None:
    """Spec: graph_boost "depth: 2 # how many links out to look, 1–4", "limit: 100 # how many paths
    to walk, 1–100"."""
    client = ceiling_client(sx_with, max_graph_depth=20, max_graph_paths=1000)
    if client is None:
        return
    body = {"mode": "recent", "scope": NOTES, "graph_boost": {"anchor": "hub", **boost}}
    invalid(client.post("/search", json=body), "graph_boost", loc)


@pytest.mark.parametrize(
    ("view", "parameters"),
    [
        pytest.param("sx_walk", {"seed": "hub"}, id="walk-default-20"),
        pytest.param("sx_orphans", {}, id="orphans-50"),
    ],
)
def test_a_lower_paths_ceiling_keeps_the_published_contract_callable(
    sx: Client, sx_with: ClientFactory, view: str, parameters: dict[str, Any]
) -> None:
    """Spec: limit "(1–500). Your deployment may impose lower ceilings than those"; "input_schema is
    the complete machine-readable contract, including … numeric and length limits, and defaults —
    this is what a tool-calling client reads"; a parameter's `default` is "The value used when the
    caller omits it. Must satisfy the type and every constraint below." Under MAX_GRAPH_PATHS 5 the
    published `limit` must not default above its own maximum, and a call sending only what the
    contract requires must not be refused for a value the caller never sent."""
    write(sx, *(link("hub", "has", f"n{i}") for i in range(8)), *(part(f"p{i}") for i in range(8)))
    client = sx_with(max_graph_paths=5)
    schema = next(v for v in ok(client.get("/views"))["views"] if v["name"] == view)["input_schema"]
    limit = schema["properties"]["limit"]
    assert limit["maximum"] == 5
    assert limit["default"] <= limit["maximum"], limit
    body = ok(view_query(client, view, parameters))
    assert len(body["hits"]) <= 5


def test_a_view_problem_under_a_ceiling_is_not_blamed_on_a_valid_parameter(sx_with: ClientFactory) -> None:
    """Spec: "When the view is called, Memseek rejects unknown, missing, wrongly typed, or
    out-of-range parameters"; graph_boost "anchor: people/maya # trimmed, 1–128 characters",
    "limit: 100 # how many paths to walk, 1–100, default 100". `sx_boosted` fills only the anchor
    from its parameter and leaves `limit` at its default. Under MAX_GRAPH_PATHS 50 the anchor `x`
    is a valid value, so whatever the deployment makes of the view's own walk, the caller's
    `parameters.anchor` is not the error's location."""
    response = view_query(sx_with(max_graph_paths=50), "sx_boosted", {"anchor": "x"})
    if response.status_code != 200:
        locs = [d["loc"] for d in response.get_json()["error"]["details"]]
        assert ["parameters", "anchor"] not in locs, response.get_json()


# Spec: input_schema "is the complete machine-readable contract, including ... numeric and length
# limits"; graph depth (1-16) and limit (1-500) may have lower deployment ceilings.
def published_schemas(client: Client) -> dict[str, dict[str, Any]]:
    """Each graph view's input schema as `GET /views` and the MCP tool list publish it."""
    listed = {
        v["name"]: v["input_schema"] for v in ok(client.get("/views"))["views"] if v["kind"] != "search"
    }
    tools = {name: t["inputSchema"] for name, t in mcp_tools(client).items() if name in listed}
    assert tools == {name: listed[name] for name in tools}
    return listed


def test_input_schemas_show_the_deployments_graph_ceilings(sx_with: ClientFactory) -> None:
    schemas = published_schemas(sx_with(max_graph_depth=3, max_graph_paths=10))
    walk, orphans = schemas["sx_walk"]["properties"], schemas["sx_orphans"]["properties"]
    assert (walk["depth"]["maximum"], walk["limit"]["maximum"], orphans["limit"]["maximum"]) == (3, 10, 10)


def test_input_schemas_show_the_spec_bounds_under_the_default_ceilings(sx: Client) -> None:
    schemas = published_schemas(sx)
    walk, orphans = schemas["sx_walk"]["properties"], schemas["sx_orphans"]["properties"]
    assert (walk["depth"]["maximum"], walk["limit"]["maximum"], orphans["limit"]["maximum"]) == (16, 500, 500)
