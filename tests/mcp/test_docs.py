"""The Python example of docs/agents.md runs as printed against a running service, with
`MEMSEEK_API_KEY` set as the page says (the page's `127.0.0.1:8000` is the service's address)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from memseek.runtime import Runtime
from tests.conftest import Tenant
from tests.service import service  # noqa: F401

PAGE = Path(__file__).resolve().parents[2] / "docs" / "agents.md"
BLOCK = re.compile(r"^```python\n(.*?)^```$", flags=re.DOTALL | re.MULTILINE)


def test_the_http_client_example_runs(
    service: str,  # noqa: F811
    tenant: Tenant,
    runtime: Runtime,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    (source,) = BLOCK.findall(PAGE.read_text(encoding="utf-8"))
    monkeypatch.setenv("MEMSEEK_API_KEY", tenant.key)
    exec(
        compile(source.replace("http://127.0.0.1:8000", service), PAGE.name, "exec"),
        {"__name__": "__example__"},
    )
    runtime.touches.flush(timeout=30)
    tools, summary = capsys.readouterr().out.splitlines()
    assert "'recall'" in tools and "'remember'" in tools
    assert summary.startswith("Wrote record ") and summary.endswith(
        " through remember v1 (pending: readable once processed)."
    )
