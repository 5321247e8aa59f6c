"""What `MemseekStore` does for each LangGraph operation, as plans (`_plan`) over the SDK.

Items are the current keyed records of one collection and type: namespace → `entity` (labels
joined with the separator), key → `key`, value → `content`. Memseek reads records through
searches, so two walks are built from them:

- a *scan* reads every current record of a scope newest first, 100 (the service's largest `k`)
  per `recent` search, each page bounded by `occurred_before` the oldest `occurred_at` seen so
  far (the store writes strictly increasing `occurred_at` values, so pages meet exactly);
- a *ranked* search is one `hybrid` search of the query.

Searches return record ids and metadata, not `content`: values are read per record
(`GET /records/{id}`), concurrently on the async client.
"""

from __future__ import annotations

import contextlib
import json
import operator
import threading
from collections.abc import Iterable
from collections.abc import Mapping
from collections.abc import Sequence
from dataclasses import dataclass
from dataclasses import field
from datetime import UTC
from datetime import datetime
from datetime import timedelta
from typing import Any
from uuid import uuid4

from langgraph.store.base import GetOp
from langgraph.store.base import InvalidNamespaceError
from langgraph.store.base import Item
from langgraph.store.base import ListNamespacesOp
from langgraph.store.base import MatchCondition
from langgraph.store.base import Op
from langgraph.store.base import PutOp
from langgraph.store.base import Result
from langgraph.store.base import SearchItem
from langgraph.store.base import SearchOp
from langgraph.store.base import get_text_at_path  # the path syntax LangGraph's own stores index by

from memseek.client import Conflict
from memseek.client import ErrorDetail
from memseek.client import Hit
from memseek.client import InvalidRequest
from memseek.client import MemseekError
from memseek.client import Record
from memseek.integrations._plan import Call
from memseek.integrations._plan import Gather
from memseek.integrations._plan import Plan

PAGE = 100
"""The service's largest `k`: a scan reads 100 records a search, a ranked search ranks 100 at most."""
MAX_ENTITIES = 100
"""How many entities one search's scope may name."""
MAX_RECORDS = 1000
"""How many records one `POST /records` writes."""
SCAN_INCLUDE = ("entity", "key", "occurred_at")
RANKED_INCLUDE = ("entity", "key")
WHERE_OPERATORS = {"$eq": "eq", "$gt": "gt", "$gte": "gte", "$lt": "lt", "$lte": "lte"}
"""LangGraph's filter operators the service's `where` has."""
FILTER_OPERATORS = frozenset({*WHERE_OPERATORS, "$ne"})
ORDERS = {"$gt": operator.gt, "$gte": operator.ge, "$lt": operator.lt, "$lte": operator.le}
DELETE_REASON = "deleted through the LangGraph store"
TICK = timedelta(microseconds=1)


class Clock:
    """Strictly increasing UTC timestamps (microseconds, what the service keeps): every record a
    store writes gets its own `occurred_at`, even within one batch, so scans can page by it."""

    def __init__(self) -> None:
        self._last = datetime.min.replace(tzinfo=UTC)
        self._lock = threading.Lock()

    def now(self) -> datetime:
        with self._lock:
            self._last = max(datetime.now(UTC), self._last + TICK)
            return self._last


