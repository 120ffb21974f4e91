"""The fleet's picture from a stream of rows: counts, groups of machines
that share the same blocking findings, distributions, smoke times and the
compatibility table. Memory grows with the number of machines (one small row
each) and of distinct setups, never with the tickets' size."""

from __future__ import annotations

import statistics
from array import array
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from .rows import GroupFix, Row, Skipped, Unreadable

# Unreadable files listed by path (all are counted, by reason).
UNREADABLE_LISTED = 1000
SAMPLES_PER_GROUP = 3
# Upper bounds (seconds) of the smoke-time histogram's bars.
TIME_BUCKETS = (0.5, 1, 2, 3, 5, 10, 20, 30, 60)
DISTRIBUTIONS = (
    "soc",
    "htp_arch",
    "npu_driver",
    "os_build",
    "python",
    "python_arch",
    "onnxruntime",
    "onnxruntime_qnn",
    "smoke_status",
)
UNKNOWN = "unknown"


def _later(new: Row, old: Row) -> bool:
    """Whether ``new`` replaces ``old`` as its machine's ticket: the later
    ``created``, then the first path (the same answer in any reading order)."""
    return (new.created or "", old.path) > (old.created or "", new.path)


@dataclass
class _Cell:
    passed: int = 0
    failed: int = 0
    statuses: Counter[str] = field(default_factory=Counter)
    causes: Counter[tuple[str, str]] = field(default_factory=Counter)


def compat_key(row: Row) -> tuple[str, str, str, str]:
    """A compatibility-table cell: SoC (with its HTP arch), NPU driver,
    onnxruntime-qnn, onnxruntime."""
    soc = row.soc or UNKNOWN
    if row.htp_arch is not None:
        soc = f"{soc} (v{row.htp_arch})" if row.soc else f"HTP v{row.htp_arch}"
    return (
        soc,
        row.npu_driver or UNKNOWN,
        row.onnxruntime_qnn or UNKNOWN,
        row.onnxruntime or UNKNOWN,
    )


class Fleet:
    """Rows in, the summary document out (``summary``)."""

    def __init__(self) -> None:
        self.tickets = 0
        self.machines: dict[str, Row] = {}
        self.unreadable: list[Unreadable] = []
        self.unreadable_total = 0
        self.unreadable_reasons: Counter[str] = Counter()
        self.skipped = 0
        self.distinct_setups = 0
        self.compat: dict[tuple[str, ...], _Cell] = {}
        self.smoke_times = array("d")

    def add(self, result: Row | Unreadable | Skipped) -> None:
        if isinstance(result, Unreadable):
            self.unreadable_total += 1
            self.unreadable_reasons[_reason_kind(result.reason)] += 1
            if len(self.unreadable) < UNREADABLE_LISTED:
                self.unreadable.append(result)
            return
        if isinstance(result, Skipped):
            self.skipped += 1
            return
        self.tickets += 1
        old = self.machines.get(result.machine_id)
        if old is None or _later(result, old):
            self.machines[result.machine_id] = result
        if result.smoke_status not in (None, "not_run"):
            cell = self.compat.setdefault(compat_key(result), _Cell())
            cell.statuses[str(result.smoke_status)] += 1
            if result.smoke_status == "passed":
                cell.passed += 1
                if result.smoke_seconds is not None:
                    self.smoke_times.append(result.smoke_seconds)
            else:
                cell.failed += 1
                cause = result.smoke_cause or f"status:{result.smoke_status}"
                title = result.smoke_cause_title or f"the session {result.smoke_status}"
                cell.causes[(cause, title)] += 1

    def summary(self, titles: Mapping[str, str]) -> dict[str, Any]:
        """The summary document's body (without the envelope); ``titles``
        names finding ids."""
        machines = list(self.machines.values())
        ready = sum(1 for m in machines if m.ready)
        return {
            "tickets": {
                "readable": self.tickets,
                "unreadable": self.unreadable_total,
                "skipped_by_since": self.skipped,
                "distinct_setups": self.distinct_setups,
            },
            "machines": {
                "count": len(machines),
                "ready": ready,
                "not_ready": len(machines) - ready,
            },
            "groups": groups(machines, titles),
            "distributions": {name: _distribution(machines, name) for name in DISTRIBUTIONS},
            "smoke_times": self._times(),
            "compat": self._compat(),
            "unreadable": [u.to_json() for u in self.unreadable],
            "unreadable_by_reason": dict(self.unreadable_reasons.most_common()),
        }

    def _times(self) -> dict[str, Any]:
        times = sorted(self.smoke_times)
        if not times:
            return {"passed_sessions": 0, "histogram": []}
        bars, lower = [], 0.0
        for upper in (*TIME_BUCKETS, float("inf")):
            count = sum(1 for t in times if lower <= t < upper)
            label = f"{lower:g}-{upper:g} s" if upper != float("inf") else f">= {lower:g} s"
            bars.append({"label": label, "count": count})
            lower = upper
        while bars and bars[-1]["count"] == 0:
            bars.pop()
        return {
            "passed_sessions": len(times),
            "min_s": round(times[0], 3),
            "median_s": round(statistics.median(times), 3),
            "p90_s": round(times[min(len(times) - 1, int(len(times) * 0.9))], 3),
            "max_s": round(times[-1], 3),
            "histogram": bars,
        }

    def _compat(self) -> list[dict[str, Any]]:
        table: list[dict[str, Any]] = []
        for (soc, driver, qnn, ort), cell in self.compat.items():
            table.append(
                {
                    "soc": soc,
                    "npu_driver": driver,
                    "onnxruntime_qnn": qnn,
                    "onnxruntime": ort,
                    "passed": cell.passed,
                    "failed": cell.failed,
                    "statuses": dict(cell.statuses.most_common()),
                    "causes": [
                        {"id": cause, "title": title, "count": count}
                        for (cause, title), count in cell.causes.most_common()
                    ],
                }
            )
        table.sort(
            key=lambda r: (
                r["soc"],
                r["npu_driver"],
                _version_key(str(r["onnxruntime_qnn"])),
                _version_key(str(r["onnxruntime"])),
            )
        )
        return table


