"""Third conformance audit of the read side against the letter of `views-and-search.md`.

Each test quotes the spec sentence it relies on, with expected values taken from that sentence, on
points the earlier suites (test_spec_*, test_audit_spec, test_audit_letter, test_design_catalog)
leave open. Load-time checks run `memseek catalog check` over the `sx_` catalog plus one `s3_case`
view; call-time contracts the `sx_` views do not declare use a small catalog of `s3_` views over
the `sx_` collections; the spec's own examples are replayed on the reference catalog.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from memseek.catalog.problems import CatalogError
from memseek.runtime import Runtime
from tests.blackbox.conftest import ClientFactory
from tests.blackbox.conftest import environ
from tests.blackbox.support import SCHEMA
from tests.blackbox.support import WRAPPER_KEYS
from tests.blackbox.support import check_catalog
from tests.blackbox.support import graph_view
from tests.blackbox.support import ids
from tests.blackbox.support import invalid
from tests.blackbox.support import link
from tests.blackbox.support import note
from tests.blackbox.support import part
from tests.blackbox.support import rejects
from tests.blackbox.support import search
from tests.blackbox.support import sx_catalog
from tests.blackbox.support import vec
from tests.blackbox.support import with_views
from tests.blackbox.support import write
from tests.conftest import Client
from tests.conftest import Tenant
from tests.conftest import client_for
from tests.helpers import error
from tests.helpers import listed_views
from tests.helpers import ok
from tests.helpers import runtime_for
from tests.helpers import view_query
from tests.helpers import with_models
from tests.helpers import written_ids
from tests.integration.view_support import SPEC_GRAPH_CONTENT
from tests.integration.view_support import SPEC_GRAPH_PARAMETERS
from tests.integration.view_support import spec_graph_response
from tests.openai_server import OpenAIServer

# --- load-time checks: `memseek catalog check` ----------------------------------------------------


SEARCH = "query: {mode: recent, scope: {collections: [sx_notes]}}"
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


# --- call-time contracts: the `s3_` views ---------------------------------------------------------


@pytest.fixture(scope="module")
def s3_runtime(
    runtime: Runtime, sx_server: OpenAIServer, tmp_path_factory: pytest.TempPathFactory
) -> Runtime:
    root = sx_catalog(tmp_path_factory.mktemp("s3-catalog"), "s3")
    return runtime_for(runtime, root, environ(sx_server))


@pytest.fixture
def s3(s3_runtime: Runtime, tenant: Tenant, server: OpenAIServer) -> Client:
    return client_for(s3_runtime, tenant)


def test_get_views_publishes_every_type_with_its_defaults(s3: Client) -> None:
    """Spec: "input_schema is the complete machine-readable contract, including descriptions,
    allowed values, numeric and length limits, and defaults"; `parameters` is "the compact,
    human-readable summary"; "Datetime values must include a timezone"."""
    entry = listed_views(s3)[("s3_kinds", 1)]
    assert entry["parameters"] == {
        "n": {"type": "integer", "required": False, "default": 2},
        "x": {"type": "number", "required": False, "default": None},
        "flag": {"type": "boolean", "required": False, "default": False},
        "since": {"type": "datetime", "required": False, "default": "2026-01-01T00:00:00Z"},
        "tags": {"type": "string_array", "required": False, "default": []},
    }
    schema = entry["input_schema"]
    assert (schema["$schema"], schema["required"], schema["additionalProperties"]) == (SCHEMA, [], False)
    props = schema["properties"]
    assert props["n"] == {"type": "integer", "enum": [1, 2, 3], "default": 2}
    assert props["x"] == {"type": "number", "enum": [0.5, 1.5]}
    assert props["flag"] == {"type": "boolean", "description": "Only VIPs.", "default": False}
    assert props["since"] == {
        "type": "string",
        "format": "date-time",
        "description": "Lower bound.",
        "default": "2026-01-01T00:00:00Z",
    }
    assert props["tags"]["type"] == "array" and props["tags"]["maxItems"] == 2
    assert props["tags"]["items"] == {"type": "string", "enum": ["a", "b"]} and props["tags"]["default"] == []


