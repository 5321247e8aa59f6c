"""Issue 42, item 5: `memseek search`, `memseek views`, `memseek view` and `memseek import` for people.

The first three are clients of a running service (`MEMSEEK_URL`, `MEMSEEK_API_KEY`): tables,
the rendered block, `--json` for scripts, and a refusal printed as the service's own message and
locations with exit status 2. `memseek import` shows its passes and, with `--wait`, processing.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from memseek.cli import EXIT_READER_GONE
from tests.conftest import make_database
from tests.firsthour.test_serve_and_db import serve
from tests.firsthour.test_serve_and_db import stopped
from tests.helpers import cli_env
from tests.helpers import http_call
from tests.helpers import memseek

Server = tuple[dict[str, str], int]


@pytest.fixture(scope="module")
def running(pg_server_url: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """A `memseek serve` (with its worker) and the environment the client commands need."""
    url = make_database(pg_server_url, "memseek_firsthour_cli")
    env = cli_env(DATABASE_URL=url, MEMSEEK_HOME=str(tmp_path_factory.mktemp("home")))
    port, proc, lines = serve(env)
    key = next(line for line in lines if line.startswith("msk_"))
    records = [
        {"collection": "memories", "entity": "contact.maria", "type": "note", "text": "Maria prefers email."},
        {
            "collection": "customer_events",
            "entity": "contact.maria",
            "type": "event",
            "text": "Maria asked about the Q3 budget on a call.",
            "content": {"channel": "call"},
        },
    ]
    status, body = http_call(port, "POST", "/records?wait=true&timeout=60", key, {"records": records})
    assert status == 201 and {r["processing"] for r in body["records"]} == {"ready"}, body
    yield {**env, "MEMSEEK_URL": f"http://127.0.0.1:{port}", "MEMSEEK_API_KEY": key}, port
    stopped(proc)


def run(env: dict[str, str], *args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return memseek(env, *args, stdin=stdin)


def test_search_prints_a_table(running: Server) -> None:
    env, _ = running
    result = run(env, "search", "how do I reach maria", "--entity", "contact.maria")
    assert result.returncode == 0, result.stderr
    header, first, second, *note = result.stdout.splitlines()
    assert header.split() == ["rank", "score", "collection/type", "entity", "occurred_at", "text"]
    assert first.split()[:4] == ["1", "1.000", "memories/note", "contact.maria"]
    assert first.rstrip().endswith("Maria prefers email.")
    assert second.split()[:3] == ["2", "0.000", "customer_events/event"]
    assert "score: 1 = best of this result" in " ".join(note)


def test_search_options_and_json(running: Server) -> None:
    env, _ = running
    args = ("search", "--mode", "structured", "--collection", "customer_events", "--order-by", "channel:desc")
    result = run(env, *args, "--k", "5", "--json")
    assert result.returncode == 0, result.stderr
    body = json.loads(result.stdout)
    assert body["ranking"] == {"kind": "structured", "scored": False}
    assert [hit["text"] for hit in body["hits"]] == ["Maria asked about the Q3 budget on a call."]


def test_an_unscored_search_prints_no_score_column(running: Server) -> None:
    env, _ = running
    args = ("--mode", "structured", "--collection", "customer_events", "--order-by", "channel")
    result = run(env, "search", *args)
    assert result.returncode == 0, result.stderr
    header, first, *rest = result.stdout.splitlines()
    assert header.split() == ["rank", "collection/type", "entity", "occurred_at", "text"]
    assert first.split()[:3] == ["1", "customer_events/event", "contact.maria"]
    assert rest == [] and "score" not in result.stdout  # structured hits are not scored


def test_a_field_asked_for_is_a_column(running: Server) -> None:
    env, _ = running
    args = ("--mode", "structured", "--collection", "customer_events", "--order-by", "channel:desc")
    result = run(env, "search", *args, "--field", "channel")
    assert result.returncode == 0, result.stderr
    header, first = result.stdout.splitlines()
    assert header.split() == ["rank", "collection/type", "entity", "occurred_at", "channel", "text"]
    assert first.split()[:2] == ["1", "customer_events/event"] and first.split()[4] == "call"


def test_views_lists_names_parameters_and_descriptions(running: Server) -> None:
    env, _ = running
    result = run(env, "views")
    assert result.returncode == 0, result.stderr
    rows = {line.split()[0]: line for line in result.stdout.splitlines()[1:] if line.strip()}
    assert "entity:string*, task:string*" in rows["customer_context"]
    assert "Walk the dependency graph from a node" in rows["graph_query"]
    listed = json.loads(run(env, "views", "--json").stdout)
    assert {v["name"] for v in listed["views"]} >= {"customer_context", "recent_activity"}


@pytest.mark.parametrize("args", [("views",), ("db", "url")], ids=["table", "lines"])
def test_a_reader_that_quits_early_cuts_the_output_short_quietly(
    running: Server, args: tuple[str, ...]
) -> None:
    """`memseek views | head -1`: the reader closes the pipe before the command writes."""
    env, _ = running
    command = [sys.executable, "-m", "memseek", *args]
    proc = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    proc.stdout.close()  # long before the command has anything to write
    _, err = proc.communicate(timeout=120)
    assert (proc.returncode, err) == (EXIT_READER_GONE, "")


def test_view_prints_the_rendered_block(running: Server) -> None:
    env, _ = running
    result = run(env, "view", "customer_context", "entity=contact.maria", "task=Q3 budget")
    assert result.returncode == 0, result.stderr
    assert "customer_events/event | Maria asked about the Q3 budget on a call." in result.stdout


def test_view_reads_values_by_the_parameters_types(running: Server) -> None:
    env, _ = running
    args = ("view", "recent_activity", "entity=contact.maria", "channels=call,email", "k=1", "--json")
    result = run(env, *args)
    assert result.returncode == 0, result.stderr
    body = json.loads(result.stdout)
    assert body["parameters"] == {"entity": "contact.maria", "channels": ["call", "email"], "k": 1}
    assert len(body["hits"]) == 1


@pytest.mark.parametrize(
    ("args", "stderr"),
    [
        pytest.param(
            ("view", "customer_contxt"),
            "memseek: error: no active view named 'customer_contxt'; did you mean 'customer_context'?",
            id="unknown-view",
        ),
        pytest.param(
            ("view", "customer_context", "entity=contact.maria"),
            "memseek: error: the parameters of view 'customer_context' are invalid (422 invalid_request)\n"
            "  parameters.task: ",
            id="missing-parameter",
        ),
        pytest.param(
            ("search", "x", "--mode", "sideways"),
            "memseek: error: the search request is invalid (422 invalid_request)\n"
            "  mode: Input should be 'vector', 'text', 'hybrid', 'recent' or 'structured'",
            id="bad-mode",
        ),
        pytest.param(
            ("view", "recent_activity", "entity=contact.maria", "k=many"),
            "memseek: error: k must be an integer, got 'many'",
            id="not-an-integer",
        ),
    ],
)
def test_a_refusal_is_the_services_message_and_status_2(
    running: Server, args: tuple[str, ...], stderr: str
) -> None:
    env, _ = running
    result = run(env, *args)
    assert result.returncode == 2
    assert result.stderr.startswith(stderr), result.stderr
    assert "Traceback" not in result.stderr and result.stdout == ""


def test_without_a_key_or_a_service_the_command_says_what_to_do(running: Server) -> None:
    env, _ = running
    no_key = run({k: v for k, v in env.items() if k != "MEMSEEK_API_KEY"}, "views")
    assert no_key.returncode == 2 and "set MEMSEEK_API_KEY" in no_key.stderr
    nowhere = run({**env, "MEMSEEK_URL": "http://127.0.0.1:9"}, "views")
    assert nowhere.returncode == 2
    assert nowhere.stderr.startswith("memseek: error: cannot reach Memseek at http://127.0.0.1:9")
    assert "memseek serve" in nowhere.stderr and "Traceback" not in nowhere.stderr


# --- memseek import -------------------------------------------------------------------------------


def lines(count: int, entity: str) -> str:
    return "".join(
        json.dumps({"collection": "memories", "entity": entity, "type": "note", "text": f"imported {n}"})
        + "\n"
        for n in range(count)
    )


def test_import_shows_both_passes_and_waits_for_processing(running: Server, tmp_path: Path) -> None:
    env, port = running
    source = tmp_path / "notes.jsonl"
    source.write_text(lines(12, "imported.one"))
    # rich's own switches: standard error counts as a terminal, drawn once at the end, no colours
    terminal = {**env, "TTY_COMPATIBLE": "1", "TTY_INTERACTIVE": "0", "NO_COLOR": "1"}
    result = run(terminal, "import", str(source), "--batch", "5", "--wait")
    assert result.returncode == 0, result.stderr
    out = result.stdout.splitlines()
    assert out[0].startswith("12 records checked in ")
    assert out[1].startswith("imported 12 records in ") and out[1].endswith("; 12 pending processing")
    assert out[2] == "processed: 12 ready, 0 failed (GET /records/{id} shows a failure's error)"
    drawn = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", result.stderr)  # the terminal's cursor codes
    bars = {line.split()[0]: line for line in drawn.splitlines() if line.strip()}
    for label in ("checking", "writing"):  # each pass read the whole file: done/total bytes, equal
        done, total = re.search(r"([0-9.]+)/([0-9.]+) kB", bars[label]).groups()  # type: ignore[union-attr]
        assert done == total == f"{source.stat().st_size / 1000:.1f}", bars
    assert "12/12 0 failed" in bars["processing"], bars
    status, found = http_call(
        port,
        "POST",
        "/search",
        env["MEMSEEK_API_KEY"],
        {
            "mode": "recent",
            "scope": {"entities": ["imported.one"]},
            "k": 100,
        },
    )
    assert status == 200 and len(found["hits"]) == 12  # every one searchable once --wait returned


def test_import_draws_no_bars_where_standard_error_is_no_terminal(running: Server) -> None:
    env, _ = running
    result = run(env, "import", "-", "--wait", stdin=lines(3, "imported.three"))
    assert result.returncode == 0 and result.stderr == ""
    assert (
        result.stdout.splitlines()[2]
        == "processed: 3 ready, 0 failed (GET /records/{id} shows a failure's error)"
    )


def test_import_still_refuses_a_file_with_bad_lines(running: Server) -> None:
    env, _ = running
    text = (
        lines(2, "imported.two") + '{"collection": "memories"\n' + json.dumps({"collection": "nope"}) + "\n"
    )
    result = run(env, "import", "-", "--wait", stdin=text)
    assert result.returncode == 2
    located = [
        line.split(":")[0].strip() for line in result.stderr.splitlines() if line.startswith("  line.")
    ]
    assert located[0] == "line.3" and all(loc.startswith("line.4") for loc in located[1:])
    assert "nothing was written" in result.stderr and "Traceback" not in result.stderr
