"""A cheap literal test before each regex, so a big log costs substring scans.

Every catalogue pattern is run over the whole pasted text, and a verbose
ORT / QNN session is tens of thousands of lines: hundreds of case-insensitive
regexes over megabytes take seconds, although almost none of them can match.
Most regexes need some literal text to match (``Failed to finalize`` needs
``failed to finalize``; an alternation needs one of its branches' words). We
read those required literals from the regex's own parse tree and look for them
first in a case-folded copy of the text. When they do not occur, the regex
cannot match and is not run; when the literals a match must begin with occur,
the regex is only tried where they do (``regex.match`` there, in order: the
first hit is the leftmost match). Either way the answer is the regex's own:
the same match or none. Per-line regexes get the same through ``LineGate``.

The literal test is a necessary condition only, so every doubt (an unknown
node, a non-ASCII literal, a backreference) keeps the plain regex search.
"""

from __future__ import annotations

import bisect
import functools
import heapq
import itertools
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from . import oneline
from .wrapping import WRAP_GAP, outside_classes, wrap_tolerant

_sre = oneline.SRE  # the stdlib regex parser, found once (oneline.py)
_LITERAL, _SUBPATTERN, _BRANCH = _sre.LITERAL, _sre.SUBPATTERN, _sre.BRANCH
_REPEATS, _ATOMIC = oneline.REPEATS, oneline.ATOMIC
_MAX_STARTS = 32  # a longer list of first literals is not worth building
_ZERO_WIDTH = (_sre.AT, _sre.ASSERT, _sre.ASSERT_NOT)  # anchors, \\b, lookarounds

# Characters outside ASCII that a case-insensitive ASCII letter matches, and the
# letter they fold to (found by trying every code point; tests check the list).
# str.lower() already folds U+212A KELVIN SIGN to "k".
_SPECIAL_FOLDS = {"\u0130": "i", "\u0131": "i", "\u017f": "s"}


def fold(text: str) -> str:
    """``text`` case-folded the way a case-insensitive ASCII literal sees it: a
    run of text a literal matches folds to the literal in lower case."""
    for special, plain in _SPECIAL_FOLDS.items():
        if special in text:
            text = text.replace(special, plain)
    return text.lower()


# A requirement is a literal ("failed to"), all of several requirements, or any
# of several. ``None`` means nothing is known: the text may match.
Requirement = Any  # str | tuple["all" | "any", tuple[Requirement, ...]] | None


def _all(parts: list[Requirement]) -> Requirement:
    known = [p for p in parts if p is not None]
    if not known:
        return None
    return known[0] if len(known) == 1 else ("all", tuple(known))


def _any(parts: list[Requirement]) -> Requirement:
    if not parts or any(p is None for p in parts):
        return None  # one branch without a known literal can match anything
    return parts[0] if len(parts) == 1 else ("any", tuple(parts))


def _required(items: Any, spaces: bool = True) -> Requirement:
    """What a sequence of parse-tree nodes needs in the folded text. With
    ``spaces`` False a literal space counts as unknown (it may be a line break)."""
    parts: list[Requirement] = []
    run: list[str] = []
    for op, av in items:
        if op is _LITERAL and av < 128 and (spaces or av != 32):
            run.append(chr(av).lower())
            continue
        if run:
            parts.append("".join(run))
            run = []
        if op is _SUBPATTERN:
            parts.append(_required(av[-1], spaces))
        elif op in _REPEATS:
            low, _high, body = av
            if low >= 1:
                parts.append(_required(body, spaces))
        elif op is _BRANCH:
            parts.append(_any([_required(branch, spaces) for branch in av[1]]))
        elif _ATOMIC is not None and op is _ATOMIC:
            parts.append(_required(av, spaces))
        # anything else (classes, anchors, lookarounds, backreferences) ends a run
    if run:
        parts.append("".join(run))
    return _all(parts)


