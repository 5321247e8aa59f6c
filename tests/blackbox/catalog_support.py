"""Helpers of the catalog and view tests: `memseek catalog check` of a folder, one-view YAML, the
`bv10_` and `av6_` test catalogs, a `GET /views` entry, an MCP tool call.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.blackbox.support import mcp_rpc
from tests.blackbox.support import sx_catalog
from tests.conftest import Client
from tests.helpers import catalog_text
from tests.helpers import write_files

# --- used by several test modules -----------------------------------------------------------------


VIEWS = catalog_text("bv10", "views/bv10.yaml")
"""The `bv10_` views (test catalog `bv10`, with its package `bv10_pkg`)."""


def bv_catalog(root: Path, views: str = VIEWS) -> Path:
    """The `sx_` collections with only `views` (and the `bv10_pkg` package)."""
    return write_files(sx_catalog(root, "bv10"), {"views/bv10.yaml": views})


def call_tool(client: Client, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    """`tools/call`: the JSON-RPC response (a `result` or an `error`)."""
    return mcp_rpc(client, "tools/call", {"name": name, "arguments": arguments})
