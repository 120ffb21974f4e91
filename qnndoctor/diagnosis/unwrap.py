"""A text re-wrapped at a fixed width, read with its lines rejoined.

A mail client, ``fold -s``, ``textwrap`` or a terminal-width reformat breaks
every line longer than some width at its last space before it. The catalogue's
literal spaces accept such a break already (``wrapping``), but a pattern that
spans text with ``[^\\n]*``, ``[^\\n]{0,120}`` or ``\\s+`` between two
messages' words does not: ``InferenceSession('model.onnx',\\nso, providers=
['QNNExecutionProvider'])`` is one source line wrapped in two.

``rejoined`` recognises such a text by its shape and gives it back with each
break (a line that stops short only because its next word did not fit)
joined by a space: the same length, so every position in it is the same
position in the text as written. The engine tries a pattern on it only when
the pattern does not match the text as written.

The shape, for a width W (40 to 250 columns; a text of at most MAX_LINES):
- W is the narrowest width at which no line has a space the wrap would have
  broken it at (a long path or a run of carets stays whole, longer than W);
- a break is a line that ends only because the next line's first word would
  have crossed W, where that next line does not begin like it (two records
  of one log, "2025-02-13 16:36:34.647 ...", begin alike; a continuation
  rarely does);
- at least ``MIN_BREAKS`` breaks show a wrap (a line shorter than W, the
  next line's first word short and not indented: a line as long as the
  longest ends there anyway, and any line ends "close" to a run of carets
  that follows it), and the breaks are a quarter of the lines longer than
  W/2 at least.
A log as written rarely has this shape: its longest line is one line, and
few others end within a short word of it. Measured on every corpus text as
written (tests/diagnosis_corpus, 646 texts): one has it, dev-040, an issue's
prose that its author wrapped at 77 columns.
"""

from __future__ import annotations

import itertools
import string

MIN_WIDTH, MAX_WIDTH = 40, 250
MIN_BREAKS = 2
MAX_LINES = 5_000
_EARLY_SPACE = MIN_WIDTH  # a line with a space before this column breaks at any width


def _first_space(line: str) -> int:
    """Where a wrap could break ``line`` first (a space after its first
    character), or its length when it has none."""
    at = line.find(" ", 1)
    return len(line) if at < 0 else at


def _first_word(line: str) -> int:
    """The width of what begins ``line`` up to its first breakable space
    (leading blanks included)."""
    body = line.lstrip(" ")
    word = body.find(" ")
    return len(line) - len(body) + (len(body) if word < 0 else word)


def width(lines: list[str]) -> int | None:
    """The width ``lines`` were wrapped at, or None when they read as written
    (or are more than MAX_LINES: a pasted message is wrapped, a saved log is not)."""
    if len(lines) > MAX_LINES:
        return None
    measured = [(len(line), _first_space(line)) for line in lines]
    breakable = [length for length, space in measured if space < min(_EARLY_SPACE, length)]
    if not breakable:
        return None
    # The narrowest width at which no line has a space the wrap would have
    # broken it at: every line longer than it has its first space beyond it.
    wrap = max(breakable)
    for length, space in sorted(measured):
        if length > wrap and space < wrap:
            wrap = length  # the shortest line that the width so far would have broken
    if not MIN_WIDTH <= wrap <= MAX_WIDTH:
        return None
    # a quick look first (a long log is no wrapped text): what shows a wrap
    # (below) is a line shorter than the width by less than a short word
    band = wrap - 1 - wrap // _SHORT_WORD
    if sum(1 for length, _ in measured if band <= length < wrap) < MIN_BREAKS:
        return None
    breaks = _breaks(lines, wrap)
    # What shows a wrap: a line shorter than the width that ends because a short
    # word did not fit after it (a line as long as the longest ends there anyway,
    # any line comes close to a run of carets or a long path that follows it).
    short = sum(1 for index in breaks if _shows_wrap(lines[index], lines[index + 1], wrap))
    long_lines = sum(1 for line in lines if len(line) > wrap // 2)
    return wrap if short >= MIN_BREAKS and 4 * len(breaks) >= long_lines else None


_SHAPE = str.maketrans(
    string.ascii_letters + string.digits, "a" * len(string.ascii_letters) + "9" * 10
)
_SHORT_WORD = 4  # a word of at most a quarter of the width is a short one
_SHAPED = 8  # characters of a line's beginning compared on


def _alike(line: str, following: str) -> bool:
    """Whether two lines begin alike, letters and digits made alike: two
    records of one log ("2025-02-13 16:36:34.647 ...", "[E:onnxruntime:, ...")
    do; a wrap's continuation rarely begins like the line it continues (two
    plain words do not count: prose begins with words)."""
    shape = line[:_SHAPED].translate(_SHAPE)
    return shape == following[:_SHAPED].translate(_SHAPE) and shape.strip("a") != ""


def _shows_wrap(line: str, following: str, wrap: int) -> bool:
    return (
        len(line) < wrap
        and not following[:1].isspace()
        and _first_word(following) <= wrap // _SHORT_WORD
    )


def _breaks(lines: list[str], wrap: int) -> list[int]:
    """The indices of the lines that end only because their next line's first
    word would have crossed ``wrap``, or that are one word longer than ``wrap``
    (and whose next line does not begin a record like theirs)."""
    found: list[int] = []
    for index, (line, following) in enumerate(itertools.pairwise(lines)):
        length = len(line)
        if length <= wrap:
            if length + 1 + _first_word(following) <= wrap:
                continue
        # a word longer than the width on a line of its own (textwrap's way),
        # the rest of its line on the next one
        elif _first_space(line) < length or following[:1].isspace():
            continue
        if line.strip() and following.strip() and not _alike(line, following):
            found.append(index)
    return found


def rejoined(text: str) -> str | None:
    """``text`` with the line breaks of a fixed-width wrap turned back into the
    spaces they replaced (same length), or None when it is not wrapped."""
    lines = text.split("\n")
    wrap = width(lines)
    if wrap is None:
        return None
    gaps = ["\n"] * len(lines)
    for index in _breaks(lines, wrap):
        gaps[index] = " "
    return "".join(line + gap for line, gap in zip(lines, gaps, strict=True))[:-1]
