"""A long log read once per distinct line.

A verbose ORT + QNN session repeats itself: the same validation chatter for
every node, the same option dump for every graph, the same session for every
run of a loop. Reading each of its lines against ~950 catalogue regexes, the
text facts and the log levels costs seconds per hundred thousand lines, and
nothing a repeated line says is new: the first occurrence of a message is
where it matches first, sets a fact first, and has the same level.

So a text longer than ``COMPACT_FROM`` characters is compacted before it is
diagnosed: a line whose content (the line without a leading timestamp or line
number) was seen before is blanked, unless a line beside it is new (a message that spans
lines, or a traceback's context, is kept whole) or it continues a record
(an indented line) that is kept. Blanked lines stay as empty lines, so every
line keeps its number and no two lines that were apart become neighbours.
Counted for the answer: what ``Compacted`` says (lines read, lines kept).

``Compactor`` does this while the text streams in (``feed`` any chunks,
``finish``): the whole text is never held, only its distinct lines.
"""

from __future__ import annotations

from dataclasses import dataclass

COMPACT_FROM = 64 * 1024  # characters: a shorter text is diagnosed as it is
# What a line's content is compared on: the line without what leads it of digits,
# blanks and a timestamp's punctuation ("2026-11-28 04:02:18.592253323 ",
# logcat's "11-27 13:56:51.123 20286 20355 ", an editor's line number).
_LEADING = "0123456789-:.,+/ \t"
_MAX_RECORD = 64  # continuation lines kept with their record's first line (severity)


@dataclass(frozen=True)
class Compacted:
    text: str  # the text to diagnose: repeated lines blanked, line numbers kept
    lines: int  # lines read
    kept: int  # lines not blanked (empty lines count as blanked)
    compacted: bool  # False: the text was short and is unchanged


class Compactor:
    """Compacts a text fed in chunks (any split, even inside a line). Each
    batch of lines is decided with list operations, not a step per line."""

    def __init__(self) -> None:
        self._seen: set[str] = set()
        self._out: list[str] = []
        self._partial = ""  # the unfinished last line of the chunks so far
        # The last complete line is held back until its next neighbour is known.
        self._held: tuple[str, bool] | None = None
        self._held_previous_new = False  # whether the line before the held one is new
        self._recent: list[str] = []  # the raw lines before the last batch (a record's)

    def feed(self, chunk: str) -> None:
        if not chunk:
            return
        text = self._partial + chunk
        cut = text.rfind("\n")
        if cut < 0:
            self._partial = text
            return
        self._partial = text[cut + 1 :]
        self._batch(text[:cut])

    def finish(self) -> str:
        """The compacted text (with a final line break where the text had one)."""
        final, self._partial = self._partial, ""
        if final:
            self._batch(final)
        if self._held is not None:
            line, new = self._held
            self._decide([line], [new], self._held_previous_new, False)
            self._held = None
        return "\n".join(self._out) + ("\n" if self._out and not final else "")

    @property
    def lines(self) -> int:
        return len(self._out) + (self._held is not None)

    @property
    def kept(self) -> int:
        return len(self._out) - self._out.count("")

    def _batch(self, text: str) -> None:
        lines = text.split("\n")
        seen = self._seen
        news: list[bool] = []
        for line in lines:
            key = line.lstrip(_LEADING)
            news.append(key not in seen)
            seen.add(key)
        if self._held is not None:
            lines.insert(0, self._held[0])
            news.insert(0, self._held[1])
        self._held = lines.pop(), news.pop()
        if lines:
            self._decide(lines, news, self._held_previous_new, self._held[1])
            self._held_previous_new = news[-1]

    def _decide(self, lines: list[str], news: list[bool], before: bool, after: bool) -> None:
        """Keep or blank ``lines`` (``news``: which are new; ``before`` / ``after``:
        whether their neighbours outside the batch are)."""
        base = len(self._out)
        previous = [before, *news[:-1]]
        following = [*news[1:], after]
        out = [
            line if line and (a or b or c) else ""
            for line, a, b, c in zip(lines, previous, news, following, strict=True)
        ]
        continuing = [i for i, kept in enumerate(out) if kept and kept[:1].isspace()]
        self._out += out
        for i in continuing:  # a record's level is read from the lines above it
            for j in range(i - 1, i - 1 - _MAX_RECORD, -1):
                raw = lines[j] if j >= 0 else self._recent[j] if -j <= len(self._recent) else None
                if raw is None or base + j < 0:
                    break
                self._out[base + j] = raw
                if not raw[:1].isspace():
                    break  # the record's first line
        self._recent = (self._recent + lines)[-_MAX_RECORD:]


def compact(text: str) -> Compacted:
    """``text`` compacted when it is longer than COMPACT_FROM characters."""
    if len(text) <= COMPACT_FROM:
        lines = text.count("\n") + (bool(text) and not text.endswith("\n"))
        return Compacted(text, lines, lines, False)
    compactor = Compactor()
    compactor.feed(text)
    out = compactor.finish()
    return Compacted(out, compactor.lines, compactor.kept, True)
