"""``qnndoctor lint PATH...``: arguments in, findings out. Exit codes: 0
clean, 1 findings, 2 usage, 3 an input could not be read."""

from __future__ import annotations

import argparse
from typing import Any, TextIO

from .. import exitcodes
from . import options


def add_parser(sub: Any) -> None:
    lint = sub.add_parser(
        "lint",
        help="find QNN EP option and API mistakes that run with no message (static: sources are not run)",
        description="Reads Python sources (ast, never run) and genai_config.json files for QNN EP "
        "options and API uses that run with no error and no warning while doing something else "
        "than asked, judged for the target's onnxruntime-qnn release. "
        + exitcodes.described("lint"),
    )
    lint.add_argument("paths", nargs="+", metavar="PATH", help="Python files, genai_config.json files, or folders")
    which = lint.add_mutually_exclusive_group()
    options.python(which, "judge for the onnxruntime-qnn this interpreter has")
    which.add_argument("--onnxruntime-qnn", metavar="VERSION", dest="onnxruntime_qnn", help="judge for this release")
    lint.add_argument(
        "--format",
        choices=("text", "json", "sarif"),
        default="text",
        help="text (path:line:col: QNDnnn message, like ruff), one JSON document, or SARIF 2.1.0 for code scanning",
    )


def _version_of(python: str, err: TextIO) -> str | None:
    """The target's onnxruntime-qnn version through check's probes (the
    interpreter is not asked to import onnxruntime)."""
    from ..target.collect import CouldNotCheck, run_probes
    from ..target.interpreter import TargetError, resolve

    try:
        target = resolve(python)
        facts = run_probes(target).facts
    except (TargetError, CouldNotCheck, OSError) as exc:
        err.write(f"qnndoctor lint: could not probe {python}: {exc}\n")
        raise LookupError(str(exc)) from exc
    for dist in facts.value("installs", "distributions", []) or []:
        if isinstance(dist, dict) and dist.get("canonical_name") == "onnxruntime-qnn":
            version = dist.get("version")
            return str(version) if version else None
    err.write(f"qnndoctor lint: {target.python} has no onnxruntime-qnn; judging for the newest release\n")
    return None


def run_lint(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from packaging.version import InvalidVersion, Version

    from ..lint import lint_paths
    from ..render.lint import document, dump, sarif, text

    version = args.onnxruntime_qnn
    if version is not None:
        try:
            Version(version)
        except InvalidVersion:
            err.write(f"qnndoctor lint: error: not a version: {version!r}\n")
            return exitcodes.USAGE
    elif args.python:
        try:
            version = _version_of(args.python, err)
        except LookupError:
            return exitcodes.COULD_NOT_CHECK
    run = lint_paths(args.paths, version)
    if args.format == "json":
        dump(document(run), out)
        for path, error in run.errors:
            err.write(f"{path}: error: {error}\n")
    elif args.format == "sarif":
        dump(sarif(run), out)
        for path, error in run.errors:
            err.write(f"{path}: error: {error}\n")
    else:
        text(run, out, err)
    if run.errors:
        return exitcodes.COULD_NOT_CHECK
    return exitcodes.FINDINGS if run.findings else exitcodes.OK