@dataclass(frozen=True)
class Layout:
    """How items are records: which collection and record type, how namespaces join into entities,
    where search text comes from, which filters the service applies, and how writes wait."""

    collection: str
    record_type: str
    separator: str
    text_fields: tuple[str, ...]
    where_fields: frozenset[str]
    nested_namespaces: bool
    wait: bool
    wait_timeout: float | None
    clock: Clock = field(default_factory=Clock, compare=False)

    def entity(self, namespace: Sequence[str]) -> str:
        return self.separator.join(namespace)

    def namespace(self, entity: str) -> tuple[str, ...]:
        return tuple(entity.split(self.separator))

    def scope(self, entities: Sequence[str] | None, versions: str = "current") -> dict[str, Any]:
        """The store's records (of `entities`, when named): current values only, or all versions."""
        scope: dict[str, Any] = {"collections": [self.collection], "types": [self.record_type]}
        scope.update({"keyed": True, "versions": versions, "status": "active"})
        return scope if entities is None else {**scope, "entities": list(entities)}

    def record(self, op: PutOp) -> dict[str, Any]:
        """The record a put writes; its idempotency key makes a lost reply safe to retry."""
        value = dict(op.value or {})
        return {
            "collection": self.collection,
            "entity": self.entity(op.namespace),
            "type": self.record_type,
            "key": op.key,
            "text": self.text(value, op.index),
            "content": value,
            "occurred_at": self.clock.now(),
            "idempotency_key": f"langgraph-store:{uuid4()}",
        }

    def text(self, value: Mapping[str, Any], index: Sequence[str] | bool | None) -> str:
        """The text searches match: the put's `index` paths, else the store's `text_fields`, in
        LangGraph's path syntax; the JSON of the whole value when they hold no text."""
        paths = index if isinstance(index, list) else self.text_fields
        found = [text for path in paths for text in get_text_at_path(value, path) if text.strip()]
        return "\n".join(found) or json.dumps(value, sort_keys=True, ensure_ascii=False, default=str)

    def item(self, record: Record) -> Item:
        """The item a record stands for; both timestamps are its write time (see the docs)."""
        return Item(**self._fields(record))

    def search_item(self, record: Record, score: float | None) -> SearchItem:
        return SearchItem(**self._fields(record), score=score)

    def _fields(self, record: Record) -> dict[str, Any]:
        assert record.created_at is not None and record.key is not None, "a stored keyed record"
        return {
            "namespace": self.namespace(record.entity),
            "key": record.key,
            "value": record.content,
            "created_at": record.created_at,
            "updated_at": record.created_at,
        }


# --- a batch ------------------------------------------------------------------------------------


def batch(layout: Layout, ops: Sequence[Op]) -> Plan[list[Result]]:
    """Every operation in order, one result each; consecutive puts of values are written together
    (each `POST /records` of up to 1,000 is atomic)."""
    for op in ops:
        check_namespace(layout, op)
        check_value(op)
    results: list[Result] = []
    for run in _runs(ops):
        if isinstance(run, list):
            yield from write(layout, run)
            results.extend([None] * len(run))
        else:
            results.append((yield from one(layout, run)))
    return results


def _runs(ops: Sequence[Op]) -> Iterable[Op | list[PutOp]]:
    puts: list[PutOp] = []
    for op in ops:
        if isinstance(op, PutOp) and op.value is not None:
            puts.append(op)
            continue
        if puts:
            yield puts
            puts = []
        yield op
    if puts:
        yield puts


def one(layout: Layout, op: Op) -> Plan[Result]:
    if isinstance(op, GetOp):
        return (yield from get(layout, op.namespace, op.key))
    if isinstance(op, SearchOp):
        return (yield from search(layout, op))
    if isinstance(op, ListNamespacesOp):
        return (yield from list_namespaces(layout, op))
    if isinstance(op, PutOp):
        yield from delete(layout, op.namespace, op.key)
        return None
    raise TypeError(f"unknown store operation {type(op).__name__}")


def check_namespace(layout: Layout, op: Op) -> None:
    """Labels are non-empty strings without a period (LangGraph's rule) or the separator (which
    would make two namespaces one entity); checked before anything is sent."""
    labels = op.namespace_prefix if isinstance(op, SearchOp) else getattr(op, "namespace", ())
    conditions = op.match_conditions or () if isinstance(op, ListNamespacesOp) else ()
    for label in [*labels, *(label for c in conditions for label in c.path)]:
        if not isinstance(label, str) or not label or "." in label or layout.separator in label:
            raise InvalidNamespaceError(
                f"namespace label {label!r} must be a non-empty string without '.' or {layout.separator!r}"
            )


