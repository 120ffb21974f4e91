"""Reading units of tickets, in this process or in a pool of worker
processes, streaming: each ticket is read, parsed, re-diagnosed and dropped;
only its small row leaves the worker, and only a bounded number of units is
in flight, so memory does not grow with the fleet."""

from __future__ import annotations

import os
import tarfile
import zipfile
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Future, ProcessPoolExecutor
from pathlib import Path
from typing import IO

from ..target.ticket import MAX_REPORT_BYTES, open_input
from .rediagnose import Rediagnoser
from .rows import Row, Skipped, Unreadable
from .sources import TAR_SUFFIXES, Unit, kind_of

Result = Row | Unreadable | Skipped
_ARCHIVES = (".zip", *TAR_SUFFIXES)
# The one re-diagnoser of a worker process (made by _start).
_WORKER: Rediagnoser | None = None


def _start(matrix_path: str | None, since: str | None) -> None:
    global _WORKER
    from ..pipeline import load_matrix

    _WORKER = Rediagnoser(load_matrix(Path(matrix_path) if matrix_path else None), since)


def _run_in_worker(unit: Unit) -> tuple[list[Result], int]:
    assert _WORKER is not None, "the worker was started without its initializer"
    before = _WORKER.computed
    results = list(read_unit(_WORKER, unit))
    return results, _WORKER.computed - before


def _read_capped(handle: IO[bytes]) -> bytes:
    return handle.read(MAX_REPORT_BYTES + 1)


def read_unit(diagnoser: Rediagnoser, unit: Unit) -> Iterator[Result]:
    """Every ticket of one unit, as rows (or unreadable entries)."""
    if unit.kind == "missing":
        yield Unreadable(unit.container, unit.members[0])
    elif unit.kind == "files":
        for path in unit.members:
            try:
                with open_input(path) as handle:
                    raw = _read_capped(handle)
            except OSError as exc:
                yield Unreadable(path, f"cannot read: {exc.strerror or exc}")
                continue
            yield diagnoser.row(raw, path)
    elif unit.kind == "zip":
        yield from _zip(diagnoser, unit)
    elif unit.kind == "tar":
        yield from _tar(diagnoser, unit.container)
    elif unit.kind == "jsonl":
        try:
            with open(unit.container, "rb") as handle:
                handle.seek(unit.start)
                yield from _lines(diagnoser, handle, unit.container, unit.first_line, unit.end)
        except OSError as exc:
            yield Unreadable(unit.container, f"cannot read: {exc.strerror or exc}")


def _member_problem(name: str, size: int) -> str | None:
    if name.lower().endswith(_ARCHIVES):
        return "an archive inside an archive is not read: unpack it first"
    if size > MAX_REPORT_BYTES:
        return f"larger than {MAX_REPORT_BYTES} bytes; not a ticket"
    return None


def _zip(diagnoser: Rediagnoser, unit: Unit) -> Iterator[Result]:
    try:
        archive = zipfile.ZipFile(unit.container)
    except (OSError, zipfile.BadZipFile) as exc:
        yield Unreadable(unit.container, f"not a readable zip archive: {exc}")
        return
    with archive:
        for name in unit.members:
            shown = f"{unit.container}!{name}"
            kind = kind_of(name)
            if kind not in ("file", "jsonl") and not name.lower().endswith(_ARCHIVES):
                continue
            if kind == "file" and not name.lower().endswith(".json"):
                continue
            try:
                info = archive.getinfo(name)
                problem = _member_problem(name, info.file_size)
                if problem is not None:
                    yield Unreadable(shown, problem)
                    continue
                with archive.open(info) as handle:
                    if kind == "jsonl":
                        yield from _lines(diagnoser, handle, shown, 1, None)
                        continue
                    raw = _read_capped(handle)
            except (OSError, zipfile.BadZipFile, RuntimeError, EOFError) as exc:
                # RuntimeError: an encrypted member; EOFError/BadZipFile: a damaged one.
                yield Unreadable(shown, f"cannot read this archive member: {exc}")
                continue
            yield diagnoser.row(raw, shown)


def _tar(diagnoser: Rediagnoser, path: str) -> Iterator[Result]:
    try:
        archive = tarfile.open(path, mode="r|*")  # noqa: SIM115 - a stream: compressed archives too
    except (OSError, tarfile.TarError) as exc:
        yield Unreadable(path, f"not a readable tar archive: {exc}")
        return
    try:
        with archive:
            for member in archive:
                name = member.name
                lower = name.lower()
                shown = f"{path}!{name}"
                if not member.isfile() or not lower.endswith((".json", *_ARCHIVES, ".jsonl")):
                    continue
                problem = _member_problem(name, member.size)
                if problem is not None:
                    yield Unreadable(shown, problem)
                    continue
                handle = archive.extractfile(member)
                if handle is None:
                    continue
                if kind_of(name) == "jsonl":
                    yield from _lines(diagnoser, handle, shown, 1, None)
                else:
                    yield diagnoser.row(_read_capped(handle), shown)
    except (OSError, tarfile.TarError, EOFError) as exc:
        yield Unreadable(path, f"the tar archive is damaged or cut short: {exc}")


def _lines(
    diagnoser: Rediagnoser, handle: IO[bytes], shown: str, line: int, end: int | None
) -> Iterator[Result]:
    """The tickets of a JSON-lines stream, one per line, from ``line`` to byte ``end``."""
    position = handle.tell() if end is not None else 0
    while end is None or position < end:
        raw = handle.readline(MAX_REPORT_BYTES + 1)
        if not raw:
            break
        position += len(raw)
        where = f"{shown}:{line}"
        if len(raw) > MAX_REPORT_BYTES and not raw.endswith(b"\n"):
            while raw and not raw.endswith(b"\n"):  # skip the rest of the line
                raw = handle.readline(1 << 20)
                position += len(raw)
            yield Unreadable(where, f"a line larger than {MAX_REPORT_BYTES} bytes; not a ticket")
        elif raw.strip():
            yield diagnoser.row(raw, where)
        line += 1


def run_units(
    units: Iterable[Unit],
    *,
    jobs: int,
    matrix_path: str | None,
    since: str | None,
    in_process: Rediagnoser | None = None,
) -> Iterator[tuple[list[Result], int]]:
    """Each unit's results and how many verdicts were computed for it, in
    the units' order. ``jobs`` worker processes (1: in this process, with
    ``in_process``)."""
    if jobs <= 1:
        diagnoser = in_process
        if diagnoser is None:
            _start(matrix_path, since)
            diagnoser = _WORKER
        assert diagnoser is not None
        for unit in units:
            before = diagnoser.computed
            yield list(read_unit(diagnoser, unit)), diagnoser.computed - before
        return
    import multiprocessing

    # spawn everywhere: what Windows does, and no fork of a process with threads.
    context = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(
        max_workers=jobs, mp_context=context, initializer=_start, initargs=(matrix_path, since)
    ) as pool:
        yield from _bounded(pool.submit, units, window=jobs * 3)


def _bounded(
    submit: Callable[..., Future[tuple[list[Result], int]]],
    units: Iterable[Unit],
    window: int,
) -> Iterator[tuple[list[Result], int]]:
    """Results in submission order with at most ``window`` units in flight."""
    pending: deque[Future[tuple[list[Result], int]]] = deque()
    for unit in units:
        pending.append(submit(_run_in_worker, unit))
        if len(pending) >= window:
            yield pending.popleft().result()
    while pending:
        yield pending.popleft().result()


def default_jobs() -> int:
    """Worker processes by default: one per CPU the process may use."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # Windows, macOS
        return max(1, os.cpu_count() or 1)
