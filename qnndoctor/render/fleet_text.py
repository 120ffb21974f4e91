"""The fleet summary for a terminal: what to fix first, then the picture."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TextIO

GROUPS_SHOWN = 10
VALUES_SHOWN = 5
COMPAT_SHOWN = 30
UNREADABLE_SHOWN = 5
LABELS = {
    "soc": "SoC",
    "htp_arch": "HTP arch",
    "npu_driver": "NPU driver",
    "os_build": "OS build",
    "python": "Python",
    "python_arch": "Python arch",
    "onnxruntime": "onnxruntime",
    "onnxruntime_qnn": "onnxruntime-qnn",
    "smoke_status": "smoke session",
}


def _share(part: int, whole: int) -> str:
    return f"{100 * part / whole:.0f}%" if whole else "-"


def _cut(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 3] + "..."


def render(document: Mapping[str, Any], out: TextIO) -> None:
    tickets, machines = document["tickets"], document["machines"]
    w = out.write
    w(
        f"qnndoctor fleet: {tickets['readable']:,} tickets from {machines['count']:,} machines"
        f" ({tickets['unreadable']:,} unreadable"
        + (f", {tickets['skipped_by_since']:,} before --since" if document.get("since") else "")
        + f"; {tickets['distinct_setups']:,} distinct setups re-diagnosed)\n"
    )
    w(
        f"ready: {machines['ready']:,} of {machines['count']:,} machines "
        f"({_share(machines['ready'], machines['count'])}): smoke session passed, no error finding\n"
    )
    _groups(document["groups"], machines["count"], out)
    w("\nmachines by\n")
    for name, rows in document["distributions"].items():
        shown = ", ".join(f"{r['value']} {r['machines']:,}" for r in rows[:VALUES_SHOWN])
        more = f", +{len(rows) - VALUES_SHOWN} more" if len(rows) > VALUES_SHOWN else ""
        w(f"  {LABELS.get(name, name) + ':':17}{_cut(shown + more, 80)}\n")
    times = document["smoke_times"]
    if times.get("passed_sessions"):
        w(
            f"smoke sessions that passed: {times['passed_sessions']:,}; median "
            f"{times['median_s']} s, 90% within {times['p90_s']} s, slowest {times['max_s']} s\n"
        )
    _compat(document["compat"], out)
    _unreadable(document, out)


def _groups(groups: list[Mapping[str, Any]], total: int, out: TextIO) -> None:
    w = out.write
    if not groups:
        w("\nevery machine is ready\n")
        return
    w("\nfix first (machines that share the same blocking findings, largest group first):\n")
    for number, group in enumerate(groups[:GROUPS_SHOWN], 1):
        ids = ", ".join(b["id"] for b in group["blocking"]) or f"no error finding ({group['key']})"
        noun = "machine" if group["machines"] == 1 else "machines"
        share = _share(group["machines"], total)
        w(f"{number:2}. {group['machines']:,} {noun} ({share}): {ids}\n")
        for item in group["blocking"][:3]:
            w(f"      {_cut(item['title'], 92)}\n")
        for fix in group["fix"]:
            w(f"    fix: {_cut(fix['text'], 200)}\n")
            for command in fix["commands"]:
                w(f"      {command}\n")
        if group["commands_vary"]:
            w(
                "      (commands differ by machine: each names its own interpreter; "
                "see each sample ticket)\n"
            )
        w(f"    e.g. {', '.join(group['samples'])}\n")
    if len(groups) > GROUPS_SHOWN:
        rest = sum(g["machines"] for g in groups[GROUPS_SHOWN:])
        w(f"    ... {len(groups) - GROUPS_SHOWN} more groups, {rest:,} machines (--json, --html)\n")


def _compat(table: list[Mapping[str, Any]], out: TextIO) -> None:
    if not table:
        return
    w = out.write
    w("\ncompatibility: smoke sessions by SoC x NPU driver x onnxruntime-qnn x onnxruntime\n")
    w(
        f"  {'SoC':22} {'NPU driver':16} {'ort-qnn':9} {'ort':9} {'passed':>7} {'failed':>7}  cause\n"
    )
    for row in table[:COMPAT_SHOWN]:
        cause = row["causes"][0]["id"] if row["causes"] else ""
        w(
            f"  {_cut(row['soc'], 22):22} {_cut(row['npu_driver'], 16):16} "
            f"{_cut(row['onnxruntime_qnn'], 9):9} {_cut(row['onnxruntime'], 9):9} "
            f"{row['passed']:>7,} {row['failed']:>7,}  {_cut(cause, 40)}\n"
        )
    if len(table) > COMPAT_SHOWN:
        w(f"  ... {len(table) - COMPAT_SHOWN} more rows (--compat FILE, --json, --html)\n")


def _unreadable(document: Mapping[str, Any], out: TextIO) -> None:
    total = document["tickets"]["unreadable"]
    if not total:
        return
    kinds = ", ".join(f"{k} {n:,}" for k, n in document["unreadable_by_reason"].items())
    out.write(f"\nunreadable: {total:,} ({kinds})\n")
    for item in document["unreadable"][:UNREADABLE_SHOWN]:
        out.write(f"  {item['path']}: {_cut(item['reason'], 140)}\n")
    if total > UNREADABLE_SHOWN:
        out.write(f"  ... {total - UNREADABLE_SHOWN:,} more (--json lists them)\n")
