"""Issue 45: parsers stop at their limits before descending. A tree nested up to 10,000 levels in
any place a request can nest one (rank, boost, sources[].rank, where, a view's parameters, record
content, a retraction's reason, a write contract's parameters, an explained search; and any body at
all, on every route that takes one) is always a 422 in the one error shape, with the limit's message
and a `loc` — never a 500 — and costs at most one short log line."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import HealthCheck
from hypothesis import example
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st

from memseek.api.openapi import OPERATIONS
from tests.conftest import Client
from tests.helpers import error

SHAPES: dict[str, tuple[str, str]] = {
    "sum": ('["sum", [', "]]"),
    "normalize": ('["normalize", ', "]"),
    "product": ('["product", 2, ', "]"),
    "max": ('["max", [["const", 1], ', "]]"),
    "list": ("[", "]"),
    "object": ('{"a": ', "}"),
}
"""One level of each kind of nesting: (text before the child, text after it)."""
LEAF = '["score", "importance"]'
NO_ID = "00000000-0000-0000-0000-000000000000"


def nested(shape: str, depth: int) -> str:
    """JSON text nesting `shape` `depth` levels deep around a rank leaf (built as text: a JSON
    encoder would itself recurse once per level)."""
    before, after = SHAPES[shape]
    return before * depth + LEAF + after * depth


PLACES: dict[str, tuple[str, Callable[[str], str]]] = {
    "rank": ("/search", lambda tree: '{"q": "x", "mode": "text", "rank": ' + tree + "}"),
    "boost": (
        "/search",
        lambda tree: (
            '{"sources": [{"name": "a", "mode": "recent"}], "fuse": {"kind": "rrf"}, "boost": ' + tree + "}"
        ),
    ),
    "source-rank": (
        "/search",
        lambda tree: (
            '{"sources": [{"name": "a", "mode": "recent", "rank": ' + tree + '}], "fuse": {"kind": "rrf"}}'
        ),
    ),
    "where": ("/search", lambda tree: '{"mode": "recent", "where": {"source": ' + tree + "}}"),
    "view-parameter": ("/views/customer_context/query", lambda tree: '{"entity": ' + tree + ', "task": "t"}'),
    "content": (
        "/records",
        lambda tree: (
            '{"records": [{"collection": "memories", "entity": "e", "type": "note", '
            '"text": "t", "content": {"deep": ' + tree + "}}]}"
        ),
    ),
    "reason": (
        "/records/00000000-0000-0000-0000-000000000000/retract",
        lambda tree: '{"reason": ' + tree + "}",
    ),
    "explain-rank": ("/search/explain", lambda tree: '{"q": "x", "mode": "text", "rank": ' + tree + "}"),
    "write-parameter": (
        "/writes/remember",
        lambda tree: '{"parameters": {"entity": "e", "text": "t", "tags": ' + tree + "}}",
    ),
}
"""Where a request can nest a tree: (route, the body around the tree)."""

SHALLOWEST_REFUSED = {"content": 130}
"""The least depth refused where more than the rank grammar's 5 levels is fine (content nests 128
levels inside the record's own object)."""
LIMIT_MESSAGES = (
    "at most 5 levels of nesting",
    "at most 16 nodes",
    "nested too deeply",
    "too deep",
    "nested more than",
)
"""The limits a tree that deep meets first (the rank grammar's, the JSON parser's, content's)."""
ANY_REFUSAL = ("must", "expected", "Input should", "unknown", "not")
"""Where the tree is not the kind of value the place takes at all, it is refused as such."""


