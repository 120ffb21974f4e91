"""QNN API error codes named in a failure text: ``Error code: 6022`` read as
``QNN_GRAPH_ERROR_FINALIZE_FAILED`` ("Graph finalize failed"), and a name
such as ``QNN_CONTEXT_ERROR_INVALID_ARGUMENT`` read as 5000.

Older onnxruntime-qnn releases print only the number, newer ones only the
name; users search for both. The table (``matrix/qnn_errors.json``) is read
from QNN's own headers by ``matrix/refresh/qnn_errors.py``. A number counts
only beside an error word on a line that speaks of QNN (a port, a line
number or a year is never a code), and only if the table knows it.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

from .._layout import shipped_table
from .prefilter import LineGate

# "Error code: 1002", "with err 5005", "error 6020", "status 1002", "returned 1002"
_NUMBER = re.compile(
    r"\b(?:error(?:\s+code)?|err(?:or)?[_ ]?code|err|status|returned|return(?:\s+code)?)"
    r"\s*[:=]?\s*(\d{4,5})\b",
    re.IGNORECASE,
)
_NAME = re.compile(r"\bQNN_\w*?ERROR_[A-Z0-9_]+\b")
_QNN_LINE = re.compile(
    r"qnn|htp|qairt|hexagon|\bdsp\b|\bnpu\b|graph|context|skel|fastrpc", re.IGNORECASE
)
# Why the table could not be read, if it could not (`explain` warns on stderr).
problems: list[str] = []


@dataclass(frozen=True)
class QnnCode:
    """One code of QNN's headers, with the header's own words."""

    code: int
    name: str
    meaning: str
    aliases: tuple[str, ...] = ()


@dataclass(frozen=True)
class Mention:
    """Where a text names a code, and how (``number`` or ``name``)."""

    line: int
    code: QnnCode
    written: str

    def to_json(self) -> dict[str, object]:
        return {
            "line": self.line,
            "code": self.code.code,
            "name": self.code.name,
            "meaning": self.code.meaning,
            "written": self.written,
        }


@functools.cache
def table() -> dict[str, QnnCode]:
    """Codes by number (as text) and by every name: empty, with the reason
    in ``problems``, when the shipped table cannot be read."""
    entries = shipped_table("qnn_errors.json", "codes", problems)
    if entries is None:
        return {}
    try:
        codes = [
            QnnCode(int(e["code"]), str(e["name"]), str(e["meaning"]), tuple(e["aliases"]))
            for e in entries
        ]
    except (ValueError, KeyError, TypeError) as exc:
        problems.append(f"qnn_errors.json: {type(exc).__name__}: {exc}")
        return {}
    by_key: dict[str, QnnCode] = {}
    for code in codes:
        by_key[str(code.code)] = code
        for name in (code.name, *code.aliases):
            by_key[name] = code
    return by_key


def find(lines: list[str]) -> tuple[Mention, ...]:
    """Each code the lines name, once, at its first mention (numbered from 1).
    Only the lines that hold a code's literals are read (``LineGate``, as the
    engine does for its patterns): a long healthy log holds almost none."""
    known = table()
    found: dict[int, Mention] = {}
    candidates = LineGate(lines, (_NAME, _NUMBER)).lines_for((_NAME, _NUMBER))
    indexes = range(len(lines)) if candidates is None else sorted(candidates)
    for index in indexes:
        number, line = index + 1, lines[index]
        for match in _NAME.finditer(line):
            code = known.get(match.group(0))
            if code is not None and code.code not in found:
                found[code.code] = Mention(number, code, "name")
        if not _QNN_LINE.search(line):
            continue
        for match in _NUMBER.finditer(line):
            code = known.get(match.group(1))
            if code is not None and code.code not in found:
                found[code.code] = Mention(number, code, "number")
    return tuple(sorted(found.values(), key=lambda m: m.line))
