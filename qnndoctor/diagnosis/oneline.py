"""Regexes whose matches stay on one line: searched only on the lines that hold
all their literals.

A catalogue regex like ``(?:QNN|HTP)[^\\n]{0,120}(?:Intel|AMD)`` needs both of
its words on one line, but the whole-text literal test (``prefilter``) only
asks whether each word is somewhere in the text: in a verbose QNN log "qnn" is
on a thousand lines, so ``re`` tries the span after each of them although no
line names Intel. When no part of a regex can match a line break
(``one_line``), every match lies inside one line and holds the regex's
required literals there; so the lines that hold them (found from the rarest
literals' places, ``lines_holding``) are searched in order, each with
``search(text, start, end)``: the first match found is the leftmost one, the
same match the whole text's search returns.

Why the same: ``pos`` lets lookbehinds and ``\\b`` see the text before the
line (``^`` and ``\\A`` do not match at ``pos``, as in the whole text); at
``endpos`` the whole text goes on with a line break that the regex cannot
consume, so a lookahead finds nothing there either way, and ``\\b`` and a
multi-line ``$`` answer the same. ``$`` without MULTILINE and ``\\Z`` would not:
a regex with either is not one-line. Every doubt is "not one-line".
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Callable
from typing import Any


def _regex_parser() -> Any:
    """The stdlib regex parser (``re._parser`` since 3.11, ``sre_parse`` before)."""
    try:
        return importlib.import_module("re._parser")
    except ImportError:  # Python 3.10
        return importlib.import_module("sre_parse")


SRE = _regex_parser()  # shared with prefilter.py
REPEATS = tuple(
    op
    for op in (getattr(SRE, n, None) for n in ("MAX_REPEAT", "MIN_REPEAT", "POSSESSIVE_REPEAT"))
    if op is not None
)
ATOMIC = getattr(SRE, "ATOMIC_GROUP", None)  # 3.11+
_RANGES = tuple(
    op for op in (getattr(SRE, n, None) for n in ("RANGE", "RANGE_UNI_IGNORE")) if op is not None
)
_NEWLINE = 10
# Categories that never hold a line break; any other may.
_NO_NEWLINE = frozenset(
    getattr(SRE, name)
    for name in (
        "CATEGORY_DIGIT",
        "CATEGORY_WORD",
        "CATEGORY_NOT_SPACE",
        "CATEGORY_NOT_LINEBREAK",
        "CATEGORY_UNI_DIGIT",
        "CATEGORY_UNI_WORD",
        "CATEGORY_UNI_NOT_SPACE",
        "CATEGORY_UNI_NOT_LINEBREAK",
        "CATEGORY_LOC_WORD",
    )
    if hasattr(SRE, name)
)
MAX_PLACES = 4096  # occurrences of the rarest literals: past this, the whole text is searched


def _class_has_newline(items: Any) -> bool:
    negate, hit = False, False
    for op, av in items:
        if op is SRE.NEGATE:
            negate = True
        elif op is SRE.LITERAL:
            hit = hit or av == _NEWLINE
        elif op in _RANGES:
            hit = hit or av[0] <= _NEWLINE <= av[1]
        elif op is SRE.CATEGORY:
            hit = hit or av not in _NO_NEWLINE
        else:
            return True  # not known: it may
    return hit != negate


def _consumes_newline(op: Any, av: Any, dotall: bool) -> bool:
    if op is SRE.LITERAL:
        return bool(av == _NEWLINE)
    if op is SRE.NOT_LITERAL:
        return bool(av != _NEWLINE)
    if op is SRE.IN:
        return _class_has_newline(av)
    return dotall  # ANY


def _stays(items: Any, dotall: bool, multiline: bool) -> bool:
    """Whether parse-tree nodes never consume a line break nor read the end of
    the text differently from a line's end (see the module's docstring)."""
    return all(_node_stays(op, av, dotall, multiline) for op, av in items)


def _node_stays(op: Any, av: Any, dotall: bool, multiline: bool) -> bool:
    if op in (SRE.LITERAL, SRE.NOT_LITERAL, SRE.IN, SRE.ANY):
        return not _consumes_newline(op, av, dotall)
    if op is SRE.AT:
        return not (av is SRE.AT_END_STRING or (av is SRE.AT_END and not multiline))
    if op is SRE.SUBPATTERN:
        _group, add, remove, body = av
        scoped = (add | remove) & (re.DOTALL | re.MULTILINE)  # scoped flags: not read here
        return not scoped and _stays(body, dotall, multiline)
    if op is SRE.BRANCH:
        return all(_stays(branch, dotall, multiline) for branch in av[1])
    if op in REPEATS:
        return _stays(av[2], dotall, multiline)
    if op in (SRE.ASSERT, SRE.ASSERT_NOT):
        direction, body = av
        # a lookbehind reads what lies before the match: the same text either way
        return direction < 0 or _stays(body, dotall, multiline)
    if ATOMIC is not None and op is ATOMIC:
        return _stays(av, dotall, multiline)
    return False  # back references, conditionals, anything not read here


def one_line(parsed: Any, flags: int) -> bool:
    """Whether no match of the regex parsed as ``parsed`` (``re``'s parser, with
    ``flags``) can hold a line break, and its search on one line's span finds
    what the whole text's does."""
    try:
        flags |= parsed.state.flags
        return _stays(parsed.data, bool(flags & re.DOTALL), bool(flags & re.MULTILINE))
    except (ValueError, TypeError, AttributeError, IndexError, RecursionError):
        return False


Requirement = Any  # prefilter.Requirement: str | ("all" | "any", parts) | None


def _places(requirement: Requirement, count: Callable[[str], int]) -> tuple[int, list[str]] | None:
    """The fewest literals one of which lies on every line where ``requirement``
    holds, with their number of occurrences; None: not known."""
    if requirement is None:
        return None
    if isinstance(requirement, str):
        return count(requirement), [requirement]
    kind, parts = requirement
    found = [_places(part, count) for part in parts]
    if kind == "any":
        if any(f is None for f in found):
            return None
        return sum(f[0] for f in found if f), [n for f in found if f for n in f[1]]
    known = [f for f in found if f is not None]
    return min(known, key=lambda f: f[0]) if known else None


def _holds(requirement: Requirement, line: str) -> bool:
    if requirement is None:
        return True
    if isinstance(requirement, str):
        return requirement in line
    kind, parts = requirement
    if kind == "all":
        return all(_holds(part, line) for part in parts)
    return any(_holds(part, line) for part in parts)


def lines_holding(
    requirement: Requirement, folded: str, count: Callable[[str], int]
) -> list[tuple[int, int]] | None:
    """(start, end) of each line of ``folded`` (end: its line break or the text's
    end) on which ``requirement`` holds, in order; None when it is not known
    or its rarest literals are too frequent to be worth it."""
    places = _places(requirement, count)
    if places is None or places[0] > MAX_PLACES:
        return None
    spans: set[tuple[int, int]] = set()
    for needle in places[1]:
        if not needle or "\n" in needle:
            return None
        at = folded.find(needle)
        while at >= 0:
            start = folded.rfind("\n", 0, at) + 1
            end = folded.find("\n", at)
            end = len(folded) if end < 0 else end
            if (start, end) not in spans and _holds(requirement, folded[start:end]):
                spans.add((start, end))
            at = folded.find(needle, end)  # the rest of this line is decided
    return sorted(spans)
