"""`memseek search`, `memseek views` and `memseek view`: the HTTP API of a running service, for people.

These commands are clients: through the Python SDK (`memseek.client`) they call the service at
`MEMSEEK_URL` (default http://127.0.0.1:8000) with the key in `MEMSEEK_API_KEY`, exactly as an
application would, and
print a readable table (or the rendered block a view returns); `--json` prints the response
itself, for scripts. A refused request prints the service's message and each problem's location,
and the command exits with status 2, without a traceback.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable
from collections.abc import Iterable
from collections.abc import Iterator
from collections.abc import Mapping
from collections.abc import Sequence
from contextlib import contextmanager
from typing import Any

from rich.console import Console
from rich.table import Table

from memseek.client import Memseek
from memseek.client import MemseekError as SdkError
from memseek.errors import ConfigError
from memseek.errors import Detail
from memseek.errors import MemseekError

TEXT_CHARS = 120
"""Characters of a record's text shown in a table row (the rest is cut, with an ellipsis)."""
SEARCH_INCLUDE = ["text", "collection", "type", "entity", "occurred_at"]
TIMEOUT_SECONDS = 60.0
SCORE_NOTE = (
    "score: 1 = best of this result, 0 = weakest of its candidates (rescaled per response; "
    "rank_score in --json is the ranking formula's own value)"
)
WIDTH = 160
"""Columns a table takes when standard output is not a terminal (a terminal's own width otherwise)."""


class ServiceError(MemseekError):
    """The service refused a request: its status, error code, message and problems."""

    def __init__(self, status: int, code: str, message: str, details: Sequence[Detail]) -> None:
        super().__init__(f"{message} ({status} {code})", details)
        self.status = status
        self.code = code


@contextmanager
def service() -> Iterator[Memseek]:
    """The SDK's client of the service at `MEMSEEK_URL` (default http://127.0.0.1:8000) with
    `MEMSEEK_API_KEY` (required); its errors as the command reports them."""
    if not os.environ.get("MEMSEEK_API_KEY", "").strip():
        raise ConfigError(
            "set MEMSEEK_API_KEY to a workspace key (memseek serve prints the first one; "
            "memseek key create default mints another)"
        )
    client = Memseek(timeout=TIMEOUT_SECONDS, retries=0)
    try:
        with client:
            yield client
    except SdkError as exc:
        raise _refusal(exc, client.base_url) from None


def _refusal(exc: SdkError, url: str) -> Exception:
    if exc.status is None:  # no answer at all
        return ConfigError(
            f"cannot reach Memseek at {url} ({exc.message}); start it with memseek serve, or set MEMSEEK_URL"
        )
    details = [Detail(tuple(d.loc), d.msg) for d in exc.details]
    return ServiceError(exc.status, exc.code, exc.message, details)


# --- requests -----------------------------------------------------------------------------------


def search_body(
    q: str | None,
    mode: str,
    collections: Sequence[str],
    entities: Sequence[str],
    k: int | None,
    order_by: Sequence[str] = (),
    fields: Sequence[str] = (),
) -> dict[str, Any]:
    """The `POST /search` request the command line describes (`--order-by FIELD[:desc]`,
    `--field NAME`)."""
    scope: dict[str, Any] = {}
    if collections:
        scope["collections"] = list(collections)
    if entities:
        scope["entities"] = list(entities)
    body: dict[str, Any] = {"mode": mode, "scope": scope, "include": SEARCH_INCLUDE}
    if q is not None:
        body["q"] = q
    if k is not None:
        body["k"] = k
    if order_by:
        body["order_by"] = [_sort_key(key) for key in order_by]
    if fields:
        body["fields"] = list(fields)
    return body


def _sort_key(raw: str) -> dict[str, str]:
    field, _, direction = raw.partition(":")
    return {"field": field, "direction": direction or "asc"}


def view_arguments(parameters: Mapping[str, Any], pairs: Iterable[str]) -> dict[str, Any]:
    """`key=value` pairs as a view's parameters, each value read by the parameter's declared
    type (`GET /views`): numbers and booleans parsed, a string_array split on commas (or given as
    a JSON list). A name the view does not declare is passed as text for the service to refuse."""
    out: dict[str, Any] = {}
    for pair in pairs:
        name, sep, raw = pair.partition("=")
        if not sep or not name:
            raise ConfigError(f"expected key=value, got {pair!r}")
        kind = parameters.get(name, {}).get("type", "string")
        out[name] = _typed(name, kind, raw)
    return out


