"""Issue 45: two valid writes must not deny search to a workspace. Scores of ±1e308 are finite, so
every default search (which normalises `importance` in the reference catalog) and the GET routes
still answer 200; values past float8 are refused at write, in declared fields as in scores; a
formula that still overflows is the caller's 422 only where the caller wrote it."""

from __future__ import annotations

import math
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from memseek.paths import reference_catalog
from memseek.runtime import Runtime
from memseek.write.worker import run_worker
from tests.conftest import Client
from tests.conftest import Tenant
from tests.conftest import client_for
from tests.helpers import error
from tests.helpers import ok
from tests.helpers import post_records
from tests.helpers import runtime_for
from tests.helpers import written

POISON = (1e308, -1e308)


def memory(text: str, importance: float) -> dict[str, Any]:
    return {
        "collection": "memories",
        "entity": "poisoned",
        "type": "note",
        "text": text,
        "scores": {"importance": importance},
    }


@pytest.fixture
def poisoned(client: Client, runtime: Runtime) -> list[str]:
    """Two records scoring ±1e308 (and one ordinary one), processed."""
    ids = [r["id"] for r in written(client, *(memory(f"budget review {v}", v) for v in (*POISON, 3.0)))]
    run_worker(runtime, once=True)
    return ids


@pytest.mark.parametrize("mode", ["hybrid", "vector", "text", "recent"])
def test_default_searches_answer_over_poison_scores(client: Client, poisoned: list[str], mode: str) -> None:
    body: dict[str, Any] = {"mode": mode, "scope": {"collections": ["memories"]}}
    if mode != "recent":
        body["q"] = "budget review"
    hits = ok(client.post("/search", json=body))["hits"]
    assert {hit["id"] for hit in hits} == set(poisoned)
    assert all(math.isfinite(hit["rank_score"]) for hit in hits)


def test_the_get_routes_answer_over_poison_scores(client: Client, poisoned: list[str]) -> None:
    hits = ok(client.get("/search?q=budget%20review&collection=memories"))["hits"]
    assert {hit["id"] for hit in hits} == set(poisoned)
    context = client.get("/context?q=budget%20review")
    assert context.status_code == 200 and "budget review" in context.get_data(as_text=True)


def test_normalize_spans_the_poison_scores(client: Client, poisoned: list[str]) -> None:
    rank = ["normalize", ["score", "importance"]]
    hits = ok(client.post("/search", json={"mode": "recent", "rank": rank}))["hits"]
    assert [hit["rank_score"] for hit in hits] == [1.0, 0.5, 0.0]


def test_a_callers_overflowing_formula_is_its_own_422(client: Client, poisoned: list[str]) -> None:
    rank = ["sum", [["score", "importance"], ["score", "importance"]]]
    err = error(client.post("/search", json={"mode": "recent", "rank": rank}), 422, "invalid_request")
    assert [detail["loc"] for detail in err["details"]] == [["rank"]]


@pytest.fixture
def overflowing_view(runtime: Runtime, tenant: Tenant, tmp_path: Path) -> Iterator[Client]:
    """A client of a runtime whose catalog adds a search view summing `importance` twice."""
    root = tmp_path / "catalog"
    shutil.copytree(reference_catalog(), root)
    (root / "views" / "rel_overflow.yaml").write_text(
        "views:\n"
        "  - name: rel_overflow\n"
        "    version: 1\n"
        "    active: true\n"
        "    query:\n"
        "      mode: recent\n"
        "      scope: {collections: [memories]}\n"
        "      rank: [sum, [[score, importance], [score, importance]]]\n",
        encoding="utf-8",
    )
    yield client_for(runtime_for(runtime, catalog=root), tenant)


def test_a_deployments_overflowing_formula_is_a_server_error(
    overflowing_view: Client, poisoned: list[str], caplog: pytest.LogCaptureFixture
) -> None:
    """The caller wrote no formula: not its 422, but `rank_evaluation_failed`, logged once."""
    for _ in range(3):
        error(overflowing_view.post("/views/rel_overflow/query", json={}), 500, "rank_evaluation_failed")
    assert len([r for r in caplog.records if "rank_evaluation_failed" in r.getMessage()]) <= 1


@pytest.mark.parametrize(
    ("record", "loc"),
    [
        pytest.param(
            {"collection": "memories", "scores": {"importance": 10**400}}, "scores", id="score-10e400"
        ),
        pytest.param(
            {"collection": "dependencies", "content": {"confidence": 10**400}}, "content", id="number-field"
        ),
        pytest.param(
            {"collection": "calendar_events", "content": {"starts_at": "0001-01-01T00:00:00+01:00"}},
            "content",
            id="datetime-field-before-year-1",
        ),
        pytest.param(
            {"collection": "calendar_events", "content": {"starts_at": "9999-12-31T23:59:59-05:00"}},
            "content",
            id="datetime-field-after-9999",
        ),
    ],
)
def test_values_past_float8_or_years_1_to_9999_are_refused_at_write(
    client: Client, record: dict[str, Any], loc: str
) -> None:
    types = {"memories": "note", "dependencies": "link", "calendar_events": "event"}
    full = {"entity": "e", "text": "t", "type": types[record["collection"]], **record}
    err = error(post_records(client, full), 422, "invalid_request")
    assert any(detail["loc"][:3] == ["records", 0, loc] for detail in err["details"]), err


def test_the_extremes_of_float8_are_stored(client: Client) -> None:
    record = {
        "collection": "dependencies",
        "entity": "e",
        "type": "link",
        "text": "t",
        "content": {"confidence": 1.7976931348623157e308},
    }
    assert written(client, record)[0]["processing"] in ("ready", "pending")
