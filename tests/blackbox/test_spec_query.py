"""Spec "Choosing a search mode" and "The query, field by field": fields, defaults and limits."""

from __future__ import annotations

from typing import Any

import pytest

from tests.blackbox.conftest import ClientFactory
from tests.blackbox.support import INCLUDES
from tests.blackbox.support import ids
from tests.blackbox.support import note
from tests.blackbox.support import rejects
from tests.blackbox.support import search
from tests.blackbox.support import write
from tests.conftest import Client

NOTES = {"collections": ["sx_notes"]}


@pytest.mark.parametrize("mode", ["vector", "text", "hybrid", "recent", "structured"])
def test_the_five_modes(sx: Client, mode: str) -> None:
    body: dict[str, Any] = {"mode": mode}
    if mode in ("vector", "text", "hybrid"):
        body["q"] = "budget"
    if mode == "structured":
        body["order_by"] = [{"field": "amount"}]
        body["scope"] = NOTES
    if mode in ("vector", "hybrid"):
        body["scope"] = {"collections": ["sx_vec"]}
    assert search(sx, body)["hits"] == []


@pytest.mark.parametrize(
    ("body", "loc"),
    [
        pytest.param({}, ("mode",), id="mode-required"),
        pytest.param({"mode": "semantic"}, ("mode",), id="unknown-mode"),
        pytest.param({"mode": "recent", "limit": 3}, ("limit",), id="unknown-key"),
        pytest.param(
            {"mode": "recent", "scope": {"collection": ["sx_notes"]}},
            ("scope", "collection"),
            id="unknown-scope-key",
        ),
        pytest.param({"mode": "recent", "Mode": "recent"}, ("Mode",), id="keys-are-case-sensitive"),
    ],
)
def test_the_request_is_strict(sx: Client, body: dict[str, Any], loc: tuple[str, ...]) -> None:
    rejects(sx, body, *loc)


def test_a_body_that_is_not_an_object_is_rejected(sx: Client) -> None:
    rejects(sx, [{"mode": "recent"}])  # type: ignore[arg-type]
    response = sx.post("/search", data="not json", headers={"Content-Type": "application/json"})
    assert response.status_code in (400, 422)


@pytest.mark.parametrize("mode", ["vector", "text", "hybrid"])
@pytest.mark.parametrize("q", [None, "", "   "], ids=["absent", "empty", "blank"])
def test_q_is_required_and_non_empty_for_query_modes(sx: Client, mode: str, q: str | None) -> None:
    body: dict[str, Any] = {"mode": mode, "scope": {"collections": ["sx_vec"]}}
    if q is not None:
        body["q"] = q
    rejects(sx, body, "q")


def test_q_is_ignored_by_recent_and_structured(sx: Client) -> None:
    (record,) = write(sx, note("something else", content={"amount": 1}))
    assert ids(search(sx, {"mode": "recent", "q": "unrelated words", "scope": NOTES})) == [record]
    body = {"mode": "structured", "q": "unrelated", "order_by": [{"field": "amount"}], "scope": NOTES}
    assert ids(search(sx, body)) == [record]


def test_q_is_at_most_max_query_chars(sx: Client, sx_with: ClientFactory) -> None:
    assert search(sx, {"mode": "text", "q": "a" * 8192})["hits"] == []
    rejects(sx, {"mode": "text", "q": "a" * 8193}, "q")
    small = sx_with(max_query_chars=10)
    assert search(small, {"mode": "text", "q": "b" * 10})["hits"] == []
    rejects(small, {"mode": "text", "q": "b" * 11}, "q")
    rejects(small, {"mode": "recent", "q": "b" * 11}, "q")


def test_k_defaults_to_20(sx: Client) -> None:
    write(sx, *(note(f"n{i}") for i in range(25)))
    assert len(search(sx, {"mode": "recent"})["hits"]) == 20


@pytest.mark.parametrize("k", [1, 7, 100])
def test_k_between_1_and_100(sx: Client, k: int) -> None:
    write(sx, *(note(f"n{i}") for i in range(min(k + 2, 102))))
    body = search(sx, {"mode": "recent", "k": k})
    assert len(body["hits"]) == k
    assert [h["rank"] for h in body["hits"]] == list(range(1, k + 1))


@pytest.mark.parametrize("k", [0, -1, 101, 1.5, "5", True, None])
def test_k_out_of_range_or_not_an_integer(sx: Client, k: Any) -> None:
    rejects(sx, {"mode": "recent", "k": k}, "k")


