"""Records as stored and read back: declared fields (types, paths, fallback paths, the pinned
version), content, timestamps and defaults, derivation depth, and `GET /records/{id}` (design §1
"Records", "Collections", §3).
"""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any
from uuid import UUID
from uuid import uuid4

import pytest
from sqlalchemy.engine import Engine

from tests.blackbox.design_support import RECORD_FIELDS
from tests.blackbox.design_support import count_records
from tests.blackbox.design_support import fact
from tests.blackbox.design_support import one_id
from tests.blackbox.design_support import rec
from tests.blackbox.design_support import retract
from tests.blackbox.design_support import walk
from tests.conftest import Client
from tests.conftest import Tenant
from tests.helpers import error
from tests.helpers import fetch
from tests.helpers import locs
from tests.helpers import post_records
from tests.helpers import written_ids

# --- declared fields: types, paths, fallback paths ------------------------------------------------


@pytest.mark.parametrize(
    ("content", "loc"),
    [
        pytest.param({"meta": {"s": 5}}, ["meta", "s"], id="string-at-path"),
        pytest.param({"old": {"s": False}}, ["old", "s"], id="string-at-first-fallback"),
        pytest.param({"s": ["x"]}, ["s"], id="string-at-second-fallback"),
        pytest.param({"sa": "x"}, ["sa"], id="string-array-scalar"),
        pytest.param({"sa": ["x", 1]}, ["sa"], id="string-array-number-item"),
        pytest.param({"n": "1.5"}, ["n"], id="number-string"),
        pytest.param({"n": True}, ["n"], id="number-boolean"),
        pytest.param({"i": 1.5}, ["i"], id="integer-fraction"),
        pytest.param({"i": "3"}, ["i"], id="integer-string"),
        pytest.param({"b": "true"}, ["b"], id="boolean-string"),
        pytest.param({"b": 1}, ["b"], id="boolean-number"),
        pytest.param({"d": "tomorrow"}, ["d"], id="datetime-not-a-time"),
        pytest.param({"d": "2026-01-01T00:00:00"}, ["d"], id="datetime-no-timezone"),
        pytest.param({"d": 1767225600}, ["d"], id="datetime-number"),
    ],
)
def test_a_declared_field_with_the_wrong_type_is_422_naming_index_field_and_path(
    bw: Client, bw_db: Engine, bw_ws: Tenant, content: dict[str, Any], loc: list[str]
) -> None:
    response = post_records(bw, rec(text="ok"), rec(content=content))
    (detail,) = error(response, 422)["details"]
    assert detail["loc"] == ["records", 1, "content", *loc]
    assert {"meta": "s", "old": "s"}.get(loc[0], loc[0]) in detail["msg"]
    assert ".".join(loc) in detail["msg"]
    assert count_records(bw_db, bw_ws) == 0


def test_declared_fields_of_the_right_type_are_accepted(bw: Client) -> None:
    content = {
        "meta": {"s": "x"},
        "sa": ["a", "b"],
        "n": 1.5,
        "i": 3,
        "b": False,
        "d": "2026-01-01T00:00:00+01:00",
        "undeclared": {"anything": [1, "x"]},
    }
    (record_id,) = written_ids(bw, rec(content=content), rec(content={"n": 2, "sa": [], "i": -7}))[:1]
    assert fetch(bw, record_id)["content"] == content


def test_a_fallback_path_is_only_read_when_the_path_is_absent(bw: Client) -> None:
    # the path holds a string, so the (wrongly typed) fallback values are never read
    assert post_records(bw, rec(content={"meta": {"s": "ok"}, "old": {"s": 5}, "s": 6})).status_code == 201
    # path absent: the first fallback present decides
    assert post_records(bw, rec(content={"old": {"s": "ok"}, "s": 6})).status_code == 201


def test_fields_are_checked_against_the_pinned_collection_version(bw: Client) -> None:
    # customer_events v1 declares channel as an integer, v2 (active) as a string
    v1 = rec("customer_events", collection_version=1, content={"channel": "email"})
    assert locs(post_records(bw, v1)) == [["records", 0, "content", "channel"]]
    (pinned,) = written_ids(bw, rec("customer_events", collection_version=1, content={"channel": 3}))
    record = fetch(bw, pinned)
    assert (record["collection"], record["collection_version"]) == ("customer_events", 1)
    response = post_records(bw, rec("customer_events", content={"channel": 3}))
    assert locs(response) == [["records", 0, "content", "channel"]]
    (active,) = written_ids(bw, rec("customer_events", content={"meta": {"channel": "email"}}))
    assert fetch(bw, active)["collection_version"] == 2


