"""What a catalog checks in a view when it loads (spec "What is checked, and when", "View
fields", "Parameter fields"): the template is a strict request at every depth, rendered with
sample values, fitting every collection version it could read; parameters honour their types.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from memseek.cli import main
from tests.blackbox.catalog_support import av6_catalog
from tests.blackbox.catalog_support import check
from tests.blackbox.catalog_support import one_view
from tests.blackbox.support import GRAPH
from tests.blackbox.support import check_catalog
from tests.blackbox.support import graph_view
from tests.blackbox.support import sx_catalog
from tests.blackbox.support import with_views
from tests.helpers import catalog_text
from tests.helpers import fixture_catalog

# --- views that load and views that are refused ---------------------------------------------------


SEARCH = "query: {mode: recent, scope: {collections: [sx_notes]}}"
VALID = [
    pytest.param(f"    {SEARCH}\n", id="minimal"),
    pytest.param(
        "    parameters: {e: {type: string, required: true}}\n"
        '    query: {mode: recent, scope: {entities: ["{{e}}"], collections: [sx_notes]}}\n',
        id="placeholder",
    ),
    pytest.param(
        "    parameters: {start: {type: datetime, required: true}, end: {type: datetime, required: true}}\n"
        "    required_capabilities: [structured, recent, text]\n"
        "    query: {mode: structured, scope: {collections: [sx_notes]}, order_by: [{field: starts_at}],\n"
        '            where: {starts_at: {gte: "{{start}}", lt: "{{end}}"}}}\n',
        id="structured-with-datetimes",
    ),
    pytest.param(
        "    parameters:\n"
        "      k: {type: integer, default: 20, minimum: 1, maximum: 100}\n"
        "      n: {type: number, minimum: 0.5, maximum: 2.5, default: 1}\n"
        "      h: {type: string, default: week, enum: [day, week], description: Horizon.}\n"
        "      c: {type: string_array, default: [], item_enum: [a, b], max_items: 3}\n"
        "      s: {type: string, min_length: 3, max_length: 128}\n"
        "      b: {type: boolean, default: false}\n"
        '    query: {mode: recent, scope: {collections: [sx_notes]}, k: "{{k}}"}\n',
        id="every-constraint",
    ),
]


def check_sx_case(
    tmp_path: Path, view: str, capsys: pytest.CaptureFixture[str], version: int = 1
) -> tuple[int, str]:
    """`memseek catalog check` of the `sx_` catalog whose views are only `sx_case` v`version`,
    declared by `view` (its keys after `version`)."""
    root = with_views(tmp_path, f"views:\n  - name: sx_case\n    version: {version}\n" + view)
    return check_catalog(root, capsys)


@pytest.mark.parametrize("view", VALID)
def test_valid_views_load(tmp_path: Path, capsys: pytest.CaptureFixture[str], view: str) -> None:
    code, err = check_sx_case(tmp_path, view, capsys)
    assert code == 0, err


INVALID = [
    pytest.param(
        '    query: {mode: recent, scope: {entities: ["{{who}}"], collections: [sx_notes]}}\n',
        id="undeclared-placeholder",
    ),
    pytest.param("    query: {mode: recent, scope: {collections: [sx_nowhere]}}\n", id="unknown-collection"),
    pytest.param(
        "    query: {mode: recent, scope: {collections: [sx_versioned],\n"
        "            collection_versions: {sx_versioned: [9]}}}\n",
        id="unknown-pinned-version",
    ),
    pytest.param(
        "    query: {mode: recent, scope: {collections: [sx_notes]}, limit: 5}\n", id="unknown-query-key"
    ),
    pytest.param("    query: {mode: vector, q: x, scope: {collections: [sx_notes]}}\n", id="engine-cannot"),
    pytest.param(f"    required_capabilities: [telepathy]\n    {SEARCH}\n", id="unknown-capability"),
    pytest.param(
        "    query: {mode: recent, scope: {collections: [sx_notes]}, rank: [pow, [const, 1]]}\n",
        id="unknown-rank-operator",
    ),
    pytest.param(
        "    query: {mode: recent, scope: {collections: [sx_notes]}, rank: [score, nope]}\n",
        id="unknown-score",
    ),
    pytest.param(
        "    query: {mode: recent, scope: {collections: [sx_notes]}, where: {nope: {eq: 1}}}\n",
        id="undeclared-filter",
    ),
    pytest.param(
        "    query: {mode: recent, scope: {collections: [sx_notes]}, where: {label: {eq: x}}}\n",
        id="not-filterable",
    ),
    pytest.param(
        "    query: {mode: recent, scope: {collections: [sx_notes]}, where: {amount: {eq: ten}}}\n",
        id="filter-type",
    ),
    pytest.param(
        "    query: {mode: structured, scope: {collections: [sx_notes]}, order_by: [{field: tags}]}\n",
        id="not-sortable",
    ),
    pytest.param(
        "    query: {mode: recent, scope: {collections: [sx_notes]}, fields: [secret]}\n", id="not-returnable"
    ),
    pytest.param(
        "    query: {mode: recent, scope: {collections: [sx_versioned]}, fields: [extra]}\n",
        id="not-returnable-in-every-version",
    ),
    pytest.param(
        "    query: {mode: recent, scope: {collections: [sx_notes]}, annotations: [sx_region]}\n",
        id="annotation-not-required",
    ),
    pytest.param("    kind: search\n", id="search-needs-query"),
    pytest.param(f"    kind: lookup\n    {SEARCH}\n", id="unknown-kind"),
    pytest.param(f"    version: 2\n    {SEARCH}\n", id="duplicate-key"),
    pytest.param(f"    parameters: {{x: {{type: text}}}}\n    {SEARCH}\n", id="parameter-type"),
    pytest.param(f"    parameters: {{x: {{required: true}}}}\n    {SEARCH}\n", id="parameter-type-required"),
    pytest.param(
        f"    parameters: {{x: {{type: string, required: true, default: a}}}}\n    {SEARCH}\n",
        id="required-with-default",
    ),
    pytest.param(
        f"    parameters: {{x: {{type: integer, default: 0, minimum: 1}}}}\n    {SEARCH}\n",
        id="default-breaks-minimum",
    ),
    pytest.param(f"    parameters: {{x: {{type: string, default: 3}}}}\n    {SEARCH}\n", id="default-type"),
    pytest.param(
        f"    parameters: {{x: {{type: string, description: '  '}}}}\n    {SEARCH}\n", id="blank-description"
    ),
    pytest.param(f"    parameters: {{x: {{type: string, enum: []}}}}\n    {SEARCH}\n", id="empty-enum"),
    pytest.param(
        f"    parameters: {{x: {{type: string, enum: [a, a]}}}}\n    {SEARCH}\n", id="repeated-enum"
    ),
    pytest.param(f"    parameters: {{x: {{type: integer, enum: [1, a]}}}}\n    {SEARCH}\n", id="enum-type"),
    pytest.param(
        f"    parameters: {{x: {{type: string, item_enum: [a]}}}}\n    {SEARCH}\n", id="item-enum-on-string"
    ),
    pytest.param(
        f"    parameters: {{x: {{type: string_array, item_enum: [a, a]}}}}\n    {SEARCH}\n",
        id="repeated-item-enum",
    ),
    pytest.param(
        f"    parameters: {{x: {{type: string, minimum: 1}}}}\n    {SEARCH}\n", id="minimum-on-string"
    ),
    pytest.param(
        f"    parameters: {{x: {{type: number, max_length: 1}}}}\n    {SEARCH}\n", id="length-on-number"
    ),
    pytest.param(
        f"    parameters: {{x: {{type: string, max_items: 1}}}}\n    {SEARCH}\n", id="items-on-string"
    ),
    pytest.param(
        f"    parameters: {{x: {{type: integer, minimum: 5, maximum: 1}}}}\n    {SEARCH}\n",
        id="minimum-above-maximum",
    ),
    pytest.param(
        f"    parameters: {{x: {{type: integer, minimum: 1.5}}}}\n    {SEARCH}\n",
        id="fractional-integer-bound",
    ),
    pytest.param(
        f"    parameters: {{x: {{type: string, min_length: 5, max_length: 2}}}}\n    {SEARCH}\n",
        id="min-length-above-max",
    ),
    pytest.param(
        f"    parameters: {{x: {{type: string, pattern: a}}}}\n    {SEARCH}\n", id="unknown-parameter-field"
    ),
    pytest.param(
        f"    kind: graph\n    graph: {GRAPH}\n    parameters: {{seed: {{type: string, required: true}}}}\n",
        id="graph-missing-parameters",
    ),
    pytest.param(
        graph_view(direction="{type: string, default: in}"),
        id="graph-wrong-default",
    ),
    pytest.param(
        graph_view(depth="{type: integer, default: 1, maximum: 17}"),
        id="graph-depth-beyond-16",
    ),
    pytest.param(
        graph_view(extra="{type: string}"),
        id="graph-extra-parameter",
    ),
    pytest.param(
        "    kind: graph_orphans\n"
        "    graph: {edges: sx_links, subject: src, object: dst, predicate: rel, nodes: sx_parts}\n"
        "    parameters: {limit: {type: integer, default: 10}}\n",
        id="orphans-wrong-default",
    ),
    pytest.param(
        graph_view(graph="{edges: sx_links, subject: src, object: nope, predicate: rel}"),
        id="graph-undeclared-field",
    ),
    pytest.param(
        graph_view(before="    required_capabilities: [vector]\n"),
        id="capabilities-on-a-graph-view",
    ),
]


@pytest.mark.parametrize("view", INVALID)
def test_invalid_views_are_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str], view: str) -> None:
    code, err = check_sx_case(tmp_path, view, capsys)
    assert code == 2, err
    assert "sx_case" in err or "views/sx.yaml" in err


def test_at_most_one_active_version(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    view = (
        f"    active: true\n    {SEARCH}\n  - name: sx_case\n    version: 2\n    active: true\n    {SEARCH}\n"
    )
    assert check_sx_case(tmp_path, view, capsys)[0] == 2


def test_versions_are_positive_integers(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert check_sx_case(tmp_path, f"    {SEARCH}\n", capsys, version=0)[0] == 2


SEARCH_QUERY_LINE = "    query: {mode: recent, scope: {collections: [sx_notes]}}\n"


def params(text: str) -> str:
    return f"    parameters: {{{text}}}\n{SEARCH_QUERY_LINE}"


def test_a_good_view_passes_the_check(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Control for the table below: the base of every case loads."""
    code, err = check_catalog(with_views(tmp_path, one_view("1", params("x: {type: string}"))), capsys)
    assert code == 0, err


