"""Decisions already made for exactly these facts (the decisions memo).

Rules, resolver and report assembly are pure functions of the facts, the
matrix and qnndoctor's own code. An installer or an application that checks
its environment at every start (``check --no-smoke``,
``ensure_ready(smoke=False)``) asks the same question with the same facts
again and again, and answering it costs more than probing: the rules, the
resolver and the ``packaging`` library they use take most of the host's time.

So the answer (findings, skipped checks, recommendation, the matrix it was
made with, warnings) is kept in the user cache under a key made of
everything it depends on:

- the facts the probes measured this time, whole, except how long each probe
  took (no rule reads a duration of a probe);
- the target and the ``--matrix`` option;
- a fingerprint of the code and data that decide: every file of the
  installed qnndoctor package and of its matrix folder, the updated matrix
  in the user cache, and the ``packaging`` library (path, size, mtime).

The probes always run: only the judging of facts that were already judged is
reused. A session that ran the smoke child is never memoised (its facts
differ on every run). Anything wrong with the memo (unreadable, damaged,
unwritable) is recorded in ``events`` and the decisions are made as without
it. ``QNNDOCTOR_NO_MEMO=1`` turns it off.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Callable

    from ..facts.probed import Facts
    from ..target.interpreter import Target
    from .build import Report

    Log = Callable[[str], None]  # the pipeline's log (the pipeline uses this module)

FORMAT = 1
KEEP = 32  # entries kept: one per distinct environment checked lately
# The per-run measurements that no rule reads: left out of the key.
_PROBE_DURATION = "duration_ms"
_RUN_VALUES_LEFT_OUT = ("duration_s",)

events: list[str] = []


def enabled() -> bool:
    return os.environ.get("QNNDOCTOR_NO_MEMO", "") in ("", "0")


def _stat_tree(root: Path, into: list[Any]) -> None:
    """(relative path, size, mtime_ns) of every file under ``root``,
    compiled bytecode left out (it follows the sources)."""
    for folder, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d != "__pycache__")
        for name in sorted(files):
            if not name.endswith((".pyc", ".pyo")):
                _stat_file(Path(folder, name), into, root)


def _stat_file(path: Path, into: list[Any], root: Path | None = None) -> None:
    shown = str(path.relative_to(root)) if root is not None else str(path)
    try:
        stat = path.stat()
    except OSError as exc:
        into.append([shown, None, exc.errno])
        return
    into.append([shown, stat.st_size, stat.st_mtime_ns])


def read_fingerprint(matrix_option: Path | None) -> list[Any]:
    """What decides besides the facts: qnndoctor's code and data, the matrix
    in use, the ``packaging`` library (read anew each time: in a long-running
    application any of them may change)."""
    from importlib.machinery import PathFinder

    from .. import __version__
    from .._layout import package_dir

    found: list[Any] = [FORMAT, __version__, sys.version]
    package = Path(__file__).resolve().parent
    _stat_tree(package, found)
    matrix = package_dir("matrix")
    if matrix is not None and package not in matrix.resolve().parents:
        _stat_tree(matrix, found)  # a source checkout: matrix/ beside the package
    spec = PathFinder.find_spec("packaging")
    origin = spec.origin if spec is not None else None
    found.append(["packaging", origin])
    if origin:
        _stat_file(Path(origin), found)
    if matrix_option is not None:
        if matrix_option.is_dir():
            _stat_tree(matrix_option, found)
        else:
            _stat_file(matrix_option, found)
    else:
        updated = _cache_root() / "matrix"  # matrixdata.user_matrix_dir, without its imports
        if updated.is_dir():
            _stat_tree(updated, found)
    # bisect's local evidence changes recommendations (qnndoctor/evidence/).
    evidence = Path(os.environ.get("QNNDOCTOR_EVIDENCE_DIR") or _cache_root() / "evidence")
    _stat_file(evidence / "pairs.jsonl", found)
    found.append(["evidence off", os.environ.get("QNNDOCTOR_NO_EVIDENCE", "")])
    return found


def _cache_root() -> Path:
    import platformdirs

    return Path(platformdirs.user_cache_dir("qnndoctor"))


def _stable_facts(facts: dict[str, Any]) -> dict[str, Any]:
    stable: dict[str, Any] = {}
    for name, entry in facts.items():
        if isinstance(entry, dict):
            entry = {k: v for k, v in entry.items() if k != _PROBE_DURATION}
            values = entry.get("values")
            if name == "probe_run" and isinstance(values, dict):
                entry["values"] = {k: v for k, v in values.items() if k not in _RUN_VALUES_LEFT_OUT}
        stable[name] = entry
    return stable


def key(facts: dict[str, Any], target: dict[str, Any], fingerprint: list[Any]) -> str:
    """The memo key of these facts (``Facts.to_json()``, the smoke fact
    included): their whole canonical text. An entry stores it and is used
    only when it is equal, so the short name of its file (a CRC, see
    ``_entry``) may collide without harm; no hashlib on this path."""
    import json

    material = [fingerprint, target, _stable_facts(facts)]
    return json.dumps(material, sort_keys=True, ensure_ascii=True, default=repr)


def _name(text: str) -> str:
    import zlib

    data = text.encode("utf-8", "replace")
    return f"{zlib.crc32(data):08x}{zlib.adler32(data):08x}{len(data):x}"


def _entry(memo_key: str) -> Path:
    return _cache_root() / "decisions" / f"{_name(memo_key)}.json"


def _seen_flag(python: str, fingerprint: list[Any]) -> Path:
    import json

    text = json.dumps([fingerprint, python], sort_keys=True, default=repr)
    return _cache_root() / "decisions" / f"{_name(text)}.seen"


def probably_known(python: str, fingerprint: list[Any]) -> bool:
    """Whether this interpreter was judged before by this very qnndoctor and
    matrix: then the decisions are likely to be remembered, and the modules
    that make them need not be imported ahead (a guess: only speed depends on it)."""
    try:
        return _seen_flag(python, fingerprint).is_file()
    except Exception as exc:  # no cache folder: nothing was remembered
        events.append(f"decisions memo not asked: {type(exc).__name__}: {exc}")
        return False


def load(memo_key: str) -> dict[str, Any] | None:
    """The decisions stored under this key, or None (a miss, or an entry
    that cannot be used: recorded in ``events``)."""
    import json

    try:
        with _entry(memo_key).open(encoding="utf-8") as handle:
            entry = json.load(handle)
    except FileNotFoundError:
        return None
    except (OSError, ValueError, RecursionError) as exc:
        events.append(f"decisions memo ignored: {type(exc).__name__}: {exc}")
        return None
    decisions = entry.get("decisions") if isinstance(entry, dict) else None
    if not isinstance(entry, dict) or entry.get("key") != memo_key:
        events.append("decisions memo ignored: not an entry of this key")
        return None
    if not isinstance(decisions, dict):
        events.append("decisions memo ignored: not a decisions entry")
        return None
    return decisions


def store(memo_key: str, decisions: dict[str, Any], python: str, fingerprint: list[Any]) -> None:
    """Keep these decisions (atomically), and only the newest ``KEEP`` entries."""
    from ..safejson import write_atomically

    try:
        path = _entry(memo_key)
        path.parent.mkdir(parents=True, exist_ok=True)
        write_atomically(path, {"key": memo_key, "decisions": decisions})
        _seen_flag(python, fingerprint).touch()
        _prune(path.parent)
    except Exception as exc:  # an unwritable cache: decided without it, as before
        events.append(f"decisions memo not written: {type(exc).__name__}: {exc}")


def _prune(folder: Path) -> None:
    from ..safejson import keep_newest

    for pattern in ("*.json", "*.seen"):
        keep_newest(folder, pattern, KEEP)


class ToRemember:
    """The key a check's decisions are to be remembered under (a miss)."""

    def __init__(self, memo_key: str, fingerprint: list[Any], python: str) -> None:
        self.key, self.fingerprint, self.python = memo_key, fingerprint, python

    def remember(
        self, document: dict[str, Any], report: Report, warnings: list[str], log: Log
    ) -> None:
        """Keep what the report decided (everything in it that was not measured)."""
        decisions = {
            "findings": document["findings"],
            "skipped_checks": document["skipped_checks"],
            "recommendation": document["recommendation"],
            "matrix": document["matrix"],
            "matrix_source": report.matrix_source,
            "warnings": list(warnings),
        }
        store(self.key, decisions, self.python, self.fingerprint)
        if not events:
            log("decisions: kept for the next check of the same facts (decisions memo)")
        _log_events(log)


