"""`memseek catalog check DIR`: no database; exit 0 when valid, every problem and exit 2 when not."""

from __future__ import annotations

from pathlib import Path

import pytest

from memseek.cli import main
from tests.helpers import MINIMAL_CATALOG
from tests.helpers import build_catalog


def test_valid_catalog_exits_zero(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["catalog", "check", str(MINIMAL_CATALOG)]) == 0
    assert "is valid (sha256:" in capsys.readouterr().out


def test_broken_catalog_prints_every_problem(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = build_catalog(
        tmp_path,
        {
            "collections/bad.yaml": "collections:\n"
            "  - {name: bad, version: 1, types: [x], embedding: nope}\n",
            "views/bad.yaml": "views:\n"
            "  - {name: bad, version: 1, query: {mode: recent, scope: {collections: [z]}}}\n",
        },
    )
    assert main(["catalog", "check", str(root)]) == 2
    err = capsys.readouterr().err
    assert "(2 problems)" in err
    assert (
        "collections/bad.yaml: collection bad v1: collections[0].embedding: unknown model alias 'nope'" in err
    )
    assert "views/bad.yaml: view bad v1: views[0].query.scope.collections[0]: unknown collection 'z'" in err


def test_unknown_package_exits_non_zero(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("MEMSEEK_PACKAGE", "nope")
    assert main(["catalog", "check", str(MINIMAL_CATALOG)]) == 2
    assert "MEMSEEK_PACKAGE: no package named 'nope'" in capsys.readouterr().err
