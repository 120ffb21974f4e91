"""The lines of a Python traceback that quote source code, not a message.

Python prints each frame as ``  File "app.py", line 6, in <module>`` followed
by the line of code it was running, indented deeper (and, since 3.11, a line
of carets under the expression)::

    Traceback (most recent call last):
      File "/home/me/app.py", line 6, in <module>
        sess = ort.InferenceSession("m.onnx", providers=["QNNExecutionProvider"])
               ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^
    onnxruntime.capi.onnxruntime_pybind11_state.Fail: ...

A code line says what the program called, not what went wrong: the call above
is right with onnxruntime-qnn 1.x and wrong with 2.x, and either way the
error is elsewhere. So a pattern that matches only on code lines never raises
a candidate by itself (``engine``): it may corroborate one that the message
raised.
"""

from __future__ import annotations

import re
from bisect import bisect_right

_END = 1 << 62  # sorts after every end position: (start, _END) bisects by start alone
_FRAME = re.compile(r'^([ \t]*)File "[^"\n]*", line \d+(?:, in .*)?$', re.MULTILINE)


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" \t"))


def code_spans(text: str) -> tuple[tuple[int, int], ...]:
    """(start, end) of each run of code lines in ``text``: the lines after a
    traceback's ``File "...", line N`` line that are indented deeper than it.
    Empty when the text has no traceback frame (the common case, found by one
    substring test)."""
    if 'File "' not in text:
        return ()
    spans: list[tuple[int, int]] = []
    for frame in _FRAME.finditer(text):
        depth = len(frame[1])
        start = end = frame.end() + 1
        while end < len(text):
            stop = text.find("\n", end)
            line = text[end : stop if stop >= 0 else len(text)]
            if not line.strip() or _indent(line) <= depth or _FRAME.match(line):
                break
            end = stop + 1 if stop >= 0 else len(text)
        if end > start:
            spans.append((start, end))
    return tuple(spans)


def in_code(spans: tuple[tuple[int, int], ...], start: int, end: int) -> bool:
    """Whether ``text[start:end]`` lies inside one of ``spans`` (``code_spans``)."""
    index = bisect_right(spans, (start, _END)) - 1  # the last run starting at or before it
    return index >= 0 and end <= spans[index][1]


def outside_code(
    regex: re.Pattern[str], text: str, first: re.Match[str], spans: tuple[tuple[int, int], ...]
) -> re.Match[str] | None:
    """``first`` if it is not on a code line, else the next match of ``regex``
    that is not (None: the pattern matched code alone)."""
    found: re.Match[str] | None = first
    while found is not None and in_code(spans, found.start(), found.end()):
        # resume after the code run that holds it: one search per run at most
        index = bisect_right(spans, (found.start(), _END)) - 1
        found = regex.search(text, spans[index][1])
    return found