def check_value(op: Op) -> None:
    """A put's value is a dict (a JSON object: the record's content) or None (a delete); anything
    else is the caller's error at `value`, refused before anything is sent."""
    value: Any = op.value if isinstance(op, PutOp) else None  # typed a dict; callers send anything
    if value is not None and not isinstance(value, Mapping):
        detail = ErrorDetail(("value",), f"expected a dict, got {type(value).__name__}")
        raise InvalidRequest("invalid value", status=422, code="invalid_request", details=[detail])


# --- writes -------------------------------------------------------------------------------------


def write(layout: Layout, puts: Sequence[PutOp]) -> Plan[None]:
    """Write the values; with `wait`, each write returns once its records are searchable."""
    records = [layout.record(op) for op in puts]
    for start in range(0, len(records), MAX_RECORDS):
        yield _write(layout, records[start : start + MAX_RECORDS])


def _write(layout: Layout, records: list[dict[str, Any]]) -> Call:
    return lambda m: m.records.write(records, wait=layout.wait, timeout=layout.wait_timeout)


def delete(layout: Layout, namespace: Sequence[str], key: str) -> Plan[None]:
    """Retract every live version of the slot, oldest first: retracting only the current value
    would make the previous one current again, and retracting it last means no older value is
    ever current in between. A version another caller retracted meanwhile is already gone."""
    scan = Scan(layout.scope([layout.entity(namespace)], versions="all"))
    versions: list[Hit] = []
    while not scan.done:
        versions += [hit for hit in (yield from scan.page()) if hit.key == key]
    for hit in reversed(versions):
        with contextlib.suppress(Conflict):
            yield _retract(hit.id)


def _retract(record_id: str) -> Call:
    return lambda m: m.records.retract(record_id, DELETE_REASON)


# --- reads --------------------------------------------------------------------------------------


def _read(record_id: str) -> Call:
    return lambda m: m.records.get(record_id)


def _live(record: Record) -> bool:
    """Not retracted since the search found it (a concurrent delete)."""
    return record.retracted_at is None


def get(layout: Layout, namespace: Sequence[str], key: str) -> Plan[Item | None]:
    """The slot's current value: the namespace is scanned until its key appears."""
    scan = Scan(layout.scope([layout.entity(namespace)]))
    while not scan.done:
        found = [hit for hit in (yield from scan.page()) if hit.key == key]
        if found:
            record: Record = yield _read(found[0].id)
            return layout.item(record) if _live(record) else None
    return None


def search(layout: Layout, op: SearchOp) -> Plan[list[SearchItem]]:
    """A ranked search with a query (each item's `score` the hit's), else the newest values first
    (no score: a listing ranks nothing); `filter` keys among the store's `where_fields` are
    applied by the service, the others to the values read."""
    check_window(op)
    entities = yield from _entities(layout, tuple(op.namespace_prefix))
    if entities == [] or op.limit == 0:
        return []
    where, residual = split_filter(layout.where_fields, op.filter)
    source: Ranked | Scan
    if op.query:
        k = op.offset + op.limit if residual is None else PAGE
        source = Ranked(_ranked_spec(layout.scope(entities), op.query, k, where))
    else:
        source = Scan(layout.scope(entities), where)
    found = yield from _matching(source, residual, op.offset, op.limit)
    return [layout.search_item(record, hit.score if op.query else None) for hit, record in found]


def check_window(op: SearchOp) -> None:
    """Refuse a window the store cannot serve before anything is sent: a ranked search ranks at
    most `PAGE` items (the service's largest `k`)."""
    window = (("offset", op.offset), ("limit", op.limit))
    problems = [(name, f"must be at least 0, not {value}") for name, value in window if value < 0]
    if op.query and op.offset + op.limit > PAGE:
        problems.append(("limit", f"offset + limit must be at most {PAGE} for a search with a query"))
    if problems:
        details = [ErrorDetail((name,), msg) for name, msg in problems]
        raise InvalidRequest("invalid search window", status=422, code="invalid_request", details=details)


def _ranked_spec(scope: dict[str, Any], query: str, k: int, where: dict[str, Any] | None) -> dict[str, Any]:
    spec = {"q": query, "mode": "hybrid", "scope": scope, "k": k, "include": list(RANKED_INCLUDE)}
    return spec if where is None else {**spec, "where": where}


