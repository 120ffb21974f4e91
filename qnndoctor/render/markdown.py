"""Markdown renderer: a block ready to paste into a GitHub issue."""

from __future__ import annotations

from typing import Any, TextIO

from ..report.view import view
from .summary import counts, recommendation_lines, sections, smoke_line


def _cell(text: object) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def _item(line: str) -> str:
    """A section line as a list item; a line the text output indents under the
    one above it (a bundle's folder under the bundle) is nested under it,
    not a bullet of its own with a run of spaces."""
    text = line.lstrip(" ")
    depth = (len(line) - len(text)) // 2
    return f"{'  ' * depth}- {_cell(text)}"


def render(report: dict[str, Any], stream: TextIO) -> None:
    doc = view(report)
    c = counts(doc)
    out = [
        f"### qnndoctor {doc.tool.version} report",
        "",
        f"**Target:** `{doc.target.python}` ({doc.target.how_chosen})  ",
        f"**Result:** {c['error']} error(s), {c['warning']} warning(s), {c['info']} info",
        "",
        "| severity | id | finding |",
        "|---|---|---|",
    ]
    for f in doc.findings:
        out.append(f"| {f.severity} | `{f.id}` | {_cell(f.title)} |")
    if not doc.findings:
        out.append("| - | - | no findings |")
    out.append("")
    from ..report.ticket_changes import change_lines

    changed = change_lines(doc.changes_since_report)
    if changed:
        out += [
            f"**Since the saved report ({doc.report_created}):**",
            *[f"- {line}" for line in changed],
            "",
        ]
    for f in doc.findings:
        out += [f"#### {f.severity.upper()} `{f.id}`: {f.title}", "", f.explanation, ""]
        if f.fix:
            out += [f"**Fix:** {f.fix.text}", ""]
            if f.fix.commands:
                out += ["```", *f.fix.commands, "```", ""]
    out += ["<details><summary>Environment</summary>", ""]
    for section in sections(doc):
        mark = (
            " (could not check)"
            if not section.ok
            else f" ({section.flagged}: see above)"
            if section.flagged
            else ""
        )
        out.append(f"**{section.title}**{mark}")
        out += [_item(line) for line in section.lines]
        out.append("")
    out.append(f"**Smoke session:** {smoke_line(doc)}")
    out += ["", "**Recommended onnxruntime-qnn:**", "```", *recommendation_lines(doc), "```"]
    if doc.skipped_checks:  # a list of its own, not lines hanging under the recommendation
        out += ["", "**Checks skipped:**"]
        out += [f"- `{item.rule}`: {_cell(item.reason)}" for item in doc.skipped_checks]
    out += ["", "</details>", ""]
    if doc.redacted:
        out.append("_User name, host name and home path redacted._")
    stream.write("\n".join(out) + "\n")
