"""The SDK is a layer of its own: importable without any server module, configured from its
arguments or the environment, one surface for both clients."""

from __future__ import annotations

import inspect
import subprocess
import sys
import textwrap
from typing import Any

import pytest

from memseek.client import AsyncMemseek
from memseek.client import Memseek
from memseek.client._http import Request
from memseek.client._ops import Op
from memseek.client._ops import call
from memseek.client._surface import Async
from memseek.client._surface import M
from memseek.client._surface import Surface
from memseek.client._surface import Sync
from memseek.client._surface import endpoint
from tests.conftest import Tenant

SERVER_MODULES = (
    *(
        "flask",
        "werkzeug",
        "sqlalchemy",
        "pydantic",
        "psycopg",
        "waitress",
        "alembic",
        "numpy",
        "onnxruntime",
    ),
    *("mcp", "memseek.api", "memseek.search", "memseek.catalog", "memseek.write", "memseek.app"),
    *("memseek.cli", "memseek.runtime", "memseek.db", "memseek.errors", "memseek.settings"),
)

BLOCK_IMPORTS = textwrap.dedent(
    """
    import importlib.abc, sys
    BLOCKED = {blocked!r}

    class Block(importlib.abc.MetaPathFinder):
        def find_spec(self, name, path=None, target=None):
            if any(name == b or name.startswith(b + ".") for b in BLOCKED):
                raise ImportError(f"{{name}} is a server module")

    sys.meta_path.insert(0, Block())
    """
)
"""The start of a program whose imports of the `blocked` modules (a `.format` field) fail."""

IMPORT_ALONE = textwrap.dedent(
    """
    import memseek
    assert "memseek.client" not in sys.modules, "importing memseek imported the SDK"
    from memseek import AsyncMemseek, Memseek
    from memseek.client import InvalidRequest
    from memseek.client._params import check_parameters
    from memseek.client.models import ViewInfo
    Memseek("http://127.0.0.1:9").close()
    AsyncMemseek("http://127.0.0.1:9")
    assert "jsonschema" not in sys.modules, "the SDK imported jsonschema before it was needed"
    schema = {{"type": "object", "properties": {{"k": {{"type": "integer"}}}}, "additionalProperties": False}}
    view = ViewInfo("v", 1, True, "search", "sha256-x", {{}}, schema)
    problem = check_parameters(view, {{"k": 2.5}})
    assert isinstance(problem, InvalidRequest) and problem.locs == [["parameters", "k"]]
    print("ok")
    """
)


def runs_alone(program: str, blocked: tuple[str, ...]) -> None:
    """Assert `program` (after `BLOCK_IMPORTS`) prints `ok` in a fresh interpreter where the
    `blocked` modules cannot be imported."""
    code = (BLOCK_IMPORTS + program).format(blocked=blocked)
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "ok"


def test_importable_with_no_server_module() -> None:
    runs_alone(IMPORT_ALONE, SERVER_MODULES)


def test_both_names_come_from_the_package() -> None:
    import memseek

    assert (memseek.Memseek, memseek.AsyncMemseek) == (Memseek, AsyncMemseek)
    with pytest.raises(AttributeError):
        memseek.Nothing  # noqa: B018


def test_the_environment_configures_a_client(
    service: str, tenant: Tenant, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("MEMSEEK_URL", raising=False)
    assert Memseek(api_key="k").base_url == "http://127.0.0.1:8000"
    monkeypatch.setenv("MEMSEEK_URL", service + "/")
    monkeypatch.setenv("MEMSEEK_API_KEY", tenant.key)
    with Memseek() as m:
        assert m.base_url == service and m.views.list()
    with Memseek(service, api_key="msk_wrong") as wrong:
        assert wrong._config.api_key == "msk_wrong"  # an argument wins over the environment


@pytest.mark.parametrize("options", [{"retries": -1}, {"timeout": 0}, {"backoff": -0.1}])
def test_impossible_options_are_refused(options: dict[str, Any]) -> None:
    with pytest.raises(ValueError):
        Memseek("http://127.0.0.1:9", **options)


def test_one_surface_two_modes() -> None:
    sync, concurrent = Memseek("http://127.0.0.1:9"), AsyncMemseek("http://127.0.0.1:9")
    for name in ("health", "search", "context", "request"):
        assert inspect.signature(getattr(sync, name)) == inspect.signature(getattr(concurrent, name))
        assert getattr(sync, name).__doc__ == getattr(concurrent, name).__doc__
    assert list(inspect.signature(sync.records.write).parameters) == ["records", "wait", "timeout"]
    assert "idempotency_key" in (sync.records.write.__doc__ or "")
    call = concurrent.health()
    assert inspect.iscoroutine(call)
    call.close()
    sync.close()


class RankContract(Surface[M]):
    """A namespace as a later route adds one: an operation and an `@endpoint`, no IO code."""

    @endpoint
    def schema(self) -> Op[dict[str, Any]]:
        """`GET /rank/schema`."""
        return call(Request("GET", "/rank/schema", retry=True), lambda reply: reply.expect(200).json())


def test_a_new_route_is_one_operation_on_both_clients(m: Memseek) -> None:
    rank: RankContract[Sync] = RankContract(m._drive)
    assert rank.schema()["limits"] == {"max_nodes": 16, "max_levels": 5}
    assert rank.schema.__doc__ == "`GET /rank/schema`."


@pytest.mark.anyio
async def test_a_new_route_is_one_operation_async(am: AsyncMemseek) -> None:
    rank: RankContract[Async] = RankContract(am._drive)
    assert (await rank.schema())["limits"] == {"max_nodes": 16, "max_levels": 5}
