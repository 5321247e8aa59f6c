"""The view response wrapper (spec "The view response wrapper", "Errors"): the view and its
parameters, hits as `POST /search` returns them, `backend` always a list, and the errors of a
view call (404 without an active view, 503 without its models).
"""

from __future__ import annotations

from typing import Any

import pytest

from memseek.runtime import Runtime
from tests.blackbox.catalog_support import view_entry
from tests.blackbox.support import MODES
from tests.blackbox.support import SCORED_RANKING
from tests.blackbox.support import WRAPPER_KEYS
from tests.blackbox.support import at
from tests.blackbox.support import ids
from tests.blackbox.support import invalid
from tests.blackbox.support import note
from tests.blackbox.support import search
from tests.blackbox.support import vec
from tests.blackbox.support import write
from tests.conftest import Client
from tests.conftest import Tenant
from tests.conftest import client_for
from tests.helpers import error
from tests.helpers import listed_views
from tests.helpers import ok
from tests.helpers import view_query
from tests.helpers import with_models

# --- the wrapper ----------------------------------------------------------------------------------


def test_search_view_wrapper(sx: Client) -> None:
    (record,) = write(sx, note("prepare the Q3 update", entity="contact.maria", occurred_at=at(1, 10, 22)))
    body = ok(view_query(sx, "sx_context", {"entity": "contact.maria", "task": "Q3 update"}))
    assert list(body) == WRAPPER_KEYS
    entry = listed_views(sx)[("sx_context", 1)]
    assert body["view"] == {"name": "sx_context", "version": 1, "hash": entry["hash"]}
    assert body["parameters"] == {"entity": "contact.maria", "task": "Q3 update"}
    assert ids(body) == [record] == body["input_record_ids"]
    assert body["ranking"]["kind"] == "rank_expression" and body["ranking"]["scored"] is True
    assert body["rendered"] == f"[id={record}] 2026-07-01T10:22Z | sx_notes/note | prepare the Q3 update"
    assert body["truncated"] is False
    assert body["profiles"] == ["pg_default"]
    assert body["backend"] == [{"name": "pg", "layout": None, "candidate_count": 1}]


def test_a_view_runs_the_same_engine_as_post_search(sx: Client) -> None:
    write(
        sx, note("budget one", entity="m"), note("budget two budget", entity="m"), note("budget", entity="x")
    )
    view = ok(view_query(sx, "sx_context", {"entity": "m", "task": "budget"}))
    direct = search(
        sx,
        {
            "q": "budget",
            "mode": "text",
            "scope": {"entities": ["m"], "collections": ["sx_notes"]},
            "k": 20,
            "render": True,
        },
    )
    assert ids(view) == ids(direct) and view["ranking"] == direct["ranking"]
    # the default formula decays last_accessed, which moves a little between the two calls
    assert [h["rank_score"] for h in view["hits"]] == pytest.approx([h["rank_score"] for h in direct["hits"]])
    assert view["rendered"] == direct["rendered"]


def test_empty_view_result(sx: Client) -> None:
    body = ok(view_query(sx, "sx_context", {"entity": "nobody", "task": "anything"}))
    assert body["hits"] == [] and body["input_record_ids"] == []
    assert body["backend"] == [{"name": "pg", "layout": None, "candidate_count": 0}]


def test_structured_view(sx: Client) -> None:
    inside, _outside, first = write(
        sx,
        note(entity="p", content={"starts_at": "2026-07-02T09:00:00Z"}),
        note(entity="p", content={"starts_at": "2026-07-09T09:00:00Z"}),
        note(entity="p", content={"starts_at": "2026-07-01T09:00:00Z"}),
    )
    body = ok(
        view_query(
            sx, "sx_listing", {"entity": "p", "start": "2026-07-01T09:00:00Z", "end": "2026-07-09T09:00:00Z"}
        )
    )
    assert body["input_record_ids"] == [first, inside]
    assert body["ranking"] == {"kind": "structured", "scored": False}
    assert all(h["score"] is None and "rank_score" not in h for h in body["hits"])


def test_combined_view_backend_lists_every_source(sx: Client) -> None:
    write(sx, note("budget"), {"collection": "sx_extra", "entity": "e", "type": "note", "text": "x"})
    body = ok(view_query(sx, "sx_fused", {"task": "budget"}))
    assert [(b["source"], b["name"], b["candidate_count"]) for b in body["backend"]] == [
        ("words", "pg", 1),
        ("latest", "pg", 1),
    ]
    assert body["ranking"]["kind"] == "rrf"
    assert all(h.keys() >= {"source_ranks"} for h in body["hits"])


