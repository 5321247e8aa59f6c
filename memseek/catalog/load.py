"""PLACEHOLDER until the catalog lands: an empty catalog so the foundation runs."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Catalog:
    hash: str = "sha256:empty"


def load_catalog(path: Path, package: str | None = None) -> Catalog:
    return Catalog()
