"""JSON files without surprises: read from outside (tickets, matrices,
downloads) safely, written atomically.

``json.loads`` raises ``RecursionError`` on deeply nested input, and a
document nested just below that limit can still exhaust the stack of code
that walks it recursively (the redactor, renderers). Every JSON document
qnndoctor reads from a file or the network goes through ``loads`` here:
a clear ``BadJSON`` (a ``ValueError``) instead, and nothing deeper than
``MAX_DEPTH`` gets in. ``write_atomically`` writes a document so that a
reader sees the old file or the whole new one (reports, the memo).
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from .decoding import decode

# What the end of a cut document can look like where json.loads stops: a
# literal cut short ("tr", "-"), a number cut after "." or "e", a \u escape
# cut inside its four digits.
_LITERALS = ("true", "false", "null", "NaN", "Infinity", "-Infinity")
_CUT_NUMBER = re.compile(r"\.|[eE][-+]?")
_CUT_ESCAPE = re.compile(r"\\?u?[0-9a-fA-F]{0,4}")
# Reports nest about 10 levels, the release matrix about 8.
MAX_DEPTH = 64
# json.loads makes exactly these types for objects and arrays.
_CONTAINERS = (dict, list)


class BadJSON(ValueError):
    """The text is not JSON qnndoctor can use."""


def depth_exceeds(value: Any, limit: int = MAX_DEPTH) -> bool:
    """Whether containers nest deeper than ``limit`` (iterative: no recursion).

    Walks one level at a time, keeping only the containers: the release
    matrix (about 1.6 MB) is read on every check, and this walk is part of it."""
    level = [value] if type(value) in _CONTAINERS else []
    depth = 1
    while level:
        if depth > limit:
            return True
        below: list[Any] = []
        for item in level:
            children = item.values() if type(item) is dict else item
            below.extend([child for child in children if type(child) in _CONTAINERS])
        level = below
        depth += 1
    return False


def _ends_early(exc: json.JSONDecodeError) -> bool:
    """Whether the parser stopped because the text ends, not because it is wrong.

    A ticket cut in half is the common bad ticket; saying so tells the user
    to send the whole file again rather than look for a typo."""
    tail = exc.doc[exc.pos :].rstrip()
    if not tail or exc.msg.startswith("Unterminated string"):
        return True
    if exc.msg.startswith("Expecting value"):
        return any(word.startswith(tail) for word in _LITERALS)
    if exc.msg.startswith("Expecting ',' delimiter"):
        return _CUT_NUMBER.fullmatch(tail) is not None
    if exc.msg.startswith("Invalid \\uXXXX escape"):
        return _CUT_ESCAPE.fullmatch(tail) is not None
    return False


def loads(text: str | bytes, what: str, *, check_depth: bool = True) -> Any:
    """Parse ``text`` (``what`` names it in messages). ``check_depth=False``:
    the caller runs ``depth_exceeds`` itself before anything walks the value
    (``fleet`` does, once per distinct setup instead of once per ticket)."""
    try:
        if isinstance(text, bytes):
            text = decode(text)  # UTF-8, or what a BOM says (a ticket saved by PowerShell)
        value = json.loads(text)
    except UnicodeDecodeError as exc:
        raise BadJSON(
            f"{what} is not {exc.encoding.upper()} text: {exc.reason} at byte {exc.start}"
        ) from exc
    except RecursionError as exc:
        raise BadJSON(f"{what} is nested too deeply to be read") from exc
    except json.JSONDecodeError as exc:
        cut = " (the file looks truncated)" if _ends_early(exc) else ""
        raise BadJSON(
            f"{what} is not valid JSON{cut}: {exc.msg} at line {exc.lineno} column {exc.colno}"
        ) from exc
    except ValueError as exc:  # e.g. a number too long to convert
        raise BadJSON(f"{what} is not usable JSON: {exc}") from exc
    if check_depth and depth_exceeds(value):
        raise BadJSON(f"{what} is nested deeper than {MAX_DEPTH} levels; no qnndoctor document is")
    return value


def write_atomically(path: str | os.PathLike[str], document: Mapping[str, Any]) -> None:
    """Write the JSON document so that a reader sees the old file or the whole
    new one, never half of it (a temporary file beside it, then a rename)."""
    import tempfile  # only when writing: keeps the import of this module light

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
