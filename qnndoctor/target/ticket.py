"""Loading a saved report (a ticket) for re-diagnosis, and refusing bad ones.

A ticket comes from another machine, possibly cut short by a chat window or
edited by hand. Anything that is not a complete qnndoctor report with facts
is a ``SavedReportError`` with a message that says what is wrong: never a
traceback, and never a re-diagnosis of nothing that comes out "healthy".
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import IO, Any

from .. import REPORT_SCHEMA_VERSION, safejson
from ..facts.probed import Facts, ProbeFacts
from .interpreter import Target

MAX_REPORT_BYTES = 64 * 1024 * 1024


class SavedReportError(ValueError):
    """The saved report cannot be re-diagnosed (exit code 2: bad input)."""


def _type(value: Any) -> str:
    names: dict[type, str] = {
        dict: "an object",
        list: "an array",
        str: "a string",
        type(None): "null",
        bool: "a boolean",
        int: "a number",
        float: "a number",
    }
    return names.get(type(value), type(value).__name__)


def _smoke_problems(smoke: Mapping[str, Any]) -> list[str]:
    # Imported here: `check` imports this module on every run, the smoke
    # package only matters for a saved report.
    from ..smoke import result_shape
    from ..smoke.outcome import STATUSES

    found = []
    if smoke.get("status") not in STATUSES:
        found.append(f"status {smoke.get('status')!r}")
    child = smoke.get("child")
    if child is not None:
        if not isinstance(child, dict):
            found.append(f"child is {_type(child)}")
        elif "unexpected_result" not in child:
            found += [f"child: {p}" for p in result_shape.problems(child) if p != "no status"]
    lines = smoke.get("log_lines")
    if lines is not None and not (
        isinstance(lines, list) and all(isinstance(x, str) for x in lines)
    ):
        found.append("log_lines is not a list of strings")
    for key in ("reason", "stderr_tail", "signal"):
        if smoke.get(key) is not None and not isinstance(smoke.get(key), str):
            found.append(f"{key} is {_type(smoke.get(key))}")
    code = smoke.get("exit_code")
    if code is not None and (not isinstance(code, int) or isinstance(code, bool)):
        found.append(f"exit_code is {_type(code)}")
    return found


def open_input(path: str) -> IO[bytes]:
    """Open a file the user named for reading, without blocking on a FIFO
    that has no writer: the open is non-blocking, then reads block again, so
    ``<(cat ticket.json)`` works and a FIFO nobody writes to reads as empty."""
    flags = os.O_RDONLY | getattr(os, "O_BINARY", 0) | getattr(os, "O_NONBLOCK", 0)
    fd = os.open(path, flags)
    try:
        if hasattr(os, "O_NONBLOCK"):
            os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def load_report(path: str) -> tuple[Target, Facts]:
    """The target and facts of a saved JSON report."""
    return from_document(read_document(path), path)


def read_document(path: str) -> Any:
    """A saved report's parsed JSON (not yet checked to be a report)."""
    try:
        with open_input(path) as handle:
            raw = handle.read(MAX_REPORT_BYTES + 1)
    except OSError as exc:
        raise SavedReportError(f"cannot read {path}: {exc.strerror or exc}") from exc
    if len(raw) > MAX_REPORT_BYTES:
        raise SavedReportError(
            f"{path}: larger than {MAX_REPORT_BYTES} bytes; not a qnndoctor report"
        )
    if not raw.strip():
        raise SavedReportError(f"{path} is empty: {_EXPECTED}")
    try:
        data = safejson.loads(raw, path)
    except safejson.BadJSON as exc:
        raise SavedReportError(str(exc)) from exc
    return data


_EXPECTED = "a ticket is the JSON of `qnndoctor check --json` or `qnndoctor report -o FILE`"


def from_document(data: Any, path: str) -> tuple[Target, Facts]:
    """The target and facts of a report's parsed JSON form (``path`` names it in errors)."""
    if not isinstance(data, dict) or data.get("schema_version") != REPORT_SCHEMA_VERSION:
        what = (
            f"{_type(data)}, not an object"
            if not isinstance(data, dict)
            else "an empty JSON object"
            if not data
            else f"no schema_version {REPORT_SCHEMA_VERSION}"
        )
        raise SavedReportError(f"{path}: not a qnndoctor report ({what}); {_EXPECTED}")
    facts_json = data.get("facts")
    if not isinstance(facts_json, dict):
        what = (
            "missing"
            if "facts" not in data
            else "null"
            if facts_json is None
            else f"{_type(facts_json)}, not an object of probe results"
        )
        raise SavedReportError(f"{path}: 'facts' is {what}: nothing to re-diagnose; {_EXPECTED}")
    if not facts_json:
        error = data.get("error")
        why = (
            f"it is the error document of a run that could not check ({error.get('message')})"
            if isinstance(error, dict)
            else "nothing to re-diagnose"
        )
        raise SavedReportError(f"{path}: the report has no facts: {why}")
    facts = Facts.from_json(facts_json)
    smoke = data.get("smoke")
    if smoke is not None:
        if not isinstance(smoke, dict):
            raise SavedReportError(f"{path}: 'smoke' is {_type(smoke)}, not an object")
        wrong = _smoke_problems(smoke)
        if wrong:
            raise SavedReportError(
                f"{path}: 'smoke' has an unexpected shape: {'; '.join(wrong[:5])}"
            )
        facts = facts.with_probe(ProbeFacts("smoke", "ok", values=smoke))
    target = data.get("target")
    target = target if isinstance(target, dict) else {}
    return (
        Target(str(target.get("python")), f"saved report {path} ({target.get('how_chosen')})"),
        facts,
    )
