"""`memseek import`: records from a JSON Lines file, written through `POST /records`' own path on
parallel connections (the bulk path), or an export (`memseek export`) restored as it was
(`memseek.write.restore`: a file whose first line is an export's header).

Each non-blank line is one record as `POST /records` takes it (`RecordIn`, with `embedding` and
`embedding_model` when the writer embedded the text with the collection's model). Two passes:

1. check: every line is parsed and checked without the database (`check_all`, the rules a
   request's 422 lists); any problem stops the import before anything is written, and every
   problem is listed by line number;
2. write: the lines are dealt to `jobs` streams by their entity (`Dealer`), so each entity's
   records, and so every lane, are written in file order. Each stream writes batches of up to
   `batch` records, each batch one transaction of `write_records` (every check, lane locks,
   supersession, the COPY stage). Streams share no lane, so their batches never wait on each
   other's locks, and two cores stay busy: one batch's Python work runs while another's index
   insertion does.

A batch the database refuses (a `derived_from` parent not in the workspace, an idempotency key
reused with another payload) stops every stream after its batch in flight and is reported by
line; the batches already committed stay. With an `idempotency_key` on each line, importing the
file again writes only what is missing.
"""

from __future__ import annotations

import itertools
import queue
import threading
import time
from collections.abc import Callable
from collections.abc import Iterable
from collections.abc import Iterator
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from dataclasses import field
from typing import Any
from typing import BinaryIO
from uuid import UUID

from sqlalchemy.engine import Connection

from memseek.db import workspace_transaction
from memseek.errors import Detail
from memseek.errors import MemseekError
from memseek.errors import RequestInvalid
from memseek.jsontext import parse_json
from memseek.runtime import Runtime
from memseek.write.ingest import check_all
from memseek.write.ingest import write_records
from memseek.write.limits import DEFAULT_JOBS
from memseek.write.limits import MAX_RECORDS
from memseek.write.restore import LaneOrder
from memseek.write.restore import header_problems
from memseek.write.restore import is_header
from memseek.write.restore import parse_restored
from memseek.write.restore import restore_batch

QUEUED_BATCHES = 4
"""Batches dealt to a stream ahead of its writer: enough that a stream rarely waits for the
reader, few enough to bound memory (a 1,000-record batch with vectors is ~10 MB parsed)."""
POLL = 0.1
"""Seconds a stream or the reader waits on a queue before looking whether the import stopped."""


@dataclass(frozen=True, slots=True)
class Line:
    """One record of the file: its 1-based line number and its parsed JSON."""

    number: int
    item: Any


@dataclass(frozen=True, slots=True)
class Imported:
    """What an import wrote."""

    records: int
    pending: int
    """Records written `pending`: the worker embeds or enriches them (`memseek serve`'s own or
    `memseek worker`)."""
    seconds: float

    @property
    def per_second(self) -> float:
        return self.records / self.seconds if self.seconds > 0 else 0.0


Batches = queue.Queue[list[Line] | None]
"""A stream's queue: its batches in file order, then None."""


def read_lines(source: BinaryIO) -> Iterator[Line | Detail]:
    """Each non-blank line parsed, or a problem naming the line when it is not JSON."""
    for number, raw in enumerate(source, start=1):
        if not raw.strip():
            continue
        try:
            yield Line(number, parse_json(raw))
        except (ValueError, UnicodeDecodeError) as exc:
            yield Detail(("line", number), f"not valid JSON: {exc}")
        except RecursionError:
            yield Detail(("line", number), "not valid JSON: nested too deeply")


def _by_line(details: Iterable[Detail], lines: Sequence[Line]) -> list[Detail]:
    """A batch's problems located by line number (`line.<n>.…`) instead of by index in the batch
    (`records.<index>.…`)."""
    return [
        Detail(("line", lines[d.loc[1]].number, *d.loc[2:]), d.msg)
        if d.loc[:1] == ("records",) and len(d.loc) > 1 and isinstance(d.loc[1], int)
        else d
        for d in details
    ]


