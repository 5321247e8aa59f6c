"""The examples of docs/sdk.md run as printed: every `python` block, in page order, in one
namespace (a later block uses the client an earlier one made), against the running service with
`MEMSEEK_URL` and `MEMSEEK_API_KEY` set as the page says."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from memseek.runtime import Runtime
from tests.conftest import Tenant

PAGE = Path(__file__).resolve().parents[2] / "docs" / "sdk.md"
BLOCK = re.compile(r"^```python\n(.*?)^```$", flags=re.DOTALL | re.MULTILINE)
EXAMPLES = BLOCK.findall(PAGE.read_text(encoding="utf-8"))


def test_the_examples_run_in_page_order(
    service: str,
    tenant: Tenant,
    runtime: Runtime,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv("MEMSEEK_URL", service)
    monkeypatch.setenv("MEMSEEK_API_KEY", tenant.key)
    namespace = {"__name__": "__example__"}
    for number, source in enumerate(EXAMPLES, start=1):
        exec(compile(source, f"{PAGE.name} example {number}", "exec"), namespace)
    namespace["m"].close()
    runtime.touches.flush(timeout=30)
    printed = capsys.readouterr().out
    assert "Maria prefers email and decides budgets in July." in printed  # the quick start's hit
    assert "[('billing-api', 'auth-service')" in printed  # the graph walk
    assert "['reports']" in printed  # the orphan report
    assert "invalid_request [['k'], ['include', 0]]" in printed  # the last example's error