def _starts(items: Any, index: int = 0, spaces: bool = True) -> frozenset[str] | None:
    """Literals (folded) one of which every match of ``items[index:]`` begins
    with; None when unknown (a class, a possibly empty match, ...)."""
    for at in range(index, len(items)):
        op, av = items[at]
        if op in _ZERO_WIDTH:
            continue  # consumes nothing: the match still begins with what follows
        if op is _LITERAL:
            run: list[str] = []
            for next_op, next_av in items[at:]:
                if next_op is not _LITERAL or next_av >= 128 or (next_av == 32 and not spaces):
                    break
                run.append(chr(next_av).lower())
            if not run:
                return None
            after = at + len(run)
            if after < len(items) and items[after][0] in (_SUBPATTERN, _BRANCH):
                # "f(?:alls|ell)": the run and the group's first literals together
                following = _starts(items, after, spaces)
                if following is not None and len(following) <= _MAX_STARTS:
                    return frozenset("".join(run) + more for more in following)
            return frozenset({"".join(run)})
        if op is _SUBPATTERN:
            return _starts(av[-1], 0, spaces)
        if _ATOMIC is not None and op is _ATOMIC:
            return _starts(av, 0, spaces)
        if op in _REPEATS:
            low, _high, body = av
            inner = _starts(body, 0, spaces)
            if inner is None or low >= 1:
                return inner
            rest = _starts(items, at + 1, spaces)  # the repeat may match nothing
            return None if rest is None else inner | rest
        if op is _BRANCH:
            sets = [_starts(branch, 0, spaces) for branch in av[1]]
            if any(found is None for found in sets):
                return None
            return frozenset(n for found in sets if found for n in found)
        return None
    return None  # nothing consumed: a match may be empty


def _positions(folded: str, needle: str) -> Iterator[int]:
    at = folded.find(needle)
    while at >= 0:
        yield at
        at = folded.find(needle, at + 1)


_ALPHA_RUN = re.compile(r"[a-z]+")
_LETTERS_ONLY = bytes(c if 97 <= c <= 122 else 32 for c in range(256))  # a-z kept, rest blank
_WORD_INDEX_FROM = 32 * 1024  # characters: below this, a plain scan per literal is cheap


class Literals:
    """Which literals one text holds, remembered across regexes. ``folded`` is
    ``fold(text)``. In a big text most literals asked about are absent, and an
    absent literal costs a scan of the whole text; so a literal is first
    looked for in the text's distinct words: each run of letters of a literal
    that occurs lies inside one of the text's runs of letters."""

    def __init__(self, folded: str) -> None:
        self.folded = folded
        self._known: dict[str, bool] = {}
        self._words: bytes | None = None
        self._counts: dict[str, int] = {}

    def count(self, needle: str) -> int:
        """How often ``needle`` occurs in the folded text (remembered)."""
        found = self._counts.get(needle)
        if found is None:
            found = self._counts[needle] = self.folded.count(needle) if self.holds(needle) else 0
        return found

    def holds(self, needle: str) -> bool:
        found = self._known.get(needle)
        if found is None:
            found = self._known[needle] = self._look(needle)
        return found

    def _look(self, needle: str) -> bool:
        if len(self.folded) >= _WORD_INDEX_FROM:
            if self._words is None:  # the distinct runs of a-z (bytes: fast on megabytes)
                runs = self.folded.encode("utf-8", "surrogatepass").translate(_LETTERS_ONLY)
                self._words = b"\n".join(set(runs.split()))
            if any(run.encode() not in self._words for run in _ALPHA_RUN.findall(needle)):
                return False
        return needle in self.folded


def holds(requirement: Requirement, literals: Literals) -> bool:
    """Whether the text ``literals`` is about holds ``requirement`` (True when
    nothing is known): False means no regex with this requirement can match it."""
    if requirement is None:
        return True
    if isinstance(requirement, str):
        return literals.holds(requirement)
    kind, parts = requirement
    if kind == "all":
        return all(holds(p, literals) for p in parts)
    return any(holds(p, literals) for p in parts)


@dataclass(frozen=True)
class Plan:
    """What must be in a text before ``regex`` can match it."""

    regex: re.Pattern[str]
    requirement: Requirement  # None: no known literal, always search
    starts: frozenset[str] | None = None  # every match begins with one of these
    unplanned: str = ""  # why no pre-filter could be read from the regex (it always runs)
    # For "A|B|C" without first literals as a whole: each branch's own plan. The
    # leftmost match is the branches' leftmost, the earlier branch on a tie.
    branches: tuple[Plan, ...] = ()
    # No match can hold a line break (oneline): only the lines that hold all
    # the required literals are searched.
    one_line: bool = False

    def may_match(self, literals: Literals) -> bool:
        """False only when the regex cannot match the text ``literals`` is about."""
        return holds(self.requirement, literals)

    def search(self, text: str, literals: Literals | None = None) -> re.Match[str] | None:
        """``self.regex.search(text)``: a match of the same span and text, or None
        (answered from the literals when it must fail). ``literals``: of ``text``,
        shared by the regexes run over one text."""
        literals = Literals(fold(text)) if literals is None else literals
        folded = literals.folded
        if not self.may_match(literals):
            return None
        if self.one_line and len(folded) == len(text):
            spans = oneline.lines_holding(self.requirement, folded, literals.count)
            if spans is not None:
                for start, end in spans:
                    if (found := self.regex.search(text, start, end)) is not None:
                        return found
                return None
        if self.branches and len(folded) == len(text):
            best: re.Match[str] | None = None
            for branch in self.branches:
                found = branch.search(text, literals)
                if found is not None and (best is None or found.start() < best.start()):
                    best = found
            return best
        if self.starts is None or len(folded) != len(text):
            return self.regex.search(text)
        # A match can only begin where one of its first literals does: try
        # those places in order; the first that matches is the leftmost match.
        budget = len(text) // 100  # places to try; past that, a plain scan is cheaper
        last = -1
        for at in heapq.merge(*(_positions(folded, n) for n in self.starts)):
            if at == last:
                continue
            last = at
            found = self.regex.match(text, at)
            if found is not None:
                return found
            budget -= 1
            if budget < 0:
                return self.regex.search(text, at + 1)
        return None


