"""The evidence folder and its files: the one module that knows where the
folder is, the names of its files, how each file's lines say their format
version, and how the files are written (whole lines appended in one write;
rewritten through a temporary file and an atomic replace). ``JsonLines``
is the only code that opens one; ``fleet`` keeps its records through it.

``pairs.jsonl`` (this module's records): a record (``Record``) says that
onnxruntime-qnn X with onnxruntime Y (``None`` for a 1.x release, which
needs none) ended with ``outcome`` here, when, after how long, the cause the
diagnosis engine named, which tool produced it (``bisect``), and the facts
it was measured under (``machine``) with their fingerprint
(``fingerprint``). ``lookup`` returns the newest record per pair for a
fingerprint. Damaged lines are skipped, never fatal.

Start-up: every check asks ``present()``; this module's top imports only
what the check has loaded already (``json`` is imported where it is used;
writes go through ``safejson.replace_atomically``).
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = ["FILE_NAME", "Record", "disabled", "fingerprint", "lookup", "record", "store_dir"]

PAIRS_FILE = "pairs.jsonl"  # what bisect measured on this machine
FLEET_FILE = "fleet.jsonl"  # what the user's fleets showed (``fleet --import-compat``)
FILE_NAME = PAIRS_FILE
# Lines past this many bytes of a file are not read (a store is a few MB).
MAX_READ_BYTES = 64 * 1024 * 1024


def store_dir() -> Path:
    """``QNNDOCTOR_EVIDENCE_DIR`` if set, else the user cache's ``evidence/``."""
    override = os.environ.get("QNNDOCTOR_EVIDENCE_DIR")
    if override:
        return Path(override)
    import platformdirs

    return Path(platformdirs.user_cache_dir("qnndoctor")) / "evidence"


def disabled() -> bool:
    """``QNNDOCTOR_NO_EVIDENCE=1``: neither read nor written (the test suite)."""
    return os.environ.get("QNNDOCTOR_NO_EVIDENCE", "") not in ("", "0")


def present() -> bool:
    """Whether there is bisect evidence to read (a stat, no imports): every check asks."""
    return not disabled() and (store_dir() / PAIRS_FILE).is_file()


@dataclass(frozen=True)
class Format:
    """How the lines of one file name their format version (each file keeps
    the key it has always had, so existing files still read)."""

    key: str
    version: int

    def stamp(self, entry: Mapping[str, Any]) -> dict[str, Any]:
        """``entry`` as a line of this format (the version first)."""
        return {self.key: self.version, **entry}

    def current(self, entry: Any) -> bool:
        """Whether a parsed line is of this format (not a newer one, not damaged)."""
        return isinstance(entry, dict) and entry.get(self.key) == self.version


PAIRS_FORMAT = Format("format", 1)
FLEET_FORMAT = Format("v", 1)
FORMAT_VERSION = PAIRS_FORMAT.version


class JsonLines:
    """One JSON-lines file of the evidence folder. Appends are whole lines in
    one write (concurrent writers do not clobber each other); a rewrite goes
    to a temporary file in the same folder, then replaces the file at once.
    Errors are the operating system's (``OSError``): callers say what failed."""

    def __init__(self, name: str, folder: Path | None = None) -> None:
        self.folder = folder or store_dir()
        self.path = self.folder / name

    def append(self, entries: Iterable[Mapping[str, Any]]) -> None:
        text = _lines(entries)
        self.folder.mkdir(parents=True, exist_ok=True)
        with self.path.open("a", encoding="utf-8") as handle:
            handle.write(text)

    def rewrite(self, entries: Iterable[Mapping[str, Any]]) -> None:
        """The file holds ``entries`` alone (atomically)."""
        self._replace(_lines(entries))

    def keep_last(self, count: int) -> None:
        """Drops the oldest lines past ``count`` (kept lines as they are)."""
        kept = self.path.read_text("utf-8", errors="replace").splitlines(keepends=True)
        if len(kept) > count:
            self._replace("".join(kept[-count:]))

    def entries(self) -> Iterator[Any]:
        """The parsed value of every line (a missing file has none; damaged
        lines, cut short by a crash, are skipped), up to ``MAX_READ_BYTES``."""
        import json

        try:
            handle = self.path.open("rb")
        except (FileNotFoundError, NotADirectoryError):  # no store (the cache path is a file)
            return
        with handle:
            read = 0
            for raw in handle:
                read += len(raw)
                if read > MAX_READ_BYTES:
                    return
                try:
                    yield json.loads(raw.decode("utf-8", errors="replace"))
                except (ValueError, RecursionError):
                    continue

    def _replace(self, text: str) -> None:
        from ..safejson import replace_atomically

        self.folder.mkdir(parents=True, exist_ok=True)
        replace_atomically(self.path, text.encode("utf-8"))


def _lines(entries: Iterable[Mapping[str, Any]]) -> str:
    import json

    return "".join(json.dumps(e, sort_keys=True, ensure_ascii=True) + "\n" for e in entries)


