"""What comes back (spec "What comes back"): the response and hit keys per mode, each `include`
value, `fields` and `annotations` read with each record's own collection version, JSON text
shortened from the middle to 2,000 characters, and only what was asked.
"""

from __future__ import annotations

import math
from datetime import datetime
from typing import Any

import pytest

from tests.blackbox.support import INCLUDES
from tests.blackbox.support import MODES
from tests.blackbox.support import SCORED_RANKING
from tests.blackbox.support import ids
from tests.blackbox.support import note
from tests.blackbox.support import recent
from tests.blackbox.support import rejected_at
from tests.blackbox.support import rejects
from tests.blackbox.support import search
from tests.blackbox.support import vec
from tests.blackbox.support import write
from tests.conftest import Client
from tests.helpers import fetch

# --- the contract, per mode -----------------------------------------------------------------------


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


def test_hits_keep_their_order_by_rank(sx: Client) -> None:
    written = write(sx, *(note(f"n{i}", scores={"importance": i}) for i in range(5)))
    body = search(sx, {"mode": "recent", "rank": ["score", "importance"]})
    assert ids(body) == written[::-1]


RANK_EXPRESSION = {"kind": "rank_expression", **SCORED_RANKING}
SCORED_HIT = {"id", "rank", "score", "rank_score"}
STRUCTURED = {"kind": "structured", "scored": False}
STRUCTURED_HIT = {"id", "rank", "score"}


def is_structured(body: dict[str, Any]) -> bool:
    return body.get("mode") == "structured"


@pytest.mark.usefixtures("mode_corpus")
@pytest.mark.parametrize(("query", "proposed"), MODES)
def test_single_search_contract_per_mode(sx: Client, query: dict[str, Any], proposed: int) -> None:
    """ "`score` … `null` for structured mode"; "`rank_score` … absent for structured mode";
    "`source_ranks` … only when combining searches"; "`ranking` … `kind` is `rank_expression`,
    `llm_judge`, `rrf`, or `structured`"; "`backend` Diagnostics per search: `{name, layout,
    candidate_count}`, plus `source` when combining searches"; "`rendered` `null` when `render:
    false`"; "`truncated` … stays `false` when you did not ask for rendering"; "`profiles` The
    search setups actually used". Hybrid's three proposal lists are "interleaved and deduplicated",
    so its count is the distinct records, not the sum of the lists."""
    body = search(sx, query)
    assert body.keys() == TOP_KEYS
    structured = is_structured(query)
    assert body["ranking"] == (STRUCTURED if structured else RANK_EXPRESSION)
    assert body["backend"] == {"name": "pg", "layout": None, "candidate_count": proposed}
    assert body["profiles"] == ["pg_default"]
    assert body["rendered"] is None and body["truncated"] is False
    assert [h["rank"] for h in body["hits"]] == list(range(1, len(body["hits"]) + 1))
    for hit in body["hits"]:
        assert hit.keys() == (STRUCTURED_HIT if structured else SCORED_HIT)
        assert isinstance(hit["rank"], int) and not isinstance(hit["rank"], bool)
        if structured:
            assert hit["score"] is None
        else:
            assert 0.0 <= hit["score"] <= 1.0 and isinstance(hit["rank_score"], float)
    if not structured:
        assert body["hits"][0]["score"] == 1.0


@pytest.mark.usefixtures("mode_corpus")
@pytest.mark.parametrize(("query", "proposed"), MODES)
def test_render_turns_rendered_into_a_string_in_every_mode(
    sx: Client, query: dict[str, Any], proposed: int
) -> None:
    """ "`rendered` `null` when `render: false`; otherwise the compact rows"; "Separate from
    `hits`": rendering changes neither the hits nor the ranking contract."""
    plain = search(sx, query)
    body = search(sx, {**query, "render": True})
    assert isinstance(body["rendered"], str) and body["truncated"] is False
    assert body["rendered"].count("[id=") == len(body["hits"]) == len(plain["hits"])
    assert ids(body) == ids(plain) and body["ranking"] == plain["ranking"]
    assert [h.keys() for h in body["hits"]] == [h.keys() for h in plain["hits"]]
    assert body["backend"]["candidate_count"] == proposed


