"""`GET /writes` and `POST /writes/{name}` against the real database, over the `wc_` catalog.

A call goes through `POST /records`' own write path, so what a record looks like afterwards is
read back with `GET /records/{id}` and through views, never from the tables directly.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa
from flask import Flask
from jsonschema import Draft202012Validator
from openapi_spec_validator import validate
from sqlalchemy.engine import Engine

from memseek.catalog.load import load_catalog
from memseek.catalog.parameters import input_schema
from memseek.catalog.problems import CatalogError
from memseek.catalog.store import register_definitions
from memseek.runtime import Runtime
from memseek.search.view_checks import VIEW_CHECKS
from memseek.search.views import public_hash
from memseek.write.worker import BackgroundWorker
from tests.conftest import Client
from tests.conftest import Tenant
from tests.conftest import client_for
from tests.helpers import error
from tests.helpers import fetch
from tests.helpers import locs
from tests.helpers import ok
from tests.helpers import post_records
from tests.helpers import runtime_for
from tests.helpers import view_query


def call(client: Client, name: str, parameters: Any = None, query: str = "", **body: Any) -> Any:
    """`POST /writes/{name}{query}` with `{"parameters": parameters, **body}`."""
    payload = {"parameters": parameters, **body} if parameters is not None else body
    return client.post(f"/writes/{name}{query}", json=payload)


def created(response: Any) -> dict[str, Any]:
    assert response.status_code == 201, response.get_data(as_text=True)
    return response.get_json()  # type: ignore[no-any-return]


def written_id(response: Any) -> str:
    (record,) = created(response)["records"]
    return str(record["id"])


def count(engine: Engine) -> int:
    with engine.connect() as conn:
        return int(conn.execute(sa.text("SELECT count(*) FROM records")).scalar_one())


def listed(client: Client) -> dict[tuple[str, int], dict[str, Any]]:
    body = ok(client.get("/writes"))
    assert body.keys() == {"writes"}
    return {(w["name"], w["version"]): w for w in body["writes"]}


FACT = {"entity": "contact.maria", "slot": "plan", "value": "Maria is on the Pro plan."}


# --- GET /writes ---------------------------------------------------------------------------------


def test_get_writes_lists_every_version_with_its_input_contract(wc: Client, wc_runtime: Runtime) -> None:
    writes = listed(wc)
    assert list(writes) == [
        ("wc_event", 1),
        ("wc_fact", 1),
        ("wc_local_note", 1),
        ("wc_note", 1),
        ("wc_note", 2),
        ("wc_propose", 1),
    ]
    contract = wc_runtime.catalog.write("wc_fact")
    assert writes[("wc_fact", 1)] == {
        "name": "wc_fact",
        "version": 1,
        "hash": public_hash(wc_runtime.catalog.write_hash(contract)),
        "active": True,
        "description": "Set a named fact about an entity; the newest value is the current one.",
        "collection": "wc_facts",
        "collection_version": None,
        "types": ["fact"],
        "keyed": True,
        "status": "active",
        "parameters": {
            "entity": {"type": "string", "required": True, "default": None},
            "slot": {"type": "string", "required": True, "default": None},
            "value": {"type": "string", "required": True, "default": None},
            "confidence": {"type": "number", "required": False, "default": None},
        },
        "input_schema": {
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "type": "object",
            "properties": {
                "entity": {"type": "string", "description": "Who the fact is about."},
                "slot": {"type": "string", "description": "The fact's name."},
                "value": {"type": "string", "description": "The fact's value."},
                "confidence": {"type": "number", "description": "How sure.", "minimum": 0, "maximum": 1},
            },
            "additionalProperties": False,
            "required": ["entity", "slot", "value"],
        },
    }
    assert writes[("wc_fact", 1)]["hash"].startswith("sha256-")


def test_get_writes_describes_types_status_and_activity(wc: Client, wc_runtime: Runtime) -> None:
    writes = listed(wc)
    note, second, propose = writes[("wc_note", 1)], writes[("wc_note", 2)], writes[("wc_propose", 1)]
    assert (note["types"], note["keyed"], note["active"]) == (["note", "observation"], False, True)
    assert (second["types"], second["active"]) == (["observation"], False)
    assert (propose["status"], propose["keyed"], propose["types"]) == ("draft", True, ["preference"])
    for (name, version), entry in writes.items():
        Draft202012Validator.check_schema(entry["input_schema"])
        contract = wc_runtime.catalog.write(name, version)
        assert entry["input_schema"] == input_schema(contract.parameters)  # the code views use
    schema = note["input_schema"]["properties"]
    assert schema["kind"] == {
        "type": "string",
        "description": "What sort of note.",
        "enum": ["note", "observation"],
        "default": "note",
    }
    assert schema["tags"] == {
        "type": "array",
        "description": "Labels.",
        "maxItems": 3,
        "items": {"type": "string"},
    }


def test_get_writes_is_package_aware(wc_pkg_runtime: Runtime, tenant: Tenant) -> None:
    active = {key for key, entry in listed(client_for(wc_pkg_runtime, tenant)).items() if entry["active"]}
    assert active == {("wc_note", 2), ("wc_fact", 1)}


def test_get_writes_needs_a_key(wc_app: Flask, db: Engine) -> None:
    error(wc_app.test_client().get("/writes"), 401, "unauthorized")


def test_openapi_documents_the_write_routes(wc: Client) -> None:
    document = ok(wc.get("/openapi.json"))
    validate(document)
    post = document["paths"]["/writes/{name}"]["post"]
    assert post["requestBody"]["content"]["application/json"]["schema"]["$ref"].endswith("/WriteCallIn")
    assert {p["name"] for p in post["parameters"]} == {"name", "wait", "timeout"}
    assert "201" in post["responses"] and "get" in document["paths"]["/writes"]
    assert set(document["components"]["schemas"]["WriteCallIn"]["properties"]) == {
        "parameters",
        "idempotency_key",
    }


# --- POST /writes/{name}: what gets written ------------------------------------------------------


def test_an_event(wc: Client) -> None:
    body = created(call(wc, "wc_event", {"entity": "contact.maria", "what": "Maria called about billing."}))
    assert body["write"] == {"name": "wc_event", "version": 1, "hash": listed(wc)[("wc_event", 1)]["hash"]}
    assert body["parameters"] == {"entity": "contact.maria", "what": "Maria called about billing."}
    (result,) = body["records"]
    assert (result["processing"], result["current"]) == ("ready", True)
    record = fetch(wc, result["id"])
    assert {
        k: record[k] for k in ("collection", "collection_version", "entity", "type", "key", "status")
    } == {
        "collection": "wc_events",
        "collection_version": 1,
        "entity": "contact.maria",
        "type": "event",
        "key": None,
        "status": "active",
    }
    assert (record["text"], record["content"], record["scores"]) == ("Maria called about billing.", {}, {})


def test_every_placeholder_is_filled_with_typed_values(wc: Client) -> None:
    parameters = {
        "entity": "contact.maria",
        "text": "Prefers email.",
        "kind": "observation",
        "tags": ["preference", "channel"],
        "importance": 7,
        "when": "2026-07-01T09:30:00+02:00",
    }
    body = created(call(wc, "wc_note", parameters))
    assert body["parameters"] == {**parameters, "source": "agent"}  # defaults applied, in declaration order
    assert list(body["parameters"]) == ["entity", "text", "kind", "tags", "importance", "when", "source"]
    record = fetch(wc, body["records"][0]["id"])
    assert (record["type"], record["text"], record["scores"]) == (
        "observation",
        "Prefers email.",
        {"importance": 7},
    )
    assert record["content"] == {
        "source": "agent",
        "tags": ["preference", "channel"],
        "meta": {"channel": "mcp", "via": "agent (observation)"},
    }
    assert record["occurred_at"] == "2026-07-01T07:30:00+00:00"


def test_an_omitted_optional_parameter_removes_what_it_fills(wc: Client) -> None:
    body = created(call(wc, "wc_note", {"entity": "contact.maria", "text": "Short note."}))
    record = fetch(wc, body["records"][0]["id"])
    assert record["type"] == "note"
    assert record["content"] == {"source": "agent", "meta": {"channel": "mcp", "via": "agent (note)"}}
    assert record["scores"] == {} and record["occurred_at"] == record["created_at"]


def test_a_keyed_fact_supersedes_the_earlier_value(wc: Client) -> None:
    first = written_id(call(wc, "wc_fact", {**FACT, "confidence": 0.5}))
    second = written_id(
        call(wc, "wc_fact", {**FACT, "value": "Maria moved to the Team plan.", "confidence": 1})
    )
    assert fetch(wc, first)["current"] is False
    latest = fetch(wc, second)
    assert (latest["key"], latest["current"], latest["content"]) == ("plan", True, {"confidence": 1})
    hits = ok(view_query(wc, "wc_current", {"entity": "contact.maria"}))["hits"]
    assert [(h["id"], h["text"]) for h in hits] == [(second, "Maria moved to the Team plan.")]


def test_a_draft_is_invisible_until_approved(wc: Client) -> None:
    parameters = {"entity": "contact.maria", "topic": "channel", "value": "email"}
    body = created(call(wc, "wc_propose", parameters))
    draft = body["records"][0]["id"]
    record = fetch(wc, draft)
    assert (record["status"], record["key"], record["type"], record["text"]) == (
        "draft",
        "preference.channel",
        "preference",
        "channel: email",
    )
    assert ok(view_query(wc, "wc_current", {"entity": "contact.maria"}))["hits"] == []
    drafts = ok(view_query(wc, "wc_current", {"entity": "contact.maria", "status": "draft"}))["hits"]
    assert [h["id"] for h in drafts] == [draft]
    approved = ok(wc.post(f"/records/{draft}/approve"))
    assert (approved["status"], approved["current"]) == ("active", True)
    hits = ok(view_query(wc, "wc_current", {"entity": "contact.maria"}))["hits"]
    assert [(h["id"], h["key"], h["status"]) for h in hits] == [(draft, "preference.channel", "active")]


def test_wait_returns_processed_states(wc: Client, wc_runtime: Runtime) -> None:
    note = {"entity": "contact.maria", "text": "Embedded before it is readable."}
    pending = created(call(wc, "wc_local_note", note, query="?wait=true&timeout=0.2"))["records"][0]
    assert pending["processing"] == "pending"
    worker = BackgroundWorker(wc_runtime, idle_seconds=0.2).start()
    try:
        done = created(call(wc, "wc_local_note", note, query="?wait=true&timeout=30"))["records"][0]
    finally:
        worker.stop()
    assert done["processing"] == "ready" and fetch(wc, pending["id"])["processing"] == "ready"


# --- idempotency -----------------------------------------------------------------------------------


def test_the_same_idempotency_key_returns_the_first_record(wc: Client, db: Engine) -> None:
    first = created(call(wc, "wc_fact", FACT, idempotency_key="call-1"))
    again = created(call(wc, "wc_fact", FACT, idempotency_key="call-1"))
    assert again["records"] == first["records"] and count(db) == 1
    response = call(wc, "wc_fact", {**FACT, "value": "Something else."}, idempotency_key="call-1")
    assert locs(response, 409) == [["idempotency_key"]]
    assert error(response, 409, "conflict")["message"].startswith("write contract 'wc_fact' v1: ")
    assert count(db) == 1


def test_idempotency_keys_are_shared_with_post_records(wc: Client, db: Engine) -> None:
    created(call(wc, "wc_event", {"entity": "e", "what": "happened"}, idempotency_key="shared"))
    other = {
        "collection": "wc_events",
        "entity": "e",
        "type": "event",
        "text": "else",
        "idempotency_key": "shared",
    }
    assert locs(post_records(wc, other), 409) == [["records", 0, "idempotency_key"]]
    assert count(db) == 1


# --- errors ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "body", "query", "loc"),
    [
        pytest.param("wc_note", {"parameters": {"entity": "e"}}, "", ["parameters", "text"], id="missing"),
        pytest.param(
            "wc_note",
            {"parameters": {"entity": "e", "text": "t", "bogus": 1}},
            "",
            ["parameters", "bogus"],
            id="unknown",
        ),
        pytest.param(
            "wc_note",
            {"parameters": {"entity": "e", "text": "t", "importance": "high"}},
            "",
            ["parameters", "importance"],
            id="wrong-type",
        ),
        pytest.param(
            "wc_note",
            {"parameters": {"entity": "e", "text": "t", "importance": 11}},
            "",
            ["parameters", "importance"],
            id="out-of-range",
        ),
        pytest.param(
            "wc_note",
            {"parameters": {"entity": "e", "text": "t", "kind": "fact"}},
            "",
            ["parameters", "kind"],
            id="outside-the-enum",
        ),
        pytest.param(
            "wc_note",
            {"parameters": {"entity": "e", "text": "t", "tags": ["a", "b", "c", "d"]}},
            "",
            ["parameters", "tags"],
            id="too-many-items",
        ),
        pytest.param(
            "wc_note",
            {"parameters": {"entity": "e", "text": "t", "when": "2026-07-01"}},
            "",
            ["parameters", "when"],
            id="datetime-without-timezone",
        ),
        pytest.param("wc_note", {}, "", ["parameters", "entity"], id="no-parameters"),
        pytest.param("wc_note", {"parameters": ["e"]}, "", ["parameters"], id="parameters-not-an-object"),
        pytest.param("wc_note", {"parameters": {}, "extra": 1}, "", ["extra"], id="unknown-body-key"),
        pytest.param(
            "wc_event",
            {"parameters": {"entity": "e", "what": "w"}, "idempotency_key": " "},
            "",
            ["idempotency_key"],
            id="blank-idempotency-key",
        ),
        pytest.param(
            "wc_event",
            {"parameters": {"entity": "e", "what": "w"}},
            "?wait=maybe",
            ["query", "wait"],
            id="bad-wait",
        ),
        pytest.param(
            "wc_event",
            {"parameters": {"entity": "e", "what": "w"}},
            "?timeout=99",
            ["query", "timeout"],
            id="bad-timeout",
        ),
        pytest.param(
            "wc_event",
            {"parameters": {"entity": "e", "what": "w\x00"}},
            "",
            ["parameters", "what"],
            id="unstorable-text",
        ),
        # problems the write path finds in the filled record (the first two), at the parameter that
        # produced them
        pytest.param(
            "wc_event",
            {"parameters": {"entity": " ", "what": "w"}},
            "",
            ["parameters", "entity"],
            id="blank-entity",
        ),
        pytest.param(
            "wc_fact",
            {"parameters": {**FACT, "slot": "k" * 257}},
            "",
            ["parameters", "slot"],
            id="key-too-long",
        ),
    ],
)
def test_invalid_calls_write_nothing(
    wc: Client, db: Engine, name: str, body: dict[str, Any], query: str, loc: list[Any]
) -> None:
    response = wc.post(f"/writes/{name}{query}", json=body)
    assert loc in locs(response), response.get_json()
    assert count(db) == 0


def test_a_body_that_is_not_an_object(wc: Client) -> None:
    assert locs(wc.post("/writes/wc_event", json=["e"])) == [["body"]]


def test_a_record_problem_names_the_parameter_and_where_it_went(
    wc_runtime: Runtime, tenant: Tenant, db: Engine
) -> None:
    small = client_for(runtime_for(wc_runtime, max_record_chars=12), tenant)
    response = call(small, "wc_propose", {"entity": "e", "topic": "language", "value": "Portuguese"})
    found = {tuple(d["loc"]): d["msg"] for d in error(response, 422, "invalid_request")["details"]}
    assert set(found) == {("parameters", "topic"), ("parameters", "value")}  # "{{topic}}: {{value}}"
    assert (
        found[("parameters", "value")] == "text is longer than 12 characters (at text in the written record)"
    )
    assert count(db) == 0


@pytest.mark.parametrize("name", ["wc_nothing", "wc_propose_", "WC_EVENT"])
def test_an_unknown_contract_is_404_whatever_the_body(wc: Client, name: str) -> None:
    assert error(wc.post(f"/writes/{name}", json=["not", "a", "body"]), 404, "not_found")["details"] == []


# --- workspaces and packages -----------------------------------------------------------------------


@pytest.fixture
def foreign(wc_app: Flask, other_tenant: Tenant) -> Iterator[Client]:
    yield Client(wc_app.test_client(), other_tenant)


def test_a_write_is_invisible_to_another_workspace(wc: Client, foreign: Client) -> None:
    mine = written_id(call(wc, "wc_fact", FACT, idempotency_key="same-key"))
    error(foreign.get(f"/records/{mine}"), 404, "not_found")
    assert ok(view_query(foreign, "wc_current", {"entity": "contact.maria"}))["hits"] == []
    theirs = written_id(call(foreign, "wc_fact", {**FACT, "value": "Other."}, idempotency_key="same-key"))
    assert theirs != mine  # idempotency keys are per workspace: no conflict, no replay
    assert [h["id"] for h in ok(view_query(wc, "wc_current", {"entity": "contact.maria"}))["hits"]] == [mine]
    error(wc.get(f"/records/{theirs}"), 404, "not_found")


def test_a_package_decides_which_versions_are_called(wc_pkg_runtime: Runtime, tenant: Tenant) -> None:
    client = client_for(wc_pkg_runtime, tenant)
    body = created(call(client, "wc_note", {"entity": "e", "text": "pinned"}))
    assert (body["write"]["version"], body["parameters"]) == (2, {"entity": "e", "text": "pinned"})
    record = fetch(client, body["records"][0]["id"])
    assert (record["type"], record["text"]) == ("observation", "v2: pinned")
    assert error(call(client, "wc_propose", {"entity": "e", "topic": "channel", "value": "x"}), 404)
    created(call(client, "wc_fact", FACT))


# --- definitions are immutable -----------------------------------------------------------------------


def test_a_stored_write_contract_cannot_change(
    engine: Engine, wc_runtime: Runtime, wc_catalog: Path, tmp_path: Path
) -> None:
    """The wc_ definitions are already stored (the session's wc_ runtime registered them): loading
    a changed wc_fact v1 is refused, a new version or another `active` is not."""
    original = (wc_catalog / "writes" / "wc.yaml").read_text()

    def register(text: str) -> None:
        root = tmp_path / str(len(list(tmp_path.iterdir())))
        shutil.copytree(wc_catalog, root)
        (root / "writes" / "wc.yaml").write_text(text)
        with engine.connect() as conn, conn.begin() as transaction:
            try:
                register_definitions(conn, load_catalog(root, view_checks=VIEW_CHECKS))
            finally:
                transaction.rollback()  # stored definitions outlive tests: leave none behind

    register(
        original.replace(
            "  - name: wc_note\n    version: 1\n    active: true\n", "  - name: wc_note\n    version: 1\n"
        )
    )
    with pytest.raises(CatalogError) as caught:
        register(original.replace("The fact's value.", "The fact's new value."))
    (problem,) = caught.value.problems
    assert str(problem).startswith(
        "writes/wc.yaml: write wc_fact v1: content differs from the stored write wc_fact v1"
    )
    assert "publish a new version" in problem.msg
