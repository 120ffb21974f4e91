"""``qnndoctor recommend`` and ``qnndoctor matrix [show|update]``: arguments in,
rendered text or JSON out (the download itself is ``update.py``, the update
from the package index ``from_index.py``)."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable
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

FROM_URL_MAX_BYTES = 16 * 1024 * 1024  # one releases.json
# the new releases' wheel headers: about 5 MiB per release of 16 wheels
FROM_INDEX_MAX_BYTES = 64 * 1024 * 1024


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
        shown = ((emulation or {}).get("native_arm64") or {}).get("commands")
        for alternative in rec.get("alternatives", []):
            if alternative.get("commands") == shown:  # the route just recommended
                continue
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
    if rec.get("fleet_evidence"):
        from ..evidence.fleet import evidence_lines

        for line in evidence_lines(rec["fleet_evidence"]):
            out.write(line + "\n")


def run_recommend(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from ..collect import CouldNotCheck
    from ..pipeline import recommend_here
    from ..target import TargetError

    matrix = _matrix(args, err)
    if matrix is None:
        return exitcodes.COULD_NOT_CHECK
    if getattr(args, "platform", None) or getattr(args, "python_version", None):
        if not getattr(args, "platform", None):
            err.write("qnndoctor: error: --python-version needs --platform (what-if mode)\n")
            return exitcodes.USAGE
        return _run_what_if(args, matrix, out, err)
    try:
        target, rec = recommend_here(
            args.python, matrix, allow_prerelease=args.pre, timeout=args.timeout
        )
    except (TargetError, CouldNotCheck) as exc:
        err.write(f"qnndoctor: could not check: {exc}\n")
        return exitcodes.COULD_NOT_CHECK
    from ..evidence.fleet import for_recommendation

    fleet_seen = for_recommendation(rec)  # what the user's own fleets saw (fleet --import-compat)
    if fleet_seen is not None:
        rec["fleet_evidence"] = fleet_seen
    document: dict[str, Any] = {
        "schema_version": RECOMMEND_SCHEMA_VERSION,
        "tool": {"name": "qnndoctor", "version": __version__},
        "target": target.to_json(),
        "recommendation": rec,
    }
    return write_recommendation(
        document if args.no_redact else redact_document(document), args.json, out
    )


def _run_what_if(
    args: argparse.Namespace, matrix: matrixdata.Matrix, out: TextIO, err: TextIO
) -> int:
    """What-if mode (``recommend --platform ...``): the answer for the machine
    the arguments describe, nothing probed (``whatif.py`` decides it)."""
    from ..resolver import recommend
    from ..whatif import WhatIf, WhatIfError, profile_for

    if args.python is not None:
        err.write(
            "qnndoctor: error: --python probes a real interpreter; what-if mode (--platform) probes nothing\n"
        )
        return exitcodes.USAGE
    if not args.python_version:
        err.write("qnndoctor: error: --platform needs --python-version X.Y\n")
        return exitcodes.USAGE
    machine = WhatIf(
        platform=args.platform,
        python_version=args.python_version,
        soc=args.soc,
        htp_arch=args.htp_arch,
        native_arch=args.native_arch,
        npu_driver=args.npu_driver,
        glibc=args.glibc,
        qnn_sdk=args.qnn_sdk,
    )
    try:
        profile = profile_for(machine, matrix)
    except WhatIfError as exc:
        err.write(f"qnndoctor: error: {exc}\n")
        return exitcodes.USAGE
    rec = recommend(profile, matrix.releases, allow_prerelease=args.pre).to_json()
    rec["matrix"] = matrix.releases_source
    document = {
        "schema_version": RECOMMEND_SCHEMA_VERSION,
        "tool": {"name": "qnndoctor", "version": __version__},
        "target": {"what_if": machine.to_json()},
        "recommendation": rec,
    }
    return write_recommendation(document, args.json, out)


def write_recommendation(document: dict[str, Any], as_json: bool, out: TextIO) -> int:
    """Print a recommend document; its exit code is decided by the answer, not
    by whether the reader stayed (`qnndoctor recommend ... | head -1`)."""
    rec = document["recommendation"]
    status = rec.get("status")
    code = (
        exitcodes.OK
        if status == "ok"
        else exitcodes.FINDINGS
        if status == "nothing-fits"
        else exitcodes.COULD_NOT_CHECK
    )

    def write() -> int:
        if as_json:
            _dump(document, out)
        else:
            if "what_if" in document.get("target", {}):
                out.write("What-if (nothing probed): ")
            render_recommendation(rec, out)
        out.flush()
        return code

    return _written(write, code)


def _written(write: Callable[[], int], decided: int) -> int:
    """Run ``write``; when the reader went away (a closed pipe) the exit code
    is the one already ``decided``, and later writes to stdout go nowhere."""
    try:
        return write()
    except BrokenPipeError:
        try:
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        except (OSError, ValueError):  # stdout is not a file (a test's capture)
            pass
        return decided


def _show(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from ..resolver import releases_summary

    matrix = _matrix(args, err)
    if matrix is None:
        return exitcodes.COULD_NOT_CHECK
    rows = list(releases_summary(matrix.releases))
    from .companions import proven

    measured = [
        {
            "version": str(r.version),
            "pin": m.pin,
            "text": m.text,
            "rows": [dict(c) for c in r.companions],
        }
        for r in matrix.releases.releases
        if (m := proven(r)) is not None
    ]
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
                "companion_evidence": measured,
            },
            out,
        )
        return exitcodes.OK
    out.write(f"release matrix: {matrix.releases_source}\n")
    generated = matrix.releases.provenance.get("generated")
    if generated:
        out.write(f"generated {generated} by {matrix.releases.provenance.get('tool')}\n")
    out.write(matrix_table(rows))
    if measured:
        out.write("\ncompanion experiments (the resolver's companion pins come from these):\n")
    for item in measured:
        pin = f"; installs with {item['pin']}" if item["pin"] else ""
        out.write(f"  {item['version']}: {item['text']}{pin}\n")
    return exitcodes.OK


def matrix_table(rows: list[dict[str, Any]]) -> str:
    """The rows of `qnndoctor matrix` as aligned columns, each as wide as its
    widest cell (the stubs of a Linux ARM64 wheel are 23 characters)."""
    header = ("version", "platform", "python", "QNN", "stubs", "companion")
    cells = [
        (
            str(row["version"]),
            str(row["platform"]),
            ",".join(row["python"]),
            row["qnn_version"] or "-",
            ",".join(f"v{s}" for s in row["stubs"]) or "-",
            row["companion"] or "-",
        )
        for row in rows
    ]
    lines = (header, *cells)
    widths = [max(len(line[i]) for line in lines) for i in range(len(header) - 1)]
    return "".join(
        " ".join(line[i].ljust(width) for i, width in enumerate(widths)) + f" {line[-1]}\n"
        for line in lines
    )


def run_matrix(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    if args.action == "show":
        if args.source_url:
            err.write(
                "qnndoctor: error: --from URL is for `qnndoctor matrix update --from URL`; "
                "`matrix show` shows the installed matrix (or --matrix FILE)\n"
            )
            return exitcodes.USAGE
        return _written(lambda: _show(args, out, err), exitcodes.OK)
    if not args.source_url:
        return _update_from_index(args, out, err)
    try:
        path = update_from(
            args.source_url,
            max_bytes=FROM_URL_MAX_BYTES if args.max_bytes is None else args.max_bytes,
            deadline=args.deadline,
        )
    except UpdateError as exc:
        err.write(f"qnndoctor: matrix update refused, keeping the current matrix: {exc}\n")
        return exitcodes.COULD_NOT_CHECK
    out.write(f"installed {path}\n")
    return exitcodes.OK


def _update_from_index(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    """`matrix update` without --from: the new releases on pip's index."""
    from .from_index import update_from_index
    from .wheelreader.common import Log

    try:
        done = update_from_index(
            max_bytes=FROM_INDEX_MAX_BYTES if args.max_bytes is None else args.max_bytes,
            deadline=args.deadline,
            log=Log(err, False, prefix="qnndoctor: matrix update"),
        )
    except UpdateError as exc:
        err.write(f"qnndoctor: matrix update refused, keeping the current matrix: {exc}\n")
        return exitcodes.COULD_NOT_CHECK
    err.write(
        f"qnndoctor: matrix update: index {done.index}; {done.requests} requests, "
        f"{done.bytes_read} bytes read\n"
    )
    if done.installed is None:
        out.write(f"already current: {done.current} lists every release on the index\n")
        return exitcodes.OK
    for added in done.added:
        out.write(
            f"added {added.version}: {added.wheels} wheel{'s' if added.wheels != 1 else ''}\n"
        )
    out.write(f"installed {done.installed}\n")
    return exitcodes.OK
