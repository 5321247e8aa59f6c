"""llm_judge reranking over real HTTP against tests/openai_server.py (no database)."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from datetime import UTC
from datetime import datetime
from typing import Any
from uuid import UUID

import pytest

from memseek.errors import BackendUnavailable
from memseek.models import ModelOutputInvalid
from memseek.models import ModelUnavailable
from memseek.models.config import ModelDecl
from memseek.models.openai import OpenAIChat
from memseek.search.fuse import Hit
from memseek.search.render import estimate_tokens
from memseek.search.rerank import PROMPT_TOKENS
from memseek.search.rerank import RECORD_CHARS
from memseek.search.rerank import SYSTEM_PROMPT
from memseek.search.rerank import build_prompt
from memseek.search.rerank import diagnostics
from memseek.search.rerank import llm_judge
from memseek.search.rerank import read_judgments
from tests.openai_server import Messages
from tests.openai_server import OpenAIServer

URL_ENV = "TEST_RERANK_BASE_URL"
MOMENT = datetime(2026, 7, 1, tzinfo=UTC)


def cheap(server: OpenAIServer, **overrides: Any) -> OpenAIChat:
    decl = ModelDecl.model_validate(
        {"kind": "chat", "provider": "openai", "model": "judge-1", "base_url_env": URL_ENV, **overrides}
    )
    return OpenAIChat(decl, alias="cheap", environ={URL_ENV: server.base_url}, backoff_seconds=0.01)


def hits(*texts: str) -> list[Hit]:
    """Hits in rank order with descending values 10, 9, 8, ..."""
    return [Hit(UUID(int=i + 1), 10.0 - i, MOMENT, i, record={"text": text}) for i, text in enumerate(texts)]


def sent_records(messages: Messages) -> dict[str, str]:
    """Prompt id → record text, read back from the user message the server received."""
    user = messages[-1]["content"]
    return dict(re.findall(r'<record id="(r\d+)">(.*?)</record>', user))


def judge(score_of: Callable[[str], float]) -> Callable[[Messages], str]:
    """A scripted model that scores each record it was sent by its text."""

    def reply(messages: Messages) -> str:
        judgments = [{"id": rid, "score": score_of(text)} for rid, text in sent_records(messages).items()]
        return json.dumps({"judgments": judgments})

    return reply


def score_in_text(text: str) -> float:
    return float(text.split("=")[1])


def test_judged_records_are_reordered_by_score_ties_by_previous_order(openai_server: OpenAIServer) -> None:
    openai_server.reply_with(judge(score_in_text))
    ranked = hits("a=0.2", "b=0.9", "c=0.5", "d=0.9", "e=1.0", "f=0.0")
    out = llm_judge(cheap(openai_server), "which one", ranked, top_n=4)
    assert [h.record["text"] for h in out.hits] == ["b=0.9", "d=0.9", "c=0.5", "a=0.2", "e=1.0", "f=0.0"]
    assert out.judged == 4
    # 1 + score for judged; the previous pool-relative score (values 10..5) for the rest.
    assert [h.value for h in out.hits] == pytest.approx([1.9, 1.9, 1.5, 1.2, 0.2, 0.0])


def test_the_request_is_a_bounded_escaped_json_mode_chat(openai_server: OpenAIServer) -> None:
    openai_server.reply_with(judge(lambda _text: 0.5))
    long_text = "<b>x & y</b> " + "word " * 1000
    llm_judge(cheap(openai_server), "q <script>", hits(long_text, "plain"), top_n=20)
    (request,) = openai_server.requests
    assert request.body["model"] == "judge-1"
    assert request.body["response_format"] == {"type": "json_object"}
    system, user = (m["content"] for m in request.body["messages"])
    assert system == SYSTEM_PROMPT
    assert "<query>q \\u003cscript\\u003e</query>" in user
    sent = sent_records(request.body["messages"])
    assert sent["r1"].startswith("\\u003cb\\u003ex \\u0026 y\\u003c/b\\u003e word")
    assert len(sent["r1"]) <= RECORD_CHARS + 40  # escaping lengthens the 700 kept characters a little
    assert " [...] " in sent["r1"]
    assert sent["r2"] == "plain"


def test_the_token_budget_can_send_fewer_than_top_n() -> None:
    wide = "语" * 5000  # non-ASCII: one estimated token per character
    prompt, count = build_prompt("q", [wide] * 20)
    assert 0 < count < 20
    assert prompt.count("<record ") == count
    _, everything = build_prompt("q", ["short"] * 20)
    assert everything == 20
    assert estimate_tokens(SYSTEM_PROMPT) + estimate_tokens(prompt) <= PROMPT_TOKENS
    one_more, _ = build_prompt("q", [wide] * 20, budget=10**6)
    grown = "\n".join(one_more.split("\n")[: count + 3]) + "\n</records>"
    assert estimate_tokens(SYSTEM_PROMPT) + estimate_tokens(grown) > PROMPT_TOKENS


def test_only_the_records_that_fit_are_judged(openai_server: OpenAIServer) -> None:
    openai_server.reply_with(judge(lambda _text: 1.0))
    ranked = hits(*(["语" * 800] * 20))
    out = llm_judge(cheap(openai_server), "q", ranked, top_n=20)
    assert 0 < out.judged < 20
    assert [h.id for h in out.hits] == [h.id for h in ranked]  # equal scores keep the previous order
    assert diagnostics(20, out.judged) == {
        "backend": "llm_judge", "top_n": 20, "model": "cheap", "judged_records": out.judged,
    }  # fmt: skip


def test_no_hits_no_model_call(openai_server: OpenAIServer) -> None:
    assert llm_judge(cheap(openai_server), "q", [], top_n=5).judged == 0
    assert openai_server.requests == []


@pytest.mark.parametrize(
    ("answer", "problem"),
    [
        pytest.param({"judgments": [{"id": "r1", "score": 0.5}]}, "no judgment for r2", id="missing"),
        pytest.param(
            {"judgments": [{"id": "r1", "score": 1}, {"id": "r2", "score": 0}, {"id": "r3", "score": 0}]},
            "unknown record id 'r3'",
            id="extra",
        ),
        pytest.param(
            {"judgments": [{"id": "r1", "score": 1}, {"id": "r1", "score": 0}, {"id": "r2", "score": 0}]},
            "r1 is judged more than once",
            id="duplicate",
        ),
        pytest.param(
            {"judgments": [{"id": "r1", "score": 1.5}, {"id": "r2", "score": 0}]},
            "outside [0, 1]",
            id="above-one",
        ),
        pytest.param(
            {"judgments": [{"id": "r1", "score": -0.1}, {"id": "r2", "score": 0}]},
            "outside [0, 1]",
            id="negative",
        ),
        pytest.param(
            {"judgments": [{"id": "r1", "score": "0.5"}, {"id": "r2", "score": 0}]},
            "not a finite number",
            id="string-score",
        ),
        pytest.param(
            {"judgments": [{"id": "r1", "score": True}, {"id": "r2", "score": 0}]},
            "not a finite number",
            id="boolean-score",
        ),
        pytest.param(
            {"judgments": [{"id": "r1"}, {"id": "r2", "score": 0}]}, "not a finite number", id="no-score"
        ),
        pytest.param(
            {"judgments": [["r1", 1], {"id": "r2", "score": 0}]}, "expected an object", id="not-object"
        ),
        pytest.param({"scores": []}, "judgments list", id="wrong-shape"),
        pytest.param([{"id": "r1", "score": 1}], "judgments list", id="bare-list"),
    ],
)
def test_invalid_judgments_fail_the_search(openai_server: OpenAIServer, answer: Any, problem: str) -> None:
    openai_server.reply_with(json.dumps(answer))
    with pytest.raises(ModelOutputInvalid) as raised:
        llm_judge(cheap(openai_server), "q", hits("a", "b", "c"), top_n=2)
    assert raised.value.status == 503
    assert any(problem in d.msg for d in raised.value.details), raised.value.details


def test_extra_keys_inside_a_judgment_are_ignored() -> None:
    answer = {"judgments": [{"id": "r2", "score": 0.1, "reason": "meh"}, {"id": "r1", "score": 0.7}]}
    assert read_judgments(answer, 2) == [0.7, 0.1]


def test_an_answer_that_is_not_json_is_invalid(openai_server: OpenAIServer) -> None:
    openai_server.reply_with("I think r1 is best")
    with pytest.raises(ModelOutputInvalid):
        llm_judge(cheap(openai_server), "q", hits("a"), top_n=1)


def test_an_unreachable_model_is_unavailable(openai_server: OpenAIServer) -> None:
    openai_server.fail_next(503, times=10)
    with pytest.raises(ModelUnavailable) as raised:
        llm_judge(cheap(openai_server, max_retries=1), "q", hits("a"), top_n=1)
    assert isinstance(raised.value, BackendUnavailable)
    assert raised.value.status == 503
