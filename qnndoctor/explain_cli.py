"""``qnndoctor explain``: name the cause of a pasted error message or log.

A pasted log usually comes from another machine, so by default the facts
that rank the candidates are the ones the text states about itself (pip
lines, the bug template, log headers, paths, the SoC). A saved ticket of
that machine (``--from-report``) adds measured facts; this machine is probed
only when asked (``--here`` / ``--python``).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Callable
from typing import Any, TextIO

from . import EXPLAIN_SCHEMA_VERSION, exitcodes, shell
from .diagnosis import CatalogueError, DiagnosisFacts, from_report_facts
from .diagnosis import load as load_catalogue
from .diagnosis.document import explain as explain
from .diagnosis.engine import WEAK_SCORE
from .diagnosis.logfile import LogRead, NotText, read_log
from .matrixdata import MatrixError, Soc, load_socs
from .render.json_out import for_stream

RUNNERS_UP = 2
# Said first when the best candidate is weak (low confidence): users act
# on the first answer; measured by leave-one-out, a third of them were wrong with the
# right entry catalogued, and all of them without it (docs/diagnosis.md); on the
# unseen held-out reports, 4 of 23 low first answers were right (8 of 11 at
# high or medium; docs/accuracy.md).
WEAK_NOTE = (
    "No catalogued cause matched this text well: what follows is a lead to check, not an answer.\n"
)

# What to do when nothing matched: narrow it down on the affected machine.
NEXT_STEPS = (
    "Next, on the machine that failed:\n"
    "  qnndoctor check                   runs a known-good model on the NPU and checks the install\n"
    "  qnndoctor model YOUR_MODEL.onnx   if check passes: what of your model runs on the NPU\n"
    "  qnndoctor report -o ticket.json   a redacted ticket to attach when you ask for help\n"
)


PROGRESS_FROM = 8 * 1024 * 1024  # bytes: a shorter log is read without a progress line


def _progress(err: TextIO, source: str) -> Callable[[int], None] | None:
    """A progress line on a terminal (stderr only, overwritten in place) for a long log."""
    if not err.isatty():
        return None

    def show(done: int) -> None:
        if done >= PROGRESS_FROM:
            err.write(f"\rqnndoctor: reading {source}: {done / (1024 * 1024):,.0f} MiB")
            err.flush()

    return show


def _read_input(source: str, err: TextIO) -> LogRead:
    """The log named on the command line (``-``: stdin), streamed and capped
    (diagnosis.logfile). Raises NotText, OSError."""
    show = _progress(err, source)
    try:
        if source == "-":
            return read_log(sys.stdin.buffer, "stdin", progress=show)
        from .saved import open_input  # a FIFO without a writer must not hang

        with open_input(source) as handle:
            return read_log(handle, source, progress=show)
    finally:
        if show is not None:
            err.write("\r\x1b[K")  # the progress line, cleared
            err.flush()


def _measured_facts(
    args: argparse.Namespace, socs: tuple[Soc, ...], err: TextIO
) -> tuple[DiagnosisFacts | None, str | None]:
    """Facts of a saved ticket or of a probe here; (None, None) when neither was asked."""
    if args.from_report:
        from .saved import load_report

        _target, facts = load_report(args.from_report)
        return from_report_facts(facts, f"saved report {args.from_report}", socs), None
    if not (args.here or args.python):
        return None, None
    from .collect import CouldNotCheck, run_probes
    from .target import TargetError, resolve

    try:
        target = resolve(args.python or "auto")
        facts = run_probes(target).facts
    except (TargetError, CouldNotCheck) as exc:
        return None, f"could not probe this machine ({exc}); using the text's own facts"
    return from_report_facts(facts, f"probe of {target.python} on this machine", socs), None


def _write_exit_status(out: TextIO, status: dict[str, Any] | None) -> None:
    if not status or not (status["name"] or status["known_causes_needing_facts"]):
        return
    code = int(status["code"])
    shown = f"{code & 0xFFFFFFFF:#X}".replace("0X", "0x") if abs(code) > 255 else str(code)
    named = f" ({status['name']})" if status["name"] else ""
    out.write(f"The process ended with exit code {shown}{named}")
    known = status["known_causes_needing_facts"]
    if not known:
        out.write(".\n")
        return
    out.write(
        "; causes known to end a process this way, which only facts from that machine "
        "can confirm (an exit code alone names no cause):\n"
    )
    for item in known[:4]:
        out.write(f"  {item['id']}: {item['title']}\n")


def _write_candidate(out: TextIO, c: dict[str, Any], heading: str) -> None:
    out.write(f"{heading}: {c['title']}\n")
    out.write(f"  id {c['id']} · confidence {c['confidence']} (score {c['score']}; ")
    out.write(f"catalogue: {c['catalogue_confidence']})\n")
    if c.get("doubt"):
        out.write(f"  doubt: {c['doubt']}\n")
    out.write(f"  cause: {c['cause']}\n")
    out.write("  evidence:\n")
    for item in c["evidence"]:
        sign = f"{item['weight']:+d}" if item["weight"] else " 0"
        out.write(f"    {sign:>3}  {item['kind']}: {item['detail']}\n")
    out.write("  fix:\n")
    for line in str(c["fix"]).splitlines():
        out.write(f"    {line}\n")
    if c["sources"]:
        out.write(f"  sources: {' '.join(c['sources'][:3])}\n")


def render_text(document: dict[str, Any], out: TextIO) -> None:
    candidates = document["candidates"]
    facts = document["facts"]["used"]
    if not candidates:
        out.write("No known failure cause matches this text.\n")
        if document.get("failure_lines"):
            out.write(
                "Lines that read like the failure (to search for; `--json` has them redacted):\n"
            )
            for item in document["failure_lines"]:
                out.write(f"  line {item['line']}: {item['text']}\n")
        _write_exit_status(out, document.get("exit_status"))
        out.write(NEXT_STEPS)
    else:
        guess = candidates[0].get("raised_by") == "resemblance"
        # (a tie of two strong matches is no weak match: the tie line says what decides)
        if candidates[0]["confidence"] == "low" and (
            not document["tie"] or candidates[0]["score"] < WEAK_SCORE
        ):
            out.write(WEAK_NOTE)
        matched = any(c.get("raised_by") != "resemblance" for c in candidates)
        heading = (
            "Closest known cause (a guess: the messages that matched are weak and doubtful)"
            if matched
            else "Closest known cause (a guess: no catalogued message matched)"
        )
        _write_candidate(out, candidates[0], heading if guess else "Most likely cause")
        if document.get("follows_from"):
            earlier = document["follows_from"]
            out.write(
                "  this message only follows from an earlier failure; the first one the log "
                f"gives (no catalogued cause matched it), line {earlier['line']}:\n"
                f"    {earlier['text']}\n"
            )
        if document["tie"]:
            out.write(f"  tied with {candidates[1]['id']}: {candidates[1].get('tell_apart', '')}\n")
        elif document["why_first"]:
            out.write(f"  why first: {'; '.join(document['why_first'])}\n")
        for rank, c in enumerate(candidates[1 : 1 + RUNNERS_UP], 2):
            guessed = (
                " (a guess: its symptoms resemble the text)"
                if c.get("raised_by") == "resemblance"
                else " (only in verbose / info lines: what the session narrated)"
                if c.get("verbose_only")
                else ""
            )
            out.write(f"\n{rank}. {c['title']}  [{c['id']}, score {c['score']}]{guessed}\n")
            out.write(f"   tell apart: {c['tell_apart']}\n")
        if len(candidates) > 1 + RUNNERS_UP:
            out.write(
                f"\n(+{len(candidates) - 1 - RUNNERS_UP} weaker candidates: --json lists all)\n"
            )
    _write_where(out, document.get("where"))
    if document.get("qnn_error_codes"):
        out.write("\nQNN error codes in the text (the words of QNN's API headers):\n")
        for item in document["qnn_error_codes"]:
            out.write(f"  line {item['line']}: {item['code']} {item['name']}: {item['meaning']}\n")
    if document["excluded"]:
        out.write("\nRuled out by the facts:\n")
        for item in document["excluded"][:5]:
            out.write(f"  {item['id']}: {item['because']}\n")
    out.write("\nFacts used" + (":\n" if facts else ": none\n"))
    for fact in facts:
        value = fact["value"]
        shown = (", ".join(value) or "none") if isinstance(value, list) else value
        out.write(f"  {fact['key']} = {shown}  ({fact['source']})\n")
    for conflict in document["facts"]["conflicts"]:
        out.write(f"  conflict: {conflict}\n")
    harmless = document["harmless_lines"]
    if harmless:
        kinds = sorted({h["id"] for h in harmless})
        out.write(f"Ignored {len(harmless)} harmless line(s): {', '.join(kinds)}\n")


def qnndoctor_document(text: str, source: str) -> str | None:
    """Why ``text`` is not a log but one of qnndoctor's own JSON documents
    (a ``check`` report or ``report -o`` ticket, or ``explain --json``
    output), with the command that reads it; None for anything else. Read as
    a log, a report's facts and finding titles would only raise guesses."""
    if not text.lstrip().startswith("{"):
        return None
    try:
        document = json.loads(text)
    except ValueError:
        return None
    tool = document.get("tool") if isinstance(document, dict) else None
    if not isinstance(tool, dict) or tool.get("name") != "qnndoctor":
        return None
    path = shell.quote(source, os.name == "nt") if source != "-" else "FILE"
    if "candidates" in document:
        return f"{source} is already the output of `qnndoctor explain --json`, not a log"
    return (
        f"{source} is a qnndoctor report, not a log: re-diagnose it with "
        f"`qnndoctor check --from-report {path}`, or explain a failure log with that "
        f"machine's facts: `qnndoctor explain --log LOG --from-report {path}`"
    )