@pytest.mark.parametrize(
    ("parameters", "name"),
    [
        pytest.param({"n": 4}, "n", id="integer-outside-enum"),
        pytest.param({"x": 1.0}, "x", id="number-outside-enum"),
        pytest.param({"x": 1}, "x", id="integer-for-number-outside-enum"),
        pytest.param({"tags": ["c"]}, "tags", id="item-outside-item-enum"),
        pytest.param({"tags": ["a", "b", "a"]}, "tags", id="above-max-items"),
        pytest.param({"flag": 0}, "flag", id="number-for-boolean"),
        pytest.param({"since": "2026-01-01"}, "since", id="date-without-time-or-zone"),
    ],
)
def test_number_enums_and_defaults_are_enforced_at_call_time(
    s3: Client, parameters: dict[str, Any], name: str
) -> None:
    """Spec: "Memseek rejects unknown, missing, wrongly typed, or out-of-range parameters"; enum is
    "The complete set of allowed values" for any type."""
    invalid(view_query(s3, "s3_kinds", parameters), "parameters", name)


def test_defaults_of_every_type_are_applied_and_echoed(s3: Client) -> None:
    """Spec: "parameters shows the values supplied plus any defaults applied; an optional parameter
    that was omitted and has no default stays absent"."""
    body = ok(view_query(s3, "s3_kinds", {"x": 1.5}))
    assert body["parameters"] == {
        "n": 2,
        "x": 1.5,
        "flag": False,
        "since": "2026-01-01T00:00:00Z",
        "tags": [],
    }


def test_a_graph_view_may_narrow_predicates_and_depth(s3: Client) -> None:
    """Spec: predicates — "you can restrict the allowed set with the parameter's item_enum"; the
    input schema carries "allowed values, numeric and length limits"."""
    write(s3, link("a", "owns", "b"), link("a", "advises", "c"))
    body = ok(view_query(s3, "s3_walk", {"seed": "a", "predicates": ["owns"]}))
    assert body["nodes"] == ["a", "b"]
    invalid(view_query(s3, "s3_walk", {"seed": "a", "predicates": ["advises"]}), "parameters", "predicates")
    invalid(view_query(s3, "s3_walk", {"seed": "a", "depth": 4}), "parameters", "depth")
    props = listed_views(s3)[("s3_walk", 1)]["input_schema"]["properties"]
    assert props["predicates"]["items"] == {"type": "string", "enum": ["uses", "owns"]}
    assert (props["depth"]["minimum"], props["depth"]["maximum"]) == (1, 3)
    assert props["seed"]["description"] == "Where the walk starts."
    assert (props["seed"]["minLength"], props["seed"]["maxLength"]) == (1, 128)


WINDOW = {"start": "2026-07-02T00:00:00Z", "end": "2026-07-03T00:00:00Z"}


@pytest.mark.parametrize(
    ("view", "parameters", "name"),
    [
        pytest.param("s3_window", {**WINDOW, "start": "2026-07-04T00:00:00Z"}, "start", id="window-reversed"),
        pytest.param("s3_window", {**WINDOW, "end": WINDOW["start"]}, "start", id="window-empty"),
        pytest.param("s3_people", {"people": ["maria", "maria"]}, "people", id="entities-repeated"),
        pytest.param(
            "s3_people", {"people": [f"p{i}" for i in range(101)]}, "people", id="entities-over-100"
        ),
        pytest.param("s3_values", {"channels": []}, "channels", id="in-list-empty"),
        pytest.param(
            "s3_values", {"channels": [f"c{i}" for i in range(101)]}, "channels", id="in-list-over-100"
        ),
    ],
)
def test_the_finished_request_is_validated_a_second_time(
    s3: Client, view: str, parameters: dict[str, Any], name: str
) -> None:
    """Spec: the view "validates the finished request a second time before running it. That second
    check matters when a parameter supplies part of the query itself, such as a timestamp or a
    list"; "occurred_after must be earlier than occurred_before"; "collections, entities, and types
    are unique lists of up to 100 entries each"; "Value lists (in, contains_any, contains_all) must
    be non-empty and hold at most 100 entries"."""
    invalid(view_query(s3, view, parameters), "parameters", name)


