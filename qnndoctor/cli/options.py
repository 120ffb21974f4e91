"""Options that several subcommands take, each declared once so that its
spelling, metavar and meaning cannot drift between commands."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..children.launch import BACKENDS, DEFAULT_BACKEND


def python(parser: Any, help: str) -> None:
    """``--python PATH|auto``: the interpreter (or environment folder) a command is about."""
    parser.add_argument("--python", metavar="PATH|auto", help=help)


def matrix(parser: Any, help: str = "use this releases.json (or matrix folder)") -> None:
    """``--matrix FILE``: a releases.json (or matrix folder) instead of the installed one."""
    parser.add_argument("--matrix", type=Path, metavar="FILE", help=help)


def json_output(parser: Any) -> None:
    """``--json``: one JSON document on stdout, everything else on stderr."""
    parser.add_argument("--json", action="store_true", help="one JSON document on stdout")


def verbose(parser: Any) -> None:
    """``-v`` / ``--verbose``: progress to stderr."""
    parser.add_argument("-v", "--verbose", action="store_true", help="log progress to stderr")


def backend(parser: Any, session: str) -> None:
    """``--backend htp|gpu|cpu``: the QNN backend of ``session`` (htp by default)."""
    parser.add_argument(
        "--backend",
        choices=BACKENDS,
        default=DEFAULT_BACKEND,
        help=f"QNN backend for {session} (default htp)",
    )


def fail_on(parser: Any) -> None:
    """``--fail-on error|warning``: the lowest severity that makes the exit code 1."""
    parser.add_argument(
        "--fail-on",
        choices=("error", "warning"),
        default="error",
        help="lowest severity that makes the exit code 1 (default: error)",
    )


def no_redact(parser: Any, outputs: str = "JSON") -> None:
    """``--no-redact``: keep what a shared document would hide."""
    parser.add_argument(
        "--no-redact",
        action="store_true",
        help=f"keep user name, host name and home paths in {outputs}",
    )
