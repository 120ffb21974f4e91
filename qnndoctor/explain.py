"""``qnndoctor explain``: classify a pasted error message or log.

Matches the text (and exit code) against the failure-signature catalogue and
ranks the candidates with environment facts: probed live on the affected
machine, taken from a saved report, or none at all for someone else's log.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any, TextIO

from . import __version__, exitcodes, signatures
from .facts import Facts

MAX_INPUT = 16 * 1024 * 1024


def _read_input(source: str) -> str:
    if source == "-":
        data = sys.stdin.buffer.read(MAX_INPUT)
    else:
        from .saved import open_input  # a FIFO without a writer must not hang

        with open_input(source) as handle:
            data = handle.read(MAX_INPUT)
    return data.decode("utf-8", errors="replace")


def _facts(args: argparse.Namespace, err: TextIO) -> tuple[Facts | None, str]:
    if args.no_facts:
        return None, "none (--no-facts)"
    if args.from_report:
        from .cli import _load_saved

        _target, facts = _load_saved(args.from_report)
        return facts, f"saved report {args.from_report}"
    from .collect import CouldNotCheck, run_probes
    from .target import TargetError, resolve

    try:
        target = resolve(args.python)
        return run_probes(target).facts, f"probed {target.python} ({target.how_chosen})"
    except (TargetError, CouldNotCheck) as exc:
        err.write(f"qnndoctor: warning: no facts, matching on the text alone: {exc}\n")
        return None, f"none (could not probe: {exc})"


def explain(
    text: str, exit_code: int | None, facts: Facts | None, facts_source: str
) -> dict[str, Any]:
    """The JSON document of ``explain --json``; pure given its inputs."""
    candidates = signatures.match(text, exit_code=exit_code, facts=facts)
    return {
        "schema_version": 1,
        "tool": {"name": "qnndoctor", "version": __version__},
        "input": {"characters": len(text), "exit_code": exit_code},
        "facts": facts_source,
        "candidates": [c.to_json() for c in candidates],
    }


def _render_text(document: dict[str, Any], out: TextIO) -> None:
    candidates = document["candidates"]
    if not candidates:
        out.write("No known failure signature matches this text.\n")
        out.write(f"(facts used: {document['facts']})\n")
        return
    out.write(
        f"{len(candidates)} candidate cause(s), most likely first (facts used: {document['facts']}):\n\n"
    )
    for rank, c in enumerate(candidates, 1):
        out.write(f"{rank}. {c['title']}  [{c['id']}, score {c['score']}, {c['confidence']}]\n")
        out.write(f"   cause: {c['cause']}\n")
        out.write(f"   fix:   {c['fix']}\n")
        out.write(f"   matched: {'; '.join(c['matched'])}\n")
        if c["sources"]:
            out.write(f"   sources: {', '.join(c['sources'][:3])}\n")
        out.write("\n")


def run_explain(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    try:
        text = _read_input(args.log)
    except OSError as exc:
        err.write(f"qnndoctor: cannot read {args.log}: {exc.strerror or exc}\n")
        return exitcodes.COULD_NOT_CHECK
    try:
        signatures.load()
    except signatures.CatalogueError as exc:
        err.write(f"qnndoctor: {exc}\n")
        return exitcodes.COULD_NOT_CHECK
    from .saved import SavedReportError

    try:
        facts, source = _facts(args, err)
    except SavedReportError as exc:
        err.write(f"qnndoctor: error: --from-report: {exc}\n")
        if args.json:
            error = {"kind": "bad-input", "message": str(exc)}
            failed: dict[str, Any] = {"schema_version": 1, "error": error}
            if not args.no_redact:
                from .redact import redact_document

                failed = redact_document(failed)
            out.write(json.dumps(failed, indent=2) + "\n")
        return exitcodes.USAGE
    document = explain(text, args.exit_code, facts, source)
    if args.json:
        if not args.no_redact:
            from .redact import redact_document

            document = redact_document(document)
        out.write(json.dumps(document, indent=2, ensure_ascii=False) + "\n")
    else:
        _render_text(document, out)
    return exitcodes.OK if document["candidates"] else exitcodes.FINDINGS