SMALL_TEXT = 32 * 1024  # characters: a shorter text is searched plainly (cheaper than plans)
GATE_FROM = 32 * 1024  # characters: a shorter text's lines are all read by every regex


def search(
    regex: re.Pattern[str], text: str, literals: Literals | None = None, source: str = ""
) -> re.Match[str] | None:
    """``regex.search(text)`` (a match of the same span and text), through the
    pre-filter when ``text`` is big enough to pay for reading the regex's plan.
    ``source``: the catalogue's regex before ``wrap_tolerant`` (quicker to read)."""
    if len(text) < SMALL_TEXT:
        return regex.search(text)
    return plan(regex, source).search(text, literals)


@functools.lru_cache(maxsize=4096)
def plan(regex: re.Pattern[str], source: str = "") -> Plan:
    """The pre-filter of ``regex`` (cached: catalogue regexes are compiled once).
    When ``regex`` is ``wrap_tolerant(source)``, the shorter ``source`` is read,
    its literal spaces counted as unknown (each may be a line break)."""
    spaces = not source or wrap_tolerant(source) != regex.pattern
    try:
        parsed = _sre.parse(regex.pattern if spaces else source, regex.flags)
        tree = parsed.data
        requirement, starts = _required(tree, spaces), _starts(tree, 0, spaces)
    except (re.error, RecursionError, OverflowError, ValueError, TypeError, AttributeError) as exc:
        return Plan(regex, None, None, f"{type(exc).__name__}: {exc}")
    if starts is not None and not all(starts):
        starts = None
    branches: tuple[Plan, ...] = ()
    plain_alternation = not (regex.flags & re.VERBOSE or _BACKREFERENCE.search(regex.pattern))
    if starts is None and plain_alternation:
        # An enclosing group is taken off only without groups to number: a
        # branch compiled alone would number its groups from 1.
        whole = _ungrouped(regex.pattern) if regex.groups == 0 else regex.pattern
        texts = _top_level_branches(whole)
        if len(texts) > 1:
            try:
                branches = tuple(plan(re.compile(t, regex.flags)) for t in texts)
            except re.error:
                branches = ()  # not a plain alternation after all: search it whole
    # ``source``'s literal spaces are ``regex``'s wrap-tolerant gaps, which take
    # line breaks: read from ``source``, a regex with a gap is not one-line.
    one_line = oneline.one_line(parsed, regex.flags) and (spaces or WRAP_GAP not in regex.pattern)
    return Plan(regex, _drop_empty(requirement), starts, "", branches, one_line)


def requirement_of(pattern: str, flags: int, source: str = "") -> Requirement:
    """``plan(re.compile(pattern, flags), source).requirement`` without compiling
    the regex (what the catalogue's plan cache stores). ``source``: as for ``plan``."""
    spaces = not source or wrap_tolerant(source) != pattern
    try:
        tree = _sre.parse(pattern if spaces else source, flags).data
        return _drop_empty(_required(tree, spaces))
    except (re.error, RecursionError, OverflowError, ValueError, TypeError, AttributeError):
        return None


# \\1, (?P=name), (?(1)...): a branch alone would not mean what it means in the
# whole; (?#...) may hold a "(" or "|" that the splitter would count.
_BACKREFERENCE = re.compile(r"\\[1-9]|\(\?P=|\(\?\(|\(\?#")


def _ungrouped(pattern: str) -> str:
    """``pattern`` without a non-capturing group around all of it ("(?:A|B)" is
    "A|B": its branches can then be planned one by one)."""
    if not pattern.startswith("(?:"):
        return pattern
    depth = 0
    for i, c in outside_classes(pattern):
        depth += (c == "(") - (c == ")")
        if depth == 0:
            return pattern[3:-1] if i == len(pattern) - 1 else pattern
    return pattern


