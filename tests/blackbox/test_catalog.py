"""The catalog (design §2): the design's examples load verbatim, every key of a collection and a
conf file is checked, and `memseek catalog check` names the file, the definition, the YAML path
and the problem of every error at once; the reference catalog.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest
from flask import Flask

from memseek.catalog.load import load_catalog
from memseek.cli import main
from memseek.paths import reference_catalog
from memseek.search.view_checks import VIEW_CHECKS
from memseek.settings import Settings
from tests.blackbox.catalog_support import check
from tests.blackbox.catalog_support import collections_file
from tests.blackbox.support import sx_catalog
from tests.conftest import Client
from tests.helpers import catalog_text
from tests.helpers import cli_env
from tests.helpers import fixture_catalog
from tests.helpers import memseek
from tests.helpers import write_files

# --- the design's examples, verbatim --------------------------------------------------------------


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


PLAIN = "  - {name: c, version: 1, types: [x]}\n"
WRITE_WITH_SCORE = (
    "writes:\n  - {name: w, version: 1, description: d, collection: c, type: x,"
    " record: {entity: e, text: t, scores: {importance: [1]}}}\n"
)


@pytest.mark.parametrize(
    ("files", "where"),
    [
        pytest.param(
            collections_file("  - {name: c, version: 1, types: [x], keyed: maybe}\n"),
            "collections/c.yaml: collection c v1: collections[0].keyed",
            id="keyed",
        ),
        pytest.param(
            {"conf/enrichments.yaml": "enrichments:\n  e: {kind: llm_score, instructions: i, range: [x, 1]}"},
            "conf/enrichments.yaml: enrichment e v1: enrichments.e.range[0]",
            id="enrichment-range",
        ),
        pytest.param(
            {
                "views/v.yaml": "views:\n  - name: v\n    version: 1\n    description: d\n"
                "    parameters: {k: {type: integer, default: 5, minimum: one, description: k}}\n"
                "    query: {mode: recent, scope: {collections: [c]}}\n",
                **collections_file(PLAIN),
            },
            "views/v.yaml: view v v1: views[0].parameters.k.minimum",
            id="parameter-minimum",
        ),
        pytest.param(
            {
                "writes/w.yaml": WRITE_WITH_SCORE,
                **collections_file(PLAIN),
            },
            "writes/w.yaml: write w v1: writes[0].record.scores.importance",
            id="write-score",
        ),
    ],
)
def test_a_value_of_a_wrong_type_is_one_problem_at_its_own_yaml_path(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], files: dict[str, str], where: str
) -> None:
    # issue 3: a precise error with the YAML path, not one per alternative of the value's type
    # (pydantic's `keyed.bool`, `keyed.literal['any']`: no such keys exist in the file)
    code, out = check(write_files(tmp_path, files), capsys)
    assert code != 0, out
    assert "(1 problem)" in out, out
    assert f"{where}: " in out, out


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


# --- the catalog check command --------------------------------------------------------------------


def test_catalog_check_of_a_missing_directory_fails_with_a_message(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(["catalog", "check", str(tmp_path / "nowhere")])
    assert code != 0
    assert "nowhere" in capsys.readouterr().err


def test_catalog_check_of_a_valid_catalog_exits_0(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = sx_catalog(tmp_path, "sx-views", "ald")
    assert main(["catalog", "check", str(root)]) == 0, capsys.readouterr().err


def test_catalog_check_names_file_definition_and_path_of_a_bad_view(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = catalog_text("ald", "views/ald.yaml").replace(
        "k: {type: integer, default: 20}", "k: {type: integer, default: 20, required: true}"
    )
    root = write_files(sx_catalog(tmp_path, "sx-views", "ald"), {"views/ald.yaml": bad})
    assert main(["catalog", "check", str(root)]) != 0
    err = capsys.readouterr().err
    assert "views/ald.yaml" in err and "view ald_list v1" in err and "views[0].parameters.k" in err, err


UNQUOTED_PLACEHOLDER = """
views:
  - {name: audit_unquoted, version: 1, parameters: {entity: {type: string, required: true}},
     query: {mode: recent, scope: {collections: [memories], entities: [{{entity}}]}}}
"""


def check_with_reference(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], file: str, text: str
) -> tuple[int, str]:
    """`memseek catalog check` on the reference catalog plus `file` → (exit code, output)."""
    root = tmp_path / "catalog"
    shutil.copytree(reference_catalog(), root)
    (root / file).write_text(text)
    code = main(["catalog", "check", str(root)])
    captured = capsys.readouterr()
    return code, captured.out + captured.err


def test_an_unquoted_placeholder_is_reported_naming_the_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # In a YAML flow collection `{{entity}}` is a mapping used as a key, not a string.
    code, out = check_with_reference(tmp_path, capsys, "views/audit.yaml", UNQUOTED_PLACEHOLDER)
    assert code != 0
    assert "views/audit.yaml" in out and "Traceback" not in out
    assert '"{{name}}"' in out


HUGE_COLLECTION_VERSION = """
collections:
  - {name: audit_huge, version: 2147483648, types: [note]}
"""
HUGE_VIEW_VERSION = """
views:
  - {name: audit_huge, version: 2147483648, query: {mode: recent}}
"""


@pytest.mark.parametrize(
    ("file", "text", "loc"),
    [
        pytest.param("views/audit.yaml", HUGE_VIEW_VERSION, "views[0].version", id="view"),
        pytest.param(
            "collections/audit.yaml", HUGE_COLLECTION_VERSION, "collections[0].version", id="collection"
        ),
    ],
)
def test_a_version_beyond_what_the_database_stores_is_refused_at_load(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], file: str, text: str, loc: str
) -> None:
    code, out = check_with_reference(tmp_path, capsys, file, text)
    assert code != 0
    assert file in out and loc in out and "Traceback" not in out


LARGEST_VERSION = """
views:
  - {name: audit_largest, version: 2147483647, query: {mode: recent}}
"""


def test_the_largest_storable_version_loads(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out = check_with_reference(tmp_path, capsys, "views/audit.yaml", LARGEST_VERSION)
    assert code == 0, out


# --- the reference catalog ------------------------------------------------------------------------


def test_the_reference_catalog_holds_the_spec_examples() -> None:
    catalog = load_catalog(reference_catalog(), view_checks=VIEW_CHECKS)
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
