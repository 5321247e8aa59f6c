"""The tripwire under `db.run_statement`: what `memseek.driver` relies on of SQLAlchemy beyond its
public API (see its docstring). A SQLAlchemy release that changes any of it fails here, loudly,
before a search sends a wrong statement; tests/integration/test_driver.py checks the same against
`Connection.execute` on a real database."""

from __future__ import annotations

from typing import Any

import pytest
import sqlalchemy as sa
from sqlalchemy.dialects.postgresql import psycopg as psycopg_dialect
from sqlalchemy.sql.compiler import SQLCompiler

from memseek.driver import native_form
from memseek.driver import native_placeholders
from memseek.driver import pyformat_form

DIALECT = psycopg_dialect.dialect()
PINNED_MINOR = "2.1."
"""The SQLAlchemy minor version pyproject.toml pins and memseek/driver.py was checked against."""


class Doubled(sa.types.TypeDecorator[int]):
    """A type whose values are converted on their way to the driver (as the query vector's are)."""

    impl = sa.Integer
    cache_ok = True

    def process_bind_param(self, value: int | None, dialect: Any) -> int | None:
        return None if value is None else value * 2


def test_sqlalchemy_is_the_minor_version_the_driver_was_checked_against() -> None:
    assert sa.__version__.startswith(PINNED_MINOR), (
        f"SQLAlchemy {sa.__version__}: re-check memseek/driver.py against it, then move the pin in "
        "pyproject.toml and PINNED_MINOR together"
    )


def test_the_private_compiler_api_exists() -> None:
    compiled = sa.select(sa.literal_column("1")).compile(dialect=DIALECT)
    assert isinstance(compiled, SQLCompiler)
    assert callable(compiled.construct_expanded_state)
    assert isinstance(compiled._bind_processors, dict)


def test_the_psycopg_dialect_compiles_named_pyformat_placeholders() -> None:
    assert (DIALECT.paramstyle, DIALECT.positional) == ("pyformat", False)
    statement = sa.text("SELECT :a WHERE 7 % 2 = 1")
    assert statement.compile(dialect=DIALECT).string == "SELECT %(a)s WHERE 7 %% 2 = 1"


def test_a_statement_becomes_native_placeholders_and_converted_values_in_their_order() -> None:
    """A name used twice keeps its number, a typed value is converted, an IN list is expanded
    (each value converted), and a literal `%` is sent as one."""
    statement = sa.text("SELECT :a AS a, :b AS b, :a AS again WHERE 7 % 2 = 1 AND 3 IN :ids").bindparams(
        sa.bindparam("b", type_=Doubled()), sa.bindparam("ids", expanding=True, type_=Doubled())
    )
    sql, args = native_form(statement, {"a": "x", "b": 4, "ids": [1, 2]}, DIALECT)
    assert (
        sql
        == "SELECT $1 AS a, $2::INTEGER AS b, $1 AS again WHERE 7 % 2 = 1 AND 3 IN ($3::INTEGER, $4::INTEGER)"
    )
    assert args == ["x", 8, 2, 4]


def test_a_core_statement_carries_its_own_values_and_converts_the_requests() -> None:
    own = sa.select(sa.literal_column("1")).where(
        sa.column("x") == sa.bindparam("x", type_=Doubled()), sa.column("y") == 5
    )
    assert pyformat_form(own, {"x": 5}, DIALECT) == (
        "SELECT 1 \nWHERE x = %(x)s::INTEGER AND y = %(y_1)s::INTEGER",
        {"x": 10, "y_1": 5},
    )


@pytest.mark.parametrize(
    ("pyformat", "native", "names"),
    [
        ("SELECT 1", "SELECT 1", ()),
        ("a = %(a)s AND b = %(b)s", "a = $1 AND b = $2", ("a", "b")),
        ("a = %(a)s OR a < %(b)s OR a > %(a)s", "a = $1 OR a < $2 OR a > $1", ("a", "b")),
        ("x %% 2 = %(n)s AND t LIKE 'a%%'", "x % 2 = $1 AND t LIKE 'a%'", ("n",)),
        ("IN (%(ids_1_1)s, %(ids_1_2)s)", "IN ($1, $2)", ("ids_1_1", "ids_1_2")),
    ],
    ids=["no-parameters", "in-order", "a-name-twice-keeps-its-number", "escaped-percent", "expanded-in"],
)
def test_native_placeholders(pyformat: str, native: str, names: tuple[str, ...]) -> None:
    assert native_placeholders(pyformat) == (native, names)
