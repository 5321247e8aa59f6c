"""What the sync and async transports share: configuration, the request and reply values, JSON
encoding, the retry rule and the send loop's decisions. Nothing here does IO.
"""

from __future__ import annotations

import json
import os
import random
from collections.abc import Mapping
from dataclasses import dataclass
from dataclasses import field
from datetime import date
from typing import Any
from uuid import UUID

import httpx

from memseek.client.errors import AuthenticationError
from memseek.client.errors import ErrorDetail
from memseek.client.errors import InvalidRequest
from memseek.client.errors import MemseekError
from memseek.client.errors import Unavailable
from memseek.client.errors import error_for

DEFAULT_URL = "http://127.0.0.1:8000"
USER_AGENT = "memseek-python"


@dataclass(frozen=True, slots=True)
class Config:
    """Where and how a client talks to the service.

    `timeout` bounds each attempt (seconds); `retries` is how many more attempts a retryable
    call gets; the pause before retry n (from 0) is `backoff * 2**n`, at most `max_backoff`,
    with jitter so that many clients do not retry in step.
    """

    base_url: str
    api_key: str | None
    timeout: float
    retries: int
    backoff: float
    max_backoff: float = 8.0
    headers: Mapping[str, str] = field(default_factory=dict)

    @classmethod
    def resolve(cls, base_url: str | None, api_key: str | None, **options: Any) -> Config:
        """Arguments first, then MEMSEEK_URL / MEMSEEK_API_KEY, then the local default URL —
        read when the client is built, never at import."""
        url = base_url or os.environ.get("MEMSEEK_URL") or DEFAULT_URL
        key = api_key if api_key is not None else os.environ.get("MEMSEEK_API_KEY")
        if options["retries"] < 0 or options["timeout"] <= 0 or options["backoff"] < 0:
            raise ValueError("retries and backoff must be at least 0, timeout above 0")
        return cls(base_url=url.rstrip("/"), api_key=key or None, **options)

    def client_options(self) -> dict[str, Any]:
        """The keyword arguments of `httpx.Client` / `httpx.AsyncClient`."""
        headers = {"User-Agent": USER_AGENT, "Accept": "application/json", **self.headers}
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        return {"base_url": self.base_url, "headers": headers, "timeout": self.timeout}

    def pause(self, attempt: int, reply: Reply | None) -> float:
        """Seconds to wait before retry `attempt` (from 0): the reply's numeric `Retry-After`
        when it sent one, else the jittered exponential backoff."""
        after = reply.headers.get("retry-after", "") if reply is not None else ""
        if after.isdigit():
            return min(float(after), 60.0)
        pause: float = min(self.backoff * 2**attempt, self.max_backoff)
        return pause * random.uniform(0.5, 1.0)


@dataclass(frozen=True, slots=True)
class Request:
    """One HTTP call to make. `retry`: whether a failed attempt (no response, or 503) may be
    repeated — true for reads, and for writes whose every record carries an idempotency key.
    `wait` adds seconds to the attempt's timeout for a server that holds the request open
    (`POST /records?wait=true`); `after` is a pause before it is sent (an operation polling a
    job's state)."""

    method: str
    path: str
    params: Mapping[str, str] | None = None
    body: Any = None
    retry: bool = False
    wait: float = 0.0
    after: float = 0.0

    def options(self, config: Config) -> dict[str, Any]:
        """The keyword arguments of `httpx.Client.request` for this call."""
        out: dict[str, Any] = {"params": self.params}
        if self.body is not None:
            out["content"] = encode(self.body)
            out["headers"] = {"Content-Type": "application/json"}
        if self.wait:
            out["timeout"] = config.timeout + self.wait
        return out


