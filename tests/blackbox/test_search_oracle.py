"""Search results against an independent oracle: a few hundred records written over HTTP with
supplied embeddings, and for many queries the expected hits computed here from the spec's
definitions alone ("Scopes", "Typed filters", "Ordering and ties", "How to read score", "Advanced
query knobs", "How a search actually runs").

Vectors are small integers and every semantic query is one word, whose test-server embedding is
`±1` at one position: the cosine similarity of a record is then `±v[p] / |v|`, computed exactly
here and by PostgreSQL alike, so equal vectors tie exactly and the tie rules decide.

The corpus is written once for the module into a workspace of its own (`ao8-oracle`); no test here
uses the function-scoped `tenant`, whose teardown would empty it.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable
from collections.abc import Iterator
from dataclasses import dataclass
from dataclasses import field
from datetime import UTC
from datetime import datetime
from datetime import timedelta
from datetime import timezone
from typing import Any

import pytest
from sqlalchemy.engine import Engine

from memseek.runtime import Runtime
from tests.blackbox.conftest import environ
from tests.blackbox.support import EMBED_MODEL
from tests.blackbox.support import search
from tests.blackbox.support import sx_catalog
from tests.conftest import Client
from tests.conftest import client_for
from tests.conftest import empty_tenant_tables
from tests.conftest import make_tenant
from tests.helpers import fetch
from tests.helpers import ok
from tests.helpers import runtime_for
from tests.helpers import touches_written
from tests.helpers import written
from tests.openai_server import OpenAIServer
from tests.openai_server import hashed_embedding

# --- the oracle -----------------------------------------------------------------------------------


ALL = ["ao8_vec", "ao8_side"]


@dataclass
class Rec:
    """One written record as the oracle sees it."""

    seq: int
    collection: str
    entity: str
    type: str
    text: str
    vector: list[int]
    occurred_at: datetime
    content: dict[str, Any]
    importance: int | None
    key: str | None = None
    status: str = "active"
    depth: int = 0
    parents: list[int] = field(default_factory=list)
    id: str = ""
    retracted: bool = False
    current: bool = True

    def body(self, ids_by_seq: dict[int, str]) -> dict[str, Any]:
        """The `POST /records` item."""
        item: dict[str, Any] = {
            "collection": self.collection,
            "entity": self.entity,
            "type": self.type,
            "text": self.text,
            "content": self.content,
            "occurred_at": self.occurred_at.isoformat(),
            "status": self.status,
            "embedding": [float(x) for x in self.vector],
            "embedding_model": EMBED_MODEL,
            "scores": {} if self.importance is None else {"importance": self.importance},
        }
        if self.key is not None:
            item["key"] = self.key
        if self.parents:
            item["derived_from"] = [ids_by_seq[p] for p in self.parents]
        return item


@dataclass
class Corpus:
    """Every record written, in ingestion order."""

    records: list[Rec]

    def by_id(self, record_id: str) -> Rec:
        return next(r for r in self.records if r.id == record_id)

    def named(self, entity: str) -> list[Rec]:
        return [r for r in self.records if r.entity == entity]


SIM = ["similarity"]
Scope = dict[str, Any] | Callable[[Corpus], dict[str, Any]]
FOUR = {"entities": ["acct-0", "acct-1", "acct-2", "acct-3"]}


def window(entity: str, low: int, high: int) -> Callable[[Corpus], dict[str, Any]]:
    """A scope of `entity` whose strict time bounds sit exactly on the occurred_at of its records
    ranked `low` and `high` oldest (so a record on each bound must be excluded)."""

    def make(corpus: Corpus) -> dict[str, Any]:
        times = sorted({r.occurred_at for r in corpus.named(entity)})
        return {
            "entities": [entity],
            "occurred_after": times[low].isoformat(),
            "occurred_before": times[high].isoformat(),
        }

    return make


VECTOR_CASES = [
    pytest.param("nebula", {"entities": ["rare"]}, {}, 10, {}, id="rare-entity-1.7pct"),
    pytest.param("pulsar", {"entities": ["tiny"]}, {}, 2, {}, id="tiny-entity-k2"),
    pytest.param(
        "comet", {"entities": ["rare", "tiny"], "types": ["note", "fact"]}, {}, 10, {}, id="rare-tiny-types"
    ),
    pytest.param("quasar", {"entities": ["acct-3"]}, {}, 5, {}, id="one-account-k5"),
    pytest.param("quasar", FOUR, {}, 5, {}, id="four-accounts-k5-candidates-100"),
    pytest.param("meteor", FOUR, {}, 12, {}, id="four-accounts-k12-candidates-120"),
    pytest.param("nebula", FOUR, {}, 20, {}, id="four-accounts-k20-candidates-200"),
    pytest.param("pulsar", FOUR, {}, 5, {"candidates": 37}, id="four-accounts-candidates-37"),
    pytest.param("comet", FOUR, {}, 3, {"candidates": 1}, id="four-accounts-candidates-1"),
    pytest.param("quasar", {}, {"channel": {"eq": "sms"}, "vip": {"eq": True}}, 20, {}, id="where-handful"),
    pytest.param(
        "nebula",
        {},
        {"amount": {"gte": 20, "lt": 40}, "tags": {"contains_any": ["churn"]}},
        10,
        {},
        id="where-range-tags",
    ),
    pytest.param("pulsar", {}, {"tags": {"contains_all": ["vip", "beta"]}}, 10, {}, id="where-contains-all"),
    pytest.param(
        "meteor",
        {},
        {"starts_at": {"exists": False}, "count": {"lte": 3}},
        10,
        {},
        id="where-exists-false-count",
    ),
    pytest.param(
        "comet",
        {"types": ["event"]},
        {
            "starts_at": {"gte": "2026-02-01T00:00:00Z", "lt": "2026-03-15T00:00:00Z"},
            "channel": {"in": ["email", "call"]},
        },
        10,
        {},
        id="where-starts-at-window-in",
    ),
    pytest.param("quasar", {"types": ["fact"], "keyed": True}, {}, 20, {}, id="keyed-current"),
    pytest.param("quasar", {"keyed": True, "versions": "all"}, {}, 30, {}, id="keyed-versions-all"),
    pytest.param("nebula", {"status": "draft"}, {}, 20, {}, id="status-draft"),
    pytest.param("pulsar", {"status": "all", "keyed": True}, {}, 30, {}, id="status-all-keyed"),
    pytest.param(
        "meteor",
        {"status": "all", "keyed": True, "versions": "all"},
        {},
        40,
        {},
        id="status-all-versions-all",
    ),
    pytest.param(
        "comet",
        {"entities": ["acct-0", "acct-1", "acct-3"], "depth_lte": 1, "keyed": False},
        {},
        50,
        {},
        id="depth-lte-1",
    ),
    pytest.param("nebula", {"entities": ["acct-0", "acct-3"], "depth_lte": 0}, {}, 50, {}, id="depth-lte-0"),
    pytest.param("quasar", window("acct-5", 3, 25), {}, 30, {}, id="strict-time-bounds"),
    pytest.param("meteor", {"collections": ["ao8_side"]}, {}, 10, {}, id="side-collection"),
    pytest.param(
        "pulsar",
        {"collections": ["ao8_vec"], "collection_versions": {"ao8_vec": [1]}, "entities": ["tiny", "rare"]},
        {},
        10,
        {},
        id="collection-versions",
    ),
    pytest.param(
        "comet",
        {"entities": ["acct-4", "acct-5"], "types": ["note", "event"]},
        {"channel": {"in": ["sms", "note"]}, "amount": {"exists": True}},
        10,
        {},
        id="entities-types-where-combo",
    ),
]
TWINS = {"entities": ["twins"]}
VECTOR_CASES += [
    pytest.param("quasar", TWINS, {}, 20, {}, id="twins-ties"),
    pytest.param("nebula", TWINS, {}, 4, {}, id="twins-ties-k4"),
    pytest.param(
        "pulsar", {"collections": ["ao8_vec"]}, {"channel": {"eq": "fax"}}, 6, {}, id="twins-where-fax"
    ),
    pytest.param(
        "comet",
        {"entities": [f"acct-{i}" for i in range(8)] + ["rare", "tiny"] + [f"nobody-{i}" for i in range(90)]},
        {},
        20,
        {},
        id="a-hundred-entities",
    ),
]


@dataclass(frozen=True)
class Expected:
    """The oracle's answer: ids in order, their rank values and public scores."""

    ids: list[str]
    values: list[float]
    scores: list[float]


