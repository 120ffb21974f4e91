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


def write_atomically(
    path: str | os.PathLike[str],
    document: Mapping[str, Any],
    *,
    indent: int | None = 2,
    durable: bool = True,
) -> None:
    """Write the JSON document so that a reader sees the old file or the whole
    new one, never half of it (``replace_atomically``)."""
    text = json.dumps(document, indent=indent, ensure_ascii=False) + "\n"
    replace_atomically(path, text.encode("utf-8"), durable=durable)


def replace_atomically(path: str | os.PathLike[str], data: bytes, *, durable: bool = True) -> None:
    """Put ``data`` at ``path`` in one step: a reader or an interrupted run
    sees the old file or the whole new one, never half. The one way qnndoctor
    replaces a file: a temporary file beside it (named for this process and
    thread; removed when anything fails), then a rename. The file gets the
    umask's permissions, like any file; bytes, so that what is on disk is
    exactly ``data`` on every OS. ``durable``: flushed to disk before the
    rename (a report, evidence, the matrix); caches that check what they read
    need not wait for the disk."""
    import threading  # only when writing: keeps the import of this module light

    target = Path(path)
    temporary = target.with_name(f".{target.name}.{os.getpid()}.{threading.get_ident()}.tmp")
    flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_BINARY", 0)
    handle = os.open(temporary, flags, 0o666)
    try:
        with os.fdopen(handle, "wb") as out:
            out.write(data)
            if durable:
                out.flush()
                os.fsync(out.fileno())
        temporary.replace(target)
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise


def keep_newest(folder: Path, pattern: str, keep: int, *, settled_s: float = 0.0) -> list[str]:
    """Remove all but the ``keep`` newest files of ``folder`` matching
    ``pattern`` (a cache folder kept small). A file changed less than
    ``settled_s`` seconds ago is left alone: another run may still be writing
    it. Returns what could not be removed, as messages."""
    import time

    now = time.time()
    dated = []
    for entry in folder.glob(pattern):
        try:
            dated.append((entry.stat().st_mtime, entry))
        except OSError:  # removed by another run meanwhile
            continue
    problems = []
    for mtime, old in sorted(dated, reverse=True)[keep:]:
        if now - mtime < settled_s:
            continue
        try:
            old.unlink(missing_ok=True)
        except OSError as exc:
            problems.append(f"{old.name} not removed ({exc.strerror or exc})")
    return problems
