"""A LangChain retriever over Memseek: `MemseekRetriever` (`pip install 'memseek[langchain]'`).

>>> from memseek.integrations.langchain import MemseekRetriever
>>> retriever = MemseekRetriever(client=m, view="customer_context",
...                              parameters={"entity": "contact.maria"}, query_parameter="task")
>>> [doc.page_content for doc in retriever.invoke("Q3 budget")]
['Maria confirmed the Q3 budget.']
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from langchain_core.callbacks import AsyncCallbackManagerForRetrieverRun
from langchain_core.callbacks import CallbackManagerForRetrieverRun
from langchain_core.documents import Document
from langchain_core.retrievers import BaseRetriever
from pydantic import Field
from pydantic import PrivateAttr
from pydantic import SecretStr
from pydantic import model_validator

from memseek.client import AsyncMemseek
from memseek.client import Hit
from memseek.client import Memseek
from memseek.client import Record
from memseek.client import SearchResult
from memseek.client import ViewInfo
from memseek.client import ViewResult
from memseek.integrations._clients import Clients
from memseek.integrations._plan import Call
from memseek.integrations._plan import Gather
from memseek.integrations._plan import Plan
from memseek.integrations._plan import arun
from memseek.integrations._plan import run

DEFAULT_QUERY_PARAMETER = "task"
INCLUDE = ("text", "collection", "entity", "type", "key", "occurred_at")
"""What a search request is made to include: the text a `Document` holds and the metadata a
caller filters documents on. Values the request already includes stay, in their order."""
METADATA = ("id", "rank", "score", "rank_score", "collection", "entity", "type", "key", "occurred_at")
"""Always in `metadata` (None where the response left one out), so documents have one shape;
every other value of the hit (`source_ranks`, `fields`, `scores`, `created_at`, ...) is added
as the response has it."""
FROM_RECORD = ("collection", "entity", "type", "key", "occurred_at")
"""The metadata a hit without `text` takes from its record, read to fill `page_content`."""


class MemseekRetriever(BaseRetriever):
    """Documents from a Memseek view or search request, one per hit, in rank order.

    Give exactly one of:

    - `view`: the name of a view; each query calls its active version with `parameters` plus
      `{query_parameter: query}` (left out: `task`, or the view's one free string parameter,
      `_query_parameter`). The view decides scope, ranking and `k` — what the caller may not
      widen is exactly what the view fixes.
    - `search`: a search request (`POST /search`, single or combined) with the query put in `q`;
      its `include` is extended with `INCLUDE`.

    `page_content` is the hit's `text`. A hit without it (a view whose query includes no `text`)
    is completed from its record (`GET /records/{id}`, one read per hit, concurrent on the async
    path), which also supplies the metadata `FROM_RECORD`; include `text` in views written for
    retrievers to save those reads. `metadata` holds the hit's `id`, `rank`, `score`,
    `rank_score`, `collection`, `entity`, `type`, `key` and `occurred_at` (ISO 8601), None where
    the response left one out, every other value of the hit as the response has it
    (`source_ranks`, `fields`, `scores`, `created_at`, ... when present), and `view` and
    `view_version` for a view.

    Clients: `client` (a `Memseek`, an `AsyncMemseek`, or both paths' own clients built from `url`
    and `api_key`, which default to `MEMSEEK_URL` and `MEMSEEK_API_KEY`). With a `Memseek` the
    async path runs the blocking one in a worker thread; with an `AsyncMemseek` only the async
    path (`ainvoke`) works. Errors are the SDK's (`InvalidRequest` with the service's `code` and
    `loc`, `NotFound` for an unknown view, ...), raised unchanged.
    """

    client: Memseek | AsyncMemseek | None = None
    url: str | None = None
    api_key: SecretStr | None = None
    view: str | None = None
    parameters: dict[str, Any] = Field(default_factory=dict)
    query_parameter: str = DEFAULT_QUERY_PARAMETER
    search: dict[str, Any] | None = None

    _clients: Clients = PrivateAttr()
    _query_name: str | None = PrivateAttr(None)

    @model_validator(mode="after")
    def _one_source(self) -> MemseekRetriever:
        if (self.view is None) == (self.search is None):
            raise ValueError("give exactly one of view or search")
        if self.search is not None and "q" in self.search:
            raise ValueError("search must not set q: the query is put there")
        if self.view is not None and self.query_parameter in self.parameters:
            raise ValueError(f"parameters must not set {self.query_parameter!r}: the query is put there")
        return self

    def model_post_init(self, context: Any, /) -> None:
        key = None if self.api_key is None else self.api_key.get_secret_value()
        self._clients = Clients(self.client, self.url, key)

    def _get_relevant_documents(
        self, query: str, *, run_manager: CallbackManagerForRetrieverRun
    ) -> list[Document]:
        return run(self._retrieve(query), self._clients.sync())

    async def _aget_relevant_documents(
        self, query: str, *, run_manager: AsyncCallbackManagerForRetrieverRun
    ) -> list[Document]:
        client = self._clients.aio()
        if client is None:
            return await super()._aget_relevant_documents(query, run_manager=run_manager)
        return await arun(self._retrieve(query), client)

    def _retrieve(self, query: str) -> Plan[list[Document]]:
        if self.view is not None and self._query_name is None:
            self._query_name = yield from self._query_parameter()
        result: SearchResult | ViewResult = yield self._request(query)
        missing = [hit.id for hit in result if hit.text is None]
        records: list[Record] = (yield Gather(tuple(_read(i) for i in missing))) if missing else []
        by_id = {record.id: record for record in records}
        view = result.view if isinstance(result, ViewResult) else None
        extra = {} if view is None else {"view": view.name, "view_version": view.version}
        return [document(hit, by_id.get(hit.id), extra) for hit in result]

    def _query_parameter(self) -> Plan[str]:
        """The view parameter the query goes into: `query_parameter` when given; by default
        `task` where the view declares it, else the view's one string parameter (of free text:
        no enum, no timestamp) that `parameters` leave unset, a required one first. Read once,
        from the view's published contract (`GET /views`)."""
        if "query_parameter" in self.model_fields_set:
            return self.query_parameter
        views: list[ViewInfo] = yield lambda m: m.views.list()
        schema = next((v.input_schema for v in views if v.name == self.view and v.active), {})
        return free_text_parameter(schema, self.parameters) or self.query_parameter

    def _request(self, query: str) -> Call:
        if self.view is not None:
            name = self._query_name or self.query_parameter
            view, arguments = self.view, {**self.parameters, name: query}
            return lambda m: m.views.query(view, arguments)
        spec = dict(self.search or {})
        spec["include"] = list(dict.fromkeys([*spec.get("include", ()), *INCLUDE]))
        spec["q"] = query
        return lambda m: m.search(spec)


