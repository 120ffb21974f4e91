"""Terminal renderer (rich): sections per probe, then findings with fixes."""

from __future__ import annotations

from typing import Any, TextIO

from rich.console import Console  # this module is imported only to render text

from ..report.view import view
from .summary import counts, recommendation_lines, sections, smoke_line, smoke_title

_FLAG_MARK = {
    "error": "[bold red]error (see Findings)[/]",
    "warning": "[yellow]warning (see Findings)[/]",
}
_STYLE = {"error": "bold red", "warning": "bold yellow", "info": "bold cyan"}


class _Console(Console):
    def on_broken_pipe(self) -> None:
        """rich's own answer to a reader that went away is SystemExit(1), past
        the caller's handling: the caller gets the BrokenPipeError instead (the
        command line's stdout never raises it: cli.main._stdout)."""
        self.quiet = True
        raise BrokenPipeError("the reader of the report went away")


def render(report: dict[str, Any], stream: TextIO) -> None:
    from rich.markup import escape

    # Colour only on a terminal (rich also honours NO_COLOR / FORCE_COLOR);
    # text going to a file or pipe is never hard-wrapped: paths and commands
    # must stay copyable, so only a real terminal gets wrapped lines.
    isatty = getattr(stream, "isatty", None)
    on_terminal = bool(isatty and isatty())
    console = _Console(file=stream, highlight=False, soft_wrap=not on_terminal, emoji=False)
    doc = view(report)
    console.print(
        f"[bold]qnndoctor {escape(str(doc.tool.version))}[/] checking "
        f"[bold]{escape(str(doc.target.python))}[/]"
    )
    console.print(f"  [dim]{escape(str(doc.target.how_chosen))}[/]")
    console.print()
    for section in sections(doc):
        mark = (
            "[yellow]could not check[/]"
            if not section.ok
            else _FLAG_MARK.get(section.flagged or "", "[green]ok[/]")
        )
        console.print(f"[bold]{escape(section.title)}[/] {mark}")
        for line in section.lines:
            console.print(f"  {escape(line)}")
    console.print(f"[bold]{escape(smoke_title(doc))}[/] {escape(smoke_line(doc))}")
    console.print("[bold]Recommended onnxruntime-qnn[/]")
    for line in recommendation_lines(doc):
        console.print(f"  {escape(line)}", soft_wrap=True)
    console.print()
    if doc.findings:
        console.print("[bold]Findings[/]")
    for f in doc.findings:
        style = _STYLE.get(f.severity, "bold")
        console.print(
            f"[{style}]{f.severity.upper():7}[/] [bold]{escape(f.title)}[/] [dim]({escape(f.id)})[/]"
        )
        console.print(f"  {escape(f.explanation)}")
        for ev in [e for e in f.evidence if e.value not in (None, [], {})][:4]:
            value = str(ev.value)
            console.print(
                f"  [dim]evidence {escape(ev.fact)}: {escape(value[:200])}{'...' if len(value) > 200 else ''}[/]"
            )
        if f.fix:
            console.print(f"  [green]fix:[/] {escape(f.fix.text)}")
            for command in f.fix.commands:
                console.print(f"    [bold]{escape(command)}[/]", soft_wrap=True)
        console.print()
    for skipped in doc.skipped_checks:
        console.print(f"[yellow]skipped[/] {escape(skipped.rule)}: {escape(skipped.reason)}")
    from ..report.ticket_changes import change_lines

    changed = change_lines(doc.changes_since_report)
    if changed:
        console.print(f"[bold]Since the saved report ({escape(str(doc.report_created))})[/]")
        for line in changed:
            console.print(f"  {escape(line)}")
    c = counts(doc)
    console.print(f"[bold]{c['error']} error(s), {c['warning']} warning(s), {c['info']} info[/]")
