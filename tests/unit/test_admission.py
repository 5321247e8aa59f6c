"""`FairDispatcher`: round-robin across keys, a key alone on every thread, a competing key held to
its share, bounded queues and waits (`memseek.api.admission`)."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest

from memseek.api.admission import LINGER
from memseek.api.admission import Bounds
from memseek.api.admission import FairDispatcher


class Held:
    """A task that records its start and runs until released."""

    def __init__(self, name: str, log: list[str], release: threading.Event) -> None:
        self.name, self.log, self.release = name, log, release
        self.started = threading.Event()

    def service(self) -> None:
        self.log.append(self.name)
        self.started.set()
        self.release.wait(10)


@pytest.fixture
def release() -> Iterator[threading.Event]:
    event = threading.Event()
    yield event
    event.set()


def dispatcher(threads: int, **bounds: float | int | None) -> FairDispatcher:
    values: dict[str, Any] = {"queued": 100, "max_wait": 10.0, **bounds}
    return FairDispatcher(threads, Bounds(**values), "test")


def settle(dispatch: FairDispatcher, running: int) -> None:
    deadline = time.monotonic() + 5
    while dispatch.load() - sum(map(len, dispatch._queues.values())) < running:
        assert time.monotonic() < deadline, "tasks did not start"
        time.sleep(0.01)


def test_keys_take_turns_whatever_their_queue_lengths(release: threading.Event) -> None:
    log: list[str] = []
    dispatch = dispatcher(1)
    gate = threading.Event()
    first = Held("gate", log, gate)
    dispatch.submit("a", first)
    assert first.started.wait(5)
    for n in range(4):
        dispatch.submit("a", Held(f"a{n}", log, release))
    for n in range(2):
        dispatch.submit("b", Held(f"b{n}", log, release))
    release.set()
    gate.set()
    deadline = time.monotonic() + 5
    while len(log) < 7 and time.monotonic() < deadline:
        time.sleep(0.01)
    assert log == ["gate", "a0", "b0", "a1", "b1", "a2", "a3"]
    dispatch.shutdown()


def test_any_key_names_a_queue_none_included(release: threading.Event) -> None:
    log: list[str] = []
    dispatch = dispatcher(2)
    for key in (None, ""):
        task = Held(repr(key), log, release)
        dispatch.submit(key, task)
        assert task.started.wait(5)
    assert dispatch.load(None) == dispatch.load("") == 1 and dispatch.load() == 2
    dispatch.shutdown(timeout=0)


def test_a_key_alone_runs_on_every_thread_and_a_competing_one_within_its_share(
    release: threading.Event,
) -> None:
    log: list[str] = []
    dispatch = dispatcher(4, share=1)
    for n in range(6):
        dispatch.submit("a", Held(f"a{n}", log, release))
    settle(dispatch, 4)
    assert sorted(log) == ["a0", "a1", "a2", "a3"]  # alone: every thread
    late = Held("b0", log, release)
    dispatch.submit("b", late)
    release.set()
    assert late.started.wait(5)
    assert log.index("b0") == 4, log  # the next task any thread takes
    dispatch.shutdown()


def test_a_key_is_held_to_its_share_while_another_lingers(release: threading.Event) -> None:
    log: list[str] = []
    dispatch = dispatcher(4, share=1)
    done = threading.Event()
    done.set()
    dispatch.submit("b", Held("b0", log, done))  # ends at once: "b" lingers
    time.sleep(0.1)
    for n in range(3):
        dispatch.submit("a", Held(f"a{n}", log, release))
    time.sleep(0.2)
    assert log == ["b0", "a0"]  # one at a time while "b" may send its next request
    time.sleep(LINGER)
    assert sorted(log) == ["a0", "a1", "a2", "b0"]  # then every thread
    dispatch.shutdown()


def test_a_full_queue_refuses_and_a_late_task_expires(release: threading.Event) -> None:
    log: list[str] = []
    dispatch = dispatcher(1, queued=2, max_wait=0.2)
    dispatch.submit("a", Held("running", log, release))
    settle(dispatch, 1)
    queued = [Held(f"a{n}", log, release) for n in range(2)]
    assert all(dispatch.submit("a", task) for task in queued)
    assert not dispatch.submit("a", Held("refused", log, release))
    assert dispatch.submit("b", Held("b0", log, release))  # another key's queue is its own
    assert dispatch.take_expired() == []
    time.sleep(0.3)
    assert {task.name for task in dispatch.take_expired()} == {"a0", "a1", "b0"}  # type: ignore[attr-defined]
    assert dispatch.load() == 1
    release.set()
    dispatch.shutdown()


class Failing:
    """A task whose servicing raises, as waitress's does when the server closed under it."""

    def service(self) -> None:
        raise OSError(9, "Bad file descriptor")


def test_a_failing_task_is_logged_and_its_thread_serves_the_next(
    release: threading.Event, caplog: pytest.LogCaptureFixture
) -> None:
    dispatch = dispatcher(1)
    try:
        dispatch.submit("a", Failing())
        after = Held("after", [], release)
        dispatch.submit("a", after)
        assert after.started.wait(5), "the pool's one thread died with the failing task"
        assert "a request task failed" in caplog.text
    finally:
        release.set()
        dispatch.shutdown()
