"""Letter-precise audit of the two documents against the service, over HTTP.

Each test states the sentence of `views-and-search.md` (the spec) or `memseek.md` (the design) it
checks, with expected values taken from that sentence, on points no other black-box test pins.
"""

from __future__ import annotations

import pytest

from tests.blackbox.support import search
from tests.blackbox.support import vec
from tests.blackbox.support import write
from tests.conftest import Client
from tests.helpers import error

# --- spec: GET /search "required q plus optional entity, collection, and k" -----------------------


@pytest.mark.parametrize("raw", ["1_0", "%205", "5%20", "\u0665", "5.0", "0x5", "", "1e1"])
def test_get_search_k_is_a_decimal_integer(sx: Client, raw: str) -> None:
    err = error(sx.get(f"/search?q=alpha&collection=sx_vec&k={raw}"), 422, "invalid_request")
    assert ["query", "k"] in [d["loc"] for d in err["details"]]


@pytest.mark.parametrize("raw", ["1_0", "\u0665"])
def test_get_context_k_is_a_decimal_integer(sx: Client, raw: str) -> None:
    err = error(sx.get(f"/context?q=alpha&collection=sx_vec&k={raw}"), 422, "invalid_request")
    assert ["query", "k"] in [d["loc"] for d in err["details"]]


def test_get_search_k_in_decimal_digits_is_honoured(sx: Client) -> None:
    write(sx, vec("alpha one"), vec("alpha two"), vec("alpha three"))
    body = sx.get("/search?q=alpha&collection=sx_vec&k=2").get_json()
    assert len(body["hits"]) == 2
    assert [hit["rank"] for hit in body["hits"]] == [1, 2]


# --- spec: "Unlike direct search, a view always reports backend as a list" ------------------------


def test_direct_single_search_backend_entry_has_the_three_diagnostics(sx: Client) -> None:
    write(sx, vec("alpha"))
    body = search(sx, {"q": "alpha", "mode": "vector", "scope": {"collections": ["sx_vec"]}})
    backend = body["backend"]
    entries = backend if isinstance(backend, list) else [backend]
    assert len(entries) == 1
    assert set(entries[0]) == {"name", "layout", "candidate_count"}
    assert entries[0]["name"] == "pg" and entries[0]["layout"] is None


# --- spec: the public score "If all values tie: every value becomes 1" (combined searches too) ----


def test_a_merged_pool_that_ties_scores_1_everywhere(sx: Client) -> None:
    one, two = write(
        sx,
        {"collection": "sx_notes", "entity": "tie", "type": "note", "text": "left"},
        {"collection": "sx_extra", "entity": "tie", "type": "note", "text": "right"},
    )
    body = search(
        sx,
        {
            "sources": [
                {"name": "a", "mode": "recent", "scope": {"collections": ["sx_notes"], "entities": ["tie"]}},
                {"name": "b", "mode": "recent", "scope": {"collections": ["sx_extra"], "entities": ["tie"]}},
            ],
            "fuse": {"kind": "rrf"},
        },
    )
    assert {hit["id"] for hit in body["hits"]} == {one, two}
    assert [hit["score"] for hit in body["hits"]] == [1.0, 1.0]
    assert [hit["rank_score"] for hit in body["hits"]] == [pytest.approx(1 / 61)] * 2
    assert [hit["rank"] for hit in body["hits"]] == [1, 2]
    assert body["ranking"]["kind"] == "rrf"
