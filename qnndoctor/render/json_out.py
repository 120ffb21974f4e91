"""JSON renderer: exactly one document."""

from __future__ import annotations

import codecs
import json
from typing import Any, TextIO


def render(report: dict[str, Any], stream: TextIO) -> None:
    stream.write(for_stream(report, stream))
    stream.write("\n")


def for_stream(document: Any, stream: TextIO) -> str:
    """``document`` as JSON text for ``stream``: its characters as they are on
    a UTF-8 stream; on any other (Windows' code page, where Python writes
    redirected output, which PowerShell then re-decodes with another one)
    ASCII with ``\\u`` escapes, which no code page can damage: a path with
    characters outside it ("Jürgen 李") would otherwise reach the ticket as
    "?"."""
    return json.dumps(document, indent=2, ensure_ascii=not _utf8(stream))


def _utf8(stream: TextIO) -> bool:
    encoding = getattr(stream, "encoding", None) or "utf-8"  # io.StringIO: no encoding
    try:
        return codecs.lookup(encoding).name == "utf-8"
    except LookupError:
        return False
