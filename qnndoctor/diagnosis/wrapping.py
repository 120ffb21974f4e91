"""Wrap-tolerant regexes: a catalogue message still matches when a terminal,
a mail client or an issue form hard-wrapped it at a space. Shared by the
catalogue (which compiles the patterns) and the prefilter (which reads their
literals), so neither imports the other for it."""

from __future__ import annotations

import functools
import re
from collections.abc import Iterator

# A literal space of a catalogue regex also accepts a line break (with the blanks
# around it): messages reach us hard-wrapped at word boundaries by terminals,
# mail clients and issue forms, and a wrapped message is still the same message.
# Any run of white space (a web page's no-break space too) with at most one line
# break: no blank line inside. Written as one repeated character, the cheapest
# form to compile: the catalogue's ~900 regexes compile in half the time of
# "(?:[ \t]+(?:\r?\n[ \t]*)?|\r?\n[ \t]*)" (docs/speed.md).
_WRAP_GAP = r"(?:\s(?<!\n\n)(?<!\n\r\n))+"
WRAP_GAP = _WRAP_GAP  # what each wrapped space becomes (read by prefilter)


def outside_classes(pattern: str) -> Iterator[tuple[int, str]]:
    """(index, character) of each character of ``pattern`` that is neither
    escaped nor inside a character class: where spaces, groups and ``|``
    mean what they say."""
    i, in_class = 0, False
    while i < len(pattern):
        c = pattern[i]
        if c == "\\":
            i += 2
            continue
        if in_class:
            in_class = c != "]"
        elif c == "[":
            in_class = True
            i += 1 + (pattern[i + 1 : i + 2] == "^")
            i += pattern[i : i + 1] == "]"  # a ']' first in the class is literal
            continue
        else:
            yield i, c
        i += 1


# A regex that begins with a greedy run of one class ("\\S+ is not a graph input")
# is tried by `re` at every character of every such run in the text, each try
# backtracking over the rest of the run: on a big log, one such regex cost more
# than ten others. Its leftmost match begins where a run begins (a match from
# inside a run is also a match from one character earlier), so a lookbehind
# saying the run begins there finds the same match (span and groups) at once.
_RUN_STARTS = {"\\S+": "(?<!\\S)", "\\w+": "(?<!\\w)", "\\d+": "(?<!\\d)"}


def wrap_tolerant(regex: str) -> str:
    """``regex`` with each literal, unquantified space (outside a character class)
    matching a wrap too; a leading greedy run of one class (``\\S+``, ``\\w+``,
    ``\\d+``) is only tried where the run begins (the same matches, see above)."""
    if regex[:3] in _RUN_STARTS and regex[3:4] not in ("?", "+", "*", "{"):
        return _RUN_STARTS[regex[:3]] + _wrapped(regex)
    return _wrapped(regex)


def _wrapped(regex: str) -> str:
    out: list[str] = []
    copied = 0
    for i, c in outside_classes(regex):
        # a quantified space keeps its meaning (a repeated gap could backtrack badly)
        if c == " " and regex[i + 1 : i + 2] not in ("*", "+", "?", "{"):
            out += (regex[copied:i], _WRAP_GAP)
            copied = i + 1
    out.append(regex[copied:])
    return "".join(out)


@functools.cache
def compiled(pattern: str) -> re.Pattern[str]:
    """A catalogue regex (case-insensitive), compiled the first time it is
    needed: a pattern only when a text holds its literals (``Pattern.may_match``).
    Most never are, and compiling all ~900 cost a third of a second before any
    text was read (docs/speed.md)."""
    return re.compile(pattern, re.IGNORECASE)
