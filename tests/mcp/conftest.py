"""Fixtures over the `wc_` catalog (tests/writes/support.py)."""

from tests.writes.support import wc  # noqa: F401
from tests.writes.support import wc_app  # noqa: F401
from tests.writes.support import wc_catalog  # noqa: F401
from tests.writes.support import wc_pkg_runtime  # noqa: F401
from tests.writes.support import wc_runtime  # noqa: F401
