"""Installer mode: one verdict line (``--quiet``) for scripts that decide on exit
codes (the ``--output`` file is written by ``safejson.write_atomically``)."""

from __future__ import annotations

from collections.abc import Mapping
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
