"""``qnndoctor lint``: the QNN EP mistakes that print nothing, caught where
they are written (Python sources read with ast, never run; genai_config.json).

``knowledge`` (what each release reads, from matrix/options.json),
``prefilter`` (which files and lines can matter, from the text alone),
``partial`` (parse only the statements that can matter, the rest proven valid),
``values`` + ``callsite`` + ``pyreader`` + ``genai`` (sources -> events), ``checks`` +
``rules`` (events -> findings), ``output`` (text / JSON / SARIF),
``command`` (the sub-command), ``runtime`` (``qnndoctor.check_options``).
"""

from __future__ import annotations

import ast
import hashlib
import os
import re
from dataclasses import dataclass, field
from pathlib import Path

from .checks import Finding, Target, judge
from .events import Event
from .genai import ConfigError, read_genai
from .knowledge import Knowledge, load
from .partial import partial_events
from .prefilter import file_facts, names_a_call
from .pyreader import events_of

MAX_BYTES = 5 * 1024 * 1024
_SKIP_DIRS = frozenset({".git", ".hg", ".svn", ".venv", "venv", "node_modules", "__pycache__", "site-packages", ".tox", ".mypy_cache"})
_IGNORE = re.compile(r"#\s*qnndoctor:\s*ignore(?:\[([A-Za-z0-9_,\s]+)\])?")

__all__ = ["FileResult", "Finding", "LintRun", "Target", "lint_paths", "lint_text"]


@dataclass(frozen=True)
class FileResult:
    path: str
    findings: tuple[Finding, ...]
    error: str | None = None  # the file could not be read / parsed


@dataclass(frozen=True)
class LintRun:
    target: Target
    files: tuple[FileResult, ...]
    missing: tuple[str, ...] = field(default=())

    @property
    def findings(self) -> list[tuple[str, Finding]]:
        return [(f.path, finding) for f in self.files for finding in f.findings]

    @property
    def errors(self) -> list[tuple[str, str]]:
        return [(f.path, f.error) for f in self.files if f.error] + [(m, "no such file or folder") for m in self.missing]


def _ignored(lines: list[str], finding: Finding) -> bool:
    index = finding.loc.line - 1
    if not 0 <= index < len(lines):
        return False
    match = _IGNORE.search(lines[index])
    if not match:
        return False
    codes = match.group(1)
    return codes is None or finding.code in {c.strip().upper() for c in codes.split(",")}


def lint_text(
    text: str,
    path: str,
    target: Target,
    knowledge: Knowledge | None = None,
    prefilter: bool = False,
    memo: dict[bytes, list[Event] | str] | None = None,
) -> FileResult:
    """``prefilter``: a Python file that names nothing onnxruntime-related is
    not parsed (files found by walking a folder; a file named is always parsed).
    ``memo``: what a text read to (events, or its error) by its digest, for
    the copies of one file met in the same run (reading depends on the text
    alone; findings are judged for each file)."""
    knowledge = knowledge or load()
    if path.endswith(".json"):
        try:
            return _judged(read_genai(text), text, path, target, knowledge)
        except ConfigError as exc:
            return FileResult(path, (), str(exc))
    relevant = names_a_call(text)
    if prefilter and not relevant:
        return FileResult(path, ())
    key = hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=20).digest() if relevant else b""
    read = memo.get(key) if memo is not None and relevant else None
    if read is None and relevant:
        read = partial_events(text, path)
    if read is None:  # the whole file, parsed where it always was (the parser's depth limit counts frames)
        try:
            tree = ast.parse(text, filename=path)
        except SyntaxError as exc:
            read = f"not valid Python: {exc.msg} (line {exc.lineno}, column {exc.offset})"
        except ValueError as exc:  # source with NUL bytes
            read = f"not valid Python: {exc}"
        except (RecursionError, MemoryError):
            read = "nested too deeply for Python's parser"
        else:
            try:
                read = events_of(tree, text) if relevant else []
            except RecursionError:
                read = "nested too deeply to read"
    if memo is not None and relevant:
        memo[key] = read
    if isinstance(read, str):
        return FileResult(path, (), read)
    return _judged(read, text, path, target, knowledge)


def _judged(events: list[Event], text: str, path: str, target: Target, knowledge: Knowledge) -> FileResult:
    if not events:
        return FileResult(path, ())
    if path.endswith(".json"):
        facts = file_facts("qnn", None)
    else:
        facts = file_facts(text, str(Path(path).resolve().parent))
    found = judge(events, knowledge, target, facts)
    lines = text.splitlines()
    kept = sorted((f for f in found if not _ignored(lines, f)), key=lambda f: (f.loc.line, f.loc.col, f.code))
    return FileResult(path, tuple(dict.fromkeys(kept)))


def _files(root: Path) -> list[Path]:
    if root.is_file():
        return [root]
    found: list[Path] = []
    for folder, dirs, names in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d not in _SKIP_DIRS and not d.endswith(".egg-info"))
        for name in sorted(names):
            if name.endswith(".py") or name == "genai_config.json":
                found.append(Path(folder) / name)
    return found


def read_file(
    path: Path, target: Target, knowledge: Knowledge, prefilter: bool = False, memo: dict[bytes, list[Event] | str] | None = None
) -> FileResult:
    shown = str(path)
    try:
        size = path.stat().st_size
        if size > MAX_BYTES:
            return FileResult(shown, (), f"larger than {MAX_BYTES // (1024 * 1024)} MB: not read")
        data = path.read_bytes()
    except OSError as exc:
        return FileResult(shown, (), f"cannot read: {exc.strerror or exc}")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        return FileResult(shown, (), "not UTF-8 text")
    return lint_text(text, shown, target, knowledge, prefilter, memo)


def lint_paths(paths: list[str], version: str | None = None) -> LintRun:
    """Lint files and folders (``*.py`` and ``genai_config.json`` inside
    folders; any file named explicitly) for onnxruntime-qnn ``version``
    (None: the newest release in the options data)."""
    knowledge = load()
    target = Target.of(knowledge, version)
    results: list[FileResult] = []
    missing: list[str] = []
    memo: dict[bytes, list[Event] | str] = {}
    for given in paths:
        root = Path(given)
        if not root.exists():
            missing.append(given)
            continue
        walked = root.is_dir()
        for path in _files(root):
            results.append(read_file(path, target, knowledge, prefilter=walked, memo=memo))
    return LintRun(target, tuple(results), tuple(missing))