BAD_VIEWS = [
    pytest.param(params("x: {required: true}"), id="parameter-without-type"),
    pytest.param(params("x: {type: text}"), id="unknown-parameter-type"),
    pytest.param(params("x: {type: string, required: true, default: a}"), id="required-with-default"),
    pytest.param(params("x: {type: string, minimum: 1}"), id="minimum-on-string"),
    pytest.param(params("x: {type: string, item_enum: [a]}"), id="item-enum-on-string"),
    pytest.param(params("x: {type: integer, min_length: 1}"), id="min-length-on-integer"),
    pytest.param(params("x: {type: string, min_items: 1}"), id="min-items-on-string"),
    pytest.param(params("x: {type: boolean, maximum: 1}"), id="maximum-on-boolean"),
    pytest.param(params("x: {type: datetime, max_length: 3}"), id="max-length-on-datetime"),
    pytest.param(params("x: {type: integer, minimum: 5, maximum: 1}"), id="minimum-above-maximum"),
    pytest.param(params("x: {type: number, minimum: 5, maximum: 1}"), id="number-minimum-above-maximum"),
    pytest.param(params("x: {type: integer, minimum: 1.5}"), id="fractional-integer-bound"),
    pytest.param(params("x: {type: integer, maximum: 9.5}"), id="fractional-integer-maximum"),
    pytest.param(params("x: {type: integer, default: 0, minimum: 1}"), id="default-below-minimum"),
    pytest.param(params("x: {type: integer, default: a}"), id="default-wrong-type"),
    pytest.param(params("x: {type: string, default: ab, min_length: 3}"), id="default-too-short"),
    pytest.param(params("x: {type: string, default: month, enum: [day, week]}"), id="default-outside-enum"),
    pytest.param(params("x: {type: string_array, default: [fax], item_enum: [email]}"), id="default-item"),
    pytest.param(params("x: {type: string_array, default: [a, b], max_items: 1}"), id="default-too-long"),
    pytest.param(params('x: {type: datetime, default: "2026-07-17T09:00:00"}'), id="default-no-timezone"),
    pytest.param(params("x: {type: string, enum: []}"), id="empty-enum"),
    pytest.param(params("x: {type: string, enum: [a, a]}"), id="duplicate-enum"),
    pytest.param(params("x: {type: integer, enum: [1, a]}"), id="enum-entry-type"),
    pytest.param(params("x: {type: integer, enum: [1, 200], maximum: 100}"), id="enum-entry-out-of-range"),
    pytest.param(params("x: {type: string, enum: [ab, abcd], min_length: 3}"), id="enum-entry-too-short"),
    pytest.param(params("x: {type: string_array, item_enum: []}"), id="empty-item-enum"),
    pytest.param(params("x: {type: string_array, item_enum: [a, a]}"), id="duplicate-item-enum"),
    pytest.param(params('x: {type: string, description: "  "}'), id="blank-description"),
    pytest.param(params("x: {type: string, pattern: a}"), id="unknown-parameter-field"),
    pytest.param(params("x: {type: string, required: maybe}"), id="required-not-boolean"),
    pytest.param(
        '    parameters: {t: {type: string, required: true}}\n    query: {mode: recent, k: "{{t}}"}\n',
        id="sample-string-as-k",
    ),
    pytest.param(
        "    parameters: {t: {type: string, required: true}}\n"
        '    query: {mode: recent, scope: {collections: [sx_notes], occurred_after: "{{t}}"}}\n',
        id="sample-string-as-time-bound",
    ),
    pytest.param(
        "    parameters: {t: {type: string, required: true}}\n"
        '    query: {mode: recent, scope: {collections: [sx_notes]}, where: {amount: {gte: "{{t}}"}}}\n',
        id="sample-string-as-number-filter",
    ),
    pytest.param('    query: {mode: recent, scope: {entities: ["{{who}}"]}}\n', id="undeclared-placeholder"),
    pytest.param(
        "    query: {mode: recent, scope: {collections: [sx_notes]}, sql: x}\n", id="unknown-query-key"
    ),
    pytest.param(
        "    query: {mode: recent, scope: {collections: [sx_notes]}, params: {raw: {match_all: {}}}}\n",
        id="raw-engine-query",
    ),
    pytest.param("    query: {mode: recent, scope: {collections: [bv10_gone]}}\n", id="unknown-collection"),
    pytest.param(
        "    query: {mode: recent, scope: {collections: [sx_notes], collection_versions: {sx_notes: [7]}}}\n",
        id="unknown-pinned-version",
    ),
    pytest.param("    query: {mode: vector, q: x, scope: {collections: [sx_notes]}}\n", id="engine-cannot"),
    pytest.param(f"    required_capabilities: [vector]\n{SEARCH_QUERY_LINE}", id="capability-missing"),
    pytest.param(f"    required_capabilities: [magic]\n{SEARCH_QUERY_LINE}", id="capability-unknown"),
    pytest.param(
        "    query: {mode: recent, scope: {collections: [sx_notes]}, rank: [power, [const, 1]]}\n",
        id="rank-operator",
    ),
    pytest.param(
        "    query: {mode: recent, scope: {collections: [sx_notes]}, rank: [score, bv10_nope]}\n",
        id="score-name",
    ),
    pytest.param(
        "    query: {mode: recent, scope: {collections: [sx_notes]}, where: {bv10_nope: {eq: 1}}}\n",
        id="undeclared-filter-field",
    ),
    pytest.param(
        "    query: {mode: structured, scope: {collections: [sx_notes]}, order_by: [{field: label}]}\n",
        id="not-sortable",
    ),
    pytest.param(
        "    query: {mode: recent, scope: {collections: [sx_notes]}, fields: [secret]}\n", id="not-returnable"
    ),
    pytest.param(
        "    query: {mode: recent, scope: {collections: [sx_notes, sx_extra]}, where: {amount: {gte: 1}}}\n",
        id="filter-missing-in-one-collection",
    ),
    pytest.param("    kind: search\n", id="search-without-query"),
    pytest.param(f"    kind: report\n{SEARCH_QUERY_LINE}", id="unknown-kind"),
    pytest.param(
        "    kind: graph\n    graph: {edges: sx_links, subject: src, object: dst, predicate: rel}\n"
        "    required_capabilities: [structured]\n"
        "    parameters:\n      seed: {type: string, required: true}\n"
        "      predicates: {type: string_array, default: []}\n      direction: {type: string, default: out}\n"
        "      depth: {type: integer, default: 1}\n      limit: {type: integer, default: 20}\n",
        id="capabilities-on-graph-view",
    ),
]


