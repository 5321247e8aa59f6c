"""docs/quickstart.md, as a reader follows it: every request it shows succeeds, in order, and the
view it defines is a valid catalog addition. The page is read, not copied, so it cannot drift."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import Any

import yaml

from memseek.catalog.load import load_catalog
from memseek.paths import reference_catalog
from memseek.runtime import Runtime
from memseek.search.view_checks import VIEW_CHECKS
from memseek.write.worker import run_worker
from tests.conftest import Client

PAGE = Path(__file__).resolve().parents[2] / "docs" / "quickstart.md"
REQUEST = re.compile(
    r"curl (?:-s )?-X POST \"?http://127\.0\.0\.1:8000(?P<path>/[^\s\"]+)\"?.*?-d '(?P<body>.*?)'", re.S
)


def shell_blocks() -> str:
    return "\n".join(re.findall(r"```sh\n(.*?)```", PAGE.read_text(encoding="utf-8"), re.S))


def requests() -> list[tuple[str, Any]]:
    """Each `curl -X POST … -d '…'` of the page: its path and JSON body, in page order."""
    found = [(m["path"], json.loads(m["body"])) for m in REQUEST.finditer(shell_blocks())]
    assert len(found) >= 8, found
    return found


def test_every_request_of_the_quickstart_succeeds(client: Client, runtime: Runtime) -> None:
    written: list[str] = []
    for path, body in requests():
        path = path.replace("RECORD_ID", written[0] if written else "RECORD_ID")
        response = client.post(path.replace("?wait=true", ""), json=body)
        assert response.status_code in (200, 201), (path, response.get_data(as_text=True))
        if path.startswith("/records?"):
            written += [r["id"] for r in response.get_json()["records"]]
            run_worker(runtime, once=True)  # what ?wait=true waits for
        elif "hits" in response.get_json():
            assert response.get_json()["hits"], (path, body)  # each search finds what was written
    assert client.get(f"/records/{written[0]}").get_json()["retracted_at"] is not None


def test_the_view_it_defines_is_a_valid_catalog_addition(tmp_path: Path) -> None:
    (view,) = re.findall(r"cat > mycatalog/views/mine\.yaml <<'EOF'\n(.*?)\nEOF", shell_blocks(), re.S)
    catalog = tmp_path / "mycatalog"
    shutil.copytree(reference_catalog(), catalog)
    (catalog / "views" / "mine.yaml").write_text(view, encoding="utf-8")
    loaded = load_catalog(catalog, view_checks=VIEW_CHECKS)
    assert loaded.view("contact_facts").description == yaml.safe_load(view)["views"][0]["description"]
