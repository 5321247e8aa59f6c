"""Loading catalogs: one broken catalog per rule, every error reported at once, the reference catalog.

Each case copies `tests/fixtures/catalogs/minimal` (valid) into a temporary directory, adds or
replaces files, and expects a problem naming the file, the definition, the YAML path and what
is wrong.
"""

# ruff: noqa: E501  (one rule per table row reads better than rows wrapped over five lines)
from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest

from memseek.catalog.catalog import Catalog
from memseek.catalog.load import load_catalog
from memseek.catalog.problems import CatalogError
from memseek.catalog.problems import format_loc
from memseek.catalog.problems import overlaps
from memseek.catalog.problems import pruned
from memseek.catalog.rank import to_tree
from memseek.paths import reference_catalog
from memseek.schema import EMBEDDING_DIM
from memseek.search.view_checks import VIEW_CHECKS
from tests.helpers import MINIMAL_CATALOG
from tests.helpers import build_catalog
from tests.helpers import problems_of

SEARCH = "{mode: recent, scope: {collections: [notes]}}"


def view(query: str = SEARCH, parameters: str = "{}", extra: str = "") -> dict[str, str]:
    """views/bad.yaml holding one search view `bad` v1."""
    return {
        "views/bad.yaml": f"""
        views:
          - name: bad
            version: 1
            parameters: {parameters}
            query: {query}
            {extra}
        """
    }


def param(spec: str) -> dict[str, str]:
    """A search view whose one parameter `p` is `spec`."""
    return view(parameters=f"{{p: {spec}}}")


def graph(
    kind: str = "graph",
    block: str = "{edges: links, subject: src, object: dst, predicate: rel}",
    parameters: str | None = None,
) -> dict[str, str]:
    """views/bad.yaml holding one graph view `bad` v1 (the spec's contract unless given)."""
    if parameters is None:
        parameters = (
            "{seed: {type: string, required: true}, predicates: {type: string_array, default: []}, "
            "direction: {type: string, default: out}, depth: {type: integer, default: 1}, "
            "limit: {type: integer, default: 20}}"
            if kind == "graph"
            else "{limit: {type: integer, default: 50}}"
        )
    return {
        "views/bad.yaml": f"""
        views:
          - name: bad
            version: 1
            kind: {kind}
            graph: {block}
            parameters: {parameters}
        """
    }


def collection(extra: str) -> dict[str, str]:
    """collections/bad.yaml holding one collection `bad` v1 with `extra` keys (a flow mapping body)."""
    return {"collections/bad.yaml": f"collections:\n  - {{name: bad, version: 1, types: [note], {extra}}}\n"}


def conf(name: str, text: str) -> dict[str, str]:
    return {f"conf/{name}": text}


V = ("views/bad.yaml", "view bad v1")
C = ("collections/bad.yaml", "collection bad v1")
Q = "views[0].query"
P = "views[0].parameters.p"
GP = "views[0].parameters"