def run_explain(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    try:
        log = _read_input(args.log, err)
    except OSError as exc:
        err.write(f"qnndoctor: cannot read {args.log}: {exc.strerror or exc}\n")
        return exitcodes.COULD_NOT_CHECK
    except NotText as exc:
        return _refuse(args, out, err, str(exc))
    if log.truncated:
        err.write(f"qnndoctor: warning: {log.truncated}\n")
    text = log.read.text
    if (mistaken := qnndoctor_document(text, args.log)) is not None:
        return _refuse(args, out, err, mistaken)
    try:
        load_catalogue()

        socs = load_socs()
    except (CatalogueError, MatrixError) as exc:
        err.write(f"qnndoctor: {exc}\n")
        return exitcodes.COULD_NOT_CHECK
    facts: DiagnosisFacts | None = None
    if not args.no_facts:
        try:
            facts, warning = _measured_facts(args, socs, err)
        except (OSError, ValueError) as exc:  # saved.SavedReportError is a ValueError
            err.write(f"qnndoctor: error: --from-report: {exc}\n")
            if args.json:
                error = {"kind": "bad-input", "message": str(exc)}
                failed: dict[str, Any] = {"schema_version": EXPLAIN_SCHEMA_VERSION, "error": error}
                if not args.no_redact:
                    from .redact import redact_document

                    failed = redact_document(failed)
                out.write(for_stream(failed, out) + "\n")
            return exitcodes.USAGE
        if warning:
            err.write(f"qnndoctor: warning: {warning}\n")
    document = explain(log, args.exit_code, facts, socs=socs, text_facts=not args.no_facts)
    from .diagnosis import qnn_codes

    for problem in qnn_codes.problems:  # a damaged install: codes go unnamed, say why
        err.write(f"qnndoctor: warning: QNN error codes are not named: {problem}\n")
    if args.json:
        if not args.no_redact:
            from .redact import redact_document

            document = redact_document(document)
        out.write(for_stream(document, out) + "\n")
    else:
        render_text(document, out)
    return exitcodes.OK if document["candidates"] else exitcodes.FINDINGS


def _refuse(args: argparse.Namespace, out: TextIO, err: TextIO, message: str) -> int:
    """Bad input (not a log): a clear error, and with --json one error document."""
    err.write(f"qnndoctor: error: {message}\n")
    if args.json:
        error = {"kind": "bad-input", "message": message}
        refused: dict[str, Any] = {"schema_version": EXPLAIN_SCHEMA_VERSION, "error": error}
        if not args.no_redact:
            from .redact import redact_document

            refused = redact_document(refused)
        out.write(for_stream(refused, out) + "\n")
    return exitcodes.USAGE


def _write_where(out: TextIO, where: dict[str, Any] | None) -> None:
    """Where it failed (diagnosis.stage): said for every answer, and when none."""
    if not where:
        return
    out.write(f"\nWhere it failed: {where['stage']} ({where['component']})")
    out.write(f", line {where['line']}: {where['text']}\n" if where["line"] else "\n")
    out.write(f"  to settle it: {where['experiment']}\n")