@pytest.mark.parametrize("body", BAD_VIEWS)
def test_bad_view_is_refused_at_load(tmp_path: Path, capsys: pytest.CaptureFixture[str], body: str) -> None:
    """ "When your definitions load, a search view is validated well beyond its YAML shape" and
    "Constraints are checked against the declared type when your definitions load"."""
    code, err = check_catalog(with_views(tmp_path, one_view("1", body)), capsys)
    assert code != 0
    assert "bv10_case" in err


@pytest.mark.parametrize("version", ["0", "-1", "1.5", "one"])
def test_version_must_be_a_positive_integer(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], version: str
) -> None:
    """ "a positive integer version"."""
    code, _ = check_catalog(with_views(tmp_path, one_view(version, SEARCH_QUERY_LINE)), capsys)
    assert code != 0


def test_two_active_versions_are_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """ "at most one active version per name"."""
    views = (
        one_view("1", SEARCH_QUERY_LINE)
        + f"  - name: bv10_case\n    version: 2\n    active: true\n{SEARCH_QUERY_LINE}"
    )
    code, err = check_catalog(with_views(tmp_path, views), capsys)
    assert code != 0 and "bv10_case" in err


def test_every_error_is_reported_at_once(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Design §2: "every error names the file, the definition (kind, name, version), the YAML path and
    the problem — all errors at once, not just the first"."""
    views = (
        "views:\n"
        "  - name: bv10_first\n    version: 3\n"
        "    query: {mode: recent, scope: {collections: [bv10_gone]}}\n"
        "  - name: bv10_second\n    version: 4\n"
        "    parameters: {x: {type: string, minimum: 1}}\n"
        f"{SEARCH_QUERY_LINE}"
    )
    code, err = check_catalog(with_views(tmp_path, views), capsys)
    assert code != 0
    for word in ["bv10_first", "bv10_second", "sx.yaml", "view"]:
        assert word in err, err
    assert "3" in err and "4" in err
    assert "bv10_gone" in err and "minimum" in err


EXTRA_COLLECTIONS = """
collections:
  - name: bv10_cv
    version: 1
    types: [note]
    fields:
      f: {type: string, filterable: true}
  - name: bv10_cv
    version: 2
    active: true
    types: [note]
    fields:
      f: {type: number, filterable: true}
"""
SAMPLE_RENDERS = [
    pytest.param(
        "    parameters: {d: {type: string, required: true, enum: [asc, desc]}}\n"
        "    query: {mode: structured, scope: {collections: [sx_notes]},\n"
        '            order_by: [{field: starts_at, direction: "{{d}}"}]}\n',
        True,
        id="enum-sample-is-a-direction",
    ),
    pytest.param(
        "    parameters: {d: {type: string, required: true}}\n"
        "    query: {mode: structured, scope: {collections: [sx_notes]},\n"
        '            order_by: [{field: starts_at, direction: "{{d}}"}]}\n',
        False,
        id="free-string-is-no-direction",
    ),
    pytest.param(
        "    parameters: {i: {type: string_array, required: true, item_enum: [text, entity]}}\n"
        '    query: {mode: recent, scope: {collections: [sx_notes]}, include: "{{i}}"}\n',
        True,
        id="item-enum-sample-is-an-include",
    ),
    pytest.param(
        "    parameters: {n: {type: integer, required: true, minimum: 200}}\n"
        '    query: {mode: recent, scope: {collections: [sx_notes]}, k: "{{n}}"}\n',
        False,
        id="no-valid-k",
    ),
    pytest.param(
        "    parameters: {n: {type: integer, required: true, minimum: 2, maximum: 100}}\n"
        '    query: {mode: recent, scope: {collections: [sx_notes]}, k: "{{n}}"}\n',
        True,
        id="bounded-k",
    ),
    pytest.param(
        "    query: {mode: recent, scope: {collections: [bv10_cv]}, where: {f: {eq: 1}}}\n",
        False,
        id="incompatible-across-versions",
    ),
    pytest.param(
        "    query: {mode: recent, scope: {collections: [bv10_cv], collection_versions: {bv10_cv: [2]}},\n"
        "            where: {f: {eq: 1}}}\n",
        True,
        id="pinned-to-the-compatible-version",
    ),
]


@pytest.mark.parametrize(("body", "loads"), SAMPLE_RENDERS)
def test_sample_render_and_version_compatibility(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], body: str, loads: bool
) -> None:
    """ "the template is rendered once with a valid sample value for each parameter" (valid: it
    honours the parameter's own constraints) and fields must exist "with compatible declarations —
    in every collection version the view could read from"."""
    root = with_views(tmp_path, one_view("1", body))
    (root / "collections" / "bv10.yaml").write_text(EXTRA_COLLECTIONS)
    code, err = check_catalog(root, capsys)
    assert (code == 0) is loads, err


