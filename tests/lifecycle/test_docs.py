"""The SDK example of docs/lifecycle.md runs as printed and prints what its comments say."""

from __future__ import annotations

import pytest

from tests.docs_support import Run
from tests.docs_support import examples
from tests.docs_support import run_example  # noqa: F401


def test_the_sdk_example_prints_what_it_says(
    run_example: Run,  # noqa: F811
    capsys: pytest.CaptureFixture[str],
) -> None:
    (source,) = examples("lifecycle.md")
    run_example(source, {"__name__": "__example__"})
    said = [line.split("# ", 1)[1] for line in source.splitlines() if "print(" in line]
    assert capsys.readouterr().out.splitlines() == said
