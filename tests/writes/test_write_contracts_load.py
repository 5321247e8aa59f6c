"""Write contracts at load: one broken contract per rule, each problem at its file, definition and
YAML path, every problem at once; hashes, activity and packages. No database.

Each case copies `tests/fixtures/catalogs/minimal` (valid), adds the `mem` collection and one
write contract (`BASE`, valid, changed by the case), and expects one problem.
"""

# ruff: noqa: E501  (one rule per table row reads better than rows wrapped over five lines)
from __future__ import annotations

import copy
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from memseek.catalog.catalog import Catalog
from memseek.catalog.load import load_catalog
from memseek.catalog.problems import format_loc
from memseek.paths import reference_catalog
from memseek.search.view_checks import VIEW_CHECKS
from tests.helpers import build_catalog
from tests.helpers import problems_of

MEM = """
collections:
  - name: mem
    version: 1
    active: true
    types: [note, fact, event]
    fields:
      source: {type: string}
      tags: {type: string_array}
      when: {type: datetime, path: meta.when, fallback_paths: [when_old]}
      count: {type: integer}
      weight: {type: number}
      flag: {type: boolean}
    scores:
      importance: {display: true}
  - name: mem
    version: 2
    types: [note]
  - name: dormant
    version: 1
    types: [note]
"""

BASE: dict[str, Any] = {
    "name": "note",
    "version": 1,
    "active": True,
    "description": "Remember a note.",
    "collection": "mem",
    "type": "{{kind}}",
    "parameters": {
        "entity": {"type": "string", "required": True},
        "text": {"type": "string", "required": True},
        "kind": {"type": "string", "enum": ["note", "event"], "default": "note"},
        "tags": {"type": "string_array"},
        "at": {"type": "datetime"},
        "n": {"type": "integer"},
        "weight": {"type": "integer"},
    },
    "record": {
        "entity": "{{entity}}",
        "text": "{{text}} ({{kind}})",
        "occurred_at": "{{at}}",
        "content": {
            "source": "agent",
            "tags": "{{tags}}",
            "meta": {"when": "{{at}}"},
            "count": "{{n}}",
            "weight": "{{weight}}",  # an integer parameter fills a number field
            "free": {"anything": ["{{text}}", 1, True]},  # undeclared content is free-form
        },
        "scores": {"importance": "{{n}}"},
    },
}

Change = Callable[[dict[str, Any]], None]


def files(*contracts: dict[str, Any], extra: dict[str, str] | None = None) -> dict[str, str]:
    return {
        "collections/mem.yaml": MEM,
        "writes/mem.yaml": yaml.safe_dump({"writes": list(contracts)}, sort_keys=False),
        **(extra or {}),
    }


def changed(change: Change) -> dict[str, Any]:
    contract = copy.deepcopy(BASE)
    change(contract)
    return contract


def load(root: Path, package: str | None = None) -> Catalog:
    return load_catalog(root, package=package, view_checks=VIEW_CHECKS)


def put(path: str, value: Any) -> Change:
    """Set the value at a dotted path of the contract (`record.content.count`)."""

    def change(contract: dict[str, Any]) -> None:
        *parents, last = path.split(".")
        node = contract
        for part in parents:
            node = node.setdefault(part, {})
        node[last] = value

    return change


def drop(path: str) -> Change:
    def change(contract: dict[str, Any]) -> None:
        *parents, last = path.split(".")
        node = contract
        for part in parents:
            node = node[part]
        del node[last]

    return change


def both(*changes: Change) -> Change:
    def change(contract: dict[str, Any]) -> None:
        for one in changes:
            one(contract)

    return change