@pytest.mark.usefixtures("mode_corpus")
@pytest.mark.parametrize(("query", "proposed"), MODES)
def test_include_fields_and_render_add_only_what_was_asked(
    sx: Client, query: dict[str, Any], proposed: int
) -> None:
    """ "Optional per-result values … each appears only when you asked for it"; "There is no
    rank_score either [in structured mode]" — asking for values adds them, never `rank_score` or
    `source_ranks`."""
    name = "channel"  # returnable in both sx_notes and sx_vec
    body = search(sx, {**query, "include": ["entity", "type"], "fields": [name], "render": True})
    base = STRUCTURED_HIT if is_structured(query) else SCORED_HIT
    for hit in body["hits"]:
        assert hit.keys() == base | {"entity", "type", "fields"}
        assert hit["fields"] == {name: None} and hit["entity"] == "e1" and hit["type"] == "note"
    assert body["backend"]["candidate_count"] == proposed


BASE_KEYS = {"id", "rank", "score", "rank_score"}


def test_response_level_values(sx: Client) -> None:
    """Response: hits, ranking, rendered (null without render), truncated (false without render),
    backend `{name, layout, candidate_count}`, profiles sorted; rerank / graph_boost only when asked.
    Each hit carries id, rank, score, rank_score and nothing else unless asked."""
    write(sx, note("a"), note("b"), note("c"))
    body = recent(sx)
    assert set(body) == {"hits", "ranking", "rendered", "truncated", "backend", "profiles"}
    assert body["rendered"] is None and body["truncated"] is False
    assert body["profiles"] == ["pg_default"]
    backends = body["backend"] if isinstance(body["backend"], list) else [body["backend"]]
    assert len(backends) == 1
    assert {"name", "layout", "candidate_count"} <= set(backends[0])
    assert "source" not in backends[0]
    assert backends[0]["candidate_count"] == 3
    for position, hit in enumerate(body["hits"], start=1):
        assert set(hit) == BASE_KEYS
        assert hit["rank"] == position
        assert isinstance(hit["id"], str) and len(hit["id"]) == 36
        assert 0.0 <= hit["score"] <= 1.0
        assert math.isfinite(hit["rank_score"])


def test_a_text_search_matching_nothing_is_a_success(sx: Client) -> None:
    """ "An empty list is a successful search that matched nothing.\""""
    body = search(sx, {"mode": "text", "q": "nothing", "scope": NOTES})
    assert body["hits"] == [] and body["truncated"] is False


def test_direct_single_search_backend_entry_has_the_three_diagnostics(sx: Client) -> None:
    write(sx, vec("alpha"))
    body = search(sx, {"q": "alpha", "mode": "vector", "scope": {"collections": ["sx_vec"]}})
    backend = body["backend"]
    entries = backend if isinstance(backend, list) else [backend]
    assert len(entries) == 1
    assert set(entries[0]) == {"name", "layout", "candidate_count"}
    assert entries[0]["name"] == "pg" and entries[0]["layout"] is None


# --- include --------------------------------------------------------------------------------------


def test_include_accepts_exactly_the_documented_names(sx: Client) -> None:
    write(sx, note())
    (hit,) = search(sx, {"mode": "recent", "include": INCLUDES})["hits"]
    assert set(INCLUDES) <= hit.keys()


@pytest.mark.parametrize("name", ["content", "annotations", "fields", "last_accessed", "Text", "id"])
def test_include_rejects_other_names(sx: Client, name: str) -> None:
    rejects(sx, {"mode": "recent", "include": [name]}, "include", 0)


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


@pytest.mark.parametrize("name", INCLUDES)
def test_each_include_copies_stored_metadata(sx: Client, name: str) -> None:
    """include: "extra information to attach to each result", each value as the record stores it."""
    (source,) = write(sx, note("base"))
    (record,) = write(
        sx,
        note(
            "derived text",
            type="fact",
            key="slot",
            scores={"importance": 4},
            occurred_at="2026-07-01T12:22:00+02:00",
            derived_from=[source],
            run_id="run-7",
        ),
    )
    stored = fetch(sx, record)
    body = recent(sx, include=[name], scope={**NOTES, "keyed": True})
    (hit,) = body["hits"]
    assert set(hit) == BASE_KEYS | {name}
    if name in ("occurred_at", "created_at"):
        assert hit[name] == stored[name]
        assert "+" in hit[name] or hit[name].endswith("Z")
    else:
        assert hit[name] == stored[name]
    expected = {"collection": "sx_notes", "type": "fact", "key": "slot", "depth": 1, "status": "active"}
    if name in expected:
        assert hit[name] == expected[name]
    if name == "run_id":
        assert hit[name] == "run-7"


