"""Schema migrations: alembic, driven from code so the installed package carries them."""

from __future__ import annotations

from alembic.config import Config
from sqlalchemy.engine import Engine

from alembic import command
from memseek.paths import resource


def _run(engine: Engine, action: str, revision: str) -> None:
    with engine.begin() as conn:
        config = Config()
        config.set_main_option("script_location", str(resource("alembic")))
        config.attributes["connection"] = conn
        getattr(command, action)(config, revision)


def upgrade(engine: Engine, revision: str = "head") -> None:
    """Bring the schema up to `revision`."""
    _run(engine, "upgrade", revision)


def downgrade(engine: Engine, revision: str) -> None:
    """Take the schema down to `revision` (`base` removes everything)."""
    _run(engine, "downgrade", revision)
