"""Command line: ``qnndoctor check`` and friends.

JSON goes to stdout alone; logs and progress go to stderr. Exit codes:
0 no finding at or above ``--fail-on``; 1 such findings; 2 usage error;
3 could not check.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from . import __version__, exitcodes

if TYPE_CHECKING:
    from .pipeline import CheckOptions
    from .runner import Runner


# True when qnndoctor runs as its own console command (``entry``), not as a
# library inside someone's process: process-wide switches are then allowed.
_OWNS_PROCESS = False


class _Log:
    def __init__(self, verbose: bool, stream: TextIO) -> None:
        self.verbose = verbose
        self.stream = stream

    def __call__(self, message: str) -> None:
        if self.verbose:
            self.stream.write(f"qnndoctor: {message}\n")
            self.stream.flush()


EXPLAIN_FACTS_HELP = """\
where the facts that rank the candidates come from:
  1. the text itself (always, unless --no-facts): pip list / pip freeze / pip show
     lines, the bug template's "ONNX Runtime version" / "Python version" lines,
     wheel file names, ORT and QNN log headers (QNN / QAIRT versions, "Detected
     Snapdragon SOC ..."), OS and Python from paths, SoC names through the SoC
     table, ADSP_LIBRARY_PATH, non-ASCII paths, ~nnxruntime leftovers;
  2. --from-report TICKET: the measured facts of a saved `qnndoctor check --json`
     of the affected machine (they win over what the text says; conflicts are listed);
  3. --here (or --python PATH): probe an interpreter on THIS machine; only when
     the log was produced here.
The output lists every fact used and where it came from."""


def _shared_options(parser: argparse.ArgumentParser, target: Any) -> None:
    """The options ``check`` and ``explain`` share, declared once. ``target``
    is where --python / --from-report go (explain: a mutually exclusive group)."""
    target.add_argument(
        "--python",
        metavar="PATH|auto",
        help="interpreter (or environment folder) to probe; 'auto' picks the active "
        "venv/conda env, else python on PATH, else the py launcher's default (Windows' "
        "Store alias last)",
    )
    target.add_argument(
        "--from-report",
        metavar="FILE",
        help="the facts of a saved `check --json` report (a ticket): check re-diagnoses "
        "them instead of probing; explain adds them to the facts the text states",
    )
    parser.add_argument(
        "--no-redact",
        action="store_true",
        help="keep user name, host name and home paths in JSON/Markdown output",
    )
    parser.add_argument("-v", "--verbose", action="store_true", help="log progress to stderr")


def _check_run_options(parser: argparse.ArgumentParser) -> None:
    """How ``check`` (and ``report``, which runs the same check) probe and judge."""
    parser.add_argument("--no-smoke", action="store_true", help="skip the smoke session")
    parser.add_argument(
        "--backend",
        choices=("htp", "gpu", "cpu"),
        default="htp",
        help="QNN backend for the smoke session (default htp)",
    )
    parser.add_argument(
        "--smoke-timeout",
        type=float,
        default=60.0,
        metavar="SECONDS",
        help="time limit for the smoke session; its whole process tree is killed after it (default 60)",
    )
    parser.add_argument(
        "--fail-on",
        choices=("error", "warning"),
        default="error",
        help="lowest severity that makes the exit code 1 (default: error)",
    )
    parser.add_argument(
        "--timeout",
        type=float,
        default=60.0,
        metavar="SECONDS",
        help="time limit for the probe program (default 60)",
    )
    parser.add_argument(
        "--deep", action="store_true", help="hash every key file, however large (slower)"
    )
    parser.add_argument(
        "--matrix",
        type=Path,
        metavar="FILE",
        help="use this releases.json (or matrix folder) instead of the installed matrix",
    )


def _add_check(sub: Any) -> None:
    check = sub.add_parser(
        "check",
        help="probe an interpreter and report findings",
        description="Probe an interpreter's onnxruntime-qnn installation (read, not imported), "
        "run a tiny quantized model on the QNN backend in a contained child (the smoke "
        "session), and report findings, each with its evidence and fix, and the onnxruntime-qnn "
        "version to use; --from-report re-diagnoses a saved ticket instead. "
        + exitcodes.described("check"),
    )
    # a saved ticket's facts replace the probe: --python beside it would be ignored
    _shared_options(check, check.add_mutually_exclusive_group())
    check.add_argument(
        "--format",
        choices=("text", "json", "markdown"),
        default="text",
        help="text for the terminal (default), json (one document on stdout), markdown (to "
        "paste into an issue)",
    )
    check.add_argument(
        "--json", action="store_const", const="json", dest="format", help="same as --format json"
    )
    check.add_argument(
        "-q",
        "--quiet",
        action="store_true",
        help="installer mode: print exactly one verdict line (ok, or the top finding and its fix)"
        " and nothing else",
    )
    check.add_argument(
        "--output",
        metavar="FILE",
        help="also write the JSON report to FILE (atomically; redacted unless --no-redact)",
    )
    check.add_argument(
        "--list-findings",
        action="store_true",
        help="print every finding id with its title and exit",
    )
    _check_run_options(check)


def _add_report(sub: Any) -> None:
    report = sub.add_parser(
        "report",
        help="write one redacted ticket file for support (JSON with a Markdown summary)",
        description="Run the same check as `check` and write one ticket for support: the JSON "
        "report (redacted unless --no-redact) with its Markdown summary inside "
        "(summary_markdown); `check --from-report` re-diagnoses it. "
        + exitcodes.described("report"),
    )
    _shared_options(report, report.add_mutually_exclusive_group())
    report.add_argument(
        "-o", "--output", required=True, metavar="FILE", help="the ticket file ('-': stdout)"
    )
    _check_run_options(report)


def _add_recommend(sub: Any) -> None:
    recommend = sub.add_parser(
        "recommend",
        help="the onnxruntime-qnn version to install here, and why not a newer one",
        description="The onnxruntime-qnn version to install for an interpreter (probed), or, in "
        "what-if mode, for another machine described by the options below (nothing is probed), "
        "with the commands and why no newer release fits. " + exitcodes.described("recommend"),
    )
    recommend.add_argument("--python", metavar="PATH|auto", help="interpreter to recommend for")
    recommend.add_argument("--json", action="store_true", help="one JSON document on stdout")
    recommend.add_argument(
        "--no-redact", action="store_true", help="keep user name, host name and home paths in JSON"
    )
    recommend.add_argument("--pre", action="store_true", help="consider pre-releases")
    recommend.add_argument(
        "--matrix", type=Path, metavar="FILE", help="use this releases.json (or matrix folder)"
    )
    recommend.add_argument(
        "--timeout",
        type=float,
        default=60.0,
        metavar="SECONDS",
        help="time limit for the probe program (default 60)",
    )
    what_if = recommend.add_argument_group(
        "what-if mode", "answer for another machine from these values alone (nothing is probed)"
    )
    what_if.add_argument(
        "--platform",
        choices=("win_arm64", "win_amd64", "linux_aarch64", "linux_x86_64"),
        help="the other machine's platform (its Python's wheel tag); with --python-version",
    )
    what_if.add_argument("--python-version", metavar="X.Y", help="e.g. 3.12 (3.13t: free-threaded)")
    chip = what_if.add_mutually_exclusive_group()
    chip.add_argument(
        "--soc",
        metavar="NAME",
        help="'Snapdragon X Elite', 'X1E-78-100', 'SM8650', 'soc_model=60', 'soc_id=555'",
    )
    chip.add_argument("--htp-arch", metavar="vNN", help="Hexagon version, e.g. v73")
    what_if.add_argument(
        "--native-arch",
        choices=("arm64",),
        help="with win_amd64: x64 Python under emulation on an ARM64 machine",
    )
    what_if.add_argument("--npu-driver", metavar="VERSION", help="the NPU driver version there")
    what_if.add_argument("--glibc", metavar="X.Y", help="glibc version there (Linux)")
    what_if.add_argument("--qnn-sdk", metavar="VERSION", help="a system QNN SDK installed there")
    recommend.add_argument("-v", "--verbose", action="store_true", help="log progress to stderr")


def _add_matrix(sub: Any) -> None:
    matrix = sub.add_parser(
        "matrix",
        help="show the release matrix, or update it (from pip's index, or --from URL)",
        description="Show the release matrix qnndoctor judges with (every onnxruntime-qnn "
        "release: its wheels, bundled QNN and HTP stubs), or update it into the user cache: "
        "with the releases new on the package index pip is configured with (only their wheels' "
        "headers are read, by HTTP range requests), or from an HTTPS URL of a releases.json. "
        + exitcodes.described("matrix"),
    )
    matrix.add_argument(
        "action",
        nargs="?",
        choices=("show", "update"),
        default="show",
        help="show the matrix in use (default), or update it (from pip's index, or --from URL)",
    )
    matrix.add_argument("--json", action="store_true", help="one JSON document on stdout")
    matrix.add_argument(
        "--matrix", type=Path, metavar="FILE", help="show this releases.json instead"
    )
    matrix.add_argument(
        "--from", dest="source_url", metavar="URL", help="update: HTTPS URL of a releases.json"
    )
    matrix.add_argument(
        "--max-bytes",
        type=int,
        default=None,
        help="update: refuse to read more bytes than this (default 16 MiB with --from, "
        "64 MiB from the index)",
    )
    matrix.add_argument(
        "--deadline",
        type=float,
        default=120.0,
        metavar="SECONDS",
        help="update: give up if the whole update takes longer (default 120)",
    )


def _add_explain(sub: Any) -> None:
    import textwrap

    explain = sub.add_parser(
        "explain",
        help="name the cause of an error message or log (failure-signature catalogue)",
        # wrapped here: this parser prints its epilog (and so its description) as written
        description=textwrap.fill(
            "Name the most likely cause of an error message or log from the failure-signature "
            "catalogue, with the evidence, the fix, the sources and what would tell it apart "
            "from the runner-up. " + exitcodes.described("explain"),
            79,
            break_on_hyphens=False,
        ),
        epilog=EXPLAIN_FACTS_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    explain.add_argument(
        "--log", required=True, metavar="FILE", help="log or error text ('-' for stdin)"
    )
    explain.add_argument(
        "--exit-code",
        type=_exit_code,
        metavar="N",
        help="the crashed process's exit code (decimal or 0x hex); sharpens, never decides alone",
    )
    facts_from = explain.add_mutually_exclusive_group()
    _shared_options(explain, facts_from)
    facts_from.add_argument(
        "--here",
        action="store_true",
        help="add the facts of a probe of this machine (`--python auto`): the log was produced here",
    )
    facts_from.add_argument(
        "--no-facts",
        action="store_true",
        help="match on the text alone: no facts, not even those the text states",
    )
    explain.add_argument("--json", action="store_true", help="one JSON document on stdout")


def _add_model(sub: Any) -> None:
    from .model.command import add_parser

    add_parser(sub)


def _add_fix(sub: Any) -> None:
    from .fix.command import add_parser

    add_parser(sub)


def _add_bisect(sub: Any) -> None:
    from .bisect.command import add_parser

    add_parser(sub)


def _add_lint(sub: Any) -> None:
    from .lint.command import add_parser

    add_parser(sub)


def _add_fleet(sub: Any) -> None:
    from .fleet.command import add_parser

    add_parser(sub)


_COMMANDS = {
    "check": _add_check,
    "report": _add_report,
    "recommend": _add_recommend,
    "matrix": _add_matrix,
    "explain": _add_explain,
    "model": _add_model,
    "fix": _add_fix,
    "bisect": _add_bisect,
    "lint": _add_lint,
    "fleet": _add_fleet,
}


def _parser(command: str | None = None) -> argparse.ArgumentParser:
    """The whole parser, or (``command``) one with only that sub-command:
    its parsing, errors and help are the same, and a start-up that checks
    does not build the other six."""
    parser = argparse.ArgumentParser(
        prog="qnndoctor",
        description="Diagnose onnxruntime-qnn (Qualcomm NPU) setups.",
    )
    parser.add_argument("--version", action="version", version=f"qnndoctor {__version__}")
    sub = parser.add_subparsers(
        dest="command", required=True, metavar="COMMAND", help="`qnndoctor COMMAND --help` for each"
    )
    for name, add in _COMMANDS.items():
        if command in (None, name):
            add(sub)
    return parser


def _exit_code(text: str) -> int:
    try:
        return int(text, 0)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(f"not an exit code: {text!r}") from exc


def _list_findings(out: TextIO) -> int:
    from .rules import all_finding_kinds

    for kind in sorted(all_finding_kinds(), key=lambda k: k.id):
        out.write(f"{kind.id:34} {kind.severity.label:8} {kind.title}\n")
    return exitcodes.OK


def check_options(args: argparse.Namespace) -> CheckOptions:
    """The pipeline's options from ``check``'s parsed arguments."""
    from .pipeline import CheckOptions

    return CheckOptions(
        python=args.python,
        smoke=not args.no_smoke,
        backend=args.backend,
        smoke_timeout=args.smoke_timeout,
        timeout=args.timeout,
        deep=args.deep,
        matrix=args.matrix,
        # Text on the terminal is for the user at it; what is saved or pasted is redacted.
        redact=getattr(args, "format", "json") in ("json", "markdown") and not args.no_redact,
        from_report=args.from_report,
        owns_process=_OWNS_PROCESS,
    )


def run_check(
    args: argparse.Namespace, out: TextIO, err: TextIO, runner: Runner | None = None
) -> int:
    """``qnndoctor check``: run the pipeline, then render what it gives back."""
    if args.list_findings:
        return _list_findings(out)
    from .pipeline import run_check as run_pipeline

    quiet = bool(getattr(args, "quiet", False))
    log = _Log(args.verbose and not quiet, err)
    outcome = run_pipeline(check_options(args), runner=runner, log=log, output_format=args.format)
    code = outcome.exit_code(args.fail_on)
    if getattr(args, "output", None):
        written = _write_output(args, outcome.document)
        if written is not None:
            if quiet:  # the README's promise: one line, a usage problem reads "bad input:"
                out.write(f"bad input: {written}\n")
            else:
                err.write(f"qnndoctor: error: {written}\n")
            return exitcodes.USAGE
    if quiet:
        from .installer import verdict

        out.write(verdict(outcome.document, code) + "\n")
        return code
    error = outcome.error
    if error is not None:
        if error.kind == "bad-input":
            err.write(f"qnndoctor: error: {error.message}\n")
        else:
            err.write(f"qnndoctor: could not check: {error.message}\n")
            if error.detail and args.verbose:
                err.write(error.detail + "\n")
    for warning in outcome.warnings:
        err.write(f"qnndoctor: warning: {warning}\n")
    from .render import renderer

    if outcome.report is not None or args.format == "json":
        try:
            renderer(args.format)(outcome.document, out)
        except BrokenPipeError:  # the verdict is made: it stays the exit code
            reader_gone()
    return code


def run_report(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    """``qnndoctor report -o FILE``: one ticket, the report (redacted unless
    --no-redact) with its Markdown summary inside, for support."""
    import io

    from .pipeline import run_check as run_pipeline
    from .render import renderer

    outcome = run_pipeline(check_options(args), log=_Log(args.verbose, err), output_format="json")
    if outcome.error is not None and outcome.error.kind == "bad-input":
        # no ticket of a bad command line or a bad --from-report ticket: it would hold nothing
        err.write(f"qnndoctor: error: {outcome.error.message}\n")
        if args.output == "-":  # stdout still holds one document, as with `check --json`
            renderer("json")(outcome.document, out)
        return outcome.exit_code(args.fail_on)
    document = dict(outcome.document)
    if outcome.report is not None:
        summary = io.StringIO()
        renderer("markdown")(document, summary)
        document["summary_markdown"] = summary.getvalue()
    elif outcome.error is not None:
        document["summary_markdown"] = f"qnndoctor could not check: {outcome.error.message}\n"
    if args.output == "-":
        renderer("json")(document, out)
    else:
        failed = _write_output(args, document)
        if failed is not None:
            err.write(f"qnndoctor: error: {failed}\n")
            return exitcodes.USAGE
        how = "not redacted" if args.no_redact else "redacted"
        err.write(f"qnndoctor: ticket written to {args.output} ({how})\n")
    if outcome.error is not None:
        err.write(f"qnndoctor: could not check: {outcome.error.message}\n")
    code = outcome.exit_code(args.fail_on)
    if code == exitcodes.FINDINGS:  # the ticket was written: say why the exit code is not 0
        err.write(
            f"qnndoctor: exit code {code}: the ticket holds a finding at or above --fail-on "
            f"{args.fail_on} (as `check` would exit)\n"
        )
    return code


def _write_output(args: argparse.Namespace, document: dict[str, Any]) -> str | None:
    """``--output FILE``: the JSON report, redacted unless --no-redact (even
    when the display is unredacted text); the error message if it failed."""
    from .installer import write_atomically

    if not args.no_redact and not document.get("redacted"):
        from .redact import redact_document

        document = redact_document(document)
    try:
        write_atomically(args.output, document)
    except OSError as exc:
        return f"--output: cannot write {args.output}: {exc.strerror or exc}"
    return None


def main(argv: list[str] | None = None) -> int:
    # A character the stream's code page lacks (Windows output redirected to
    # a file) is written as its escape, never as '?': a path shown with '?'
    # looks like the mis-encoded non-ASCII path qnndoctor diagnoses.
    for stream in (sys.stdout, sys.stderr):
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is not None:
            reconfigure(errors="backslashreplace")
    argv = sys.argv[1:] if argv is None else argv
    try:
        # Only the named sub-command's parser (its own errors and help are
        # unchanged); an unknown option is reported by the whole parser, as always.
        args, unknown = _parser(
            argv[0] if argv and argv[0] in _COMMANDS else None
        ).parse_known_args(argv)
        if unknown:
            args = _parser().parse_args(argv)
    except SystemExit as exc:  # argparse exits 2 on usage errors, 0 on --help
        return int(exc.code) if isinstance(exc.code, int) else exitcodes.USAGE
    try:
        return _dispatch(args)
    except BrokenPipeError:
        reader_gone()
        return exitcodes.OK


def reader_gone() -> None:
    """The reader of stdout went away (`qnndoctor ... | head`): not our error.
    What is still buffered goes nowhere, so the final flush cannot fail."""
    os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())


def _dispatch(args: argparse.Namespace) -> int:
    if args.command in ("recommend", "matrix"):
        from .matrixdata import command as matrix_command

        handler = (
            matrix_command.run_recommend
            if args.command == "recommend"
            else matrix_command.run_matrix
        )
        return handler(args, sys.stdout, sys.stderr)
    if args.command == "explain":
        from .explain_cli import run_explain

        return run_explain(args, sys.stdout, sys.stderr)
    if args.command == "model":
        from .model.command import run_model

        return run_model(args, sys.stdout, sys.stderr)
    if args.command == "fix":
        from .fix.command import run_fix

        args.owns_process = _OWNS_PROCESS
        return run_fix(args, sys.stdout, sys.stderr)
    if args.command == "bisect":
        from .bisect.command import run_bisect_command

        args.owns_process = _OWNS_PROCESS
        return run_bisect_command(args, sys.stdout, sys.stderr)
    if args.command == "lint":
        from .lint.command import run_lint

        return run_lint(args, sys.stdout, sys.stderr)
    if args.command == "fleet":
        from .fleet.command import run_fleet_command

        return run_fleet_command(args, sys.stdout, sys.stderr)
    if args.command == "check":
        return run_check(args, sys.stdout, sys.stderr)
    if args.command == "report":
        return run_report(args, sys.stdout, sys.stderr)
    return exitcodes.USAGE


def entry() -> None:
    """Console-script entry: run, flush, and end the process at once.

    qnndoctor holds no resources that need the interpreter's teardown (files
    are closed, child processes are reaped), and that teardown of every
    imported module is a measurable part of a 0.15 s run.
    """
    global _OWNS_PROCESS
    # This process is qnndoctor's own: it may adopt the smoke session's
    # orphans (containment.py says why a library call never does).
    _OWNS_PROCESS = True
    for name in ("stdout", "stderr"):
        if getattr(sys, name) is None:  # started with it closed (`>&-`): Python gives None
            # What would be written there goes nowhere; the exit code still tells.
            setattr(sys, name, open(os.devnull, "w", encoding="utf-8"))  # noqa: SIM115
    code = main()
    from . import headstart

    headstart.discard()  # a head start the command did not claim (none, as a rule)
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # a reader that went away: what is unread is unwanted
            pass
    os._exit(code)