def test_a_collection_without_an_active_version_takes_only_pinned_writes(bw: Client) -> None:
    assert locs(post_records(bw, rec("bw_retired"))) == [["records", 0, "collection"]]
    (pinned,) = written_ids(bw, rec("bw_retired", collection_version=1))
    assert fetch(bw, pinned)["collection_version"] == 1


def test_the_collection_version_type_must_be_declared_by_that_version(bw: Client) -> None:
    # v2 declares `note`, v1 only `event`
    assert post_records(bw, rec("customer_events", type="note")).status_code == 201
    assert locs(post_records(bw, rec("customer_events", collection_version=1, type="note"))) == [
        ["records", 0, "type"]
    ]


def test_a_collection_without_active_version_needs_a_pin(bw: Client) -> None:
    """§1: `collection_version` is "the active one unless the writer pins a version"; with no
    active version there is nothing to write under."""
    found = locs(post_records(bw, rec("bw_retired")))
    assert any(loc[:2] == ["records", 0] for loc in found), found


@pytest.mark.parametrize(
    ("content", "needle"),
    [
        pytest.param({"meta": {"s": 5}}, "meta", id="string-at-path"),
        pytest.param({"old": {"s": 5}}, "old", id="string-at-fallback"),
        pytest.param({"sa": ["a", 1]}, "sa", id="string-array-item"),
        pytest.param({"sa": "a"}, "sa", id="string-array-scalar"),
        pytest.param({"n": "5"}, "n", id="number-string"),
        pytest.param({"n": True}, "n", id="number-boolean"),
        pytest.param({"i": 1.5}, "i", id="integer-fraction"),
        pytest.param({"i": "1"}, "i", id="integer-string"),
        pytest.param({"b": "true"}, "b", id="boolean-string"),
        pytest.param({"b": 1}, "b", id="boolean-number"),
        pytest.param({"d": "tomorrow"}, "d", id="datetime-garbage"),
        pytest.param({"d": "2026-07-01T10:00:00"}, "d", id="datetime-naive"),
    ],
)
def test_a_declared_field_of_the_wrong_type_is_422_naming_index_field_and_path(
    bw: Client, bw_db: Engine, bw_ws: Tenant, content: dict[str, Any], needle: str
) -> None:
    """§2 collections: "every declared field present in `content` (via its path or a fallback path)
    must have the declared type, else the write is rejected with a `422` naming the record index,
    field and path." """
    found = error(post_records(bw, rec(), rec(content=content)), 422)["details"]
    mine = [d for d in found if d["loc"][:2] == ["records", 1]]
    assert mine, found
    assert any(needle in json.dumps(d) for d in mine), mine
    assert count_records(bw_db, bw_ws) == 0


def test_fields_are_checked_against_the_pinned_version(bw: Client) -> None:
    """§1 collections: "Records store the version they were written under, and every field read
    uses the declaration of *that* version." (v1 declares `channel: integer`, v2 a string)."""
    v2 = rec("customer_events", content={"channel": "email"})
    assert fetch(bw, one_id(bw, v2))["collection_version"] == 2
    error(post_records(bw, {**v2, "collection_version": 1}), 422)
    v1 = one_id(bw, rec("customer_events", content={"channel": 3}, collection_version=1))
    assert fetch(bw, v1)["collection_version"] == 1


def test_absent_declared_fields_are_fine(bw: Client) -> None:
    """§2: only fields "present in `content`" are type-checked."""
    one_id(bw, rec(content={"unrelated": {"x": [1, "a"]}}))


# --- values as stored -----------------------------------------------------------------------------


def test_content_is_returned_exactly_as_written(bw: Client) -> None:
    content = {
        "text": "Ünïcödé ✓ — 中文 😀",
        "nested": {"list": [1, 2.5, "three", None, True, {"deep": []}]},
        "big": 12345678901234567890123,
        "float": 0.1,
        "negative": -0.0001,
        "exp": 1.5e-10,
        "empty": {},
        "quote": "\"<&>'",
        "zero": 0,
        "flag": False,
        "null": None,
    }
    (record_id,) = written_ids(bw, rec(content=content))
    assert fetch(bw, record_id)["content"] == content


def test_content_defaults_to_an_empty_object(bw: Client) -> None:
    (record_id,) = written_ids(bw, rec())
    record = fetch(bw, record_id)
    assert (record["content"], record["scores"], record["annotations"]) == ({}, {}, {})
    assert (record["derived_from"], record["depth"], record["run_id"]) == ([], 0, None)
    assert record["status"] == "active"


