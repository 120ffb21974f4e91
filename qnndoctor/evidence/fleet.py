"""Local evidence: which onnxruntime-qnn ran (or failed) with which
onnxruntime on which SoC and NPU driver, as seen on this user's own
machines: imported from a fleet's compatibility table (``qnndoctor fleet
--import-compat``), and written by any other command that runs sessions
(``record``). ``recommend`` reads it beside the matrix.

The store is one JSON-lines file in the user cache folder (platformdirs;
``QNNDOCTOR_EVIDENCE_DIR`` names another folder). docs/evidence.md describes
its format; :class:`EvidenceStore` is the only code that reads or writes it.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from . import store_dir

FORMAT_VERSION = 1
FILE_NAME = "fleet.jsonl"  # beside bisect's pairs.jsonl in the same folder
OUTCOMES = ("passed", "failed")
# Lines past this many bytes of the store are not read (a store is a few MB).
MAX_STORE_BYTES = 64 * 1024 * 1024


class EvidenceError(ValueError):
    """Evidence that cannot be recorded or imported (the message says why)."""


@dataclass(frozen=True)
class PairFacts:
    """What an outcome was observed with. ``None``: not known."""

    soc: str | None = None
    htp_arch: int | None = None
    npu_driver: str | None = None
    onnxruntime_qnn: str | None = None
    onnxruntime: str | None = None
    os: str | None = None
    python: str | None = None

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> PairFacts:
        arch = data.get("htp_arch")
        return cls(
            **{
                k: _text(data.get(k))
                for k in ("soc", "npu_driver", "onnxruntime_qnn", "onnxruntime", "os", "python")
            },
            htp_arch=arch if isinstance(arch, int) and not isinstance(arch, bool) else None,
        )


def _text(value: Any) -> str | None:
    return str(value) if value not in (None, "", "unknown") else None


@dataclass(frozen=True)
class Record:
    """``count`` sessions with ``outcome`` on ``facts``, from ``source`` on ``date``."""

    facts: PairFacts
    outcome: str
    source: str
    date: str
    count: int = 1
    cause: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {"v": FORMAT_VERSION, **asdict(self)}

    @classmethod
    def from_json(cls, data: Any) -> Record | None:
        """The record of one stored line, or None for a line this version cannot use."""
        if not isinstance(data, dict) or data.get("v") != FORMAT_VERSION:
            return None
        facts, count = data.get("facts"), data.get("count", 1)
        if data.get("outcome") not in OUTCOMES or not isinstance(facts, dict):
            return None
        if not isinstance(count, int) or isinstance(count, bool) or count < 1:
            return None
        return cls(
            PairFacts.from_json(facts),
            str(data["outcome"]),
            str(data.get("source") or "unknown"),
            str(data.get("date") or ""),
            count,
            _text(data.get("cause")),
        )


@dataclass(frozen=True)
class Tally:
    """What the store says about one question: sessions that passed and
    failed, the failures' causes and where the evidence came from."""

    passed: int = 0
    failed: int = 0
    causes: Mapping[str, int] = field(default_factory=dict)
    sources: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {
            "passed": self.passed,
            "failed": self.failed,
            "causes": dict(self.causes),
            "sources": list(self.sources),
        }


def default_folder() -> Path:
    """The one evidence folder, beside bisect's ``pairs.jsonl`` (``store_dir``)."""
    return store_dir()


