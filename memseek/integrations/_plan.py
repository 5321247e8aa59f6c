"""Adapter logic written once for both clients, the way the SDK writes its operations.

A plan is a generator that yields steps and receives their results: a `Call` is a function of a
client (`lambda m: m.search(spec)`), which returns the result on a `Memseek` and a coroutine of
it on an `AsyncMemseek` — the two clients have the same methods — and a `Gather` is several
calls whose results come back as a list. `run` drives a plan with blocking calls, one after
another; `arun` awaits them, a `Gather`'s concurrently. A call's `MemseekError` is raised inside
the plan at its `yield`, so a plan may catch the errors it expects (`except Conflict`).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from collections.abc import Generator
from dataclasses import dataclass
from typing import Any
from typing import TypeVar

from memseek.client import AsyncMemseek
from memseek.client import Memseek
from memseek.client import MemseekError

T = TypeVar("T")
Call = Callable[[Any], Any]


@dataclass(frozen=True, slots=True)
class Gather:
    """Calls that do not depend on each other: their results, in order, as one list."""

    calls: tuple[Call, ...]


Plan = Generator[Call | Gather, Any, T]


def run(plan: Plan[T], client: Memseek) -> T:
    """Drive `plan` with blocking calls on `client`."""
    step, result = _advance(plan, None, None)
    while step is not None:
        step, result = _advance(plan, *_attempt(step, client))
    return result  # type: ignore[no-any-return]


async def arun(plan: Plan[T], client: AsyncMemseek) -> T:
    """Drive `plan` on `client`, a `Gather`'s calls concurrently (the first error is raised as
    it is, not wrapped in a group, so plans and callers catch the SDK's own error classes)."""
    step, result = _advance(plan, None, None)
    while step is not None:
        step, result = _advance(plan, *(await _attempt_async(step, client)))
    return result  # type: ignore[no-any-return]


def _advance(plan: Plan[Any], outcome: Any, error: MemseekError | None) -> tuple[Call | Gather | None, Any]:
    """Hand the plan a step's outcome (or raise its error inside the plan): (its next step, None),
    or (None, its result) once it returned."""
    try:
        return (plan.send(outcome) if error is None else plan.throw(error)), None
    except StopIteration as done:
        return None, done.value


def _attempt(step: Call | Gather, client: Memseek) -> tuple[Any, MemseekError | None]:
    try:
        return ([call(client) for call in step.calls] if isinstance(step, Gather) else step(client)), None
    except MemseekError as exc:
        return None, exc


async def _attempt_async(step: Call | Gather, client: AsyncMemseek) -> tuple[Any, MemseekError | None]:
    try:
        if isinstance(step, Gather):
            return list(await asyncio.gather(*(call(client) for call in step.calls))), None
        return await step(client), None
    except MemseekError as exc:
        return None, exc