def test_a_time_window_view_honours_strict_bounds(s3: Client) -> None:
    """Spec: "Both comparisons are strict: a record sitting exactly on a bound is excluded"."""
    _on_start, inside, _on_end = write(
        s3,
        note("start", occurred_at=WINDOW["start"]),
        note("inside", occurred_at="2026-07-02T12:00:00Z"),
        note("end", occurred_at=WINDOW["end"]),
    )
    assert ok(view_query(s3, "s3_window", WINDOW))["input_record_ids"] == [inside]


def test_the_customer_context_example_over_a_collection_with_embeddings(s3: Client) -> None:
    """Spec, "Start by describing the question": customer_context is a hybrid search, k 20,
    `render: true`, scoped to one entity; "The view response wrapper" lists its keys."""
    (record,) = write(
        s3,
        vec("Maria confirmed the Q3 budget.", entity="contact.maria", occurred_at="2026-07-01T10:22:00Z"),
    )
    write(s3, vec("Q3 budget for someone else", entity="contact.john"))
    body = ok(view_query(s3, "s3_customer_context", {"entity": "contact.maria", "task": "Q3 budget"}))
    assert list(body) == WRAPPER_KEYS
    assert body["parameters"] == {"entity": "contact.maria", "task": "Q3 budget"}
    assert ids(body) == [record] == body["input_record_ids"]
    assert body["hits"][0]["rank"] == 1 and body["hits"][0]["score"] == 1.0
    assert body["ranking"]["kind"] == "rank_expression"
    assert (
        body["rendered"] == f"[id={record}] 2026-07-01T10:22Z | sx_vec/note | Maria confirmed the Q3 budget."
    )
    assert body["backend"] == [{"name": "pg", "layout": None, "candidate_count": 1}]


def test_a_view_answers_503_when_embeddings_are_unavailable(s3_runtime: Runtime, tenant: Tenant) -> None:
    """Spec, Errors: "Embeddings, search credentials, or the reranking model are unavailable → 503"."""
    offline = client_for(with_models(s3_runtime, {}), tenant)
    response = view_query(offline, "s3_customer_context", {"entity": "e", "task": "an unembedded 503 task"})
    error(response, 503)


@pytest.mark.parametrize(
    "name",
    ["a" * 2000, "%F0%9F%98%80", "sx%00context", "sx_context%20", "%2E%2E"],
    ids=["very-long", "emoji", "nul", "trailing-space", "dot-dot"],
)
def test_any_name_without_an_active_view_is_404(s3: Client, name: str) -> None:
    """Spec, Errors: "No active view by that name | 404"."""
    error(s3.post(f"/views/{name}/query", json={}), 404, "not_found")


# --- the spec's own examples on the reference catalog ---------------------------------------------


def test_get_views_lists_customer_context_as_the_spec_shows(client: Client, sx: Client) -> None:
    """Spec, "Discovering views with GET /views": the customer_context entry. `sx_context` v1
    declares the same contract over `sx_notes` (test_spec_views pins its entry key by key)."""
    entry = listed_views(client)[("customer_context", 1)]
    same_contract = listed_views(sx)[("sx_context", 1)]
    assert entry["hash"].startswith("sha256-") and entry["hash"] != same_contract["hash"]
    renamed = {"name": "customer_context", "hash": entry["hash"], "collections": ["customer_events"]}
    assert entry == {**same_contract, **renamed}