class EvidenceStore:
    def __init__(self, folder: Path | None = None) -> None:
        self.folder = folder or default_folder()
        self.path = self.folder / FILE_NAME

    def record(
        self,
        facts: PairFacts,
        outcome: str,
        source: str,
        date: str,
        *,
        count: int = 1,
        cause: str | None = None,
    ) -> None:
        """Add one observation (appended: concurrent writers do not clobber each other)."""
        self.record_many([Record(facts, outcome, source, date, count, cause)])

    def record_many(self, records: Iterable[Record], *, replacing: str | None = None) -> int:
        """Add records; ``replacing``: first drop every record of that source
        (importing the same table twice counts it once). How many were added."""
        new = list(records)
        for item in new:
            if item.outcome not in OUTCOMES or item.count < 1:
                raise EvidenceError(f"not an outcome qnndoctor records: {item.outcome!r}")
        self.folder.mkdir(parents=True, exist_ok=True)
        lines = [json.dumps(r.to_json(), sort_keys=True) + "\n" for r in new]
        if replacing is None:
            with open(self.path, "a", encoding="utf-8") as handle:
                handle.write("".join(lines))
            return len(new)
        kept = [r for r in self.records() if r.source != replacing]
        fd, name = tempfile.mkstemp(dir=self.folder, prefix=".evidence.", suffix=".tmp")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                for record in kept:
                    handle.write(json.dumps(record.to_json(), sort_keys=True) + "\n")
                handle.write("".join(lines))
            Path(name).replace(self.path)
        except BaseException:
            Path(name).unlink(missing_ok=True)
            raise
        return len(new)

    def records(self) -> Iterator[Record]:
        """Every usable record (lines that are not are skipped: a store
        written by a newer qnndoctor, or damaged, still answers)."""
        try:
            handle = open(self.path, "rb")  # noqa: SIM115 - closed below
        except (FileNotFoundError, NotADirectoryError):  # no store (the cache path is a file)
            return
        with handle:
            read = 0
            for raw in handle:
                read += len(raw)
                if read > MAX_STORE_BYTES:
                    return
                try:
                    record = Record.from_json(json.loads(raw))
                except ValueError:  # a damaged line (cut short by a crash)
                    continue
                if record is not None:
                    yield record

    def lookup(self, **wanted: Any) -> Tally:
        """The tally of records whose facts match every given field
        (``onnxruntime_qnn="2.7.0", htp_arch=73``); a field not given matches anything."""
        unknown = set(wanted) - set(PairFacts.__dataclass_fields__)
        if unknown:
            raise EvidenceError(f"no such evidence field: {', '.join(sorted(unknown))}")
        passed = failed = 0
        causes: Counter[str] = Counter()
        sources: dict[str, None] = {}
        for record in self.records():
            if any(getattr(record.facts, k) != v for k, v in wanted.items() if v is not None):
                continue
            sources[record.source] = None
            if record.outcome == "passed":
                passed += record.count
            else:
                failed += record.count
                causes[record.cause or "unknown"] += record.count
        return Tally(passed, failed, dict(causes.most_common()), tuple(sources))


def _driver_version(text: Any) -> str | None:
    import re

    match = re.search(r"(\d+(?:\.\d+){1,3})\s*$", str(text or ""))
    return match.group(1) if match else None


def for_recommendation(
    recommendation: Mapping[str, Any], store: EvidenceStore | None = None
) -> dict[str, Any] | None:
    """What local evidence says about the recommended onnxruntime-qnn on
    this machine's HTP arch (and NPU driver): None when it says nothing."""
    version = recommendation.get("version")
    profile = recommendation.get("profile") or {}
    if not version:
        return None
    store = store or EvidenceStore()
    arch = profile.get("htp_arch")
    any_driver = store.lookup(onnxruntime_qnn=str(version), htp_arch=arch)
    if not any_driver.passed and not any_driver.failed:
        return None
    found: dict[str, Any] = {
        "onnxruntime_qnn": version,
        "htp_arch": arch,
        "store": str(store.path),
        "any_npu_driver": any_driver.to_json(),
    }
    driver = _driver_version(profile.get("npu_driver"))
    if driver is not None:
        found["npu_driver"] = driver
        found["this_npu_driver"] = store.lookup(
            onnxruntime_qnn=str(version), htp_arch=arch, npu_driver=driver
        ).to_json()
    return found


def evidence_lines(found: Mapping[str, Any]) -> list[str]:
    """``recommend``'s text lines for :func:`for_recommendation`'s answer."""
    where = f"HTP v{found['htp_arch']}" if found.get("htp_arch") else "any SoC"
    lines = []
    for key, label in (
        ("this_npu_driver", f"NPU driver {found.get('npu_driver')}"),
        ("any_npu_driver", "any NPU driver"),
    ):
        tally = found.get(key)
        if not tally:
            continue
        causes = ", ".join(f"{c} {n}" for c, n in list(tally["causes"].items())[:2])
        lines.append(
            f"local evidence: onnxruntime-qnn {found['onnxruntime_qnn']} on {where}, {label}: "
            f"{tally['passed']} passed, {tally['failed']} failed"
            + (f" ({causes})" if causes else "")
        )
    return lines