def test_wrapper_of_a_search_view(bv: Client) -> None:
    """The spec's wrapper: view {name, version, hash}, parameters, hits, ranking, input_record_ids,
    rendered, truncated, profiles, backend (a list, one entry per search)."""
    written = write(
        bv, note("budget budget review", entity="contact.maria"), note("budget", entity="contact.maria")
    )
    write(bv, note("budget elsewhere", entity="contact.other"))
    params = {"entity": "contact.maria", "task": "budget review"}
    body = ok(view_query(bv, "bv10_ctx", params))
    assert set(body) == set(WRAPPER_KEYS)
    assert body["view"] == {"name": "bv10_ctx", "version": 1, "hash": view_entry(bv, "bv10_ctx", 1)["hash"]}
    assert body["parameters"] == params
    assert set(ids(body)) == set(written)
    assert body["input_record_ids"] == ids(body)
    assert body["ranking"] == {"kind": "rank_expression", **SCORED_RANKING}
    assert isinstance(body["rendered"], str) and body["rendered"]
    assert body["truncated"] is False
    assert body["profiles"] == ["pg_default"]
    assert isinstance(body["backend"], list) and len(body["backend"]) == 1
    backend = body["backend"][0]
    assert {"name", "layout", "candidate_count"} <= set(backend)
    assert backend["name"] == "pg" and backend["layout"] is None
    assert [hit["rank"] for hit in body["hits"]] == [1, 2]
    assert body["hits"][0]["score"] == 1.0


def test_view_runs_the_same_engine_as_search(bv: Client) -> None:
    """ "POST /views/{name}/query on a search view runs the same engine, so its results, ordering,
    scores, rendering, and diagnostics mean exactly what they mean above"."""
    write(
        bv,
        note("alpha beta gamma", entity="e9"),
        note("alpha beta", entity="e9"),
        note("alpha", entity="e9"),
        note("alpha beta gamma", entity="e8"),
    )
    view = ok(view_query(bv, "bv10_ctx", {"entity": "e9", "task": "alpha beta gamma"}))
    direct = search(
        bv,
        {
            "q": "alpha beta gamma",
            "mode": "text",
            "scope": {"entities": ["e9"], "collections": ["sx_notes"]},
            "k": 20,
            "render": True,
        },
    )
    # rank_score carries a recency term that moves between the two calls: compare the order
    assert [(h["id"], h["rank"]) for h in view["hits"]] == [(h["id"], h["rank"]) for h in direct["hits"]]
    assert view["rendered"] == direct["rendered"]
    assert view["ranking"] == direct["ranking"]


def test_empty_result_wrapper(bv: Client) -> None:
    """ "An empty list is a successful search that matched nothing"; wrapper example: hits [],
    input_record_ids [], truncated false."""
    body = ok(view_query(bv, "bv10_ctx", {"entity": "nobody", "task": "anything"}))
    assert body["hits"] == [] and body["input_record_ids"] == []
    assert body["truncated"] is False
    assert len(body["backend"]) == 1


def test_unrendered_view_has_null_rendered(bv: Client) -> None:
    """ "rendered: null when render: false"; truncated "stays false when you did not ask for rendering"."""
    write(bv, note("x", entity="e5"))
    body = ok(view_query(bv, "bv10_ver", {"entity": "e5"}))
    assert body["rendered"] is None and body["truncated"] is False


def test_structured_view_wrapper(bv: Client) -> None:
    """The spec's `upcoming_calendar` shape: structured ranking, score null, no rank_score, order_by
    authoritative, datetime parameters bound the range (gte inclusive, lt exclusive)."""
    rows = write(
        bv,
        note("late", entity="cal", content={"starts_at": at(10)}),
        note("early", entity="cal", content={"starts_at": at(5)}),
        note("edge", entity="cal", content={"starts_at": at(12)}),
        note("before", entity="cal", content={"starts_at": at(1)}),
    )
    late, early, _edge, _before = rows
    body = ok(view_query(bv, "bv10_list", {"entity": "cal", "start": at(5), "end": at(12)}))
    assert ids(body) == [early, late]
    assert body["ranking"] == {"kind": "structured", "scored": False}
    assert all(hit["score"] is None and "rank_score" not in hit for hit in body["hits"])
    assert body["input_record_ids"] == [early, late]
    assert isinstance(body["rendered"], str)
    assert set(body["parameters"]) == {"entity", "start", "end"}


