"""Fixtures over the `wc_` catalog (tests/writes/support.py), and the running service
and clients (tests/service.py) for the SDK's write-contract calls."""

from tests.service import am  # noqa: F401
from tests.service import anyio_backend  # noqa: F401
from tests.service import m  # noqa: F401
from tests.service import service  # noqa: F401
from tests.writes.support import wc  # noqa: F401
from tests.writes.support import wc_app  # noqa: F401
from tests.writes.support import wc_catalog  # noqa: F401
from tests.writes.support import wc_pkg_runtime  # noqa: F401
from tests.writes.support import wc_runtime  # noqa: F401
