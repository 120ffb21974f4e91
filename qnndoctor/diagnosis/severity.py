"""The log level a line was printed at, so a verbose session's chatter does not
pass for an error.

With logging at verbose, onnxruntime and QNN narrate every decision of a
healthy session: the QNN EP logs ``Validation FAILED for 1 nodes in
OrtNodeUnit (QuantizeLinear)`` for each node it leaves to the CPU EP, at
``[V:onnxruntime:...]``. Those lines describe why a node runs where it runs;
beside a real error they corroborate it, alone they are not one. A line's
level is QNN's own tag when onnxruntime relays a QNN message (``[V:...
QnnLogging] <E> Failed to load skel`` is an error), else onnxruntime's.
A line without a tag (a traceback, a message retyped in an issue) is loud.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator

# onnxruntime's own prefix: "[V:onnxruntime:, file.cc:12 Func]"; Android's logcat
# relays it as "V onnxruntime:" (the tag letter before the tag name).
_ORT_LEVEL = re.compile(r"\[([VIWEF]):onnxruntime:|(?:^|\s)([VIWEF]) onnxruntime:")
# QNN's own level: "<E>" relayed by onnxruntime's QnnLogging, "[ ERROR ]" or
# "[ VERBOSE ]" in QNN's tools and AI Hub logs, ":ERROR:" after a file:line.
_QNN_LEVEL = re.compile(
    r"<([VIWEFD])>|\[\s*(VERBOSE|DEBUG|INFO|WARN(?:ING)?|ERROR|FATAL)\s*\]"
    r"|\.(?:cc|cpp|c|h):\d+:(VERBOSE|DEBUG|INFO|WARNING|ERROR|FATAL):",
)
QUIET = frozenset("VID")  # verbose, info, debug
_ANY_QUIET = re.compile(
    r"\[[VID]:onnxruntime:|\s[VID] onnxruntime:|<[VID]>|\[\s*(?:VERBOSE|DEBUG|INFO)\s*\]"
    r"|\.(?:cc|cpp|c|h):\d+:(?:VERBOSE|DEBUG|INFO):"
)
_MAX_TRIES = 100_000  # later matches looked at for one on a loud line (a bound, not a budget)


def level(line: str) -> str | None:
    """The line's log level as one letter (V I D W E F), or None when untagged."""
    qnn = _QNN_LEVEL.search(line)
    if qnn is not None:
        return next(group for group in qnn.groups() if group)[0].upper()
    ort = _ORT_LEVEL.search(line)
    if ort is not None:
        return (ort[1] or ort[2]).upper()
    return None


_MAX_RECORD_LINES = 64  # continuation lines looked back over for a record's first line


def level_at(text: str, at: int) -> str | None:
    """The log level of the line holding position ``at``. An indented untagged
    line continues the record above it (QNN EP's "Validation FAILED for 1 nodes
    in OrtNodeUnit (Hardmax) :" is followed by a tab-indented "REASON : ..."):
    it has that record's level. A traceback's indented lines continue its
    untagged "Traceback" line, so they stay loud."""
    start = text.rfind("\n", 0, at) + 1
    for _ in range(_MAX_RECORD_LINES):
        end = text.find("\n", start)
        line = text[start : end if end >= 0 else len(text)]
        found = level(line)
        if found is not None or not line[:1].isspace() or start == 0:
            return found
        start = text.rfind("\n", 0, start - 1) + 1
    return None


def quiet_at(text: str, at: int) -> bool:
    """Whether the line holding position ``at`` was logged at verbose, info or debug."""
    return level_at(text, at) in QUIET


def loud_match(regex: re.Pattern[str], text: str, first: re.Match[str]) -> re.Match[str] | None:
    """``first`` if its line is not quiet, else the next match of ``regex`` on a
    line that is not (one pass over the rest of the text at most)."""
    found: re.Match[str] | None = first
    for _ in range(_MAX_TRIES):
        if found is None or not quiet_at(text, found.start()):
            return found
        next_line = text.find("\n", found.start())
        if next_line < 0:
            return None
        found = regex.search(text, next_line + 1)
    return None


def record_levels(lines: Iterable[str]) -> Iterator[tuple[str, str | None]]:
    """Each line with the level of the record it belongs to (``level_at``, read
    forwards): its own tag, or the record's it continues when it is indented."""
    record: str | None = None
    for line in lines:
        own = level(line) if line else None  # (a long log's blanked lines: compact)
        record = own if own is not None or not line[:1].isspace() else record
        yield line, record


def loud_records(text: str) -> str:
    """``text`` without its verbose / info / debug records: what reads like a
    failure, and the words a failure is compared on."""
    if not _ANY_QUIET.search(text):
        return text  # no verbose / info tag at all: nothing to take out
    return "\n".join(
        line for line, record in record_levels(text.split("\n")) if record not in QUIET
    )


def without_narration(text: str, loud: str | None = None) -> str:
    """``loud_records(text)``, or ``text`` itself when that leaves nothing.
    ``loud``: ``loud_records(text)``, when the caller has it."""
    loud = loud_records(text) if loud is None else loud
    return loud if loud.strip() else text
