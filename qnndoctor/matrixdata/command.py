"""``qnndoctor recommend`` and ``qnndoctor matrix [show|update]``: arguments in,
rendered text or JSON out (the download itself is ``update.py``)."""

from __future__ import annotations

import argparse
from typing import Any, TextIO

from .. import (
    MATRIX_SCHEMA_VERSION,
    RECOMMEND_SCHEMA_VERSION,
    __version__,
    exitcodes,
    matrixdata,
)
from ..redact import redact_document
from ..render.json_out import for_stream
from .update import UpdateError, update_from


def _dump(document: dict[str, Any], out: TextIO) -> None:
    out.write(for_stream(document, out) + "\n")


def _matrix(args: argparse.Namespace, err: TextIO) -> matrixdata.Matrix | None:
    try:
        matrix = matrixdata.load(None, args.matrix)
    except matrixdata.MatrixError as exc:
        err.write(f"qnndoctor: matrix: {exc}\n")
        return None
    for note in matrix.notes:  # which matrix is used, and why (never silent)
        err.write(f"qnndoctor: warning: matrix: {note}\n")
    return matrix


def render_recommendation(rec: dict[str, Any], out: TextIO) -> None:
    profile = rec.get("profile") or {}
    out.write(
        f"Target: Python {profile.get('python')} {profile.get('arch')} on {profile.get('os')}"
        + (
            f" (emulated; machine is {profile.get('native_arch')})"
            if profile.get("emulated")
            else ""
        )
        + (
            f", HTP v{profile['htp_arch']} ({profile.get('htp_arch_source')})"
            if profile.get("htp_arch")
            else ""
        )
        + (f", system QNN {profile['system_qnn']}" if profile.get("system_qnn") else "")
        + (f", NPU driver {profile['npu_driver']}" if profile.get("npu_driver") else "")
        + "\n"
    )
    status = rec.get("status")
    emulation = rec.get("emulation")
    if emulation:
        out.write(f"\nEmulation: {emulation.get('verdict')}.\n")
        native = emulation.get("native_arm64") or {}
        if native.get("commands"):
            out.write(
                f"Recommended: native ARM64 Python with onnxruntime-qnn {native.get('version')}:\n"
            )
            for command in native["commands"]:
                out.write(f"    {command}\n")
        if emulation.get("this_interpreter_commands"):
            out.write("Or, staying in this emulated x64 Python:\n")
            for command in emulation["this_interpreter_commands"]:
                out.write(f"    {command}\n")
    if status == "ok" and not emulation:
        out.write(
            f"\nInstall onnxruntime-qnn {rec['version']} ({rec['era']}, bundled QNN "
            f"{rec.get('bundled_qnn') or 'unknown'}; wheel {rec['file']}):\n"
        )
        for command in rec.get("commands", []):
            out.write(f"    {command}\n")
        if rec.get("already_installed"):
            out.write("    (already installed: nothing to do)\n")
        for alternative in rec.get("alternatives", []):
            out.write(
                f"Better: {alternative['change']}, then onnxruntime-qnn {alternative['version']}\n"
            )
    elif status == "nothing-fits":
        out.write("\nNo onnxruntime-qnn release works for this interpreter.\n")
        for alternative in rec.get("alternatives", []):
            out.write(
                f"  instead: {alternative['change']}, then install onnxruntime-qnn "
                f"{alternative['version']}\n"
            )
            for command in alternative.get("commands") or []:
                out.write(f"      {command}\n")
    elif status != "ok":
        out.write(f"\nNo recommendation: {rec.get('reason') or '; '.join(rec.get('notes', []))}\n")
    if rec.get("ruled_out"):
        out.write("\nNewer releases, and why they are ruled out:\n")
        from ..compat_rules import confidence_words

        # Consecutive releases ruled out for the same reasons share one entry.
        groups: list[tuple[list[str], list[dict[str, Any]]]] = []
        for verdict in rec["ruled_out"]:
            if groups and groups[-1][1] == verdict["reasons"]:
                groups[-1][0].append(verdict["version"])
            else:
                groups.append(([verdict["version"]], verdict["reasons"]))
        for versions, reasons in groups:
            label = versions[0] if len(versions) == 1 else f"{versions[-1]} to {versions[0]}"
            count = f" ({len(versions)} releases)" if len(versions) > 1 else ""
            out.write(f"  {label}{count}:\n")
            for r in reasons:
                sources = ", ".join(r.get("sources") or [])
                out.write(
                    f"      {r['detail']} ({confidence_words(r['confidence'])}"
                    + (f"; see {sources}" if sources else "")
                    + ")\n"
                )
    for note in rec.get("notes", []):
        out.write(f"note: {note}\n")
    if rec.get("local_evidence"):
        from ..evidence import evidence_lines

        for line in evidence_lines(rec["local_evidence"]):
            out.write(line + "\n")


