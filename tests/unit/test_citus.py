"""`memseek.citus.set_local_statements`: settings as `SET LOCAL` statements the workers receive."""

from __future__ import annotations

import pytest

from memseek import citus


def test_propagation_comes_first_then_each_setting_in_order() -> None:
    statements = citus.set_local_statements({"role": "memseek_scoped", "hnsw.ef_search": "40"})
    assert statements == [
        "SELECT set_config('citus.propagate_set_commands', 'local', true)",
        "SET LOCAL role = 'memseek_scoped'",
        "SET LOCAL hnsw.ef_search = '40'",
    ]


def test_a_value_is_one_string_literal() -> None:
    (_, statement) = citus.set_local_statements({"memseek.workspace_id": "x'; DROP TABLE records; --"})
    assert statement == "SET LOCAL memseek.workspace_id = 'x''; DROP TABLE records; --'"


@pytest.mark.parametrize(
    ("value", "sent"),
    [
        pytest.param("force_generic_plan", "auto", id="generic-plan-replaced"),
        pytest.param("force_custom_plan", "force_custom_plan", id="custom-plan-kept"),
        pytest.param("auto", "auto", id="auto-kept"),
    ],
)
def test_plan_pinning_citus_cannot_distribute_is_sent_as_auto(value: str, sent: str) -> None:
    (_, statement) = citus.set_local_statements({"plan_cache_mode": value})
    assert statement == f"SET LOCAL plan_cache_mode = '{sent}'"


@pytest.mark.parametrize("name", ["role; RESET ALL", "Role", "a.b.c", "", "x=1"])
def test_a_name_that_is_not_a_setting_name_is_refused(name: str) -> None:
    with pytest.raises(ValueError, match="not a setting name"):
        citus.set_local_statements({name: "1"})
