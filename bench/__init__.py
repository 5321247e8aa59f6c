"""Memseek benchmarks: `python -m bench ingest|latency|quality ...` (see docs/benchmarks.md).

Every suite starts its own Memseek (`memseek serve` as a subprocess) on a fresh PostgreSQL,
loads data through the real write path, measures, prints a table and writes JSON to
`bench/results/<suite>-<timestamp>.json`. Evaluation data is read from `../shared/data`
(or `MEMSEEK_BENCH_DATA`) at run time and never copied into the project.
"""

from __future__ import annotations

import os
from pathlib import Path

BENCH_DIR = Path(__file__).resolve().parent
CATALOG_DIR = BENCH_DIR / "catalog"
RESULTS_DIR = Path(os.environ.get("MEMSEEK_BENCH_RESULTS", BENCH_DIR / "results"))
SHARED_DATA = (BENCH_DIR.parent.parent / "shared" / "data", Path("/work/shared/data"))


def data_dir() -> Path:
    """The evaluation data: `MEMSEEK_BENCH_DATA`, else the workplace's shared data folder."""
    if os.environ.get("MEMSEEK_BENCH_DATA"):
        return Path(os.environ["MEMSEEK_BENCH_DATA"])
    return next((p for p in SHARED_DATA if p.is_dir()), SHARED_DATA[0])