def _matching(
    source: Ranked | Scan, residual: dict[str, Any] | None, offset: int, limit: int
) -> Plan[list[tuple[Hit, Record]]]:
    """The hits at `offset`..`offset + limit` among those whose values pass `residual`, with
    their records. Without a residual filter every hit passes, so skipped hits are not read."""
    if residual is None:
        hits = (yield from _first(source, offset + limit))[offset:]
        records: list[Record] = yield Gather(tuple(_read(hit.id) for hit in hits))
        return [(hit, record) for hit, record in zip(hits, records, strict=True) if _live(record)]
    found: list[tuple[Hit, Record]] = []
    while len(found) < offset + limit and not source.done:
        page = yield from source.page()
        while page and len(found) < offset + limit:
            chunk, page = page[:limit], page[limit:]
            records = yield Gather(tuple(_read(hit.id) for hit in chunk))
            pairs = zip(chunk, records, strict=True)
            found += [(hit, rec) for hit, rec in pairs if _live(rec) and matches(rec.content, residual)]
    return found[offset : offset + limit]


def _first(source: Ranked | Scan, count: int) -> Plan[list[Hit]]:
    hits: list[Hit] = []
    while len(hits) < count and not source.done:
        hits += yield from source.page()
    return hits[:count]


def list_namespaces(layout: Layout, op: ListNamespacesOp) -> Plan[list[tuple[str, ...]]]:
    """The namespaces holding items that meet every condition, cut at `max_depth`, sorted."""
    namespaces = yield from all_namespaces(layout)
    matched = {ns for ns in namespaces if all(namespace_matches(c, ns) for c in op.match_conditions or ())}
    if op.max_depth is not None:
        matched = {ns[: op.max_depth] for ns in matched}
    return sorted(matched)[op.offset : op.offset + op.limit]


def all_namespaces(layout: Layout) -> Plan[set[tuple[str, ...]]]:
    """Every namespace holding an item: the store scanned whole (Memseek lists no entities)."""
    scan, found = Scan(layout.scope(None)), set[tuple[str, ...]]()
    while not scan.done:
        found.update(layout.namespace(hit.entity or "") for hit in (yield from scan.page()))
    return found


def _entities(layout: Layout, prefix: tuple[str, ...]) -> Plan[list[str] | None]:
    """The entities a search prefix reads: None for the whole store; the namespace itself; or,
    with `nested_namespaces`, it and every namespace under it (found by listing the store)."""
    if not prefix:
        return None
    if not layout.nested_namespaces:
        return [layout.entity(prefix)]
    namespaces = yield from all_namespaces(layout)
    entities = sorted(layout.entity(ns) for ns in namespaces if ns[: len(prefix)] == prefix)
    if len(entities) > MAX_ENTITIES:
        detail = ErrorDetail(("namespace_prefix",), f"{len(entities)} namespaces; at most {MAX_ENTITIES}")
        raise InvalidRequest(
            "a search reads at most 100 namespaces", status=422, code="invalid_request", details=[detail]
        )
    return entities


def namespace_matches(condition: MatchCondition, namespace: tuple[str, ...]) -> bool:
    """LangGraph's namespace conditions: a prefix or suffix of labels, `*` matching any one."""
    path = tuple(condition.path)
    if len(namespace) < len(path):
        return False
    start = 0 if condition.match_type == "prefix" else len(namespace) - len(path)
    labels = namespace[start : start + len(path)]
    return all(want in ("*", have) for want, have in zip(path, labels, strict=True))


# --- the two walks ------------------------------------------------------------------------------


