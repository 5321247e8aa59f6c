"""README.md, as a newcomer follows it: every block of its quick start runs, in order, as printed,
against a real `memseek serve` on an embedded PostgreSQL of its own. The page is read, not
copied, so it cannot drift from what the service does.

How a fenced block of the "Quick start" section is run, as a reader with two terminals runs it:

* `sh`: by bash (`set -euo pipefail`) in a directory where `.venv/bin` holds this environment's
  `memseek` and `python` and `conf` is the repository's; variables carry from one block to the
  next, as in one terminal. A block that starts the service (`memseek serve`) runs in the
  background until its banner, after the previous service was stopped with Ctrl-C's signal; a
  block that stops the database runs once the service was stopped (step 9 says Ctrl-C first).
  No output may be an error body or an empty result.
* `python`: saved as a file and run with `.venv/bin/python`, in that terminal's environment.
* `json`: an MCP client's configuration, started as the client starts it (with the clone's
  absolute path, as the page asks); its tools are listed and one is called.
* step 5's browser: the inspector in headless Chromium (as tests/firsthour/test_inspector.py
  drives it), the key typed, the view's form filled and run, its hits shown.
* a block without a language is output shown to the reader: not run. The banner it shows must be
  the one the first start printed; any other must be what the block before it printed, line for
  line, where `…` stands for any text (an id, a score, a line of a table, more lines).

What the reader would type differently: `127.0.0.1:8000` is the test's port (`MEMSEEK_URL` for
the SDK and the CLI), `msk_…` the key the banner printed, and the data lives in a temporary
`MEMSEEK_HOME`.
"""

from __future__ import annotations

import argparse
import json
import re
import shlex
import shutil
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from dataclasses import field
from pathlib import Path
from typing import Any

import pytest
from mcp import ClientSession
from mcp import StdioServerParameters
from mcp.client.stdio import stdio_client
from playwright.sync_api import sync_playwright

from bench.__main__ import build_parser as bench_parser
from memseek.cli import build_parser
from tests.firsthour.test_inspector import CHROMIUM
from tests.firsthour.test_inspector import CHROMIUM_ARGS
from tests.firsthour.test_inspector import WAIT_MS
from tests.firsthour.test_inspector import enter_key
from tests.firsthour.test_serve_and_db import STOP_SECONDS
from tests.firsthour.test_serve_and_db import banner
from tests.helpers import cli_env
from tests.helpers import embedded_home
from tests.helpers import free_port
from tests.helpers import wait_healthy
from tests.mcp.support import over
from tests.mcp.support import texts

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
FENCE = re.compile(r"^```(\w*)\n(.*?)^```$", re.S | re.M)
KEY_PLACEHOLDER = "msk_…"
CLONE_PLACEHOLDER = "/absolute/path/to/your/clone"
SHOWN_HOME = "/home/you/.local/share/memseek"
"""The default MEMSEEK_HOME the page shows in the banner."""
FAILED = ('"error":', '"isError":true', '"hits":[]')
"""Output no quick-start command may print: the one error shape, a failed MCP tool call, a
search or view that found nothing."""
STEP_SECONDS = 300
ROWS = "rows => rows.map(r => r.textContent)"


def section(title: str) -> str:
    """The text of README's `## title` section."""
    return README.read_text(encoding="utf-8").split(f"\n## {title}\n", 1)[1].split("\n## ", 1)[0]


def blocks(title: str) -> list[tuple[str, str]]:
    """The fenced blocks of a README section, in order: (language, text)."""
    return [(m[1], m[2]) for m in FENCE.finditer(section(title))]


def steps(title: str) -> list[tuple[str, list[tuple[str, str]]]]:
    """The `### ` steps of a README section, each with its fenced blocks."""
    found = re.split(r"^### (.+)$", section(title), flags=re.M)[1:]
    return [
        (heading, [(m[1], m[2]) for m in FENCE.finditer(body)])
        for heading, body in zip(found[::2], found[1::2], strict=True)
    ]


def shown(output: str) -> re.Pattern[str]:
    """What an output block of the page matches: its text, `…` standing for any text."""
    return re.compile(".*?".join(map(re.escape, output.strip().split("…"))), re.S)


def view_in_the_browser(url: str, key: str) -> list[str]:
    """What the quick start's step 5 says the browser shows: the inspector at `/ui`, the key typed
    once, `customer_context`'s form filled and run; the rendered block, then the hits' rows."""
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        page = browser.new_page()
        page.set_default_timeout(WAIT_MS)
        page.goto(f"{url}/ui")
        enter_key(page, key)
        page.click("nav button[data-tab=views]")
        page.select_option("#view-name", "customer_context")
        page.fill("#view-fields input[name=entity]", "contact.maria")
        page.fill("#view-fields input[name=task]", "prepare the budget call")
        page.click("#run-view")
        page.wait_for_selector("#hits tbody tr")
        shown = [page.text_content("#rendered") or "", *page.eval_on_selector_all("#hits tbody tr", ROWS)]
        browser.close()
    return shown