def free_text_parameter(schema: Mapping[str, Any], fixed: Mapping[str, Any]) -> str | None:
    """`task` when `schema` has it, else its one free-text string parameter not in `fixed` (the
    one required, when several are free), else None."""
    properties: Mapping[str, Any] = schema.get("properties", {})
    if DEFAULT_QUERY_PARAMETER in properties:
        return DEFAULT_QUERY_PARAMETER
    free = [
        name
        for name, prop in properties.items()
        if name not in fixed and prop.get("type") == "string" and not {"enum", "format"} & set(prop)
    ]
    required = [name for name in free if name in schema.get("required", ())]
    for names in (required, free):
        if len(names) == 1:
            return names[0]
    return None


def _read(record_id: str) -> Call:
    return lambda m: m.records.get(record_id)


def document(hit: Hit, record: Record | None, extra: Mapping[str, Any]) -> Document:
    """One hit as a `Document` (the record, when given, completes what the hit left out)."""
    metadata: dict[str, Any] = {name: getattr(hit, name) for name in METADATA}
    if record is not None:
        metadata.update({name: getattr(record, name) for name in FROM_RECORD if metadata[name] is None})
    if metadata["occurred_at"] is not None:
        metadata["occurred_at"] = metadata["occurred_at"].isoformat()
    metadata.update({name: value for name, value in hit.raw.items() if name not in (*metadata, "text")})
    text = hit.text if hit.text is not None else (record.text if record is not None else "")
    return Document(id=hit.id, page_content=text, metadata={**metadata, **extra})
