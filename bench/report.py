"""Results: the machine they were measured on, a printed table, and a JSON file per run."""

from __future__ import annotations

import json
import math
import os
import platform
import subprocess
from collections.abc import Sequence
from datetime import UTC
from datetime import datetime
from pathlib import Path
from typing import Any

from bench import RESULTS_DIR


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def _ram_bytes() -> int | None:
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                return int(line.split()[1]) * 1024
    except OSError:
        pass
    return None


def _git_commit() -> str | None:
    try:
        out = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"],
            capture_output=True,
            text=True,
            check=True,
            cwd=Path(__file__).parent,
        )
        return out.stdout.strip() or None
    except (OSError, subprocess.CalledProcessError):
        return None


def machine() -> dict[str, Any]:
    """nproc, RAM, CPU model, Python, the project commit, and the load average when called
    (the machine may be shared: a load above nproc means the figures are contended)."""
    return {
        "loadavg_1_5_15": os.getloadavg(),
        "nproc": os.cpu_count(),
        "ram_bytes": _ram_bytes(),
        "cpu_model": _cpu_model(),
        "python": platform.python_version(),
        "platform": platform.platform(),
        "commit": _git_commit(),
    }


def summary(doc: str | None) -> str:
    """A module docstring's first paragraph, for a command's `--help`: its first line alone can
    stop mid-sentence."""
    return (doc or "").split("\n\n")[0].strip()


def options_dict(options: Any) -> dict[str, Any]:
    """A suite's frozen, slotted options dataclass as a JSON-able dict."""
    return {name: getattr(options, name) for name in options.__slots__}


def fmt(value: Any, digits: int = 1) -> str:
    """A table cell: numbers rounded, missing values as an em dash."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "—"
    if isinstance(value, float):
        return f"{value:,.{digits}f}"
    if isinstance(value, int):
        return f"{value:,}"
    return str(value)


def table(headers: Sequence[str], rows: Sequence[Sequence[Any]], digits: int = 1) -> str:
    """A Markdown table (pastes into docs/benchmarks.md as it is)."""
    cells = [[fmt(v, digits) for v in row] for row in rows]
    lines = ["| " + " | ".join(headers) + " |", "|" + "|".join("---" for _ in headers) + "|"]
    lines += ["| " + " | ".join(row) + " |" for row in cells]
    return "\n".join(lines)


def save(suite: str, result: dict[str, Any], directory: Path | None = None) -> Path:
    """Write `result` (plus the machine and a timestamp) to `<suite>-<timestamp>.json`."""
    folder = directory or RESULTS_DIR
    folder.mkdir(parents=True, exist_ok=True)
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    path = folder / f"{suite}-{stamp}.json"
    body = {"suite": suite, "measured_at": stamp, "machine": machine(), **result}
    path.write_text(json.dumps(body, indent=2, default=str) + "\n")
    return path


def database_versions(conn: Any) -> dict[str, str]:
    """PostgreSQL and pgvector versions of the measured server."""
    server = conn.execute("SHOW server_version").fetchone()[0]
    row = conn.execute("SELECT extversion FROM pg_extension WHERE extname = 'vector'").fetchone()
    return {"postgresql": str(server), "pgvector": str(row[0]) if row else "absent"}
