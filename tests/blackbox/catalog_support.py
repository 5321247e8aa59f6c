"""Helpers of the catalog and view tests: `memseek catalog check` of a folder, one-view YAML, the
`bv10_` and `av6_` test catalogs, a `GET /views` entry, an MCP tool call.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from memseek.cli import main
from tests.blackbox.support import mcp_rpc
from tests.blackbox.support import sx_catalog
from tests.conftest import Client
from tests.helpers import catalog_text
from tests.helpers import fixture_catalog
from tests.helpers import listed_views
from tests.helpers import write_files

VIEWS = catalog_text("bv10", "views/bv10.yaml")
"""The `bv10_` views (test catalog `bv10`, with its package `bv10_pkg`)."""


def bv_catalog(root: Path, views: str = VIEWS) -> Path:
    """The `sx_` collections with only `views` (and the `bv10_pkg` package)."""
    return write_files(sx_catalog(root, "bv10"), {"views/bv10.yaml": views})


def view_entry(client: Client, name: str, version: int) -> dict[str, Any]:
    """The `GET /views` entry of `name` v`version`."""
    return listed_views(client)[(name, version)]


def one_view(version: str, body: str, active: str = "    active: true\n") -> str:
    return f"views:\n  - name: bv10_case\n    version: {version}\n{active}{body}"


def av6_catalog(root: Path, collections: str, **files: str) -> Path:
    """A catalog folder holding `collections` (and `files`, relative path → text)."""
    return fixture_catalog(root, files={"collections/av6.yaml": collections, **files}, rank_default=True)


OLD = catalog_text("av6-old", "collections/av6.yaml")
"""The catalog before v2 is published (test catalog `av6-old`): `av6_ev` and `av6_slot` v1."""
NEW = catalog_text("av6-new", "collections/av6.yaml")
"""The catalog after v2 is published (test catalog `av6-new`): v1 unchanged except that it is no
longer active; v2 of `av6_ev` and `av6_slot`, and `av6_num`, `av6_enr`."""


def call_tool(client: Client, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    """`tools/call`: the JSON-RPC response (a `result` or an `error`)."""
    return mcp_rpc(client, "tools/call", {"name": name, "arguments": arguments})


def check(
    root: Path,
    capsys: pytest.CaptureFixture[str],
    package: str | None = None,
    monkeypatch: pytest.MonkeyPatch | None = None,
) -> tuple[int, str]:
    """`memseek catalog check ROOT` → (exit code, stdout + stderr)."""
    if package is not None and monkeypatch is not None:
        monkeypatch.setenv("MEMSEEK_PACKAGE", package)
    code = main(["catalog", "check", str(root)])
    captured = capsys.readouterr()
    return code, captured.out + captured.err


def collections_file(*items: str) -> dict[str, str]:
    return {"collections/c.yaml": "collections:\n" + "".join(items)}