BASE = datetime(2026, 1, 1, tzinfo=UTC)
CHANNELS = ["email", "call", "note", "sms"]
RARE_WORD = "zephyr"
"""A word some texts hold (text mode)."""
VOCAB = ["amber", "basalt", "cobalt", "dune", "ember", "fjord", "garnet", "harbor"]
TAGS = ["vip", "churn", "beta", "trial"]


def random_content(rng: random.Random) -> dict[str, Any]:
    content: dict[str, Any] = {}
    if rng.random() < 0.85:
        content["channel"] = rng.choice(CHANNELS)
    if rng.random() < 0.8:
        content["amount"] = round(rng.uniform(0, 100), 2)
    if rng.random() < 0.8:
        content["count"] = rng.randint(0, 20)
    if rng.random() < 0.7:
        content["vip"] = rng.random() < 0.3
    if rng.random() < 0.75:
        content["tags"] = rng.sample(TAGS, rng.randint(0, 3))
    if rng.random() < 0.6:
        content["starts_at"] = (BASE + timedelta(hours=rng.randint(0, 4000))).isoformat()
    return content


DIM = 384


def random_vector(rng: random.Random) -> list[int]:
    return [rng.randint(-3, 3) for _ in range(DIM)]


def twins(recs: list[Rec], rng: random.Random) -> None:
    """Entity `twins`: two vectors and two moments shared by several records, so value and
    occurred_at tie and ingestion order decides."""
    vectors = [random_vector(rng), random_vector(rng)]
    moments = [BASE + timedelta(hours=100), BASE + timedelta(hours=200)]
    plan = [(0, 0, 3), (0, 0, 3), (1, 1, 3), (0, 1, 3), (0, 0, 3), (1, 0, 3), (0, 0, 4), (1, 1, 3), (0, 0, 3)]
    for vector, moment, importance in plan:
        recs.append(
            Rec(
                seq=len(recs),
                collection="ao8_vec",
                entity="twins",
                type="note",
                text=f"twin {RARE_WORD}",
                vector=list(vectors[vector]),
                occurred_at=moments[moment],
                content={"channel": "fax"},
                importance=importance,
            )
        )


def build(rng: random.Random) -> list[Rec]:
    """The corpus: 8 bulk accounts, two selective ones (`rare` 6, `tiny` 3), a side collection, keyed
    facts with history, drafts and derived records."""
    recs: list[Rec] = []

    def add(entity: str, collection: str = "ao8_vec", **values: Any) -> Rec:
        words = rng.sample(VOCAB, 3) + ([RARE_WORD] if rng.random() < 0.06 else [])
        occurred = BASE + timedelta(hours=rng.randint(0, 4000))
        if recs and rng.random() < 0.12:  # ties in occurred_at across records
            occurred = rng.choice(recs).occurred_at
        values.setdefault("importance", rng.choice([None, 0, 1, 2, 3, 4, 5]))
        values.setdefault(
            "type", rng.choice(["note", "event", "fact"]) if collection == "ao8_vec" else "note"
        )
        rec = Rec(
            seq=len(recs),
            collection=collection,
            entity=entity,
            text=f"record {len(recs)} " + " ".join(words),
            vector=random_vector(rng),
            occurred_at=occurred,
            content=random_content(rng) if collection == "ao8_vec" else {"channel": rng.choice(CHANNELS)},
            **values,
        )
        if recs and rng.random() < 0.05:  # an identical vector: an exact similarity tie
            rec.vector = list(rng.choice(recs).vector)
        recs.append(rec)
        return rec

    for i in range(280):
        add(f"acct-{i % 8}", status="draft" if rng.random() < 0.08 else "active")
    for _ in range(6):
        add("rare")
    for _ in range(3):
        add("tiny")
    for i in range(30):
        add(f"acct-{i % 3}", collection="ao8_side")
    for slot in range(6):  # keyed facts, three values each, plus a draft value
        for _ in range(3):
            add(f"person-{slot % 3}", key=f"risk-{slot}", type="fact")
        add(f"person-{slot % 3}", key=f"risk-{slot}", type="fact", status="draft")
    for i in range(8):  # derived records, depth 1 and 2
        parent = recs[i * 3]
        child = add(parent.entity, parents=[parent.seq], depth=parent.depth + 1)
        if i % 2:
            add(child.entity, parents=[child.seq], depth=child.depth + 1)
    twins(recs, rng)
    return recs


RETRACTED = [5, 17, 40, 77, 150, 281, 285]
"""Sequence numbers of records retracted after writing (events, a `rare` record, a `tiny` one)."""