MIXED = """
collections:
  - name: s3_left
    version: 1
    active: true
    types: [note]
    fields:
      channel: {type: string, filterable: true, sortable: true, returnable: true}
      level: {type: integer, filterable: true, sortable: true, returnable: true}
  - name: s3_right
    version: 1
    active: true
    types: [note]
    fields:
      channel: {type: number, filterable: true, sortable: true, returnable: true}
      level: {type: integer, filterable: true, returnable: true}
"""
"""Two collections that declare `channel` with different types and `level` sortable in one only."""


def check_views_file(tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str) -> tuple[int, str]:
    """`memseek catalog check` of the `sx_` collections plus MIXED, whose only views file holds
    `text`: the exit code and what it printed."""
    root = with_views(tmp_path, text)
    (root / "collections" / "s3.yaml").write_text(MIXED)
    return check_catalog(root, capsys)


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        pytest.param(
            f"view:\n  - name: s3_case\n    version: 1\n    {SEARCH}\n", "top-level key", id="not-views"
        ),
        pytest.param(
            f"views:\n  s3_case:\n    version: 1\n    {SEARCH}\n", "views: must be a list", id="a-map"
        ),
        pytest.param(
            f"views:\n  - name: s3_case\n    version: 1\n    {SEARCH}\nextra: 1\n",
            "top-level key",
            id="extra-key",
        ),
    ],
)
def test_a_views_file_is_a_views_list(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str, problem: str
) -> None:
    """Spec: "View files live in views/*.yaml. A file starts with a views: list and may define
    several views"."""
    code, err = check_views_file(tmp_path, capsys, text)
    assert code == 2 and "views/sx.yaml" in err and problem in err, err


