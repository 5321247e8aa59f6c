"""Records of the reference catalog the SDK tests write, and checks they share."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from memseek.client import Hit

MARIA = "contact.maria"
BOB = "contact.bob"


def event(text: str, entity: str = MARIA, **values: Any) -> dict[str, Any]:
    """A `customer_events` event."""
    return {"collection": "customer_events", "entity": entity, "type": "event", "text": text, **values}


def reflection(text: str, entity: str = MARIA) -> dict[str, Any]:
    return {"collection": "reflections", "entity": entity, "type": "reflection", "text": text}


def meeting(title: str, starts_at: str, entity: str = MARIA) -> dict[str, Any]:
    """A `calendar_events` event starting at `starts_at`."""
    content = {"title": title, "starts_at": starts_at}
    return {
        "collection": "calendar_events",
        "entity": entity,
        "type": "event",
        "text": title,
        "content": content,
    }


def link(subject: str, predicate: str, obj: str) -> dict[str, Any]:
    """A `dependencies` link record (the reference graph's edges)."""
    text = f"{subject} {predicate} {obj}"
    content = {"from_node": subject, "to_node": obj, "relationship": predicate}
    return {"collection": "dependencies", "entity": subject, "type": "link", "text": text, "content": content}


def component(key: str, depends_on: list[str] | None = None) -> dict[str, Any]:
    """A `components` node; its `depends_on` values become links automatically."""
    content = {} if depends_on is None else {"depends_on": depends_on}
    return {
        "collection": "components",
        "entity": key,
        "type": "component",
        "key": key,
        "text": key,
        "content": content,
    }


TIMES = ("occurred_at", "created_at")


def mirrors_json(hit: Hit) -> None:
    """Assert every field of the hit's JSON reads back as the attribute of that name (timestamps
    parsed), and that fields the response left out read None."""
    for name, value in hit.raw.items():
        expected = datetime.fromisoformat(value) if name in TIMES and value is not None else value
        assert getattr(hit, name) == expected, name
    for name in Hit.__dataclass_fields__:
        if name not in hit.raw and name != "raw":
            assert getattr(hit, name) is None, name