CASES = [
    # -- parameters (spec: Parameter fields) ------------------------------------------------------
    pytest.param(param("{type: text}"), *V, f"{P}.type", "Input should be", id="param-unknown-type"),
    pytest.param(
        param("{type: string, format: email}"), *V, f"{P}.format", "Extra inputs", id="param-unknown-key"
    ),
    pytest.param(
        param("{type: string, minimum: 3}"),
        *V,
        f"{P}.minimum",
        "only to number and integer",
        id="param-minimum-on-string",
    ),
    pytest.param(
        param("{type: integer, item_enum: [a]}"),
        *V,
        f"{P}.item_enum",
        "only to string_array",
        id="param-item-enum-on-integer",
    ),
    pytest.param(
        param("{type: integer, min_length: 1}"),
        *V,
        f"{P}.min_length",
        "only to string",
        id="param-min-length-on-integer",
    ),
    pytest.param(
        param("{type: string, max_items: 1}"),
        *V,
        f"{P}.max_items",
        "only to string_array",
        id="param-max-items-on-string",
    ),
    pytest.param(
        param("{type: string, required: true, default: x}"),
        *V,
        f"{P}.default",
        "required parameter may not declare a default",
        id="param-required-with-default",
    ),
    pytest.param(
        param("{type: integer, default: many}"),
        *V,
        f"{P}.default",
        "expected integer",
        id="param-default-wrong-type",
    ),
    pytest.param(
        param("{type: integer, default: 200, maximum: 100}"),
        *V,
        f"{P}.default",
        "at most 100",
        id="param-default-out-of-range",
    ),
    pytest.param(
        param("{type: string, default: year, enum: [day, week]}"),
        *V,
        f"{P}.default",
        "one of",
        id="param-default-not-in-enum",
    ),
    pytest.param(
        param("{type: datetime, default: '2026-07-17T09:00:00'}"),
        *V,
        f"{P}.default",
        "timezone",
        id="param-default-datetime-naive",
    ),
    pytest.param(
        param("{type: string, default: null}"), *V, f"{P}.default", "expected string", id="param-default-null"
    ),
    pytest.param(
        param("{type: string, description: '  '}"),
        *V,
        f"{P}.description",
        "must not be blank",
        id="param-blank-description",
    ),
    pytest.param(
        param("{type: string, enum: []}"), *V, f"{P}.enum", "must not be empty", id="param-enum-empty"
    ),
    pytest.param(param("{type: string, enum: [a, a]}"), *V, f"{P}.enum", "unique", id="param-enum-repeated"),
    pytest.param(
        param("{type: integer, enum: [1, two]}"), *V, f"{P}.enum", "entry 1", id="param-enum-wrong-type"
    ),
    pytest.param(
        param("{type: string, max_length: 2, enum: [ab, abc]}"),
        *V,
        f"{P}.enum",
        "at most 2",
        id="param-enum-breaks-constraint",
    ),
    pytest.param(
        param("{type: string_array, item_enum: []}"),
        *V,
        f"{P}.item_enum",
        "must not be empty",
        id="param-item-enum-empty",
    ),
    pytest.param(
        param("{type: string_array, item_enum: [a, a]}"),
        *V,
        f"{P}.item_enum",
        "unique",
        id="param-item-enum-repeated",
    ),
    pytest.param(
        param("{type: number, minimum: 5, maximum: 1}"),
        *V,
        f"{P}.maximum",
        "may not exceed",
        id="param-minimum-above-maximum",
    ),
    pytest.param(
        param("{type: integer, minimum: 1.5}"),
        *V,
        f"{P}.minimum",
        "whole numbers",
        id="param-integer-bound-not-whole",
    ),
    pytest.param(
        param("{type: string, min_length: 3, max_length: 2}"),
        *V,
        f"{P}.max_length",
        "may not exceed",
        id="param-min-length-above-max",
    ),
    pytest.param(
        param("{type: string_array, min_items: 3, max_items: 2}"),
        *V,
        f"{P}.max_items",
        "may not exceed",
        id="param-min-items-above-max",
    ),
    pytest.param(
        param("{type: string_array, default: [x], item_enum: [a]}"),
        *V,
        f"{P}.default",
        "item 0",
        id="param-default-breaks-item-enum",
    ),
    # -- view shape (spec: View fields) -----------------------------------------------------------
    pytest.param(
        {"views/bad.yaml": "views:\n  - {name: bad, version: 1}\n"},
        *V,
        "views[0].query",
        "needs a query",
        id="view-search-without-query",
    ),
    pytest.param(view(extra="kind: table"), *V, "views[0].kind", "Input should be", id="view-unknown-kind"),
    pytest.param(
        view(extra="required_capabilities: [telepathy]"),
        *V,
        "views[0].required_capabilities[0]",
        "Input should be",
        id="view-unknown-capability",
    ),
    pytest.param(view(extra="cache: true"), *V, "views[0].cache", "Extra inputs", id="view-unknown-key"),
    pytest.param(
        {"views/bad.yaml": "views:\n  - {name: bad, version: 0, query: {}}\n"},
        "views/bad.yaml",
        "view bad v0",
        "views[0].version",
        "greater than 0",
        id="view-version-not-positive",
    ),
    pytest.param(
        {"views/bad.yaml": "views:\n  - {name: bad-name, version: 1, query: {}}\n"},
        "views/bad.yaml",
        "view bad-name v1",
        "views[0].name",
        "pattern",
        id="view-name-not-identifier",
    ),
    # -- search view templates and requests (spec: What is checked, and when) ---------------------
    pytest.param(
        view("{q: '{{task}}', mode: text}"),
        *V,
        f"{Q}.q",
        "{{task}} names no declared parameter",
        id="placeholder-undeclared",
    ),
    pytest.param(
        view("{q: 'about {{ task }', mode: text}", "{task: {type: string}}"),
        *V,
        f"{Q}.q",
        "malformed placeholder",
        id="placeholder-malformed",
    ),
    pytest.param(
        view("{mode: recent, where: {'{{f}}': {exists: true}}}", "{f: {type: string}}"),
        *V,
        f"{Q}.where.{{{{f}}}}",
        "not allowed in keys",
        id="placeholder-in-key",
    ),
    pytest.param(view("{mode: recent, limit: 3}"), *V, f"{Q}.limit", "Extra inputs", id="query-unknown-key"),
    pytest.param(view("{mode: text}"), *V, f"{Q}.q", "q is required", id="query-text-without-q"),
    pytest.param(
        view("{mode: vector, vector: [0.1, 0.2], embedding_model: m, scope: {collections: [notes]}}"),
        *V,
        f"{Q}.vector",
        "a view cannot carry a query vector",
        id="query-fixed-vector",
    ),
    pytest.param(
        view(
            "{q: x, fuse: {kind: rrf}, sources: [{name: a, mode: vector, scope: {collections: [notes]},"
            " vector: ['{{v}}', 0.5], embedding_model: m}]}",
            "{v: {type: number}}",
        ),
        *V,
        f"{Q}.sources[0].vector",
        "a view cannot carry a query vector",
        id="query-vector-parameter",
    ),
    pytest.param(
        view("{mode: recent, k: '{{n}}'}", "{n: {type: integer, default: 500}}"),
        *V,
        f"{Q}.k",
        "less than or equal to 100",
        id="query-sample-value-out-of-range",
    ),
    pytest.param(
        view("{mode: recent, scope: {collections: [nope]}}"),
        *V,
        f"{Q}.scope.collections[0]",
        "unknown collection 'nope'",
        id="query-unknown-collection",
    ),
    pytest.param(
        view("{mode: recent, scope: {collections: [notes], collection_versions: {notes: [1, 7]}}}"),
        *V,
        f"{Q}.scope.collection_versions.notes[1]",
        "no version 7",
        id="query-unknown-pinned-version",
    ),
    pytest.param(
        view("{mode: recent, scope: {collections: [notes], types: [memo]}}"),
        *V,
        f"{Q}.scope.types[0]",
        "record type 'memo'",
        id="query-unknown-record-type",
    ),
    pytest.param(
        view("{q: x, mode: vector, scope: {collections: [plain]}}"),
        *V,
        f"{Q}.mode",
        "needs embeddings",
        id="query-vector-without-embedding",
    ),
    pytest.param(
        view("{mode: recent, scope: {collections: [notes]}, where: {nope: {exists: true}}}"),
        *V,
        f"{Q}.where.nope",
        "does not declare it",
        id="where-undeclared-field",
    ),
    pytest.param(
        view("{mode: recent, scope: {collections: [notes]}, where: {secret: {eq: x}}}"),
        *V,
        f"{Q}.where.secret",
        "does not declare it filterable",
        id="where-not-filterable",
    ),
    pytest.param(
        view("{mode: recent, scope: {collections: [notes]}, where: {channel: {gt: 3}}}"),
        *V,
        f"{Q}.where.channel.gt",
        "number, integer and datetime",
        id="where-gt-on-string",
    ),
    pytest.param(
        view("{mode: recent, scope: {collections: [notes]}, where: {channel: {contains_any: [a]}}}"),
        *V,
        f"{Q}.where.channel.contains_any",
        "string_array",
        id="where-contains-on-string",
    ),
    pytest.param(
        view("{mode: recent, scope: {collections: [notes]}, where: {tags: {in: [a]}}}"),
        *V,
        f"{Q}.where.tags.in",
        "single values",
        id="where-in-on-list",
    ),
    pytest.param(
        view("{mode: recent, scope: {collections: [notes]}, where: {count: {eq: many}}}"),
        *V,
        f"{Q}.where.count.eq",
        "expected integer",
        id="where-eq-wrong-type",
    ),
    pytest.param(
        view("{mode: recent, scope: {collections: [notes]}, where: {when: {gte: 5}}}"),
        *V,
        f"{Q}.where.when.gte",
        "timestamp",
        id="where-datetime-with-number",
    ),
    pytest.param(
        view(
            "{mode: recent, scope: {collections: [notes]}, where: {count: {lt: '{{t}}'}}}",
            "{t: {type: datetime, required: true}}",
        ),
        *V,
        f"{Q}.where.count.lt",
        "a number",
        id="where-number-with-datetime-parameter",
    ),
    pytest.param(
        view("{mode: structured, scope: {collections: [notes]}, order_by: [{field: tags}]}"),
        *V,
        f"{Q}.order_by[0].field",
        "sortable",
        id="order-by-not-sortable",
    ),
    pytest.param(
        view("{mode: recent, scope: {collections: [notes]}, fields: [count]}"),
        *V,
        f"{Q}.fields[0]",
        "not returnable in notes v1",
        id="fields-not-returnable",
    ),
    pytest.param(
        view("{mode: recent, scope: {collections: [notes]}, annotations: [sentiment]}"),
        *V,
        f"{Q}.annotations[0]",
        "not required by notes v1",
        id="annotations-not-required",
    ),
    pytest.param(
        view("{mode: recent, scope: {collections: [notes]}, annotations: [mood]}"),
        *V,
        f"{Q}.annotations[0]",
        "unknown enrichment",
        id="annotations-unknown",
    ),
    pytest.param(
        view("{mode: recent, scope: {collections: [notes]}, rank: [boost, [age_hours, created_at]]}"),
        *V,
        f"{Q}.rank[0]",
        "unknown operator",
        id="rank-unknown-operator",
    ),
    pytest.param(
        view("{mode: recent, scope: {collections: [notes]}, rank: [score, importanse]}"),
        *V,
        f"{Q}.rank[1]",
        "score named 'importanse'",
        id="rank-score-typo",
    ),
    pytest.param(
        view(
            "{q: x, sources: [{name: a, mode: recent, scope: {collections: [notes]}}], "
            "fuse: {kind: rrf}, boost: [score, importanse]}"
        ),
        *V,
        f"{Q}.boost[1]",
        "score named 'importanse'",
        id="boost-score-typo",
    ),
    pytest.param(
        view("{mode: text, q: x, scope: {collections: [notes]}, rank: [similarity]}"),
        *V,
        f"{Q}.rank",
        "hybrid or vector",
        id="rank-signal-not-in-mode",
    ),
    pytest.param(
        view("{mode: recent, scope: {collections: [notes]}, graph_boost: {graph: lonely, anchor: a}}"),
        *V,
        f"{Q}.graph_boost.graph",
        "not an active graph view",
        id="graph-boost-not-a-graph",
    ),
    pytest.param(
        {
            **view("{mode: recent, scope: {collections: [notes]}, graph_boost: {anchor: a}}"),
            "views/more.yaml": "views:\n  - {name: walk2, version: 1, active: true, kind: graph, graph: "
            "{edges: links, subject: src, object: dst, predicate: rel}, parameters: {seed: {type: string, "
            "required: true}, predicates: {type: string_array, default: []}, direction: {type: string, "
            "default: out}, depth: {type: integer, default: 1}, limit: {type: integer, default: 20}}}\n",
        },
        *V,
        f"{Q}.graph_boost.graph",
        "walk, walk2",
        id="graph-boost-ambiguous",
    ),
    pytest.param(
        {
            **collection("embedding: wide"),
            **conf(
                "models.yaml",
                "models:\n  wide: {kind: embedding, provider: openai, model: m, base_url_env: U}\n",
            ),
            **view(
                "{q: x, sources: [{name: a, mode: vector, scope: {collections: [notes]}}, "
                "{name: b, mode: vector, scope: {collections: [bad]}}], fuse: {kind: rrf}}"
            ),
        },
        *V,
        f"{Q}.sources",
        "same embedding model",
        id="sources-different-embedding-models",
    ),
    pytest.param(
        {
            "collections/notes2.yaml": "collections:\n  - {name: notes, version: 2, types: [note], "
            "fields: {channel: {type: integer, filterable: true}}}\n",
            **view("{mode: recent, scope: {collections: [notes]}, where: {channel: {eq: x}}}"),
        },
        *V,
        f"{Q}.where.channel",
        "different types",
        id="where-incompatible-versions",
    ),
    pytest.param(
        {
            **conf("search_profiles.yaml", "profiles:\n  tp: {backend: turbopuffer}\n"),
            **collection("search_profile: tp"),
            **view("{mode: recent, scope: {collections: [notes, bad]}}"),
        },
        *V,
        f"{Q}.scope.collections",
        "one search profile",
        id="search-spans-two-profiles",
    ),
    pytest.param(
        {
            **conf("search_profiles.yaml", "profiles:\n  tp: {backend: turbopuffer}\n"),
            **collection("search_profile: tp"),
            **view("{mode: recent, scope: {collections: [bad]}}"),
        },
        *V,
        f"{Q}.mode",
        "cannot run recent",
        id="mode-not-supported-by-profile",
    ),
    pytest.param(
        {
            **conf("search_profiles.yaml", "profiles:\n  tp: {backend: turbopuffer}\n"),
            **collection("search_profile: tp"),
            **view(
                "{q: x, mode: text, scope: {collections: [bad]}}",
                extra="required_capabilities: [text, structured]",
            ),
        },
        *V,
        "views[0].required_capabilities[1]",
        "cannot do structured",
        id="required-capability-unsupported",
    ),
    pytest.param(
        {
            **collection("fields: {}"),
            **view(
                "{mode: recent, scope: {collections: [bad]}}", extra="required_capabilities: [recent, vector]"
            ),
        },
        *V,
        "views[0].required_capabilities[1]",
        "bad v1 declares no embedding",
        id="required-vector-without-embedding",
    ),
    # -- graph views (spec: Graph views, Orphan reports) ------------------------------------------
    pytest.param(
        graph(parameters="{seed: {type: string, required: true}}"),
        *V,
        GP,
        "missing parameter 'depth'",
        id="graph-missing-parameter",
    ),
    pytest.param(
        graph(
            parameters="{seed: {type: string, required: true}, predicates: {type: string_array, "
            "default: []}, direction: {type: string, default: out}, depth: {type: integer, default: "
            "1}, limit: {type: integer, default: 20}, hops: {type: integer, default: 1}}"
        ),
        *V,
        f"{GP}.hops",
        "not part of the graph contract",
        id="graph-extra-parameter",
    ),
    pytest.param(
        graph(
            parameters="{seed: {type: string, required: true}, predicates: {type: string_array, "
            "default: []}, direction: {type: string, default: out}, depth: {type: number, default: "
            "1}, limit: {type: integer, default: 20}}"
        ),
        *V,
        f"{GP}.depth.type",
        "must be integer",
        id="graph-wrong-type",
    ),
    pytest.param(
        graph(
            parameters="{seed: {type: string}, predicates: {type: string_array, default: []}, "
            "direction: {type: string, default: out}, depth: {type: integer, default: 1}, "
            "limit: {type: integer, default: 20}}"
        ),
        *V,
        f"{GP}.seed.required",
        "must be true",
        id="graph-seed-optional",
    ),
    pytest.param(
        graph(
            parameters="{seed: {type: string, required: true}, predicates: {type: string_array, "
            "default: []}, direction: {type: string, default: out}, depth: {type: integer, default: "
            "2}, limit: {type: integer, default: 20}}"
        ),
        *V,
        f"{GP}.depth.default",
        "must be 1",
        id="graph-wrong-default",
    ),
    pytest.param(
        graph(
            parameters="{seed: {type: string, required: true}, predicates: {type: string_array, "
            "default: []}, direction: {type: string, default: out}, depth: {type: integer, default: "
            "1, maximum: 20}, limit: {type: integer, default: 20}}"
        ),
        *V,
        f"{GP}.depth.maximum",
        "beyond 16",
        id="graph-looser-bound",
    ),
    pytest.param(
        graph(
            parameters="{seed: {type: string, required: true}, predicates: {type: string_array, "
            "default: []}, direction: {type: string, default: out, enum: [out, sideways]}, depth: "
            "{type: integer, default: 1}, limit: {type: integer, default: 20}}"
        ),
        *V,
        f"{GP}.direction.enum",
        "may only narrow",
        id="graph-direction-enum-widened",
    ),
    pytest.param(
        graph(
            kind="graph_orphans",
            parameters="{limit: {type: integer, default: 20}}",
            block="{edges: links, subject: src, object: dst, predicate: rel, nodes: things}",
        ),
        *V,
        f"{GP}.limit.default",
        "must be 50",
        id="orphans-wrong-default",
    ),
    pytest.param(
        graph(block="{edges: nope, subject: src, object: dst, predicate: rel}"),
        *V,
        "views[0].graph.edges",
        "unknown collection 'nope'",
        id="graph-unknown-edges",
    ),
    pytest.param(
        graph(block="{edges: links, subject: weight, object: dst, predicate: rel}"),
        *V,
        "views[0].graph.subject",
        "not a declared string field",
        id="graph-subject-not-string",
    ),
    pytest.param(
        graph(block="{edges: links, subject: src, object: to, predicate: rel}"),
        *V,
        "views[0].graph.object",
        "not a declared string field",
        id="graph-object-undeclared",
    ),
    pytest.param(
        graph(kind="graph_orphans", block="{edges: links, subject: src, object: dst, predicate: rel}"),
        *V,
        "views[0].graph",
        "graph.nodes is required",
        id="orphans-without-nodes",
    ),
    pytest.param(
        graph(block="{edges: links, subject: src, object: dst, predicate: rel, nodes: things}"),
        *V,
        "views[0].graph",
        "not allowed for graph",
        id="graph-with-nodes",
    ),
    pytest.param(
        graph(
            kind="graph_orphans",
            block="{edges: links, subject: src, object: dst, predicate: rel, nodes: links}",
        ),
        *V,
        "views[0].graph.nodes",
        "keyed: false",
        id="orphans-nodes-not-keyed",
    ),
    pytest.param(
        graph(
            kind="graph_orphans",
            block="{edges: links, subject: src, object: dst, predicate: rel, nodes: ghosts}",
        ),
        *V,
        "views[0].graph.nodes",
        "unknown collection",
        id="orphans-unknown-nodes",
    ),
    pytest.param(
        {
            "views/bad.yaml": "views:\n  - {name: bad, version: 1, kind: graph, query: {mode: recent}, "
            "graph: {edges: links, subject: src, object: dst, predicate: rel}}\n"
        },
        *V,
        "views[0].query",
        "takes no query",
        id="graph-with-query",
    ),
    pytest.param(
        {
            "views/bad.yaml": "views:\n  - {name: bad, version: 1, kind: graph_orphans, "
            "required_capabilities: [recent], graph: {edges: links, subject: src, object: dst, "
            "predicate: rel, nodes: things}, parameters: {limit: {type: integer, default: 50}}}\n"
        },
        *V,
        "views[0].required_capabilities",
        "only search views",
        id="graph-with-capabilities",
    ),
    # -- collections (design §1) ------------------------------------------------------------------
    pytest.param(
        collection("search_profile: fast"),
        *C,
        "collections[0].search_profile",
        "unknown search profile 'fast'",
        id="collection-unknown-profile",
    ),
    pytest.param(
        collection("allowed_search_profiles: [pg_default, fast]"),
        *C,
        "collections[0].allowed_search_profiles[1]",
        "unknown search profile",
        id="collection-unknown-allowed",
    ),
    pytest.param(
        {
            **conf("search_profiles.yaml", "profiles:\n  tp: {backend: turbopuffer}\n"),
            **collection("allowed_search_profiles: [tp]"),
        },
        *C,
        "collections[0].search_profile",
        "one of allowed_search_profiles",
        id="collection-profile-not-allowed",
    ),
    pytest.param(
        collection("embedding: mini"),
        *C,
        "collections[0].embedding",
        "unknown model alias 'mini'",
        id="collection-unknown-embedding",
    ),
    pytest.param(
        collection("embedding: cheap"),
        *C,
        "collections[0].embedding",
        "not an embedding model",
        id="collection-embedding-is-chat",
    ),
    pytest.param(
        {
            **collection("embedding: wide"),
            **conf(
                "models.yaml",
                "models:\n  wide: {kind: embedding, "
                "provider: openai, model: m, base_url_env: U, dimensions: 1536}\n",
            ),
        },
        *C,
        "collections[0].embedding",
        f"stored vectors have {EMBEDDING_DIM}",
        id="collection-embedding-dims",
    ),
    pytest.param(
        collection("enrichments: [region, mood]"),
        *C,
        "collections[0].enrichments[1]",
        "unknown enrichment 'mood'",
        id="collection-unknown-enrichment",
    ),
    pytest.param(
        collection("links: [{field: uses, predicate: uses, edges: links}]"),
        *C,
        "collections[0].links[0].field",
        "declared string or string_array",
        id="link-field-undeclared",
    ),
    pytest.param(
        collection("fields: {n: {type: number}}, links: [{field: n, predicate: p, edges: links}]"),
        *C,
        "collections[0].links[0].field",
        "declared string or string_array",
        id="link-field-not-string",
    ),
    pytest.param(
        collection("fields: {u: {type: string}}, links: [{field: u, predicate: p, edges: wires}]"),
        *C,
        "collections[0].links[0].edges",
        "unknown edges collection",
        id="link-unknown-edges",
    ),
    pytest.param(
        collection("fields: {x: {type: text}}"),
        *C,
        "collections[0].fields.x.type",
        "Input should be",
        id="collection-unknown-field-type",
    ),
    pytest.param(
        collection("shards: 3"), *C, "collections[0].shards", "Extra inputs", id="collection-unknown-key"
    ),
    # -- identities ---------------------------------------------------------------------------------
    pytest.param(
        {"collections/zmore.yaml": "collections:\n  - {name: notes, version: 1, types: [x]}\n"},
        "collections/zmore.yaml",
        "collection notes v1",
        "collections[0].name",
        "already defined in collections/notes.yaml at collections[0]",
        id="duplicate-version",
    ),
    pytest.param(
        {"views/more.yaml": "views:\n  - {name: ask, version: 2, active: true, query: {mode: recent}}\n"},
        "views/more.yaml",
        "view ask v2",
        "views[0].active",
        "at most one active version",
        id="two-active-versions",
    ),
    pytest.param(
        {"packages/zagain.yaml": "package: {name: app, version: 2, views: {ask: 1}}\n"},
        "packages/zagain.yaml",
        "package app v2",
        "package.name",
        "duplicate package",
        id="duplicate-package",
    ),
    # -- packages (design: Packages and MCP) --------------------------------------------------------
    pytest.param(
        {"packages/app.yaml": "package: {name: app, views: {ask: 3}}\n"},
        "packages/app.yaml",
        "package app v1",
        "package.views.ask",
        "no version 3",
        id="package-unknown-view-version",
    ),
    pytest.param(
        {"packages/app.yaml": "package: {name: app, views: {ask: 1}, mcp: {tools: [walk]}}\n"},
        "packages/app.yaml",
        "package app v1",
        "package.mcp.tools[0]",
        "not one of the package's views",
        id="package-tool-not-in-views",
    ),
    pytest.param(
        {"packages/app.yaml": "package: {name: app, views: {}}\n"},
        "packages/app.yaml",
        "package app v1",
        "package.views",
        "at least 1",
        id="package-without-views",
    ),
    # -- conf files -------------------------------------------------------------------------------
    pytest.param(
        conf("search_profiles.yaml", "profiles:\n  x: {backend: elastic}\n"),
        "conf/search_profiles.yaml",
        "search_profile x v1",
        "profiles.x",
        "backend must be one of",
        id="profile-unknown-backend",
    ),
    pytest.param(
        conf("search_profiles.yaml", "profiles:\n  x: {backend: pg, layout: shared}\n"),
        "conf/search_profiles.yaml",
        "search_profile x v1",
        "profiles.x.layout",
        "Extra inputs",
        id="profile-pg-with-options",
    ),
    pytest.param(
        conf("search_profiles.yaml", "profiles:\n  x: {backend: turbopuffer, consistency: weak}\n"),
        "conf/search_profiles.yaml",
        "search_profile x v1",
        "profiles.x.consistency",
        "Input should be",
        id="profile-turbopuffer-bad-option",
    ),
    pytest.param(
        conf("models.yaml", "models:\n  x: {kind: embedding, provider: openai, model: m}\n"),
        "conf/models.yaml",
        "model x v1",
        "models.x",
        "base_url_env",
        id="model-invalid",
    ),
    pytest.param(
        conf(
            "enrichments.yaml", "enrichments:\n  x: {kind: llm_score, instructions: rate, range: [10, 1]}\n"
        ),
        "conf/enrichments.yaml",
        "enrichment x v1",
        "enrichments.x.range",
        "lowest value must be below",
        id="enrichment-range-reversed",
    ),
    pytest.param(
        conf("enrichments.yaml", "enrichments:\n  x: {kind: llm_label, labels: [a, a]}\n"),
        "conf/enrichments.yaml",
        "enrichment x v1",
        "enrichments.x.labels",
        "unique",
        id="enrichment-labels-repeated",
    ),
    pytest.param(
        conf("enrichments.yaml", "enrichments:\n  x: {kind: llm_label, labels: [a], model: default}\n"),
        "conf/enrichments.yaml",
        "enrichment x v1",
        "enrichments.x.model",
        "not a chat model",
        id="enrichment-model-not-chat",
    ),
    pytest.param(
        conf("enrichments.yaml", "enrichments:\n  x: {kind: vibes}\n"),
        "conf/enrichments.yaml",
        "enrichment x v1",
        "enrichments.x",
        "kind must be one of",
        id="enrichment-unknown-kind",
    ),
    pytest.param(
        conf("settings.yaml", "a: 1\n"),
        "conf/settings.yaml",
        "",
        "",
        "unknown conf file",
        id="conf-unknown-file",
    ),
    pytest.param(
        conf("rank_default.yaml", "candidates: 200\nvariants: {text: [similarity]}\n"),
        "conf/rank_default.yaml",
        "rank_default rank_default v1",
        "variants.text",
        "similarity",
        id="rank-default-wrong-signal-for-mode",
    ),
    pytest.param(
        conf(
            "rank_default.yaml",
            "candidates: 200\nvariants: {text: [score, imp], vector: "
            "[similarity], hybrid: [similarity], recent: [const, 1]}\n",
        ),
        "conf/rank_default.yaml",
        "rank_default rank_default v1",
        "variants.text[1]",
        "score named 'imp'",
        id="rank-default-unknown-score",
    ),
    pytest.param(
        conf("rank_default.yaml", "version: 2\ncandidates: 200\nvariants: {}\n"),
        "conf/rank_default.yaml",
        "rank_default rank_default v1",
        "version",
        "Extra inputs",
        id="rank-default-unknown-key",
    ),
    # -- files --------------------------------------------------------------------------------------
    pytest.param(
        {"views/bad.yaml": "views: [\n"}, "views/bad.yaml", "", "", "cannot be read as YAML", id="yaml-syntax"
    ),
    pytest.param(
        {"views/bad.yaml": "views:\n  - name: bad\n    name: worse\n"},
        "views/bad.yaml",
        "",
        "",
        "repeated key 'name'",
        id="yaml-repeated-key",
    ),
    pytest.param(
        {"views/bad.yaml": "view:\n  - {name: bad}\n"},
        "views/bad.yaml",
        "",
        "",
        "exactly one top-level key: views",
        id="file-wrong-top-key",
    ),
    pytest.param(
        {"views/bad.yaml": "views: {name: bad}\n"},
        "views/bad.yaml",
        "",
        "views",
        "must be a list",
        id="file-not-a-list",
    ),
    pytest.param(
        {"views/bad.yml": "views: []\n"}, "views/bad.yml", "", "", "must end in .yaml", id="file-yml"
    ),
]


