"""Bytes from a user's file as text, whichever way Windows tools wrote it.

Windows PowerShell 5.1 writes UTF-16 (little-endian, with a byte order
mark) for ``>``, ``Out-File`` and ``Tee-Object``; Notepad and PowerShell 7's
``-Encoding utf8BOM`` write UTF-8 with a BOM. So ``qnndoctor check --json >
ticket.json`` or ``python app.py 2> log.txt`` on a customer's machine gives a
file that a plain UTF-8 decode rejects (a ticket) or turns into noise that
matches nothing (a log). A BOM decides; without one, UTF-16 shows itself by
NUL bytes on every other position; anything else is read as UTF-8.
"""

from __future__ import annotations

import codecs

_BOMS = (  # longest first: the UTF-32 LE mark begins with the UTF-16 LE one
    (codecs.BOM_UTF32_LE, "utf-32-le"),
    (codecs.BOM_UTF32_BE, "utf-32-be"),
    (codecs.BOM_UTF8, "utf-8"),
    (codecs.BOM_UTF16_LE, "utf-16-le"),
    (codecs.BOM_UTF16_BE, "utf-16-be"),
)
_SAMPLE = 4096
_NUL_SHARE = 0.4  # of a sample's characters with a NUL beside them: UTF-16 without a BOM
_SHORT = 64  # characters: a sample with fewer must show the NULs nearly throughout
_NUL_SHARE_SHORT = 0.9


def encoding_of(raw: bytes) -> tuple[str, int]:
    """The encoding of ``raw`` and the length of its byte order mark."""
    for bom, name in _BOMS:
        if raw.startswith(bom):
            return name, len(bom)
    sample = raw[:_SAMPLE]
    if len(sample) >= 4:
        even, odd = sample[0::2], sample[1::2]
        # ASCII text in UTF-16: a NUL beside every character, on one side only
        # (beside most of them: other letters have no NUL). A short sample says
        # little: it shows the NULs beside nearly every character or it is not
        # taken for UTF-16 (4 bytes "x\0\1\2" are no text in any encoding).
        share = _NUL_SHARE if len(odd) >= _SHORT else _NUL_SHARE_SHORT
        if odd.count(0) > share * len(odd) and even.count(0) < 0.05 * len(even):
            return "utf-16-le", 0
        if even.count(0) > share * len(even) and odd.count(0) < 0.05 * len(odd):
            return "utf-16-be", 0
    return "utf-8", 0


def decode(raw: bytes, errors: str = "strict") -> str:
    """``raw`` as text (a BOM is dropped). With ``errors="strict"`` a byte
    that is not in the encoding raises ``UnicodeDecodeError`` as usual."""
    encoding, skip = encoding_of(raw)
    return raw[skip:].decode(encoding, errors)