def _version_key(text: str) -> tuple[Any, ...]:
    parts = text.split(".")
    return tuple((0, int(p), "") if p.isdigit() else (1, 0, p) for p in parts)


def _reason_kind(reason: str) -> str:
    """A short class of an unreadable file's reason (for the counts)."""
    for needle, kind in (
        ("truncated", "truncated JSON"),
        ("not valid JSON", "not JSON"),
        ("not usable JSON", "not JSON"),
        ("text:", "not text"),
        ("larger than", "too large"),
        ("not a qnndoctor report", "not a qnndoctor report"),
        ("newer than", "newer schema"),
        ("archive", "archive problem"),
        ("could not check", "error ticket"),
        ("cannot read", "cannot read"),
        ("no such file", "missing"),
    ):
        if needle in reason:
            return kind
    return "malformed ticket"


def _value(row: Row, name: str) -> str:
    if name == "python_arch":
        arch = row.python_arch or UNKNOWN
        if row.emulated:
            return f"{arch} (emulated on {row.native_arch or UNKNOWN})"
        return arch
    if name == "htp_arch":
        return f"v{row.htp_arch}" if row.htp_arch is not None else UNKNOWN
    value = getattr(row, name)
    return str(value) if value not in (None, "") else UNKNOWN


def _distribution(machines: list[Row], name: str) -> list[dict[str, Any]]:
    counts = Counter(_value(m, name) for m in machines)
    return [
        {"value": v, "machines": n} for v, n in sorted(counts.items(), key=lambda i: (-i[1], i[0]))
    ]


def _group_key(row: Row) -> tuple[str, ...]:
    if row.blocking:
        return row.blocking
    return (f"smoke:{row.smoke_status or 'none'}",)


_NO_ERROR_FIX = {
    "smoke:not_run": "Make the ticket with the smoke session (`qnndoctor report -o ticket.json` without "
    "--no-smoke): only a session that ran proves the NPU works.",
    "smoke:none": "The ticket has no smoke result: make it again with `qnndoctor report -o ticket.json`.",
}


def groups(machines: list[Row], titles: Mapping[str, str]) -> list[dict[str, Any]]:
    """Machines that are not ready, grouped by the same blocking findings,
    largest group first: the fix that unblocks most machines comes first."""
    by_key: dict[tuple[str, ...], list[Row]] = {}
    for row in machines:
        if not row.ready:
            by_key.setdefault(_group_key(row), []).append(row)
    out = []
    for key, rows in by_key.items():
        rows.sort(key=lambda r: r.path)
        out.append(_group(key, rows, titles.get))
    out.sort(key=lambda g: (-g["machines"], g["key"]))
    return out


def _group(
    key: tuple[str, ...], rows: list[Row], title: Callable[[str], str | None]
) -> dict[str, Any]:
    first = rows[0]
    fixes: list[GroupFix] = list(first.fixes)
    vary = any(r.fixes != first.fixes for r in rows[1:])
    fix_json = [f.to_json() for f in fixes]
    if not first.blocking:
        text = _NO_ERROR_FIX.get(key[0]) or (
            f"No error finding, but the smoke session {first.smoke_status}: "
            "open a sample ticket and follow its smoke-session finding."
        )
        fix_json = [{"finding": None, "title": "no smoke pass", "text": text, "commands": []}]
    return {
        "key": ";".join(key),
        "machines": len(rows),
        "blocking": [{"id": i, "title": title(i) or i} for i in first.blocking],
        "smoke_status": Counter(str(r.smoke_status) for r in rows).most_common(1)[0][0],
        "fix": fix_json,
        "commands_vary": vary,
        "samples": [r.path for r in rows[:SAMPLES_PER_GROUP]],
    }
