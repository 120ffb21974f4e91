"""``qnndoctor recommend`` and ``qnndoctor matrix [show|update]``: arguments in,
rendered text or JSON out (the download itself is ``update.py``, the update
from the package index ``from_index.py``)."""

from __future__ import annotations

import argparse
from typing import Any, TextIO

from .. import MATRIX_SCHEMA_VERSION, RECOMMEND_SCHEMA_VERSION, __version__, exitcodes, matrixdata
from ..matrixdata.update import UpdateError, update_from
from ..render.json_out import for_stream
from ..render.recommend import matrix_table, render_recommendation
from ..report.redact import redact_document

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


def run_recommend(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from ..pipeline import recommend_here
    from ..target.collect import CouldNotCheck
    from ..target.interpreter import TargetError

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
    from ..resolver.recommend import recommend
    from ..resolver.whatif import WhatIf, WhatIfError, profile_for

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

    if as_json:
        _dump(document, out)
    else:
        if "what_if" in document.get("target", {}):
            out.write("What-if (nothing probed): ")
        render_recommendation(rec, out)
    out.flush()
    return code


def _show(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from ..resolver.recommend import releases_summary

    matrix = _matrix(args, err)
    if matrix is None:
        return exitcodes.COULD_NOT_CHECK
    rows = list(releases_summary(matrix.releases))
    from ..matrixdata.companions import proven

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


def run_matrix(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    if args.action == "show":
        if args.source_url:
            err.write(
                "qnndoctor: error: --from URL is for `qnndoctor matrix update --from URL`; "
                "`matrix show` shows the installed matrix (or --matrix FILE)\n"
            )
            return exitcodes.USAGE
        return _show(args, out, err)
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
    from ..matrixdata.from_index import update_from_index
    from ..matrixdata.wheelreader.common import Log

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
