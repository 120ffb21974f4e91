"""A failure log read from a file or a pipe: streamed, capped, and refused
when it is not text.

``read_log`` reads in chunks: a short log whole, a long one through
``compact.Compactor`` (each distinct line once), so memory follows the
log's distinct lines, not its length. Input is capped (``MAX_LOG_BYTES``,
``MAX_LOG_LINES``): a pipe that never ends is read up to the cap and the
answer says the rest was not read. Input that is not text (NUL bytes or
mostly undecodable: a binary, an archive, random bytes) is refused from its
first chunk with ``NotText`` instead of being diagnosed (50 MB of random
bytes used to take 38 s and 626 MB and reported "facts" read from byte
noise). That holds for a few bytes too: ``x\\0\\1\\2`` is refused, not read as
UTF-16 (``decoding.encoding_of`` takes a short sample for BOM-less UTF-16
only when NULs stand beside nearly every character). An empty input, a lone
byte order mark and a character cut short at the end are no binary: they
read as empty text, or as the text before the cut. Within text, a line that
does not read as text (``readable``) is blanked before anything reads it.
"""

from __future__ import annotations

import codecs
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import IO

from ..decoding import encoding_of
from .compact import COMPACT_FROM, Compacted, Compactor

MAX_LOG_BYTES = 256 * 1024 * 1024  # read at most this much of a log (documented: docs/diagnosis.md)
MAX_LOG_LINES = 4_000_000
CHUNK = 1024 * 1024  # bytes per read: memory follows the chunk, not the log
SAMPLE = 64 * 1024  # what decides whether the input is text at all
MAX_NOISE = 0.05  # of a sample's characters: NUL, other control bytes, undecodable bytes
# Characters no text log holds: C0 controls other than tab, line ends, form feed
# and escape (terminal colours), and U+FFFD (a byte the encoding could not read).
_NOISE = re.compile(r"[\x00-\x08\x0e-\x1a\x1c-\x1f\ufffd]")
# The same characters for a test in C-speed passes (holds_noise): the ones below
# 128 as bytes, kept by deleting every other byte, and U+FFFD in UTF-8.
_NOISE_BYTES = bytes((*range(0x00, 0x09), *range(0x0E, 0x1B), *range(0x1C, 0x20)))
_NOT_NOISE_BYTES = bytes(sorted(frozenset(range(256)) - frozenset(_NOISE_BYTES)))
_REPLACEMENT = "\ufffd".encode()
_NOISY_LINE = 0.3  # a line with more noise than this does not read as text


class NotText(ValueError):
    """The input is not text."""


@dataclass(frozen=True)
class LogRead:
    read: Compacted
    bytes_read: int
    characters: int  # decoded
    truncated: str | None  # why reading stopped before the end (the cap), or None


def noise(text: str) -> float:
    """The share of ``text``'s characters that no text log holds."""
    return len(_NOISE.findall(text)) / len(text) if text else 0.0


def refusal(sample: str, source: str) -> str | None:
    """Why the input whose first characters are ``sample`` is not text, or None."""
    if not sample:
        return None
    share = noise(sample)
    if share > MAX_NOISE:
        nul = sample.count("\x00")
        what = f"{nul} NUL byte{'s' if nul != 1 else ''} and " if nul else ""
        return (
            f"{source} is not a text log: {what}{share:.0%} of its first "
            f"{len(sample):,} characters are control or undecodable bytes "
            "(a binary file, an archive or a core dump?); give the log as text"
        )
    return None


def holds_noise(text: str) -> bool:
    """``_NOISE.search(text) is not None``, four times faster on a big clean log
    than the regex scan: UTF-8 writes each code point below 128 as that byte and
    never uses such a byte inside another code point's; U+FFFD is EF BF BD."""
    raw = text.encode("utf-8", "surrogatepass")
    return bool(raw.translate(None, _NOT_NOISE_BYTES)) or _REPLACEMENT in raw


def readable(text: str) -> str:
    """``text`` as far as it reads as text: a line that is mostly noise (more
    than 30 % control or undecodable characters) is blanked, the noise of any
    other line is taken out. Nothing is read from noise."""
    if not holds_noise(text):
        return text
    lines = text.split("\n")
    for index, line in enumerate(lines):
        if _NOISE.search(line):
            lines[index] = "" if noise(line) > _NOISY_LINE else _NOISE.sub("", line)
    return "\n".join(lines)


def read_log(
    handle: IO[bytes],
    source: str,
    *,
    max_bytes: int = MAX_LOG_BYTES,
    max_lines: int = MAX_LOG_LINES,
    progress: Callable[[int], None] | None = None,
) -> LogRead:
    """Read a log from ``handle`` (``source``: its name, for messages). Raises
    NotText when the input is not text, OSError when it cannot be read."""
    first = handle.read(min(CHUNK, max_bytes))
    encoding, skip = encoding_of(first)
    decoder = codecs.getincrementaldecoder(encoding)("replace")
    text = decoder.decode(first[skip:])
    if (why := refusal(text[:SAMPLE], source)) is not None:
        raise NotText(why)
    total, lines, characters = len(first), text.count("\n"), len(text)
    truncated: str | None = None
    compactor: Compactor | None = None
    parts = [text]
    size = len(text)
    while True:
        if compactor is None and size > COMPACT_FROM:
            compactor = Compactor()  # long: from here on, each distinct line once
            for part in parts:
                compactor.feed(readable(part))
            parts = []
        if progress is not None:
            progress(total)
        if total >= max_bytes or lines >= max_lines:
            if handle.read(1):
                limit = (
                    f"{max_bytes // (1024 * 1024)} MiB"
                    if total >= max_bytes
                    else f"{max_lines:,} lines"
                )
                truncated = f"only the first {limit} of {source} were read (the cap)"
            break
        raw = handle.read(min(CHUNK, max_bytes - total))
        if not raw:
            break
        total += len(raw)
        chunk = decoder.decode(raw)
        lines += chunk.count("\n")
        characters += len(chunk)
        if compactor is None:
            parts.append(chunk)
            size += len(chunk)
        else:
            compactor.feed(readable(chunk))
    # a character cut short by the end of the input (or the cap) is no noise: left out
    tail = decoder.decode(b"", final=True).rstrip("\ufffd")
    characters += len(tail)
    if compactor is None:
        whole = readable("".join(parts) + tail)
        count = whole.count("\n") + (bool(whole) and not whole.endswith("\n"))
        return LogRead(Compacted(whole, count, count, False), total, characters, truncated)
    compactor.feed(readable(tail))
    out = compactor.finish()
    return LogRead(
        Compacted(out, compactor.lines, compactor.kept, True), total, characters, truncated
    )