def _limit_or_type_refusal(place: str, shape: str, messages: list[str]) -> bool:
    rank_place = place in ("rank", "boost", "source-rank", "explain-rank") and shape not in ("list", "object")
    wanted = LIMIT_MESSAGES if rank_place or place == "content" else LIMIT_MESSAGES + ANY_REFUSAL
    return any(text in message for message in messages for text in wanted)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    place=st.sampled_from(sorted(PLACES)),
    shape=st.sampled_from(sorted(SHAPES)),
    depth=st.integers(min_value=6, max_value=10_000),
)
@example(place="rank", shape="sum", depth=245)
@example(place="rank", shape="normalize", depth=10_000)
@example(place="boost", shape="sum", depth=10_000)
@example(place="source-rank", shape="product", depth=600)
@example(place="content", shape="object", depth=130)
@example(place="content", shape="list", depth=999)
@example(place="where", shape="object", depth=5_000)
@example(place="explain-rank", shape="sum", depth=10_000)
@example(place="write-parameter", shape="list", depth=10_000)
def test_a_deep_tree_is_a_422_with_the_limit_and_a_loc(
    client: Client, caplog: pytest.LogCaptureFixture, place: str, shape: str, depth: int
) -> None:
    path, body = PLACES[place]
    depth = max(depth, SHALLOWEST_REFUSED.get(place, 6))
    caplog.clear()
    with caplog.at_level(logging.INFO):
        response = client.raw.post(
            path,
            data=body(nested(shape, depth)).encode(),
            headers={**client.tenant.headers, "Content-Type": "application/json"},
        )
    err = error(response, 422, "invalid_request")
    assert err["details"], err
    assert all(detail["loc"] for detail in err["details"]), err
    messages = [err["message"], *(detail["msg"] for detail in err["details"])]
    assert _limit_or_type_refusal(place, shape, messages), err
    assert len(response.get_data()) < 20_000  # the answer does not echo the tree
    _at_most_one_short_line(caplog.records)


def _at_most_one_short_line(records: list[logging.LogRecord]) -> None:
    logged = [r for r in records if r.levelno >= logging.WARNING]
    assert len(logged) <= 1, [r.getMessage()[:200] for r in logged]
    for record in logged:
        assert record.exc_info is None and len(record.getMessage()) < 500


def test_the_rank_parser_reports_the_level_limit_where_it_is_passed(client: Client) -> None:
    """The sixth level is where the walk stops: one problem, at that node's path."""
    body = '{"q": "x", "mode": "text", "rank": ' + nested("normalize", 10) + "}"
    response = client.raw.post(
        "/search", data=body, headers={**client.tenant.headers, "Content-Type": "application/json"}
    )
    details = error(response, 422, "invalid_request")["details"]
    assert details == [{"loc": ["rank", 1, 1, 1, 1, 1], "msg": "at most 5 levels of nesting"}]


def any_tree(depth: int) -> Any:
    """A rank tree `depth` levels deep built without recursion (for the parser's unit check)."""
    tree: Any = ["score", "importance"]
    for _ in range(depth):
        tree = ["normalize", tree]
    return tree


@pytest.mark.parametrize("depth", [6, 1_000, 100_000])
def test_parse_rank_never_recurses_past_its_limit(depth: int) -> None:
    from memseek.catalog.rank import parse_rank
    from memseek.errors import RequestInvalid

    with pytest.raises(RequestInvalid) as caught:
        parse_rank(any_tree(depth))
    assert [d.msg for d in caught.value.details] == ["at most 5 levels of nesting"]


def _body_operations() -> list[Any]:
    return [pytest.param(op.method, op.path, id=f"{op.method} {op.path}") for op in OPERATIONS if op.body]


@pytest.mark.parametrize(("method", "path"), _body_operations())
def test_a_body_nested_10000_levels_is_refused_on_every_route(
    client: Client, caplog: pytest.LogCaptureFixture, method: str, path: str
) -> None:
    """Whatever a route reads from its body, the JSON parser stops first: `422` at `body` in the
    one shape (`/mcp`: the MCP SDK's JSON-RPC parse error, as for any body it cannot read)."""
    name = "remember" if path.startswith("/writes") else "customer_context"
    target = path.replace("{id}", NO_ID).replace("{entity}", "e").replace("{name}", name)
    headers = {**client.tenant.headers, "Content-Type": "application/json"}
    if path == "/mcp":
        headers["Accept"] = "application/json, text/event-stream"
    caplog.clear()
    with caplog.at_level(logging.INFO):
        response = client.raw.open(target, method=method, data=nested("list", 10_000), headers=headers)
    if path == "/mcp":
        assert response.status_code == 400 and response.get_json()["error"]["code"] == -32700
    else:
        assert error(response, 422, "invalid_request")["details"] == [{"loc": ["body"], "msg": "too deep"}]
    _at_most_one_short_line(caplog.records)
