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

from .. import EXPLAIN_SCHEMA_VERSION, exitcodes, shell
from ..diagnosis import CatalogueError, DiagnosisFacts, from_report_facts
from ..diagnosis import load as load_catalogue
from ..diagnosis.document import explain
from ..diagnosis.logfile import LogRead, NotText, read_log
from ..matrixdata import MatrixError, Soc, load_socs
from ..render.explain import render_text
from ..render.json_out import for_stream

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
        from ..target.ticket import open_input  # a FIFO without a writer must not hang

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
        from ..target.ticket import load_report

        _target, facts = load_report(args.from_report)
        return from_report_facts(facts, f"saved report {args.from_report}", socs), None
    if not (args.here or args.python):
        return None, None
    from ..target.collect import CouldNotCheck, run_probes
    from ..target.interpreter import TargetError, resolve

    try:
        target = resolve(args.python or "auto")
        facts = run_probes(target).facts
    except (TargetError, CouldNotCheck) as exc:
        return None, f"could not probe this machine ({exc}); using the text's own facts"
    return from_report_facts(facts, f"probe of {target.python} on this machine", socs), None


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
                    from ..report.redact import redact_document

                    failed = redact_document(failed)
                out.write(for_stream(failed, out) + "\n")
            return exitcodes.USAGE
        if warning:
            err.write(f"qnndoctor: warning: {warning}\n")
    document = explain(log, args.exit_code, facts, socs=socs, text_facts=not args.no_facts)
    from ..diagnosis import qnn_codes, stage

    for problem in qnn_codes.problems:  # a damaged install: codes go unnamed, say why
        err.write(f"qnndoctor: warning: QNN error codes are not named: {problem}\n")
    for problem in stage.problems:  # the stage is read from the lines alone, say why
        err.write(f"qnndoctor: warning: causes are not placed at a stage: {problem}\n")
    if args.json:
        if not args.no_redact:
            from ..report.redact import redact_document

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
            from ..report.redact import redact_document

            refused = redact_document(refused)
        out.write(for_stream(refused, out) + "\n")
    return exitcodes.USAGE