def _typed(name: str, kind: str, raw: str) -> Any:
    try:
        if kind == "integer":
            return int(raw)
        if kind == "number":
            return float(raw)
    except ValueError:
        raise ConfigError(
            f"{name} must be a{'n integer' if kind == 'integer' else ' number'}, got {raw!r}"
        ) from None
    if kind == "boolean":
        if raw.lower() not in ("true", "false"):
            raise ConfigError(f"{name} must be true or false, got {raw!r}")
        return raw.lower() == "true"
    if kind == "string_array":
        return json.loads(raw) if raw.startswith("[") else [part for part in raw.split(",") if part]
    return raw


def active_view(views: Sequence[Mapping[str, Any]], name: str) -> Mapping[str, Any]:
    """The active version of view `name` as `GET /views` lists it (empty when there is none: the
    service then answers the call with its own 404 naming the views there are)."""
    return next((view for view in views if view["name"] == name and view["active"]), {})


# --- output -------------------------------------------------------------------------------------


def shortened(text: Any, limit: int = TEXT_CHARS) -> str:
    """One line of at most `limit` characters."""
    line = " ".join(str(text or "").split())
    return line if len(line) <= limit else line[: limit - 1] + "…"


def hits_table(hits: Sequence[Mapping[str, Any]], scored: bool = True) -> Table:
    """rank, score, collection/type, entity, occurred_at, the declared fields the hits carry
    (`--field`, so that a sort can be seen) and text (or the id, when a view's hits carry no
    text). An unscored result (structured) has no score column and no note about scores: a
    column of blanks would read as a failure to score."""
    named = list(dict.fromkeys(name for hit in hits for name in hit.get("fields") or {}))
    columns = ["rank", "score", "collection/type", "entity", "occurred_at", *named, "text"]
    if not scored:
        columns.remove("score")
    table = Table(*columns, box=None, caption=SCORE_NOTE if scored else None, caption_justify="left")
    for hit in hits:
        cells = _hit_cells(hit, named)
        table.add_row(*(cells if scored else cells[:1] + cells[2:]))
    return table


def _hit_cells(hit: Mapping[str, Any], named: Sequence[str]) -> list[str]:
    score = hit.get("score")
    kind = "/".join(str(hit[name]) for name in ("collection", "type") if hit.get(name))
    text = hit.get("text") if "text" in hit else f"(id {hit.get('id')})"
    cells = [str(hit.get("rank", "")), "" if score is None else f"{score:.3f}", kind]
    cells += [str(hit.get("entity", "")), str(hit.get("occurred_at", ""))[:19]]
    values = hit.get("fields") or {}
    shown = ("" if values.get(name) is None else shortened(str(values[name])) for name in named)
    return [*cells, *shown, shortened(text)]


def views_table(views: Sequence[Mapping[str, Any]]) -> Table:
    """name, version, active, kind, parameters (`name:type`, `*` when required) and description."""
    table = Table("name", "version", "active", "kind", "parameters", "description", box=None)
    table.columns[0].no_wrap = True
    for view in views:
        params = ", ".join(
            f"{name}:{p['type']}{'*' if p['required'] else ''}" for name, p in view["parameters"].items()
        )
        table.add_row(
            view["name"],
            str(view["version"]),
            "yes" if view["active"] else "",
            view["kind"],
            params,
            shortened(view.get("description") or "", 80),
        )
    return table


def show_result(console: Console, body: Mapping[str, Any]) -> None:
    """A search or view result: the rendered block when there is one, else the hits as a table;
    a graph walk's paths as `a → b` lines."""
    for path in body.get("paths", ()):
        console.print(" → ".join(path["nodes"]), markup=False, highlight=False)
    if body.get("rendered"):
        console.print(body["rendered"], markup=False, highlight=False)
    elif body.get("hits"):
        console.print(hits_table(body["hits"], scored=body.get("ranking", {}).get("scored", True)))
    elif not body.get("paths"):
        console.print("no results")


def show_views(console: Console, body: Mapping[str, Any]) -> None:
    console.print(views_table(body["views"]))


def emit(body: Any, as_json: bool, show: Callable[[Console, Any], None]) -> None:
    """Print a response: its JSON (`--json`, for scripts) or `show`'s rendering of it."""
    console = Console(width=None if sys.stdout.isatty() else WIDTH)
    if as_json:
        console.print_json(json.dumps(body), highlight=False)
    else:
        show(console, body)