@dataclass
class Reader:
    """The reader's two terminals: the service in the first, everything else in the second."""

    cwd: Path
    env: dict[str, str]
    port: int
    key: str = ""
    service: subprocess.Popen[str] | None = None
    banner: list[str] = field(default_factory=list)
    outputs: list[str] = field(default_factory=list)

    @property
    def pgdata(self) -> Path:
        return Path(self.env["MEMSEEK_HOME"]) / "pgdata"

    def localised(self, text: str) -> str:
        text = text.replace("127.0.0.1:8000", f"127.0.0.1:{self.port}").replace(
            CLONE_PLACEHOLDER, str(self.cwd)
        )
        return text.replace(KEY_PLACEHOLDER, self.key)

    def run(self, language: str, text: str) -> None:
        if language == "sh" and "memseek serve" in text:
            self.start(text)
        elif language == "sh":
            self.shell(text)
        elif language == "python":
            (self.cwd / "first.py").write_text(text, encoding="utf-8")
            self.shell(".venv/bin/python first.py")
        elif language == "json":
            self.agent(json.loads(self.localised(text)))
        elif text.startswith("Memseek is listening on"):  # the banner the page shows
            home = self.env["MEMSEEK_HOME"]
            # on a port other than 8000 the banner also names it for the CLI
            printed = [line.replace(f"MEMSEEK_URL={self.env['MEMSEEK_URL']} ", "") for line in self.banner]
            assert self.localised(text).replace(SHOWN_HOME, home).splitlines() == printed
        else:
            assert language == "", f"a block the reader cannot run: {language}"
            assert shown(text).fullmatch(self.outputs[-1].strip()), (text, self.outputs[-1])

    def start(self, text: str) -> None:
        """The first terminal: `[NAME=value …] .venv/bin/memseek serve`, on the test's port."""
        self.stop()
        *assignments, program, command = shlex.split(text.strip())
        assert command == "serve" and program == ".venv/bin/memseek", text
        env = {**self.env, **dict(a.split("=", 1) for a in assignments)}
        argv = [program, command, "--port", str(self.port)]  # relative, as typed (POSIX: to cwd)
        with (self.cwd / "serve.log").open("a", encoding="utf-8") as log:
            self.service = subprocess.Popen(
                argv, cwd=self.cwd, env=env, stdout=subprocess.PIPE, stderr=log, text=True
            )
        lines = banner(self.service)
        wait_healthy(self.port, self.service)
        if not self.key:  # the first start: the key, and the banner's "Try it" lines, as pasted
            self.key = next(line for line in lines if line.startswith("msk_"))
            self.banner = lines
            self.shell("\n".join(line.strip() for line in lines[lines.index("Try it:") + 1 : -2]))

    def stop(self) -> None:
        """Ctrl-C in the first terminal."""
        if self.service is not None:
            self.service.send_signal(2)
            self.service.wait(STOP_SECONDS)
            assert self.service.returncode == 0, (self.cwd / "serve.log").read_text()
            self.service = None

    def shell(self, text: str) -> None:
        """The second terminal: the block in bash, with the variables earlier blocks set."""
        if "memseek db stop" in text:
            self.stop()
        script = f"set -aeuo pipefail\n. ./.state\n{self.localised(text)}\nexport -p > .state\n"
        done = subprocess.run(
            ["bash", "-c", script],
            cwd=self.cwd,
            env=self.env,
            capture_output=True,
            text=True,
            timeout=STEP_SECONDS,
        )
        assert done.returncode == 0, (text, done.stdout, done.stderr)
        assert not any(failure in done.stdout for failure in FAILED), (text, done.stdout)
        self.outputs.append(done.stdout)

    def agent(self, config: dict[str, Any]) -> None:
        """What an MCP client does with the configuration: start the server, list, call."""
        (server,) = config["mcpServers"].values()
        assert server["command"] == str(self.cwd / ".venv" / "bin" / "memseek"), server
        assert server["env"]["MEMSEEK_API_KEY"] == self.key
        env = {**server["env"], "MEMSEEK_HOME": self.env["MEMSEEK_HOME"]}
        params = StdioServerParameters(command=server["command"], args=server["args"], env=env)

        async def work(session: ClientSession) -> list[str]:
            names = [tool.name for tool in (await session.list_tools()).tools]
            result = await session.call_tool(
                "recall", {"entity": "contact.maria", "query": "how to reach her"}
            )
            assert not result.is_error, result
            return [*names, *texts(result)]

        self.outputs.append("\n".join(over(stdio_client(params), work)))


