"""The command line's parser: every subcommand and its options. A start-up
that runs one command builds only that command's parser (``build``)."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from .. import __version__, exitcodes
from . import options

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
    options.no_redact(parser, "JSON/Markdown output")
    options.verbose(parser)


def _check_run_options(parser: argparse.ArgumentParser) -> None:
    """How ``check`` (and ``report``, which runs the same check) probe and judge."""
    parser.add_argument("--no-smoke", action="store_true", help="skip the smoke session")
    options.backend(parser, "the smoke session")
    parser.add_argument(
        "--smoke-timeout",
        type=float,
        default=60.0,
        metavar="SECONDS",
        help="time limit for the smoke session; its whole process tree is killed after it (default 60)",
    )
    options.fail_on(parser)
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
    options.python(recommend, "interpreter to recommend for")
    options.json_output(recommend)
    options.no_redact(recommend)
    recommend.add_argument("--pre", action="store_true", help="consider pre-releases")
    options.matrix(recommend)
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
    options.verbose(recommend)


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
    options.json_output(matrix)
    options.matrix(matrix, "show this releases.json instead")
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
    options.json_output(explain)


def _add_model(sub: Any) -> None:
    from .model import add_parser

    add_parser(sub)


def _add_fix(sub: Any) -> None:
    from .fix import add_parser

    add_parser(sub)


def _add_bisect(sub: Any) -> None:
    from .bisect import add_parser

    add_parser(sub)


def _add_lint(sub: Any) -> None:
    from .lint import add_parser

    add_parser(sub)


def _add_fleet(sub: Any) -> None:
    from .fleet import add_parser

    add_parser(sub)


COMMANDS = {
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


def build(command: str | None = None) -> argparse.ArgumentParser:
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
    for name, add in COMMANDS.items():
        if command in (None, name):
            add(sub)
    return parser


def _exit_code(text: str) -> int:
    try:
        return int(text, 0)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(f"not an exit code: {text!r}") from exc
