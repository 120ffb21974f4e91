"""``qnndoctor bisect``: arguments in, a table (or JSON) out.

Exit codes: 0 a pair passed; 1 none passed; 2 usage; 3 could not bisect
(the target cannot be probed, no venv can be made); 130 interrupted (every
throwaway venv removed first).
"""

from __future__ import annotations

import argparse
import signal
import sys
import time
from pathlib import Path
from types import FrameType
from typing import Any, TextIO

from .. import exitcodes
from ..render.json_out import for_stream
from . import options

INTERRUPTED = 130
SCHEMA_VERSION = 1


def add_parser(sub: Any) -> None:
    bisect = sub.add_parser(
        "bisect",
        help="find the onnxruntime-qnn + onnxruntime pair that works here, by experiment",
        description="Each pair is installed into a throwaway venv made by the target's base "
        "interpreter and runs the real smoke session there; the target is never changed. "
        + exitcodes.described("bisect"),
    )
    options.python(bisect, "the interpreter to find a pair for")
    bisect.add_argument(
        "--model", type=Path, metavar="FILE", help="also measure this model's placement and latency"
    )
    bisect.add_argument(
        "--releases",
        metavar="SPEC",
        help="onnxruntime-qnn releases to try: 2.3.0, 2.3.0,2.7.0, 2.4.0..2.7.0 or >=2.4 "
        "(default: every release with a wheel for the target, newest first)",
    )
    bisect.add_argument(
        "--companions",
        metavar="LIST",
        help="onnxruntime versions to pair with each 2.x release, e.g. 1.27.0,1.32.0 "
        "(default: the newest allowed and the boundaries the matrix knows)",
    )
    bisect.add_argument(
        "--all",
        action="store_true",
        help="try every pair (default: stop at the newest that passes)",
    )
    options.json_output(bisect)
    bisect.add_argument(
        "--find-links",
        metavar="DIR",
        help="install only from this wheelhouse (pip --no-index --find-links DIR): offline",
    )
    options.backend(bisect, "each pair's smoke session")
    bisect.add_argument(
        "--smoke-timeout", type=float, default=60.0, metavar="SECONDS", help="per session (60)"
    )
    bisect.add_argument(
        "--install-timeout", type=float, default=600.0, metavar="SECONDS", help="per pip (600)"
    )
    bisect.add_argument(
        "--time-budget",
        type=float,
        default=3600.0,
        metavar="SECONDS",
        help="no new pair is started after this (3600)",
    )
    bisect.add_argument(
        "--disk-budget",
        type=int,
        default=2048,
        metavar="MB",
        help="free space a new venv needs, else the bisect stops (2048)",
    )
    bisect.add_argument(
        "--work-dir", metavar="DIR", help="where the throwaway venvs go (default: temp folder)"
    )
    options.matrix(bisect)
    bisect.add_argument(
        "--no-record", action="store_true", help="do not keep the results as local evidence"
    )
    options.verbose(bisect)


class _Display:
    """One updating line on a terminal's stderr (nothing elsewhere)."""

    def __init__(self, err: TextIO) -> None:
        self.err = err
        self.on = bool(getattr(err, "isatty", lambda: False)())
        self.begun = time.monotonic()
        self.width = 0

    def __call__(self, message: str) -> None:
        if not self.on:
            return
        line = f"qnndoctor bisect {time.monotonic() - self.begun:5.0f} s  {message}"[:110]
        self.err.write("\r" + line.ljust(self.width))
        self.width = len(line)
        self.err.flush()

    def done(self) -> None:
        if self.on and self.width:
            self.err.write("\r" + " " * self.width + "\r")
            self.err.flush()


def _interrupt_on_term(_signum: int, _frame: FrameType | None) -> None:
    raise KeyboardInterrupt


