"""`memseek mcp` and `/mcp` from a freshly installed package, driven by the SDK's own client.

A new virtual environment gets the package as a user gets it — `pip install <source>`, not
editable, dependencies resolved from `pyproject.toml` (through pip's cache) — so the test fails
when the `mcp` range the project declares resolves to a version the code does not run on, or when
the wheel leaves out part of the reference catalog (write contracts included). Its servers run
from that environment against the test database, with the reference catalog the package ships:
an agent remembers a note and recalls it, over stdio and over streamable HTTP.

Marked `install` (about a minute, most of it pip): deselect with `-m "not install"` while iterating.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import ClientSession

from memseek.runtime import Runtime
from tests.conftest import Client as HttpClient
from tests.helpers import cli_env
from tests.helpers import ok
from tests.helpers import serve_on_free_port
from tests.helpers import view_query
from tests.mcp.support import assert_view_result
from tests.mcp.support import assert_write_result
from tests.mcp.support import http
from tests.mcp.support import over
from tests.mcp.support import stdio

pytestmark = pytest.mark.install

ROOT = Path(__file__).resolve().parents[2]
SHIPPED = ("pyproject.toml", "README.md", "memseek/", "conf/", "sql/", "alembic/")
"""What building the package reads: its configuration, the code and the resources it ships."""
INSTALL_SECONDS = 600
RECALL_SECONDS = 60.0
REFERENCE_TOOLS = {"remember", "propose_fact", "recall", "proposed_facts", "customer_context", "graph_query"}


def source_copy(target: Path) -> Path:
    """The files a build reads (tracked or new, not ignored), symlinks kept as symlinks: a build
    in the working tree would leave a `build/` folder whose stale files a later build could ship."""
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT,
        capture_output=True,
        check=True,
    ).stdout.decode()
    for name in filter(None, listed.split("\0")):
        source = ROOT / name
        if not name.startswith(SHIPPED) or not (source.is_symlink() or source.is_file()):
            continue
        (target / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(source, target / name, follow_symlinks=False)
    return target


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The `bin` folder of a new virtual environment with the package installed from source."""
    assert shutil.which("git") is not None, "the install test lists the checkout's files with git: install it"
    root = tmp_path_factory.mktemp("installed")
    source = source_copy(root / "source")
    subprocess.run([sys.executable, "-m", "venv", str(root / "venv")], check=True, timeout=120)
    pip = [str(root / "venv" / "bin" / "pip"), "install", "--quiet", "--disable-pip-version-check"]
    done = subprocess.run([*pip, str(source)], capture_output=True, text=True, timeout=INSTALL_SECONDS)
    assert done.returncode == 0, done.stderr[-4000:]
    return root / "venv" / "bin"


def server_env(runtime: Runtime, key: str) -> dict[str, str]:
    """The installed package's reference catalog, the test database, the tenant's key."""
    return cli_env(DATABASE_URL=str(runtime.settings.database_url), MEMSEEK_API_KEY=key)


def agent(entity: str) -> Any:
    """The work of one session: list the tools, remember a note, recall it once it is processed
    (the server's in-process worker embeds it)."""
    note = {"entity": entity, "text": f"{entity} prefers email to phone calls.", "importance": 8}
    recall = {"entity": entity, "query": "how to contact them"}

    async def work(session: ClientSession) -> tuple[Any, Any, Any]:
        listed = await session.list_tools()
        wrote = await session.call_tool("remember", note)
        deadline = time.monotonic() + RECALL_SECONDS
        while True:
            recalled = await session.call_tool("recall", recall)
            if recalled.is_error or recalled.structured_content["input_record_ids"]:
                return listed, wrote, recalled
            assert time.monotonic() < deadline, "the note never became readable"
            await anyio.sleep(0.2)

    return work


def check_agent(answer: tuple[Any, Any, Any], client: HttpClient, entity: str) -> None:
    listed, wrote, recalled = answer
    tools = {tool.name: tool for tool in listed.tools}
    assert set(tools) >= REFERENCE_TOOLS
    assert all(tool.description for tool in tools.values())  # every reference tool is described
    (record,) = assert_write_result(wrote, "remember", 1)["records"]
    rendered = ok(view_query(client, "recall", {"entity": entity, "query": "how to contact them"}))[
        "rendered"
    ]
    assert assert_view_result(recalled, rendered)["input_record_ids"] == [record["id"]]


def test_stdio_from_the_installed_package(installed: Path, runtime: Runtime, client: HttpClient) -> None:
    env = server_env(runtime, client.tenant.key)
    answer = over(stdio(str(installed / "memseek"), env), agent("contact.stdio"))
    check_agent(answer, client, "contact.stdio")


@pytest.fixture
def served(installed: Path, runtime: Runtime, client: HttpClient) -> Iterator[int]:
    """`memseek serve` of the installed package on a free port (with its in-process worker)."""
    env = {**server_env(runtime, client.tenant.key), "MEMSEEK_HOME": str(installed.parent / "home")}

    def start(port: int) -> subprocess.Popen[str]:
        command = [str(installed / "memseek"), "serve", "--port", str(port)]
        return subprocess.Popen(
            command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True
        )

    port, proc = serve_on_free_port(start)
    yield port
    proc.terminate()
    try:
        proc.wait(timeout=30)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def test_streamable_http_from_the_installed_package(served: int, client: HttpClient) -> None:
    answer = over(http(f"http://127.0.0.1:{served}/mcp", client.tenant.key), agent("contact.http"))
    check_agent(answer, client, "contact.http")