# Spec, Parameter fields: "`item_enum` | `string_array` only | ... non-empty and unique"; "Constraints
# are checked against the declared type when your definitions load, so minimum on a string, or
# item_enum on anything but a string_array, is an error rather than a silently ignored key."
BAD_CONSTRAINTS = [
    pytest.param("{type: string_array, item_enum: []}", "item_enum", id="empty-item-enum"),
    pytest.param("{type: integer, item_enum: [a]}", "item_enum", id="item-enum-on-integer"),
    pytest.param("{type: datetime, item_enum: [a]}", "item_enum", id="item-enum-on-datetime"),
    pytest.param("{type: string_array, min_length: 1}", "min_length", id="min-length-on-array"),
    pytest.param("{type: boolean, max_length: 3}", "max_length", id="max-length-on-boolean"),
    pytest.param("{type: datetime, minimum: 1}", "minimum", id="minimum-on-datetime"),
    pytest.param("{type: string_array, maximum: 3}", "maximum", id="maximum-on-array"),
    pytest.param("{type: integer, min_items: 1}", "min_items", id="min-items-on-integer"),
    pytest.param("{type: string_array, min_items: 3, max_items: 1}", "max_items", id="min-items-above-max"),
    pytest.param("{type: number, minimum: 2.5, maximum: 1.5}", "maximum", id="number-minimum-above-maximum"),
]
# Spec, Parameter fields: "`default` | optional parameters | ... Must satisfy the type and every
# constraint below."
BAD_DEFAULTS = [
    pytest.param("{type: string, default: z, enum: [a, b]}", "default", id="outside-enum"),
    pytest.param("{type: integer, default: 4, enum: [1, 2]}", "default", id="outside-integer-enum"),
    pytest.param("{type: string, default: abcdef, max_length: 3}", "default", id="above-max-length"),
    pytest.param("{type: string, default: a, min_length: 3}", "default", id="below-min-length"),
    pytest.param("{type: string_array, default: [], min_items: 1}", "default", id="below-min-items"),
    pytest.param("{type: number, default: 5.5, maximum: 5}", "default", id="above-number-maximum"),
    pytest.param("{type: integer, default: 1.5}", "default", id="fractional-integer"),
    pytest.param("{type: boolean, default: 'yes'}", "default", id="string-for-boolean"),
    pytest.param("{type: datetime, default: soon}", "default", id="not-a-timestamp"),
    pytest.param("{type: string_array, default: a}", "default", id="string-for-array"),
]
# Spec, Parameter fields: "`enum` | any | The complete set of allowed values, non-empty and unique.
# Each entry must match the type and the other constraints."
BAD_ENUMS = [
    pytest.param("{type: string, max_length: 2, enum: [ab, abc]}", "enum", id="entry-above-max-length"),
    pytest.param("{type: integer, maximum: 5, enum: [1, 9]}", "enum", id="entry-above-maximum"),
    pytest.param("{type: number, minimum: 0, enum: [-1, 1]}", "enum", id="entry-below-minimum"),
    pytest.param("{type: integer, enum: [1, 1.5]}", "enum", id="fractional-integer-entry"),
    pytest.param(
        "{type: datetime, enum: ['2026-07-17T09:00:00']}", "enum", id="datetime-entry-without-timezone"
    ),
    pytest.param("{type: boolean, enum: ['true']}", "enum", id="string-entry-for-boolean"),
    pytest.param("{type: string_array, enum: [a, b]}", "enum", id="string-entries-for-array"),
    pytest.param(
        "{type: string_array, item_enum: [a], enum: [[b]]}", "enum", id="array-entry-breaks-item-enum"
    ),
    pytest.param(
        "{type: string_array, max_items: 1, enum: [[a, b]]}", "enum", id="array-entry-breaks-max-items"
    ),
    pytest.param("{type: string, enum: a}", "enum", id="not-a-list"),
]


def catalog_check(tmp_path: Path, capsys: pytest.CaptureFixture[str], view: str) -> tuple[int, str]:
    """`check_views_file` whose only view is `s3_case`, declared by `view` (every key after `name`,
    `version` included)."""
    return check_views_file(tmp_path, capsys, "views:\n  - name: s3_case\n" + view)


def refused(tmp_path: Path, capsys: pytest.CaptureFixture[str], view: str, problem: str) -> None:
    """`catalog_check` of `view` exits 2 naming `problem`."""
    code, err = catalog_check(tmp_path, capsys, view)
    assert code == 2 and problem in err, err


def with_parameter(declaration: str) -> str:
    """A search view (version 1) whose one parameter `x` is `declaration`."""
    return f"    version: 1\n    parameters: {{x: {declaration}}}\n    {SEARCH}\n"


@pytest.mark.parametrize(("declaration", "key"), [*BAD_DEFAULTS, *BAD_ENUMS, *BAD_CONSTRAINTS])
def test_a_parameter_declaration_is_checked_against_its_type_and_constraints(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], declaration: str, key: str
) -> None:
    """Spec: a default "Must satisfy the type and every constraint below"; enum entries — "Each
    entry must match the type and the other constraints"; "Constraints are checked against the
    declared type when your definitions load"."""
    refused(tmp_path, capsys, with_parameter(declaration), f"views[0].parameters.x.{key}")


STRICT = [
    pytest.param("{mode: recent, scope: {collection: [sx_notes]}}", "query.scope.collection", id="scope-key"),
    pytest.param(
        "{mode: structured, scope: {collections: [sx_notes]}, order_by: [{field: amount, dir: asc}]}",
        "query.order_by[0].dir",
        id="order-by-key",
    ),
    pytest.param(
        "{mode: recent, scope: {collections: [sx_notes]}, render: true, fence: {tag: r, untrusted: false}}",
        "query.fence.untrusted",
        id="fence-key",
    ),
    pytest.param(
        "{mode: recent, scope: {collections: [sx_notes]}, params: {ef: 3}}",
        "query.params.ef",
        id="params-key",
    ),
    pytest.param(
        "{sources: [{name: a, mode: recent, scope: {collections: [sx_notes]}, boost: 2}], fuse: {kind: rrf}}",
        "query.sources[0].boost",
        id="source-key",
    ),
    pytest.param(
        "{mode: recent, scope: {collections: [sx_notes]}, raw: {sql: x}}", "query.raw", id="raw-engine-json"
    ),
    pytest.param(
        "{mode: recent, scope: {collections: [sx_notes]}, fence: {tag: r}}",
        "query.fence",
        id="fence-without-render",
    ),
]


