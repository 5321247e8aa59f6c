"""PLACEHOLDER until processing lands."""

from __future__ import annotations

from memseek.runtime import Runtime


def start_background_worker(runtime: Runtime) -> None:
    return None
