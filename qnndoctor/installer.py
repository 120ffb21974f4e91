"""Installer mode: one verdict line (``--quiet``) and the JSON report written
atomically to a file (``--output``), for scripts that decide on exit codes."""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any


def verdict(document: Mapping[str, Any], exit_code: int) -> str:
    """One line: ``ok``, or the top finding and the command that fixes it."""
    error = document.get("error")
    if isinstance(error, Mapping):
        kind = "bad input" if error.get("kind") == "bad-input" else "could not check"
        return _one_line(f"{kind}: {error.get('message')}")
    findings = [f for f in document.get("findings") or () if isinstance(f, Mapping)]
    if exit_code == 0:
        counted = {s: sum(f.get("severity") == s for f in findings) for s in ("warning", "info")}
        extra = ", ".join(f"{n} {s}" for s, n in counted.items() if n)
        return "ok" + (f" ({extra})" if extra else "")
    top = findings[0]
    fix = top.get("fix") or {}
    commands = [str(c) for c in fix.get("commands") or ()]
    # All of them, in order: the first alone may be `pushd "folder"` or the
    # `-m ensurepip` a venv without pip needs before the install.
    how = "; then ".join(commands) if commands else fix.get("text") or ""
    line = f"{top.get('severity')}: {top.get('title')} [{top.get('id')}]"
    return _one_line(line + (f"; fix: {how}" if how else ""))


def _one_line(text: str) -> str:
    return " ".join(str(text).split())


def write_atomically(path: str | os.PathLike[str], document: Mapping[str, Any]) -> None:
    """Write the JSON document so that a reader sees the old file or the whole
    new one, never half of it (a temporary file beside it, then a rename)."""
    target = Path(path)
    fd, name = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    temporary = Path(name)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            json.dump(document, handle, indent=2, ensure_ascii=False)
            handle.write("\n")
            handle.flush()
            os.fsync(handle.fileno())
        temporary.replace(target)
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise
