"""A real HTTP server speaking the OpenAI protocol, for testing the HTTP model providers.

It listens on 127.0.0.1 (ephemeral port) in a background thread and serves

* `POST /v1/embeddings`: deterministic bag-of-words hashing vectors of `dimensions` floats (unit
  length; texts sharing words are similar), optionally listed in reverse order;
* `POST /v1/chat/completions`: scripted message contents, taken from a queue filled by
  `reply_with(...)` (strings, or callables of the request's messages, such as `judge_by_text`'s
  replies of an `llm_judge` reranker), `"{}"` when it is empty.

Every request is recorded (`requests`). `fail_next(status, times)`, `delay_next(seconds, times)`
and `respond_next(body, times)` script failures, slow answers and malformed bodies.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import math
import re
import threading
import time
from collections import deque
from collections.abc import Callable
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler
from http.server import ThreadingHTTPServer
from typing import Any

Messages = list[dict[str, Any]]
Reply = str | Callable[[Messages], str]


@dataclass(frozen=True)
class Recorded:
    """One request as the server saw it."""

    path: str
    headers: dict[str, str]
    body: Any


JUDGED_RECORD = re.compile(r'<record id="([^"]+)">(.*?)</record>')
"""One record of an `llm_judge` prompt: its prompt id and text."""


def judged_records(messages: Messages) -> dict[str, str]:
    """Prompt id → record text, from the user message an `llm_judge` reranker sent."""
    return dict(JUDGED_RECORD.findall(messages[-1]["content"]))


def judge_by_text(scores: dict[str, float]) -> Callable[[Messages], str]:
    """A scripted `llm_judge` reply scoring each record it was sent by its text (`scores[text]`)."""

    def reply(messages: Messages) -> str:
        judged = judged_records(messages).items()
        return json.dumps({"judgments": [{"id": rid, "score": scores[text]} for rid, text in judged]})

    return reply


def hashed_embedding(text: str, dimensions: int) -> list[float]:
    """A unit vector: each lower-cased word adds ±1 at a position chosen by its sha256."""
    vector = [0.0] * dimensions
    for word in re.findall(r"\w+", text.lower()) or [""]:
        digest = hashlib.sha256(word.encode()).digest()
        sign = 1.0 if digest[4] & 1 else -1.0
        vector[int.from_bytes(digest[:4], "big") % dimensions] += sign
    norm = math.sqrt(sum(x * x for x in vector)) or 1.0
    return [x / norm for x in vector]


@dataclass
class _Scripted:
    """A scripted answer for the next request(s): status, raw body and delay."""

    status: int = 200
    body: bytes | None = None
    delay: float = 0.0


class OpenAIServer:
    """The server's state and controls; `base_url` has no `/v1` suffix (providers accept both)."""

    def __init__(self, *, dimensions: int = 384, api_key: str | None = None) -> None:
        self.dimensions = dimensions
        self.api_key = api_key
        self.reverse_embeddings = False
        self.requests: list[Recorded] = []
        self._replies: deque[Reply] = deque()
        self._scripted: deque[_Scripted] = deque()
        self._lock = threading.Lock()
        self._http = ThreadingHTTPServer(("127.0.0.1", 0), _handler_for(self))
        self._http.daemon_threads = True
        # A short poll interval keeps shutdown (once per test) fast.
        self._thread = threading.Thread(
            target=self._http.serve_forever, kwargs={"poll_interval": 0.02}, name="openai-server", daemon=True
        )

    @property
    def base_url(self) -> str:
        host, port = self._http.server_address[:2]
        return f"http://{host}:{port}"

    def environ(self, api_key: str = "test") -> dict[str, str]:
        """The variables the shipped `openai` model aliases read, pointing at this server."""
        return {"OPENAI_BASE_URL": self.base_url, "OPENAI_API_KEY": api_key}

    def start(self) -> OpenAIServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._http.shutdown()
        self._http.server_close()

    def reset(self) -> None:
        """Forget the recorded requests and everything scripted (between tests sharing the server)."""
        with self._lock:
            self.requests.clear()
            self._replies.clear()
            self._scripted.clear()

    def reply_with(self, *replies: Reply) -> None:
        """Queue chat message contents (a string, or a callable of the messages returning one)."""
        with self._lock:
            self._replies.extend(replies)

    def fail_next(self, status: int, times: int = 1) -> None:
        """Answer the next `times` requests with `status` and an OpenAI-style error body."""
        body = json.dumps({"error": {"message": f"scripted {status}", "type": "server_error"}}).encode()
        self._script(_Scripted(status=status, body=body), times)

    def delay_next(self, seconds: float, times: int = 1) -> None:
        """Wait `seconds` before answering each of the next `times` requests normally."""
        self._script(_Scripted(delay=seconds), times)

    def respond_next(self, body: Any, times: int = 1, status: int = 200) -> None:
        """Answer the next `times` requests with `body` (bytes as-is, anything else as JSON)."""
        raw = body if isinstance(body, bytes) else json.dumps(body).encode()
        self._script(_Scripted(status=status, body=raw), times)

    def _script(self, scripted: _Scripted, times: int) -> None:
        with self._lock:
            self._scripted.extend([scripted] * times)

    def answer(self, path: str, headers: dict[str, str], body: Any) -> tuple[int, bytes]:
        """Record the request and compute (status, body); called by the handler threads."""
        with self._lock:
            self.requests.append(Recorded(path, headers, body))
            scripted = self._scripted.popleft() if self._scripted else _Scripted()
        time.sleep(scripted.delay)
        if scripted.body is not None:
            return scripted.status, scripted.body
        if self.api_key is not None and headers.get("authorization") != f"Bearer {self.api_key}":
            return 401, b'{"error": {"message": "bad key"}}'
        routes = {"/v1/embeddings": self._embeddings, "/v1/chat/completions": self._chat}
        if path not in routes:
            return 404, b'{"error": {"message": "no such route"}}'
        return 200, json.dumps(routes[path](body)).encode()

    def _embeddings(self, body: dict[str, Any]) -> dict[str, Any]:
        texts = body["input"] if isinstance(body["input"], list) else [body["input"]]
        data = [
            {"object": "embedding", "index": i, "embedding": hashed_embedding(text, self.dimensions)}
            for i, text in enumerate(texts)
        ]
        if self.reverse_embeddings:
            data.reverse()
        return {"object": "list", "data": data, "model": body["model"], "usage": {"prompt_tokens": 0}}

    def _chat(self, body: dict[str, Any]) -> dict[str, Any]:
        with self._lock:
            reply = self._replies.popleft() if self._replies else "{}"
        content = reply(body["messages"]) if callable(reply) else reply
        message = {"role": "assistant", "content": content}
        return {
            "object": "chat.completion",
            "model": body["model"],
            "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
        }


def _handler_for(server: OpenAIServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_POST(self) -> None:  # noqa: N802 (http.server's naming)
            raw = self.rfile.read(int(self.headers.get("Content-Length", 0)))
            headers = {name.lower(): value for name, value in self.headers.items()}
            status, body = server.answer(self.path, headers, json.loads(raw or b"null"))
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                self.wfile.write(body)  # fails when the client gave up (timeout tests)

        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 (base signature)
            """Silence the per-request stderr lines."""

    return Handler


@contextmanager
def running_server(**options: Any) -> Iterator[OpenAIServer]:
    """A started server, stopped on exit."""
    server = OpenAIServer(**options).start()
    try:
        yield server
    finally:
        server.stop()