def test_fused_view_reports_one_backend_per_search(bv: Client) -> None:
    """ "a view always reports backend as a list with one entry per search executed" (`source` when
    combining searches)."""
    write(bv, note("apples"), {"collection": "sx_extra", "entity": "e1", "type": "note", "text": "pears"})
    body = ok(view_query(bv, "bv10_fused", {"task": "apples"}))
    assert sorted(b["source"] for b in body["backend"]) == ["latest", "words"]
    assert body["ranking"]["kind"] == "rrf"
    assert all("source_ranks" in hit for hit in body["hits"])


def test_view_addressed_by_name_resolves_to_active_version(bv: Client) -> None:
    """ "A view is always addressed by name, and the name resolves to whichever version is currently
    active" (`bv10_ver` v2 is active, k 2; v1 has k 1)."""
    write(bv, note("1", entity="ve"), note("2", entity="ve"), note("3", entity="ve"))
    body = ok(view_query(bv, "bv10_ver", {"entity": "ve"}))
    assert body["view"]["version"] == 2
    assert body["view"]["hash"] == view_entry(bv, "bv10_ver", 2)["hash"]
    assert len(body["hits"]) == 2


def test_hybrid_view_runs(bv: Client) -> None:
    """A hybrid view (the spec's `customer_context` mode) returns its match."""
    [apple] = write(bv, vec("apples and pears"))
    assert ids(ok(view_query(bv, "bv10_hybrid", {"task": "apples"}))) == [apple]


def test_wrapper_does_not_forward_graph_boost(bv: Client) -> None:
    """ "The view wrapper does not currently forward the optional rerank or graph_boost diagnostic
    objects"."""
    write(bv, note("x", entity="people/maya"))
    body = ok(view_query(bv, "bv10_boost", {"anchor": "people/maya"}))
    assert set(body) == set(WRAPPER_KEYS)


BACKEND_KEYS = {"name", "layout", "candidate_count"}
PLAN_Q = "budget plan review"
RANK_EXPRESSION = {"kind": "rank_expression", **SCORED_RANKING}
RRF_RANKING = {"kind": "rrf", **SCORED_RANKING}
"""The spec's ranking contract of a combined search: "ranking.kind is rrf"."""
SCORED_HIT = {"id", "rank", "score", "rank_score"}
STRUCTURED = {"kind": "structured", "scored": False}
STRUCTURED_HIT = {"id", "rank", "score"}
VIEWS = [
    # view, parameters, ranking, hit keys, backend sources (None: a single search)
    pytest.param(
        "sx_context", {"entity": "e1", "task": PLAN_Q}, RANK_EXPRESSION, SCORED_HIT, [None], id="text"
    ),
    pytest.param(
        "sx_listing",
        {"entity": "e1", "start": at(1), "end": at(9)},
        STRUCTURED,
        STRUCTURED_HIT,
        [None],
        id="structured",
    ),
    pytest.param(
        "sx_fused",
        {"task": PLAN_Q},
        RRF_RANKING,
        SCORED_HIT | {"source_ranks"},
        ["words", "latest"],
        id="combined",
    ),
    pytest.param("sx_boosted", {"anchor": "nobody"}, RANK_EXPRESSION, SCORED_HIT, [None], id="graph-boosted"),
    pytest.param(
        "sx_contract",
        {"entity": "e1x", "channels": ["email"]},
        RANK_EXPRESSION,
        SCORED_HIT | {"text"},
        [None],
        id="recent",
    ),
]


