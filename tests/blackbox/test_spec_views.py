"""Spec "Discovering views with GET /views", "Parameter fields" and "The view response wrapper"."""

from __future__ import annotations

from tests.blackbox.support import at
from tests.blackbox.support import note
from tests.blackbox.support import write
from tests.conftest import Client
from tests.helpers import ok
from tests.helpers import touches_written
from tests.helpers import view_query

# --- POST /views/{name}/query ---------------------------------------------------------------------


def test_view_results_touch_last_accessed(sx: Client) -> None:
    (record,) = write(sx, note("budget", entity="m", occurred_at=at(1)))
    before = sx.get(f"/records/{record}").get_json()["last_accessed"]
    ok(view_query(sx, "sx_context", {"entity": "m", "task": "budget"}))
    touches_written(sx)
    assert sx.get(f"/records/{record}").get_json()["last_accessed"] > before
