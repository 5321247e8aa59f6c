"""Letter-precise audit of the two documents against the service, over HTTP.

Each test states the sentence of `views-and-search.md` (the spec) or `memseek.md` (the design) it
checks, with expected values taken from that sentence, on points no other black-box test pins.
"""

from __future__ import annotations

from typing import Any

import pytest
from sqlalchemy.engine import Engine

from tests.blackbox.design_support import count_records
from tests.blackbox.design_support import rec
from tests.blackbox.support import search
from tests.blackbox.support import vec
from tests.blackbox.support import write
from tests.conftest import Client
from tests.conftest import Tenant
from tests.helpers import error
from tests.helpers import locs
from tests.helpers import post_records

# --- design §3 POST /records: "any invalid record → 422 listing every problem by index" ---------


@pytest.mark.parametrize(
    ("record", "expected"),
    [
        pytest.param(
            rec(type="unknown", colour=1),
            [["records", 0, "colour"], ["records", 0, "type"]],
            id="unknown-key-and-undeclared-type",
        ),
        pytest.param(
            rec(entity="", content={"n": "not a number"}),
            [["records", 0, "entity"], ["records", 0, "content", "n"]],
            id="blank-entity-and-mistyped-declared-field",
        ),
        pytest.param(
            rec("bw_facts", key=None, text="", scores={"a": "x"}),
            [["records", 0, "text"], ["records", 0, "scores", "a"], ["records", 0, "key"]],
            id="blank-text-bad-score-and-missing-key",
        ),
        pytest.param(
            rec("bw_events", key="k", run_id=""),
            [["records", 0, "run_id"], ["records", 0, "key"]],
            id="blank-run-id-and-forbidden-key",
        ),
    ],
)
def test_every_problem_of_one_record_is_listed(
    bw: Client, bw_db: Engine, bw_ws: Tenant, record: dict[str, Any], expected: list[list[Any]]
) -> None:
    found = [loc[: len(want)] for loc in locs(post_records(bw, record)) for want in expected]
    for want in expected:
        assert want in found, (want, found)
    assert count_records(bw_db, bw_ws) == 0


def test_shape_problems_of_an_unknown_collection_are_still_listed(bw: Client) -> None:
    found = locs(post_records(bw, rec("bw_nowhere", entity="", colour=1)))
    assert ["records", 0, "entity"] in [loc[:3] for loc in found]
    assert ["records", 0, "colour"] in [loc[:3] for loc in found]


def test_problems_are_listed_by_record_index(bw: Client) -> None:
    response = post_records(bw, rec(type="unknown"), rec(entity=""), rec(type="unknown", colour=1))
    indexes = [loc[1] for loc in locs(response)]
    assert indexes == sorted(indexes) and set(indexes) == {0, 1, 2}


def test_a_valid_record_next_to_an_invalid_one_reports_nothing(bw: Client) -> None:
    found = locs(post_records(bw, rec(text="fine"), rec(type="unknown", colour=1)))
    assert not [loc for loc in found if loc[1] == 0]


# --- spec: GET /search "required q plus optional entity, collection, and k" --------------------


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


# --- spec: "Unlike direct search, a view always reports backend as a list" ---------------------


def test_direct_single_search_backend_entry_has_the_three_diagnostics(sx: Client) -> None:
    write(sx, vec("alpha"))
    body = search(sx, {"q": "alpha", "mode": "vector", "scope": {"collections": ["sx_vec"]}})
    backend = body["backend"]
    entries = backend if isinstance(backend, list) else [backend]
    assert len(entries) == 1
    assert set(entries[0]) == {"name", "layout", "candidate_count"}
    assert entries[0]["name"] == "pg" and entries[0]["layout"] is None


@pytest.mark.parametrize(
    "record",
    [
        pytest.param({"collection": "bw_plain"}, id="only-a-collection"),
        pytest.param({"collection": ["bw_plain"], "entity": 1}, id="collection-not-a-string"),
        pytest.param(rec(collection_version=0, type="unknown"), id="bad-version"),
        pytest.param(rec(embedding=[0.1], embedding_model=None), id="embedding-without-model"),
        pytest.param(rec(embedding=["x"], embedding_model="m", type="unknown"), id="bad-embedding"),
        pytest.param(rec(content="text", annotations=[], scores=None), id="wrong-containers"),
        pytest.param(rec("bw_facts", key=5, type=3, text=None, entity=None), id="wrong-scalars"),
        pytest.param(rec("bw_client", derived_from=["nope"], status="x"), id="client-enrichment"),
    ],
)
def test_a_record_with_many_problems_is_a_422_never_a_500(bw: Client, record: dict[str, Any]) -> None:
    found = locs(post_records(bw, record))
    assert found and all(loc[:2] == ["records", 0] for loc in found), found


# --- spec: the public score "If all values tie: every value becomes 1" (combined searches too) ---


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
