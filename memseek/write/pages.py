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
import binascii
import hashlib
import json
from collections.abc import Mapping
from typing import Any

from memseek.errors import Detail
from memseek.errors import RequestInvalid

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


def decode_cursor(raw: str, listing: Mapping[str, Any], kind: type[int] | type[str]) -> Any:
    """The position a cursor of `listing` names (an `int` or `str`, as `kind` says); a `422`
    when it is not one this listing gave out."""
    try:
        data = json.loads(base64.urlsafe_b64decode(raw + "=" * (-len(raw) % 4)))
    except (ValueError, binascii.Error):
        data = None
    valid = (
        isinstance(data, dict)
        and set(data) == {"after", "of"}
        and type(data["after"]) is kind
        and data["of"] == _digest(listing)
    )
    if not valid:
        detail = Detail(("query", "cursor"), "not a cursor of this listing; pass next_cursor back unchanged")
        raise RequestInvalid("the cursor is invalid", [detail])
    return data["after"]