def run_recommend(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from ..collect import CouldNotCheck
    from ..pipeline import recommend_here
    from ..target import TargetError

    matrix = _matrix(args, err)
    if matrix is None:
        return exitcodes.COULD_NOT_CHECK
    if getattr(args, "platform", None) or getattr(args, "python_version", None):
        from ..whatif import run_what_if

        if not getattr(args, "platform", None):
            err.write("qnndoctor: error: --python-version needs --platform (what-if mode)\n")
            return exitcodes.USAGE
        return run_what_if(args, matrix, out, err)
    try:
        target, rec = recommend_here(
            args.python, matrix, allow_prerelease=args.pre, timeout=args.timeout
        )
    except (TargetError, CouldNotCheck) as exc:
        err.write(f"qnndoctor: could not check: {exc}\n")
        return exitcodes.COULD_NOT_CHECK
    from ..evidence import for_recommendation

    evidence = for_recommendation(rec)  # what the user's own fleets saw (fleet --import-compat)
    if evidence is not None:
        rec["local_evidence"] = evidence
    if args.json:
        document: dict[str, Any] = {
            "schema_version": RECOMMEND_SCHEMA_VERSION,
            "tool": {"name": "qnndoctor", "version": __version__},
            "target": target.to_json(),
            "recommendation": rec,
        }
        _dump(document if args.no_redact else redact_document(document), out)
    else:
        render_recommendation(rec, out)
    if rec.get("status") == "ok":
        return exitcodes.OK
    return exitcodes.FINDINGS if rec.get("status") == "nothing-fits" else exitcodes.COULD_NOT_CHECK


def _show(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from ..resolver import releases_summary

    matrix = _matrix(args, err)
    if matrix is None:
        return exitcodes.COULD_NOT_CHECK
    rows = list(releases_summary(matrix.releases))
    if args.json:
        _dump(
            {
                "schema_version": MATRIX_SCHEMA_VERSION,
                "source": matrix.releases_source,
                "provenance": dict(matrix.releases.provenance),
                "rows": rows,
                "known_issues": [
                    {
                        "id": i.id,
                        "title": i.title,
                        "versions": str(i.versions),
                        "sources": list(i.sources),
                    }
                    for i in matrix.releases.known_issues
                ],
            },
            out,
        )
        return exitcodes.OK
    out.write(f"release matrix: {matrix.releases_source}\n")
    generated = matrix.releases.provenance.get("generated")
    if generated:
        out.write(f"generated {generated} by {matrix.releases.provenance.get('tool')}\n")
    out.write(f"{'version':26} {'platform':14} {'python':28} {'QNN':12} {'stubs':10} companion\n")
    for row in rows:
        out.write(
            f"{row['version']:26} {row['platform']:14} {','.join(row['python']):28} "
            f"{row['qnn_version'] or '-':12} {','.join(f'v{s}' for s in row['stubs']) or '-':10} "
            f"{row['companion'] or '-'}\n"
        )
    return exitcodes.OK


def run_matrix(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    if args.action == "show":
        return _show(args, out, err)
    if not args.source_url:
        err.write("qnndoctor: matrix update needs --from URL\n")
        return exitcodes.USAGE
    try:
        path = update_from(args.source_url, max_bytes=args.max_bytes, deadline=args.deadline)
    except UpdateError as exc:
        err.write(f"qnndoctor: matrix update refused, keeping the current matrix: {exc}\n")
        return exitcodes.COULD_NOT_CHECK
    out.write(f"installed {path}\n")
    return exitcodes.OK
