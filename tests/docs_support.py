"""The Python examples of a docs/ page, run as a reader runs them: against the running service
(`tests/service.py`) of the reference catalog, with `MEMSEEK_URL` and `MEMSEEK_API_KEY` set as
the pages say; an address a page prints (`http://127.0.0.1:8000`) is the service's."""

from __future__ import annotations

import re
from collections.abc import Callable
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from memseek.runtime import Runtime
from tests.conftest import Tenant

DOCS = Path(__file__).resolve().parents[1] / "docs"
BLOCK = re.compile(r"^```python\n(.*?)^```$", flags=re.DOTALL | re.MULTILINE)
PRINTED_URL = "http://127.0.0.1:8000"

Run = Callable[[str, dict[str, Any]], None]
"""Runs one example's source in a namespace (shared by examples that build on each other)."""


def examples(page: str) -> list[str]:
    """The `python` blocks of docs/`page`, in page order."""
    return BLOCK.findall((DOCS / page).read_text(encoding="utf-8"))


@pytest.fixture
def run_example(
    service: str, tenant: Tenant, runtime: Runtime, monkeypatch: pytest.MonkeyPatch
) -> Iterator[Run]:
    """Runs examples as the `tenant` workspace's reader; its reads' touches are written after."""
    monkeypatch.setenv("MEMSEEK_URL", service)
    monkeypatch.setenv("MEMSEEK_API_KEY", tenant.key)

    def run(source: str, namespace: dict[str, Any]) -> None:
        exec(compile(source.replace(PRINTED_URL, service), "docs example", "exec"), namespace)

    yield run
    runtime.touches.flush(timeout=30)