@dataclass
class Scan:
    """The current records of `scope` (passing `where`), newest first, a page per search.

    Each page is bounded by `occurred_before` one microsecond after the oldest `occurred_at` of
    the page before, and the ids already seen are dropped, so records sharing that instant are
    neither lost nor repeated. A full page of nothing new (more than 100 records written in one
    instant by another writer) cannot be paged past and is reported as an error."""

    scope: dict[str, Any]
    where: dict[str, Any] | None = None
    before: datetime | None = None
    seen: set[str] = field(default_factory=set)
    done: bool = False

    def page(self) -> Plan[list[Hit]]:
        scope = dict(self.scope)
        if self.before is not None:
            scope["occurred_before"] = self.before + TICK
        spec: dict[str, Any] = {"mode": "recent", "scope": scope, "k": PAGE, "include": list(SCAN_INCLUDE)}
        if self.where is not None:
            spec["where"] = self.where
        result = yield lambda m: m.search(spec)
        fresh = [hit for hit in result if hit.id not in self.seen]
        self.done = len(result) < PAGE
        if not (fresh or self.done):
            message = f"more than {PAGE} records share occurred_at {self.before}"
            raise MemseekError(message, code="scan_stalled")
        self.seen.update(hit.id for hit in fresh)
        self.before = result[-1].occurred_at if len(result) else None
        return fresh


@dataclass
class Ranked:
    """One search's hits, best first: a single page."""

    spec: dict[str, Any]
    done: bool = False

    def page(self) -> Plan[list[Hit]]:
        spec = self.spec
        result = yield lambda m: m.search(spec)
        self.done = True
        return list(result)


# --- filters ------------------------------------------------------------------------------------


def split_filter(
    where_fields: frozenset[str], conditions: Mapping[str, Any] | None
) -> tuple[dict[str, Any] | None, dict[str, Any] | None]:
    """(`where` for the service, the rest for the values read): a condition on one of the
    `where_fields` made only of `$eq`/`$gt`/`$gte`/`$lt`/`$lte` (or a plain value, meaning
    `$eq`) is the service's; anything else is checked against each value read."""
    where: dict[str, Any] = {}
    residual: dict[str, Any] = {}
    for name, condition in (conditions or {}).items():
        _check_operators(name, condition)
        pushed = _where(condition) if name in where_fields else None
        if pushed is None:
            residual[name] = condition
        else:
            where[name] = pushed
    return where or None, residual or None


def _where(condition: Any) -> dict[str, Any] | None:
    if not isinstance(condition, Mapping):
        return {"eq": condition}
    if condition and all(op in WHERE_OPERATORS for op in condition):
        return {WHERE_OPERATORS[op]: value for op, value in condition.items()}
    return None


def _check_operators(name: str, condition: Any) -> None:
    if not isinstance(condition, Mapping):
        return
    unknown = [op for op in condition if op.startswith("$") and op not in FILTER_OPERATORS]
    if unknown:
        message = f"unknown operator {unknown[0]}; use one of {', '.join(sorted(FILTER_OPERATORS))}"
        detail = ErrorDetail(("filter", name), message)
        raise InvalidRequest("invalid filter", status=422, code="invalid_request", details=[detail])
    for key, value in condition.items():
        _check_operators(f"{name}.{key}", value)


def matches(value: Mapping[str, Any], conditions: Mapping[str, Any] | None) -> bool:
    """Whether a value passes LangGraph's filter: each key equal to the condition's value (nested
    objects compared key by key) or meeting its `$` operators."""
    return all(_compare(value.get(name), condition) for name, condition in (conditions or {}).items())


def _compare(actual: Any, expected: Any) -> bool:
    if not isinstance(expected, Mapping):
        return bool(actual == expected)
    if any(key.startswith("$") for key in expected):
        return all(_operator(actual, op, operand) for op, operand in expected.items())
    return isinstance(actual, Mapping) and all(_compare(actual.get(k), v) for k, v in expected.items())


def _operator(actual: Any, op: str, operand: Any) -> bool:
    """`$eq` and `$ne` compare any values; an order needs two numbers or two strings."""
    if op in ("$eq", "$ne"):
        return bool(actual == operand) == (op == "$eq")
    numbers = all(isinstance(v, int | float) and not isinstance(v, bool) for v in (actual, operand))
    comparable = numbers or (isinstance(actual, str) and isinstance(operand, str))
    return comparable and bool(ORDERS[op](actual, operand))