@dataclass(frozen=True)
class Remembered:
    """The report of decisions remembered for these facts, with this run's
    facts: its document (not redacted yet) and the warnings made with it."""

    report: Report
    document: dict[str, Any]
    warnings: tuple[str, ...]


def recall(
    matrix: Path | None,
    target: Target,
    facts: Facts,
    fingerprint: list[Any] | None,
    log: Log,
) -> Remembered | ToRemember:
    """The pipeline's question for a check without the smoke session (live
    facts, the session's "not run" among them): the remembered report for
    these facts, or where to remember the decisions about to be made.
    ``matrix``: the check's ``--matrix`` option."""
    if fingerprint is None:
        fingerprint = read_fingerprint(matrix)
    pending = ToRemember(
        key(facts.to_json(), target.to_json(), fingerprint), fingerprint, target.python
    )
    decisions = load(pending.key)
    _log_events(log)
    if decisions is None:
        return pending
    try:
        outcome = _remembered(target, facts, decisions)
    except (KeyError, TypeError, ValueError, AttributeError) as exc:  # an entry of odd shape
        log(f"decisions memo ignored: {type(exc).__name__}: {exc}")
        return pending
    log("decisions: the same facts were judged before (decisions memo)")
    return outcome


def _log_events(log: Log) -> None:
    for event in events:
        log(event)
    events.clear()


def _remembered(target: Target, facts: Facts, decisions: dict[str, Any]) -> Remembered:
    """The report of remembered decisions with this run's facts."""
    from ..rules.findings import Finding, SkippedCheck
    from .build import Report
    from .envelope import now

    report = Report(
        target=target,
        facts=facts,
        findings=tuple(Finding.from_json(f) for f in decisions["findings"]),
        skipped=tuple(SkippedCheck.from_json(s) for s in decisions["skipped_checks"]),
        created=now(),
        matrix_source=str(decisions["matrix_source"]),
        recommendation=decisions["recommendation"],
    )
    document = report.to_json()
    document["matrix"] = dict(decisions["matrix"])
    warnings = tuple(str(w) for w in decisions["warnings"])
    return Remembered(report, document, warnings)
