"""Adapter logic written once for both clients, the way the SDK writes its operations.

A plan is a generator that yields steps and receives their results: a `Call` is a function of a
client (`lambda m: m.search(spec)`), which returns the result on a `Memseek` and a coroutine of
it on an `AsyncMemseek` — the two clients have the same methods — and a `Gather` is several
calls whose results come back as a list. `run` drives a plan with blocking calls, one after
another; `arun` awaits them, a `Gather`'s concurrently.
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

T = TypeVar("T")
Call = Callable[[Any], Any]


@dataclass(frozen=True, slots=True)
class Gather:
    """Calls that do not depend on each other: their results, in order, as one list."""

    calls: tuple[Call, ...]


Plan = Generator[Call | Gather, Any, T]


def run(plan: Plan[T], client: Memseek) -> T:
    """Drive `plan` with blocking calls on `client`."""
    try:
        step = next(plan)
        while True:
            outcome = [call(client) for call in step.calls] if isinstance(step, Gather) else step(client)
            step = plan.send(outcome)
    except StopIteration as done:
        return done.value  # type: ignore[no-any-return]


async def arun(plan: Plan[T], client: AsyncMemseek) -> T:
    """Drive `plan` on `client`, a `Gather`'s calls concurrently (the first error is raised as
    it is, not wrapped in a group, so callers catch the SDK's own error classes)."""
    try:
        step = next(plan)
        while True:
            if isinstance(step, Gather):
                outcome: Any = list(await asyncio.gather(*(call(client) for call in step.calls)))
            else:
                outcome = await step(client)
            step = plan.send(outcome)
    except StopIteration as done:
        return done.value  # type: ignore[no-any-return]
