"""The Python SDK of Memseek: `Memseek` (blocking) and `AsyncMemseek` over the HTTP API.

A layer of its own: it needs only `httpx` and `jsonschema` and imports nothing of the server.

>>> from memseek.client import Memseek, NotFound
>>> with Memseek() as m:  # MEMSEEK_URL, MEMSEEK_API_KEY
...     result = m.search(q="budget", mode="hybrid", include=["text"])
"""

from memseek.client.aio import AsyncMemseek
from memseek.client.errors import AuthenticationError
from memseek.client.errors import Conflict
from memseek.client.errors import ErrorDetail
from memseek.client.errors import InvalidRequest
from memseek.client.errors import MemseekError
from memseek.client.errors import NotFound
from memseek.client.errors import ResponseTooLarge
from memseek.client.errors import Unavailable
from memseek.client.models import Erased
from memseek.client.models import Erasure
from memseek.client.models import GraphPath
from memseek.client.models import Health
from memseek.client.models import Hit
from memseek.client.models import Ranking
from memseek.client.models import Record
from memseek.client.models import SearchResult
from memseek.client.models import ViewInfo
from memseek.client.models import ViewRef
from memseek.client.models import ViewResult
from memseek.client.models import WriteCall
from memseek.client.models import WriteInfo
from memseek.client.models import Written
from memseek.client.sync import Memseek

__all__ = [
    "AsyncMemseek",
    "AuthenticationError",
    "Conflict",
    "Erased",
    "Erasure",
    "ErrorDetail",
    "GraphPath",
    "Health",
    "Hit",
    "InvalidRequest",
    "Memseek",
    "MemseekError",
    "NotFound",
    "Ranking",
    "Record",
    "ResponseTooLarge",
    "SearchResult",
    "Unavailable",
    "ViewInfo",
    "ViewRef",
    "ViewResult",
    "WriteCall",
    "WriteInfo",
    "Written",
]
