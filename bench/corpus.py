"""A deterministic synthetic memory corpus: customers, what happened to them, and facts that change.

Shape (per `CorpusSpec`): entities with Zipf-skewed sizes; events, notes and meetings written in
time order over one year; keyed facts whose slots are rewritten (supersession history), some as
drafts; a few reflections in their own collection; links between entities (a graph); and a
small share of records flagged for retraction after loading. Text is 50–600 characters of
English built from per-topic vocabularies, so full-text search and embeddings are meaningful:
records about one topic share words and meaning, records about different topics do not.

Large corpora reuse a bounded pool of distinct texts (`distinct_texts`) so vectors can be
computed once and cached; every record still has its own entity, time, fields and lane.
"""

from __future__ import annotations

import bisect
import math
import random
from collections.abc import Iterator
from dataclasses import dataclass
from dataclasses import field
from datetime import UTC
from datetime import datetime
from datetime import timedelta
from typing import Any

YEAR_START = datetime(2025, 1, 1, tzinfo=UTC)
YEAR_SECONDS = 365 * 24 * 3600

MEMORIES = "memories"
REFLECTIONS = "reflections"
LINKS = "links"
CHANNELS = ("email", "call", "chat", "meeting", "sms", "note")
PREDICATES = ("works_with", "reports_to", "depends_on", "refers")
FACT_KEYS = (
    "plan",
    "billing_contact",
    "preferred_channel",
    "risk_level",
    "account_owner",
    "renewal_month",
    "budget",
    "main_goal",
)
NAMES = (
    "Maria",
    "Omar",
    "Priya",
    "Chen",
    "Lukas",
    "Amara",
    "Diego",
    "Sofia",
    "Kenji",
    "Fatima",
    "Noah",
    "Elena",
    "Tariq",
    "Ingrid",
    "Mateo",
    "Aisha",
    "Jonas",
    "Mei",
    "Rafael",
    "Zoe",
)

