"""Command line: ``qnndoctor check`` and friends.

JSON goes to stdout alone; logs and progress go to stderr. Exit codes:
0 no finding at or above ``--fail-on``; 1 such findings; 2 usage error;
3 could not check.
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import TYPE_CHECKING, Any, TextIO, cast

from .. import exitcodes
from . import parser

if TYPE_CHECKING:
    from ..children.runner import Runner
    from ..pipeline import CheckOptions


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


def _list_findings(out: TextIO) -> int:
    from ..rules.registry import all_finding_kinds

    for kind in sorted(all_finding_kinds(), key=lambda k: k.id):
        out.write(f"{kind.id:34} {kind.severity.label:8} {kind.title}\n")
    return exitcodes.OK


def check_options(args: argparse.Namespace) -> CheckOptions:
    """The pipeline's options from ``check``'s parsed arguments."""
    from ..pipeline import CheckOptions

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
    from ..pipeline import run_check as run_pipeline

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
    from ..render import renderer

    if outcome.report is not None or args.format == "json":
        renderer(args.format)(outcome.document, out)  # `out` outlives its reader: _stdout()
    return code


def run_report(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    """``qnndoctor report -o FILE``: one ticket, the report (redacted unless
    --no-redact) with its Markdown summary inside, for support."""
    import io

    from ..pipeline import run_check as run_pipeline
    from ..render import renderer

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
    from ..safejson import write_atomically

    if not args.no_redact and not document.get("redacted"):
        from ..report.redact import redact_document

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
        args, unknown = parser.build(
            argv[0] if argv and argv[0] in parser.COMMANDS else None
        ).parse_known_args(argv)
        if unknown:
            args = parser.build().parse_args(argv)
    except SystemExit as exc:  # argparse exits 2 on usage errors, 0 on --help
        return int(exc.code) if isinstance(exc.code, int) else exitcodes.USAGE
    try:
        return _dispatch(args)
    except BrokenPipeError:  # a write to sys.stdout past _stdout(): the verdict is lost
        reader_gone()
        return exitcodes.OK


def reader_gone() -> None:
    """The reader of stdout went away (`qnndoctor ... | head`): not our error.
    What is still buffered goes nowhere, so the final flush cannot fail."""
    os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())


class _ReaderMayLeave:
    """stdout for a subcommand: when its reader goes away (`| head -3`), the
    rest of the output goes nowhere and the command runs to its end, so its
    exit code is its verdict (findings, not ready, ...) and what it says on
    stderr is still said, as for `check`."""

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream

    def write(self, text: str) -> int:
        try:
            return self._stream.write(text)
        except BrokenPipeError:
            reader_gone()
            return len(text)

    def flush(self) -> None:
        try:
            self._stream.flush()
        except BrokenPipeError:
            reader_gone()

    def __getattr__(self, name: str) -> Any:  # isatty, fileno, encoding, ...
        return getattr(self._stream, name)


def _stdout() -> TextIO:
    return cast(TextIO, _ReaderMayLeave(sys.stdout))


def _dispatch(args: argparse.Namespace) -> int:
    # Every subcommand's stdout outlives its reader (`| head`): one mechanism.
    out, err = _stdout(), sys.stderr
    if args.command in ("recommend", "matrix"):
        from . import matrix as matrix_command

        handler = (
            matrix_command.run_recommend
            if args.command == "recommend"
            else matrix_command.run_matrix
        )
        return handler(args, out, err)
    if args.command == "explain":
        from .explain import run_explain

        return run_explain(args, out, err)
    if args.command == "model":
        from .model import run_model

        return run_model(args, out, err)
    if args.command == "fix":
        from .fix import run_fix

        args.owns_process = _OWNS_PROCESS
        return run_fix(args, out, err)
    if args.command == "bisect":
        from .bisect import run_bisect_command

        args.owns_process = _OWNS_PROCESS
        return run_bisect_command(args, out, err)
    if args.command == "lint":
        from .lint import run_lint

        return run_lint(args, out, err)
    if args.command == "fleet":
        from .fleet import run_fleet_command

        return run_fleet_command(args, out, err)
    if args.command == "check":
        return run_check(args, out, err)
    if args.command == "report":
        return run_report(args, out, err)
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
    from .. import headstart

    headstart.discard()  # a head start the command did not claim (none, as a rule)
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # a reader that went away: what is unread is unwanted
            pass
    os._exit(code)