@pytest.mark.parametrize(("files", "file", "definition", "path", "fragment"), CASES)
def test_broken_catalog(
    tmp_path: Path, files: dict[str, str], file: str, definition: str, path: str, fragment: str
) -> None:
    problems = problems_of(build_catalog(tmp_path, files))
    matches = [p for p in problems if (p.file, p.definition, format_loc(p.loc)) == (file, definition, path)]
    assert matches, "\n".join(map(str, problems))
    assert any(fragment in p.msg for p in matches), "\n".join(map(str, matches))


def test_every_problem_is_reported_at_once(tmp_path: Path) -> None:
    root = build_catalog(
        tmp_path,
        {
            **collection("search_profile: fast"),
            **param("{type: string, minimum: 1}"),
            "views/other.yaml": "views:\n  - {name: other, version: 1, query: {mode: recent, k: 500}}\n",
            "packages/app.yaml": "package: {name: app, views: {ask: 9}}\n",
        },
    )
    with pytest.raises(CatalogError) as caught:
        load_catalog(root, view_checks=VIEW_CHECKS)
    lines = str(caught.value).splitlines()
    assert "(4 problems)" in lines[0]
    expected = [
        "collections/bad.yaml: collection bad v1: collections[0].search_profile: unknown search profile 'fast'",
        "packages/app.yaml: package app v1: package.views.ask: view 'ask' has no version 9",
        "views/bad.yaml: view bad v1: views[0].parameters.p.minimum: "
        "minimum applies only to number and integer parameters",
        "views/other.yaml: view other v1: views[0].query.k: Input should be less than or equal to 100",
    ]
    assert [line.strip() for line in lines[1:]] == expected


