"""Conformance audit of the design's catalog rules: statements no earlier suite pinned.

Design, "The catalog": an invalid catalog refuses to start and every error names the file, the
definition, the YAML path and the problem. Whatever is wrong in the YAML, `memseek catalog check`
reports it that way — never as a traceback, and never by failing later against the database.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from memseek.cli import main
from memseek.paths import reference_catalog

UNQUOTED_PLACEHOLDER = """
views:
  - {name: audit_unquoted, version: 1, parameters: {entity: {type: string, required: true}},
     query: {mode: recent, scope: {collections: [memories], entities: [{{entity}}]}}}
"""


def check_with_reference(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], file: str, text: str
) -> tuple[int, str]:
    """`memseek catalog check` on the reference catalog plus `file` → (exit code, output)."""
    root = tmp_path / "catalog"
    shutil.copytree(reference_catalog(), root)
    (root / file).write_text(text)
    code = main(["catalog", "check", str(root)])
    captured = capsys.readouterr()
    return code, captured.out + captured.err


def test_an_unquoted_placeholder_is_reported_naming_the_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # In a YAML flow collection `{{entity}}` is a mapping used as a key, not a string.
    code, out = check_with_reference(tmp_path, capsys, "views/audit.yaml", UNQUOTED_PLACEHOLDER)
    assert code != 0
    assert "views/audit.yaml" in out and "Traceback" not in out
    assert '"{{name}}"' in out


HUGE_COLLECTION_VERSION = """
collections:
  - {name: audit_huge, version: 2147483648, types: [note]}
"""
HUGE_VIEW_VERSION = """
views:
  - {name: audit_huge, version: 2147483648, query: {mode: recent}}
"""


@pytest.mark.parametrize(
    ("file", "text", "loc"),
    [
        pytest.param("views/audit.yaml", HUGE_VIEW_VERSION, "views[0].version", id="view"),
        pytest.param(
            "collections/audit.yaml", HUGE_COLLECTION_VERSION, "collections[0].version", id="collection"
        ),
    ],
)
def test_a_version_beyond_what_the_database_stores_is_refused_at_load(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], file: str, text: str, loc: str
) -> None:
    code, out = check_with_reference(tmp_path, capsys, file, text)
    assert code != 0
    assert file in out and loc in out and "Traceback" not in out


LARGEST_VERSION = """
views:
  - {name: audit_largest, version: 2147483647, query: {mode: recent}}
"""


def test_the_largest_storable_version_loads(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out = check_with_reference(tmp_path, capsys, "views/audit.yaml", LARGEST_VERSION)
    assert code == 0, out
