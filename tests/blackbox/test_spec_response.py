"""Spec "What comes back": response keys, per-hit values, include, fields, annotations, sizes."""

from __future__ import annotations

from datetime import datetime
from typing import Any

import pytest

from tests.blackbox.conftest import ClientFactory
from tests.blackbox.support import INCLUDES
from tests.blackbox.support import SCORED_RANKING
from tests.blackbox.support import ids
from tests.blackbox.support import note
from tests.blackbox.support import rejects
from tests.blackbox.support import search
from tests.blackbox.support import write
from tests.conftest import Client
from tests.helpers import error

TOP_KEYS = {"hits", "ranking", "rendered", "truncated", "backend", "profiles"}


def test_single_search_response_keys(sx: Client) -> None:
    (record,) = write(sx, note("Maria confirmed the Q3 budget."))
    body = search(sx, {"mode": "text", "q": "budget"})
    assert body.keys() == TOP_KEYS
    (hit,) = body["hits"]
    assert hit.keys() == {"id", "rank", "score", "rank_score"}
    assert hit["id"] == record and hit["rank"] == 1 and hit["score"] == 1.0
    assert isinstance(hit["rank_score"], float)
    assert body["ranking"] == {"kind": "rank_expression", **SCORED_RANKING}
    assert body["rendered"] is None and body["truncated"] is False
    assert body["backend"] == {"name": "pg", "layout": None, "candidate_count": 1}
    assert body["profiles"] == ["pg_default"]


def test_an_empty_result_is_a_success(sx: Client) -> None:
    body = search(sx, {"mode": "text", "q": "nothing matches this"})
    assert body["hits"] == [] and body.keys() == TOP_KEYS
    assert body["backend"]["candidate_count"] == 0


NOTES = {"collections": ["sx_notes"]}


def test_structured_response(sx: Client) -> None:
    write(sx, note(content={"amount": 2}), note(content={"amount": 1}))
    body = search(sx, {"mode": "structured", "scope": NOTES, "order_by": [{"field": "amount"}]})
    assert body["ranking"] == {"kind": "structured", "scored": False}
    assert [h.keys() for h in body["hits"]] == [{"id", "rank", "score"}] * 2
    assert [(h["rank"], h["score"]) for h in body["hits"]] == [(1, None), (2, None)]


def test_rank_is_one_to_len_hits(sx: Client) -> None:
    write(sx, *(note(f"n{i}") for i in range(7)))
    assert [h["rank"] for h in search(sx, {"mode": "recent", "k": 5})["hits"]] == [1, 2, 3, 4, 5]


def test_every_include_value(sx: Client) -> None:
    (origin,) = write(sx, note("origin"))
    body = note(
        "Maria confirmed the Q3 budget.",
        entity="contact.maria",
        type="fact",
        key="budget",
        status="draft",
        derived_from=[origin],
        run_id="run-7",
        occurred_at="2026-07-01T12:22:00+02:00",
        scores={"importance": 7, "urgency": 0.5},
    )
    (record,) = write(sx, body)
    (hit,) = search(
        sx,
        {
            "mode": "recent",
            "scope": {"status": "draft"},
            "include": INCLUDES,
        },
    )["hits"]
    created = hit.pop("created_at")
    assert hit == {
        "id": record,
        "rank": 1,
        "score": 1.0,
        "rank_score": hit["rank_score"],
        "text": "Maria confirmed the Q3 budget.",
        "scores": {"importance": 7, "urgency": 0.5},
        "collection": "sx_notes",
        "collection_version": 1,
        "entity": "contact.maria",
        "type": "fact",
        "key": "budget",
        "status": "draft",
        "depth": 1,
        "occurred_at": "2026-07-01T10:22:00+00:00",
        "run_id": "run-7",
    }
    assert datetime.fromisoformat(created).utcoffset() is not None