def test_every_stage_of_a_view_reports_its_problems_at_once(tmp_path: Path) -> None:
    """Design §2, "all errors at once": a view's undeclared placeholder, a malformed `k`, an
    unknown collection and an undeclared field are all reported, and so is what a broken
    parameter constraint would otherwise hide."""
    root = build_catalog(
        tmp_path,
        {
            "views/bad.yaml": """
            views:
              - name: bad
                version: 1
                parameters: {who: {type: string, required: true}}
                query:
                  mode: recent
                  k: 0
                  scope: {collections: [notes, nope], entities: ["{{who}}", "{{missing}}"]}
                  where: {zzz: {eq: 1}}
              - name: worse
                version: 1
                parameters: {x: {type: string, minimum: 3}}
                query: {mode: vector, q: "{{x}}", scope: {collections: [gone]}}
            """
        },
    )
    found = {(p.definition, format_loc(p.loc), p.msg) for p in problems_of(root)}
    q = "views[0].query"
    assert found == {
        ("view bad v1", f"{q}.scope.entities[1]", "{{missing}} names no declared parameter"),
        ("view bad v1", f"{q}.k", "Input should be greater than or equal to 1"),
        (
            "view bad v1",
            f"{q}.scope.collections[1]",
            "unknown collection 'nope'; did you mean 'notes'? the collections are: links, notes, plain, things",
        ),
        (
            "view bad v1",
            f"{q}.where.zzz",
            "field 'zzz': collection notes v1 does not declare it; its filterable fields: channel, count, tags, when",
        ),
        (
            "view worse v1",
            "views[1].parameters.x.minimum",
            "minimum applies only to number and integer parameters",
        ),
        (
            "view worse v1",
            "views[1].query.scope.collections[0]",
            "unknown collection 'gone'; the collections are: links, notes, plain, things",
        ),
    }