def _top_level_branches(pattern: str) -> list[str]:
    """``pattern`` split at each ``|`` outside groups and classes."""
    parts: list[str] = []
    depth, start = 0, 0
    for i, c in outside_classes(pattern):
        if c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
        elif c == "|" and depth == 0:
            parts.append(pattern[start:i])
            start = i + 1
    parts.append(pattern[start:])
    return parts


def _drop_empty(requirement: Requirement) -> Requirement:
    """An empty literal is in every text: it requires nothing."""
    if requirement is None or requirement == "":
        return None
    if isinstance(requirement, str):
        return requirement
    kind, parts = requirement
    kept = [_drop_empty(p) for p in parts]
    return _all(kept) if kind == "all" else _any(kept)


Allow = Callable[[re.Pattern[str]], bool]


class _Lines:
    """Line sets of literals in one folded text (0-based line numbers)."""

    def __init__(self, literals: Literals, starts: list[int]) -> None:
        self.literals, self.folded, self.starts = literals, literals.folded, starts
        self.limit = len(starts)  # more occurrences than lines: not worth listing
        self.counts: dict[str, int] = {}
        self.sets: dict[str, frozenset[int] | None] = {}

    def count(self, needle: str) -> int:
        if needle not in self.counts:
            present = self.literals.holds(needle)
            self.counts[needle] = self.folded.count(needle) if present else 0
        return self.counts[needle]

    def of_needle(self, needle: str) -> frozenset[int] | None:
        if needle not in self.sets:
            found: frozenset[int] | None = None  # spans lines, or too frequent to list
            if "\n" not in needle and self.count(needle) <= self.limit:
                found = frozenset(
                    bisect.bisect_right(self.starts, at) - 1
                    for at in _positions(self.folded, needle)
                )
            self.sets[needle] = found
        return self.sets[needle]

    def of(self, requirement: Requirement) -> frozenset[int] | None:
        """A superset of the lines on which ``requirement`` holds; None: maybe any."""
        if requirement is None:
            return None
        if isinstance(requirement, str):
            return self.of_needle(requirement)
        kind, parts = requirement
        if kind == "any":
            sets = [self.of(p) for p in parts]
            if any(s is None for s in sets):
                return None
            return frozenset(line for s in sets if s is not None for line in s)
        # All parts must hold on the line: the rarest literal alone bounds the lines.
        literals = sorted((p for p in parts if isinstance(p, str)), key=self.count)
        for part in (*literals[:1], *(p for p in parts if not isinstance(p, str))):
            found = self.of(part)
            if found is not None:
                return found
        return None


# The last text's literals and line sets: the harmless lines, the text facts
# and the QNN codes each gate the same text (one fold, one word index, each
# literal's lines found once). Reused only for an equal text.
_last_index: tuple[str, Literals, _Lines] | None = None


def _text_index(joined: str, lines: list[str]) -> tuple[Literals, _Lines] | None:
    global _last_index
    last = _last_index
    if last is not None and last[0] == joined:
        return last[1], last[2]
    folded = fold(joined)
    if len(folded) != len(joined):
        return None
    starts = list(itertools.accumulate(map((1).__add__, map(len, lines)), initial=0))
    literals = Literals(folded)
    lines_of = _Lines(literals, starts)
    _last_index = (joined, literals, lines_of)
    return literals, lines_of


class LineGate:
    """Which of some regexes can match which lines of one text: a line that lacks
    a regex's required literals cannot hold a match, so the regex need not run
    there. Built once per text with a few substring scans of the whole text."""

    def __init__(self, lines: list[str], regexes: Iterable[re.Pattern[str]]) -> None:
        self._lines: dict[re.Pattern[str], frozenset[int] | None] = {}
        joined = "\n".join(lines)
        if len(joined) < GATE_FROM:
            return  # a small text: every regex runs on every line (cheaper than plans)
        index = _text_index(joined, lines)
        if index is None:
            return  # positions would not line up: every regex runs on every line
        literals, lines_of = index
        for regex in regexes:
            requirement = plan(regex).requirement
            if not holds(requirement, literals):
                self._lines[regex] = frozenset()  # cannot match anywhere in this text
            else:
                self._lines[regex] = lines_of.of(requirement)

    def lines_for(self, regexes: Iterable[re.Pattern[str]]) -> frozenset[int] | None:
        """The lines where one of ``regexes`` may match; None: maybe any."""
        sets = [self._lines.get(regex) for regex in regexes]
        if any(s is None for s in sets):
            return None
        return frozenset().union(*sets)  # type: ignore[arg-type]

    def for_line(self, index: int) -> Allow:
        lines = self._lines
        return lambda regex: (allowed := lines.get(regex)) is None or index in allowed