def settle_currency(recs: list[Rec]) -> None:
    """Per slot `(collection, entity, key, status)`, the newest non-retracted value is current;
    events are always current."""
    newest: dict[tuple[str, str, str, str], Rec] = {}
    for rec in recs:
        if rec.key is not None and not rec.retracted:
            newest[(rec.collection, rec.entity, rec.key, rec.status)] = rec
    for rec in recs:
        if rec.key is not None:
            rec.current = newest.get((rec.collection, rec.entity, rec.key, rec.status)) is rec


def write_corpus(client: Client, recs: list[Rec]) -> None:
    """One `POST /records?wait=true` per record, so ingestion order is the list's order."""
    ids_by_seq: dict[int, str] = {}
    for rec in recs:
        (result,) = written(client, rec.body(ids_by_seq), query="?wait=true")
        assert result["processing"] == "ready", result
        rec.id = ids_by_seq[rec.seq] = result["id"]
    keyed_current = [r.seq for r in recs if r.key is not None and r.status == "active"][2::6]
    for seq in RETRACTED + keyed_current:
        ok_status = client.post(f"/records/{recs[seq].id}/retract", json={"reason": "audit"}).status_code
        assert ok_status == 200, ok_status
        recs[seq].retracted = True
    settle_currency(recs)


@pytest.fixture(scope="module")
def ao8_runtime(
    runtime: Runtime, sx_server: OpenAIServer, tmp_path_factory: pytest.TempPathFactory
) -> Runtime:
    root = sx_catalog(tmp_path_factory.mktemp("ao8-catalog"), "sx-views", "ao8")
    return runtime_for(runtime, root, environ(sx_server))


@pytest.fixture(scope="module")
def corpus_client(ao8_runtime: Runtime, engine: Engine) -> Iterator[tuple[Client, Corpus]]:
    tenant = make_tenant(engine, "ao8-oracle")
    client = client_for(ao8_runtime, tenant)
    recs = build(random.Random(8))
    write_corpus(client, recs)
    yield client, Corpus(recs)
    empty_tenant_tables(engine)


@pytest.fixture
def corpus(corpus_client: tuple[Client, Corpus]) -> Corpus:
    return corpus_client[1]


def describe(got: list[str], want: list[str], corpus: Corpus) -> str:
    def seqs(ids_: list[str]) -> list[int]:
        return [corpus.by_id(i).seq if any(r.id == i for r in corpus.records) else -1 for i in ids_]

    return f"got seqs {seqs(got)}, expected {seqs(want)}"


def check(body: dict[str, Any], expected: Expected, corpus: Corpus) -> None:
    """Ids, order, rank, rank_score and score of a scored response against the oracle."""
    got = [h["id"] for h in body["hits"]]
    assert got == expected.ids, describe(got, expected.ids, corpus)
    assert [h["rank"] for h in body["hits"]] == list(range(1, len(got) + 1))
    assert [h["rank_score"] for h in body["hits"]] == pytest.approx(expected.values, abs=1e-9)
    assert [h["score"] for h in body["hits"]] == pytest.approx(expected.scores, abs=1e-9)


def default_candidates(k: int) -> int:
    return min(1000, max(100, 10 * k))


def ts(value: str) -> datetime:
    return datetime.fromisoformat(value.replace("Z", "+00:00"))


def condition(value: Any, op: str, operand: Any, name: str) -> bool:
    """One typed condition of the spec's table on a (possibly missing) value."""
    if op == "exists":
        return (value is not None) == operand
    if value is None:
        return False
    if name == "starts_at" and op in {"gt", "gte", "lt", "lte", "eq"}:
        operand = ts(operand)
    compare: dict[str, Callable[[], bool]] = {
        "eq": lambda: value == operand and isinstance(value, bool) == isinstance(operand, bool),
        "in": lambda: value in operand,
        "gt": lambda: value > operand,
        "gte": lambda: value >= operand,
        "lt": lambda: value < operand,
        "lte": lambda: value <= operand,
        "contains_any": lambda: bool(set(value) & set(operand)),
        "contains_all": lambda: set(operand) <= set(value),
    }
    return compare[op]()


def field_value(rec: Rec, name: str) -> Any:
    value = rec.content.get(name)
    if name == "starts_at" and value is not None:
        return ts(value)
    return value


def eligible(
    corpus: Corpus, scope: dict[str, Any], where: dict[str, Any], collections: list[str]
) -> list[Rec]:
    """Every record the spec's scope and filters admit."""
    status = scope.get("status", "active")
    keyed = scope.get("keyed", "any")
    out = []
    for rec in corpus.records:
        checks = [
            not rec.retracted,
            rec.collection in scope.get("collections", collections),
            status == "all" or rec.status == status,
            scope.get("versions", "current") == "all" or rec.current,
            "entities" not in scope or rec.entity in scope["entities"],
            "types" not in scope or rec.type in scope["types"],
            keyed == "any" or (rec.key is not None) == keyed,
            "occurred_after" not in scope or rec.occurred_at > ts(scope["occurred_after"]),
            "occurred_before" not in scope or rec.occurred_at < ts(scope["occurred_before"]),
            "depth_lte" not in scope or rec.depth <= scope["depth_lte"],
        ]
        checks += [
            condition(field_value(rec, name), op, operand, name)
            for name, conditions in where.items()
            for op, operand in conditions.items()
        ]
        if all(checks):
            out.append(rec)
    return out


def public_scores(values: list[float], pool: list[float]) -> list[float]:
    """ "score = 1 if high == low, (u - low) / (high - low) otherwise", bounds over the ranked pool."""
    low, high = min(pool), max(pool)
    return [1.0 if high == low else (u - low) / (high - low) for u in values]


def scored_order(values: dict[int, float], recs: list[Rec]) -> list[Rec]:
    """ "results are ordered by internal value descending, then by occurred_at descending, then by
    ingestion order descending, then by record id"."""
    return sorted(recs, key=lambda r: (values[r.seq], r.occurred_at, r.seq), reverse=True)


def expect(ranked: list[Rec], pool: list[Rec], value: Callable[[Rec], float], k: int) -> Expected:
    values = {r.seq: value(r) for r in pool}
    top = scored_order(values, pool)[:k]
    shown = [values[r.seq] for r in top]
    return Expected([r.id for r in top], shown, public_scores(shown, list(values.values())))