@pytest.mark.usefixtures("mode_corpus")
@pytest.mark.parametrize(("view", "parameters", "ranking", "hit_keys", "sources"), VIEWS)
def test_view_wrapper_contract(
    sx: Client,
    view: str,
    parameters: dict[str, Any],
    ranking: dict[str, Any],
    hit_keys: set[str],
    sources: list[str | None],
) -> None:
    """ "It wraps them in a record of the invocation" (view, parameters, hits, ranking,
    input_record_ids, rendered, truncated, profiles, backend); "a view always reports backend as a
    list with one entry per search executed"; "The view wrapper does not currently forward the
    optional rerank or graph_boost diagnostic objects"; results "mean exactly what they mean
    above"."""
    # "`rendered` `null` when `render: false`"; "`truncated` … stays `false` when you did not ask
    # for rendering" (and nothing here reaches the render budget)
    body = ok(sx.post(f"/views/{view}/query", json=parameters))
    assert body.keys() == set(WRAPPER_KEYS)
    assert body["view"].keys() == {"name", "version", "hash"} and body["view"]["name"] == view
    assert body["ranking"] == ranking
    assert body["profiles"] == ["pg_default"]
    assert [b.get("source") for b in body["backend"]] == sources
    for entry, source in zip(body["backend"], sources, strict=True):
        assert entry.keys() == (BACKEND_KEYS if source is None else BACKEND_KEYS | {"source"})
        assert entry["name"] == "pg" and entry["layout"] is None
        assert isinstance(entry["candidate_count"], int) and entry["candidate_count"] >= 0
    assert [h.keys() for h in body["hits"]] == [hit_keys] * len(body["hits"])
    assert body["input_record_ids"] == ids(body)
    assert isinstance(body["truncated"], bool)
    renders = view in ("sx_context", "sx_listing")  # the two views whose query sets `render: true`
    # With no rows (and no fence) nothing is rendered: the wrapper example's `"rendered": null`.
    assert isinstance(body["rendered"], str) if renders and body["hits"] else body["rendered"] is None
    assert body["truncated"] is False


@pytest.mark.usefixtures("mode_corpus")
def test_view_hits_equal_the_direct_search_contract(sx: Client) -> None:
    """ "POST /views/{name}/query on a search view runs the same engine, so its results, ordering,
    scores, rendering, and diagnostics mean exactly what they mean above": `sx_listing`'s query run
    directly gives the same hits and the same single backend entry."""
    parameters = {"entity": "e1", "start": at(1), "end": at(9)}
    view = ok(sx.post("/views/sx_listing/query", json=parameters))
    direct = search(
        sx,
        {
            "mode": "structured",
            "scope": {"entities": ["e1"], "collections": ["sx_notes"]},
            "where": {"starts_at": {"gte": at(1), "lt": at(9)}},
            "order_by": [{"field": "starts_at", "direction": "asc"}],
            "k": 50,
            "render": True,
        },
    )
    assert view["hits"] == direct["hits"] and view["rendered"] == direct["rendered"]
    assert view["backend"] == [direct["backend"]]
    assert view["ranking"] == direct["ranking"] == STRUCTURED


def test_view_parameters_echo_the_values_supplied(sx: Client) -> None:
    """ "parameters shows the values supplied plus any defaults applied; an optional parameter that
    was omitted and has no default stays absent" — a supplied datetime is echoed as supplied."""
    supplied = {"entity": "e1", "start": "2026-07-01T02:00:00+02:00", "end": "2026-07-09T00:00:00Z"}
    body = ok(sx.post("/views/sx_listing/query", json=supplied))
    assert body["parameters"] == supplied
    body = ok(sx.post("/views/sx_contract/query", json={"entity": "e1x"}))
    assert body["parameters"] == {"entity": "e1x", "horizon": "week", "k": 5}


@pytest.mark.usefixtures("mode_corpus")
@pytest.mark.parametrize(("query", "proposed"), MODES)
def test_candidate_count_never_exceeds_params_candidates(
    sx: Client, query: dict[str, Any], proposed: int
) -> None:
    """ "Each search asks its engine for at most params.candidates record ids"; "`candidate_count` is
    how many candidates the search engine proposed before re-checking — not a result count"; "Three
    counts are legitimately different: proposed, ranked, and returned" — returned never exceeds
    proposed. Every mode here has more eligible records (`proposed`) than the 2 asked for."""
    assert proposed > 2
    body = search(sx, {**query, "params": {"candidates": 2}})
    count = body["backend"]["candidate_count"]
    assert 1 <= count <= 2 and len(body["hits"]) <= count


