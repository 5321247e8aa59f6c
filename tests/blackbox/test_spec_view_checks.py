"""Spec "What is checked, and when" and "Parameter fields": a view is refused when definitions load.

Each case is the `sx_` catalog plus one view, checked with `memseek catalog check DIR` (the same
validation the service runs at start-up): exit 0 when valid, 2 with the problem when not.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.blackbox.support import GRAPH
from tests.blackbox.support import check_catalog
from tests.blackbox.support import graph_view
from tests.blackbox.support import with_views

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