def request(mode: str, scope: dict[str, Any], where: dict[str, Any], k: int, **extra: Any) -> dict[str, Any]:
    body: dict[str, Any] = {"mode": mode, "k": k, **extra}
    if scope:
        body["scope"] = scope
    if where:
        body["where"] = where
    return body


def resolve(scope: Scope, corpus: Corpus, where: dict[str, Any]) -> dict[str, Any]:
    """The scope, naming ao8_vec when it filters: "every field you filter on … exists … in every
    collection version" the search could read from."""
    made = scope(corpus) if callable(scope) else scope
    return {"collections": ["ao8_vec"], **made} if where else made


def position(word: str) -> tuple[int, float]:
    """The one non-zero position of a one-word query's embedding and its sign."""
    embedded = hashed_embedding(word, DIM)
    (index,) = [i for i, x in enumerate(embedded) if x != 0.0]
    return index, embedded[index]


def similarity(rec: Rec, word: str) -> float:
    """`1 - cosine_distance(query, record)` for a one-word query."""
    index, sign = position(word)
    return sign * rec.vector[index] / math.sqrt(sum(x * x for x in rec.vector))


def semantic(elig: list[Rec], word: str) -> list[Rec]:
    """Nearest first."""
    return sorted(elig, key=lambda r: -similarity(r, word))


@pytest.fixture
def ao8(corpus_client: tuple[Client, Corpus]) -> Client:
    return corpus_client[0]


@pytest.mark.parametrize(("word", "scope", "where", "k", "params"), VECTOR_CASES)
def test_vector_search_equals_exact_cosine_oracle(
    ao8: Client,
    corpus: Corpus,
    word: str,
    scope: Scope,
    where: dict[str, Any],
    k: int,
    params: dict[str, Any],
) -> None:
    """ "`[similarity]` | `1 - cosine_distance(query, record)`"; "results are ordered by internal value
    descending, then by occurred_at descending, then by ingestion order descending"; the pool of
    "score = (u - low) / (high - low)" is "Every candidate the search ranked, before `k` cut the
    response — by default at least 100 and at most 1,000" with "params.candidates (1–1000, default
    min(1000, max(100, 10 * k)) per search)"; and every scope rule and typed filter applied. Every
    scope here holds fewer eligible records than its candidate count, or names entities, so the
    candidates are the true nearest: "a selective scope still returns enough candidates"."""
    scope = resolve(scope, corpus, where)
    elig = eligible(corpus, scope, where, ALL)
    cand = params.get("candidates", default_candidates(k))
    pool = semantic(elig, word)[:cand]
    extra = {"params": params} if params else {}
    body = search(ao8, request("vector", scope, where, k, q=word, rank=SIM, **extra))
    check(body, expect(pool, pool, lambda r: similarity(r, word), k), corpus)
    assert body["backend"]["candidate_count"] <= cand


@pytest.mark.parametrize(
    ("word", "k"),
    [
        pytest.param("quasar", 20, id="k20"),
        pytest.param("nebula", 10, id="k10"),
        pytest.param("comet", 5, id="k5"),
    ],
)
def test_broad_vector_search_recall(ao8: Client, corpus: Corpus, word: str, k: int) -> None:
    """ "The search engine does not decide what you get back — it is a fast way to propose candidates"
    and "Similarity … recomputed at read time from canonical data": over the whole workspace the
    approximate index may propose (recall asserted ≥ 0.95 of the exact top k), but every returned
    rank_score is the exact similarity and the returned order is the spec's order of those values."""
    elig = eligible(corpus, {}, {}, ALL)
    exact = scored_order({r.seq: similarity(r, word) for r in elig}, elig)[:k]
    body = search(ao8, request("vector", {}, {}, k, q=word, rank=SIM))
    got = [corpus.by_id(h["id"]) for h in body["hits"]]
    assert len(got) == k
    assert len({r.seq for r in got} & {r.seq for r in exact}) >= 0.95 * k
    assert [h["rank_score"] for h in body["hits"]] == pytest.approx(
        [similarity(r, word) for r in got], abs=1e-9
    )
    values = {r.seq: similarity(r, word) for r in got}
    assert [r.seq for r in got] == [r.seq for r in scored_order(values, got)]


IMP = ["score", "importance"]
RECENT_CASES = [
    pytest.param({}, {}, 5, {}, id="broad-k5-candidates-100"),
    pytest.param({}, {}, 15, {}, id="broad-k15-candidates-150"),
    pytest.param({}, {}, 3, {"candidates": 7}, id="broad-candidates-7"),
    pytest.param({"entities": ["rare", "tiny"]}, {}, 10, {}, id="selective-entities"),
    pytest.param({}, {"channel": {"eq": "sms"}, "vip": {"eq": False}}, 10, {}, id="where-handful"),
    pytest.param({"types": ["fact"], "status": "all", "versions": "all"}, {}, 30, {}, id="facts-all-all"),
    pytest.param({"keyed": True, "status": "draft"}, {}, 10, {}, id="keyed-drafts"),
    pytest.param(
        window("acct-2", 2, 30), {"tags": {"contains_any": ["vip", "trial"]}}, 20, {}, id="window-tags"
    ),
    pytest.param(
        {"collections": ["ao8_side"], "entities": ["acct-1"]},
        {"channel": {"in": ["email", "sms"]}},
        10,
        {},
        id="side",
    ),
    pytest.param(
        FOUR, {"count": {"gt": 5, "lte": 15}}, 5, {"candidates": 20}, id="four-accounts-count-candidates-20"
    ),
]
RECENT_CASES += [
    pytest.param(TWINS, {}, 20, {}, id="twins-ties"),
    pytest.param(
        {**TWINS, "occurred_after": (BASE + timedelta(hours=100)).isoformat()},
        {},
        20,
        {},
        id="twins-on-the-bound",
    ),
    pytest.param(
        {**TWINS, "occurred_before": (BASE + timedelta(hours=200)).isoformat()},
        {},
        20,
        {},
        id="twins-before-bound",
    ),
    pytest.param({}, {"channel": {"eq": "fax"}}, 5, {"candidates": 6}, id="twins-candidates-6"),
]


def newest_first(recs: list[Rec]) -> list[Rec]:
    """occurred_at descending, then ingestion order descending."""
    return sorted(recs, key=lambda r: (r.occurred_at, r.seq), reverse=True)


