"""The `citus` tier: a coordinator and two workers on localhost (tests/citus_cluster.py), started
once for the session; every test here is marked `citus` (deselect with `-m "not citus"`) and
grouped for pytest-xdist (`--dist loadgroup`: one process runs them all, on one cluster)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests import citus_cluster

HERE = Path(__file__).parent


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if HERE in Path(item.path).parents:
            item.add_marker(pytest.mark.citus)
            item.add_marker(pytest.mark.xdist_group("citus"))


@pytest.fixture(scope="session")
def cluster() -> Iterator[citus_cluster.Cluster]:
    with citus_cluster.running() as cluster:
        yield cluster