# topic -> (nouns, verbs in the past tense, adjectives, tags)
TOPICS: dict[str, tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...], tuple[str, ...]]] = {
    "billing": (
        (
            "invoice",
            "refund",
            "payment",
            "credit card",
            "subscription",
            "discount",
            "receipt",
            "chargeback",
            "pricing tier",
            "tax form",
            "late fee",
            "billing cycle",
        ),
        ("disputed", "paid", "requested", "approved", "cancelled", "questioned"),
        ("overdue", "duplicate", "annual", "partial", "corrected", "pending"),
        ("billing", "finance", "refund"),
    ),
    "shipping": (
        (
            "parcel",
            "delivery",
            "courier",
            "warehouse",
            "tracking number",
            "customs form",
            "pallet",
            "return label",
            "shipment",
            "carrier",
            "loading dock",
            "address label",
        ),
        ("shipped", "delayed", "rerouted", "delivered", "lost", "returned"),
        ("damaged", "express", "international", "fragile", "missing", "late"),
        ("logistics", "shipping", "delivery"),
    ),
    "software": (
        (
            "deployment",
            "database migration",
            "login page",
            "API key",
            "release",
            "bug report",
            "dashboard",
            "integration",
            "webhook",
            "mobile app",
            "error log",
            "feature flag",
        ),
        ("deployed", "debugged", "rolled back", "tested", "configured", "upgraded"),
        ("broken", "slow", "new", "experimental", "stable", "legacy"),
        ("engineering", "bug", "release"),
    ),
    "travel": (
        (
            "flight",
            "hotel booking",
            "train ticket",
            "passport",
            "itinerary",
            "rental car",
            "visa application",
            "airport transfer",
            "boarding pass",
            "conference trip",
        ),
        ("booked", "rescheduled", "missed", "upgraded", "cancelled", "confirmed"),
        ("overnight", "international", "cheap", "business class", "delayed", "refundable"),
        ("travel", "booking"),
    ),
    "health": (
        (
            "appointment",
            "prescription",
            "blood test",
            "physiotherapy",
            "insurance claim",
            "checkup",
            "vaccination",
            "allergy",
            "sleep schedule",
            "diet plan",
        ),
        ("scheduled", "postponed", "completed", "reviewed", "renewed", "discussed"),
        ("annual", "urgent", "routine", "chronic", "mild", "follow-up"),
        ("health", "wellbeing"),
    ),
    "security": (
        (
            "password reset",
            "phishing email",
            "access review",
            "firewall rule",
            "audit log",
            "two-factor setup",
            "vulnerability scan",
            "incident report",
            "encryption key",
        ),
        ("reported", "investigated", "blocked", "rotated", "escalated", "patched"),
        ("suspicious", "critical", "unauthorized", "expired", "compromised", "quarterly"),
        ("security", "incident", "compliance"),
    ),
    "marketing": (
        (
            "campaign",
            "newsletter",
            "landing page",
            "webinar",
            "press release",
            "survey",
            "ad budget",
            "social post",
            "brand guide",
            "trade show booth",
        ),
        ("launched", "drafted", "analyzed", "promoted", "paused", "measured"),
        ("seasonal", "viral", "targeted", "underperforming", "regional", "creative"),
        ("marketing", "campaign"),
    ),
    "legal": (
        (
            "contract",
            "nondisclosure agreement",
            "license terms",
            "compliance review",
            "data processing addendum",
            "trademark filing",
            "lawsuit",
            "signature page",
        ),
        ("signed", "negotiated", "amended", "reviewed", "terminated", "renewed"),
        ("binding", "draft", "mutual", "confidential", "expiring", "standard"),
        ("legal", "contract"),
    ),
    "hiring": (
        (
            "job offer",
            "interview",
            "candidate",
            "onboarding plan",
            "reference check",
            "salary band",
            "recruiter",
            "probation review",
            "training session",
        ),
        ("interviewed", "hired", "onboarded", "declined", "promoted", "mentored"),
        ("senior", "remote", "junior", "part-time", "promising", "qualified"),
        ("hiring", "people"),
    ),
    "cooking": (
        (
            "recipe",
            "dinner party",
            "sourdough starter",
            "spice rack",
            "meal prep",
            "grocery list",
            "tomato sauce",
            "birthday cake",
            "cast iron pan",
            "vegetable soup",
        ),
        ("baked", "cooked", "tasted", "burned", "seasoned", "shared"),
        ("spicy", "vegetarian", "homemade", "crispy", "gluten-free", "sweet"),
        ("food", "cooking"),
    ),
    "sports": (
        (
            "marathon",
            "football match",
            "swimming lesson",
            "tennis racket",
            "gym membership",
            "cycling route",
            "yoga class",
            "climbing wall",
            "training plan",
            "injury",
        ),
        ("trained", "won", "lost", "ran", "stretched", "coached"),
        ("weekly", "exhausting", "competitive", "outdoor", "personal best", "beginner"),
        ("sports", "fitness"),
    ),
    "real_estate": (
        (
            "apartment lease",
            "mortgage",
            "property viewing",
            "renovation",
            "landlord",
            "rent increase",
            "home inspection",
            "moving truck",
            "kitchen remodel",
        ),
        ("viewed", "rented", "inspected", "renovated", "moved", "appraised"),
        ("spacious", "expensive", "downtown", "furnished", "leaky", "newly built"),
        ("housing", "property"),
    ),
    "music": (
        (
            "guitar lesson",
            "concert ticket",
            "playlist",
            "piano recital",
            "vinyl record",
            "band rehearsal",
            "music festival",
            "album release",
            "drum kit",
        ),
        ("played", "rehearsed", "recorded", "listened to", "performed", "composed"),
        ("acoustic", "live", "classical", "loud", "jazz", "favorite"),
        ("music", "hobby"),
    ),
    "gardening": (
        (
            "tomato plants",
            "compost bin",
            "rose bush",
            "irrigation hose",
            "herb garden",
            "seed order",
            "greenhouse",
            "lawn mower",
            "fruit tree",
            "flower bed",
        ),
        ("planted", "watered", "pruned", "harvested", "fertilized", "repotted"),
        ("organic", "wilted", "blooming", "overgrown", "raised", "shady"),
        ("garden", "outdoors"),
    ),
    "education": (
        (
            "course",
            "exam",
            "tuition payment",
            "thesis",
            "study group",
            "scholarship",
            "lecture notes",
            "homework",
            "certification",
            "language class",
        ),
        ("enrolled in", "passed", "failed", "studied", "graded", "submitted"),
        ("online", "difficult", "introductory", "advanced", "weekly", "final"),
        ("education", "learning"),
    ),
    "pets": (
        (
            "dog walker",
            "vet visit",
            "cat food",
            "puppy training",
            "aquarium",
            "bird cage",
            "flea treatment",
            "pet insurance",
            "adoption papers",
            "kennel",
        ),
        ("adopted", "fed", "groomed", "vaccinated", "walked", "trained"),
        ("playful", "anxious", "senior", "rescued", "noisy", "healthy"),
        ("pets", "animals"),
    ),
}
TOPIC_NAMES = tuple(TOPICS)
PREPOSITIONS = ("about", "regarding", "after", "before", "because of", "during", "along with")
OPENERS = ("Yesterday", "This morning", "Last week", "On Friday", "Earlier today", "After lunch", "Later")
CLOSERS = (
    "They asked for a follow-up next week.",
    "Nothing else is needed for now.",
    "This should be revisited before the end of the month.",
    "The team was informed.",
    "A reminder was set for the next call.",
    "It is still not resolved.",
)