def options_from(args: argparse.Namespace) -> Any:
    from ..bisect.session import BisectOptions

    return BisectOptions(
        python=args.python,
        model=args.model,
        releases=args.releases,
        companions=args.companions,
        all=args.all,
        find_links=args.find_links,
        backend=args.backend,
        smoke_timeout=args.smoke_timeout,
        install_timeout=args.install_timeout,
        time_budget=args.time_budget,
        disk_budget_mb=args.disk_budget,
        work_dir=args.work_dir,
        matrix=args.matrix,
        record=not args.no_record,
    )


def run_bisect_command(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from ..bisect.plan import PlanError
    from ..bisect.session import run_bisect
    from ..bisect.venvs import VenvError
    from ..matrixdata import MatrixError
    from ..target.collect import CouldNotCheck
    from ..target.interpreter import TargetError

    options = options_from(args)
    problems = options.problems()
    if problems:
        err.write("".join(f"qnndoctor: error: {p}\n" for p in problems))
        return exitcodes.USAGE

    def log(message: str) -> None:
        if args.verbose:
            err.write(f"qnndoctor: {message}\n")

    display = _Display(err)
    previous = None
    if getattr(args, "owns_process", False) and sys.platform != "win32":
        previous = signal.signal(signal.SIGTERM, _interrupt_on_term)
    try:
        result = run_bisect(options, progress=display, log=log)
    except KeyboardInterrupt:
        display.done()
        err.write("qnndoctor: bisect interrupted; every throwaway venv was removed\n")
        return INTERRUPTED
    except PlanError as exc:
        display.done()
        err.write(f"qnndoctor: error: {exc}\n")
        return exitcodes.USAGE
    except (TargetError, CouldNotCheck, MatrixError, VenvError) as exc:
        display.done()
        err.write(f"qnndoctor: could not bisect: {exc}\n")
        return exitcodes.COULD_NOT_CHECK
    finally:
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)
    display.done()
    document = {"schema_version": SCHEMA_VERSION, **result.to_json()}
    if args.json:
        out.write(for_stream(document, out) + "\n")
    else:
        render_text(document, out)
    return exitcodes.OK if result.best is not None else exitcodes.FINDINGS


def render_text(doc: dict[str, Any], out: TextIO) -> None:
    target = doc["target"]
    out.write(f"Target: {target['python']} (venvs made by {doc['base_python']})\n\n")
    rows = [("onnxruntime-qnn", "onnxruntime", "outcome", "seconds", "cause")]
    for r in doc["results"]:
        model = r.get("model") or {}
        measured = (
            f"model: {model.get('nodes_on_qnn')}/{model.get('nodes_total')} nodes on QNN, "
            f"median {model.get('median_ms')} ms"
            if model.get("status") == "passed"
            else ""
        )
        rows.append(
            (
                r["onnxruntime_qnn"],
                r["onnxruntime"] or "-",
                r["outcome"],
                f"{r['seconds']:.1f}",
                r["cause"] or measured,
            )
        )
    widths = [max(len(row[i]) for row in rows) for i in range(4)]
    for row in rows:
        cells = [row[i].ljust(widths[i]) for i in range(4)]
        out.write("  ".join([*cells, row[4][:160]]).rstrip() + "\n")
    if not doc["results"]:
        out.write("(no pair was tried)\n")
    for skipped in doc["skipped"]:
        out.write(f"not tried: {skipped}\n")
    if doc["stopped"]:
        out.write(f"stopped: {doc['stopped']}\n")
    best = doc["best"]
    if best:
        pair = best["onnxruntime_qnn"] + (
            f" with onnxruntime {best['onnxruntime']}" if best["onnxruntime"] else ""
        )
        out.write(f"\nWinner: onnxruntime-qnn {pair}. To install it into the target:\n")
        for command in doc["commands"]:
            out.write(f"    {command}\n")
        if not doc["commands"]:
            out.write("    (already installed: nothing to do)\n")
    else:
        out.write("\nNo pair passed here.\n")
    if doc["evidence"]:
        out.write(f"Kept as local evidence for `recommend` and `check`: {doc['evidence']}\n")
    for note in doc["notes"]:
        out.write(f"note: {note}\n")