def with_query(parameters: str, query: str) -> str:
    """A search view (version 1) with `parameters` and `query` as inline YAML maps."""
    return f"    version: 1\n    parameters: {parameters}\n    query: {query}\n"


@pytest.mark.parametrize(("query", "loc"), STRICT)
def test_the_template_is_a_strict_request_at_every_depth(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], query: str, loc: str
) -> None:
    """Spec: "the result is parsed as a strict search request — an unknown key is an error, not
    something silently ignored"; "A view cannot pass raw, engine-specific query JSON through";
    "Declaring fence without render is an error"."""
    refused(tmp_path, capsys, with_query("{}", query), f"views[0].{loc}")


SAMPLED = [
    pytest.param(
        "{x: {type: string, required: true}}",
        "{mode: recent, scope: {collections: [sx_notes]}, k: '{{x}}'}",
        "query.k",
        id="string-as-k",
    ),
    pytest.param(
        "{x: {type: integer, required: true, minimum: 200}}",
        "{mode: recent, scope: {collections: [sx_notes]}, k: '{{x}}'}",
        "query.k",
        id="every-valid-value-exceeds-k",
    ),
    pytest.param(
        "{c: {type: string, required: true, enum: [sx_nowhere]}}",
        "{mode: recent, scope: {collections: ['{{c}}']}}",
        "query.scope.collections",
        id="enum-names-an-unknown-collection",
    ),
    pytest.param(
        "{t: {type: datetime, required: true}}",
        "{mode: recent, scope: {collections: [sx_notes]}, where: {amount: {gte: '{{t}}'}}}",
        "query.where.amount",
        id="datetime-against-a-number-field",
    ),
    pytest.param(
        "{t: {type: string_array, required: true}}",
        "{mode: recent, scope: {collections: [sx_notes]}, where: {channel: {eq: '{{t}}'}}}",
        "query.where.channel",
        id="list-against-a-string-field",
    ),
    pytest.param(
        "{x: {type: string, required: true}}",
        "{mode: recent, scope: {collections: [sx_notes]}, where: {'{{x}}': {eq: a}}}",
        "query.where",
        id="placeholder-as-a-field-name",
    ),
]


@pytest.mark.parametrize(("parameters", "query", "loc"), SAMPLED)
def test_the_template_is_rendered_with_sample_values_and_checked(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], parameters: str, query: str, loc: str
) -> None:
    """Spec: "the template is rendered once with a valid sample value for each parameter; the result
    is parsed as a strict search request"; "Conditions are type-checked against the declared field
    when your definitions load"."""
    refused(tmp_path, capsys, with_query(parameters, query), f"views[0].{loc}")


# Spec: required_capabilities — "If it cannot, the catalog refuses to load"; "every field you filter
# on, sort by, or ask to have returned exists — with compatible declarations — in every collection
# version the view could read from".
BAD_FIELD_USES = [
    pytest.param(
        f"    version: 1\n    required_capabilities: [vector]\n    {SEARCH}\n",
        "views[0].required_capabilities",
        id="vector-without-embeddings",
    ),
    pytest.param(
        with_query(
            "{}", "{mode: recent, scope: {collections: [s3_left, s3_right]}, where: {channel: {eq: x}}}"
        ),
        "views[0].query.where.channel",
        id="filter-declared-with-different-types",
    ),
    pytest.param(
        with_query(
            "{}",
            "{mode: structured, scope: {collections: [s3_left, s3_right]}, order_by: [{field: level}]}",
        ),
        "views[0].query.order_by[0].field",
        id="sort-declared-sortable-in-one-collection",
    ),
]
# Spec, View fields: "name, version, active — ... a stable public name, a positive integer version,
# and at most one active version per name (active defaults to false)".
BAD_IDENTITIES = [
    pytest.param(f"    version: true\n    {SEARCH}\n", "views[0].version", id="version-boolean"),
    pytest.param(f"    version: 1.5\n    {SEARCH}\n", "views[0].version", id="version-fractional"),
    pytest.param(f"    version: -1\n    {SEARCH}\n", "views[0].version", id="version-negative"),
    pytest.param(f"    version: '1'\n    {SEARCH}\n", "views[0].version", id="version-string"),
    pytest.param(f"    version: 1\n    active: 1\n    {SEARCH}\n", "views[0].active", id="active-number"),
    pytest.param(
        f"    version: 1\n    active: 'true'\n    {SEARCH}\n", "views[0].active", id="active-string"
    ),
    pytest.param(f"    version: 1\n    title: x\n    {SEARCH}\n", "views[0].title", id="unknown-view-field"),
]
# Spec: "query (required for kind: search)"; "seed ... must be 1–128 characters"; "direction is out,
# in, or both"; the orphan limit accepts "1–500".
WIDENED_GRAPHS = [
    pytest.param(
        "    version: 1\n" + graph_view() + f"    {SEARCH}\n", "views[0].query", id="graph-with-a-query"
    ),
    pytest.param(
        "    version: 1\n" + graph_view(seed="{type: string, required: true, max_length: 200}"),
        "views[0].parameters.seed",
        id="seed-past-128",
    ),
    pytest.param(
        "    version: 1\n" + graph_view(direction="{type: string, default: out, enum: [out, sideways]}"),
        "views[0].parameters.direction",
        id="direction-outside-out-in-both",
    ),
    pytest.param(
        "    version: 1\n    kind: graph_orphans\n"
        "    graph: {edges: sx_links, subject: src, object: dst, predicate: rel, nodes: sx_parts}\n"
        "    parameters: {limit: {type: integer, default: 50, maximum: 501}}\n",
        "views[0].parameters.limit",
        id="orphan-limit-past-500",
    ),
]


@pytest.mark.parametrize(("view", "loc"), [*BAD_IDENTITIES, *BAD_FIELD_USES, *WIDENED_GRAPHS])
def test_a_view_is_refused_at_load_naming_the_key_at_fault(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], view: str, loc: str
) -> None:
    """Spec: "Views are checked when your definitions load"; each table above quotes the rule its
    cases break."""
    refused(tmp_path, capsys, view, loc)