def test_include_accepts_exactly_the_documented_names(sx: Client) -> None:
    write(sx, note())
    (hit,) = search(sx, {"mode": "recent", "include": INCLUDES})["hits"]
    assert set(INCLUDES) <= hit.keys()


@pytest.mark.parametrize("name", ["content", "annotations", "fields", "last_accessed", "Text", "id"])
def test_include_rejects_other_names(sx: Client, name: str) -> None:
    rejects(sx, {"mode": "recent", "include": [name]}, "include", 0)


def test_fields_and_annotations_take_at_most_16_names(sx: Client) -> None:
    names = [f"f{i}" for i in range(17)]
    rejects(sx, {"mode": "recent", "scope": NOTES, "fields": names}, "fields")
    rejects(sx, {"mode": "recent", "scope": NOTES, "annotations": names}, "annotations")
    rejects(sx, {"mode": "recent", "scope": NOTES, "fields": ["channel", "channel"]}, "fields")
    rejects(sx, {"mode": "recent", "scope": NOTES, "annotations": ["sx_region", "sx_region"]}, "annotations")


def test_render_defaults_to_false(sx: Client) -> None:
    write(sx, note())
    body = search(sx, {"mode": "recent"})
    assert body["rendered"] is None and body["truncated"] is False


@pytest.mark.parametrize("render", [False, None])
def test_fence_needs_render(sx: Client, render: bool | None) -> None:
    body: dict[str, Any] = {"mode": "recent", "fence": {"tag": "records"}}
    if render is not None:
        body["render"] = render
    rejects(sx, body, "fence")


@pytest.mark.parametrize(
    ("extra", "loc"),
    [
        pytest.param({}, ("order_by",), id="order-by-required"),
        pytest.param({"order_by": []}, ("order_by",), id="order-by-non-empty"),
        pytest.param({"order_by": [{"field": "amount"}], "rank": ["const", 1]}, ("rank",), id="no-rank"),
        pytest.param(
            {"order_by": [{"field": "amount", "direction": "up"}]},
            ("order_by", 0, "direction"),
            id="direction",
        ),
        pytest.param({"order_by": [{"field": "tags"}]}, ("order_by", 0, "field"), id="not-sortable"),
        pytest.param({"order_by": [{"field": "nope"}]}, ("order_by", 0, "field"), id="undeclared"),
    ],
)
def test_structured_mode_rules(sx: Client, extra: dict[str, Any], loc: tuple[Any, ...]) -> None:
    rejects(sx, {"mode": "structured", "scope": NOTES, **extra}, *loc)


@pytest.mark.parametrize("mode", ["text", "recent"])
def test_order_by_belongs_to_structured_mode(sx: Client, mode: str) -> None:
    rejects(sx, {"mode": mode, "q": "x", "scope": NOTES, "order_by": [{"field": "amount"}]}, "order_by")


def test_order_by_direction_defaults_to_asc(sx: Client) -> None:
    big, small = write(sx, note(content={"amount": 9}), note(content={"amount": 1}))
    body = {"mode": "structured", "scope": NOTES, "order_by": [{"field": "amount"}]}
    assert ids(search(sx, body)) == [small, big]


@pytest.mark.parametrize("candidates", [0, 1001, 2.5, "100"])
def test_params_candidates_is_1_to_1000(sx: Client, candidates: Any) -> None:
    rejects(sx, {"mode": "recent", "params": {"candidates": candidates}}, "params", "candidates")


def test_params_take_no_other_knob(sx: Client) -> None:
    rejects(sx, {"mode": "recent", "params": {"ef_search": 10}}, "params", "ef_search")


@pytest.mark.parametrize(
    ("k", "expected"),
    [
        pytest.param(5, 100, id="at-least-100"),
        pytest.param(20, 200, id="10k"),
        pytest.param(15, 150, id="10k-150"),
    ],
)
def test_candidates_default_is_min_1000_max_100_10k(sx: Client, k: int, expected: int) -> None:
    write(sx, *(note(f"n{i}", entity=f"e{i}") for i in range(260)))
    body = search(sx, {"mode": "recent", "scope": NOTES, "k": k})
    assert body["backend"]["candidate_count"] == expected
    assert len(body["hits"]) == k


def test_params_candidates_sets_how_many_are_proposed(sx: Client) -> None:
    write(sx, *(note(f"n{i}") for i in range(30)))
    body = search(sx, {"mode": "recent", "k": 5, "params": {"candidates": 12}})
    assert body["backend"]["candidate_count"] == 12 and len(body["hits"]) == 5
    body = search(sx, {"mode": "recent", "k": 20, "params": {"candidates": 3}})
    assert body["backend"]["candidate_count"] == 3 and len(body["hits"]) == 3
