"""The examples of docs/integrations.md run as they stand: every `python` block, against the
running service, with `MEMSEEK_URL` and `MEMSEEK_API_KEY` set as the page says."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from memseek.runtime import Runtime
from tests.conftest import Tenant

PAGE = Path(__file__).resolve().parents[2] / "docs" / "integrations.md"
BLOCK = re.compile(r"^```python\n(.*?)^```$", flags=re.DOTALL | re.MULTILINE)
EXAMPLES = BLOCK.findall(PAGE.read_text(encoding="utf-8"))


def test_the_page_has_examples() -> None:
    assert len(EXAMPLES) == 4


@pytest.mark.parametrize("source", EXAMPLES, ids=[f"example-{n}" for n in range(1, len(EXAMPLES) + 1)])
def test_an_example_runs(
    source: str,
    service: str,
    tenant: Tenant,
    runtime: Runtime,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv("MEMSEEK_URL", service)
    monkeypatch.setenv("MEMSEEK_API_KEY", tenant.key)
    exec(compile(source, f"{PAGE.name} example", "exec"), {"__name__": "__example__"})
    runtime.touches.flush(timeout=30)
    if source == EXAMPLES[0]:  # its search request's best document, printed last
        assert capsys.readouterr().out.splitlines()[-1] == "Maria confirmed the Q3 budget."
