"""Fixtures over the `wc_` catalog (tests/writes/support.py), and the SDK tests' running service
and clients (tests/sdk/conftest.py) for the SDK's write-contract calls."""

from tests.sdk.conftest import am  # noqa: F401
from tests.sdk.conftest import anyio_backend  # noqa: F401
from tests.sdk.conftest import m  # noqa: F401
from tests.sdk.conftest import service  # noqa: F401
from tests.writes.support import wc  # noqa: F401
from tests.writes.support import wc_app  # noqa: F401
from tests.writes.support import wc_catalog  # noqa: F401
from tests.writes.support import wc_pkg_runtime  # noqa: F401
from tests.writes.support import wc_runtime  # noqa: F401