@pytest.mark.parametrize(("scope", "where", "k", "params"), RECENT_CASES)
def test_recent_search_equals_oracle(
    ao8: Client, corpus: Corpus, scope: Scope, where: dict[str, Any], k: int, params: dict[str, Any]
) -> None:
    """ "`recent` | Newest first, then reordered by the formula" over at most params.candidates (default
    min(1000, max(100, 10·k))) candidates; `[score, importance]` with "Any missing signal is 0"; the
    spec's tie order and min–max public score over the ranked pool."""
    scope = resolve(scope, corpus, where)
    elig = eligible(corpus, scope, where, ALL)
    cand = params.get("candidates", default_candidates(k))
    pool = newest_first(elig)[:cand]
    extra = {"params": params} if params else {}
    body = search(ao8, request("recent", scope, where, k, rank=IMP, **extra))
    check(body, expect(pool, pool, lambda r: float(r.importance or 0), k), corpus)


def test_recent_default_formula_equals_oracle(ao8: Client, corpus: Corpus) -> None:
    """ "`recent` | Newest first, then reordered by the formula. | `D24(age(occurred_at))` — 0–1" over
    the default 100 candidates at k 8, ties by ingestion order descending."""
    elig = eligible(corpus, {"entities": ["acct-6", "acct-7"]}, {}, ALL)
    pool = newest_first(elig)[:100]
    now = datetime.now(UTC)

    def decay(rec: Rec) -> float:
        return 1 / (1 + max(0.0, (now - rec.occurred_at).total_seconds() / 3600) / 24)

    expected = expect(pool, pool, decay, 8)
    body = search(ao8, request("recent", {"entities": ["acct-6", "acct-7"]}, {}, 8))
    assert [h["id"] for h in body["hits"]] == expected.ids, describe(
        [h["id"] for h in body["hits"]], expected.ids, corpus
    )
    assert [h["rank_score"] for h in body["hits"]] == pytest.approx(expected.values, rel=1e-5)
    assert [h["score"] for h in body["hits"]] == pytest.approx(expected.scores, abs=1e-4)


TEXT_CASES = [
    pytest.param({}, {}, 20, id="broad"),
    pytest.param({}, {}, 3, id="broad-k3"),
    pytest.param(FOUR, {}, 10, id="four-accounts"),
    pytest.param(
        {"status": "all", "types": ["note", "event"]},
        {"channel": {"exists": True}},
        20,
        id="all-status-where",
    ),
]
TEXT_CASES += [pytest.param(TWINS, {}, 20, id="twins-ties")]


@pytest.mark.parametrize(("scope", "where", "k"), TEXT_CASES)
def test_text_search_equals_oracle(
    ao8: Client, corpus: Corpus, scope: Scope, where: dict[str, Any], k: int
) -> None:
    """ "`text` | Matching English full-text rows" for a one-word query, ranked by `[score, importance]`
    ("Any missing signal is 0"), in the spec's tie order, public score over every ranked match."""
    scope = resolve(scope, corpus, where)
    matches = [r for r in eligible(corpus, scope, where, ALL) if RARE_WORD in r.text.split()]
    assert 3 <= len(matches) < default_candidates(k)
    body = search(ao8, request("text", scope, where, k, q=RARE_WORD, rank=IMP))
    check(body, expect(matches, matches, lambda r: float(r.importance or 0), k), corpus)


HYBRID_CASES = [
    pytest.param("quasar", FOUR, 5, {}, id="four-accounts-k5-candidates-100"),
    pytest.param("nebula", FOUR, 8, {"candidates": 30}, id="four-accounts-candidates-30"),
    pytest.param("pulsar", FOUR, 20, {}, id="four-accounts-k20"),
    pytest.param(
        "meteor", {"entities": ["rare", "tiny", "acct-4"]}, 10, {"candidates": 9}, id="selective-candidates-9"
    ),
    pytest.param("comet", {"entities": ["twins", "tiny"]}, 10, {}, id="twins-ties"),
    pytest.param(RARE_WORD, FOUR, 5, {}, id="with-keyword-matches"),
    pytest.param(
        RARE_WORD, {"entities": ["acct-5", "tiny"]}, 4, {"candidates": 12}, id="keyword-matches-candidates-12"
    ),
]


def interleave(*lists: list[Rec], limit: int) -> list[Rec]:
    """ "interleaved and deduplicated", cut to the candidate count."""
    out: list[Rec] = []
    for slot in range(max(map(len, lists), default=0)):
        for items in lists:
            if slot < len(items) and items[slot] not in out:
                out.append(items[slot])
    return out[:limit]


@pytest.mark.parametrize(("word", "scope", "k", "params"), HYBRID_CASES)
def test_hybrid_search_equals_oracle(
    ao8: Client, corpus: Corpus, word: str, scope: dict[str, Any], k: int, params: dict[str, Any]
) -> None:
    """ "`hybrid` | Semantic distance, keyword rank, and newest first, interleaved and deduplicated";
    the candidates are the nearest, the keyword matches and the newest, alternately, cut to
    params.candidates; ranked by `[similarity]`, and the public score's low bound is the least
    similar candidate of that pool (often a newest-first one). Every keyword match lands in the pool
    here, so the order of equally matching records in the keyword list cannot matter."""
    elig = eligible(corpus, scope, {}, ALL)
    cand = params.get("candidates", default_candidates(k))
    matches = [r for r in elig if word in r.text.split()]
    pool = interleave(semantic(elig, word)[:cand], matches, newest_first(elig)[:cand], limit=cand)
    assert all(r in pool for r in matches)
    extra = {"params": params} if params else {}
    body = search(ao8, request("hybrid", scope, {}, k, q=word, rank=SIM, **extra))
    check(body, expect(pool, pool, lambda r: similarity(r, word), k), corpus)


STRUCTURED_CASES = [
    pytest.param(
        {},
        {},
        [{"field": "channel"}, {"field": "amount", "direction": "desc"}],
        100,
        id="channel-amount-desc",
    ),
    pytest.param(
        {}, {}, [{"field": "starts_at", "direction": "desc"}], 100, id="starts-at-desc-missing-last"
    ),
    pytest.param(
        {}, {}, [{"field": "vip", "direction": "desc"}, {"field": "count"}], 60, id="vip-desc-count"
    ),
    pytest.param(
        FOUR,
        {"tags": {"contains_any": ["beta"]}},
        [{"field": "count", "direction": "desc"}],
        30,
        id="four-tags-count",
    ),
    pytest.param({"entities": ["rare", "tiny"]}, {}, [{"field": "amount"}], 10, id="selective-amount"),
    pytest.param(
        {"status": "all", "versions": "all", "keyed": True},
        {},
        [{"field": "channel", "direction": "desc"}],
        50,
        id="keyed-history",
    ),
    pytest.param({}, {"amount": {"gt": 90}}, [{"field": "channel"}], 20, id="where-amount-channel-ties"),
]


