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
- the same, one level down, in a kept class: runs of its boring methods
  (at the indentation of its first ``def`` or decorator) become one
  ``pass`` line each (verified to be a ``pass`` in that class's body), are
  checked alone inside ``class _:``, and are parsed and put in place of
  their ``pass`` when the reader reaches the class and one names a
  reachable name.
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
_CLASS = re.compile(r"^class\b", re.M)
_METHOD = re.compile(r"^([ \t]+)(?:@|(?:async[ \t]+)?def\b)", re.M)
_AT_INDENT: dict[str, re.Pattern[str]] = {}
_TRIPLES = ('"' * 3, "'" * 3)


@dataclass(frozen=True)
class Block:
    """Lines ``first``..``end`` - 1 (0-based) of the text, offsets
    ``start``..``stop``; ``skippable``: one import, or one definition (with
    its decorators) with no _INTERESTING line; ``kinds``: of its lines that
    start at its indentation."""

    start: int
    stop: int
    first: int
    end: int
    skippable: bool
    kinds: tuple[str, ...]


@dataclass(frozen=True)
class Region:
    """Consecutive skippable blocks: their text, first line (1-based), and
    for methods the indentation and the first line of their class."""

    text: str
    line: int
    indent: str = ""
    owner: int = 0


@dataclass
class Split:
    """The text to parse (in parts), its blanked regions, and the lines
    where a kept block starts -> (offset of that line, indentation, the
    first line of its class or 0)."""

    parts: list[str]
    regions: list[Region]
    tops: dict[int, tuple[int, str, int]]


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


def _pieces(text: str, start: int, stop: int, indent: str) -> list[tuple[int, str]]:
    """(offset, kind) of each line in text[start:stop] that starts with code
    right after ``indent``."""
    pattern = _AT_INDENT.get(indent)
    if pattern is None:
        pattern = _AT_INDENT.setdefault(indent, re.compile("^" + re.escape(indent) + r"[^\s#]", re.M))
    return [(m.start(), _kind(text, m.start() + len(indent))) for m in pattern.finditer(text, start, stop)]


def _open(segment: str) -> bool:
    """Whether ``segment`` may end inside a string, brackets or a continued
    line (a guess: the next line is then kept in the same block; a wrong
    guess costs speed, never correctness)."""
    return (
        any(segment.count(quotes) % 2 == 1 for quotes in _TRIPLES)
        or segment.rstrip(" \t\n").endswith("\\")
        or segment.count("(") + segment.count("[") + segment.count("{")
        > segment.count(")") + segment.count("]") + segment.count("}")
    )


def _group(text: str, pieces: list[tuple[int, str]], stop_all: int, line: int, counts: list[int]) -> list[Block]:
    """Blocks from ``pieces`` (the first starts on 0-based line ``line``)."""
    out: list[Block] = []
    index = 0
    while index < len(pieces):
        start, kind = pieces[index]
        kinds = [kind]
        index += 1
        stop = pieces[index][0] if index < len(pieces) else stop_all
        while index < len(pieces):
            next_kind = pieces[index][1]
            decorating = kinds[0] == "decorator" and "definition" not in kinds
            if not (decorating or next_kind in ("clause", "closing") or _open(text[start:stop])):
                break
            kinds.append(next_kind)
            index += 1
            stop = pieces[index][0] if index < len(pieces) else stop_all
        end = line + text.count("\n", start, stop)
        last = len(counts) - 1 if stop == len(text) else end
        boring = counts[last] == counts[line]
        out.append(Block(start, stop, line, end, _skippable(kinds, text[start:stop], boring), tuple(kinds)))
        line = end
    return out


def blocks(text: str, counts: list[int]) -> list[Block]:
    """``text`` (normalized) cut into top-level blocks (the lines before the
    first one belong to it); ``counts`` from interesting_lines."""
    pieces = _pieces(text, 0, len(text), "")
    if pieces:
        pieces[0] = (0, pieces[0][1])
    return _group(text, pieces, len(text), 0, counts)


def _skippable(kinds: list[str], segment: str, boring: bool) -> bool:
    if not boring:
        return False
    head = [k for k in kinds if k not in ("decorator", "closing")]  # ')' cannot start a statement
    if head == ["definition"]:
        return True
    return head[:1] == ["import"] and all(k == "closing" for k in head[1:]) and ";" not in segment


def _split(text: str, counts: list[int]) -> Split | None:
    """The text with the regions blanked; None when nothing would be skipped."""
    split = Split([], [], {})
    run: list[Block] = []
    for block in blocks(text, counts):
        if block.skippable:
            run.append(block)
            continue
        _close(text, run, split, "", 0)
        at = _first_code(text, block.start)
        top = block.first + 1 + text.count("\n", block.start, at)
        split.tops[top] = (at, "", 0)
        if not _members(text, block, top, counts, split):
            split.parts.append(text[block.start : block.stop])
    _close(text, run, split, "", 0)
    return split if split.regions else None


def _close(text: str, run: list[Block], split: Split, indent: str, owner: int) -> None:
    """Blank out a run of skippable blocks (a run of methods becomes one ``pass``)."""
    if not run:
        return
    region = text[run[0].start : run[-1].stop]
    split.regions.append(Region(region, run[0].first + 1, indent, owner))
    lines = region.count("\n")
    split.parts.append(indent + "pass" + "\n" * lines if owner else "\n" * lines)
    run.clear()


def _members(text: str, block: Block, top: int, counts: list[int], split: Split) -> bool:
    """Cut a kept class into its methods; False (the block is kept whole)
    when it is not a class or has no method to skip."""
    head = [k for k in block.kinds if k not in ("decorator", "closing")]
    header = _CLASS.search(text, split.tops[top][0], block.stop)
    if head[:1] != ["definition"] or header is None:
        return False
    method = _METHOD.search(text, header.end(), block.stop)
    if method is None:
        return False
    indent = method.group(1)
    pieces = _pieces(text, method.start(), block.stop, indent)
    members = _group(text, pieces, block.stop, block.first + text.count("\n", block.start, method.start()), counts)
    if not any(m.skippable for m in members):
        return False
    split.parts.append(text[block.start : method.start()])
    run: list[Block] = []
    for member in members:
        if member.skippable:
            run.append(member)
            continue
        _close(text, run, split, indent, top)
        split.tops[member.first + 1] = (member.start, indent, top)
        split.parts.append(text[member.start : member.stop])
    _close(text, run, split, indent, top)
    return True


def _first_code(text: str, start: int) -> int:
    """The offset of the first line at or after ``start`` that starts at column 0 with code."""
    match = _START.search(text, start)
    return match.start() if match else start


def _line_of(node: ast.stmt) -> int:
    """The line of a statement's first token (a decorator's '@')."""
    decorators = getattr(node, "decorator_list", None)
    return int(decorators[0].lineno) if decorators else node.lineno


def _starts_at(node: ast.stmt, text: str, offset: int, indent: str) -> bool:
    """Whether ``node``'s first token is right after ``indent`` on the line at ``offset``."""
    decorators = getattr(node, "decorator_list", None)
    if decorators:
        first = decorators[0]
        return text.startswith(indent, offset) and text[offset + len(indent) : offset + first.col_offset].strip() == "@"
    return bool(node.col_offset == len(indent.encode()))


def _verified(tree: ast.Module, text: str, split: Split) -> dict[int, ast.stmt] | None:
    """Each kept block and each ``pass`` put for a run of methods is a
    statement of its body where it should be: {the line of each such
    ``pass``: its node}, or None."""
    by_line: dict[tuple[int, int], ast.stmt] = {}
    for node in tree.body:
        by_line.setdefault((0, _line_of(node)), node)
        if isinstance(node, ast.ClassDef):
            for inner in node.body:
                by_line.setdefault((_line_of(node), _line_of(inner)), inner)
    for line, (offset, indent, owner) in split.tops.items():
        found = by_line.get((owner, line))
        if found is None or not _starts_at(found, text, offset, indent):
            return None
    placeholders: dict[int, ast.stmt] = {}
    for region in split.regions:
        if region.owner:
            found = by_line.get((region.owner, region.line))
            if not isinstance(found, ast.Pass) or found.col_offset != len(region.indent.encode()):
                return None
            placeholders[region.line] = found
    return placeholders


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
    try:
        tree = ast.parse("".join(split.parts), filename=path)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    placeholders = _verified(tree, text, split)
    if placeholders is None:
        return None
    reader = Reader(tree, text, counts)
    try:
        parsed = _read(reader, tree, split.regions, placeholders, path)
    except RecursionError:
        return None
    if parsed is None:
        return None
    for region in split.regions:
        if region.line in parsed:
            continue
        try:
            symtable.symtable("class _:\n" + region.text if region.owner else region.text, path, "exec")
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            return None
    return finish(reader)


def _alone(region: Region, path: str) -> list[ast.stmt] | None:
    """The statements of a region parsed alone, on their own lines (a run
    of methods inside ``class _:`` on the line before it)."""
    if region.owner:
        source = "\n" * (region.line - 2) + "class _:\n" + region.text
    else:
        source = "\n" * (region.line - 1) + region.text
    try:
        tree = ast.parse(source, filename=path)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    if not region.owner:
        return tree.body
    holder = tree.body[0] if len(tree.body) == 1 else None
    return holder.body if isinstance(holder, ast.ClassDef) else None


def _read(
    reader: Reader, tree: ast.Module, regions: list[Region], placeholders: dict[int, ast.stmt], path: str
) -> set[int] | None:
    """Read the kept statements in order. A region that names a reachable
    name (a definition in it may be read) is parsed alone and read in its
    place (a run of methods: put in its class before the class is read).
    Returns the first lines of the regions parsed so, None when one does
    not parse alone."""
    parsed: set[int] = set()
    pending = [r for r in reversed(regions) if not r.owner]
    methods: dict[int, list[Region]] = {}
    for region in regions:
        if region.owner:
            methods.setdefault(region.owner, []).append(region)
    for statement in [*tree.body, None]:
        while pending and (statement is None or pending[-1].line < statement.lineno):
            region = pending.pop()
            if _inert(reader, region):
                continue
            inner = _alone(region, path)
            if inner is None:
                return None
            parsed.add(region.line)
            reader.body(inner, reader.module)
        if statement is None:
            break
        runs = methods.get(_line_of(statement), [])
        if isinstance(statement, ast.ClassDef) and not _methods_back(reader, statement, runs, placeholders, path, parsed):
            return None
        reader.statement(statement, reader.module)
    return parsed


def _methods_back(
    reader: Reader, node: ast.ClassDef, regions: list[Region], placeholders: dict[int, ast.stmt], path: str, parsed: set[int]
) -> bool:
    """Put each run of methods of ``node`` that names a reachable name back
    in place of its ``pass`` (False when one does not parse alone)."""
    for region in regions:
        if _inert(reader, region):
            continue
        inner = _alone(region, path)
        if inner is None:
            return False
        parsed.add(region.line)
        at = next(i for i, statement in enumerate(node.body) if statement is placeholders[region.line])
        node.body[at : at + 1] = inner
    return True


def _inert(reader: Reader, region: Region) -> bool:
    return not any(name in region.text for name in reader.reachable())
