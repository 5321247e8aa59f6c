"""Text is characters (spec and design limits, "The query, field by field").

A query text is words, never a query language: tsquery operators and punctuation in `q` are
characters like any other, and a search for them answers 200. Stored text comes back exactly as
written. Every limit the documents give in characters (`q`, a record's `text` and `entity`, the
2,000-character JSON text) counts characters, so a character outside the Basic Multilingual Plane
(one character, two UTF-16 units, four UTF-8 bytes) counts once.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.blackbox.conftest import ClientFactory
from tests.blackbox.design_support import one_id
from tests.blackbox.design_support import rec
from tests.blackbox.support import has_lone_surrogate
from tests.blackbox.support import invalid
from tests.blackbox.support import note
from tests.blackbox.support import rejects
from tests.blackbox.support import search
from tests.blackbox.support import vec
from tests.blackbox.support import write
from tests.conftest import Client
from tests.helpers import fetch
from tests.helpers import locs
from tests.helpers import ok
from tests.helpers import post_records
from tests.helpers import view_query
from tests.helpers import written_ids

# --- the query text is words, whatever characters it holds ----------------------------------------


NOTES = {"collections": ["sx_notes"]}


def text_hits(client: Client, q: str, **extra: Any) -> list[str]:
    """The ids a `text` search of `sx_notes` for `q` returns (expecting 200)."""
    return [hit["id"] for hit in search(client, {"q": q, "mode": "text", "scope": NOTES, **extra})["hits"]]


@pytest.mark.parametrize(
    "q",
    [
        pytest.param("budget & plan", id="and"),
        pytest.param("budget | plan", id="or"),
        pytest.param("!budget", id="not"),
        pytest.param("budget:*", id="prefix"),
        pytest.param("budget:A", id="weight"),
        pytest.param("budget:*AB", id="prefix-weights"),
        pytest.param("(budget)", id="parentheses"),
        pytest.param("budget <-> plan", id="followed-by"),
        pytest.param("budget <2> plan", id="distance"),
        pytest.param("'budget'", id="single-quotes"),
        pytest.param('"budget"', id="double-quotes"),
        pytest.param("budget'", id="unbalanced-quote"),
        pytest.param("budget\\", id="trailing-backslash"),
        pytest.param("\\budget", id="leading-backslash"),
        pytest.param("C:\\Users\\budget", id="windows-path"),
        pytest.param("budget, plan; (draft)", id="commas"),
        pytest.param("50% budget", id="percent"),
        pytest.param("budget_%", id="like-wildcards"),
        pytest.param("-budget", id="websearch-minus"),
        pytest.param("budget OR plan", id="websearch-or"),
        pytest.param("budget\x01\x7f", id="control-characters"),
        pytest.param("budget 😀 ‏שלום", id="emoji-and-rtl"),
        pytest.param("x" * 3000 + " budget", id="very-long-word"),
    ],
)
def test_tsquery_syntax_in_q_is_plain_text(sx: Client, q: str) -> None:
    """Spec, Choosing a search mode: `text` is "Find records containing these words", and `q` is
    "the query text": characters with a meaning in PostgreSQL's tsquery syntax are not operators
    (no 422, no 500), and the record holding the query's word is found."""
    (record,) = write(sx, note("the budget plan was approved"))
    write(sx, note("an unrelated remark"))
    assert text_hits(sx, q) == [record]


@pytest.mark.parametrize(
    ("text", "q"),
    [
        pytest.param("see http://x.com/p?q='x'&r=1 today", "http://x.com/p?q='x'&r=1", id="url-with-quotes"),
        pytest.param("mail o'neil@x.com now", "o'neil@x.com", id="email-after-apostrophe"),
        pytest.param("budget:* is literal", "budget:*", id="prefix-syntax-in-both"),
        pytest.param("it's 'quoted' \\ and \"double\"", "'quoted'", id="quotes-in-both"),
        pytest.param("rate 1.2'3 here", "1.2'3", id="number-and-quote"),
    ],
)
def test_records_holding_tsquery_syntax_are_found_by_it(sx: Client, text: str, q: str) -> None:
    """Spec: `text` is "Find records containing these words": a record whose text holds quotes,
    URLs or operator characters is written (never a 500) and found by a query holding the same
    text."""
    (record,) = write(sx, note(text))
    write(sx, note("nothing in common"))
    assert text_hits(sx, q) == [record]