@dataclass(frozen=True)
class Desc:
    """A value that sorts in reverse."""

    value: Any

    def __lt__(self, other: Desc) -> bool:
        return bool(self.value > other.value)

    def __gt__(self, other: Desc) -> bool:
        return bool(self.value < other.value)


def sort_key(order_by: list[dict[str, str]]) -> Callable[[Rec], tuple[Any, ...]]:
    """ "compares each order_by field in the order you declared them, honoring each direction.
    Missing values always sort last … Remaining ties use ingestion order ascending"."""

    def key(rec: Rec) -> tuple[Any, ...]:
        parts: list[Any] = []
        for item in order_by:
            value = field_value(rec, item["field"])
            if value is None:
                parts.append((1, 0))
                continue
            if isinstance(value, datetime):
                value = value.timestamp()
            if isinstance(value, bool):
                value = int(value)
            if item.get("direction", "asc") == "desc":
                value = Desc(value)
            parts.append((0, value))
        return (*parts, rec.seq)

    return key


@pytest.mark.parametrize(("scope", "where", "order_by", "k"), STRUCTURED_CASES)
def test_structured_search_equals_oracle(
    ao8: Client,
    corpus: Corpus,
    scope: dict[str, Any],
    where: dict[str, Any],
    order_by: list[dict[str, str]],
    k: int,
) -> None:
    """ "Structured mode compares each order_by field in the order you declared them, honoring each
    direction. Missing values always sort last, including in descending sorts. Remaining ties use
    ingestion order ascending, then record id", at most k, "score: null" and no rank_score."""
    scope = {"collections": ["ao8_vec"], **scope}
    elig = eligible(corpus, scope, where, ALL)
    expected = [r.id for r in sorted(elig, key=sort_key(order_by))[:k]]
    body = search(ao8, request("structured", scope, where, k, order_by=order_by))
    got = [h["id"] for h in body["hits"]]
    assert got == expected, describe(got, expected, corpus)
    assert all(h["score"] is None and "rank_score" not in h for h in body["hits"])


def test_view_over_a_selective_entity_equals_oracle(ao8: Client, corpus: Corpus) -> None:
    """ "POST /views/{name}/query on a search view runs the same engine, so its results, ordering,
    scores … mean exactly what they mean above" and "input_record_ids repeats the result ids in order"."""
    elig = eligible(corpus, {"entities": ["rare"], "collections": ["ao8_vec"]}, {}, ALL)
    expected = expect(elig, elig, lambda r: similarity(r, "nebula"), 5)
    body = ok(ao8.post("/views/ao8_near/query", json={"entity": "rare", "word": "nebula"}))
    check(body, expected, corpus)
    assert body["input_record_ids"] == expected.ids


def test_a_large_candidate_budget_makes_a_broad_vector_search_exact(ao8: Client, corpus: Corpus) -> None:
    """ "params.candidates … Raise it when a record you know should match never appears; it costs time,
    not correctness": with 1,000 candidates every eligible record of the workspace fits the budget,
    so the top 100 are the exact nearest and the score's low bound is the least similar record."""
    elig = eligible(corpus, {}, {}, ALL)
    assert len(elig) < 1000
    body = search(ao8, request("vector", {}, {}, 100, q="pulsar", rank=SIM, params={"candidates": 1000}))
    check(body, expect(elig, elig, lambda r: similarity(r, "pulsar"), 100), corpus)


def expect_recs(pool: list[Rec], value: Callable[[Rec], float], k: int) -> list[Rec]:
    return scored_order({r.seq: value(r) for r in pool}, pool)[:k]


@dataclass(frozen=True)
class Source:
    """One source of a combined search and how the oracle computes its list."""

    name: str
    mode: str
    scope: dict[str, Any]
    k: int
    weight: float
    rank: Any

    def body(self) -> dict[str, Any]:
        ordering = {"order_by": self.rank} if self.mode == "structured" else {"rank": self.rank}
        return {
            "name": self.name,
            "mode": self.mode,
            "scope": self.scope,
            "k": self.k,
            "weight": self.weight,
            **ordering,
        }

    def ranked(self, corpus: Corpus, word: str) -> list[Rec]:
        """The source's list, "ranked and cut to its own k before merging"."""
        elig = eligible(corpus, self.scope, {}, ALL)
        cand = default_candidates(self.k)
        if self.mode == "vector":
            return expect_recs(semantic(elig, word)[:cand], lambda r: similarity(r, word), self.k)
        if self.mode == "text":
            matches = [r for r in elig if word in r.text.split()]
            return expect_recs(matches, lambda r: float(r.importance or 0), self.k)
        if self.mode == "structured":
            return sorted(elig, key=sort_key(self.rank))[: self.k]
        return expect_recs(newest_first(elig)[:cand], lambda r: float(r.importance or 0), self.k)


FRESH = Source(
    "fresh",
    "recent",
    {"collections": ["ao8_vec", "ao8_side"], "entities": ["acct-0", "acct-1"]},
    10,
    1.1,
    IMP,
)
LEVEL_FRESH = Source(
    "fresh", "recent", {"collections": ["ao8_vec"], "entities": ["acct-2", "acct-3"]}, 10, 1.0, IMP
)
LISTED = Source(
    "listed",
    "structured",
    {"collections": ["ao8_vec"], "entities": ["acct-2", "acct-3"]},
    12,
    0.9,
    [{"field": "amount", "direction": "desc"}],
)
NEAR = Source("near", "vector", {"collections": ["ao8_vec"], **FOUR}, 15, 1.0, SIM)
WORDS_SOURCE = Source("words", "text", {"collections": ["ao8_vec"]}, 5, 1.0, IMP)


