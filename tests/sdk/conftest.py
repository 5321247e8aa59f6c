"""The SDK tests run against a real service (`tests/service.py`)."""

from tests.service import am  # noqa: F401
from tests.service import anyio_backend  # noqa: F401
from tests.service import m  # noqa: F401
from tests.service import service  # noqa: F401
