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


HEALTHY_PINS = ("onnxruntime_qnn-2.7.0-*.whl", "onnxruntime-1.31.1-*.whl", "numpy-2.4.6-*.whl")


def healthy_wheels(folder: Path) -> list[Path] | None:
    """The real wheels of the healthy reference setup, or None when one is missing."""
    found = [sorted(folder.glob(pattern)) for pattern in HEALTHY_PINS]
    return [matches[0] for matches in found] if all(found) else None


def make_venv(folder: Path, wheels: list[Path]) -> str:
    """A fresh venv in ``folder`` with ``wheels`` installed offline; its python."""
    import sys

    venv = folder / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = str(venv / "bin" / "python")
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "--python",
            python,
            "install",
            "-q",
            "--no-index",
            "--no-deps",
            *map(str, wheels),
        ],
        check=True,
    )
    return python
