"""Which files and which lines of a Python source can hold what a lint rule
reads, told from the text alone (cheap substring tests), so that the reader
parses only the files that call something it follows and visits only the
expressions on lines that name something it acts on. Each shortcut is a
superset of what the reader acts on: it skips work, never a finding
(tests/test_lint.py checks this against reading everything)."""

from __future__ import annotations

import re
from itertools import accumulate

from .events import FileFacts

# The reader acts on calls whose name holds one of these words (each rule
# starts from one of them) and on ``.ep_name`` comparisons: a file that calls
# none of them yields no event a rule reads. Plain substrings first (``in``
# is far faster than a regex alternation), then whether one is called.
_ACTING = (
    "SessionOptions", "RunOptions", "_config_entry", "add_provider", "append_execution_provider",
    "set_provider", "InferenceSession", "ModelCompiler", "compile_to_", "get_qnn_qdq_config",
    "quantize_static", "quantize_dynamic", "get_profiling_start_time_ns", "end_profiling",
    "register_execution_provider_library", "bind_input", "bind_output", "run_async", "io_binding",
)
# the rest of the name, then spaces, line breaks or comments, then "("
_CALLED = {word: re.compile(re.escape(word) + r"\w*(?:[\s\\]|#[^\n]*)*\(") for word in _ACTING}
_EP_NAME = re.compile(r"\.[\s\\]*ep_name")
# Words of onnxruntime code: in a file that calls none of the above, only a
# ``run(...)`` call can still give an event (QND045), so such a file is read
# when it holds one of these (or an _ACTING word) and the word ``run``.
_HINTS = re.compile(r"providers\s*=|provider_options|profiling")
_RUN_END = re.compile(r"run\b")  # then the character before it (a leading \b makes the search slow)


def _run_word(text: str) -> bool:
    """Whether ``text`` holds the word ``run`` (what ``\\brun\\b`` finds)."""
    for match in _RUN_END.finditer(text):
        at = match.start()
        if at == 0 or not (text[at - 1].isalnum() or text[at - 1] == "_"):
            return True
    return False


def _called(text: str, word: str) -> bool:
    pattern = _CALLED[word]
    at = text.find(word)
    while at >= 0:
        if pattern.match(text, at):
            return True
        at = text.find(word, at + 1)
    return False


# Each _ACTING word under the first of these it contains (a word is looked
# for only when its umbrella is in the text: fewer passes over the text).
_UMBRELLAS = ("Options", "Session", "provider", "profiling", "bind", "quantize_")


def _grouped() -> dict[str, list[str]]:
    groups: dict[str, list[str]] = {}
    for word in _ACTING:
        groups.setdefault(next((u for u in _UMBRELLAS if u in word), word), []).append(word)
    return groups


_GROUPS = _grouped()


def names_a_call(text: str) -> bool:
    """Whether ``text`` can hold a call or attribute a rule reads (a file
    for which this is False gives no events, so it need not be parsed)."""
    present = [umbrella for umbrella in _GROUPS if umbrella in text]
    named = [word for umbrella in present for word in _GROUPS[umbrella] if word in text]
    if any(_called(text, word) for word in named):
        return True
    if "ep_name" in text and _EP_NAME.search(text):
        return True
    if not named and "provider" not in present and "profiling" not in present:
        return False
    return (bool(named) or _HINTS.search(text) is not None) and _run_word(text)


# A statement whose text has none of these holds no call or comparison a
# rule reads: its calls are not visited (its value is still evaluated).
# Each name of a call the reader follows (pyreader._CALLS) holds one of them
# (tests/lint/test_partial.py checks it), so a line without one visits nothing.
_INTERESTING = (
    "SessionOptions", "RunOptions", "_config_entry", "add_provider", "append_execution_provider", "set_provider",
    "register_execution_provider", "InferenceSession", "ModelCompiler", "compile_to_", "quantize",
    "get_qnn_qdq_config", "profiling", "bind_", "ep_name", "io_binding", "Thread", "submit", "map(",
)
# ... nor these calls (found from their words "run" and ".update").
_INTERESTING_CALLS = (("run", re.compile(r"\brun(?:_async)?\s*\(")), (".update", re.compile(r"\.update\s*\(")))
def normalized(text: str) -> str:
    """``text`` with the line ends ast counts (\\r\\n, \\r, \\n) as \\n."""
    return text.replace("\r\n", "\n").replace("\r", "\n") if "\r" in text else text


def interesting_lines(text: str) -> list[int]:
    """Running counts of the lines of ``text`` (normalized) that hold an
    _INTERESTING word or call (every occurrence; a call written across lines
    marks each of them), so whether a node's lines hold one is two look-ups."""
    spans: list[tuple[int, int]] = []
    for word in _INTERESTING:
        at = text.find(word)
        while at >= 0:
            spans.append((at, at + len(word)))
            at = text.find(word, at + 1)
    for word, pattern in _INTERESTING_CALLS:
        at = text.find(word)
        while at >= 0:
            match = pattern.match(text, at)  # (``\b`` looks at the character before ``at``)
            if match is not None:
                spans.append(match.span())
            at = text.find(word, at + 1)
    spans.sort()
    marked = [0] * (text.count("\n") + 1)
    line = position = 0
    for start, end in spans:
        line += text.count("\n", position, start)
        position = start
        for index in range(line, line + text.count("\n", start, end) + 1):
            marked[index] = 1
    return [0, *accumulate(marked)]


def line_starts(text: str) -> list[int]:
    """The offset at which each line of ``text`` (normalized) starts."""
    return [0, *(m.end() for m in re.finditer("\n", text))]


def file_facts(text: str, base_dir: str | None) -> FileFacts:
    return FileFacts(
        mentions_qnn="qnn" in text.lower(),
        uses_plugin="onnxruntime_qnn" in text or "register_execution_provider_library" in text,
        enables_profiling="enable_profiling" in text,
        uses_qnn_config="get_qnn_qdq_config" in text,
        base_dir=base_dir,
    )
