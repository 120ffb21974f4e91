"""Where tickets come from: files, folders (recursively), zip and tar
archives, JSON-lines files. The paths the user named become *units* of work
small enough to hand to a worker process: a batch of files, a batch of zip
members, a whole tar archive (read as a stream), or a byte range of a
JSON-lines file cut at line ends. Listing reads no ticket."""

from __future__ import annotations

import os
import tarfile
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

# Files per unit: enough to make a worker's round trip cheap, few enough to
# keep both processes busy to the end.
FILES_PER_UNIT = 64
# A JSON-lines file is cut into ranges of about this size.
JSONL_CHUNK_BYTES = 16 * 1024 * 1024
TAR_SUFFIXES = (".tar", ".tar.gz", ".tgz", ".tar.bz2", ".tbz2", ".tar.xz", ".txz")
JSONL_SUFFIXES = (".jsonl", ".ndjson")


@dataclass(frozen=True)
class Unit:
    """One piece of work for a worker. ``kind``: ``files`` (``members`` are
    paths), ``zip`` (``members`` of ``container``), ``tar`` (all of
    ``container``), ``jsonl`` (bytes ``start``..``end`` of ``container``,
    whose first line is line ``first_line``), ``missing`` (``container``
    could not be listed: ``members[0]`` says why)."""

    kind: str
    container: str = ""
    members: tuple[str, ...] = ()
    start: int = 0
    end: int = 0
    first_line: int = 1


def kind_of(path: str) -> str:
    """How a file is read, from its name (and a zip's magic bytes)."""
    lower = path.lower()
    if lower.endswith(JSONL_SUFFIXES):
        return "jsonl"
    if lower.endswith(TAR_SUFFIXES):
        return "tar"
    if lower.endswith(".zip"):
        return "zip"
    return "file"


def _sniffed(path: str) -> str:
    """A file the user named explicitly: its name, else its content, decides."""
    by_name = kind_of(path)
    if by_name != "file":
        return by_name
    try:
        if zipfile.is_zipfile(path):
            return "zip"
        if tarfile.is_tarfile(path):
            return "tar"
    except OSError:
        return "file"  # reading it says why, in the worker
    return "file"


def _walk(folder: str) -> Iterator[str]:
    """Files under ``folder``, in a stable order; unreadable subfolders are skipped
    (``os.walk`` reports nothing for them)."""
    for root, dirs, files in os.walk(folder):
        dirs.sort()
        for name in sorted(files):
            yield str(Path(root) / name)


def _in_folder(path: str) -> str | None:
    """How a file found in a folder is read; None: not a ticket file."""
    kind = kind_of(path)
    if kind != "file":
        return kind
    return "file" if path.lower().endswith(".json") else None


def units(paths: list[str]) -> Iterator[Unit]:
    """The units of work for the paths the user named, batched."""
    batch: list[str] = []
    for given in paths:
        where = Path(given)
        candidates: Iterator[tuple[str, str | None]]
        if where.is_dir():
            candidates = ((p, _in_folder(p)) for p in _walk(given))
        elif where.exists() or where.is_symlink():
            candidates = iter([(given, _sniffed(given))])
        else:
            yield Unit("missing", given, ("no such file or folder",))
            continue
        for path, kind in candidates:
            if kind is None:
                continue
            if kind == "file":
                batch.append(path)
                if len(batch) >= FILES_PER_UNIT:
                    yield Unit("files", members=tuple(batch))
                    batch = []
            elif kind == "zip":
                yield from _zip_units(path)
            elif kind == "jsonl":
                yield from jsonl_units(path)
            else:
                yield Unit("tar", path)
    if batch:
        yield Unit("files", members=tuple(batch))


def _zip_units(path: str) -> Iterator[Unit]:
    try:
        with zipfile.ZipFile(path) as archive:
            names = [i.filename for i in archive.infolist() if not i.is_dir()]
    except (OSError, zipfile.BadZipFile, ValueError) as exc:
        yield Unit("missing", path, (f"not a readable zip archive: {exc}",))
        return
    for start in range(0, len(names), FILES_PER_UNIT):
        yield Unit("zip", path, tuple(names[start : start + FILES_PER_UNIT]))


def jsonl_units(path: str, chunk: int = JSONL_CHUNK_BYTES) -> Iterator[Unit]:
    """Byte ranges of a JSON-lines file, each ending just after a newline
    (or at the end), with the number of the range's first line."""
    try:
        size = Path(path).stat().st_size
        handle = open(path, "rb")  # noqa: SIM115 - closed below
    except OSError as exc:
        yield Unit("missing", path, (f"cannot read: {exc.strerror or exc}",))
        return
    with handle:
        start, line = 0, 1
        while start < size:
            handle.seek(min(start + chunk, size))
            if start + chunk < size:
                handle.readline()  # to the end of the line the cut fell in
            end = handle.tell()
            handle.seek(start)
            lines = 0
            remaining = end - start
            while remaining > 0:
                block = handle.read(min(remaining, 1 << 22))
                if not block:
                    break
                lines += block.count(b"\n")
                remaining -= len(block)
            yield Unit("jsonl", path, start=start, end=end, first_line=line)
            start, line = end, line + lines
