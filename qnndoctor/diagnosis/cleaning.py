"""Cleaning a failure text's lines before any reader sees them: colour codes
out, hex error codes read in decimal too, quote marks, a line-number gutter
and Android logcat prefixes (``logcat``) taken off, every line cut at
``MAX_LINE`` characters."""

from __future__ import annotations

import re

from . import logcat

_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
_QUOTE = re.compile(r"^(?:> ?)+")  # Markdown quote markers, nested ones too
MAX_LINE = 4000
# QNN's own log lines write error codes in hex ("QnnDsp <E> Failed to get
# context binary size with err 0x7532"), onnxruntime and the catalogue in
# decimal (the same failure's next line: "Error 30002", pytorch/executorch#7946).
# A non-zero code of up to four hex digits after err / error / code / status
# also reads in decimal, appended so the line's own words stay as they were.
_HEX_CODE = re.compile(
    r"\b(err|error|code|status)(\s*[:=]?\s*)0x(0*[1-9a-fA-F][0-9a-fA-F]{0,3})\b", re.I
)


_last_clean: tuple[str, list[str]] | None = None  # one text is cleaned for several readers


def clean_lines(text: str) -> list[str]:
    """``text``'s lines as every reader sees them: colour codes out, hex codes
    read in decimal too, quote marks, a line-number gutter and logcat
    prefixes taken off."""
    global _last_clean
    last = _last_clean
    if last is not None and last[0] is text:
        return list(last[1])
    lines = _cleaned(text)
    _last_clean = (text, lines)
    return list(lines)


def _cleaned(text: str) -> list[str]:
    if "\x1b" in text:
        lines = [
            (_ANSI.sub("", line) if "\x1b" in line else line)[:MAX_LINE]
            for line in text.splitlines()
        ]
    else:  # no colour codes to remove (the common case: skip the regex)
        lines = [line[:MAX_LINE] for line in text.splitlines()]
    if "0x" in text:
        lines = [_decimal_codes(line) if "0x" in line else line for line in lines]
    if "\n>" in text or text.startswith(">"):
        # a log quoted in an issue comment ("> [E:onnxruntime...]") reads as the log
        lines = [_QUOTE.sub("", line, count=1) if line.startswith(">") else line for line in lines]
    if lines and _NUMBERED.match(lines[0]):
        lines = _unnumbered(lines)
    if logcat.has_prefixes(lines):
        lines = logcat.unprefixed(lines)
    return lines


# An editor's or a pastebin's gutter: "  12  text", "12: text", "12 | text".
_NUMBERED = re.compile(r"[ \t]*(\d{1,7})(?:[ \t]?[:|])?(?=[ \t]|$)")


def _unnumbered(lines: list[str]) -> list[str]:
    """``lines`` without their line numbers, when every line begins with its
    own number, counting up by one (a log pasted with its gutter: messages
    that span lines match again, indentation kept); else ``lines`` as they are."""
    found = [_NUMBERED.match(line) for line in lines]
    first = found[0]
    if first is None or len(lines) < 2:
        return lines
    start = int(first.group(1))
    gaps: list[int] = []  # the blanks after each number, on lines with text after it
    for index, (line, match) in enumerate(zip(lines, found, strict=True)):
        if match is None or int(match.group(1)) != start + index:
            return lines
        rest = line[match.end() :]
        if rest.strip():
            gaps.append(len(rest) - len(rest.lstrip(" \t")))
    gap = min(gaps, default=0)
    return [line[match.end() + gap :] for line, match in zip(lines, found, strict=True) if match]


def _decimal_codes(line: str) -> str:
    """``err 0x1388`` reads ``err 0x1388 (err 5000)``."""
    return _HEX_CODE.sub(lambda m: f"{m.group(0)} ({m.group(1)} {int(m.group(3), 16)})", line)
