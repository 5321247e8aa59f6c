"""`POST /records?wait=true` (design §3): each record's state in input order, at once when nothing
is pending, after processing, or when the timeout passes; the timeout's range and default.
"""

from __future__ import annotations

import time
from typing import Any

import pytest
from flask import Flask
from sqlalchemy.engine import Engine

from memseek.runtime import Runtime
from memseek.write.worker import start_background_worker
from tests.blackbox.design_support import count_records
from tests.blackbox.design_support import fact
from tests.blackbox.design_support import rec
from tests.conftest import Client
from tests.conftest import Tenant
from tests.helpers import error
from tests.helpers import fetch
from tests.helpers import locs
from tests.helpers import post_records
from tests.helpers import written

# --- ?wait=true -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "query",
    [
        pytest.param("?wait=true&timeout=61", id="timeout-above-60"),
        pytest.param("?wait=true&timeout=-1", id="timeout-negative"),
        pytest.param("?wait=true&timeout=soon", id="timeout-not-a-number"),
        pytest.param("?wait=maybe", id="wait-not-boolean"),
        pytest.param("?wiat=true", id="unknown-parameter"),
    ],
)
def test_invalid_wait_parameters_are_422(bw: Client, bw_db: Engine, bw_ws: Tenant, query: str) -> None:
    error(post_records(bw, rec(), query=query), 422)
    assert count_records(bw_db, bw_ws) == 0


def test_wait_with_the_longest_timeout_returns_at_once_when_nothing_is_pending(bw: Client) -> None:
    started = time.monotonic()
    (result,) = written(bw, rec(), query="?wait=true&timeout=60")
    assert result["processing"] == "ready"
    assert time.monotonic() - started < 5


def test_wait_returns_the_pending_state_when_the_timeout_passes(bw: Client) -> None:
    started = time.monotonic()
    (result,) = written(bw, rec("bw_vec"), query="?wait=true&timeout=1")
    elapsed = time.monotonic() - started
    assert result["processing"] == "pending"
    assert 0.9 <= elapsed < 5
    assert fetch(bw, result["id"])["processing"] == "pending"


def test_wait_timeout_defaults_to_10_seconds(bw: Client) -> None:
    started = time.monotonic()
    (result,) = written(bw, rec("bw_vec"), query="?wait=true")
    elapsed = time.monotonic() - started
    assert result["processing"] == "pending"
    assert 9.5 <= elapsed < 15


def test_wait_returns_once_the_records_are_processed(
    bw_runtime: Runtime, bw_app: Flask, bw_ws: Tenant
) -> None:
    worker = start_background_worker(bw_runtime)
    try:
        client = Client(bw_app.test_client(), bw_ws)
        started = time.monotonic()
        results = written(
            client, rec("bw_vec", text="embed me"), rec(text="plain"), query="?wait=true&timeout=30"
        )
        assert [r["processing"] for r in results] == ["ready", "ready"]
        assert time.monotonic() - started < 25
    finally:
        worker.stop()


@pytest.mark.parametrize("value", ["true", "True", "1"])
def test_wait_accepts_the_usual_spellings_of_true(bw: Client, value: str) -> None:
    started = time.monotonic()
    (result,) = written(bw, rec("bw_vec"), query=f"?wait={value}&timeout=0.5")
    assert result["processing"] == "pending" and 0.4 <= time.monotonic() - started < 5


def test_without_wait_the_write_does_not_wait(bw: Client) -> None:
    started = time.monotonic()
    (result,) = written(bw, rec("bw_vec"), query="?wait=false")
    assert result["processing"] == "pending" and time.monotonic() - started < 5


def test_wait_returns_ready_states_at_once_when_nothing_is_pending(bw: Client) -> None:
    """§3: "`?wait=true` ... returns once those records are processed"."""
    started = time.monotonic()
    results = written(bw, rec(), fact("x"), query="?wait=true")
    assert [r["processing"] for r in results] == ["ready", "ready"]
    assert time.monotonic() - started < 5