def test_occurred_at_defaults_to_created_at_and_keeps_the_instant(bw: Client) -> None:
    default, given = written_ids(bw, rec(), rec(occurred_at="2026-03-01T12:00:00-05:00"))
    record = fetch(bw, default)
    assert record["occurred_at"] == record["created_at"]
    assert datetime.fromisoformat(record["created_at"]).tzinfo is not None
    stored = datetime.fromisoformat(fetch(bw, given)["occurred_at"])
    assert stored == datetime.fromisoformat("2026-03-01T17:00:00+00:00")
    assert stored.utcoffset() is not None


def test_last_accessed_starts_at_created_at(bw: Client) -> None:
    record = fetch(bw, written_ids(bw, rec())[0])
    assert record["last_accessed"] == record["created_at"]


def test_depth_is_one_plus_the_deepest_parent(bw: Client) -> None:
    (a,) = written_ids(bw, rec(text="evidence a"))
    (b,) = written_ids(bw, rec(text="derived b", derived_from=[a]))
    (c,) = written_ids(bw, rec(text="derived c", derived_from=[b]))
    (d,) = written_ids(bw, rec(text="derived d", derived_from=[a, c]))
    assert [fetch(bw, i)["depth"] for i in (a, b, c, d)] == [0, 1, 2, 3]
    assert fetch(bw, d)["derived_from"] == [a, c]


def test_derived_from_must_be_unique(bw: Client) -> None:
    (a,) = written_ids(bw, rec())
    assert any(
        loc[:3] == ["records", 0, "derived_from"] for loc in locs(post_records(bw, rec(derived_from=[a, a])))
    )


def test_a_parent_in_another_workspace_is_answered_like_an_unknown_one(bw: Client, bw_other: Client) -> None:
    (foreign,) = written_ids(bw_other, rec())
    unknown = str(uuid4())
    foreign_error = error(post_records(bw, rec(derived_from=[foreign])), 422)
    unknown_error = error(post_records(bw, rec(derived_from=[unknown])), 422)
    assert foreign_error["details"][0]["loc"] == unknown_error["details"][0]["loc"]
    assert foreign_error["details"][0]["msg"].replace(foreign, "ID") == unknown_error["details"][0][
        "msg"
    ].replace(unknown, "ID")


def test_content_of_every_json_kind_is_returned_exactly_as_written(bw: Client) -> None:
    """§1: `content` — "the original payload, preserved byte-for-byte in meaning (returned exactly
    as written)"."""
    content = {
        "z": 1,
        "a": [1, 2.5, None, True, "ü€😀", {"nested": {}}],
        "big": 12345678901234567,
        "tiny": 1e-300,
        "neg": -0.1,
        "s": 'line\nbreak "quoted" \\ slash',
        "meta": {"s": "x"},
        "empty": [],
    }
    got = fetch(bw, one_id(bw, rec(content=content)))["content"]
    assert got == content


def test_occurred_at_defaults_to_created_at_and_last_accessed_starts_there(bw: Client) -> None:
    """§1: `occurred_at` "defaults to `created_at`"; `last_accessed` "starts at `created_at`"."""
    stored = fetch(bw, one_id(bw, rec()))
    assert stored["occurred_at"] == stored["created_at"]
    assert stored["last_accessed"] == stored["created_at"]


def test_occurred_at_keeps_the_instant(bw: Client) -> None:
    """§1: `occurred_at` — "when it happened; timezone required"."""
    from datetime import datetime

    stored = fetch(bw, one_id(bw, rec(occurred_at="2026-07-01T10:00:00+02:00")))
    parsed = datetime.fromisoformat(stored["occurred_at"].replace("Z", "+00:00"))
    assert parsed == datetime.fromisoformat("2026-07-01T08:00:00+00:00")
    assert parsed.tzinfo is not None


# Design, Records: `occurred_at` "timezone required". ISO 8601 and Python allow offsets up to
# ±23:59; PostgreSQL reads at most ±15:59. The instant is the same in UTC.
@pytest.mark.parametrize("offset", ["+16:00", "+23:59", "-23:59"])
def test_an_occurred_at_with_any_iso_offset_is_never_a_500(bw: Client, offset: str) -> None:
    response = bw.post("/records", json={"records": [rec(occurred_at=f"2026-07-01T10:00:00{offset}")]})
    assert response.status_code in (201, 422), response.get_data(as_text=True)


