"""Where the project's shipped resources live, in a checkout and in an installed wheel.

The top-level `conf/`, `alembic/` and `sql/` folders are linked into the package as
`memseek/_resources/`, so a wheel carries them and an editable install reads them in place.
"""

from pathlib import Path

RESOURCES = Path(__file__).resolve().parent / "_resources"


def resource(name: str) -> Path:
    """The shipped folder `name` (`conf`, `alembic` or `sql`)."""
    return RESOURCES / name


def reference_catalog() -> Path:
    """The reference catalog used when `MEMSEEK_CATALOG` is not set."""
    return resource("conf") / "reference"