@pytest.mark.parametrize(
    ("sources", "rank_constant", "k"),
    [
        pytest.param([NEAR, FRESH, WORDS_SOURCE], 60, 12, id="three-sources"),
        pytest.param([NEAR, LEVEL_FRESH], 10, 30, id="equal-weights-ties"),
        pytest.param([WORDS_SOURCE, FRESH], 1, 4, id="constant-1-top-k"),
        pytest.param([NEAR, LISTED], 60, 20, id="with-a-structured-source"),
    ],
)
def test_combined_search_equals_rrf_oracle(
    ao8: Client, corpus: Corpus, sources: list[Source], rank_constant: int, k: int
) -> None:
    """ "RRF(record) = sum over sources that found it of weight / (rank_constant + rank_in_source)",
    "Each source is ranked and cut to its own k before merging. The top-level k applies only after the
    lists have been merged", the spec's tie order, source_ranks, and the score "normalized to 0–1
    across the merged pool"."""
    lists = {s.name: (s, s.ranked(corpus, RARE_WORD)) for s in sources}
    terms: dict[int, list[float]] = {}
    positions: dict[int, dict[str, int]] = {}
    for name, (source, recs) in lists.items():
        for rank, rec in enumerate(recs, start=1):
            terms.setdefault(rec.seq, []).append(source.weight / (rank_constant + rank))
            positions.setdefault(rec.seq, {})[name] = rank
    merged = [corpus.records[seq] for seq in terms]
    expected = expect(merged, merged, lambda r: math.fsum(terms[r.seq]), k)
    body = search(
        ao8,
        {
            "q": RARE_WORD,
            "sources": [s.body() for s in sources],
            "fuse": {"kind": "rrf", "rank_constant": rank_constant},
            "k": k,
        },
    )
    check(body, expected, corpus)
    assert [h["source_ranks"] for h in body["hits"]] == [positions[corpus.by_id(i).seq] for i in expected.ids]
    assert body["ranking"]["kind"] == "rrf"


def amounts(corpus: Corpus, count: int) -> list[float]:
    return [r.content["amount"] for r in corpus.records if "amount" in r.content][3 : 3 + count]


def first_with(corpus: Corpus, name: str, test: Callable[[Any], bool] = bool) -> Rec:
    """The first ao8_vec record holding field `name` with a value passing `test`."""
    return next(
        r for r in corpus.records if r.collection == "ao8_vec" and name in r.content and test(r.content[name])
    )


def shifted(value: str) -> str:
    """The same instant written at +05:30."""
    return ts(value).astimezone(timezone(timedelta(hours=5, minutes=30))).isoformat()


EXACT_WHERE: list[Any] = [
    pytest.param(
        lambda c: {"amount": {"eq": first_with(c, "amount", lambda a: a != int(a)).content["amount"]}},
        "amount",
        id="amount-eq-decimal",
    ),
    pytest.param(lambda c: {"amount": {"in": amounts(c, 4)}}, "amount", id="amount-in-decimals"),
    pytest.param(
        lambda c: {"amount": {"gte": amounts(c, 1)[0], "lte": amounts(c, 6)[5]}},
        "amount",
        id="amount-closed-range",
    ),
    pytest.param(
        lambda c: {"starts_at": {"gt": shifted(first_with(c, "starts_at").content["starts_at"])}},
        "starts_at",
        id="starts-at-gt-offset",
    ),
    pytest.param(
        lambda c: {"starts_at": {"lte": shifted(first_with(c, "starts_at").content["starts_at"])}},
        "starts_at",
        id="starts-at-lte-offset",
    ),
    pytest.param(
        lambda c: {"tags": {"eq": first_with(c, "tags", lambda t: len(t) == 2).content["tags"]}},
        "count",
        id="tags-eq-ordered-list",
    ),
    pytest.param(
        lambda c: {"tags": {"eq": first_with(c, "tags", lambda t: len(t) == 2).content["tags"][::-1]}},
        "count",
        id="tags-eq-reversed-list",
    ),
    pytest.param(lambda c: {"tags": {"eq": []}}, "count", id="tags-eq-empty-list"),
    pytest.param(
        lambda c: {"count": {"in": [0, 7, 20]}, "vip": {"eq": False}}, "amount", id="count-in-vip-false"
    ),
    pytest.param(lambda c: {"vip": {"exists": False}, "tags": {"exists": True}}, "count", id="exists-combo"),
]
Where = Callable[[Corpus], dict[str, Any]]


@pytest.mark.parametrize(("where", "sort"), EXACT_WHERE)
def test_typed_filters_on_stored_values_equal_oracle(
    ao8: Client, corpus: Corpus, where: Where, sort: str
) -> None:
    """ "every condition is re-checked against the system of record before results are returned — a
    filter is never merely approximate": `eq`/`in`/ranges on values the records hold exactly (decimal
    amounts, a timestamp written at another offset, an ordered list for "an exact ordered match"),
    listed in structured order."""
    conditions = where(corpus)
    scope = {"collections": ["ao8_vec"], "status": "all"}
    elig = eligible(corpus, scope, conditions, ALL)
    assert elig
    order_by = [{"field": sort}]
    expected = [r.id for r in sorted(elig, key=sort_key(order_by))[:100]]
    body = search(ao8, request("structured", scope, conditions, 100, order_by=order_by))
    got = [h["id"] for h in body["hits"]]
    assert got == expected, describe(got, expected, corpus)


def test_a_keyword_list_whose_best_postings_lie_outside_the_scope(ao8: Client, corpus: Corpus) -> None:
    """ "Re-check canonically … Engine-reported scores and engine-side filtering are never trusted" and
    "params.candidates … how many records the search engine proposes": with 12 candidates, a common
    word and a scope holding only a few of its records, every in-scope match is still ranked. All
    matches hold the word once, so `[text_match]` ties: order by occurred_at and ingestion order
    descending, and every score is 1.0 ("if every candidate ties, every result scores 1.0")."""
    scope = {"collections": ["ao8_vec"], "types": ["fact"], "keyed": False}
    where = {"channel": {"eq": "sms"}}
    matches = [r for r in eligible(corpus, scope, where, ALL) if "amber" in r.text.split()]
    assert 2 <= len(matches) <= 12
    assert sum("amber" in r.text.split() for r in corpus.records) > 12
    body = search(
        ao8, request("text", scope, where, 10, q="amber", rank=["text_match"], params={"candidates": 12})
    )
    expected = [r.id for r in newest_first(matches)][:10]
    assert [h["id"] for h in body["hits"]] == expected, describe(
        [h["id"] for h in body["hits"]], expected, corpus
    )
    assert [h["score"] for h in body["hits"]] == [1.0] * len(expected)