@dataclass(frozen=True, slots=True)
class Reply:
    """A response, read completely: status, headers (lower-case names) and body bytes."""

    status: int
    headers: Mapping[str, str]
    content: bytes

    @classmethod
    def of(cls, response: httpx.Response) -> Reply:
        headers = {name.lower(): value for name, value in response.headers.items()}
        return cls(response.status_code, headers, response.content)

    def json(self) -> Any:
        """The body parsed as JSON (a non-JSON success body is reported as the service's error)."""
        try:
            return json.loads(self.content)
        except ValueError:
            raise MemseekError(
                "the response is not JSON", status=self.status, code="invalid_response", body=self.text
            ) from None

    @property
    def text(self) -> str:
        return self.content.decode("utf-8", "replace")

    def expect(self, *statuses: int) -> Reply:
        """This reply when its status is one of `statuses` (default: any 2xx), else the error
        its body describes."""
        if self.status in statuses or (not statuses and 200 <= self.status < 300):
            return self
        raise error_for(self.status, self.content)


def jsonable(value: Any) -> Any:
    """A value JSON can carry: datetimes as ISO 8601, UUIDs as strings, array-likes (numpy)
    through their `tolist()`; anything else as `json` takes it."""
    if isinstance(value, date):
        return value.isoformat()
    if isinstance(value, UUID):
        return str(value)
    if hasattr(value, "tolist"):
        return value.tolist()
    raise TypeError(f"{type(value).__name__} is not JSON serializable")


def encode(body: Any) -> bytes:
    """The request body as JSON; NaN and infinities are refused here, as the service refuses
    them (standard JSON has no such numbers)."""
    try:
        return json.dumps(body, default=jsonable, allow_nan=False, ensure_ascii=False).encode()
    except (TypeError, ValueError) as exc:
        raise InvalidRequest(
            f"the request cannot be sent as JSON: {exc}",
            status=422,
            code="invalid_request",
            details=[ErrorDetail(("body",), str(exc))],
        ) from None


def as_json(value: Any) -> Any:
    """`value` as the service will receive it (tuples as lists, datetimes as strings, ...)."""
    return json.loads(encode(value))


RETRY_STATUSES = frozenset({503})
REFUSED_UNDONE = 429
"""The service refused the request before doing any of it (a workspace over its share of the
request threads): any call may be repeated after its `Retry-After`, a write too."""


def retry_pause(config: Config, request: Request, attempt: int, outcome: Reply | Exception) -> float | None:
    """Seconds to wait before attempt `attempt + 1`, or None when `outcome` is final: a reply
    that is neither a 503 nor a 429, a call that may not be repeated (a 429 always may), or no
    retries left."""
    if isinstance(outcome, Reply) and outcome.status == REFUSED_UNDONE:
        return config.pause(attempt, outcome) if attempt < config.retries else None
    retryable = isinstance(outcome, Exception) or outcome.status in RETRY_STATUSES
    if not (retryable and request.retry and attempt < config.retries):
        return None
    return config.pause(attempt, outcome if isinstance(outcome, Reply) else None)


NO_KEY = (
    "this client has no API key: pass api_key= or set MEMSEEK_API_KEY (memseek serve prints the "
    "first one; memseek key create default mints another)"
)


def final(outcome: Reply | Exception, request: Request, config: Config) -> Reply:
    """The reply to hand back, or the `Unavailable` a failed connection ends in. A 401 to a
    client built without a key says how to give it one: the service can only say that the
    header is missing."""
    if isinstance(outcome, Reply) and outcome.status == 401 and config.api_key is None:
        refused = error_for(outcome.status, outcome.content)
        raise AuthenticationError(
            f"{refused.message}; {NO_KEY}", status=401, code=refused.code, body=refused.body
        )
    if isinstance(outcome, Reply):
        return outcome
    kind = "timeout" if isinstance(outcome, httpx.TimeoutException) else "connection_error"
    cause = f"{type(outcome).__name__}: {outcome}"
    message = f"{request.method} {request.path}: no response from the service ({cause})"
    raise Unavailable(message, code=kind) from outcome
