"""The examples of docs/integrations.md run as they stand: every `python` block, against the
running service, with `MEMSEEK_URL` and `MEMSEEK_API_KEY` set as the page says."""

from __future__ import annotations

import pytest

from tests.docs_support import Run
from tests.docs_support import examples
from tests.docs_support import run_example  # noqa: F401

EXAMPLES = examples("integrations.md")


def test_the_page_has_examples() -> None:
    assert len(EXAMPLES) == 4


@pytest.mark.parametrize("source", EXAMPLES, ids=[f"example-{n}" for n in range(1, len(EXAMPLES) + 1)])
def test_an_example_runs(
    source: str,
    run_example: Run,  # noqa: F811
    capsys: pytest.CaptureFixture[str],
) -> None:
    run_example(source, {"__name__": "__example__"})
    if source == EXAMPLES[0]:  # its search request's best document, printed last
        assert capsys.readouterr().out.splitlines()[-1] == "Maria confirmed the Q3 budget."