WIDE = "😀"
"""One character outside the Basic Multilingual Plane: two UTF-16 units, four UTF-8 bytes."""


@pytest.mark.parametrize(
    "q",
    [
        pytest.param("the", id="one-stop-word"),
        pytest.param("the of and a", id="stop-words"),
        pytest.param("&", id="ampersand"),
        pytest.param("!!!", id="bangs"),
        pytest.param("()", id="parentheses"),
        pytest.param("<->", id="followed-by"),
        pytest.param(":*", id="prefix"),
        pytest.param("'", id="quote"),
        pytest.param("\\", id="backslash"),
        pytest.param("...", id="dots"),
        pytest.param(WIDE, id="emoji"),
        pytest.param("\u200b", id="zero-width-space"),
    ],
)
@pytest.mark.parametrize("mode", ["text", "hybrid", "vector"])
def test_a_q_without_indexable_words_is_a_successful_search(sx: Client, q: str, mode: str) -> None:
    """Spec: "vector, text, and hybrid all require a non-empty query string q" (this one is not
    empty), and Response-level values: "An empty list is a successful search that matched
    nothing" — so whatever such a query finds, it is a 200 with only the workspace's records."""
    written = set(write(sx, vec("the budget plan"), vec("and of the")))
    body = search(sx, {"q": q, "mode": mode, "scope": {"collections": ["sx_vec"]}})
    assert {hit["id"] for hit in body["hits"]} <= written


@pytest.mark.parametrize(
    "q",
    [
        pytest.param("budget & plan", id="ampersand"),
        pytest.param("budget%plan", id="percent"),
        pytest.param("budget+plan", id="plus"),
        pytest.param("budget#plan", id="hash"),
        pytest.param("budget=plan?k=1", id="equals-question"),
        pytest.param("budget 😀 שלום", id="non-ascii"),
    ],
)
@pytest.mark.parametrize("route", ["/search", "/context"])
def test_get_routes_take_any_characters_in_q(sx: Client, route: str, q: str) -> None:
    """Spec: GET /search takes "required `q` plus optional `entity`, `collection`, and `k`"; a
    URL-encoded `&`, `=` or `?` inside `q` is part of the query text, not another parameter."""
    (record,) = write(sx, vec("budget plan"))
    response = sx.get(route, query_string={"q": q})
    assert response.status_code == 200, response.get_data(as_text=True)
    if route == "/search":
        assert record in [hit["id"] for hit in response.get_json()["hits"]]
    else:
        assert f"[id={record}]" in response.get_data(as_text=True)


def test_q_of_many_distinct_words_finds_a_record_holding_the_last(sx: Client) -> None:
    """Spec: `q` is "the query text, up to 8,192 characters by default"; `text` finds "records
    containing these words" — any of them, however many the query holds."""
    q = " ".join(f"w{i}" for i in range(1500))
    assert len(q) <= 8192
    (record,) = write(sx, note("only w1499 is here"))
    assert text_hits(sx, q) == [record]


@pytest.mark.parametrize("raw", [False, True], ids=["ascii-json", "utf8-json"])
def test_q_with_a_surrogate_pair_escape_is_that_character(sx_with: ClientFactory, raw: bool) -> None:
    """A JSON escape pair `\\ud83d\\ude00` is one character (RFC 8259 §7): as `q` it counts once
    against MAX_QUERY_CHARS ("up to 8,192 characters")."""
    q = WIDE * 3 if raw else "\\ud83d\\ude00" * 3
    small = sx_with(max_query_chars=3)
    data = f'{{"q": "{q}", "mode": "text"}}'.encode()
    assert ok(small.post("/search", data=data, headers={"Content-Type": "application/json"}))["hits"] == []


