"""The examples of docs/sdk.md run as printed: every `python` block, in page order, in one
namespace (a later block uses the client an earlier one made)."""

from __future__ import annotations

import pytest

from tests.docs_support import Run
from tests.docs_support import examples
from tests.docs_support import run_example  # noqa: F401


def test_the_examples_run_in_page_order(
    run_example: Run,  # noqa: F811
    capsys: pytest.CaptureFixture[str],
) -> None:
    namespace = {"__name__": "__example__"}
    for source in examples("sdk.md"):
        run_example(source, namespace)
    namespace["m"].close()
    printed = capsys.readouterr().out
    assert "Maria prefers email and decides budgets in July." in printed  # the quick start's hit
    assert "[('billing-api', 'auth-service')" in printed  # the graph walk
    assert "['reports']" in printed  # the orphan report
    assert "invalid_request [['k'], ['include', 0]]" in printed  # the last example's error