def test_a_view_without_its_only_collection_is_not_checked_further(tmp_path: Path) -> None:
    """Removing the one unknown collection would leave a scope of every collection: the checks
    stop there instead of reporting fields against collections the author never named."""
    root = build_catalog(
        tmp_path, view("{mode: recent, scope: {collections: [nope]}, where: {zzz: {eq: 1}}}")
    )
    found = [(format_loc(p.loc), p.msg) for p in problems_of(root)]
    assert found == [
        (
            "views[0].query.scope.collections[0]",
            "unknown collection 'nope'; did you mean 'notes'? the collections are: links, notes, plain, things",
        )
    ]


@pytest.mark.parametrize(
    ("data", "locs", "expected"),
    [
        ({"a": 1, "b": 2}, [("a",)], {"b": 2}),
        ({"l": [1, 2, 3, 4]}, [("l", 0), ("l", 2)], {"l": [2, 4]}),
        ({"a": {"b": 1, "c": 2}, "d": 3}, [("a", "b"), ("d",)], {"a": {"c": 2}}),
        ({"a": 1}, [], {"a": 1}),
        ({"a": 1}, [("z",)], None),
        ({"l": [1]}, [("l", 5)], None),
        ({"a": 1}, [("a", "deeper")], None),
        ({"l": [1], "b": 2}, [("l", 0)], None),
        ({"a": 1}, [()], None),
    ],
    ids=[
        "a-key",
        "list-items-by-their-original-index",
        "nested-and-top",
        "nothing",
        "missing-key",
        "missing-index",
        "through-a-scalar",
        "emptying-a-list",
        "the-whole",
    ],
)
def test_pruned(data: Any, locs: list[tuple[Any, ...]], expected: Any) -> None:
    before = copy.deepcopy(data)
    assert pruned(data, locs) == expected
    assert data == before  # a copy is pruned, never the input