def test_scores_and_annotations_are_returned_as_written(bw: Client) -> None:
    """§1: `scores` "object name → finite number"; `annotations` "object processor-name → JSON
    value" — any JSON value, null included."""
    scores = {"importance": 7, "ratio": -2.5, "tiny": 1e-9}
    annotations = {"p": None, "q": 1, "r": "s", "t": [1, {"u": True}], "v": {}}
    (record_id,) = written_ids(bw, rec(scores=scores, annotations=annotations))
    record = fetch(bw, record_id)
    assert (record["scores"], record["annotations"]) == (scores, annotations)


def test_every_timestamp_of_a_record_carries_a_timezone(bw: Client) -> None:
    """§1: `occurred_at` "timezone required"; `created_at`, `last_accessed` and `retracted_at` are
    instants too (returned with an offset, so no reader guesses a zone)."""
    (record_id,) = written_ids(bw, rec(occurred_at="2026-05-01T12:00:00+09:00"))
    assert retract(bw, record_id).status_code == 200
    record = fetch(bw, record_id)
    for name in ("occurred_at", "created_at", "last_accessed", "retracted_at"):
        assert datetime.fromisoformat(record[name]).utcoffset() is not None, name
    assert datetime.fromisoformat(record["occurred_at"]) == datetime.fromisoformat(
        "2026-05-01T03:00:00+00:00"
    )
    assert datetime.fromisoformat(record["retracted_at"]) >= datetime.fromisoformat(record["created_at"])


# --- derived records ------------------------------------------------------------------------------


def test_depth_is_one_plus_the_deepest_source(bw: Client) -> None:
    """§1: `depth` — "0 for ingested evidence; a derived record is `1 + max(depth of
    derived_from)`"; `derived_from` "non-empty exactly when depth > 0"."""
    a, b = written_ids(bw, rec(text="a"), rec(text="b"))
    c = one_id(bw, rec(text="c", derived_from=[a]))
    d = one_id(bw, rec(text="d", derived_from=[c, b]))
    e = one_id(bw, rec(text="e", derived_from=[d, a]))
    depths = [fetch(bw, i)["depth"] for i in (a, b, c, d, e)]
    assert depths == [0, 0, 1, 2, 3]
    assert fetch(bw, d)["derived_from"] == [c, b]
    assert fetch(bw, a)["derived_from"] == []


def test_derived_from_an_empty_list_is_depth_zero(bw: Client) -> None:
    """§1: `derived_from` is "non-empty exactly when depth > 0"."""
    stored = fetch(bw, one_id(bw, rec(derived_from=[])))
    assert stored["depth"] == 0 and stored["derived_from"] == []


def test_derived_from_across_collections(bw: Client) -> None:
    """§1: `derived_from` — "same workspace, must exist" (any collection)."""
    source = one_id(bw, fact("f"))
    stored = fetch(bw, one_id(bw, rec("bw_events", derived_from=[source], run_id="r1")))
    assert stored["depth"] == 1 and stored["run_id"] == "r1"


def test_every_missing_parent_is_listed(bw: Client, bw_db: Engine, bw_ws: Tenant) -> None:
    """§1: `derived_from` ids "same workspace, must exist"; §3: "any invalid record → `422`
    listing every problem by index, and nothing is written"."""
    (real,) = written_ids(bw, rec(text="evidence"))
    missing = [str(uuid4()), str(uuid4())]
    response = post_records(bw, rec(), rec(derived_from=[missing[0], real, missing[1]]))
    problems = locs(response)
    assert len(problems) == 2
    assert all(loc[:3] == ["records", 1, "derived_from"] for loc in problems)
    err_text = " ".join(d["msg"] for d in error(post_records(bw, rec(derived_from=missing)), 422)["details"])
    assert all(parent in err_text for parent in missing)
    assert count_records(bw_db, bw_ws) == 1


def test_depth_follows_the_deepest_parent_across_collections(bw: Client) -> None:
    """§1: "a derived record is `1 + max(depth of derived_from)`" — an automatic link (depth of
    its node + 1) is a parent like any other."""
    (node,) = written_ids(bw, rec("bw_nodes", key="n", content={"depends_on": ["m"]}))
    (link_hit,) = walk(bw, "n")["hits"]
    (summary,) = written_ids(bw, rec(text="summary", derived_from=[node, link_hit["id"]]))
    record = fetch(bw, summary)
    assert (record["depth"], record["derived_from"]) == (2, [node, link_hit["id"]])


# --- GET /records/{id} ----------------------------------------------------------------------------