def test_graph_query_reproduces_the_spec_example(client: Client) -> None:
    """Spec, "Graph views": the `graph_query` request and response, field for field."""
    text = SPEC_GRAPH_CONTENT["text"]
    record = {"collection": "dependencies", "entity": "people/maya", "type": "link", "text": text}
    (edge,) = written_ids(client, {**record, "content": SPEC_GRAPH_CONTENT}, query="?wait=true")
    body = ok(view_query(client, "graph_query", SPEC_GRAPH_PARAMETERS))
    view = listed_views(client)[("graph_query", 1)]
    assert body == spec_graph_response({"name": "graph_query", "version": 1, "hash": view["hash"]}, edge)


# --- search requests over HTTP --------------------------------------------------------------------


EMOJI = "\U0001f600"  # one character outside the Basic Multilingual Plane: 4 bytes of UTF-8


def test_q_is_bounded_in_characters_not_bytes(sx: Client) -> None:
    """Spec: "q — the query text, up to 8,192 characters by default"."""
    assert search(sx, {"mode": "text", "q": EMOJI * 8192})["hits"] == []
    rejects(sx, {"mode": "text", "q": EMOJI * 8193}, "q")


@pytest.mark.parametrize(
    ("entity", "accepted"),
    [
        pytest.param(EMOJI * 3, True, id="3-at-min-length"),
        pytest.param(EMOJI * 12, True, id="12-at-max-length"),
        pytest.param(EMOJI * 2, False, id="2-below"),
        pytest.param(EMOJI * 13, False, id="13-above"),
    ],
)
def test_length_bounds_count_characters(sx: Client, entity: str, accepted: bool) -> None:
    """Spec: "`min_length`, `max_length` | `string` | Inclusive character-count bounds" (sx_contract's
    entity is 3–12)."""
    response = view_query(sx, "sx_contract", {"entity": entity})
    if accepted:
        assert ok(response)["parameters"]["entity"] == entity
    else:
        invalid(response, "parameters", "entity")


NOTES = {"collections": ["sx_notes"]}


def test_seed_and_anchor_take_128_characters_of_any_width(sx: Client) -> None:
    """Spec: seed "must be 1–128 characters"; graph_boost anchor "trimmed, 1–128 characters"."""
    assert ok(view_query(sx, "sx_walk", {"seed": EMOJI * 128}))["parameters"]["seed"] == EMOJI * 128
    search(sx, {"mode": "recent", "scope": NOTES, "graph_boost": {"anchor": EMOJI * 128}})
    invalid(view_query(sx, "sx_walk", {"seed": EMOJI * 129}), "parameters", "seed")
    rejects(
        sx,
        {"mode": "recent", "scope": NOTES, "graph_boost": {"anchor": EMOJI * 129}},
        "graph_boost",
        "anchor",
    )


def test_get_search_q_is_bounded_by_max_query_chars(sx_with: ClientFactory) -> None:
    """Spec, Deployment limits: "`MAX_QUERY_CHARS` | Maximum length of the query text `q`"."""
    invalid(sx_with(max_query_chars=5).get("/search?q=abcdef"), "query", "q")


def test_the_size_limit_is_the_exact_byte_count(sx: Client, sx_with: ClientFactory) -> None:
    """Spec: "`MAX_RESPONSE_BYTES` | Size of the whole JSON response, past which you get `409`"."""
    write(sx, *(note(f"row {i}", content={"amount": i}) for i in range(5)))
    body = {"mode": "structured", "scope": NOTES, "order_by": [{"field": "amount"}], "include": ["text"]}
    size = len(sx.post("/search", json=body).get_data())
    assert sx_with(max_response_bytes=size).post("/search", json=body).status_code == 200
    error(sx_with(max_response_bytes=size - 1).post("/search", json=body), 409, "response_too_large")


def test_graph_views_and_get_search_are_size_bounded(sx: Client, sx_with: ClientFactory) -> None:
    """Spec: "The whole response is size-bounded. Exceeding the limit does not silently drop
    results: the request fails with 409 response_too_large"."""
    write(sx, *(link("hub", "uses", f"leaf{i}") for i in range(30)), *(part(f"p{i}") for i in range(30)))
    write(sx, *(vec("alpha " + "x" * 1500) for _ in range(5)))
    small = sx_with(max_response_bytes=1500)
    error(view_query(small, "sx_walk", {"seed": "hub", "limit": 500}), 409, "response_too_large")
    error(view_query(small, "sx_orphans", {"limit": 500}), 409, "response_too_large")
    error(small.get("/search?q=alpha&collection=sx_vec"), 409, "response_too_large")