@pytest.mark.parametrize(
    ("loc", "reported", "expected"),
    [
        (("q", "k"), [("q", "k")], True),
        (("q", "scope"), [("q", "scope", "collections", 0)], True),
        (("q", "scope", "collections", 0), [("q", "scope")], True),
        (("q", "where"), [("q", "k")], False),
        (("q", "k"), [], False),
    ],
    ids=["same", "contains-one", "inside-one", "elsewhere", "none-reported"],
)
def test_overlaps(loc: tuple[Any, ...], reported: list[tuple[Any, ...]], expected: bool) -> None:
    assert overlaps(loc, reported) is expected


def test_unknown_package_is_an_error() -> None:
    (problem,) = problems_of(MINIMAL_CATALOG, package="nope")
    assert str(problem) == "MEMSEEK_PACKAGE: no package named 'nope'; loaded packages: app"


def test_a_view_outside_the_package_may_name_a_graph_view_the_package_does_not_pin(tmp_path: Path) -> None:
    """Design, "Packages and MCP": the package's pinned versions become the active ones. A view it
    does not expose cannot be called, so the graph view it names need not be pinned; a pinned view
    naming an unpinned graph view still stops the load."""
    boosted = "{mode: recent, scope: {collections: [notes]}, graph_boost: {graph: walk, anchor: a}}"
    files = {"packages/app.yaml": "package: {name: app, views: {ask: 1}}\n", **view(boosted)}
    root = build_catalog(tmp_path, files)
    assert load_catalog(root, package="app", view_checks=VIEW_CHECKS).package is not None
    files["packages/app.yaml"] = "package: {name: app, views: {ask: 1, bad: 1}}\n"
    (problem,) = problems_of(build_catalog(tmp_path / "pinned", files), package="app")
    assert (format_loc(problem.loc), "not an active graph view" in problem.msg) == (
        f"{Q}.graph_boost.graph",
        True,
    )