CASES = [
    # -- shape: strict models, the same parameter language as views ----------------------------------
    pytest.param(
        put("colection", "mem"), "writes[0].colection", "Extra inputs are not permitted", id="unknown-key"
    ),
    pytest.param(
        put("record.key", "x"),
        "writes[0].record.key",
        "Extra inputs are not permitted",
        id="key-inside-record",
    ),
    pytest.param(drop("description"), "writes[0].description", "Field required", id="description-missing"),
    pytest.param(
        put("description", "  "), "writes[0].description", "must not be blank", id="description-blank"
    ),
    pytest.param(drop("record.text"), "writes[0].record.text", "Field required", id="text-missing"),
    pytest.param(put("status", "live"), "writes[0].status", "'active' or 'draft'", id="status-unknown"),
    pytest.param(
        put("record.content", ["x"]),
        "writes[0].record.content",
        "valid dictionary",
        id="content-not-a-mapping",
    ),
    pytest.param(
        put("parameters.n", {"type": "integer", "minimum": 5, "maximum": 1}),
        "writes[0].parameters.n.maximum",
        "minimum (5) may not exceed maximum (1)",
        id="parameter-constraint",
    ),
    pytest.param(
        put("parameters.text.minimum", 1),
        "writes[0].parameters.text.minimum",
        "applies only to number and integer",
        id="constraint-for-another-type",
    ),
    # -- placeholders ----------------------------------------------------------------------------
    pytest.param(
        put("record.text", "{{nope}}"),
        "writes[0].record.text",
        "{{nope}} names no declared parameter",
        id="undeclared-placeholder",
    ),
    pytest.param(
        put("record.content.{{text}}", 1),
        "writes[0].record.content.{{text}}",
        "not allowed in keys",
        id="placeholder-in-a-key",
    ),
    pytest.param(
        put("record.entity", "{{entity"),
        "writes[0].record.entity",
        "malformed placeholder",
        id="malformed-placeholder",
    ),
    pytest.param(
        put("parameters.extra", {"type": "string"}),
        "writes[0].parameters.extra",
        "used nowhere",
        id="unused-parameter",
    ),
    pytest.param(put("name", "ask"), "writes[0].name", "share one namespace", id="name-of-a-view"),
    # -- the collection --------------------------------------------------------------------------
    pytest.param(
        put("collection", "nothing"),
        "writes[0].collection",
        "unknown collection 'nothing'",
        id="unknown-collection",
    ),
    pytest.param(
        put("collection_version", 9),
        "writes[0].collection_version",
        "has no version 9",
        id="unknown-collection-version",
    ),
    pytest.param(
        both(put("collection", "dormant"), put("type", "note")),
        "writes[0].collection",
        "no active version to write into",
        id="no-active-collection",
    ),
    pytest.param(
        both(put("collection", "notes"), put("type", "note")),
        "writes[0].collection",
        "client enrichment 'region'",
        id="client-enrichment",
    ),
    # -- the type --------------------------------------------------------------------------------
    pytest.param(
        put("type", "reflection"),
        "writes[0].type",
        "must be a type of collection mem v1 (note, fact, event)",
        id="undeclared-type",
    ),
    pytest.param(
        both(put("collection_version", 2), put("parameters.kind.enum", ["note", "fact"])),
        "writes[0].parameters.kind.enum[1]",
        "'fact' is not a type of collection mem v2",
        id="type-enum-against-the-pinned-version",
    ),
    pytest.param(
        put("parameters.kind", {"type": "string", "default": "note"}),
        "writes[0].type",
        "string parameter with an enum",
        id="type-parameter-without-enum",
    ),
    pytest.param(put("type", "x{{kind}}"), "writes[0].type", "must be a type of", id="type-interpolated"),
    pytest.param(
        put("parameters.kind", {"type": "string", "enum": ["note"]}),
        "writes[0].type",
        "{{kind}} must always have a value",
        id="type-parameter-optional",
    ),
    # -- the key ---------------------------------------------------------------------------------
    pytest.param(
        both(
            put("collection", "things"),
            put("type", "thing"),
            put("parameters.kind.enum", ["thing"]),
            put("parameters.kind.default", "thing"),
            put("record.content", {}),
            put("record.scores", {}),
            put("parameters", {"entity": BASE["parameters"]["entity"], "text": BASE["parameters"]["text"]}),
            put("record.text", "{{text}}"),
            drop("record.occurred_at"),
        ),
        "writes[0].key",
        "keyed: true",
        id="keyed-collection-without-key",
    ),
    pytest.param(
        both(
            put("collection", "links"),
            put("type", "link"),
            put("key", "k"),
            put("parameters", {"entity": BASE["parameters"]["entity"], "text": BASE["parameters"]["text"]}),
            put("record", {"entity": "{{entity}}", "text": "{{text}}"}),
        ),
        "writes[0].key",
        "keyed: false",
        id="key-on-an-events-collection",
    ),
    pytest.param(
        both(put("key", "{{tags}}"), put("parameters.tags.default", [])),
        "writes[0].key",
        "{{tags}} is a string_array parameter, not a string",
        id="key-from-a-list",
    ),
    pytest.param(
        put("key", "{{text}}.{{tags}}"),
        "writes[0].key",
        "{{tags}} must always have a value",
        id="key-from-an-optional-parameter",
    ),
    pytest.param(put("key", "k" * 257), "writes[0].key", "at most 256 characters", id="key-too-long"),
    pytest.param(put("key", " "), "writes[0].key", "must not be blank", id="key-blank"),
    # -- entity, text, occurred_at, scores ---------------------------------------------------------
    pytest.param(
        put("record.entity", "{{n}}"),
        "writes[0].record.entity",
        "{{n}} is a integer parameter, not a string",
        id="entity-from-a-number",
    ),
    pytest.param(
        put("record.entity", "{{tags}}"),
        "writes[0].record.entity",
        "{{tags}} must always have a value",
        id="entity-from-an-optional-parameter",
    ),
    pytest.param(put("record.text", "   "), "writes[0].record.text", "must not be blank", id="text-blank"),
    pytest.param(
        put("record.occurred_at", "{{text}}"),
        "writes[0].record.occurred_at",
        "datetime parameter",
        id="occurred-at-from-a-string",
    ),
    pytest.param(
        put("record.occurred_at", "2026-01-01T00:00:00"),
        "writes[0].record.occurred_at",
        "timezone",
        id="occurred-at-without-timezone",
    ),
    pytest.param(
        put("record.scores.bogus", 1),
        "writes[0].record.scores.bogus",
        "declares no score named 'bogus'",
        id="undeclared-score",
    ),
    pytest.param(
        put("record.scores.importance", "{{text}}"),
        "writes[0].record.scores.importance",
        "must be a number",
        id="score-from-a-string",
    ),
    # -- declared fields in content get their declared type ----------------------------------------
    pytest.param(
        put("record.content.count", "three"),
        "writes[0].record.content.count",
        "field 'count' of collection mem v1 is a integer: expected integer, got str",
        id="field-literal",
    ),
    pytest.param(
        put("record.content.tags", "{{text}}"),
        "writes[0].record.content.tags",
        "{{text}} is a string parameter",
        id="field-from-another-type",
    ),
    pytest.param(
        put("record.content.tags", ["a", "{{tags}}"]),
        "writes[0].record.content.tags",
        "{{tags}} is a string_array parameter",
        id="list-item-from-a-list",
    ),
    pytest.param(
        put("record.content.count", "{{n}}0"),
        "writes[0].record.content.count",
        "text with placeholders is a string",
        id="field-interpolated",
    ),
    pytest.param(
        put("record.content.when_old", "{{text}}"),
        "writes[0].record.content.when_old",
        "field 'when' of collection mem v1 is a datetime",
        id="field-at-a-fallback-path",
    ),
    pytest.param(
        put("record.content.meta", {"when": "yesterday"}),
        "writes[0].record.content.meta.when",
        "ISO 8601",
        id="field-at-a-nested-path",
    ),
    pytest.param(
        put("record.content.flag", "{{weight}}"),
        "writes[0].record.content.flag",
        "{{weight}} is a integer parameter",
        id="boolean-field",
    ),
]