@pytest.mark.parametrize("route", ["/search", "/context"])
def test_get_routes_count_q_in_characters(sx_with: ClientFactory, route: str) -> None:
    """Deployment limits: `MAX_QUERY_CHARS` is the "Maximum length of the query text `q`", in
    characters: a percent-encoded emoji (12 bytes of URL) counts once."""
    small = sx_with(max_query_chars=4)
    response = small.get(route, query_string={"q": WIDE * 4, "collection": "sx_vec"})
    assert response.status_code == 200, response.get_data(as_text=True)
    invalid(small.get(route, query_string={"q": WIDE * 5, "collection": "sx_vec"}), "query", "q")


# --- stored text comes back exactly as written ----------------------------------------------------


ODD_TEXTS = [
    pytest.param("line one\r\nline two\n\tindented", id="line-breaks-and-tab"),
    pytest.param(WIDE * 3 + " and 👩‍👩‍👧 family", id="emoji-and-zwj-sequence"),
    pytest.param("cafe\u0301 ñ vs caf\u00e9", id="combining-mark-not-normalised"),
    pytest.param("a\u200bb\u200cc\u200dd\u2060e", id="zero-width-characters"),
    pytest.param("שלום עולם \u202eevil\u202c مرحبا", id="rtl-and-bidi-controls"),
    pytest.param("\ufeffbom first", id="byte-order-mark"),
    pytest.param("noncharacters \uffff \U0010ffff", id="noncharacters"),
    pytest.param("back\\slash \\\\ \\u0026 \\n", id="backslashes-and-escape-lookalikes"),
    pytest.param("nbsp\u00a0here\u2028ls\u2029ps", id="unicode-spaces"),
    pytest.param("'single' \"double\" `back` & < > <records>", id="quotes-and-markup"),
    pytest.param("budget & plan | !x :* <-> (y)", id="tsquery-syntax"),
    pytest.param("  padded  ", id="surrounding-spaces"),
]


def hit_text(client: Client) -> str:
    """The JSON `text` of the only record a `recent` search finds."""
    (hit,) = search(client, {"mode": "recent", "include": ["text"]})["hits"]
    return str(hit["text"])


@pytest.mark.parametrize("text", ODD_TEXTS)
@pytest.mark.parametrize("raw", [False, True], ids=["ascii-json", "utf8-json"])
def test_text_is_read_back_exactly(sx: Client, text: str, raw: bool) -> None:
    """Design §1 Records: `text` is "the record text"; `GET /records/{id}` returns "every field of
    the records table", and a search's `include: [text]` gives "The record text" (under 2,000
    characters, so not shortened) and "this JSON value is not prompt-escaped"."""
    batch = {"records": [note(text)]}
    if raw:
        body = json.dumps(batch, ensure_ascii=False).encode()
        response = sx.post("/records?wait=true", data=body, headers={"Content-Type": "application/json"})
    else:
        response = post_records(sx, note(text), query="?wait=true")
    assert response.status_code == 201, response.get_data(as_text=True)
    record = response.get_json()["records"][0]["id"]
    assert fetch(sx, record)["text"] == text
    assert hit_text(sx) == text


@pytest.mark.parametrize(
    "escaped",
    [
        pytest.param("\\ud800", id="lone-high"),
        pytest.param("a\\udfffb", id="lone-low"),
        pytest.param("\\ude00\\ud83d", id="reversed-pair"),
        pytest.param("\\ud83d\\ud83d", id="two-highs"),
    ],
)
def test_a_lone_surrogate_in_text_is_422_at_the_text(sx: Client, escaped: str) -> None:
    """Design §3: "any invalid record → 422 listing every problem by index, and nothing is
    written"; a lone surrogate is not a character, so no text holds one."""
    body = '{"records": [{"collection": "sx_notes", "entity": "e1", "type": "note", "text": "%s"}]}'
    response = sx.post("/records", data=body % escaped, headers={"Content-Type": "application/json"})
    invalid(response, "records", 0, "text")
    assert search(sx, {"mode": "recent"})["hits"] == []


