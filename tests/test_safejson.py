"""safejson's writers: the one way qnndoctor replaces a file, and how a cache
folder is kept to its newest entries."""

from __future__ import annotations

import os
import stat
import time
from pathlib import Path

import pytest

from qnndoctor.safejson import keep_newest, replace_atomically, write_atomically


def test_a_replaced_file_is_whole_with_the_umasks_permissions(tmp_path: Path) -> None:
    target = tmp_path / "doc.json"
    target.write_text("old")
    write_atomically(target, {"a": "é"}, indent=None)
    assert target.read_bytes() == '{"a": "é"}\n'.encode()  # bytes: no newline translation
    umask = os.umask(0)
    os.umask(umask)
    assert stat.S_IMODE(target.stat().st_mode) == 0o666 & ~umask
    assert sorted(p.name for p in tmp_path.iterdir()) == ["doc.json"]


def test_a_failed_replace_keeps_the_old_file_and_leaves_no_temporary(tmp_path: Path) -> None:
    folder = tmp_path / "folder"
    folder.mkdir()
    (folder / "inside").write_text("kept")
    with pytest.raises(OSError):
        replace_atomically(folder, b"new", durable=False)  # a folder cannot be replaced by a file
    assert (folder / "inside").read_text() == "kept"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["folder"]


def test_keep_newest_removes_the_oldest_but_not_a_file_being_written(tmp_path: Path) -> None:
    for age in range(5):
        entry = tmp_path / f"e{age}.json"
        entry.write_text("{}")
        os.utime(entry, (time.time() - 1000 + age,) * 2)
    assert keep_newest(tmp_path, "e*.json", 2) == []
    assert sorted(p.name for p in tmp_path.iterdir()) == ["e3.json", "e4.json"]
    (tmp_path / ".e.tmp").write_text("{")
    assert keep_newest(tmp_path, ".*.tmp", 0, settled_s=60) == []
    assert (tmp_path / ".e.tmp").exists()  # changed a moment ago: another run may be writing it