def test_include_values_of_a_plain_event(sx: Client) -> None:
    write(sx, note("event"))
    (hit,) = search(sx, {"mode": "recent", "include": ["key", "run_id", "scores", "depth", "status"]})["hits"]
    assert (hit["key"], hit["run_id"], hit["scores"], hit["depth"], hit["status"]) == (
        None,
        None,
        {},
        0,
        "active",
    )


def test_only_requested_values_appear(sx: Client) -> None:
    write(sx, note())
    (hit,) = search(sx, {"mode": "recent", "include": ["entity"]})["hits"]
    assert hit.keys() == {"id", "rank", "score", "rank_score", "entity"}


@pytest.mark.parametrize(
    ("length", "expected_length"),
    [
        pytest.param(2000, 2000, id="at-limit"),
        pytest.param(2001, 2000, id="over"),
        pytest.param(30000, 2000, id="long"),
    ],
)
def test_text_is_middle_truncated_to_2000_characters(sx: Client, length: int, expected_length: int) -> None:
    text = "<" + "h" * ((length - 2) // 2) + "&" * (length - 2 - (length - 2) // 2) + ">"
    write(sx, note(text))
    (hit,) = search(sx, {"mode": "recent", "include": ["text"]})["hits"]
    value = hit["text"]
    assert len(value) == expected_length
    if length == expected_length:
        assert value == text
    else:
        assert "[...] truncated [...]" in value
        head, tail = value.split("[...] truncated [...]")
        assert text.startswith(head.rstrip()) and text.endswith(tail.lstrip())
        assert value.startswith("<h") and value.endswith("&>")  # the middle went, not an end
        assert abs(len(head) - len(tail)) <= 2


def test_json_text_is_not_prompt_escaped(sx: Client) -> None:
    write(sx, note("a <b> & c"))
    (hit,) = search(sx, {"mode": "recent", "include": ["text"]})["hits"]
    assert hit["text"] == "a <b> & c"


def test_fields_return_declared_values_with_null_for_absent(sx: Client) -> None:
    a, b = write(
        sx,
        note(
            "a",
            content={
                "channel": "email",
                "amount": 3,
                "tags": ["x"],
                "vip": True,
                "starts_at": "2026-07-01T12:00:00+02:00",
            },
        ),
        note("b", content={"meta": {"channel": "call"}}),
    )
    body = search(
        sx,
        {
            "mode": "recent",
            "scope": NOTES,
            "fields": ["channel", "amount", "tags", "vip", "starts_at", "count"],
        },
    )
    got = {hit["id"]: hit["fields"] for hit in body["hits"]}
    assert got[b] == {
        "channel": "call",
        "amount": None,
        "tags": None,
        "vip": None,
        "starts_at": None,
        "count": None,
    }
    assert got[a]["channel"] == "email" and got[a]["amount"] == 3 and got[a]["tags"] == ["x"]
    assert got[a]["vip"] is True and got[a]["count"] is None
    assert datetime.fromisoformat(got[a]["starts_at"]) == datetime.fromisoformat("2026-07-01T10:00:00+00:00")


def test_fields_are_read_with_each_records_own_collection_version(sx: Client) -> None:
    v1, v2 = write(
        sx,
        {
            "collection": "sx_versioned",
            "collection_version": 1,
            "entity": "e",
            "type": "note",
            "text": "a",
            "content": {"label": "top-level", "meta": {"label": "nested"}},
        },
        {
            "collection": "sx_versioned",
            "entity": "e",
            "type": "note",
            "text": "b",
            "content": {"label": "top-level", "meta": {"label": "nested"}},
        },
    )
    body = search(sx, {"mode": "recent", "scope": {"collections": ["sx_versioned"]}, "fields": ["label"]})
    assert {h["id"]: h["fields"] for h in body["hits"]} == {
        v1: {"label": "top-level"},
        v2: {"label": "nested"},
    }


def test_a_field_must_be_returnable_in_every_version_searched(sx: Client) -> None:
    scope = {"collections": ["sx_versioned"]}
    rejects(sx, {"mode": "recent", "scope": scope, "fields": ["extra"]}, "fields", 0)
    pinned = {**scope, "collection_versions": {"sx_versioned": [2]}}
    assert search(sx, {"mode": "recent", "scope": pinned, "fields": ["extra"]})["hits"] == []


@pytest.mark.parametrize("name", ["secret", "label", "nope"])
def test_unreturnable_fields_are_rejected(sx: Client, name: str) -> None:
    rejects(sx, {"mode": "recent", "scope": NOTES, "fields": [name]}, "fields", 0)


def test_annotations_return_each_enrichments_stored_value(sx: Client) -> None:
    """Spec: "annotations … adds a nested annotations object holding the stored value or null";
    an `llm_score` enrichment's value is stored in `scores` (design §1), the others' in
    `annotations`."""
    (record,) = write(
        sx,
        {
            "collection": "sx_tagged",
            "entity": "e",
            "type": "note",
            "text": "t",
            "annotations": {"sx_region": {"code": "eu"}},
            "scores": {"sx_rating": 4},
        },
    )
    body = search(
        sx,
        {
            "mode": "recent",
            "scope": {"collections": ["sx_tagged"]},
            "annotations": ["sx_region", "sx_rating"],
        },
    )
    (hit,) = body["hits"]
    assert hit["id"] == record
    assert hit["annotations"] == {"sx_region": {"code": "eu"}, "sx_rating": 4}


@pytest.mark.parametrize(
    ("scope", "name"),
    [
        pytest.param({"collections": ["sx_notes"]}, "sx_region", id="not-required"),
        pytest.param({"collections": ["sx_tagged", "sx_notes"]}, "sx_region", id="not-required-everywhere"),
        pytest.param({"collections": ["sx_tagged"]}, "sx_unknown", id="unknown"),
        pytest.param({}, "sx_region", id="empty-scope"),
    ],
)
def test_annotations_must_be_required_by_every_collection(
    sx: Client, scope: dict[str, Any], name: str
) -> None:
    rejects(sx, {"mode": "recent", "scope": scope, "annotations": [name]}, "annotations", 0)


def test_fields_and_annotations_objects_appear_only_when_asked(sx: Client) -> None:
    write(sx, note())
    (hit,) = search(sx, {"mode": "recent", "scope": NOTES, "fields": ["channel"]})["hits"]
    assert hit["fields"] == {"channel": None} and "annotations" not in hit


def test_profiles_are_sorted_and_deduplicated(sx: Client) -> None:
    body = search(
        sx,
        {
            "q": "x",
            "sources": [
                {"name": "a", "mode": "text", "scope": NOTES},
                {"name": "b", "mode": "recent", "scope": {"collections": ["sx_extra"]}},
            ],
            "fuse": {"kind": "rrf"},
        },
    )
    assert body["profiles"] == ["pg_default"]


def test_response_too_large_is_409_and_drops_nothing(sx: Client, sx_with: ClientFactory) -> None:
    write(sx, *(note("x" * 1500) for _ in range(10)))
    small = sx_with(max_response_bytes=4000)
    err = error(
        small.post("/search", json={"mode": "recent", "include": ["text"]}), 409, "response_too_large"
    )
    assert err["message"]
    assert len(search(small, {"mode": "recent", "k": 1, "include": ["text"]})["hits"]) == 1


def test_response_too_large_applies_to_views(sx: Client, sx_with: ClientFactory) -> None:
    write(sx, *(note("budget " + "x" * 1500, entity="big") for _ in range(10)))
    small = sx_with(max_response_bytes=2000)
    response = small.post("/views/sx_context/query", json={"entity": "big", "task": "budget"})
    error(response, 409, "response_too_large")


def test_hits_keep_their_order_by_rank(sx: Client) -> None:
    written = write(sx, *(note(f"n{i}", scores={"importance": i}) for i in range(5)))
    body = search(sx, {"mode": "recent", "rank": ["score", "importance"]})
    assert ids(body) == written[::-1]
