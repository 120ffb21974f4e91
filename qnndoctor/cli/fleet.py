"""``qnndoctor fleet PATH...``: many tickets, one picture.

Arguments in, outputs out; the work is :func:`qnndoctor.fleet.run.run_fleet`.
The summary is the command's output (stdout); ``--json`` puts the summary
document alone on stdout; files named by ``--csv``, ``--parquet``,
``--html`` and ``--compat`` are written as asked, and what was written is
said on stderr. Exit codes: 0 every machine ready; 1 some machine is not;
2 bad usage, bad input or nothing readable; 3 an output could not be written.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any, TextIO

from .. import exitcodes
from . import options

if TYPE_CHECKING:
    from ..fleet.run import FleetOptions


def add_parser(sub: Any) -> None:
    """The ``fleet`` sub-command's options (called from cli.py)."""
    fleet = sub.add_parser(
        "fleet",
        help="summarise many tickets (report -o files, folders, zip/tar, JSON-lines): "
        "groups to fix, distributions, the compatibility table",
        description="Reads many tickets (`qnndoctor report -o` files, folders, zip/tar archives, "
        "JSON-lines), re-diagnoses each with this version's rules and matrix, and summarises "
        "them: machines, groups sharing the same blocking findings with the fix for each, "
        "distributions and the compatibility table. " + exitcodes.described("fleet"),
    )
    fleet.add_argument(
        "paths",
        nargs="*",
        metavar="PATH",
        help="ticket files, folders (recursively), zip / tar archives, JSON-lines files",
    )
    fleet.add_argument("--json", action="store_true", help="the summary as one JSON document")
    fleet.add_argument("--csv", metavar="FILE", help="one row per ticket")
    fleet.add_argument(
        "--parquet", metavar="FILE", help="one row per ticket (needs the [fleet] extra: DuckDB)"
    )
    fleet.add_argument("--html", metavar="FILE", help="a self-contained HTML report")
    fleet.add_argument(
        "--compat", metavar="FILE", help="the compatibility table alone, as JSON to share"
    )
    fleet.add_argument(
        "--import-compat",
        metavar="FILE",
        help="record a --compat file as local evidence (read by `recommend`)",
    )
    fleet.add_argument(
        "--since", metavar="YYYY-MM-DD", help="only tickets created on or after this date"
    )
    fleet.add_argument(
        "--jobs", type=int, default=0, metavar="N", help="worker processes (default: one per CPU)"
    )
    options.matrix(fleet, "re-diagnose with this releases.json")
    options.verbose(fleet)


def _import(args: argparse.Namespace, err: TextIO) -> int:
    from ..fleet.compat import CompatError, import_compat

    try:
        added, sessions, source = import_compat(args.import_compat)
    except CompatError as exc:
        err.write(f"qnndoctor: error: --import-compat: {exc}\n")
        return exitcodes.USAGE
    except OSError as exc:
        err.write(f"qnndoctor: error: cannot write the evidence store: {exc}\n")
        return exitcodes.COULD_NOT_CHECK
    from ..evidence.fleet import EvidenceStore

    err.write(
        f"qnndoctor: {sessions:,} smoke sessions ({added:,} records, {source}) recorded in "
        f"{EvidenceStore().path}; `qnndoctor recommend` reads them\n"
    )
    return exitcodes.OK


