"""Schema migrations: alembic, driven from code so the installed package carries them."""

from __future__ import annotations

from alembic.config import Config
from alembic.util.exc import CommandError
from sqlalchemy.engine import Engine
from sqlalchemy.exc import DBAPIError

from alembic import command
from memseek import citus
from memseek.db import describe_target
from memseek.errors import ConfigError
from memseek.errors import StartupError
from memseek.paths import resource


def sql_script(name: str) -> str:
    """The text of the shipped SQL script `name` (a revision runs it)."""
    return (resource("sql") / name).read_text()


def statements(script: str) -> list[str]:
    """The statements of an SQL script, one string each (with the comments before it): those
    ending a line, not a comment's, with `;` outside a dollar-quoted body (the shipped scripts'
    form). Citus sends a DDL statement on a distributed table to its workers as the text it
    arrived in, which must then hold that one statement."""
    found, current, quoted = [], [], False
    for line in script.splitlines():
        current.append(line)
        quoted ^= line.count("$$") % 2 == 1
        if not quoted and not line.startswith("--") and line.rstrip().endswith(";"):
            found.append("\n".join(current).strip())
            current = []
    return found


def function_definition(script: str, function: str) -> str:
    """The CREATE statement of `function` exactly as the SQL script `script` has it, for a
    downgrade to restore."""
    create = f"CREATE OR REPLACE FUNCTION {function}("
    blocks = sql_script(script).split("\n\n")
    return next(block[block.index(create) :] for block in blocks if create in block)


PGVECTOR_HINT = (
    "; Memseek needs the pgvector extension (0.7 or newer) in this database:"
    " have a superuser run CREATE EXTENSION vector in it once"
)


def _run(engine: Engine, action: str, revision: str) -> None:
    """Run alembic's `action` to `revision`; a revision alembic cannot resolve is the caller's
    `ConfigError`, and a database that refuses a migration (no pgvector, too few privileges)
    a `StartupError` naming it: one line from the CLI each, not alembic's traceback."""
    try:
        with engine.begin() as conn:
            config = Config()
            config.set_main_option("script_location", str(resource("alembic")))
            config.attributes["connection"] = conn
            getattr(command, action)(config, revision)
    except CommandError as exc:
        raise ConfigError(f"cannot {action} to {revision!r}: {exc}") from None
    except DBAPIError as exc:
        target = describe_target(engine.url.render_as_string(hide_password=True))
        reason = str(exc.orig).strip().splitlines()[0] if exc.orig else str(exc)
        hint = PGVECTOR_HINT if "EXTENSION IF NOT EXISTS vector" in (exc.statement or "") else ""
        raise StartupError(f"cannot prepare the database at {target}: {reason}{hint}") from None


def upgrade(engine: Engine, revision: str = "head") -> list[str]:
    """Bring the schema up to `revision`; on a Citus cluster, then distribute what is not yet
    (`citus.distribute`, idempotent). Returns what distributing changed, one line each."""
    _run(engine, "upgrade", revision)
    with engine.begin() as conn:
        return citus.distribute(conn) if citus.present(conn) else []


def downgrade(engine: Engine, revision: str) -> None:
    """Take the schema down to `revision` (`base` removes everything)."""
    _run(engine, "downgrade", revision)
