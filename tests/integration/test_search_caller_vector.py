"""A caller's own query vector (`vector` + `embedding_model`): the same results as the service's
embedding of `q`, no call to the provider, and every misfit a 422 at the key that caused it."""

from __future__ import annotations

from typing import Any

import pytest
from sqlalchemy.engine import Engine

from memseek.settings import Settings
from tests.conftest import Client
from tests.conftest import Tenant
from tests.integration.searchdata import EMBED_MODEL
from tests.integration.test_search_api import embedded
from tests.integration.test_search_api import given
from tests.integration.test_search_api import make_client
from tests.integration.test_search_api import search
from tests.openai_server import OpenAIServer
from tests.openai_server import hashed_embedding

TEXTS = ("budget review for the quarter", "budget", "travel plans", "quarterly review notes", "budget travel")
MAIN = {"collections": ["main"]}


def own(q: str) -> dict[str, Any]:
    """The vector the test provider would compute for `q`, as a caller supplies it."""
    return {"vector": hashed_embedding(q, 384), "embedding_model": EMBED_MODEL}


SCORES = ("score", "rank_score")


def same_hits(mine: list[dict[str, Any]], theirs: list[dict[str, Any]]) -> bool:
    """The same records, ranks and texts; scores equal but for the age terms of two requests' `now`."""
    exact = [{key: value for key, value in hit.items() if key not in SCORES} for hit in (*mine, *theirs)]
    scores = [hit[key] for hit in theirs for key in SCORES]
    return exact[: len(mine)] == exact[len(mine) :] and [h[k] for h in mine for k in SCORES] == pytest.approx(
        scores
    )


@pytest.fixture
def offline(settings: Settings, db: Engine, tenant: Tenant) -> Client:
    """A service whose embedding provider is unreachable: any call to it would be a 503."""
    given(db, tenant, *(embedded(text) for text in TEXTS))
    return make_client(settings, db, tenant, "http://127.0.0.1:9", touch_on_read=False)


@pytest.fixture
def online(settings: Settings, db: Engine, tenant: Tenant, openai_server: OpenAIServer) -> Client:
    return make_client(settings, db, tenant, openai_server.base_url, touch_on_read=False)


@pytest.mark.parametrize(
    "body",
    [
        pytest.param({"mode": "vector", "k": 3}, id="vector-without-q"),
        pytest.param({"mode": "vector", "k": 3, "q": "ignored words"}, id="vector-beside-q"),
        pytest.param({"mode": "hybrid", "k": 3, "q": "budget review"}, id="hybrid"),
        pytest.param({"mode": "vector", "k": 3, "scope": {"entities": ["e1"]}}, id="entity-scope"),
    ],
)
def test_the_callers_vector_ranks_as_the_embedded_query_and_never_calls_the_model(
    offline: Client, online: Client, body: dict[str, Any]
) -> None:
    q = "budget review"
    mine = search(offline, {**body, **own(q), "include": ["text"]})
    theirs = search(online, {**body, "q": q, "include": ["text"]})  # the vector is of q
    assert mine["hits"] and same_hits(mine["hits"], theirs["hits"])
    assert mine["ranking"] == theirs["ranking"]


def test_the_service_reports_no_embedding_time_for_a_callers_vector(offline: Client) -> None:
    response = offline.post("/search", json={"mode": "vector", **own("budget")})
    assert response.status_code == 200
    assert "embed;dur=0.00" in response.headers["Server-Timing"]


def test_sources_read_their_own_vector_or_the_shared_one(offline: Client, online: Client) -> None:
    sources = [
        {"name": "shared", "mode": "vector", "scope": MAIN, "k": 3},
        {"name": "own", "mode": "vector", "scope": MAIN, "k": 3, **own("travel plans")},
        {"name": "words", "mode": "text", "scope": MAIN, "k": 3},
    ]
    fuse = {"kind": "rrf"}
    mine = search(offline, {"q": "budget", **own("budget review"), "sources": sources, "fuse": fuse})
    expected = [
        search(online, {"q": q, "mode": mode, "scope": MAIN, "k": 3})["hits"]
        for q, mode in (("budget review", "vector"), ("travel plans", "vector"), ("budget", "text"))
    ]
    by_source = {
        name: [h["id"] for h in mine["hits"] if name in h["source_ranks"]]
        for name in ("shared", "own", "words")
    }
    for name, hits in zip(("shared", "own", "words"), expected, strict=True):
        assert sorted(by_source[name]) == sorted(h["id"] for h in hits)
    ranks = {h["id"]: h["source_ranks"] for h in mine["hits"]}
    assert [ranks[h["id"]]["own"] for h in expected[1]] == [1, 2, 3]


