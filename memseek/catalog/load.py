"""PLACEHOLDER until the catalog loader lands: an empty catalog so the foundation runs."""

from __future__ import annotations

from pathlib import Path

from memseek.catalog.catalog import Catalog


def load_catalog(path: Path, package: str | None = None) -> Catalog:
    return Catalog()
