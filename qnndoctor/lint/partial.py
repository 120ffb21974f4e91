"""Parse only the top-level statements of a module that the reader can act
on, and prove the rest is valid Python without building its tree.

A module is cut at the lines that start at column 0 (blocks). Runs of
blocks that are only imports and definitions with no _INTERESTING line
(regions) are blanked out (same line count, so every position is kept) and
the rest is parsed with ``ast.parse``; each region is checked alone with
``symtable`` (the same parser, no Python objects for its tree: about 0.6x
the CPU of ``ast.parse``). The result is the whole-file reading or None
(the caller then parses the whole file, so errors are reported as before):

- every cut must be a real statement start. The parsed text must hold a
  top-level statement starting at column 0 on the first line of each kept
  block, and each region must parse alone: a cut inside a string, brackets
  or a continued line fails one or the other (a kept block that ends inside
  a construct swallows the blank lines and the next kept block's first
  line; a region that starts or ends inside one does not parse alone).
- a region's statements are imports (nothing for the reader) and
  definitions whose lines hold no _INTERESTING word; the reader skips such a
  definition unless it names a module-level dict or tracked object
  (``Reader._inert``), which is checked against the region's text when the
  reader reaches it, with the names bound at that point; a region that
  names one is parsed alone (padded to its lines) and read in its place.
- ``from __future__ import barry_as_FLUFL`` changes how later lines parse,
  and ``run_async`` callbacks are looked up among all top-level functions:
  such files are parsed whole.
"""

from __future__ import annotations

import ast
import re
import symtable
from dataclasses import dataclass

from .events import Event
from .prefilter import interesting_lines, normalized
from .pyreader import Reader, finish

_START = re.compile(r"^[^\s#]", re.M)  # a line that starts at column 0 with code
_CLAUSE = re.compile(r"(?:else|elif|except|finally)\b")
_DEFINITION = re.compile(r"(?:async[ \t]+def|def|class)\b")
_IMPORT = re.compile(r"(?:import|from)\b")


@dataclass(frozen=True)
class Block:
    """Lines ``first``..``end`` - 1 (0-based) of the text, offsets
    ``start``..``stop``; ``skippable``: one import, or one definition (with
    its decorators) with no _INTERESTING line."""

    start: int
    stop: int
    first: int
    end: int
    skippable: bool


def _kind(text: str, at: int) -> str:
    char = text[at]
    if char == "@":
        return "decorator"
    if char in ")]}":
        return "closing"
    if _CLAUSE.match(text, at):
        return "clause"
    if _DEFINITION.match(text, at):
        return "definition"
    if _IMPORT.match(text, at):
        return "import"
    return "code"


def _pieces(text: str) -> list[tuple[int, str]]:
    """(offset, kind) of each line that starts at column 0 with code; the
    first one is moved to offset 0 (the lines before it belong to it)."""
    found = [(m.start(), _kind(text, m.start())) for m in _START.finditer(text)]
    if found:
        found[0] = (0, found[0][1])
    return found


def _open(segment: str) -> bool:
    """Whether ``segment`` may end inside a string, brackets or a continued
    line (a guess: the next line is then kept in the same block; a wrong
    guess costs speed, never correctness)."""
    return (
        segment.count('"""') % 2 == 1
        or segment.count("'''") % 2 == 1
        or segment.rstrip(" \t\n").endswith("\\")
        or segment.count("(") + segment.count("[") + segment.count("{")
        > segment.count(")") + segment.count("]") + segment.count("}")
    )


def blocks(text: str, counts: list[int]) -> list[Block]:
    """``text`` (normalized) cut into blocks; ``counts`` from interesting_lines."""
    pieces = _pieces(text)
    out: list[Block] = []
    index = 0
    line = 0
    while index < len(pieces):
        start, kind = pieces[index]
        kinds = [kind]
        index += 1
        stop = pieces[index][0] if index < len(pieces) else len(text)
        while index < len(pieces):
            next_kind = pieces[index][1]
            decorating = kinds[0] == "decorator" and "definition" not in kinds
            if not (decorating or next_kind in ("clause", "closing") or _open(text[start:stop])):
                break
            kinds.append(next_kind)
            index += 1
            stop = pieces[index][0] if index < len(pieces) else len(text)
        end = line + text.count("\n", start, stop)
        last = len(counts) - 1 if stop == len(text) else end
        out.append(Block(start, stop, line, end, _skippable(kinds, text[start:stop], counts[last] == counts[line])))
        line = end
    return out