@pytest.fixture
def reader(tmp_path: Path) -> Iterator[Reader]:
    """A clone-like directory (this environment as `.venv`, the repository's `conf`), a
    `MEMSEEK_HOME` of its own, and no service yet (stopped afterwards)."""
    if sys.prefix != sys.base_prefix:  # a virtual environment: the reader's `.venv`
        (tmp_path / ".venv").symlink_to(sys.prefix)
    else:  # the package installed into the interpreter itself
        (tmp_path / ".venv" / "bin").mkdir(parents=True)
        for name, target in (
            ("python", Path(sys.executable)),
            ("memseek", Path(sys.executable).parent / "memseek"),
        ):
            (tmp_path / ".venv" / "bin" / name).symlink_to(target)
    (tmp_path / "conf").symlink_to(ROOT / "conf")
    (tmp_path / ".state").write_text("", encoding="utf-8")
    port = free_port()
    with embedded_home() as home:
        person = Reader(
            tmp_path, cli_env(MEMSEEK_HOME=str(home), MEMSEEK_URL=f"http://127.0.0.1:{port}"), port
        )
        try:
            yield person
        finally:
            person.stop()


def test_the_quick_start_runs_as_printed(reader: Reader) -> None:
    assert shutil.which("curl"), "curl is missing: apt-get install -y --no-install-recommends curl"
    tour = steps("Quick start")
    assert [language for _, found in tour for language, _ in found].count("sh") >= 12, tour
    for heading, found in tour:
        for language, text in found:
            reader.run(language, text)
        if heading == "5. Call a view":  # and in the browser, as the step ends
            rendered, *hits = view_in_the_browser(reader.env["MEMSEEK_URL"], reader.key)
            assert "Q3 budget review" in rendered and len(hits) == 2, (rendered, hits)  # step 2's events
    output = "\n".join(reader.outputs)
    assert "['ready', 'ready']" in output  # the SDK's write waited for processing
    assert "Maria prefers email." in output  # the reader's own view, after the restart
    assert '"state":"done"' in output  # the entity was forgotten
    assert {"recall", "contact_facts", "remember"} <= set(output.splitlines())  # the agent's tools
    assert not (reader.pgdata / "postmaster.pid").exists()  # `memseek db stop` stopped it
    assert " INFO " not in (reader.cwd / "serve.log").read_text()  # the first terminal stayed quiet


def test_the_test_command_is_the_one_ci_runs() -> None:
    """CI runs the README's test command (install, then pytest), so the README cannot name
    another."""
    (_, service), (_, tests) = [b for b in blocks("Two commands") if b[0] == "sh"]
    assert service.strip().endswith(".venv/bin/memseek serve")
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    for command in tests.strip().split(" && "):
        assert command in ci, command


def test_the_documentation_map_lists_every_page() -> None:
    listed = re.findall(r"\]\(docs/([\w-]+\.md)\)", section("Documentation"))
    assert sorted(listed) == sorted(page.name for page in (ROOT / "docs").glob("*.md"))


LINK = re.compile(r"\]\(([^)#:]+)(?:#[^)]*)?\)")
"""A Markdown link to a file of the repository (not a web address), its anchor left out."""


@pytest.mark.parametrize("page", [README, *sorted((ROOT / "docs").glob("*.md"))], ids=lambda p: p.name)
def test_every_link_of_a_page_resolves(page: Path) -> None:
    missing = [
        target
        for target in LINK.findall(page.read_text(encoding="utf-8"))
        if not (page.parent / target).exists()
    ]
    assert missing == []


def commands() -> set[str]:
    """The `memseek` command's subcommands, as its parser declares them."""
    (choices,) = [a.choices for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction)]
    return set(choices)


def test_every_command_the_readme_names_exists() -> None:
    named = set(re.findall(r"memseek (\w+)", README.read_text(encoding="utf-8")))
    assert named and named <= commands(), named - commands()


def test_the_benchmarks_section_runs_every_suite() -> None:
    """Issue 7: `bench/` has "its own README section", and it names every suite `python -m bench`
    runs."""
    parser = bench_parser()
    (suites,) = [a.choices for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    assert set(re.findall(r"python -m bench ([a-z]+)", section("Benchmarks"))) == set(suites)


def test_the_operations_page_lists_every_command() -> None:
    page = (ROOT / "docs" / "operations.md").read_text(encoding="utf-8")
    table = page.split("\n## Every command\n", 1)[1].split("\n## ", 1)[0]
    assert {name for name in commands() if f"`memseek {name}" not in table} == set()
