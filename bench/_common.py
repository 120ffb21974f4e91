"""What the benchmarks share: where the real wheels are, and a wall-clock timer."""

from __future__ import annotations

import argparse
import os
import subprocess
import time
from pathlib import Path


def add_wheels_argument(parser: argparse.ArgumentParser) -> None:
    default = (
        os.environ.get("QNNDOCTOR_TEST_WHEELS")
        or Path.home() / ".cache" / "qnndoctor-tests" / "wheels"
    )
    parser.add_argument(
        "--wheels",
        type=Path,
        default=Path(default),
        help="folder with the real wheels the tests download (tests/real-wheels.txt)",
    )


def timed(argv: list[str]) -> float:
    """Wall time of one run, output discarded."""
    started = time.perf_counter()
    subprocess.run(
        argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    return time.perf_counter() - started