def test_a_surrogate_pair_escape_is_stored_as_its_character(sx: Client) -> None:
    """RFC 8259 §7: `\\ud83d\\ude00` is the one character U+1F600; stored text is that character."""
    record = '{"collection": "sx_notes", "entity": "e1", "type": "note", "text": "x\\ud83d\\ude00y"}'
    body = f'{{"records": [{record}]}}'
    response = sx.post("/records?wait=true", data=body, headers={"Content-Type": "application/json"})
    assert response.status_code == 201, response.get_data(as_text=True)
    assert fetch(sx, response.get_json()["records"][0]["id"])["text"] == "x" + WIDE + "y"


@pytest.mark.parametrize(
    ("count", "accepted"),
    [pytest.param(10, True, id="at-limit"), pytest.param(11, False, id="over-limit")],
)
def test_max_record_chars_counts_characters(sx_with: ClientFactory, count: int, accepted: bool) -> None:
    """Design §1: `text` is "at most `MAX_RECORD_CHARS` (default 32,768)" characters; an emoji is
    one character."""
    small = sx_with(max_record_chars=10)
    response = post_records(small, note(WIDE * count))
    if accepted:
        assert response.status_code == 201, response.get_data(as_text=True)
    else:
        invalid(response, "records", 0, "text")


def test_the_default_max_record_chars_admits_32768_emoji(sx: Client) -> None:
    """Design §1: text "at most `MAX_RECORD_CHARS` (default 32,768)" characters."""
    (record,) = write(sx, note(WIDE * 32768))
    assert fetch(sx, record)["text"] == WIDE * 32768
    invalid(post_records(sx, note(WIDE * 32769)), "records", 0, "text")


@pytest.mark.parametrize(
    ("count", "accepted"),
    [pytest.param(256, True, id="256-emoji"), pytest.param(257, False, id="257-emoji")],
)
def test_entity_length_counts_characters(sx: Client, count: int, accepted: bool) -> None:
    """Design §1: `entity` is "who/what the record is about; 1–256 chars"."""
    entity = WIDE * count
    response = post_records(sx, note("x", entity=entity), query="?wait=true")
    if not accepted:
        invalid(response, "records", 0, "entity")
        return
    assert response.status_code == 201, response.get_data(as_text=True)
    record = response.get_json()["records"][0]["id"]
    body = search(sx, {"mode": "recent", "scope": {"entities": [entity]}, "include": ["entity"]})
    assert [(h["id"], h["entity"]) for h in body["hits"]] == [(record, entity)]


# --- lengths count characters ---------------------------------------------------------------------


@pytest.mark.parametrize(
    "record",
    [
        pytest.param(rec(text="é" * 32768), id="text-32768-two-byte-chars"),
        pytest.param(rec(text="😀" * 32768), id="text-32768-astral-chars"),
        pytest.param(rec(entity="é" * 256), id="entity-256-two-byte-chars"),
        pytest.param(rec(entity="😀" * 256), id="entity-256-astral-chars"),
    ],
)
def test_limits_count_characters(bw: Client, record: dict[str, Any]) -> None:
    """§1: entity "1–256 chars"; text "at most `MAX_RECORD_CHARS` (default 32,768)" characters."""
    stored = fetch(bw, one_id(bw, record))
    assert stored["text"] == record["text"] and stored["entity"] == record["entity"]


def test_entity_and_text_limits_count_characters_not_bytes(bw: Client) -> None:
    """§1: `entity` "1–256 chars"; `text` "at most `MAX_RECORD_CHARS` (default 32,768)" — characters,
    not UTF-8 bytes or UTF-16 code units."""
    wide = "😀"
    (record_id,) = written_ids(bw, rec(entity=wide * 256, text=wide * 32768))
    record = fetch(bw, record_id)
    assert (record["entity"], record["text"]) == (wide * 256, wide * 32768)
    assert locs(post_records(bw, rec(entity=wide * 257))) == [["records", 0, "entity"]]
    assert locs(post_records(bw, rec(text=wide * 32769))) == [["records", 0, "text"]]


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


# --- JSON text: shortened to 2,000 characters, counted as characters ------------------------------


