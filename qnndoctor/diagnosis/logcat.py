"""Android logcat's prefixes taken off a failure text's lines.

``adb logcat`` writes every line behind a prefix of its own: the default
(threadtime) format ``11-28 10:11:12.345  1234  5678 E onnxruntime: ``, the
older ``brief`` / ``time`` formats ``E/onnxruntime( 1234): ``
(``11-28 10:11:12.345 E/tag( 1234): ``), ``-v year`` / ``-v
epoch`` / ``-v uid`` variants, and Android Studio's classic
``2026-11-28 10:11:12.345 1234-5678/com.app E/tag: ``. A message the
catalogue reads across lines (a Python traceback, a message and its reason)
no longer matches when a prefix stands between its lines, so the prefix is
taken off, the way a line-number gutter is (``cleaning``).

What follows a tag's ``: `` keeps its indentation (a traceback's ``  File``
lines), less the blanks every line of that tag begins with (onnxruntime's
Android log sink writes `` [V:onnxruntime:, file.cc:12 F] ...``).

The level letter goes with the prefix, except where it is a line's only
level: a line of the ``onnxruntime`` tag without a level tag of its own,
logged at verbose, debug or info, keeps it as ``V onnxruntime: ...``
(``severity`` reads that form), so narration stays narration. An error or
warning line needs no tag: an untagged line is loud already.
"""

from __future__ import annotations

import re

from .severity import QUIET, level

_TIME = (
    r"(?:(?:\d{4}-)?\d\d-\d\d[ T]\d\d:\d\d:\d\d[.,]\d{3,9}|\d{9,11}\.\d{3,9})"
    r"(?:[ ]+[+-]\d{4})?[ \t]+"
)
_TAG = r"[^\s:(/][^\n:(]{0,80}?"  # a tag: anything but a colon or a parenthesis, padded
_LEVEL = r"[VDIWEFAS]"
_LOGCAT = re.compile(
    r"[ \t]*(?:"
    # threadtime (default), with -v year / epoch / uid: time [uid] pid tid level tag:
    rf"{_TIME}(?:[\w.]+[ \t]+)?\d+[ \t]+\d+[ \t]+(?P<l1>{_LEVEL})[ \t]+(?P<t1>{_TAG})[ \t]*:"
    # brief / time: [time] level/tag( pid):  (without a pid only behind a time:
    # "I/O error: ..." is no logcat line)
    rf"|(?:{_TIME})?(?P<l2>{_LEVEL})/(?P<t2>{_TAG})[ \t]*\([ \t]*\d+(?:[:,][ \t]*\d+)?\):"
    rf"|{_TIME}(?P<l4>{_LEVEL})/(?P<t4>{_TAG})[ \t]*:"
    # Android Studio (classic): time pid-tid/package level/tag:
    rf"|{_TIME}\d+-\d+/[\w.:-]+[ \t]+(?P<l3>{_LEVEL})/(?P<t3>{_TAG})[ \t]*:"
    r")(?=[ \t]|$)"
)
_ORT_TAG = "onnxruntime"
_LEVELS = ("l1", "l2", "l3", "l4")
_TAGS = ("t1", "t2", "t3", "t4")


def has_prefixes(lines: list[str]) -> bool:
    """Whether any line of ``lines`` (a quick look at the first 200) begins
    with a logcat prefix."""
    return any(_LOGCAT.match(line) for line in lines[:200])


def unprefixed(lines: list[str]) -> list[str]:
    """``lines`` with every logcat prefix taken off (lines without one as they
    are; as many lines as before)."""
    found = [_LOGCAT.match(line) for line in lines]
    gaps: dict[str, int] = {}  # per tag: the blanks every message of it begins with
    for line, match in zip(lines, found, strict=True):
        if match is not None:
            rest = line[match.end() :]
            if rest.strip():
                tag = _tag(match)
                blanks = len(rest) - len(rest.lstrip(" \t"))
                gaps[tag] = min(blanks, gaps.get(tag, blanks))
    out: list[str] = []
    for line, match in zip(lines, found, strict=True):
        if match is None:
            out.append(line)
            continue
        tag = _tag(match)
        message = line[match.end() + gaps.get(tag, 1) :] if line[match.end() :].strip() else ""
        letter = next(match.group(g) for g in _LEVELS if match.group(g))
        if tag == _ORT_TAG and letter in QUIET and level(message) is None:
            message = f"{letter} {_ORT_TAG}: {message}"  # its only level (see above)
        out.append(message)
    return out


def _tag(match: re.Match[str]) -> str:
    return next(match.group(g) for g in _TAGS if match.group(g)).strip()