def test_get_record_shows_exactly_the_designed_fields(bw: Client) -> None:
    (record_id,) = written_ids(
        bw,
        rec(
            text="hello",
            key="k",
            content={"a": 1},
            scores={"importance": 2},
            annotations={"p": [1]},
            run_id="r",
            occurred_at="2026-01-01T00:00:00Z",
        ),
    )
    record = fetch(bw, record_id)
    assert set(record) == RECORD_FIELDS
    assert record["id"] == record_id
    assert (record["collection"], record["collection_version"], record["entity"], record["type"]) == (
        "bw_plain",
        1,
        "cust-1",
        "note",
    )
    assert (record["key"], record["text"], record["content"]) == ("k", "hello", {"a": 1})
    assert (record["scores"], record["annotations"]) == ({"importance": 2}, {"p": [1]})
    assert (record["status"], record["depth"], record["derived_from"], record["run_id"]) == (
        "active",
        0,
        [],
        "r",
    )
    assert (record["processing"], record["processing_error"], record["current"]) == ("ready", None, True)
    assert (record["retracted_at"], record["retraction_reason"]) == (None, None)
    assert record["occurred_at"].startswith("2026-01-01T00:00:00")


@pytest.mark.parametrize("suffix", ["", "/retract", "/approve", "/reject"])
def test_another_workspaces_record_is_404_exactly_like_an_unknown_one(
    bw: Client, bw_other: Client, suffix: str
) -> None:
    (foreign,) = written_ids(bw_other, rec(status="draft"))
    unknown = str(uuid4())
    method = bw.get if not suffix else bw.post
    kwargs: dict[str, Any] = {"json": {"reason": "no"}} if suffix in ("/retract", "/reject") else {}
    foreign_err = error(method(f"/records/{foreign}{suffix}", **kwargs), 404, "not_found")
    unknown_err = error(method(f"/records/{unknown}{suffix}", **kwargs), 404, "not_found")
    assert foreign_err["message"].replace(foreign, "ID") == unknown_err["message"].replace(unknown, "ID")
    assert foreign_err["details"] == unknown_err["details"]
    # and nothing happened to the foreign record
    assert fetch(bw_other, foreign)["retracted_at"] is None
    assert fetch(bw_other, foreign)["status"] == "draft"


def test_a_malformed_record_id_is_404(bw: Client) -> None:
    error(bw.get("/records/not-a-uuid"), 404, "not_found")


def test_the_search_hit_and_the_record_show_the_same_timestamps(bw: Client) -> None:
    (record_id,) = written_ids(bw, rec(text="stamp", occurred_at="2026-07-01T10:22:00Z"))
    body = {
        "mode": "recent",
        "scope": {"collections": ["bw_plain"]},
        "include": ["occurred_at", "created_at"],
    }
    (hit,) = bw.post("/search", json=body).get_json()["hits"]
    record = fetch(bw, record_id)
    assert (hit["occurred_at"], hit["created_at"]) == (record["occurred_at"], record["created_at"])


def test_get_record_returns_the_whole_record_with_defaults(bw: Client) -> None:
    """§3: "`GET /records/{id}` — the whole record: every field ... plus `processing`,
    `processing_error`, `current` (boolean), `retracted_at` and `retraction_reason`." """
    record_id = one_id(bw, rec(text="hello", entity="cust-9"))
    stored = fetch(bw, record_id)
    assert set(stored) == RECORD_FIELDS
    expected = {
        "id": record_id,
        "collection": "bw_plain",
        "collection_version": 1,
        "entity": "cust-9",
        "type": "note",
        "key": None,
        "text": "hello",
        "status": "active",
        "depth": 0,
        "derived_from": [],
        "run_id": None,
        "processing": "ready",
        "processing_error": None,
        "current": True,
        "retracted_at": None,
        "retraction_reason": None,
        "scores": {},
        "annotations": {},
    }
    assert {k: stored[k] for k in expected} == expected
    assert stored["content"] in ({}, None)


@pytest.mark.parametrize("bad", ["not-a-uuid", "12345", "0b9e3c52-6f4e-4c1d-9a57-3f0d2b1e8c44"])
def test_get_an_unknown_record_is_404(bw: Client, bad: str) -> None:
    """§3: status codes "plus ... `404`"; an unknown id is `404`."""
    error(bw.get(f"/records/{bad}"), 404)


def test_record_routes_accept_the_canonical_uuid_in_any_case(bw: Client) -> None:
    (record_id,) = written_ids(bw, rec())
    assert fetch(bw, record_id.upper())["id"] == record_id
    assert UUID(record_id)