@pytest.mark.parametrize(
    "text",
    [
        pytest.param(WIDE * 2000, id="2000-emoji"),
        pytest.param("e\u0301" * 1000, id="2000-with-combining-marks"),
        pytest.param("€" * 1999 + WIDE, id="emoji-last"),
    ],
)
def test_json_text_of_2000_wide_characters_is_whole(sx: Client, text: str) -> None:
    """Spec, Optional values: `text` is "The record text, shortened from the middle to at most
    2,000 characters": a text of 2,000 characters (8,000 UTF-8 bytes for emoji) is not shortened."""
    write(sx, note(text))
    assert hit_text(sx) == text


JSON_MARKER = "[...] truncated [...]"


@pytest.mark.parametrize(
    "text",
    [
        pytest.param(WIDE * 2001, id="2001-emoji"),
        pytest.param("a" * 1000 + WIDE * 1001, id="emoji-at-the-tail-cut"),
        pytest.param(WIDE * 1001 + "a" * 1000, id="emoji-at-the-head-cut"),
        pytest.param(("&<>" + WIDE) * 800, id="markup-and-emoji"),
    ],
)
def test_json_text_of_2001_wide_characters_is_shortened_from_the_middle(sx: Client, text: str) -> None:
    """Spec: "shortened from the middle to at most 2,000 characters with a `[...] truncated [...]`
    marker. Unlike rendered rows, this JSON value is not prompt-escaped." Counting characters, the
    cut never splits one (no lone surrogate), and what is kept is the text's own head and tail."""
    write(sx, note(text))
    value = hit_text(sx)
    assert len(value) <= 2000 and value.count(JSON_MARKER) == 1
    assert not has_lone_surrogate(value) and "\\u00" not in value
    head, tail = value.split(JSON_MARKER)
    head, tail = head.rstrip(" "), tail.lstrip(" ")
    assert text.startswith(head) and text.endswith(tail)
    assert len(head) >= 900 and len(tail) >= 900  # from the middle: both ends survive


def test_json_text_keeps_whitespace_exactly_at_2000_and_past_it(sx: Client) -> None:
    """Spec: `text` is "The record text, shortened from the middle to at most 2,000 characters";
    only rendered rows are a compact format, so line breaks and tabs stay in the JSON value."""
    whole = "a\r\n\tb " * 400
    assert len(whole) == 2400
    write(sx, note(whole[:2000], entity="whole"), note(whole + "\n", entity="long"))
    (hit,) = search(sx, {"mode": "recent", "scope": {"entities": ["whole"]}, "include": ["text"]})["hits"]
    assert hit["text"] == whole[:2000]
    (hit,) = search(sx, {"mode": "recent", "scope": {"entities": ["long"]}, "include": ["text"]})["hits"]
    head, tail = str(hit["text"]).split(JSON_MARKER)
    assert whole.startswith(head.rstrip(" ")) and (whole + "\n").endswith(tail.lstrip(" "))
    assert "\r\n\t" in head and tail.endswith("b \n") and len(hit["text"]) <= 2000


def test_get_search_text_is_shortened_in_characters(sx: Client) -> None:
    """Spec: GET /search "returns text, collection, type, and occurred_at" — the same `text` value:
    "shortened from the middle to at most 2,000 characters with a `[...] truncated [...]` marker"."""
    text = "budget " + WIDE * 2001
    (record,) = write(sx, vec(text))
    (hit,) = ok(sx.get("/search", query_string={"q": "budget"}))["hits"]
    value = str(hit["text"])
    assert hit["id"] == record and len(value) <= 2000 and value.count(JSON_MARKER) == 1
    assert value.startswith("budget " + WIDE * 900) and value.endswith(WIDE * 900)


def test_a_word_at_the_end_of_a_maximal_text_is_found(sx: Client) -> None:
    """Spec: `text` mode is "Find records containing these words"; design §1: a record's text is
    "at most `MAX_RECORD_CHARS` (default 32,768)" — a word past the 16,000th is still one of its
    words."""
    text = "w " * 16000 + "budget"
    assert len(text) <= 32768
    (record,) = write(sx, note(text))
    assert text_hits(sx, "budget") == [record]
