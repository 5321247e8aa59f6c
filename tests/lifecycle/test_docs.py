"""The SDK example of docs/lifecycle.md runs as printed against a running service, with
`MEMSEEK_URL` and `MEMSEEK_API_KEY` set as the page says, and prints what its comments say."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from memseek.runtime import Runtime
from tests.conftest import Tenant

PAGE = Path(__file__).resolve().parents[2] / "docs" / "lifecycle.md"
BLOCK = re.compile(r"^```python\n(.*?)^```$", flags=re.DOTALL | re.MULTILINE)


def test_the_sdk_example_prints_what_it_says(
    service: str,
    tenant: Tenant,
    runtime: Runtime,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    (source,) = BLOCK.findall(PAGE.read_text(encoding="utf-8"))
    monkeypatch.setenv("MEMSEEK_URL", service)
    monkeypatch.setenv("MEMSEEK_API_KEY", tenant.key)
    exec(compile(source, PAGE.name, "exec"), {"__name__": "__example__"})
    runtime.touches.flush(timeout=30)
    said = [line.split("# ", 1)[1] for line in source.splitlines() if "print(" in line]
    assert capsys.readouterr().out.splitlines() == said