def test_combined_fields_and_annotations_hold_for_every_source(sx: Client) -> None:
    """Spec: fields — "The field must be marked returnable in every collection in scope";
    annotations — "The enrichment must be required by every collection in scope" (the output
    controls "also apply when you combine several searches")."""
    sources = [
        {"name": "notes", "mode": "text", "scope": NOTES},
        {"name": "tagged", "mode": "text", "scope": {"collections": ["sx_tagged"]}},
    ]
    combined = {"q": "budget", "sources": sources, "fuse": {"kind": "rrf"}}
    rejects(sx, {**combined, "fields": ["channel"]}, "fields", 0)
    rejects(sx, {**combined, "annotations": ["sx_region"]}, "annotations", 0)


def test_a_record_cut_by_a_sources_own_k_has_no_rank_there(sx: Client) -> None:
    """Spec: "Each source is ranked and cut to its own k before merging"; source_ranks maps "each
    source name to the record's position in that source's list. Sources that did not find the
    record are omitted"."""
    first, second, third = write(sx, *(note(f"n{i}", scores={"importance": 3 - i}) for i in range(3)))
    ranked = {"mode": "recent", "scope": NOTES, "rank": ["score", "importance"]}
    body = search(
        sx,
        {
            "sources": [{"name": "short", **ranked, "k": 1}, {"name": "long", **ranked, "k": 3}],
            "fuse": {"kind": "rrf"},
        },
    )
    assert ids(body) == [first, second, third]
    assert [h["source_ranks"] for h in body["hits"]] == [{"short": 1, "long": 1}, {"long": 2}, {"long": 3}]
    assert all(type(rank) is int for h in body["hits"] for rank in h["source_ranks"].values())


def test_a_parameter_value_is_data_not_a_template(sx: Client) -> None:
    """Spec: "Anything in {{double braces}} is a placeholder filled in from a parameter the caller
    supplies" — in the view's definition; a supplied value is never expanded again."""
    write(sx, note("budget plan", entity="budget"))
    assert ids(ok(view_query(sx, "sx_context", {"entity": "budget", "task": "budget"})))
    body = ok(view_query(sx, "sx_context", {"entity": "budget", "task": "{{entity}}"}))
    assert body["hits"] == [] and body["parameters"]["task"] == "{{entity}}"


# --- changing a view ------------------------------------------------------------------------------


def sx_catalog_with(tmp_path: Path, old: str, new: str) -> Path:
    """The `sx_` catalog with the first `old` of its views file replaced by `new`."""
    root = sx_catalog(tmp_path, "sx-views")
    views = root / "views" / "sx.yaml"
    text = views.read_text()
    assert old in text
    views.write_text(text.replace(old, new, 1))
    return root


def test_switching_the_active_version_keeps_each_definition(
    sx: Client, sx_runtime: Runtime, tenant: Tenant, tmp_path: Path
) -> None:
    """Spec, Changing a view: "publish a new version rather than editing the old one, and switch
    which version is active"; "hash identifies the exact definition that is loaded"."""
    root = sx_catalog_with(
        tmp_path,
        "  - name: sx_context\n    version: 1\n    active: true\n",
        "  - name: sx_context\n    version: 1\n",
    )
    views = root / "views" / "sx.yaml"
    views.write_text(
        views.read_text().replace(
            "  - name: sx_context\n    version: 2\n",
            "  - name: sx_context\n    version: 2\n    active: true\n",
        )
    )
    switched = client_for(runtime_for(sx_runtime, root), tenant)
    before, after = listed_views(sx), listed_views(switched)
    for version in (1, 2):
        assert after[("sx_context", version)]["hash"] == before[("sx_context", version)]["hash"]
    assert (after[("sx_context", 1)]["active"], after[("sx_context", 2)]["active"]) == (False, True)
    assert ok(view_query(switched, "sx_context", {"entity": "e"}))["view"]["version"] == 2


