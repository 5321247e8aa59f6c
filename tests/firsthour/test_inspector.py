"""Issue 42, item 8: the inspector at /ui, in a real headless browser.

Debian's Chromium (`/usr/bin/chromium`; .ci/run installs it) driven by Playwright: load the
page, type the key once, see the workspace, run a view from the form its `input_schema` built,
see the hits, the rendered block and the SQL the call runs, and an entity's records.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser
from playwright.sync_api import Page
from playwright.sync_api import sync_playwright

from tests.conftest import make_database
from tests.firsthour.test_serve_and_db import serve
from tests.firsthour.test_serve_and_db import stopped
from tests.helpers import cli_env
from tests.helpers import http_call

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
WAIT_MS = 30_000


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    # Not a skip: the suite's browser test must run wherever the suite runs (.ci/run installs it).
    assert CHROMIUM.is_file() or shutil.which("chromium"), (
        "Chromium is missing: apt-get install -y --no-install-recommends chromium"
    )
    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        yield launched
        launched.close()


@pytest.fixture(scope="module")
def site(pg_server_url: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, str]]:
    """A `memseek serve` with a few processed records: its URL and key."""
    url = make_database(pg_server_url, "memseek_firsthour_ui")
    env = cli_env(DATABASE_URL=url, MEMSEEK_HOME=str(tmp_path_factory.mktemp("home")))
    port, proc, lines = serve(env)
    key = next(line for line in lines if line.startswith("msk_"))
    records = [
        {
            "collection": "customer_events",
            "entity": "contact.maria",
            "type": "event",
            "text": "Maria asked about the <b>Q3</b> budget.",
            "content": {"channel": "call"},
        },
        {
            "collection": "customer_events",
            "entity": "contact.maria",
            "type": "note",
            "key": "preferred_channel",
            "text": "Prefers phone.",
        },
        {
            "collection": "customer_events",
            "entity": "contact.maria",
            "type": "note",
            "key": "preferred_channel",
            "text": "Prefers email now.",
        },
    ]
    status, body = http_call(port, "POST", "/records?wait=true&timeout=60", key, {"records": records})
    assert status == 201 and {r["processing"] for r in body["records"]} == {"ready"}, body
    yield f"http://127.0.0.1:{port}", key
    stopped(proc)


@pytest.fixture
def page(browser: Browser, site: tuple[str, str]) -> Iterator[Page]:
    context = browser.new_context()
    opened = context.new_page()
    opened.set_default_timeout(WAIT_MS)
    opened.goto(site[0] + "/ui")
    yield opened
    context.close()


def enter_key(page: Page, key: str) -> None:
    page.fill("#key", key)
    page.click("#key-form button")
    page.wait_for_selector("#collections tbody tr")


def test_a_wrong_key_is_refused_on_the_page(page: Page) -> None:
    page.fill("#key", "msk_wrong")
    page.click("#key-form button")
    page.wait_for_selector("#login-error:not([hidden])")
    assert page.text_content("#login-error") == "This key is not valid here."
    assert page.is_hidden("#tabs")


def test_the_workspace_at_a_glance(page: Page, site: tuple[str, str]) -> None:
    enter_key(page, site[1])
    rows = {
        cells[0]: cells
        for cells in page.eval_on_selector_all(
            "#collections tbody tr", "rows => rows.map(r => [...r.cells].map(c => c.textContent))"
        )
    }
    events = rows["customer_events v1"]
    assert events[5:] == ["0", "3", "0", "0"]  # pending, ready, failed, retracted
    assert "channel:string (sortable)" in events[4]
    assert page.text_content("#queue") == "Processing queue: 0 waiting, 0 being retried"


def test_run_a_view_from_its_form_and_see_hits_and_sql(page: Page, site: tuple[str, str]) -> None:
    enter_key(page, site[1])
    page.click("nav button[data-tab=views]")
    page.select_option("#view-name", "customer_context")
    assert page.eval_on_selector_all("#view-fields input", "fields => fields.map(f => f.name)") == [
        "entity",
        "task",
    ]
    page.fill("#view-fields input[name=entity]", "contact.maria")
    page.fill("#view-fields input[name=task]", "budget")
    page.click("#run-view")
    page.wait_for_selector("#hits tbody tr")
    first = page.eval_on_selector("#hits tbody tr", "r => [...r.cells].map(c => c.textContent)")
    assert first[0] == "1" and first[1] == "1.000" and first[2] != ""  # rank, score, rank_score
    rendered = page.text_content("#rendered") or ""
    # the block exactly as the service rendered it (markup in record text escaped by the renderer)
    assert (
        "customer_events/event | Maria asked about the \\u003cb\\u003eQ3\\u003c/b\\u003e budget." in rendered
    )
    assert page.query_selector("#rendered b") is None  # and never parsed as HTML by the page
    page.click("#explain-view")
    page.wait_for_function("document.getElementById('sql').textContent.includes('view customer_context v1')")


def test_a_views_errors_show_the_services_message(page: Page, site: tuple[str, str]) -> None:
    enter_key(page, site[1])
    page.click("nav button[data-tab=views]")
    page.select_option("#view-name", "recent_activity")
    page.fill("#view-fields input[name=entity]", "ab")  # min_length 3
    page.click("#run-view")
    page.wait_for_selector("#view-error:not([hidden])")
    assert "parameters.entity" in (page.text_content("#view-error") or "")


def test_an_entitys_records_and_history(page: Page, site: tuple[str, str]) -> None:
    enter_key(page, site[1])
    page.click("nav button[data-tab=entity]")
    page.fill("#entity-name", "contact.maria")
    page.click("#entity-form button")
    page.wait_for_selector("#entity-records tbody tr")
    rows = page.eval_on_selector_all(
        "#entity-records tbody tr", "rows => rows.map(r => [...r.cells].map(c => c.textContent))"
    )
    facts = {row[5]: row[4] for row in rows if row[2] == "preferred_channel"}
    assert facts == {"Prefers email now.": "current", "Prefers phone.": "superseded"}
    page.click("#entity-records tbody tr td:last-child")
    page.wait_for_function("document.getElementById('record').textContent.includes('\"processing\"')")
    assert '"entity": "contact.maria"' in (page.text_content("#record") or "")


def test_the_key_is_kept_for_the_tab_only(page: Page, site: tuple[str, str]) -> None:
    enter_key(page, site[1])
    page.reload()
    page.wait_for_selector("#collections tbody tr")  # no second prompt in the same tab
    assert page.evaluate("sessionStorage.getItem('memseek.key')") == site[1]
    assert page.evaluate("localStorage.length") == 0