# The store never grows without bound: older lines are dropped past this.
MAX_LINES = 5000
# The profile fields that decide whether a pair works here (resolver.Profile).
FINGERPRINT_FIELDS = (
    "python",
    "free_threaded",
    "os",
    "arch",
    "native_arch",
    "emulated",
    "glibc",
    "htp_arch",
    "system_qnn",
    "npu_driver",
)
OUTCOMES = ("passed", "failed", "not-installable", "timeout")


class EvidenceError(Exception):
    """The store cannot be read or written."""


def machine_facts(profile: Mapping[str, Any]) -> dict[str, Any]:
    """The fingerprinted facts out of a profile's JSON form (``Profile.to_json``)."""
    return {name: profile.get(name) for name in FINGERPRINT_FIELDS}


def fingerprint(machine: Mapping[str, Any]) -> str:
    import hashlib
    import json

    text = json.dumps(
        {name: machine.get(name) for name in FINGERPRINT_FIELDS}, sort_keys=True, default=str
    )
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


@dataclass(frozen=True)
class Record:
    onnxruntime_qnn: str
    onnxruntime: str | None
    outcome: str
    cause: str | None
    seconds: float
    recorded: str  # ISO 8601 UTC
    fingerprint: str
    machine: Mapping[str, Any]
    source: str = "bisect"
    platform: str | None = None  # the wheel's platform bucket (linux_x86_64, win_arm64, ...)

    @property
    def date(self) -> str:
        return self.recorded[:10]

    def to_json(self) -> dict[str, Any]:
        return PAIRS_FORMAT.stamp(
            {
                "onnxruntime_qnn": self.onnxruntime_qnn,
                "onnxruntime": self.onnxruntime,
                "outcome": self.outcome,
                "cause": self.cause,
                "seconds": self.seconds,
                "recorded": self.recorded,
                "fingerprint": self.fingerprint,
                "machine": dict(self.machine),
                "source": self.source,
                "platform": self.platform,
            }
        )

    @classmethod
    def from_json(cls, entry: Mapping[str, Any]) -> Record | None:
        """A record, or None for a line of another format or shape."""
        try:
            if not PAIRS_FORMAT.current(entry) or entry.get("outcome") not in OUTCOMES:
                return None
            companion = entry.get("onnxruntime")
            return cls(
                onnxruntime_qnn=str(entry["onnxruntime_qnn"]),
                onnxruntime=str(companion) if companion is not None else None,
                outcome=str(entry["outcome"]),
                cause=str(entry["cause"]) if entry.get("cause") is not None else None,
                seconds=float(entry["seconds"]),
                recorded=str(entry["recorded"]),
                fingerprint=str(entry["fingerprint"]),
                machine=dict(entry.get("machine") or {}),
                source=str(entry.get("source") or "bisect"),
                platform=str(entry["platform"]) if entry.get("platform") else None,
            )
        except (KeyError, TypeError, ValueError, AttributeError):
            return None

    def sentence(self) -> str:
        """ "2.6.0 with onnxruntime 1.31.1 passed here on DATE (bisect)"."""
        pair = self.onnxruntime_qnn + (
            f" with onnxruntime {self.onnxruntime}" if self.onnxruntime else ""
        )
        text = f"onnxruntime-qnn {pair} {self.outcome} here on {self.date} ({self.source})"
        return text + (f": {self.cause}" if self.cause and self.outcome != "passed" else "")


def now() -> str:
    from datetime import datetime, timezone

    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def record(records: Iterable[Record], folder: Path | None = None) -> Path:
    """Append ``records`` to the store; the store is rewritten (atomically)
    only when it grows past ``MAX_LINES``. Raises ``EvidenceError``."""
    pairs = JsonLines(PAIRS_FILE, folder)
    try:
        pairs.append([r.to_json() for r in records])
        pairs.keep_last(MAX_LINES)
    except OSError as exc:
        raise EvidenceError(f"cannot write the evidence store {pairs.path}: {exc}") from exc
    return pairs.path


def read_all(folder: Path | None = None) -> list[Record]:
    """Every usable record, oldest first (a missing store is empty)."""
    pairs = JsonLines(PAIRS_FILE, folder)
    try:
        entries = list(pairs.entries())
    except OSError as exc:
        raise EvidenceError(f"cannot read the evidence store {pairs.path}: {exc}") from exc
    return [
        item
        for entry in entries
        if isinstance(entry, dict) and (item := Record.from_json(entry)) is not None
    ]


def lookup(print_: str, folder: Path | None = None) -> list[Record]:
    """The newest record per (onnxruntime-qnn, onnxruntime) pair measured under
    fingerprint ``print_``, newest release first."""
    from packaging.version import InvalidVersion, Version

    newest: dict[tuple[str, str | None], Record] = {}
    for item in read_all(folder):
        if item.fingerprint == print_:
            newest[(item.onnxruntime_qnn, item.onnxruntime)] = item

    def order(item: Record) -> tuple[Version, Version]:
        try:
            return Version(item.onnxruntime_qnn), Version(item.onnxruntime or "0")
        except InvalidVersion:
            return Version("0"), Version("0")

    return sorted(newest.values(), key=order, reverse=True)
