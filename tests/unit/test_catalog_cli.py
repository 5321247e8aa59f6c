"""`memseek catalog check [DIR]`: no database; exit 0 when valid, every problem and exit 2 when not.
Without DIR it checks the catalog the service would load (`MEMSEEK_CATALOG`, else the reference one)."""

from __future__ import annotations

from pathlib import Path

import pytest

from memseek.cli import main
from memseek.paths import reference_catalog
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


def test_without_a_directory_the_catalog_of_memseek_catalog_is_checked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # issue 2: every command honours the service's environment, MEMSEEK_CATALOG included
    broken = {"collections/bad.yaml": "collections:\n  - {name: bad, version: 1, types: []}\n"}
    root = build_catalog(tmp_path, broken)
    monkeypatch.setenv("MEMSEEK_CATALOG", str(root))
    assert main(["catalog", "check"]) == 2
    assert "collections/bad.yaml: collection bad v1: collections[0].types" in capsys.readouterr().err


def test_without_a_directory_or_memseek_catalog_the_reference_catalog_is_checked(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.delenv("MEMSEEK_CATALOG", raising=False)
    assert main(["catalog", "check"]) == 0
    assert f"catalog {reference_catalog()} is valid (sha256:" in capsys.readouterr().out
