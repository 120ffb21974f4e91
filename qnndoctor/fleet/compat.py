"""The compatibility table on its own: exported by ``fleet --compat FILE``
(a small JSON document anyone can share: counts and versions, no paths, no
machine ids) and imported into the local evidence store by
``fleet --import-compat FILE``, where ``recommend`` reads it."""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping
from typing import Any

from .. import safejson

COMPAT_FORMAT = "qnndoctor-compat/1"
MAX_COMPAT_BYTES = 64 * 1024 * 1024


class CompatError(ValueError):
    """A compatibility file that cannot be imported (exit code 2)."""


def export_document(summary: Mapping[str, Any]) -> dict[str, Any]:
    """The ``--compat FILE`` document of a fleet summary."""
    return {
        "format": COMPAT_FORMAT,
        "tool": summary["tool"],
        "created": summary["created"],
        "matrix": {k: summary["matrix"].get(k) for k in ("generated", "sha256")},
        "sessions": sum(r["passed"] + r["failed"] for r in summary["compat"]),
        "rows": summary["compat"],
    }


_HTP = re.compile(r"\(v(\d+)\)$|^HTP v(\d+)$")


def _soc_and_arch(label: str) -> tuple[str | None, int | None]:
    """``X1E78100 (v73)`` -> (``X1E78100``, 73); ``HTP v68`` -> (None, 68)."""
    match = _HTP.search(label)
    arch = int(match.group(1) or match.group(2)) if match else None
    soc = _HTP.sub("", label).strip() or None
    return (None if soc in (None, "unknown") else soc), arch


def read_compat(path: str) -> dict[str, Any]:
    """A compatibility file's document, checked; ``CompatError`` says what is wrong."""
    from ..target.ticket import open_input

    try:
        with open_input(path) as handle:
            raw = handle.read(MAX_COMPAT_BYTES + 1)
    except OSError as exc:
        raise CompatError(f"cannot read {path}: {exc.strerror or exc}") from exc
    if len(raw) > MAX_COMPAT_BYTES:
        raise CompatError(f"{path}: larger than {MAX_COMPAT_BYTES} bytes")
    try:
        document = safejson.loads(raw, path)
    except safejson.BadJSON as exc:
        raise CompatError(str(exc)) from exc
    if not isinstance(document, dict) or document.get("format") != COMPAT_FORMAT:
        raise CompatError(f"{path}: not a `qnndoctor fleet --compat` file ({COMPAT_FORMAT})")
    rows = document.get("rows")
    if not isinstance(rows, list) or not all(isinstance(r, dict) for r in rows):
        raise CompatError(f"{path}: 'rows' is not a list of objects")
    for number, row in enumerate(rows, 1):
        for key in ("passed", "failed"):
            value = row.get(key)
            if not isinstance(value, int) or isinstance(value, bool) or value < 0:
                raise CompatError(f"{path}: row {number}: {key!r} is not a count")
    return document


def import_compat(path: str, store: Any = None) -> tuple[int, int, str]:
    """Record a compatibility file in the local evidence store: (records
    added, sessions, the source name). Importing the same file again
    replaces its records instead of counting them twice."""
    from ..evidence.fleet import EvidenceStore, PairFacts, Record

    document = read_compat(path)
    digest = hashlib.sha256(json.dumps(document["rows"], sort_keys=True).encode()).hexdigest()
    source = f"fleet compat table {digest[:12]}"
    date = str(document.get("created") or "")[:10]
    records: list[Record] = []
    for row in document["rows"]:
        soc, arch = _soc_and_arch(str(row.get("soc") or "unknown"))
        facts = PairFacts.from_json({**row, "soc": soc, "htp_arch": arch})
        if row["passed"]:
            records.append(Record(facts, "passed", source, date, row["passed"]))
        causes = [c for c in row.get("causes") or [] if isinstance(c, dict)]
        named = 0
        for cause in causes:
            count = cause.get("count")
            if isinstance(count, int) and not isinstance(count, bool) and count > 0:
                records.append(Record(facts, "failed", source, date, count, str(cause.get("id"))))
                named += count
        if row["failed"] > named:
            records.append(Record(facts, "failed", source, date, row["failed"] - named))
    target = store or EvidenceStore()
    added = target.record_many(records, replacing=source)
    return added, sum(r.count for r in records), source
