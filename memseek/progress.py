"""Progress of `memseek import` for the person waiting on it: both passes over the file, and
(with `--wait`) the processing of what it wrote. Shown on a terminal only.

The passes read the file line by line; the bar follows the bytes read, so it needs nothing from
the import itself. The write pass reads only as fast as its streams write (their queues are
bounded), so its bar tracks what is written, a few batches ahead at most.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from collections.abc import Iterator
from typing import Any
from typing import BinaryIO

from rich.console import Console
from rich.progress import BarColumn
from rich.progress import DownloadColumn
from rich.progress import MofNCompleteColumn
from rich.progress import Progress
from rich.progress import TaskID
from rich.progress import TextColumn
from rich.progress import TimeElapsedColumn

from memseek.overview import Counts

POLL_SECONDS = 0.5


def bar(*columns: Any) -> Progress:
    """A progress display on standard error (standard output keeps the command's result lines),
    shown only where standard error is a terminal: a log or a pipe gets no bars."""
    console = Console(stderr=True)
    return Progress(*columns, TimeElapsedColumn(), console=console, disable=not console.is_terminal)


class Counted:
    """`source` read line by line, each line's bytes advancing `task` of `bar`."""

    def __init__(self, source: BinaryIO, shown: Progress, task: TaskID) -> None:
        self._source = source
        self._bar = shown
        self._task = task

    def __iter__(self) -> Iterator[bytes]:
        for line in self._source:
            self._bar.advance(self._task, len(line))
            yield line


def file_size(source: BinaryIO) -> int:
    """The bytes from the start of `source` (seekable) to its end; it is left at the start."""
    size = source.seek(0, 2)
    source.seek(0)
    return size


def read_with_progress(source: BinaryIO, description: str, run: Callable[[Any], Any]) -> Any:
    """`run(lines)` over `source`, from its start, with a bar of the bytes read."""
    size = file_size(source)
    with bar(TextColumn("{task.description}"), BarColumn(), DownloadColumn()) as shown:
        task = shown.add_task(description, total=size)
        return run(Counted(source, shown, task))


def wait_for_processing(total: int, counts: Callable[[], Counts]) -> Counts:
    """Poll `counts` until none of the `total` records is pending, showing how many are done."""
    columns = (
        TextColumn("processing"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("{task.fields[failed]} failed"),
    )
    with bar(*columns) as shown:
        task = shown.add_task("processing", total=total, failed=0)
        while True:
            seen = counts()
            shown.update(task, completed=seen.ready + seen.failed + seen.retracted, failed=seen.failed)
            if seen.pending == 0:
                return seen
            time.sleep(POLL_SECONDS)