WRONG_WIDTH = {"vector": [0.1] * 383, "embedding_model": EMBED_MODEL}
SOURCE = {"name": "a", "mode": "vector", "scope": MAIN}


@pytest.mark.parametrize(
    ("body", "locs"),
    [
        pytest.param(
            {"mode": "vector", **own("x"), "embedding_model": "other"}, [["embedding_model"]], id="model"
        ),
        pytest.param({"mode": "vector", **WRONG_WIDTH}, [["vector"]], id="width"),
        pytest.param(
            {"mode": "vector", "vector": [0.1] * 383, "embedding_model": "other"},
            [["embedding_model"], ["vector"]],
            id="model-and-width",
        ),
        pytest.param(
            {"mode": "vector", "vector": hashed_embedding("x", 384)}, [["embedding_model"]], id="no-model"
        ),
        pytest.param(
            {"mode": "vector", "q": "x", "embedding_model": EMBED_MODEL}, [["vector"]], id="no-vector"
        ),
        pytest.param(
            {"mode": "vector", "vector": [], "embedding_model": EMBED_MODEL}, [["vector"]], id="empty"
        ),
        pytest.param(
            {"mode": "vector", "vector": [1e39] * 384, "embedding_model": EMBED_MODEL},
            [["vector"]],
            id="past-real",
        ),
        pytest.param(
            {"mode": "vector", "vector": ["a"] + [0.1] * 383, "embedding_model": EMBED_MODEL},
            [["vector", 0]],
            id="not-a-number",
        ),
        pytest.param({"mode": "hybrid", **own("x")}, [["q"]], id="hybrid-needs-q"),
        pytest.param({"mode": "text", "q": "x", **own("x")}, [["vector"]], id="text-reads-no-vector"),
        pytest.param(
            {"mode": "vector", **own("x"), "rerank": {"backend": "llm_judge"}}, [["q"]], id="judge-needs-q"
        ),
        pytest.param(
            {"q": "x", "sources": [SOURCE, {**SOURCE, "name": "b", **WRONG_WIDTH}], "fuse": {"kind": "rrf"}},
            [["sources", 1, "vector"]],
            id="source-width",
        ),
        pytest.param(
            {
                "sources": [SOURCE, {**SOURCE, "name": "b", **own("x"), "embedding_model": "other"}],
                "fuse": {"kind": "rrf"},
                **own("x"),
            },
            [["sources", 1, "embedding_model"]],
            id="source-model",
        ),
        pytest.param(
            {"sources": [SOURCE, {**SOURCE, "name": "b"}], "fuse": {"kind": "rrf"}, **WRONG_WIDTH},
            [["vector"]],
            id="shared-width-once",
        ),
        pytest.param(
            {
                "sources": [SOURCE, {**SOURCE, "name": "b", "vector": [0.5]}],
                "fuse": {"kind": "rrf"},
                **own("x"),
            },
            [["sources", 1, "embedding_model"]],
            id="source-no-model",
        ),
        pytest.param(
            {"sources": [{**SOURCE, "mode": "recent"}], "fuse": {"kind": "rrf"}, **own("x")},
            [["vector"]],
            id="no-source-reads-it",
        ),
        pytest.param(
            {"sources": [SOURCE, {**SOURCE, "name": "b", **own("x")}], "fuse": {"kind": "rrf"}},
            [["q"]],
            id="a-source-without-vector-needs-q",
        ),
    ],
)
def test_a_vector_that_does_not_fit_is_a_422_at_its_key(
    offline: Client, body: dict[str, Any], locs: list[list[Any]]
) -> None:
    error = search(offline, body, status=422)["error"]
    assert error["code"] == "invalid_request"
    assert [d["loc"] for d in error["details"]] == locs


def test_the_catalogs_model_name_is_accepted(client: Client) -> None:
    """Writers and searchers may name the model as conf/models.yaml does; the reference catalog's
    local alias declares `all-MiniLM-L6-v2`, its embedder's id is `all-MiniLM-L6-v2-onnx-int8`."""
    for name in ("all-MiniLM-L6-v2", "all-MiniLM-L6-v2-onnx-int8"):
        assert (
            search(client, {"mode": "vector", "vector": [0.05] * 384, "embedding_model": name})["hits"] == []
        )
    error = search(
        client, {"mode": "vector", "vector": [0.05] * 384, "embedding_model": "MiniLM"}, status=422
    )
    assert [d["loc"] for d in error["error"]["details"]] == [["embedding_model"]]
    assert "'all-MiniLM-L6-v2' or 'all-MiniLM-L6-v2-onnx-int8'" in error["error"]["details"][0]["msg"]
