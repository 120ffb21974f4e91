"""The evidence store: one JSON object per line in the user cache
(``evidence/pairs.jsonl``), appended atomically line by line.

A record (``Record``) says that onnxruntime-qnn X with onnxruntime Y
(``None`` for a 1.x release, which needs none) ended with ``outcome`` here,
when, after how long, the cause the diagnosis engine named, which tool
produced it (``bisect``), and the facts it was measured under (``machine``)
with their fingerprint (``fingerprint``). ``lookup`` returns the newest
record per pair for a fingerprint. Damaged lines are skipped, never fatal.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from . import FILE_NAME, disabled, store_dir

__all__ = ["FILE_NAME", "Record", "disabled", "fingerprint", "lookup", "record", "store_dir"]

FORMAT_VERSION = 1
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
        return {
            "format": FORMAT_VERSION,
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

    @classmethod
    def from_json(cls, entry: Mapping[str, Any]) -> Record | None:
        """A record, or None for a line of another format or shape."""
        try:
            if entry.get("format") != FORMAT_VERSION or entry.get("outcome") not in OUTCOMES:
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
    folder = folder or store_dir()
    path = folder / FILE_NAME
    lines = [json.dumps(r.to_json(), sort_keys=True, ensure_ascii=True) + "\n" for r in records]
    try:
        folder.mkdir(parents=True, exist_ok=True)
        with path.open("a", encoding="utf-8") as handle:
            handle.write("".join(lines))
        kept = path.read_text("utf-8", errors="replace").splitlines(keepends=True)
        if len(kept) > MAX_LINES:
            temporary = path.with_suffix(f".{os.getpid()}.tmp")
            temporary.write_text("".join(kept[-MAX_LINES:]), "utf-8")
            temporary.replace(path)
    except OSError as exc:
        raise EvidenceError(f"cannot write the evidence store {path}: {exc}") from exc
    return path


def read_all(folder: Path | None = None) -> list[Record]:
    """Every usable record, oldest first (a missing store is empty)."""
    path = (folder or store_dir()) / FILE_NAME
    try:
        with path.open("r", encoding="utf-8", errors="replace") as handle:
            text = handle.read(64 * 1024 * 1024)
    except FileNotFoundError:
        return []
    except OSError as exc:
        raise EvidenceError(f"cannot read the evidence store {path}: {exc}") from exc
    found: list[Record] = []
    for line in text.splitlines():
        try:
            entry = json.loads(line)
        except (ValueError, RecursionError):
            continue
        if isinstance(entry, dict) and (item := Record.from_json(entry)) is not None:
            found.append(item)
    return found


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