def test_wait_returns_when_the_timeout_passes(bw: Client) -> None:
    """§3: "returns once those records are processed or the timeout passes, with their states"."""
    started = time.monotonic()
    results = written(bw, rec(), rec("bw_vec"), query="?wait=true&timeout=1")
    elapsed = time.monotonic() - started
    assert [r["processing"] for r in results] == ["ready", "pending"]
    assert 0.9 <= elapsed < 5


def test_without_wait_the_answer_does_not_wait(bw: Client) -> None:
    """§3: waiting happens only with `?wait=true`."""
    started = time.monotonic()
    results = written(bw, rec("bw_vec"))
    assert results[0]["processing"] == "pending"
    assert time.monotonic() - started < 5


@pytest.mark.parametrize("timeout", ["61", "60.5", "-1", "abc", "1e9", "nan", "inf"])
def test_a_timeout_outside_its_range_is_422(bw: Client, bw_db: Engine, bw_ws: Tenant, timeout: str) -> None:
    """§3: "`timeout`, default 10 s, max 60 s"."""
    error(post_records(bw, rec(), query=f"?wait=true&timeout={timeout}"), 422)
    assert count_records(bw_db, bw_ws) == 0


def test_the_maximum_timeout_is_accepted(bw: Client) -> None:
    """§3: "max 60 s" — 60 itself is allowed."""
    assert written(bw, rec(), query="?wait=true&timeout=60")[0]["processing"] == "ready"


def test_wait_defaults_to_ten_seconds(bw: Client) -> None:
    """§3: "`?wait=true` (with `timeout`, default 10 s, max 60 s)"."""
    started = time.monotonic()
    (result,) = written(bw, rec("bw_vec"), query="?wait=true")
    elapsed = time.monotonic() - started
    assert result["processing"] == "pending"
    assert 9.5 <= elapsed < 14


def test_wait_reports_each_records_state_in_input_order(bw: Client) -> None:
    """§3: `201` with `{"records": [{"id", "processing", "current"}]}` in input order; `?wait=true`
    returns when the timeout passes "with their states"."""
    started = time.monotonic()
    results = written(bw, rec("bw_vec", text="to embed"), rec(text="plain"), query="?wait=true&timeout=0.5")
    assert [r["processing"] for r in results] == ["pending", "ready"]
    assert all(set(r) == {"id", "processing", "current"} for r in results)
    assert 0.4 <= time.monotonic() - started < 5


def test_a_wait_timeout_of_zero_does_not_wait(bw: Client) -> None:
    """§3: `timeout` default 10 s, max 60 s: 0 is within the range and means no waiting."""
    started = time.monotonic()
    (result,) = written(bw, rec("bw_vec"), query="?wait=true&timeout=0")
    assert result["processing"] == "pending" and time.monotonic() - started < 5


@pytest.mark.parametrize(
    "timeout",
    ["nan", "inf", "-inf", "1e309", "60.5", "60.000001", "", "-0.5", "0x10"],
)
def test_a_wait_timeout_outside_0_to_60_seconds_is_422(
    bw: Client, bw_db: Any, bw_ws: Tenant, timeout: str
) -> None:
    """Design §3: "`?wait=true` (with `timeout`, default 10 s, max 60 s)"; invalid → 422, never a
    500, and the request writes nothing."""
    response = post_records(bw, rec(), query=f"?wait=true&timeout={timeout}")
    assert ["query", "timeout"] in locs(response)
    assert count_records(bw_db, bw_ws) == 0


@pytest.mark.parametrize("timeout", ["60", "60.0", "0.25"])
def test_a_wait_timeout_up_to_60_seconds_is_accepted(bw: Client, timeout: str) -> None:
    """Design §3: "`timeout`, default 10 s, max 60 s"."""
    (result,) = written(bw, rec(), query=f"?wait=true&timeout={timeout}")
    assert result["processing"] == "ready"
