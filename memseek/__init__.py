"""Memseek: a memory service for products and AI agents.

`from memseek import Memseek, AsyncMemseek` gives the Python SDK (`memseek.client`); it is
imported on first use, so importing `memseek` stays cheap for the server and the CLI.
"""

from __future__ import annotations

from typing import TYPE_CHECKING
from typing import Any

if TYPE_CHECKING:
    from memseek.client import AsyncMemseek
    from memseek.client import Memseek

__version__ = "0.1.0"
__all__ = ["AsyncMemseek", "Memseek", "__version__"]

_SDK = frozenset({"Memseek", "AsyncMemseek"})


def __getattr__(name: str) -> Any:
    if name in _SDK:
        from memseek import client

        return getattr(client, name)
    raise AttributeError(f"module 'memseek' has no attribute {name!r}")
