"""The command line of the refresh tool (``python -m matrix.refresh`` from the
repository root): options, the checks made before a minute of reading, exit
codes. See docs/matrix.md."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, TextIO

import platformdirs

from qnndoctor.matrixdata.wheelreader.assemble import Options, dump, refresh, shrinkage
from qnndoctor.matrixdata.wheelreader.cache import write_text_atomically
from qnndoctor.matrixdata.wheelreader.common import (
    _PROJECT_RE,
    DEFAULT_PROJECT,
    EXIT_INDEX,
    EXIT_OK,
    EXIT_SHRINK,
    EXIT_USAGE,
    EXIT_WHEELS,
    IndexReadError,
    Log,
    UsageError,
)
from qnndoctor.matrixdata.wheelreader.pip_config import pip_verify, public_url, resolve_index_url


def default_output() -> Path:
    """``matrix/releases.json``: the committed matrix, beside this tool's folder."""
    return Path(__file__).resolve().parent.parent / "releases.json"


def default_cache_dir() -> Path:
    return Path(platformdirs.user_cache_dir("qnndoctor")) / "matrix-refresh"


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
    if value <= 0:
        raise argparse.ArgumentTypeError(f"must be at least 1: {text!r}")
    return value


def _positive_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not value > 0:
        raise argparse.ArgumentTypeError(f"must be positive: {text!r}")
    return value


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m matrix.refresh",
        description="Regenerate the onnxruntime-qnn release matrix (releases.json) from the "
        "package index pip is configured with, reading wheels by HTTP range requests.",
    )
    parser.add_argument(
        "--index-url",
        metavar="URL",
        help="simple index root (default: PIP_INDEX_URL, else pip's config files, else pip's default)",
    )
    parser.add_argument(
        "--project", default=DEFAULT_PROJECT, help="project name (default %(default)s)"
    )
    parser.add_argument(
        "--output",
        type=Path,
        metavar="PATH",
        help="where to write (default: releases.json beside this tool)",
    )
    parser.add_argument(
        "--cache-dir",
        type=Path,
        metavar="DIR",
        help=f"per-wheel cache (default {default_cache_dir()})",
    )
    parser.add_argument(
        "--previous",
        type=Path,
        metavar="PATH",
        help="an earlier releases.json whose records count as cached (default: the output path)",
    )
    parser.add_argument(
        "--limit", type=_positive_int, metavar="N", help="only the N newest releases (quick runs)"
    )
    parser.add_argument(
        "--timeout",
        type=_positive_float,
        default=60.0,
        metavar="S",
        help="per request (default 60)",
    )
    parser.add_argument(
        "--jobs",
        type=_positive_int,
        default=8,
        metavar="N",
        help="wheels read in parallel (default 8)",
    )
    parser.add_argument(
        "--allow-shrink",
        action="store_true",
        help="write the new matrix even if it drops releases or wheels the output lists now",
    )
    parser.add_argument("-v", "--verbose", action="store_true", help="progress per wheel")
    return parser


def _current(output: Path, log: Log) -> Mapping[str, Any] | None:
    """The matrix ``output`` holds now, if it can be read (else nothing to compare)."""
    from qnndoctor import safejson

    try:
        document = safejson.loads(output.read_bytes(), str(output))
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as exc:
        log.warning(f"cannot read the current {output} to compare: {exc}")
        return None
    return document if isinstance(document, Mapping) else None


def _unwritable(output: Path) -> str | None:
    """Why ``output`` could not be written, found before a minute of reading."""
    if output.is_dir():
        return "it is a folder"
    try:
        output.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        return exc.strerror or str(exc)
    if not os.access(output.parent, os.W_OK):
        return f"{output.parent} is not writable"
    return None


def main(argv: Sequence[str] | None = None, *, stderr: TextIO | None = None) -> int:
    err = stderr or sys.stderr
    parser = _parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # argparse: 2 on usage errors, 0 for --help
        return int(exc.code) if isinstance(exc.code, int) else EXIT_USAGE
    log = Log(err, args.verbose)
    try:
        index = resolve_index_url(args.index_url)
        verify = pip_verify(os.environ)
    except UsageError as exc:
        err.write(f"refresh: error: {exc}\n")
        return EXIT_USAGE
    if not _PROJECT_RE.match(args.project):
        err.write(f"refresh: error: {args.project!r} is not a valid project name\n")
        return EXIT_USAGE
    output: Path = args.output or default_output()
    problem = _unwritable(output)
    if problem:
        err.write(f"refresh: error: cannot write {output}: {problem}\n")
        return EXIT_USAGE
    options = Options(
        index=index,
        project=args.project,
        cache_dir=args.cache_dir or default_cache_dir(),
        previous=args.previous if args.previous is not None else output,
        limit=args.limit,
        timeout=args.timeout,
        jobs=args.jobs,
        verify=verify,
    )
    log.info(f"index {public_url(index.value)} (from {index.source}), project {args.project}")
    if args.limit is not None and args.output is None:
        log.warning(
            f"--limit without --output: {output} would list only {args.limit} releases "
            "(refused unless --allow-shrink)"
        )
    try:
        result = refresh(options, log)
    except IndexReadError as exc:
        err.write(f"refresh: error: could not read the index: {exc}\n")
        return EXIT_INDEX
    except UsageError as exc:
        err.write(f"refresh: error: {exc}\n")
        return EXIT_USAGE
    for filename, message in result.errors:
        log.info(f"error in {filename}: {message}")
    log.info(result.stats.summary())
    current = _current(output, log)
    from .companions import carry_over  # the companion experiments' rows stay

    carry_over(current, result.document)
    dropped = shrinkage(current, result.document) if current is not None else []
    if dropped and not args.allow_shrink:
        shown = "; ".join(dropped[:10]) + (
            f"; and {len(dropped) - 10} more" if len(dropped) > 10 else ""
        )
        err.write(
            f"refresh: error: the new matrix would drop {len(dropped)} release(s) or wheel(s) "
            f"that {output} lists ({shown}). Did the index answer in full? Nothing written; "
            "pass --allow-shrink to accept.\n"
        )
        return EXIT_SHRINK
    for lost in dropped:
        log.warning(f"dropped (--allow-shrink): {lost}")
    try:
        write_text_atomically(output, dump(result.document))
    except OSError as exc:
        err.write(f"refresh: error: could not write {output}: {exc}\n")
        return EXIT_INDEX
    log.info(f"wrote {output}")
    if result.errors:
        err.write(
            f"refresh: error: {len(result.errors)} wheel(s) could not be read (listed above); "
            "their records carry the error and the next run retries them\n"
        )
        return EXIT_WHEELS
    return EXIT_OK