def test_include_key_is_null_for_an_event_and_run_id_null_when_absent(sx: Client) -> None:
    """ "`key` The name of the fact slot for keyed records, otherwise null"; run_id "or null"."""
    write(sx, note("event"))
    (hit,) = recent(sx, include=["key", "run_id", "depth"])["hits"]
    assert hit["key"] is None and hit["run_id"] is None and hit["depth"] == 0


def test_include_text_is_middle_shortened_to_2000_and_not_escaped(sx: Client) -> None:
    """ "The record text, shortened from the middle to at most 2,000 characters with a
    `[...] truncated [...]` marker. Unlike rendered rows, this JSON value is not prompt-escaped.\""""
    long = "<b>&" + "a" * 3000 + "z" * 3000 + "&</b>"
    write(sx, note(long), note("short <i> & </i>"))
    hits = recent(sx, include=["text"])["hits"]
    assert hits[0]["text"] == "short <i> & </i>"
    text = hits[1]["text"]
    assert len(text) <= 2000
    assert "[...] truncated [...]" in text
    assert text.startswith("<b>&aaa") and text.endswith("zzz&</b>")


def test_include_text_of_exactly_2000_characters_is_whole(sx: Client) -> None:
    """ "shortened ... to at most 2,000 characters": 2,000 is kept whole."""
    text = "w" * 2000
    write(sx, note(text))
    assert recent(sx, include=["text"])["hits"][0]["text"] == text


def test_include_status_follows_scope_status(sx: Client) -> None:
    """include status: "`active` or `draft`; which values can appear follows `scope.status`.\""""
    write(sx, note("a"), note("d", status="draft"))
    body = search(sx, {"mode": "recent", "scope": {**NOTES, "status": "all"}, "include": ["status"]})
    assert sorted(hit["status"] for hit in body["hits"]) == ["active", "draft"]
    body = search(sx, {"mode": "recent", "scope": {**NOTES, "status": "draft"}, "include": ["status"]})
    assert [hit["status"] for hit in body["hits"]] == ["draft"]


@pytest.mark.parametrize("name", ["content", "fields", "last_accessed", "Text"])
def test_include_refuses_a_name_outside_the_list(sx: Client, name: str) -> None:
    """include: "Any of: text, scores, collection, ... run_id.\""""
    rejected_at(sx, {"mode": "recent", "include": [name]}, "include")


# --- fields and annotations -----------------------------------------------------------------------


def test_fields_and_annotations_take_at_most_16_names(sx: Client) -> None:
    names = [f"f{i}" for i in range(17)]
    rejects(sx, {"mode": "recent", "scope": NOTES, "fields": names}, "fields")
    rejects(sx, {"mode": "recent", "scope": NOTES, "annotations": names}, "annotations")
    rejects(sx, {"mode": "recent", "scope": NOTES, "fields": ["channel", "channel"]}, "fields")
    rejects(sx, {"mode": "recent", "scope": NOTES, "annotations": ["sx_region", "sx_region"]}, "annotations")


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


def test_fields_values_fallback_and_null(sx: Client) -> None:
    """ "fields: [name, ...] adds a nested fields object ... including any declared fallback paths; a
    value that is not present comes back as null.\""""
    direct, fallback, absent = write(
        sx,
        note("d", content={"channel": "email", "amount": 2.5, "tags": ["x", "y"]}),
        note("f", content={"meta": {"channel": "call"}}),
        note("a"),
    )
    body = recent(sx, fields=["channel", "amount", "tags"])
    by_id = {hit["id"]: hit for hit in body["hits"]}
    assert by_id[direct]["fields"] == {"channel": "email", "amount": 2.5, "tags": ["x", "y"]}
    assert by_id[fallback]["fields"] == {"channel": "call", "amount": None, "tags": None}
    assert by_id[absent]["fields"] == {"channel": None, "amount": None, "tags": None}
    assert set(by_id[direct]) == BASE_KEYS | {"fields"}


def test_fields_read_with_each_records_own_collection_version(sx: Client) -> None:
    """ "Each value is read using the declaration stored with that record's exact collection version"."""
    base = {"collection": "sx_versioned", "entity": "e1", "type": "note"}
    old, new = write(
        sx,
        {**base, "collection_version": 1, "text": "v1", "content": {"label": "one", "meta": {"label": "no"}}},
        {**base, "text": "v2", "content": {"label": "no", "meta": {"label": "two"}}},
    )
    body = search(sx, {"mode": "recent", "scope": {"collections": ["sx_versioned"]}, "fields": ["label"]})
    by_id = {hit["id"]: hit["fields"] for hit in body["hits"]}
    assert by_id == {old: {"label": "one"}, new: {"label": "two"}}