@pytest.mark.parametrize(("change", "path", "fragment"), CASES)
def test_broken_write_contract(tmp_path: Path, change: Change, path: str, fragment: str) -> None:
    problems = problems_of(build_catalog(tmp_path, files(changed(change))))
    matches = [p for p in problems if (p.file, format_loc(p.loc)) == ("writes/mem.yaml", path)]
    assert matches, "\n".join(map(str, problems))
    assert {p.definition for p in matches} <= {"write note v1", "write ask v1"}
    assert any(fragment in p.msg for p in matches), "\n".join(map(str, matches))


def test_the_base_contract_is_valid(tmp_path: Path) -> None:
    catalog = load(build_catalog(tmp_path, files(BASE)))
    contract = catalog.write("note")
    assert (contract.name, contract.version, contract.status, contract.key) == ("note", 1, "active", None)
    assert catalog.hash_of("write", "note", 1).startswith("sha256:")
    assert [t.name for t in catalog.tools()] == ["ask", "lonely", "walk", "note"]


def test_every_problem_is_reported_at_once(tmp_path: Path) -> None:
    broken = changed(
        both(
            put("parameters.text.minimum", 1),  # a constraint problem does not stop the other checks
            put("record.entity", "{{entity}}{{nope}}"),
            put("record.content.count", "three"),
            put("record.scores.bogus", 1),
            put("parameters.unused", {"type": "boolean"}),
        )
    )
    problems = problems_of(build_catalog(tmp_path, files(broken)))
    assert sorted(format_loc(p.loc) for p in problems) == [
        "writes[0].parameters.text.minimum",
        "writes[0].parameters.unused",
        "writes[0].record.content.count",
        "writes[0].record.entity",
        "writes[0].record.scores.bogus",
    ]
    assert str(problems[0]).startswith("writes/mem.yaml: write note v1: writes[0].")


