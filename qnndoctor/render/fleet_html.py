"""``fleet --html FILE``: one self-contained page for a support lead. No
script, no font, no image file, no network: CSS and SVG inline, so it opens
from a file anywhere and prints readably (``@media print``)."""

from __future__ import annotations

from collections.abc import Mapping
from html import escape
from typing import Any

from . import fleet_svg as svg
from .fleet_text import LABELS

GROUPS_SHOWN = 25
COMPAT_SHOWN = 200
UNREADABLE_SHOWN = 50
VALUES_SHOWN = 8

_CSS = """
:root { color-scheme: light; }
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: #111;
  margin: 0; background: #f4f5f8; }
main { max-width: 1060px; margin: 0 auto; padding: 24px; }
h1 { font-size: 24px; margin: 0 0 4px; } h2 { font-size: 18px; margin: 28px 0 10px; }
.sub { color: #555; margin: 0 0 18px; }
.cards { display: flex; gap: 14px; flex-wrap: wrap; }
.cards .card { flex: 1 1 120px; }
.card { background: #fff; border: 1px solid #dde0e6; border-radius: 8px; padding: 14px 16px;
  break-inside: avoid; }
.figure { font-size: 28px; font-weight: 700; } .label { color: #555; font-size: 12px; }
.group { background: #fff; border: 1px solid #dde0e6; border-left: 6px solid #c62828;
  border-radius: 6px; padding: 12px 16px; margin: 10px 0; break-inside: avoid; }
.group h3 { margin: 0 0 6px; font-size: 15px; }
.count { font-size: 20px; font-weight: 700; color: #c62828; margin-right: 8px; }
code, pre { font: 12.5px/1.4 ui-monospace, Consolas, monospace; }
pre { background: #f1f3f7; padding: 8px 10px; border-radius: 4px; white-space: pre-wrap;
  word-break: break-all; margin: 6px 0; }
.samples { color: #555; font-size: 12px; }
.ctitle { font-weight: 700; margin-bottom: 6px; }
svg { display: block; }
.grid { display: grid; grid-template-columns: repeat(auto-fill, minmax(440px, 1fr)); gap: 14px; }
table { border-collapse: collapse; width: 100%; background: #fff; font-size: 13px; }
th, td { border-bottom: 1px solid #e3e5ea; padding: 5px 8px; text-align: left;
  vertical-align: top; }
th { background: #eef0f4; } td.num { text-align: right; font-variant-numeric: tabular-nums; }
tr { break-inside: avoid; }
.ok { color: #2e7d32; font-weight: 600; } .note { color: #555; font-size: 12px; }
@media print {
  body { background: #fff; font-size: 11px; } main { max-width: none; padding: 0; }
  .card, .group, table { border-color: #999; }
  h2 { break-after: avoid; } .grid { grid-template-columns: 1fr 1fr; }
  svg text { fill: #000; }
}
"""


def _e(value: Any) -> str:
    return escape(str(value))


def render_html(document: Mapping[str, Any]) -> str:
    tickets, machines = document["tickets"], document["machines"]
    parts = [
        "<!DOCTYPE html>\n<html lang='en'><head><meta charset='utf-8'>",
        "<meta name='viewport' content='width=device-width, initial-scale=1'>",
        f"<title>qnndoctor fleet: {machines['ready']:,} of {machines['count']:,} ready</title>",
        f"<style>{_CSS}</style></head><body><main>",
        "<h1>Fleet report</h1>",
        f"<p class='sub'>{tickets['readable']:,} tickets from {machines['count']:,} machines, "
        f"re-diagnosed by qnndoctor {_e(document['tool']['version'])} with the matrix of "
        f"{_e(document['matrix'].get('generated') or 'unknown date')} on "
        f"{_e(document['created'][:10])}"
        + (f"; tickets created since {_e(document['since'])}" if document.get("since") else "")
        + ".</p>",
        _cards(document),
        _groups(document),
        _distributions(document),
        _compat(document["compat"]),
        _unreadable(document),
        "<p class='note'>Machines are counted by a hashed id of facts redaction keeps "
        "(hardware, OS, interpreter location); the latest ticket of each machine counts. "
        "Paths, commands and names are redacted.</p>",
        "</main></body></html>\n",
    ]
    return "\n".join(parts)


def _cards(document: Mapping[str, Any]) -> str:
    tickets, machines = document["tickets"], document["machines"]
    cards = [
        f"<div class='card'>{svg.donut(machines['ready'], machines['count'], 'ready')}</div>",
        _card(
            f"{machines['ready']:,} / {machines['count']:,}",
            "machines ready (smoke session passed, no error finding)",
        ),
        _card(f"{len(document['groups']):,}", "groups of machines to fix"),
        _card(f"{tickets['readable']:,}", "tickets read"),
        _card(f"{tickets['unreadable']:,}", "files unreadable"),
    ]
    return "<div class='cards'>" + "".join(cards) + "</div>"


def _card(figure: str, label: str) -> str:
    return f"<div class='card'><div class='figure'>{_e(figure)}</div><div class='label'>{_e(label)}</div></div>"


