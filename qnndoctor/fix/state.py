"""The exact state before the first change, and the way back to it.

Before anything changes, every installed distribution is recorded (name,
version, metadata folder: a ``pip freeze``-equivalent) and every file of the
distributions the plan touches is hashed and hard-linked into a backup folder
inside the environment (a copy where linking fails). pip replaces files by
unlinking them first, so a link keeps the old bytes whatever pip does.
Rolling back removes what is there now of the touched (or newly appeared)
distributions with the target's pip, puts the recorded files back and moves
removed leftovers back, then verifies freeze and hashes against the record.
"""

from __future__ import annotations

import datetime as _dt
import os
import shutil
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .environment import Inspection, inspect


@dataclass
class Snapshot:
    before: Inspection
    touched: tuple[str, ...]
    backup: Path
    saved: dict[str, str] = field(default_factory=dict)  # original path -> backup path
    moved: dict[str, str] = field(default_factory=dict)  # leftover path -> backup path
    link_failures: int = 0

    def to_json(self) -> dict[str, Any]:
        return {
            "freeze": self.before.freeze(),
            "touched": list(self.touched),
            "files": len(self.before.files),
            "backup": str(self.backup),
            "copied_not_linked": self.link_failures,
        }


def _backup_root(before: Inspection) -> Path:
    """Inside the environment (same file system, so links work)."""
    stamp = _dt.datetime.now(_dt.timezone.utc).strftime("%Y%m%dT%H%M%S%fZ")
    return Path(before.environment.prefix) / ".qnndoctor-fix" / stamp


def _link_or_copy(source: str, destination: Path) -> bool:
    """True when hard-linked, False when it had to be copied."""
    destination.parent.mkdir(parents=True, exist_ok=True)
    try:
        os.link(source, destination)
        return True
    except OSError:
        shutil.copy2(source, destination)
        return False


def record(python: str, touched: tuple[str, ...]) -> Snapshot:
    """Hash and back up every file of ``touched``; record all distributions."""
    before = inspect(python, touched)
    snapshot = Snapshot(before, touched, _backup_root(before))
    snapshot.backup.mkdir(parents=True, exist_ok=False)
    try:
        for index, (path, entry) in enumerate(sorted(before.files.items())):
            if entry.get("sha256") is None:
                continue  # missing before: it must be missing after a rollback too
            kept = snapshot.backup / "files" / str(index)
            if not _link_or_copy(path, kept):
                snapshot.link_failures += 1
            snapshot.saved[path] = str(kept)
    except BaseException:
        shutil.rmtree(snapshot.backup, ignore_errors=True)
        raise
    return snapshot


def move_leftover(snapshot: Snapshot, path: str) -> None:
    """Remove a leftover by moving it into the backup (undoable)."""
    kept = snapshot.backup / "leftovers" / str(len(snapshot.moved))
    kept.parent.mkdir(parents=True, exist_ok=True)
    Path(path).replace(kept)
    snapshot.moved[path] = str(kept)


@dataclass(frozen=True)
class Verification:
    ok: bool
    freeze_differences: tuple[str, ...]
    file_differences: tuple[str, ...]
    files_checked: int

    def to_json(self) -> dict[str, Any]:
        return {
            "verified": self.ok,
            "freeze_differences": list(self.freeze_differences),
            "file_differences": list(self.file_differences[:20]),
            "files_checked": self.files_checked,
        }


def compare(before: Inspection, now: Inspection) -> Verification:
    """Same distributions (name, version, place) and the same bytes in every
    recorded file (a file missing before must be missing now)."""
    old, new = set(before.dists), set(now.dists)
    freeze = [f"removed: {c}=={v}" for c, v, _w in sorted(old - new)] + [
        f"added: {c}=={v}" for c, v, _w in sorted(new - old)
    ]
    files: list[str] = []
    for path, entry in sorted(before.files.items()):
        current = now.files.get(path)
        expected = entry.get("sha256")
        if expected is None:
            if os.path.lexists(path):
                files.append(f"{path}: present, was missing")
        elif current is None or current.get("sha256") != expected:
            files.append(f"{path}: {'missing' if current is None else 'different bytes'}")
    extra = sorted(set(now.files) - set(before.files))
    files.extend(f"{path}: not there before" for path in extra)
    return Verification(not freeze and not files, tuple(freeze), tuple(files), len(before.files))


def rollback(snapshot: Snapshot, run_pip: Callable[[tuple[str, ...]], bool]) -> Verification:
    """Back to the recorded state; the verification says whether it holds."""
    python = snapshot.before.environment.python
    now = inspect(python, ())
    before = {(c, v, w) for c, v, w in snapshot.before.dists}
    remove = sorted(
        {c for c, v, w in now.dists if c in snapshot.touched or (c, v, w) not in before}
    )
    if remove:
        run_pip(("uninstall", "-y", *remove))
    for path, kept in snapshot.moved.items():
        if not os.path.lexists(path):
            Path(kept).replace(path)
    for path, kept in snapshot.saved.items():
        if os.path.lexists(path):
            Path(path).unlink()
        _link_or_copy(kept, Path(path))
    for path, entry in snapshot.before.files.items():  # missing before: missing again
        if entry.get("sha256") is None and Path(path).is_file():
            Path(path).unlink()
    names = tuple(sorted(set(snapshot.touched) | set(remove)))
    return compare(snapshot.before, inspect(python, names))


def discard(snapshot: Snapshot) -> None:
    """The backup is no longer needed (proven fix or verified rollback)."""
    shutil.rmtree(snapshot.backup, ignore_errors=True)
    parent = snapshot.backup.parent
    try:
        parent.rmdir()  # only when empty
    except OSError:
        pass
