"""View parameters are checked by the SDK before sending, and fail exactly as the service fails
them: the same error class, status, code, message and `loc` of every problem, in the same order.

Each case is sent twice: through `views.query` (refused by the SDK: no response body) and, past
the SDK's check, straight to `POST /views/{name}/query` through `request` (refused by the
service); the two errors must agree.
"""

from __future__ import annotations

from typing import Any

import pytest

from memseek.client import InvalidRequest
from memseek.client import Memseek
from memseek.client import ViewInfo
from tests.sdk.support import MARIA

CALENDAR = {"entity": MARIA, "start": "2026-07-01T00:00:00Z", "end": "2026-08-01T00:00:00Z"}


def case(view: str, parameters: dict[str, Any], *names: str, id: str) -> Any:
    """A refused call and the parameters the problems are at, in the service's order."""
    return pytest.param(view, parameters, [["parameters", name] for name in names], id=id)


CONTEXT, RECENT, GRAPH = "customer_context", "recent_activity", "graph_query"


@pytest.mark.parametrize(
    ("view", "parameters", "locs"),
    [
        case(CONTEXT, {"entity": MARIA}, "task", id="missing"),
        case(CONTEXT, {"entity": MARIA, "task": "x", "colour": "red"}, "colour", id="unknown"),
        case(CONTEXT, {"entity": 3, "task": "x"}, "entity", id="wrong-type"),
        case(CONTEXT, {"entity": None, "task": "x"}, "entity", id="null"),
        case(RECENT, {"entity": MARIA, "k": 0}, "k", id="below-minimum"),
        case(RECENT, {"entity": MARIA, "k": 101}, "k", id="above-maximum"),
        case(RECENT, {"entity": MARIA, "k": 2.0}, "k", id="integer-as-float"),
        case(RECENT, {"entity": MARIA, "k": True}, "k", id="integer-as-bool"),
        case(RECENT, {"entity": "ab"}, "entity", id="too-short"),
        case(RECENT, {"entity": MARIA, "channels": ["fax"]}, "channels", id="item-not-in-item-enum"),
        case(RECENT, {"entity": MARIA, "channels": []}, "channels", id="too-few-items"),
        case(RECENT, {"entity": MARIA, "channels": ["email", "call", "note", "email"]}, "channels",
             id="too-many-items"),
        case(RECENT, {"entity": MARIA, "channels": "email"}, "channels", id="string-for-list"),
        case("upcoming_calendar", {**CALENDAR, "start": "2026-07-01T00:00:00"}, "start",
             id="datetime-without-timezone"),
        case("upcoming_calendar", {**CALENDAR, "end": "next week"}, "end", id="datetime-not-iso"),
        case(GRAPH, {"seed": "   "}, "seed", id="seed-blank-once-trimmed"),
        case(GRAPH, {"seed": "a" * 129}, "seed", id="seed-too-long"),
        case(GRAPH, {"seed": "a", "depth": 17}, "depth", id="depth-over-16"),
        case(GRAPH, {"seed": "a", "limit": 501}, "limit", id="limit-over-500"),
        case(GRAPH, {"seed": "a", "direction": "sideways"}, "direction", id="direction-not-in-enum"),
        case("orphan_pages", {"limit": "10"}, "limit", id="orphans-limit-as-string"),
        case(CONTEXT, {"parameters": {"entity": MARIA}}, "task", id="wrapped-in-parameters"),
        case(CONTEXT, {"parameters": 7}, "parameters", "entity", "task", id="parameters-not-an-object"),
        case(CONTEXT, {"zeta": 1, "task": 5, "alpha": 2}, "zeta", "alpha", "entity", "task",
             id="every-problem-in-the-service-s-order"),
    ],
)  # fmt: skip
def test_the_sdk_refuses_as_the_service_does(
    m: Memseek, view: str, parameters: dict[str, Any], locs: list[list[str]]
) -> None:
    with pytest.raises(InvalidRequest) as by_sdk:
        m.views.query(view, parameters)
    with pytest.raises(InvalidRequest) as by_service:
        m.request("POST", f"/views/{view}/query", json=parameters)
    sdk, service = by_sdk.value, by_service.value
    assert sdk.body is None and service.body is not None  # the SDK's own check: nothing was sent
    assert sdk.locs == service.locs == locs
    assert (sdk.status, sdk.code, sdk.message) == (service.status, service.code, service.message)
    # Issue 41 §1: "checked client-side ... with the same `loc` paths the server would give" —
    # and, each detail being the service's own `{loc, msg}`, the same wording at each.
    assert sdk.details == service.details


@pytest.mark.parametrize(
    ("view", "parameters"),
    [
        pytest.param(GRAPH, {"seed": " " + "a" * 128 + " "}, id="seed-of-128-once-trimmed"),
        pytest.param(RECENT, {"entity": MARIA, "channels": ["email", "call", "note"], "k": 100},
                     id="at-the-bounds"),
        pytest.param("upcoming_calendar", {**CALENDAR, "start": "2026-07-01T00:00:00+02:00"},
                     id="offset-timezone"),
        pytest.param(CONTEXT, {"parameters": {"entity": MARIA, "task": "x"}}, id="wrapped-in-parameters"),
    ],
)  # fmt: skip
def test_what_the_service_takes_the_sdk_sends(m: Memseek, view: str, parameters: dict[str, Any]) -> None:
    assert m.views.query(view, parameters).view.name == view


def stale(view: ViewInfo, **schema: Any) -> ViewInfo:
    """`view` as an earlier catalog might have published it."""
    return ViewInfo(view.name, view.version, True, view.kind, view.hash, view.parameters,
                    {**view.input_schema, **schema})  # fmt: skip


def test_a_stale_contract_is_fetched_again_before_refusing(m: Memseek) -> None:
    current = {v.name: v for v in m.views.list() if v.active}
    cache = m.views._cache
    narrower = stale(
        current["customer_context"], properties={"entity": {"type": "string"}}, required=["entity"]
    )
    cache.load([narrower])  # an older contract without `task`
    result = m.views.query("customer_context", entity=MARIA, task="budget")
    assert result.parameters == {"entity": MARIA, "task": "budget"}
    assert cache.get("customer_context") == current["customer_context"]


def test_a_service_refusal_drops_the_cached_contracts(m: Memseek) -> None:
    current = {v.name: v for v in m.views.list() if v.active}
    cache = m.views._cache
    cache.load([stale(current["customer_context"], required=[])])  # an older contract: task optional
    with pytest.raises(InvalidRequest) as caught:
        m.views.query("customer_context", entity=MARIA)
    assert caught.value.body is not None and caught.value.locs == [["parameters", "task"]]
    assert not cache.knows("customer_context")