@dataclass(frozen=True, slots=True)
class CorpusSpec:
    """What to generate. Same spec (seed included) → byte-identical corpus."""

    records: int
    seed: int = 7
    entities: int | None = None
    distinct_texts: int = 100_000
    zipf_s: float = 1.05
    keyed_share: float = 0.15
    draft_share: float = 0.13
    reflection_share: float = 0.02
    retract_share: float = 0.01
    links_per_entity: float = 2.0

    @property
    def entity_count(self) -> int:
        return self.entities or max(10, self.records // 40)


@dataclass(frozen=True, slots=True)
class SynthRecord:
    """One record to write (RecordIn without vectors) plus what the harness needs to know."""

    index: int
    collection: str
    entity: str
    type: str
    text: str
    occurred_at: datetime
    content: dict[str, Any] = field(default_factory=dict)
    key: str | None = None
    status: str = "active"
    retract: bool = False
    topic: str = ""

    def record_in(self) -> dict[str, Any]:
        """The `RecordIn` body for `POST /records` (docs/writing.md), without an embedding."""
        return record_body(
            self.collection,
            self.entity,
            self.type,
            self.text,
            self.content,
            occurred_at=self.occurred_at,
            status=self.status,
            key=self.key,
        )


def record_body(
    collection: str, entity: str, type_: str, text: str, content: dict[str, Any], **optional: Any
) -> dict[str, Any]:
    """A `RecordIn` body; optional fields are left out when None, datetimes become ISO 8601."""
    body = {"collection": collection, "entity": entity, "type": type_, "text": text, "content": content}
    for name, value in optional.items():
        if value is not None:
            body[name] = value.isoformat() if isinstance(value, datetime) else value
    return body


@dataclass(frozen=True, slots=True)
class Corpus:
    """A generated corpus: records in write order and the entity names."""

    spec: CorpusSpec
    records: tuple[SynthRecord, ...]
    entities: tuple[str, ...]

    def current_flags(self) -> list[bool]:
        """Whether each record is its lane's current value once everything is written (no retractions)."""
        last: dict[tuple[str, str, str, str], int] = {}
        for rec in self.records:
            if rec.key is not None:
                last[(rec.collection, rec.entity, rec.key, rec.status)] = rec.index
        return [
            rec.key is None or last[(rec.collection, rec.entity, rec.key, rec.status)] == rec.index
            for rec in self.records
        ]


def entity_name(rank: int) -> str:
    return f"acct-{rank:06d}"


class _TextPool:
    """Texts per (kind, topic); with caps, the n-th text is text n mod cap[kind] (reused)."""

    def __init__(self, seed: int, caps: dict[str, int] | None) -> None:
        self.seed = seed
        self.caps = caps
        self.used: dict[tuple[str, str], int] = {}

    @classmethod
    def for_spec(cls, spec: CorpusSpec, n_main: int) -> _TextPool:
        """Uncapped when every text can be distinct, else caps summing to about `distinct_texts`."""
        if spec.distinct_texts >= n_main:
            return cls(spec.seed, None)
        per_topic = spec.distinct_texts / len(TOPIC_NAMES)
        fact = spec.keyed_share * per_topic / len(FACT_KEYS)  # each fact text also varies by key prefix
        shares = {
            "reflection": spec.reflection_share * per_topic,
            "fact": fact,
            "event": (1 - spec.keyed_share - spec.reflection_share) * per_topic,
        }
        return cls(spec.seed, {kind: max(1, int(value)) for kind, value in shares.items()})

    def next(self, topic: str, kind: str, prefix: str = "") -> str:
        n = self.used.get((kind, topic), 0)
        self.used[(kind, topic)] = n + 1
        slot = n if self.caps is None else n % self.caps[kind]
        return make_text(random.Random(f"{self.seed}:{kind}:{topic}:{slot}"), topic, prefix)


def _sentence(rng: random.Random, topic: str) -> str:
    nouns, verbs, adjectives, _ = TOPICS[topic]
    who = rng.choice(NAMES + ("The customer", "Our team", "Support"))
    if rng.random() < 0.3:
        who = f"{rng.choice(OPENERS)}, {who[0].lower() + who[1:] if who[:4] in ('The ', 'Our ') else who}"
    parts = [who, rng.choice(verbs), "the", rng.choice(adjectives), rng.choice(nouns)]
    if rng.random() < 0.7:
        parts += [rng.choice(PREPOSITIONS), "the", rng.choice(nouns)]
    if rng.random() < 0.25:
        parts.append(f"for {rng.randint(2, 950)} dollars")
    return " ".join(parts) + "."


def make_text(rng: random.Random, topic: str, prefix: str = "") -> str:
    """50–600 characters about `topic` (log-normal length, median about 170)."""
    target = min(600, max(50, int(rng.lognormvariate(math.log(170), 0.6))))
    text = prefix + _sentence(rng, topic)
    while len(text) < target:
        extra = rng.choice(CLOSERS) if rng.random() < 0.15 else _sentence(rng, topic)
        text += " " + extra
    if len(text) > 600:
        text = text[:600].rsplit(" ", 1)[0].rstrip(",") + "."
    return text


def make_query(rng: random.Random, topic: str | None = None) -> str:
    """A short natural-language question about one topic (latency-suite query text)."""
    topic = topic or rng.choice(TOPIC_NAMES)
    nouns, verbs, adjectives, _ = TOPICS[topic]
    head = rng.choice(
        ("what happened with the", "any news on the", "who", "why was the", "when did we discuss the")
    )
    if head == "who":
        return f"who {rng.choice(verbs)} the {rng.choice(adjectives)} {rng.choice(nouns)}"
    return (
        f"{head} {rng.choice(adjectives)} {rng.choice(nouns)} {rng.choice(PREPOSITIONS)} {rng.choice(nouns)}"
    )


class _Sampler:
    """Zipf-skewed entity ranks and each entity's topic affinity."""

    def __init__(self, rng: random.Random, spec: CorpusSpec) -> None:
        self.rng = rng
        weights = [1.0 / (rank**spec.zipf_s) for rank in range(1, spec.entity_count + 1)]
        total = sum(weights)
        acc = 0.0
        self.cumulative = []
        for w in weights:
            acc += w / total
            self.cumulative.append(acc)
        self.topics = [rng.sample(TOPIC_NAMES, 3) for _ in weights]

    def entity(self) -> int:
        return min(bisect.bisect_left(self.cumulative, self.rng.random()), len(self.cumulative) - 1)

    def topic(self, entity: int) -> str:
        first, second, third = self.topics[entity]
        roll = self.rng.random()
        return first if roll < 0.6 else second if roll < 0.85 else third


def _fields(rng: random.Random, topic: str, kind: str, when: datetime) -> dict[str, Any]:
    content: dict[str, Any] = {"channel": "meeting" if kind == "meeting" else rng.choice(CHANNELS)}
    if rng.random() < 0.7:
        content["tags"] = rng.sample(TOPICS[topic][3], rng.randint(1, len(TOPICS[topic][3])))
    if rng.random() < 0.3:
        content["amount"] = round(rng.lognormvariate(math.log(120), 1.0), 2)
    if kind == "meeting":
        start = when + timedelta(days=rng.randint(1, 30), hours=rng.randint(8, 17))
        content["starts_at"] = start.replace(minute=0, second=0, microsecond=0).isoformat()
    content["topic"] = topic
    return content


def _main_record(
    index: int, rng: random.Random, sampler: _Sampler, pool: _TextPool, when: datetime, spec: CorpusSpec
) -> SynthRecord:
    rank = sampler.entity()
    topic = sampler.topic(rank)
    entity = entity_name(rank)
    roll = rng.random()
    if roll < spec.reflection_share:
        text = pool.next(topic, "reflection", "Reflection: ")
        return SynthRecord(
            index,
            REFLECTIONS,
            entity,
            "reflection",
            text,
            when,
            {"topic": topic},
            topic=topic,
            retract=rng.random() < spec.retract_share,
        )
    if roll < spec.reflection_share + spec.keyed_share:
        key = rng.choice(FACT_KEYS)
        text = pool.next(topic, "fact", f"{key.replace('_', ' ').capitalize()}: ")
        status = "draft" if rng.random() < spec.draft_share else "active"
        return SynthRecord(
            index,
            MEMORIES,
            entity,
            "fact",
            text,
            when,
            _fields(rng, topic, "fact", when),
            key=key,
            status=status,
            retract=rng.random() < spec.retract_share,
            topic=topic,
        )
    kind = rng.choices(("event", "note", "meeting"), weights=(70, 18, 12))[0]
    return SynthRecord(
        index,
        MEMORIES,
        entity,
        kind,
        pool.next(topic, "event"),
        when,
        _fields(rng, topic, kind, when),
        retract=rng.random() < spec.retract_share,
        topic=topic,
    )


def _link(index: int, rng: random.Random, sampler: _Sampler, when: datetime) -> SynthRecord:
    subject = sampler.entity()
    obj = sampler.entity()
    if obj == subject:
        obj = (subject + 1) % len(sampler.cumulative)
    predicate = rng.choice(PREDICATES)
    a, b = entity_name(subject), entity_name(obj)
    content = {"from_node": a, "to_node": b, "relationship": predicate}
    return SynthRecord(index, LINKS, a, "link", f"{a} {predicate.replace('_', ' ')} {b}", when, content)


def _times(rng: random.Random, count: int) -> Iterator[datetime]:
    """`count` increasing timestamps spread over one year (sorted uniform order statistics)."""
    offsets = sorted(rng.random() * YEAR_SECONDS for _ in range(count))
    for offset in offsets:
        yield YEAR_START + timedelta(seconds=round(offset, 3))


def generate(spec: CorpusSpec) -> Corpus:
    """The corpus for `spec`: main records in time order, then the links between entities."""
    rng = random.Random(spec.seed)
    sampler = _Sampler(rng, spec)
    n_links = min(int(spec.entity_count * spec.links_per_entity), spec.records // 5)
    n_main = spec.records - n_links
    pool = _TextPool.for_spec(spec, n_main)
    records = [_main_record(i, rng, sampler, pool, when, spec) for i, when in enumerate(_times(rng, n_main))]
    end = YEAR_START + timedelta(seconds=YEAR_SECONDS)
    records += [_link(n_main + i, rng, sampler, end) for i in range(n_links)]
    entities = tuple(entity_name(rank) for rank in range(spec.entity_count))
    return Corpus(spec, tuple(records), entities)


def queries(seed: int, count: int) -> list[str]:
    """`count` distinct deterministic query texts spread over the topics."""
    rng = random.Random(f"queries:{seed}")
    unique: dict[str, None] = {}
    while len(unique) < count:
        unique.setdefault(make_query(rng, TOPIC_NAMES[len(unique) % len(TOPIC_NAMES)]))
    return list(unique)
