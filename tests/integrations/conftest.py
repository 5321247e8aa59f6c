"""The adapter tests run against a real service (`tests/service.py`)."""

from tests.integrations.store_support import make_store  # noqa: F401
from tests.integrations.store_support import nested  # noqa: F401
from tests.integrations.store_support import store  # noqa: F401
from tests.service import am  # noqa: F401
from tests.service import anyio_backend  # noqa: F401
from tests.service import m  # noqa: F401
from tests.service import service  # noqa: F401