def test_editing_a_loaded_view_version_is_refused(sx_runtime: Runtime, tmp_path: Path) -> None:
    """Spec, Changing a view: "A view definition is immutable. When a change alters the contract
    callers depend on, publish a new version rather than editing the old one"."""
    root = sx_catalog_with(tmp_path, "      k: 20\n      render: true\n", "      k: 21\n      render: true\n")
    with pytest.raises(CatalogError) as raised:
        runtime_for(sx_runtime, root)
    message = str(raised.value)
    assert "sx_context v1" in message and "new version" in message, message


# --- numbers in filters ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "literal",
    [
        pytest.param(1e20, id="1e20-with-exponent"),
        pytest.param(10**20, id="1e20-as-digits"),
        pytest.param(10**30, id="1e30-as-digits"),
    ],
)
def test_a_number_range_takes_any_json_number(sx: Client, literal: float) -> None:
    """Spec, Typed filters: "`gt`, `gte`, `lt`, `lte` | greater/less than (or equal) | numbers and
    timestamps". JSON does not tell 1e20 from 100000000000000000000 (what JavaScript's
    JSON.stringify writes for 1e20)."""
    (record,) = write(sx, note(content={"amount": 5}))
    assert ids(search(sx, {"mode": "recent", "scope": NOTES, "where": {"amount": {"lt": literal}}})) == [
        record
    ]
    assert search(sx, {"mode": "recent", "scope": NOTES, "where": {"amount": {"gte": literal}}})["hits"] == []


@pytest.mark.parametrize(
    ("values", "matched"),
    [
        pytest.param([5, 6.5], ["five", "six_and_a_half"], id="integer-then-fraction"),
        pytest.param([7, 6.5], ["six_and_a_half"], id="fraction-after-a-miss"),
        pytest.param([5, 1e20], ["five"], id="integer-then-large"),
    ],
)
def test_in_on_a_number_field_matches_every_listed_value(
    sx: Client, values: list[float], matched: list[str]
) -> None:
    """Spec, Typed filters: "`in` | is one of the listed values | single values"; "every condition
    is re-checked against the system of record before results are returned — a filter is never
    merely approximate"."""
    five, six_and_a_half = write(sx, note(content={"amount": 5}), note(content={"amount": 6.5}))
    records = {"five": five, "six_and_a_half": six_and_a_half}
    body = search(sx, {"mode": "recent", "scope": NOTES, "where": {"amount": {"in": values}}})
    assert sorted(ids(body)) == sorted(records[name] for name in matched)


def matched_or_refused_at(response: Any, loc: list[Any]) -> list[str] | None:
    """The hit ids of a 200, or None for a 422 located at `loc` (anything else fails)."""
    if response.status_code == 200:
        return ids(response.get_json())
    invalid(response, *loc)
    return None


def test_an_integer_filter_past_64_bits_is_answered_or_blamed_on_itself(sx: Client) -> None:
    """Spec, Typed filters: "Conditions are type-checked against the declared field"; Errors: an
    invalid request is a 422 (design: "details items carry a loc (JSON path)") — not a complaint
    about a rank formula the request does not have."""
    write(sx, note(content={"count": 3}))
    response = sx.post("/search", json={"mode": "recent", "scope": NOTES, "where": {"count": {"eq": 2**63}}})
    assert matched_or_refused_at(response, ["where", "count", "eq"]) in ([], None)


def test_a_large_depth_bound_is_answered_or_blamed_on_itself(sx: Client) -> None:
    """Spec, Scopes: "depth_lte filters by how far a record is from original evidence: records you
    ingested are depth 0" — a bound no record reaches keeps every record."""
    (record,) = write(sx, note())
    response = sx.post("/search", json={"mode": "recent", "scope": {"depth_lte": 2**31}})
    assert matched_or_refused_at(response, ["scope", "depth_lte"]) in ([record], None)