WALK_DEPTH = "{type: integer, default: 1, maximum: 3}"
"""A graph view's predicates narrowed by item_enum and its depth by a lower ceiling."""
WALK_PREDICATES = "{type: string_array, default: [], item_enum: [uses, owns]}"


@pytest.mark.parametrize(
    "view",
    [
        pytest.param(
            "    version: 1\n" + graph_view(predicates=WALK_PREDICATES, depth=WALK_DEPTH),
            id="graph-item-enum-and-lower-ceiling",
        ),
        pytest.param(
            with_query(
                "{start: {type: datetime, required: true}, end: {type: datetime, required: true}}",
                "{mode: recent, scope: {collections: [sx_notes], occurred_after: '{{start}}', "
                "occurred_before: '{{end}}'}}",
            ),
            id="time-window-from-two-parameters",
        ),
        pytest.param(
            with_query(
                "{people: {type: string_array, required: true}}",
                "{mode: recent, scope: {collections: [sx_notes], entities: '{{people}}'}}",
            ),
            id="list-parameter-as-scope-entities",
        ),
    ],
)
def test_valid_contracts_load(tmp_path: Path, capsys: pytest.CaptureFixture[str], view: str) -> None:
    """Spec: predicates — "you can restrict the allowed set with the parameter's item_enum"; "the
    template is rendered once with a valid sample value for each parameter" (a time window and a
    list parameter are the spec's own motivating cases for the call-time check)."""
    code, err = catalog_check(tmp_path, capsys, view)
    assert code == 0, err


@pytest.mark.parametrize(
    "query",
    [
        pytest.param(
            "{mode: text, q: 'about {{nobody}}', scope: {collections: [sx_notes]}}", id="inside-a-string"
        ),
        pytest.param("{mode: text, q: '{{ nobody }}', scope: {collections: [sx_notes]}}", id="spaced"),
        pytest.param(
            "{mode: text, q: x, scope: {collections: [sx_notes]}, render: true, "
            "fence: {tag: r, preamble: '{{nobody}}'}}",
            id="in-the-fence",
        ),
        pytest.param(
            "{q: x, sources: [{name: a, mode: text, scope: {collections: [sx_notes], "
            "entities: ['{{nobody}}']}}], fuse: {kind: rrf}}",
            id="in-a-source",
        ),
        pytest.param(
            "{mode: recent, scope: {collections: [sx_notes]}, rank: [const, '{{nobody}}']}", id="in-the-rank"
        ),
    ],
)
def test_every_placeholder_names_a_declared_parameter(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], query: str
) -> None:
    """Spec: "Every placeholder must name a parameter you declared"; "every {{parameter}} reference
    names a declared parameter"."""
    refused(tmp_path, capsys, with_query("{}", query), "{{nobody}} names no declared parameter")


N = "scope: {collections: [sx_notes]}"


def test_a_view_version_must_be_at_least_1(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Spec, View fields: "a positive integer version" — 1 loads, 0 is refused at `version`."""
    view = "views:\n  - name: l8_case\n    version: %d\n    query: {mode: recent, " + N + "}\n"
    code, err = check_catalog(with_views(tmp_path / "one", view % 1), capsys)
    assert code == 0, err
    code, err = check_catalog(with_views(tmp_path / "zero", view % 0), capsys)
    assert code == 2 and "views[0].version" in err, err


# --- parameter declarations -----------------------------------------------------------------------


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


def check_parameter(tmp_path: Path, capsys: pytest.CaptureFixture[str], declaration: str) -> tuple[int, str]:
    """`memseek catalog check` of the `sx_` collections with one view whose parameter `x` is
    `declaration`: the exit code and what it printed."""
    root = with_views(
        tmp_path,
        "views:\n  - name: av5_case\n    version: 1\n"
        f"    parameters: {{x: {declaration}}}\n"
        "    query: {mode: recent, scope: {collections: [sx_notes]}}\n",
    )
    return check_catalog(root, capsys)


def test_a_number_enum_naming_one_value_twice_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Spec, Parameter fields: "`enum` | any | The complete set of allowed values, non-empty and
    unique." `1` and `1.0` are one number (YAML and JSON Schema compare numbers by value, and a
    call with either matches both), so the published `enum` would repeat a value."""
    code, err = check_parameter(tmp_path, capsys, "{type: number, enum: [1, 1.0]}")
    assert code == 2 and "views[0].parameters.x.enum" in err, err


@pytest.mark.parametrize(
    "declaration",
    [
        pytest.param("{type: string_array, default: [c], item_enum: [a, b]}", id="default-outside-item-enum"),
        pytest.param("{type: string_array, enum: [[a], [a]]}", id="repeated-list-enum"),
        pytest.param("{type: integer, minimum: .inf}", id="infinite-bound"),
        pytest.param("{type: number, default: .nan}", id="nan-default"),
        pytest.param("{type: string, min_length: -1}", id="negative-length"),
        pytest.param("{type: string, description: 3}", id="description-not-prose"),
    ],
)
def test_a_declaration_breaking_its_own_rules_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], declaration: str
) -> None:
    """Spec, Parameter fields: `default` "Must satisfy the type and every constraint below";
    `enum` values are "unique"; `description` is "Prose ... Non-blank"; bounds are numeric
    ("Inclusive character-count bounds"); "Constraints are checked against the declared type when
    your definitions load"."""
    code, err = check_parameter(tmp_path, capsys, declaration)
    assert code == 2 and "views[0].parameters.x" in err, err


WINDOW_QUERY = (
    "{mode: recent, scope: {collections: [sx_notes],"
    " occurred_after: '{{start}}', occurred_before: '{{end}}'}}"
)


def check_window(tmp_path: Path, capsys: pytest.CaptureFixture[str], parameters: str) -> tuple[int, str]:
    """`memseek catalog check` of one time-window view declaring `parameters`."""
    root = with_views(
        tmp_path,
        f"views:\n  - name: av5_window\n    version: 1\n    parameters: {parameters}\n"
        f"    query: {WINDOW_QUERY}\n",
    )
    return check_catalog(root, capsys)