def test_missing_directory(tmp_path: Path) -> None:
    (problem,) = problems_of(tmp_path / "absent")
    assert problem.msg == "not a catalog directory"


@pytest.fixture(scope="module")
def reference() -> Catalog:
    return load_catalog(reference_catalog(), view_checks=VIEW_CHECKS)


def test_reference_catalog_holds_the_spec_examples(reference: Catalog) -> None:
    names = {view.name: view.kind for view in reference.all_views()}
    assert names == {
        "customer_context": "search",
        "upcoming_calendar": "search",
        "customer_context_fused": "search",
        "recent_activity": "search",
        "graph_query": "graph",
        "orphan_pages": "graph_orphans",
        "recall": "search",  # what the reference write contracts store, read back
        "proposed_facts": "search",
    }
    assert reference.footprint(reference.view("customer_context")).collections == ("customer_events",)
    assert reference.footprint(reference.view("customer_context_fused")).collections == (
        "customer_events",
        "reflections",
    )
    assert reference.footprint(reference.view("orphan_pages")).collections == ("components", "dependencies")
    assert {p for v in reference.all_views() for p in reference.footprint(v).profiles} == {"pg_default"}
    assert reference.hash.startswith("sha256:") and len(reference.hash) == len("sha256:") + 64


def test_reference_package_is_the_designs_example() -> None:
    """design "Packages and MCP": support_agent pins upcoming_calendar 2; only customer_context is a tool."""
    plain, packaged = (
        load_catalog(reference_catalog(), view_checks=VIEW_CHECKS),
        load_catalog(reference_catalog(), package="support_agent", view_checks=VIEW_CHECKS),
    )
    assert plain.view("upcoming_calendar").version == 1
    assert packaged.view("upcoming_calendar").version == 2
    assert packaged.view("customer_context").version == 1
    assert [v.name for v in packaged.tools()] == ["customer_context"]
    assert "upcoming_calendar" in [v.name for v in plain.tools()]


def test_reference_collections_work_offline(reference: Catalog) -> None:
    """No reference collection requires an enrichment the (remote) cheap model would compute."""
    required = {e for versions in reference.collections.values() for c in versions for e in c.enrichments}
    assert not required
    embeddings = {c.name: c.embedding for versions in reference.collections.values() for c in versions}
    assert embeddings.pop("dependencies") is None  # links need no processing: live straight away
    assert set(embeddings.values()) == {"default"}


def test_reference_rank_default_adds_importance(reference: Catalog) -> None:
    """Spec: the reference catalog adds N(importance) as a third term and changes nothing else."""
    from memseek.catalog.rank import SHIPPED_RANK_DEFAULT
    from memseek.catalog.rank import load_rank_default
    from memseek.catalog.rank import to_tree

    shipped = load_rank_default(SHIPPED_RANK_DEFAULT)
    term = ["product", 1.0, ["normalize", ["score", "importance"]]]
    for mode in ("text", "vector", "hybrid"):
        operator, terms = to_tree(shipped.variants[mode])  # type: ignore[index]
        assert to_tree(reference.default_rank(mode)) == [operator, [*terms, term]], mode
    assert to_tree(reference.default_rank("recent")) == [
        "decay",
        ["age_hours", "occurred_at"],
        {"midpoint": 24.0, "exponent": 1.0},
    ]


def test_graph_views_carry_the_effective_contract(reference: Catalog) -> None:
    walk = reference.view("graph_query").parameters
    assert (walk["depth"].minimum, walk["depth"].maximum, walk["depth"].default) == (1, 16, 1)
    assert (walk["limit"].minimum, walk["limit"].maximum) == (1, 500)
    assert walk["direction"].enum == ("out", "in", "both")
    assert (walk["seed"].min_length, walk["seed"].max_length, walk["seed"].required) == (1, 128, True)
    assert reference.view("orphan_pages").parameters["limit"].maximum == 500


def test_tighter_graph_constraints_are_kept(tmp_path: Path) -> None:
    root = build_catalog(
        tmp_path,
        graph(
            parameters=(
                "{seed: {type: string, required: true, description: Where to start.}, predicates: {type: string_array, "
                "default: [], item_enum: [uses, owns]}, direction: {type: string, default: out, enum: [out, in]}, "
                "depth: {type: integer, default: 1, maximum: 3}, limit: {type: integer, default: 20, maximum: 50}}"
            )
        ),
    )
    contract = load_catalog(root, view_checks=VIEW_CHECKS).view("bad", 1).parameters
    assert contract["direction"].enum == ("out", "in")
    assert (contract["depth"].minimum, contract["depth"].maximum) == (1, 3)
    assert contract["predicates"].item_enum == ("uses", "owns")
    assert contract["seed"].description == "Where to start."