def test_identities_duplicates_and_one_active_version(tmp_path: Path) -> None:
    second = changed(put("version", 2))
    problems = problems_of(build_catalog(tmp_path, files(BASE, second, changed(put("active", False)))))
    found = {(format_loc(p.loc), p.definition) for p in problems}
    assert ("writes[1].active", "write note v2") in found and ("writes[0].active", "write note v1") in found
    assert ("writes[2].name", "write note v1") in found
    assert any("duplicate write 'note'" in p.msg for p in problems)


def test_writes_folder_takes_only_yaml_files(tmp_path: Path) -> None:
    root = build_catalog(tmp_path, {**files(BASE), "writes/other.yml": "writes: []\n"})
    (problem,) = problems_of(root)
    assert (problem.file, problem.msg) == ("writes/other.yml", "catalog files must end in .yaml")


def test_switching_active_keeps_the_hash_but_not_the_catalog_hash(tmp_path: Path) -> None:
    on = load(build_catalog(tmp_path / "on", files(BASE)))
    off = load(build_catalog(tmp_path / "off", files(changed(put("active", False)))))
    assert on.hash_of("write", "note", 1) == off.hash_of("write", "note", 1)
    assert on.hash != off.hash
    other = load(build_catalog(tmp_path / "other", files(changed(put("description", "Another.")))))
    assert other.hash_of("write", "note", 1) != on.hash_of("write", "note", 1)
    with pytest.raises(LookupError):
        off.write("note")  # inactive: no version callers get


PACKAGE = "package: {{name: app, views: {{ask: 1}}, writes: {writes}, mcp: {{tools: [{tools}]}}}}\n"


def packaged(tmp_path: Path, writes: str, tools: str, *contracts: dict[str, Any]) -> Path:
    package = {"packages/app.yaml": PACKAGE.format(writes=writes, tools=tools)}
    return build_catalog(tmp_path, files(*(contracts or (BASE,)), extra=package))


def test_a_package_pins_write_versions_and_lists_them_as_tools(tmp_path: Path) -> None:
    second = changed(both(put("version", 2), put("active", False), put("description", "Version 2.")))
    root = packaged(tmp_path, "{note: 2}", "note", BASE, second)
    plain, pinned = load(root), load(root, package="app")
    assert plain.write("note").version == 1 and pinned.write("note").version == 2
    assert [(t.name, t.version) for t in pinned.tools()] == [("note", 2)]
    assert pinned.is_active(pinned.write("note", 2)) and not pinned.is_active(pinned.write("note", 1))


@pytest.mark.parametrize(
    ("writes", "tools", "path", "fragment"),
    [
        pytest.param(
            "{note: 3}",
            "note",
            "package.writes.note",
            "write contract 'note' has no version 3",
            id="unknown-version",
        ),
        pytest.param(
            "{}",
            "note",
            "package.mcp.tools[0]",
            "not one of the package's views or write contracts",
            id="tool-not-pinned",
        ),
        pytest.param(
            "{note: 1}",
            "ask, note",
            "package.mcp.tools[0]",
            "view 'ask' v1 has no description",
            id="undescribed-view-tool",
        ),
    ],
)
def test_package_problems(tmp_path: Path, writes: str, tools: str, path: str, fragment: str) -> None:
    problems = problems_of(packaged(tmp_path, writes, tools), package="app")
    assert [(p.file, format_loc(p.loc)) for p in problems] == [("packages/app.yaml", path)]
    assert fragment in problems[0].msg


def test_an_undescribed_view_is_a_tool_only_without_a_package(tmp_path: Path) -> None:
    """Descriptions are checked for the tools the selected package publishes; without a package
    every active view is a tool, as the spec lets a view leave its description out."""
    root = packaged(tmp_path, "{note: 1}", "ask, note")
    assert "ask" in [t.name for t in load(root).tools()]
    assert problems_of(root, package="app")


def test_the_reference_catalog_is_agent_complete() -> None:
    """The reference catalog ships `remember` (an active note in the general memory collection) and
    `propose_fact` (a keyed fact as a draft), views that read them back, and a description on
    every view, write contract and parameter: each is a tool an agent reads."""
    catalog = load(reference_catalog())
    remember, propose = catalog.write("remember"), catalog.write("propose_fact")
    assert (remember.collection, remember.status, remember.key) == ("memories", "active", None)
    assert (propose.collection, propose.status, propose.key) == ("memories", "draft", "{{fact}}")
    for contract in (*catalog.all_views(), *catalog.all_writes()):
        assert contract.description, contract.name
        assert all(p.description for p in contract.parameters.values()), contract.name
    agent = load(reference_catalog(), package="memory_agent")
    assert [(t.name, t.version) for t in agent.tools()] == [
        ("recall", 1),
        ("proposed_facts", 1),
        ("remember", 1),
        ("propose_fact", 1),
    ]
