"""Keyset pagination: bounded pages and opaque cursors (`GET /records`, `GET /erasures`).

A listing is read in a stable total order (ingestion order for records, ids for erasures), and a
page ends with a cursor naming its last row's position. The next page reads the rows after that
position, so rows written meanwhile never shift a page (no OFFSET) and each page costs an index
range scan however deep it is.

A cursor is base64url of `{"after": position, "of": digest}`: `of` is a digest of the listing it
belongs to (its filters and order), so a cursor given with other filters, edited, truncated or
made up is a `422` rather than a page of something else. It is opaque: clients pass it back as
they got it.
"""

from __future__ import annotations

import base64
import hashlib
import json
from collections.abc import Callable
from collections.abc import Mapping
from typing import Any
from typing import TypeVar
from uuid import UUID

from memseek.errors import Detail
from memseek.errors import RequestInvalid

T = TypeVar("T")

DEFAULT_LIMIT = 50
MAX_LIMIT = 500
CURSOR_PATTERN = "^[A-Za-z0-9_-]+$"
"""The form of every cursor `encode_cursor` gives out (unpadded base64url), as documented."""


def _digest(listing: Mapping[str, Any]) -> str:
    canonical = json.dumps(listing, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(canonical.encode()).hexdigest()[:16]


def encode_cursor(after: int | str, listing: Mapping[str, Any]) -> str:
    """The cursor of the page after position `after` of `listing` (its filters and order)."""
    raw = json.dumps({"after": after, "of": _digest(listing)}, separators=(",", ":"))
    return base64.urlsafe_b64encode(raw.encode()).decode().rstrip("=")


def decode_cursor(raw: str, listing: Mapping[str, Any], read: Callable[[Any], T]) -> T:
    """The position a cursor of `listing` names, as `read` takes it (a ValueError when the
    value is not a position of this listing); a `422` when it is not a cursor this listing gave
    out, whatever is wrong with it (a made-up one may nest deeper than the JSON parser goes)."""
    try:
        data = json.loads(base64.urlsafe_b64decode(raw + "=" * (-len(raw) % 4)))
        if not isinstance(data, dict) or set(data) != {"after", "of"} or data["of"] != _digest(listing):
            raise ValueError("not this listing's")
        return read(data["after"])
    except (ValueError, RecursionError):  # binascii.Error and UnicodeDecodeError are ValueErrors
        detail = Detail(("query", "cursor"), "not a cursor of this listing; pass next_cursor back unchanged")
        raise RequestInvalid("the cursor is invalid", [detail]) from None


MAX_SEQ = 2**63 - 1


def seq_position(value: Any) -> int:
    """A records listing's position: an ingestion position (`seq`, a bigint)."""
    if type(value) is not int or not 0 <= value <= MAX_SEQ:
        raise ValueError("not an ingestion position")
    return value


def id_position(value: Any) -> UUID:
    """The erasure log's position: an erasure id."""
    if not isinstance(value, str):
        raise ValueError("not an id")
    return UUID(value)