@pytest.mark.parametrize(
    ("boost", "value"),
    [
        pytest.param(
            ["sum", [["const", 1], IMP]], lambda r: 1.0 + (r.importance or 0), id="one-plus-importance"
        ),
        pytest.param(["product", -1, IMP], lambda r: 0.0, id="negative-boost-clamped-all-tie"),
    ],
)
def test_combined_boost_equals_oracle(
    ao8: Client, corpus: Corpus, boost: Any, value: Callable[[Rec], float]
) -> None:
    """ "The final value is RRF(record) * max(0, boost(record))", ordered by the spec's tie order, the
    score min–max over the merged pool ("if every candidate ties, every result scores 1.0")."""
    sources = [NEAR, LEVEL_FRESH]
    terms: dict[int, list[float]] = {}
    for source in sources:
        for rank, rec in enumerate(source.ranked(corpus, RARE_WORD), start=1):
            terms.setdefault(rec.seq, []).append(source.weight / (60 + rank))
    merged = [corpus.records[seq] for seq in terms]
    expected = expect(merged, merged, lambda r: math.fsum(terms[r.seq]) * max(0.0, value(r)), 15)
    body = search(
        ao8,
        {
            "q": RARE_WORD,
            "sources": [s.body() for s in sources],
            "fuse": {"kind": "rrf"},
            "boost": boost,
            "k": 15,
        },
    )
    check(body, expected, corpus)


def check_default(
    body: dict[str, Any], pool: list[Rec], values: dict[int, float], k: int, corpus: Corpus
) -> None:
    """Order exact; rank_score within the seconds between the oracle's `now` and the service's."""
    top = scored_order(values, pool)[:k]
    expected_ids = [r.id for r in top]
    got = [h["id"] for h in body["hits"]]
    assert got == expected_ids, describe(got, expected_ids, corpus)
    assert [h["rank_score"] for h in body["hits"]] == pytest.approx([values[r.seq] for r in top], abs=2e-4)
    shown = [values[r.seq] for r in top]
    assert [h["score"] for h in body["hits"]] == pytest.approx(
        public_scores(shown, list(values.values())), abs=1e-4
    )


def last_read(client: Client, pool: list[Rec]) -> dict[int, datetime]:
    """Each pool record's last_accessed as `GET /records/{id}` reports it, once pending touches are
    written."""
    touches_written(client)
    return {r.seq: ts(fetch(client, r.id)["last_accessed"]) for r in pool}


def normalized(values: dict[int, float]) -> dict[int, float]:
    """ "`(x - min) / (max - min)` across the current candidates → 0–1. If every candidate ties, all
    become 0"."""
    low, high = min(values.values()), max(values.values())
    return {seq: 0.0 if high == low else (v - low) / (high - low) for seq, v in values.items()}


def default_values(client: Client, pool: list[Rec], relevance: Callable[[Rec], float]) -> dict[int, float]:
    """ "N(relevance) + D24(age(last_accessed)) + N(importance)" (the reference catalog's formula)."""
    read = last_read(client, pool)
    now = datetime.now(UTC)
    rel = normalized({r.seq: relevance(r) for r in pool})
    imp = normalized({r.seq: float(r.importance or 0) for r in pool})
    return {
        r.seq: rel[r.seq] + 1 / (1 + max(0.0, (now - read[r.seq]).total_seconds() / 3600) / 24) + imp[r.seq]
        for r in pool
    }


@pytest.mark.parametrize(
    ("word", "scope", "k"),
    [
        pytest.param("quasar", {"entities": ["acct-5"]}, 10, id="one-account"),
        pytest.param("meteor", {"entities": ["acct-6", "acct-7", "rare"]}, 5, id="three-entities"),
    ],
)
def test_vector_default_formula_equals_oracle(
    ao8: Client, corpus: Corpus, word: str, scope: dict[str, Any], k: int
) -> None:
    """ "`vector` | Nearest embeddings. | `N(similarity) + D24(age(last_accessed))`", plus "N(importance)
    as a third term" in the reference catalog, each N over the candidates."""
    pool = semantic(eligible(corpus, scope, {}, ALL), word)[: default_candidates(k)]
    values = default_values(ao8, pool, lambda r: similarity(r, word))
    body = search(ao8, request("vector", scope, {}, k, q=word))
    check_default(body, pool, values, k, corpus)


def test_hybrid_default_formula_without_keyword_matches_equals_oracle(ao8: Client, corpus: Corpus) -> None:
    """ "`hybrid` | … | `N(max(similarity, text_match)) + D24(age(last_accessed))`" (+ N(importance)):
    with no keyword match text_match is 0, so a negative similarity counts as 0 inside the max."""
    scope = {"entities": ["acct-4", "tiny"]}
    elig = eligible(corpus, scope, {}, ALL)
    pool = interleave(semantic(elig, "nebula")[:100], newest_first(elig)[:100], limit=100)
    values = default_values(ao8, pool, lambda r: max(similarity(r, "nebula"), 0.0))
    body = search(ao8, request("hybrid", scope, {}, 6, q="nebula"))
    check_default(body, pool, values, 6, corpus)


def test_text_default_formula_of_equal_matches_equals_oracle(ao8: Client, corpus: Corpus) -> None:
    """ "`text` | … | `N(text_match) + D24(age(last_accessed))`" (+ N(importance)): every match holds
    the word once, so N(text_match) is 0 for all ("If every candidate ties, all become 0")."""
    scope = {"entities": ["acct-0", "acct-1", "acct-2", "acct-3", "twins"]}
    pool = [r for r in eligible(corpus, scope, {}, ALL) if RARE_WORD in r.text.split()]
    values = default_values(ao8, pool, lambda r: 0.0)
    body = search(ao8, request("text", scope, {}, 8, q=RARE_WORD))
    check_default(body, pool, values, 8, corpus)


def test_get_search_equals_hybrid_default_oracle(ao8: Client, corpus: Corpus) -> None:
    """ "GET /search translates your request into a hybrid (meaning + keyword) search" with `entity`
    and `k`; results as the hybrid default formula orders them."""
    scope = {"entities": ["acct-2"]}
    elig = eligible(corpus, scope, {}, ALL)
    pool = interleave(semantic(elig, "comet")[:100], newest_first(elig)[:100], limit=100)
    values = default_values(ao8, pool, lambda r: max(similarity(r, "comet"), 0.0))
    body = ok(ao8.get("/search?q=comet&entity=acct-2&k=7"))
    check_default(body, pool, values, 7, corpus)


def test_default_k_and_candidates(ao8: Client, corpus: Corpus) -> None:
    """ "k (default 20, between 1 and 100)" and candidates "default min(1000, max(100, 10 * k))": with
    neither given, the 20 most important of the 200 newest eligible records."""
    elig = eligible(corpus, {"collections": ["ao8_vec"]}, {}, ALL)
    pool = newest_first(elig)[:200]
    assert len(elig) > 200
    body = search(ao8, {"mode": "recent", "scope": {"collections": ["ao8_vec"]}, "rank": IMP})
    check(body, expect(pool, pool, lambda r: float(r.importance or 0), 20), corpus)