@pytest.mark.parametrize(
    ("scope", "fields"),
    [
        pytest.param(NOTES, ["secret"], id="filterable-not-returnable"),
        pytest.param(NOTES, ["label"], id="not-returnable"),
        pytest.param(NOTES, ["undeclared"], id="undeclared"),
        pytest.param({"collections": ["sx_notes", "sx_extra"]}, ["amount"], id="not-in-every-collection"),
        pytest.param({"collections": ["sx_versioned"]}, ["extra"], id="not-in-every-version"),
    ],
)
def test_fields_must_be_returnable_everywhere_in_scope(
    sx: Client, scope: dict[str, Any], fields: list[str]
) -> None:
    """ "The field must be marked returnable in every collection in scope.\""""
    rejected_at(sx, {"mode": "recent", "scope": scope, "fields": fields}, "fields")


def test_fields_in_every_collection_in_scope_is_accepted(sx: Client) -> None:
    """`channel` is returnable in both sx_notes and sx_extra."""
    write(sx, note(content={"channel": "x"}))
    body = search(
        sx, {"mode": "recent", "scope": {"collections": ["sx_notes", "sx_extra"]}, "fields": ["channel"]}
    )
    assert body["hits"][0]["fields"] == {"channel": "x"}


def test_annotations_return_stored_values(sx: Client) -> None:
    """ "annotations: [processor, ...] similarly adds a nested annotations object holding the stored
    value"; the enrichment "must be required by every collection in scope".\""""
    record = {
        "collection": "sx_tagged",
        "entity": "e1",
        "type": "note",
        "text": "tagged",
        "annotations": {"sx_region": {"name": "eu"}},
        "scores": {"sx_rating": 4},
    }
    (rid,) = write(sx, record)
    scope = {"collections": ["sx_tagged"]}
    (hit,) = search(sx, {"mode": "recent", "scope": scope, "annotations": ["sx_region"]})["hits"]
    assert hit["id"] == rid
    assert hit["annotations"] == {"sx_region": {"name": "eu"}}
    assert set(hit) == BASE_KEYS | {"annotations"}


@pytest.mark.parametrize(
    ("scope", "names"),
    [
        pytest.param(NOTES, ["sx_region"], id="not-required-by-collection"),
        pytest.param({"collections": ["sx_tagged"]}, ["nope"], id="unknown-enrichment"),
        pytest.param({"collections": ["sx_tagged", "sx_notes"]}, ["sx_region"], id="not-in-every-collection"),
    ],
)
def test_annotations_must_be_required_everywhere(sx: Client, scope: dict[str, Any], names: list[str]) -> None:
    """ "The enrichment must be required by every collection in scope.\""""
    rejected_at(sx, {"mode": "recent", "scope": scope, "annotations": names}, "annotations")


def test_fields_accept_16_names_and_reject_17_or_duplicates(sx: Client) -> None:
    """ "Both lists accept at most 16 unique names.\""""
    rejected_at(sx, {"mode": "recent", "scope": NOTES, "fields": ["channel"] * 2}, "fields")
    rejected_at(sx, {"mode": "recent", "scope": NOTES, "fields": [f"f{i}" for i in range(17)]}, "fields")
    rejected_at(
        sx, {"mode": "recent", "scope": NOTES, "annotations": [f"a{i}" for i in range(17)]}, "annotations"
    )


def test_fields_are_checked_only_against_reachable_versions(sx: Client) -> None:
    """ "Every requested field must be returnable in all collection versions the search could reach":
    pinned to v2, `extra` (declared by v2 only) is allowed."""
    base = {"collection": "sx_versioned", "entity": "e1", "type": "note"}
    (new,) = write(sx, {**base, "text": "v2", "content": {"extra": "x"}})
    scope = {"collections": ["sx_versioned"], "collection_versions": {"sx_versioned": [2]}}
    (hit,) = search(sx, {"mode": "recent", "scope": scope, "fields": ["extra"]})["hits"]
    assert hit["id"] == new and hit["fields"] == {"extra": "x"}


def test_fields_with_an_empty_scope_must_fit_every_collection(sx: Client) -> None:
    """An empty scope reaches every ordinary collection; `amount` is returnable in sx_notes only."""
    rejected_at(sx, {"mode": "recent", "fields": ["amount"]}, "fields")