def test_the_customer_context_example_over_a_collection_with_embeddings(s3: Client) -> None:
    """Spec, "Start by describing the question": customer_context is a hybrid search, k 20,
    `render: true`, scoped to one entity; "The view response wrapper" lists its keys."""
    (record,) = write(
        s3,
        vec("Maria confirmed the Q3 budget.", entity="contact.maria", occurred_at="2026-07-01T10:22:00Z"),
    )
    write(s3, vec("Q3 budget for someone else", entity="contact.john"))
    body = ok(view_query(s3, "s3_customer_context", {"entity": "contact.maria", "task": "Q3 budget"}))
    assert list(body) == WRAPPER_KEYS
    assert body["parameters"] == {"entity": "contact.maria", "task": "Q3 budget"}
    assert ids(body) == [record] == body["input_record_ids"]
    assert body["hits"][0]["rank"] == 1 and body["hits"][0]["score"] == 1.0
    assert body["ranking"]["kind"] == "rank_expression"
    assert (
        body["rendered"] == f"[id={record}] 2026-07-01T10:22Z | sx_vec/note | Maria confirmed the Q3 budget."
    )
    assert body["backend"] == [{"name": "pg", "layout": None, "candidate_count": 1}]


# --- which version answers, and the errors of a view call -----------------------------------------


def test_the_name_resolves_to_the_active_version(sx: Client) -> None:
    body = ok(view_query(sx, "sx_context", {"entity": "e", "task": "t"}))
    assert body["view"]["version"] == 1
    invalid(view_query(sx, "sx_context", {"entity": "e"}), "parameters", "task")


@pytest.mark.parametrize("name", ["sx_nothing", "sx_dormant", "SX_CONTEXT"])
def test_no_active_view_is_404(sx: Client, name: str) -> None:
    error(view_query(sx, name, {"entity": "e"}), 404, "not_found")


def test_no_version_in_the_url(sx: Client) -> None:
    assert sx.post("/views/sx_context/1/query", json={"entity": "e", "task": "t"}).status_code == 404
    assert sx.post("/views/sx_context@1/query", json={"entity": "e", "task": "t"}).status_code == 404


@pytest.mark.parametrize(
    ("name", "body"),
    [
        pytest.param("bv10_nowhere", {}, id="unknown"),
        pytest.param("bv10_off", {}, id="no-active-version"),
        pytest.param("bv10_nowhere", {"junk": 1}, id="unknown-with-bad-parameters"),
    ],
)
def test_a_view_name_without_an_active_version_is_404(bv: Client, name: str, body: dict[str, Any]) -> None:
    """Errors: "No active view by that name — 404"."""
    error(view_query(bv, name, body), 404)


def test_a_version_after_the_name_is_no_route(bv: Client) -> None:
    """ "There is no version in the URL": `/views/{name}/{version}/query` is not a route."""
    assert view_query(bv, "bv10_ver/1", {"entity": "x"}).status_code == 404


def test_embeddings_unavailable_is_503(bv_runtime: Runtime, tenant: Tenant, server: Any) -> None:
    """ "Embeddings, search credentials, or the reranking model are unavailable — 503"."""
    write(client_for(bv_runtime, tenant), vec("apples and pears"))
    client = client_for(with_models(bv_runtime, {}), tenant)
    error(view_query(client, "bv10_hybrid", {"task": "apples"}), 503)


def test_reranking_model_unavailable_is_503(bv_runtime: Runtime, tenant: Tenant, server: Any) -> None:
    """ "Embeddings, search credentials, or the reranking model are unavailable — 503"."""
    client = client_for(with_models(bv_runtime, {}), tenant)
    write(client, note("budget one"), note("budget two"))
    error(view_query(client, "bv10_judged", {"task": "budget"}), 503)


def test_no_view_by_that_name_is_404_in_the_error_shape_even_for_get_views_name(ald: Client) -> None:
    error(ald.post("/views/ald_nothing/query", json={}), 404, "not_found")


def test_a_view_answers_503_when_embeddings_are_unavailable(s3_runtime: Runtime, tenant: Tenant) -> None:
    """Spec, Errors: "Embeddings, search credentials, or the reranking model are unavailable → 503"."""
    offline = client_for(with_models(s3_runtime, {}), tenant)
    response = view_query(offline, "s3_customer_context", {"entity": "e", "task": "an unembedded 503 task"})
    error(response, 503)


@pytest.mark.parametrize(
    "name",
    ["a" * 2000, "%F0%9F%98%80", "sx%00context", "sx_context%20", "%2E%2E"],
    ids=["very-long", "emoji", "nul", "trailing-space", "dot-dot"],
)
def test_any_name_without_an_active_view_is_404(s3: Client, name: str) -> None:
    """Spec, Errors: "No active view by that name | 404"."""
    error(s3.post(f"/views/{name}/query", json={}), 404, "not_found")