def test_conf_merges_over_shipped_and_rank_default_replaces(tmp_path: Path) -> None:
    root = build_catalog(
        tmp_path,
        {
            **conf(
                "models.yaml",
                "models:\n  remote: {kind: embedding, provider: openai, model: other, "
                "base_url_env: MY_URL}\n  extra: {kind: chat, provider: openai, model: x, base_url_env: U}\n",
            ),
            **conf(
                "rank_default.yaml",
                "candidates: 50\nvariants: {text: [text_match], vector: [similarity], "
                "hybrid: [similarity], recent: [age_hours, created_at]}\n",
            ),
        },
    )
    catalog = load_catalog(root, view_checks=VIEW_CHECKS)
    assert set(catalog.models) == {"default", "remote", "cheap", "extra"}
    assert catalog.models["remote"].model == "other"
    assert catalog.models["default"].provider == "local"
    assert catalog.rank_default is not None and catalog.rank_default.candidates == 50
    files = {d.name: d.file for d in catalog.definitions if d.kind == "model"}
    assert files == {
        "default": "(shipped) conf/models.yaml",
        "cheap": "(shipped) conf/models.yaml",
        "remote": "conf/models.yaml",
        "extra": "conf/models.yaml",
    }


def test_rank_default_replaces_only_the_modes_it_defines(tmp_path: Path) -> None:
    spec_snippet = (
        "candidates: 200\nvariants:\n  text:\n    - sum\n"
        "    - - [product, 1.0, [normalize, [text_match]]]\n"
        "      - [product, 1.0, [decay, [age_hours, occurred_at], {midpoint: 24, exponent: 1}]]\n"
    )
    own = load_catalog(
        build_catalog(tmp_path, conf("rank_default.yaml", spec_snippet)), view_checks=VIEW_CHECKS
    )
    shipped = load_catalog(build_catalog(tmp_path / "plain", {}), view_checks=VIEW_CHECKS)
    assert own.rank_default is not None and shipped.rank_default is not None
    assert to_tree(own.default_rank("text"))[1][1][2][1] == ["age_hours", "occurred_at"]
    for mode in ("vector", "hybrid", "recent"):
        assert own.default_rank(mode) == shipped.default_rank(mode)


def _hashes(root: Path) -> tuple[str, dict[tuple[str, str, int], str]]:
    catalog = load_catalog(root, view_checks=VIEW_CHECKS)
    return catalog.hash, {(d.kind, d.name, d.version): d.hash for d in catalog.definitions}


def test_hashes_ignore_formatting_but_not_content(tmp_path: Path) -> None:
    views = (MINIMAL_CATALOG / "views" / "views.yaml").read_text()
    base_hash, base = _hashes(build_catalog(tmp_path / "a", {}))
    reformatted = views.replace(
        '      q: "{{task}}"\n      mode: hybrid\n',
        '      mode: hybrid   # reordered, commented\n      q: "{{task}}"\n',
    )
    assert reformatted != views
    assert _hashes(build_catalog(tmp_path / "b", {"views/views.yaml": reformatted})) == (base_hash, base)
    changed = views.replace("mode: hybrid", "mode: text")
    _, after = _hashes(build_catalog(tmp_path / "c", {"views/views.yaml": changed}))
    assert after[("view", "ask", 1)] != base[("view", "ask", 1)]
    assert {k: v for k, v in after.items() if k != ("view", "ask", 1)} == {
        k: v for k, v in base.items() if k != ("view", "ask", 1)
    }


def test_switching_active_keeps_definition_hashes(tmp_path: Path) -> None:
    views = (MINIMAL_CATALOG / "views" / "views.yaml").read_text()
    base_hash, base = _hashes(build_catalog(tmp_path / "a", {}))
    inactive = views.replace(
        "  - name: ask\n    version: 1\n    active: true\n", "  - name: ask\n    version: 1\n"
    )
    catalog_hash, after = _hashes(build_catalog(tmp_path / "b", {"views/views.yaml": inactive}))
    assert after == base and catalog_hash != base_hash


def test_package_pins_decide_active_versions(tmp_path: Path) -> None:
    root = build_catalog(
        tmp_path,
        {
            "views/ask2.yaml": "views:\n  - {name: ask, version: 2, description: Recent., query: {mode: recent}}\n",
            "packages/app.yaml": "package: {name: app, views: {ask: 2, walk: 1}, mcp: {tools: [ask]}}\n",
        },
    )
    plain, packaged = (
        load_catalog(root, view_checks=VIEW_CHECKS),
        load_catalog(root, package="app", view_checks=VIEW_CHECKS),
    )
    assert plain.view("ask").version == 1 and packaged.view("ask").version == 2
    assert [v.name for v in plain.tools()] == ["ask", "lonely", "walk"]
    assert [(v.name, v.version) for v in packaged.tools()] == [("ask", 2)]
    assert [v.name for v in packaged.active_views()] == ["ask", "walk"]
    assert plain.hash != packaged.hash


def test_timestamps_stay_strings(tmp_path: Path) -> None:
    root = build_catalog(
        tmp_path, view("{mode: recent, scope: {collections: [notes], occurred_after: 2026-01-01T00:00:00Z}}")
    )
    query: dict[str, Any] = load_catalog(root, view_checks=VIEW_CHECKS).view("bad", 1).query or {}
    assert query["scope"]["occurred_after"] == "2026-01-01T00:00:00Z"


def test_datetime_samples_make_a_valid_range(tmp_path: Path) -> None:
    """Two datetime parameters used as a strict range get increasing sample values, so the view loads."""
    root = build_catalog(
        tmp_path,
        view(
            "{mode: recent, scope: {collections: [notes], occurred_after: '{{since}}', "
            "occurred_before: '{{until}}'}}",
            "{since: {type: datetime, required: true}, until: {type: datetime, required: true}}",
        ),
    )
    assert load_catalog(root, view_checks=VIEW_CHECKS).view("bad", 1).kind == "search"