def _batches(lines: Iterable[Line | Detail], size: int) -> Iterator[tuple[list[Line], list[Detail]]]:
    """Runs of up to `size` parsed lines, each with the parse problems met since the last run."""
    run: list[Line] = []
    unparsed: list[Detail] = []
    for line in lines:
        if isinstance(line, Detail):
            unparsed.append(line)
            continue
        run.append(line)
        if len(run) == size:
            yield run, unparsed
            run, unparsed = [], []
    if run or unparsed:
        yield run, unparsed


@dataclass(frozen=True, slots=True)
class FileCheck:
    """What pass 1 found: how many records, and for an export (`memseek.write.restore`) the lane
    order its records keep."""

    records: int
    lanes: LaneOrder | None = None


def _opening(lines: Iterator[Line | Detail]) -> tuple[Line | Detail | None, bool]:
    """The first line, and whether it is an export's header (then it is no record)."""
    first = next(lines, None)
    return first, isinstance(first, Line) and is_header(first.item)


def check_file(runtime: Runtime, source: BinaryIO, batch: int = MAX_RECORDS) -> FileCheck:
    """Pass 1: every line checked without the database; the records found, or `RequestInvalid`
    listing every problem by line. A file whose first line is an export's header is checked as
    an export (`restore.parse_restored`), any other as records `POST /records` takes."""
    lines = read_lines(source)
    first, export = _opening(lines)
    problems = header_problems(first.item) if isinstance(first, Line) and export else []
    if first is not None and not export:
        lines = itertools.chain([first], lines)
    records, lane_values = 0, []
    for run, unparsed in _batches(lines, batch):
        problems += unparsed
        items = [line.item for line in run]
        if export and items:
            parsed, found = parse_restored(runtime, items)
            lane_values += [record.lane_seq for record, _ in parsed]
        elif items:
            found = check_all(runtime, items)[1]
        problems += _by_line(found, run) if items else []
        records += len(run)
    if problems:
        problems.sort(key=lambda detail: detail.loc[1])
        raise RequestInvalid(f"{len(problems)} problem(s) in the file; nothing was written", problems)
    if not records and not export:  # an export of an empty workspace restores as nothing
        raise RequestInvalid("the file holds no records", [Detail(("line",), "no record found")])
    return FileCheck(records, LaneOrder(lane_values) if export else None)


@dataclass
class Dealer:
    """Which stream writes each record: an entity goes, when it first appears, to the stream with
    the fewest records dealt so far, and stays there, so an entity's records (and each of its
    lanes) are written by one stream in file order while the streams' loads stay even (entities'
    sizes are skewed: a hash split 10,000 benchmark records 65/35 between two streams)."""

    dealt: list[int]
    of_entity: dict[str, int] = field(default_factory=dict)

    def stream(self, item: Any) -> int:
        entity = str(item["entity"])
        stream = self.of_entity.get(entity)
        if stream is None:
            stream = self.of_entity[entity] = min(range(len(self.dealt)), key=self.dealt.__getitem__)
        self.dealt[stream] += 1
        return stream


@dataclass
class _Run:
    """The write pass's shared state: totals, and the first failure, which stops every stream."""

    stop: threading.Event = field(default_factory=threading.Event)
    lock: threading.Lock = field(default_factory=threading.Lock)
    records: int = 0
    pending: int = 0
    failure: MemseekError | None = None

    def wrote(self, records: int, pending: int) -> None:
        with self.lock:
            self.records += records
            self.pending += pending

    def failed(self, error: MemseekError) -> None:
        with self.lock:
            self.failure = self.failure or error
        self.stop.set()

    @contextmanager
    def halting(self) -> Iterator[None]:
        """Any other error, in the reader or a stream, stops the others too (so none waits on a
        queue forever) and is raised where it happened."""
        try:
            yield
        except BaseException:
            self.stop.set()
            raise

    def put(self, stream: Batches, item: list[Line] | None) -> bool:
        """Queue `item` for a stream, waiting while its queue is full; False once stopped."""
        while not self.stop.is_set():
            try:
                stream.put(item, timeout=POLL)
                return True
            except queue.Full:
                continue
        return False

    def take(self, stream: Batches) -> list[Line] | None:
        """A stream's next batch; None at the end of the file or once stopped."""
        while not self.stop.is_set():
            try:
                return stream.get(timeout=POLL)
            except queue.Empty:
                continue
        return None


