"""`run_parallel`: the concurrency a combined search's sources (and rerank calls) run with."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from contextvars import ContextVar

import pytest

from memseek.search.execute import run_parallel
from memseek.search_state import HELPER_THREADS

LABEL: ContextVar[str] = ContextVar("test_label", default="unset")


@pytest.fixture(scope="module")
def helpers() -> Iterator[ThreadPoolExecutor]:
    """Helper threads as a runtime's search state keeps them (`SearchState.helpers`)."""
    pool = ThreadPoolExecutor(max_workers=HELPER_THREADS, thread_name_prefix="test-helpers")
    yield pool
    pool.shutdown()


def test_results_come_back_in_input_order(helpers: ThreadPoolExecutor) -> None:
    assert run_parallel(helpers, lambda x: x * 10, list(range(7)), 3) == [0, 10, 20, 30, 40, 50, 60]


@pytest.mark.parametrize("limit", [1, 2, 3])
def test_never_more_than_max_concurrency_at_once(limit: int, helpers: ThreadPoolExecutor) -> None:
    running, most = 0, 0
    lock = threading.Lock()

    def job(x: int) -> int:
        nonlocal running, most
        with lock:
            running += 1
            most = max(most, running)
        time.sleep(0.01)  # lets the jobs overlap; the assertion holds whatever the timing
        with lock:
            running -= 1
        return x

    assert run_parallel(helpers, job, list(range(6)), limit) == list(range(6))
    assert most <= limit


def test_the_first_error_in_input_order_is_raised_once_every_started_job_ended(
    helpers: ThreadPoolExecutor,
) -> None:
    """Items are claimed in input order and a worker stops at its job's error (its transaction
    is spoilt), so items after an error may never run; one before it always ran to its end."""
    started: list[int] = []
    ended: list[int] = []

    def job(x: int) -> int:
        started.append(x)
        time.sleep(0.01 * (4 - x))  # the earlier the item, the later it ends
        ended.append(x)
        if x in (1, 3):
            raise ValueError(f"job {x}")
        return x

    with pytest.raises(ValueError, match="job 1"):
        run_parallel(helpers, job, [0, 1, 2, 3], 4)
    assert {0, 1} <= set(started)
    assert sorted(started) == sorted(ended)


def test_helpers_see_the_callers_context(helpers: ThreadPoolExecutor) -> None:
    LABEL.set("POST /search")
    assert run_parallel(helpers, lambda _: LABEL.get(), [0, 1, 2], 3) == ["POST /search"] * 3


def test_with_every_helper_busy_the_caller_runs_the_jobs_itself(helpers: ThreadPoolExecutor) -> None:
    release = threading.Event()
    blockers = [helpers.submit(release.wait, 30) for _ in range(HELPER_THREADS)]
    try:
        caller = threading.get_ident()
        threads = run_parallel(helpers, lambda _: threading.get_ident(), [0, 1, 2], 3)
        assert threads == [caller] * 3
    finally:
        release.set()
        for blocker in blockers:
            blocker.result()


class Seat:
    """A helper's seat that records how it was entered and left; its job runs `work`, after
    the caller's first item waited for it (so a helper surely takes part)."""

    def __init__(self, work: Callable[[int], int]) -> None:
        self.work = work
        self.entered = 0
        self.left: list[type[BaseException] | None] = []
        self.ran = threading.Event()

    @contextmanager
    def __call__(self) -> Iterator[Callable[[int], tuple[int, str]]]:
        self.entered += 1
        try:
            yield self.job
        except BaseException as exc:
            self.left.append(type(exc))
            raise
        self.left.append(None)

    def job(self, item: int) -> tuple[int, str]:
        self.ran.set()
        return self.work(item), "helper"

    def caller(self, item: int) -> tuple[int, str]:
        self.ran.wait(10)
        return item, "caller"


def test_a_helper_runs_the_job_its_seat_yields_entering_it_once(helpers: ThreadPoolExecutor) -> None:
    seat = Seat(lambda item: item)
    results = run_parallel(helpers, seat.caller, [0, 1, 2, 3], 2, seat)
    assert [item for item, _ in results] == [0, 1, 2, 3]
    assert "helper" in {who for _, who in results}
    assert (seat.entered, seat.left) == (1, [None])


def test_a_failing_job_leaves_its_seat_with_the_error_which_is_raised(helpers: ThreadPoolExecutor) -> None:
    def work(item: int) -> int:
        raise ValueError(f"job {item}")

    seat = Seat(work)
    with pytest.raises(ValueError, match="job"):
        run_parallel(helpers, seat.caller, [0, 1, 2, 3], 2, seat)
    assert (seat.entered, seat.left) == (1, [ValueError])