def test_a_time_window_view_loads(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Spec: the template "is rendered once with a valid sample value for each parameter"; a time
    window from two datetime parameters is the spec's own case for the call-time check."""
    code, err = check_window(
        tmp_path, capsys, "{start: {type: datetime, required: true}, end: {type: datetime, required: true}}"
    )
    assert code == 0, err


def test_a_time_window_view_loads_whatever_the_order_its_parameters_are_declared_in(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Spec: `parameters` is a mapping of the view's typed inputs; at load "the template is rendered
    once with a valid sample value for each parameter" — a view every valid call can run (any
    `start` before `end`) is valid. Its content, and so its definition hash, does not depend on
    key order (design §2; docs/catalog.md "key order ... do[es] not count")."""
    code, err = check_window(
        tmp_path, capsys, "{end: {type: datetime, required: true}, start: {type: datetime, required: true}}"
    )
    assert code == 0, err


@pytest.mark.parametrize(
    ("parameter", "loads"),
    [
        pytest.param("{type: integer, minimum: 1.0, maximum: 10.0}", True, id="whole-float-bounds"),
        pytest.param("{type: integer, minimum: 0.5}", False, id="fractional-bound"),
        pytest.param("{type: number, minimum: .nan}", False, id="nan-bound"),
        pytest.param("{type: number, maximum: .inf}", False, id="infinite-bound"),
        pytest.param("{type: number, minimum: 0.5, maximum: 2.5, default: 1}", True, id="number-bounds"),
    ],
)
def test_parameter_bounds_are_whole_for_integers_and_finite(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], parameter: str, loads: bool
) -> None:
    # spec: "Bounds on an integer must themselves be whole numbers"
    root = sx_catalog(tmp_path, "sx-views")
    view = (
        "views:\n  - name: ald_bounds\n    version: 1\n    parameters:\n"
        f"      x: {parameter}\n    query: {{mode: recent, scope: {{collections: [sx_notes]}}}}\n"
    )
    (root / "views" / "ald_bounds.yaml").write_text(view)
    code = main(["catalog", "check", str(root)])
    err = capsys.readouterr().err
    if loads:
        assert code == 0, err
    else:
        assert code != 0 and "views/ald_bounds.yaml: view ald_bounds v1: views[0].parameters.x" in err, err


# --- views over several collection versions -------------------------------------------------------


NEW = catalog_text("av6-new", "collections/av6.yaml")
"""The catalog after v2 is published (test catalog `av6-new`): v1 unchanged except that it is no
longer active; v2 of `av6_ev` and `av6_slot`, and `av6_num`, `av6_enr`."""


def view(query: str) -> str:
    return f"views:\n  - name: av6_view\n    version: 1\n    query: {query}\n"


@pytest.mark.parametrize(
    ("query", "where"),
    [
        pytest.param(
            "{mode: recent, scope: {collections: [av6_ev]}, where: {tier: {eq: gold}}}",
            "query.where.tier",
            id="filter-on-a-v2-only-field",
        ),
        pytest.param(
            "{mode: structured, scope: {collections: [av6_ev]}, order_by: [{field: kind}]}",
            "query.order_by[0].field",
            id="sort-on-a-field-whose-type-changed",
        ),
        pytest.param(
            "{mode: recent, scope: {collections: [av6_ev]}, fields: [hidden]}",
            "query.fields[0]",
            id="return-a-field-not-returnable-in-v1",
        ),
        pytest.param(
            "{mode: recent, scope: {collections: [av6_ev], collection_versions: {av6_ev: [1, 2]}},"
            " where: {hidden: {exists: true}}}",
            "query.where.hidden",
            id="both-versions-pinned",
        ),
        pytest.param(
            "{mode: recent, scope: {collections: [av6_ev], collection_versions: {av6_ev: [2]}},"
            " where: {kind: {eq: word}}}",
            "query.where.kind.eq",
            id="condition-typed-by-the-pinned-version",
        ),
        pytest.param(
            "{mode: recent, scope: {collections: [av6_enr]}, annotations: [region]}",
            "query.annotations[0]",
            id="annotation-required-in-v2-only",
        ),
    ],
)
def test_a_view_must_fit_every_version_it_could_read(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], query: str, where: str
) -> None:
    """Spec What is checked: "every field you filter on, sort by, or ask to have returned exists —
    with compatible declarations — in every collection version the view could read from"; design §2:
    every error names "the file, the definition (kind, name, version), the YAML path"."""
    root = av6_catalog(tmp_path, NEW, **{"views/av6.yaml": view(query)})
    code = main(["catalog", "check", str(root)])
    out = capsys.readouterr()
    text = out.out + out.err
    assert code != 0, text
    assert f"views/av6.yaml: view av6_view v1: views[0].{where}" in text, text


@pytest.mark.parametrize(
    "query",
    [
        pytest.param(
            "{mode: recent, scope: {collections: [av6_ev], collection_versions: {av6_ev: [2]}},"
            " where: {tier: {eq: gold}}, fields: [tier, hidden]}",
            id="v2-pinned",
        ),
        pytest.param(
            "{mode: structured, scope: {collections: [av6_ev], collection_versions: {av6_ev: [1]}},"
            " order_by: [{field: kind}], where: {kind: {in: [a, b]}}}",
            id="v1-pinned",
        ),
        pytest.param(
            "{mode: structured, scope: {collections: [av6_ev]}, order_by: [{field: when, direction: desc}],"
            " where: {channel: {exists: true}}, fields: [when, channel, tags]}",
            id="fields-every-version-declares",
        ),
    ],
)
def test_a_view_pinned_to_the_versions_declaring_its_fields_loads(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], query: str
) -> None:
    """Spec What is checked: "every collection and pinned collection version resolves" and the fields
    exist "in every collection version the view could read from" — here they do."""
    root = av6_catalog(tmp_path, NEW, **{"views/av6.yaml": view(query)})
    code = main(["catalog", "check", str(root)])
    out = capsys.readouterr()
    assert code == 0, out.out + out.err