def _refused(error: MemseekError, lines: Sequence[Line]) -> MemseekError:
    """A batch's error, saying which lines were not written and locating its problems by line."""
    where = f"lines {lines[0].number}–{lines[-1].number} were not written: {error.message}"
    return type(error)(where, _by_line(error.details, lines))


Write = Callable[[Connection, list[Any]], tuple[int, int]]
"""Writes one batch's items in the caller's transaction: (records written, of them pending)."""


def _writer(runtime: Runtime, workspace_id: UUID, lanes: LaneOrder | None) -> Write:
    """New writes (`POST /records`' path), or the restore of an export."""
    if lanes is not None:
        return lambda conn, items: restore_batch(conn, runtime, workspace_id, items, lanes)

    def write(conn: Connection, items: list[Any]) -> tuple[int, int]:
        written = write_records(conn, runtime, workspace_id, items)
        return len(written), sum(w.processing == "pending" for w in written)

    return write


def _write_stream(runtime: Runtime, workspace_id: UUID, stream: Batches, run: _Run, write: Write) -> None:
    """One stream's writer: its batches in order, each one transaction, until the reader is done
    or some stream failed."""
    with run.halting():
        while (lines := run.take(stream)) is not None:
            try:
                with workspace_transaction(runtime.engine, workspace_id) as conn:
                    written, pending = write(conn, [line.item for line in lines])
            except MemseekError as error:
                run.failed(_refused(error, lines))
                return
            run.wrote(written, pending)


def _deal(lines: Iterable[Line | Detail], streams: Sequence[Batches], batch: int, run: _Run) -> None:
    """The reader: each line to its stream's next batch, full batches queued, then each stream's
    rest and its end; stops early when a stream failed."""
    dealt: list[list[Line]] = [[] for _ in streams]
    dealer = Dealer([0] * len(streams))
    for line in lines:
        if isinstance(line, Detail):  # the check pass found none: the file changed since
            run.failed(RequestInvalid("the file changed after it was checked", [line]))
            return
        stream = dealer.stream(line.item)
        dealt[stream].append(line)
        if len(dealt[stream]) == batch:
            if not run.put(streams[stream], dealt[stream]):
                return
            dealt[stream] = []
    for dealt_to, rest in zip(streams, dealt, strict=True):
        if (rest and not run.put(dealt_to, rest)) or not run.put(dealt_to, None):
            return


def write_file(
    runtime: Runtime,
    workspace_id: UUID,
    source: BinaryIO,
    *,
    jobs: int = DEFAULT_JOBS,
    batch: int = MAX_RECORDS,
    lanes: LaneOrder | None = None,
) -> Imported:
    """Pass 2: the file's records written by `jobs` streams (module docstring); an export (pass 1
    gave its `lanes`) is restored instead."""
    run = _Run()
    streams: list[Batches] = [queue.Queue(QUEUED_BATCHES) for _ in range(jobs)]
    started = time.perf_counter()
    lines = read_lines(source)
    if lanes is not None:
        next(lines)  # the header
        with runtime.engine.begin() as conn:
            lanes.reserve(conn)
    write = _writer(runtime, workspace_id, lanes)
    with ThreadPoolExecutor(jobs, thread_name_prefix="memseek-import") as pool:
        writers = [pool.submit(_write_stream, runtime, workspace_id, s, run, write) for s in streams]
        with run.halting():
            _deal(lines, streams, batch, run)
        for writer in writers:
            writer.result()
    if run.failure is not None:
        raise run.failure
    return Imported(run.records, run.pending, time.perf_counter() - started)
