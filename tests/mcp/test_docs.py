"""The Python example of docs/agents.md runs as printed: its MCP client lists the tools and calls
`remember`."""

from __future__ import annotations

import pytest

from tests.docs_support import Run
from tests.docs_support import examples
from tests.docs_support import run_example  # noqa: F401
from tests.service import service  # noqa: F401


def test_the_http_client_example_runs(
    run_example: Run,  # noqa: F811
    capsys: pytest.CaptureFixture[str],
) -> None:
    (source,) = examples("agents.md")
    run_example(source, {"__name__": "__example__"})
    tools, summary = capsys.readouterr().out.splitlines()
    assert "'recall'" in tools and "'remember'" in tools
    assert summary.startswith("Wrote record ") and summary.endswith(
        " through remember v1 (pending: readable once processed)."
    )
