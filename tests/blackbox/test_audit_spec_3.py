"""Third conformance audit of the read side against the letter of `views-and-search.md`.

Each test quotes the spec sentence it relies on, with expected values taken from that sentence, on
points the earlier suites (test_spec_*, test_audit_spec, test_audit_letter, test_design_catalog)
leave open. Load-time checks run `memseek catalog check` over the `sx_` catalog plus one `s3_case`
view; call-time contracts the `sx_` views do not declare use a small catalog of `s3_` views over
the `sx_` collections; the spec's own examples are replayed on the reference catalog.
"""

from __future__ import annotations

import pytest

from tests.blackbox.conftest import ClientFactory
from tests.blackbox.support import ids
from tests.blackbox.support import invalid
from tests.blackbox.support import link
from tests.blackbox.support import note
from tests.blackbox.support import part
from tests.blackbox.support import rejects
from tests.blackbox.support import search
from tests.blackbox.support import vec
from tests.blackbox.support import write
from tests.conftest import Client
from tests.helpers import error
from tests.helpers import listed_views
from tests.helpers import ok
from tests.helpers import view_query
from tests.helpers import written_ids
from tests.integration.view_support import SPEC_GRAPH_CONTENT
from tests.integration.view_support import SPEC_GRAPH_PARAMETERS
from tests.integration.view_support import spec_graph_response

# --- call-time contracts: the `s3_` views ---------------------------------------------------------


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
