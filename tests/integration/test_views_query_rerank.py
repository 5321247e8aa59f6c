"""Model reranking end to end: POST /search and a view, against the local OpenAI-protocol server."""

from __future__ import annotations

import json
from typing import Any

import pytest

from memseek.runtime import Runtime
from tests.conftest import Client
from tests.conftest import Tenant
from tests.conftest import client_for
from tests.helpers import error
from tests.helpers import ok
from tests.helpers import view_query
from tests.helpers import with_models
from tests.helpers import written_ids
from tests.integration.view_support import note_body
from tests.openai_server import OpenAIServer
from tests.openai_server import judge_by_text

THREE, TWO, ONE = "budget review plan", "budget review", "budget"
"""Records matching one, two and three of the query's words: `text_match` ranks them THREE, TWO, ONE."""
REQUEST = {"q": THREE, "mode": "text", "scope": {"collections": ["g_notes"]}, "include": ["text"]}


@pytest.fixture(name="jclient")
def jclient_fixture(view_runtime: Runtime, openai_server: OpenAIServer, tenant: Tenant) -> Client:
    """A client of an app whose `cheap` model is the local server."""
    return client_for(with_models(view_runtime, openai_server.environ()), tenant)


def seed(client: Client) -> None:
    written_ids(
        client,
        note_body("e", THREE),
        note_body("e", TWO),
        note_body("e", ONE),
    )


def texts(body: dict[str, Any]) -> list[str]:
    return [h["text"] for h in body["hits"]]


def test_the_model_reorders_the_top_n(jclient: Client, openai_server: OpenAIServer) -> None:
    seed(jclient)
    plain = ok(jclient.post("/search", json=REQUEST))
    assert texts(plain) == [THREE, TWO, ONE]
    openai_server.reply_with(judge_by_text({THREE: 0.1, TWO: 0.9}))
    body = ok(jclient.post("/search", json={**REQUEST, "rerank": {"backend": "llm_judge", "top_n": 2}}))
    assert texts(body) == [TWO, THREE, ONE]
    assert body["ranking"]["kind"] == "llm_judge"
    assert body["rerank"] == {"backend": "llm_judge", "top_n": 2, "model": "cheap", "judged_records": 2}
    assert [h["score"] for h in body["hits"]][0] == 1.0


def test_a_view_reranks_without_forwarding_the_diagnostics(
    jclient: Client, openai_server: OpenAIServer
) -> None:
    seed(jclient)
    openai_server.reply_with(judge_by_text({THREE: 0.0, TWO: 1.0}))
    body = ok(view_query(jclient, "g_note_judged", {"task": THREE}))
    assert texts(body)[0] == TWO
    assert body["ranking"]["kind"] == "llm_judge"
    assert "rerank" not in body


def test_an_invalid_judgment_fails_the_search(jclient: Client, openai_server: OpenAIServer) -> None:
    seed(jclient)
    openai_server.reply_with(json.dumps({"judgments": [{"id": "r1", "score": 0.5}]}))
    response = jclient.post("/search", json={**REQUEST, "rerank": {"backend": "llm_judge", "top_n": 2}})
    err = error(response, 503, "model_output_invalid")
    assert any("no judgment for r2" in d["msg"] for d in err["details"])


def test_an_unreachable_model_is_503(jclient: Client, openai_server: OpenAIServer) -> None:
    seed(jclient)
    openai_server.fail_next(503, times=20)
    error(view_query(jclient, "g_note_judged", {"task": THREE}), 503, "backend_unavailable")


def test_combined_searches_rerank_each_source_and_keep_rrf(
    jclient: Client, openai_server: OpenAIServer
) -> None:
    seed(jclient)
    scores = {THREE: 0.0, TWO: 0.5, ONE: 1.0}
    openai_server.reply_with(judge_by_text(scores), judge_by_text(scores))
    sources = [
        {"name": "a", "mode": "text", "scope": {"collections": ["g_notes"]}, "k": 3},
        {"name": "b", "mode": "text", "scope": {"collections": ["g_notes"]}, "k": 1},
    ]
    request = {"q": THREE, "sources": sources, "fuse": {"kind": "rrf"}, "include": ["text"],
               "rerank": {"backend": "llm_judge", "top_n": 2}}  # fmt: skip
    body = ok(jclient.post("/search", json=request))
    assert body["ranking"]["kind"] == "rrf"
    assert body["rerank"]["judged_records"] == 2 + 1  # b's list holds one record
    assert [(h["text"], h["source_ranks"]) for h in body["hits"]] == [
        (THREE, {"a": 2, "b": 1}),  # agreement beats a's reranked first place
        (TWO, {"a": 1}),
        (ONE, {"a": 3}),
    ]
    assert len(openai_server.requests) == 2
