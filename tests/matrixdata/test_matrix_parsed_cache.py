"""The parsed-matrix cache: the same matrix and identity as reading the
files, rebuilt when a source file changes, and a damaged or unwritable cache
costs only the parse (recorded), never a wrong matrix or a traceback. Real
files throughout: the bundled matrix copied into a temporary folder."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from packaging.version import Version

from qnndoctor._layout import package_dir
from qnndoctor.matrixdata import load, parsed_cache
from qnndoctor.matrixdata.releases import (
    ReleaseMatrix,
    _file,
    compact_document,
    parse,
    read_documents,
)
from qnndoctor.report.ticket_changes import matrix_identity

_FOUND = package_dir("matrix")
assert _FOUND is not None
BUNDLED: Path = _FOUND


class Counting:
    """The real reader, counting how often the files were really read."""

    def __init__(self) -> None:
        self.reads = 0

    def __call__(self, path: Path, issues: Path | None) -> tuple[bytes, Any, Any]:
        self.reads += 1
        return read_documents(path, issues)


def _build(_data: bytes, document: Any, issues: Any) -> ReleaseMatrix:
    return parse(document, issues)


@pytest.fixture
def matrix_dir(tmp_path: Path) -> Iterator[Path]:
    folder = tmp_path / "matrix"
    folder.mkdir()
    for name in ("releases.json", "known_issues.json", "socs.json"):
        shutil.copy2(BUNDLED / name, folder / name)
    parsed_cache.events.clear()
    yield folder
    parsed_cache.events.clear()


def _load(folder: Path, reader: Counting, cache: Path) -> ReleaseMatrix:
    return parsed_cache.load(
        folder / "releases.json",
        folder / "known_issues.json",
        reader,
        _build,
        also_hash=(folder / "socs.json",),
        folder=cache,
    )


def _summary(matrix: ReleaseMatrix) -> list[Any]:
    """Everything the resolver reads, as comparable values."""
    return [(r.version, r.era, r.files) for r in matrix.releases] + [
        matrix.known_issues,
        dict(matrix.provenance),
    ]


def test_every_compact_wheel_record_makes_the_same_wheel_file() -> None:
    document = json.loads((BUNDLED / "releases.json").read_text("utf-8"))
    compact = compact_document(document)
    compared = 0
    for whole, kept in zip(document["releases"], compact["releases"], strict=True):
        version = Version(whole["version"])
        for record, small in zip(whole["files"], kept["files"], strict=True):
            assert _file(small, version) == _file(record, version), record["filename"]
            compared += 1
    assert compared == sum(len(r["files"]) for r in document["releases"]) > 100


def test_a_cached_matrix_is_the_parsed_one_and_is_read_once(
    matrix_dir: Path, tmp_path: Path
) -> None:
    cache, reader = tmp_path / "cache", Counting()
    first = _load(matrix_dir, reader, cache)
    second = _load(matrix_dir, reader, cache)
    assert reader.reads == 1  # the second came from the entry
    assert len(list(cache.iterdir())) == 1
    whole = parse(
        *read_documents(matrix_dir / "releases.json", matrix_dir / "known_issues.json")[1:]
    )
    assert _summary(second) == _summary(first) == _summary(whole)
    assert parsed_cache.events == []


def test_the_identity_from_the_cache_is_the_files_sha256(matrix_dir: Path, tmp_path: Path) -> None:
    _load(matrix_dir, Counting(), tmp_path / "cache")
    for name in ("releases.json", "socs.json"):
        path = matrix_dir / name
        stat = path.stat()
        assert parsed_cache.known_digest(path, stat.st_size, stat.st_mtime_ns) == (
            hashlib.sha256(path.read_bytes()).hexdigest()
        )


@pytest.mark.parametrize("change", ["content", "mtime only", "known issues"])
def test_a_changed_source_file_rebuilds_the_entry(
    matrix_dir: Path, tmp_path: Path, change: str
) -> None:
    cache, reader = tmp_path / "cache", Counting()
    before = _load(matrix_dir, reader, cache)
    releases = matrix_dir / "releases.json"
    if change == "content":
        document = json.loads(releases.read_text("utf-8"))
        document["releases"] = document["releases"][:3]
        releases.write_text(json.dumps(document), "utf-8")
    elif change == "mtime only":
        stat = releases.stat()
        os.utime(releases, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000_000))
    else:
        issues = matrix_dir / "known_issues.json"
        document = json.loads(issues.read_text("utf-8"))
        document["issues"] = []
        issues.write_text(json.dumps(document), "utf-8")
    after = _load(matrix_dir, reader, cache)
    assert reader.reads == 2
    if change == "content":
        assert len(after.releases) == 3 < len(before.releases)
    elif change == "known issues":
        assert after.known_issues == () != before.known_issues
    else:
        assert _summary(after) == _summary(before)
    assert _load(matrix_dir, reader, cache) is not None and reader.reads == 2  # cached again


@pytest.mark.parametrize(
    ("damage", "recorded"),
    [
        ("truncated", "checksum differs"),
        ("flipped byte", "checksum differs"),
        ("not an entry", "not a cache entry"),
        ("empty", "not a cache entry"),
    ],
)
def test_a_damaged_entry_is_recorded_ignored_and_rebuilt(
    matrix_dir: Path, tmp_path: Path, damage: str, recorded: str
) -> None:
    cache, reader = tmp_path / "cache", Counting()
    expected = _summary(_load(matrix_dir, reader, cache))
    (entry,) = cache.iterdir()
    data = entry.read_bytes()
    if damage == "truncated":
        entry.write_bytes(data[: len(data) // 2])
    elif damage == "flipped byte":
        entry.write_bytes(data[:-100] + bytes([data[-100] ^ 0xFF]) + data[-99:])
    elif damage == "not an entry":
        entry.write_bytes(b'{"releases": []}')
    else:
        entry.write_bytes(b"")
    assert _summary(_load(matrix_dir, reader, cache)) == expected
    assert reader.reads == 2
    assert len(parsed_cache.events) == 1 and recorded in parsed_cache.events[0]
    parsed_cache.events.clear()
    assert _summary(_load(matrix_dir, reader, cache)) == expected
    assert reader.reads == 2 and parsed_cache.events == []  # the rebuilt entry is good


def test_an_unwritable_cache_costs_only_the_parse(matrix_dir: Path, tmp_path: Path) -> None:
    blocked = tmp_path / "a file, not a folder"
    blocked.write_text("")
    reader = Counting()
    first = _load(matrix_dir, reader, blocked / "cache")
    second = _load(matrix_dir, reader, blocked / "cache")
    assert _summary(first) == _summary(second)
    assert reader.reads == 2
    assert parsed_cache.events and all("not cached" in e for e in parsed_cache.events)
    assert not list(tmp_path.glob("**/.*.tmp"))  # nothing half-written left behind


def test_the_installed_matrix_and_its_identity_through_the_user_cache(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``load()`` keeps the installed matrix's parse in the user cache: twice
    (a fresh start each time) the same matrix and the files' own identity."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    parsed_cache.events.clear()
    digest = hashlib.sha256()
    for name in ("releases.json", "socs.json"):
        data = (BUNDLED / name).read_bytes()
        digest.update(f"{name} {hashlib.sha256(data).hexdigest()}\n".encode())
    loaded = []
    try:
        for _ in range(2):
            load.cache_clear()
            parsed_cache._digests.clear()
            parsed_cache._texts.clear()
            parsed_cache.file_sha256.cache_clear()
            matrix = load()
            assert matrix_identity(matrix)["sha256"] == digest.hexdigest()
            loaded.append(_summary(matrix.releases))
    finally:
        load.cache_clear()
    assert loaded[0] == loaded[1]
    assert len(list((tmp_path / "xdg" / "qnndoctor" / "parsed").iterdir())) == 1
    assert parsed_cache.events == []


def test_a_matrix_folder_of_test_data_is_not_cached(
    matrix_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    try:
        assert load(matrix_dir).releases.releases
    finally:
        load.cache_clear()
    assert not (tmp_path / "xdg" / "qnndoctor" / "parsed").exists()


def test_a_fresh_start_with_a_cached_matrix_reads_no_json_and_hashes_nothing(
    tmp_path: Path,
) -> None:
    """What the cache is for, seen from a new process: the second start
    takes the matrix and its identity from the entry (no JSON of the matrix
    read, hashlib never imported) and reports the same identity."""
    script = (
        "import sys\n"
        "from qnndoctor.matrixdata import load, parsed_cache\n"
        "from qnndoctor.report.ticket_changes import matrix_identity\n"
        "identity = matrix_identity(load())['sha256']\n"
        "print(identity, 'hashlib' in sys.modules, parsed_cache.events)\n"
    )
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "xdg")}
    runs = [
        subprocess.run(
            [sys.executable, "-c", script],
            env=env,
            cwd=tmp_path,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=120,
            check=True,
        ).stdout.split(maxsplit=2)
        for _ in range(2)
    ]
    assert runs[0][0] == runs[1][0] == matrix_identity(load())["sha256"]
    assert runs[0][1:] == ["True", "[]\n"]  # built: the files were hashed
    assert runs[1][1:] == ["False", "[]\n"]  # read back: nothing to hash
