"""The `wc_` catalog the write-contract and MCP tests share, and its fixtures.

The definitions table keeps every (kind, name, version) ever loaded and refuses changed content,
so every test over the session database that needs write contracts uses this ONE catalog (names
prefixed `wc_`). Its collections need no processing except `wc_local` (embedded), so records are
readable as soon as they are written. The conftests of tests/writes and tests/mcp import the
fixtures below.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from flask import Flask

from memseek.runtime import Runtime
from tests import helpers
from tests.conftest import Client
from tests.conftest import Tenant

COLLECTIONS = """
collections:
  - name: wc_notes
    version: 1
    active: true
    description: Notes and events about an entity.
    types: [note, event, observation]
    fields:
      source: {type: string, filterable: true, returnable: true}
      channel: {type: string, path: meta.channel, fallback_paths: [channel_old]}
      tags: {type: string_array, filterable: true, returnable: true}
      when: {type: datetime}
      count: {type: integer}
      weight: {type: number}
    scores:
      importance: {display: true}
  - name: wc_facts
    version: 1
    active: true
    types: [fact, preference]
    keyed: true
    fields:
      confidence: {type: number}
  - name: wc_events
    version: 1
    active: true
    types: [event]
    keyed: false
  - name: wc_local
    version: 1
    active: true
    types: [note]
    embedding: default
"""

VIEWS = """
views:
  - name: wc_recall
    version: 1
    active: true
    description: The notes about one entity that match a question, as prompt-ready text.
    parameters:
      entity: {type: string, required: true, description: Whose notes.}
      query: {type: string, required: true, description: What to look for.}
    query:
      q: "{{query}}"
      mode: text
      scope: {entities: ["{{entity}}"], collections: [wc_notes]}
      include: [text, type]
      render: true
  - name: wc_current
    version: 1
    active: true
    description: The current facts about one entity, active or draft as asked.
    parameters:
      entity: {type: string, required: true, description: Whose facts.}
      status: {type: string, default: active, enum: [active, draft], description: Which lane.}
    query:
      mode: recent
      scope: {entities: ["{{entity}}"], collections: [wc_facts], status: "{{status}}"}
      include: [text, key, status]
  - name: wc_bare
    version: 1
    active: true
    query: {mode: recent, scope: {collections: [wc_events]}}
"""

WRITES = """
writes:
  - name: wc_note
    version: 1
    active: true
    description: Remember a note about an entity.
    collection: wc_notes
    type: "{{kind}}"
    parameters:
      entity: {type: string, required: true, description: Who the note is about.}
      text: {type: string, required: true, description: The note.}
      kind: {type: string, enum: [note, observation], default: note, description: What sort of note.}
      tags: {type: string_array, max_items: 3, description: Labels.}
      importance: {type: integer, minimum: 1, maximum: 10, description: How much it matters.}
      when: {type: datetime, description: When it happened.}
      source: {type: string, default: agent, description: Who wrote it.}
    record:
      entity: "{{entity}}"
      text: "{{text}}"
      occurred_at: "{{when}}"
      content:
        source: "{{source}}"
        tags: "{{tags}}"
        meta: {channel: mcp, via: "{{source}} ({{kind}})"}
      scores:
        importance: "{{importance}}"
  - name: wc_note
    version: 2
    description: Remember a note about an entity (version 2, always an observation).
    collection: wc_notes
    type: observation
    parameters:
      entity: {type: string, required: true, description: Who the note is about.}
      text: {type: string, required: true, description: The note.}
    record:
      entity: "{{entity}}"
      text: "v2: {{text}}"
  - name: wc_fact
    version: 1
    active: true
    description: Set a named fact about an entity; the newest value is the current one.
    collection: wc_facts
    type: fact
    key: "{{slot}}"
    parameters:
      entity: {type: string, required: true, description: Who the fact is about.}
      slot: {type: string, required: true, description: The fact's name.}
      value: {type: string, required: true, description: The fact's value.}
      confidence: {type: number, minimum: 0, maximum: 1, description: How sure.}
    record:
      entity: "{{entity}}"
      text: "{{value}}"
      content: {confidence: "{{confidence}}"}
  - name: wc_propose
    version: 1
    active: true
    description: Propose a preference of an entity, as a draft to approve.
    collection: wc_facts
    type: preference
    status: draft
    key: "preference.{{topic}}"
    parameters:
      entity: {type: string, required: true, description: Whose preference.}
      topic: {type: string, required: true, enum: [channel, language], description: Which preference.}
      value: {type: string, required: true, description: The preferred value.}
    record:
      entity: "{{entity}}"
      text: "{{topic}}: {{value}}"
  - name: wc_event
    version: 1
    active: true
    description: Record that something happened.
    collection: wc_events
    type: event
    parameters:
      entity: {type: string, required: true, description: Who it happened to.}
      what: {type: string, required: true, description: What happened.}
    record:
      entity: "{{entity}}"
      text: "{{what}}"
  - name: wc_local_note
    version: 1
    active: true
    description: A note that is embedded before it is readable.
    collection: wc_local
    type: note
    parameters:
      entity: {type: string, required: true, description: Who.}
      text: {type: string, required: true, description: What.}
    record:
      entity: "{{entity}}"
      text: "{{text}}"
"""

PACKAGES = """
package:
  name: wc_pkg
  description: An agent that recalls notes and writes through version 2 of wc_note.
  views: {wc_recall: 1, wc_bare: 1}
  writes: {wc_note: 2, wc_fact: 1}
  mcp:
    tools: [wc_recall, wc_note]
"""


def write_catalog(root: Path) -> Path:
    """The `wc_` test catalog under `root`."""
    files = {
        "collections/wc.yaml": COLLECTIONS,
        "views/wc.yaml": VIEWS,
        "writes/wc.yaml": WRITES,
        "packages/wc.yaml": PACKAGES,
    }
    return helpers.fixture_catalog(root, files=files, rank_default=True)


@pytest.fixture(scope="session")
def wc_catalog(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_catalog(tmp_path_factory.mktemp("wc-catalog"))


@pytest.fixture(scope="session")
def wc_runtime(runtime: Runtime, wc_catalog: Path) -> Runtime:
    return helpers.runtime_for(runtime, wc_catalog)


@pytest.fixture(scope="session")
def wc_app(wc_runtime: Runtime) -> Flask:
    return helpers.app_for(wc_runtime)


@pytest.fixture
def wc(wc_app: Flask, tenant: Tenant) -> Client:
    """A client of the `wc_` app for the `tenant` workspace."""
    return Client(wc_app.test_client(), tenant)


@pytest.fixture(scope="session")
def wc_pkg_runtime(wc_runtime: Runtime) -> Runtime:
    """The `wc_` catalog served with MEMSEEK_PACKAGE=wc_pkg."""
    return helpers.runtime_for(wc_runtime, memseek_package="wc_pkg")