def run_fleet_command(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    if args.import_compat and not args.paths:
        return _import(args, err)
    from ..fleet.run import FleetError, run_fleet

    prepared = _prepare(args, err)
    if isinstance(prepared, int):
        return prepared
    options, writers = prepared

    def log(message: str) -> None:
        if args.verbose:
            err.write(f"qnndoctor: {message}\n")

    from concurrent.futures.process import BrokenProcessPool

    from ..matrixdata import MatrixError

    try:
        document = run_fleet(options, on_row=writers, log=log)
    except (FleetError, MatrixError, BrokenProcessPool) as exc:
        for writer in writers:
            getattr(writer, "discard", writer.close)()
        if isinstance(exc, BrokenProcessPool):  # a worker was killed (out of memory?)
            err.write(f"qnndoctor: could not finish: a worker process ended: {exc}\n")
            return exitcodes.COULD_NOT_CHECK
        err.write(f"qnndoctor: error: {exc}\n")
        return exitcodes.USAGE
    if not document["tickets"]["readable"]:
        return _nothing_readable(args, document, writers, out, err)
    code = _write_files(args, document, writers, err)
    if code is not None:
        return code
    _show(args, document, out)
    return exitcodes.OK if not document["machines"]["not_ready"] else exitcodes.FINDINGS


def _prepare(args: argparse.Namespace, err: TextIO) -> tuple[FleetOptions, list[Any]] | int:
    """The run's options and the row writers of --csv / --parquet, opened; or
    the exit code after saying on ``err`` why they cannot be."""
    from ..fleet.run import FleetOptions
    from ..fleet.tables import CsvRows, OutputError, ParquetRows, parquet_missing

    if args.parquet:
        missing = parquet_missing()
        if missing is not None:
            err.write(f"qnndoctor: error: {missing}\n")
            return exitcodes.USAGE
    options = FleetOptions(tuple(args.paths), args.jobs, args.since, args.matrix)
    problems = options.problems()
    if problems:
        err.write(f"qnndoctor: error: {'; '.join(problems)}\n")
        return exitcodes.USAGE
    writers: list[Any] = []
    try:
        if args.csv:
            writers.append(CsvRows(args.csv))
        if args.parquet:
            writers.append(ParquetRows(args.parquet))
    except OutputError as exc:
        for writer in writers:
            writer.close()
        err.write(f"qnndoctor: error: {exc}\n")
        return exitcodes.USAGE
    return options, writers


def _nothing_readable(
    args: argparse.Namespace,
    document: dict[str, Any],
    writers: list[Any],
    out: TextIO,
    err: TextIO,
) -> int:
    """No ticket to summarise: say why (the unreadable files' reasons), write no file."""
    for writer in writers:
        getattr(writer, "discard", writer.close)()
    if args.json:
        _show(args, document, out)  # the (empty) summary: its unreadable list says why
    why = (
        f"no ticket created on or after --since {args.since}"
        if document["tickets"]["skipped_by_since"]
        else "no readable ticket in the paths given"
    )
    err.write(f"qnndoctor: error: {why}\n")
    for item in document["unreadable"][:5]:
        err.write(f"  {item['path']}: {item['reason']}\n")
    return exitcodes.USAGE


def _write_files(
    args: argparse.Namespace, document: dict[str, Any], writers: list[Any], err: TextIO
) -> int | None:
    from ..fleet.tables import OutputError

    try:
        for writer in writers:
            writer.close()
            err.write(
                f"qnndoctor: {writer.path} written ({document['tickets']['readable']:,} rows)\n"
            )
        if args.html:
            from ..render.fleet_html import write_html

            write_html(document, args.html)
            err.write(f"qnndoctor: {args.html} written (open it in a browser; prints too)\n")
        if args.compat:
            from ..fleet.compat import export_document
            from ..safejson import write_atomically

            write_atomically(args.compat, export_document(document))
            err.write(
                f"qnndoctor: {args.compat} written; record it on a machine with "
                f"`qnndoctor fleet --import-compat {args.compat}`\n"
            )
    except (OutputError, OSError) as exc:
        message = (
            str(exc) if isinstance(exc, OutputError) else f"cannot write: {exc.strerror or exc}"
        )
        err.write(f"qnndoctor: error: {message}\n")
        return exitcodes.COULD_NOT_CHECK
    if args.import_compat:
        return _import(args, err) or None
    return None


def _show(args: argparse.Namespace, document: dict[str, Any], out: TextIO) -> None:
    """The summary on stdout (a reader that went away: cli.main handles it)."""
    if args.json:
        from ..render.json_out import for_stream

        out.write(for_stream(document, out) + "\n")
    else:
        from ..render.fleet_text import render

        render(document, out)