def _groups(document: Mapping[str, Any]) -> str:
    groups = document["groups"]
    total = document["machines"]["count"]
    if not groups:
        return "<h2>Fix first</h2><p class='ok'>Every machine is ready.</p>"
    chart = svg.bars(
        [(g["key"].replace(";", " + "), g["machines"]) for g in groups[:10]],
        total,
        svg.BAD,
        width=1000,
        label_w=520,
    )
    out = [
        "<h2>Fix first: machines that share the same blocking findings</h2>",
        f"<div class='card'>{chart}</div>",
    ]
    for number, group in enumerate(groups[:GROUPS_SHOWN], 1):
        titles = "; ".join(b["title"] for b in group["blocking"]) or "No error finding"
        share = f"{100 * group['machines'] / total:.0f}%" if total else ""
        fixes = []
        for fix in group["fix"]:
            commands = "\n".join(fix["commands"])
            fixes.append(
                f"<p>{_e(fix['text'])}</p>" + (f"<pre>{_e(commands)}</pre>" if commands else "")
            )
        vary = (
            "<p class='note'>The commands name each machine's own interpreter: they differ "
            "across this group; each sample ticket has its own.</p>"
            if group["commands_vary"]
            else ""
        )
        out.append(
            f"<div class='group'><h3><span class='count'>{group['machines']:,}</span>"
            f"{'machine' if group['machines'] == 1 else 'machines'} ({share}) &middot; "
            f"{number}. {_e(titles)}</h3>"
            f"<div class='note'>findings: <code>{_e(group['key'])}</code>; smoke session "
            f"{_e(group['smoke_status'])}</div>{''.join(fixes)}{vary}"
            f"<div class='samples'>sample tickets: {_e(', '.join(group['samples']))}</div></div>"
        )
    if len(groups) > GROUPS_SHOWN:
        out.append(f"<p class='note'>{len(groups) - GROUPS_SHOWN} smaller groups: see --json.</p>")
    return "\n".join(out)


def _distributions(document: Mapping[str, Any]) -> str:
    total = document["machines"]["count"]
    cells = []
    for name, rows in document["distributions"].items():
        items = [(r["value"], r["machines"]) for r in rows[:VALUES_SHOWN]]
        rest = sum(r["machines"] for r in rows[VALUES_SHOWN:])
        if rest:
            items.append((f"{len(rows) - VALUES_SHOWN} others", rest))
        cells.append(
            f"<div class='card'><div class='ctitle'>{_e(LABELS.get(name, name))}</div>"
            f"{svg.bars(items, total, width=410, label_w=180)}</div>"
        )
    times = document["smoke_times"]
    if times.get("passed_sessions"):
        chart = svg.histogram([(b["label"], b["count"]) for b in times["histogram"]], width=410)
        cells.append(
            f"<div class='card'><div class='ctitle'>Smoke session time (passed)</div>{chart}"
            "<div class='note'>"
            f"{times['passed_sessions']:,} sessions; median {times['median_s']} s, 90% within "
            f"{times['p90_s']} s, slowest {times['max_s']} s</div></div>"
        )
    return (
        "<h2>What the fleet runs on (machines)</h2><div class='grid'>" + "".join(cells) + "</div>"
    )


def _compat(table: list[Mapping[str, Any]]) -> str:
    if not table:
        return ""
    rows = []
    for row in table[:COMPAT_SHOWN]:
        causes = "; ".join(f"{c['title']} ({c['count']:,})" for c in row["causes"][:3])
        rows.append(
            f"<tr><td>{_e(row['soc'])}</td><td>{_e(row['npu_driver'])}</td>"
            f"<td>{_e(row['onnxruntime_qnn'])}</td><td>{_e(row['onnxruntime'])}</td>"
            f"<td class='num'>{row['passed']:,}</td><td class='num'>{row['failed']:,}</td>"
            f"<td>{svg.split_bar(row['passed'], row['failed'])}</td><td>{_e(causes)}</td></tr>"
        )
    more = (
        f"<p class='note'>{len(table) - COMPAT_SHOWN} more rows: --compat FILE.</p>"
        if len(table) > COMPAT_SHOWN
        else ""
    )
    return (
        "<h2>Compatibility: smoke sessions by SoC, NPU driver, onnxruntime-qnn, onnxruntime</h2>"
        "<table><thead><tr><th>SoC (HTP)</th><th>NPU driver</th><th>onnxruntime-qnn</th>"
        "<th>onnxruntime</th><th>passed</th><th>failed</th><th></th><th>failure causes</th>"
        "</tr></thead><tbody>" + "".join(rows) + "</tbody></table>" + more
    )


def _unreadable(document: Mapping[str, Any]) -> str:
    total = document["tickets"]["unreadable"]
    if not total:
        return ""
    kinds = ", ".join(f"{_e(k)} {n:,}" for k, n in document["unreadable_by_reason"].items())
    items = "".join(
        f"<tr><td>{_e(u['path'])}</td><td>{_e(u['reason'])}</td></tr>"
        for u in document["unreadable"][:UNREADABLE_SHOWN]
    )
    more = (
        f"<p class='note'>{total - UNREADABLE_SHOWN:,} more: see --json.</p>"
        if total > UNREADABLE_SHOWN
        else ""
    )
    return (
        f"<h2>Unreadable files: {total:,}</h2><p>{kinds}</p>"
        f"<table><thead><tr><th>file</th><th>why</th></tr></thead><tbody>{items}</tbody></table>"
        + more
    )


def write_html(document: Mapping[str, Any], path: str) -> None:
    """Write the page (an ``OSError`` says why it could not be)."""
    page = render_html(document)
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(page)
