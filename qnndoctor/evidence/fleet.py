"""Local evidence: which onnxruntime-qnn ran (or failed) with which
onnxruntime on which SoC and NPU driver, as seen on this user's own
machines: imported from a fleet's compatibility table (``qnndoctor fleet
--import-compat``), and written by any other command that runs sessions
(``record``). ``recommend`` reads it beside the matrix.

The store is one JSON-lines file, ``fleet.jsonl``, in the evidence folder
(platformdirs' user cache; ``QNNDOCTOR_EVIDENCE_DIR`` names another folder).
docs/evidence.md describes its format; :class:`EvidenceStore` is the only
code that reads or writes it, through ``store.JsonLines`` (the folder, the
file name, the format version and how the file is written are ``store``'s).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from . import store

FORMAT = store.FLEET_FORMAT
OUTCOMES = ("passed", "failed")


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
        return FORMAT.stamp(asdict(self))

    @classmethod
    def from_json(cls, data: Any) -> Record | None:
        """The record of one stored line, or None for a line this version cannot use."""
        if not FORMAT.current(data):
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


class EvidenceStore:
    def __init__(self, folder: Path | None = None) -> None:
        self._file = store.JsonLines(store.FLEET_FILE, folder)
        self.folder = self._file.folder
        self.path = self._file.path

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
        if replacing is None:
            self._file.append(r.to_json() for r in new)
            return len(new)
        kept = [r for r in self.records() if r.source != replacing]
        self._file.rewrite([*(r.to_json() for r in kept), *(r.to_json() for r in new)])
        return len(new)

    def records(self) -> Iterator[Record]:
        """Every usable record (lines that are not are skipped: a store
        written by a newer qnndoctor, or damaged, still answers)."""
        for entry in self._file.entries():
            record = Record.from_json(entry)
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