def _skippable(kinds: list[str], segment: str, boring: bool) -> bool:
    if not boring:
        return False
    head = [k for k in kinds if k != "decorator"]
    if head[:1] == ["definition"] and len(head) == 1:
        return True
    return head[:1] == ["import"] and all(k == "closing" for k in head[1:]) and ";" not in segment


@dataclass(frozen=True)
class Region:
    """Consecutive skippable blocks: their text and first line (1-based)."""

    text: str
    line: int


def _split(text: str, counts: list[int]) -> tuple[str, list[Region], dict[int, int]] | None:
    """The text with the regions blanked, the regions, and the first line
    (1-based) of each kept block with its offset; None when nothing would
    be skipped."""
    kept: list[str] = []
    regions: list[Region] = []
    tops: dict[int, int] = {}
    run: list[Block] = []

    def close_run() -> None:
        if run:
            regions.append(Region(text[run[0].start : run[-1].stop], run[0].first + 1))
            kept.append("\n" * (run[-1].end - run[0].first))
            run.clear()

    for block in blocks(text, counts):
        if block.skippable:
            run.append(block)
            continue
        close_run()
        kept.append(text[block.start : block.stop])
        at = _first_code(text, block.start)
        tops[block.first + 1 + text.count("\n", block.start, at)] = at
    close_run()
    if not regions:
        return None
    return "".join(kept), regions, tops


def _first_code(text: str, start: int) -> int:
    """The offset of the first line at or after ``start`` that starts at column 0 with code."""
    match = _START.search(text, start)
    return match.start() if match else start


def _starts(tree: ast.Module, text: str, line_starts: dict[int, int]) -> set[int]:
    """Lines on which a top-level statement starts at column 0 (for a
    decorated definition: its first decorator's '@')."""
    lines: set[int] = set()
    for node in tree.body:
        decorators = getattr(node, "decorator_list", None)
        if decorators:
            first = decorators[0]
            at = line_starts.get(first.lineno)
            if at is not None and text[at : at + first.col_offset].strip() == "@":
                lines.add(first.lineno)
        elif node.col_offset == 0:
            lines.add(node.lineno)
    return lines


def partial_events(source: str, path: str) -> list[Event] | None:
    """The events of a module read from its interesting parts, exactly as
    reading the whole tree gives them, or None (parse the whole file)."""
    if "barry_as_FLUFL" in source or "run_async" in source:
        return None
    text = normalized(source)
    counts = interesting_lines(text)
    split = _split(text, counts)
    if split is None:
        return None
    masked, regions, tops = split
    try:
        tree = ast.parse(masked, filename=path)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    if not tops.keys() <= _starts(tree, text, tops):
        return None
    reader = Reader(tree, text, counts)
    try:
        parsed = _read(reader, tree, regions, path)
    except RecursionError:
        return None
    if parsed is None:
        return None
    for region in regions:
        if region.line in parsed:
            continue
        try:
            symtable.symtable(region.text, path, "exec")
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            return None
    return finish(reader)


def _read(reader: Reader, tree: ast.Module, regions: list[Region], path: str) -> set[int] | None:
    """Read the kept statements in order. A region that names a reachable
    name (a definition in it may be read) is parsed alone, its lines kept
    by padding, and its statements read in their place. Returns the first
    lines of the regions parsed so, None when one does not parse alone."""
    parsed: set[int] = set()
    pending = list(reversed(regions))
    for statement in [*tree.body, None]:
        while pending and (statement is None or pending[-1].line < statement.lineno):
            region = pending.pop()
            if _inert(reader, region):
                continue
            try:
                inner = ast.parse("\n" * (region.line - 1) + region.text, filename=path)
            except (SyntaxError, ValueError, RecursionError, MemoryError):
                return None
            parsed.add(region.line)
            reader.body(inner.body, reader.module)
        if statement is not None:
            reader.statement(statement, reader.module)
    return parsed


def _inert(reader: Reader, region: Region) -> bool:
    return not any(name in region.text for name in reader.reachable())
