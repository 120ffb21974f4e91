"""Benchmark ``qnndoctor bisect`` against the same work done by hand (run by hand;
numbers go in docs/bisect.md).

Side by side in one run, alternating, same wheels, warm pip cache, N pairs
(``--pairs``, default: 2.7.0 and 2.3.0 each with onnxruntime 1.27.0 and 1.32.0):
  A  ``qnndoctor bisect --all --releases ... --companions ... --find-links DIR``
     on a target venv (probes, throwaway venvs, installs, smoke sessions, a
     diagnosis of each failure, cleanup)
  H  by hand, per pair: the same venv (``python -m venv --without-pip``), the
     same pip install command bisect runs (pip --python, --no-index
     --find-links, --no-compile), a bare smoke script (import onnxruntime,
     register the QNN plugin, run the same tiny model once), then ``rm -r``.
Target: median(A) <= 1.2 x median(H).

Usage: python bench/bench_bisect.py [--runs 3] [--wheels DIR]
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _common import BARE_SCRIPT, add_wheels_argument

HERE = Path(__file__).resolve().parent
MODEL = HERE.parent / "qnndoctor" / "smoke" / "qdq_add.onnx"
RELEASES = ("2.7.0", "2.3.0")
COMPANIONS = ("1.32.0", "1.27.0")
TARGET = 1.2


def _run(argv: list[str]) -> None:
    subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True, timeout=900, check=False)


def by_hand(base: str, wheels: Path, root: Path, bare: Path) -> float:
    started = time.perf_counter()
    for release in RELEASES:
        for companion in COMPANIONS:
            venv = root / "hand"
            _run([base, "-m", "venv", "--without-pip", str(venv)])
            python = str(venv / "bin" / "python")
            _run(
                [
                    sys.executable, "-m", "pip", "--python", python, "install",
                    "--progress-bar", "off", "--no-compile", "--no-index",
                    "--find-links", str(wheels),
                    f"onnxruntime-qnn=={release}", f"onnxruntime=={companion}",
                ]
            )  # fmt: skip
            _run([python, str(bare)])
            shutil.rmtree(venv)
    return time.perf_counter() - started


def with_bisect(target: Path, wheels: Path) -> float:
    started = time.perf_counter()
    done = subprocess.run(
        [
            sys.executable, "-m", "qnndoctor", "bisect", "--python", str(target), "--all",
            "--releases", ",".join(RELEASES), "--companions", ",".join(COMPANIONS),
            "--find-links", str(wheels), "--no-record", "--json",
        ],
        stdin=subprocess.DEVNULL, capture_output=True, timeout=1800, check=False,
    )  # fmt: skip
    seconds = time.perf_counter() - started
    results = json.loads(done.stdout)["results"]
    # The same work as by hand, or the comparison means nothing.
    assert len(results) == len(RELEASES) * len(COMPANIONS), results
    assert all(r["outcome"] in ("passed", "failed") for r in results), results
    return seconds


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    add_wheels_argument(parser)
    args = parser.parse_args()
    base = getattr(sys, "_base_executable", sys.executable)
    with tempfile.TemporaryDirectory(prefix="bench-bisect-") as folder:
        root = Path(folder)
        bare = root / "bare.py"
        bare.write_text(f"MODEL = {str(MODEL)!r}\n" + BARE_SCRIPT)
        target = root / "target"
        _run([base, "-m", "venv", "--without-pip", str(target)])
        # Warm pip's cache and the page cache once, untimed.
        by_hand(base, args.wheels, root, bare)
        a: list[float] = []
        h: list[float] = []
        for run in range(args.runs):
            a.append(with_bisect(target, args.wheels))
            h.append(by_hand(base, args.wheels, root, bare))
            print(f"run {run + 1}: A bisect {a[-1]:.1f} s, H by hand {h[-1]:.1f} s", flush=True)
    pairs = len(RELEASES) * len(COMPANIONS)
    ratio = statistics.median(a) / statistics.median(h)
    print(f"{pairs} pairs, {args.runs} alternating runs")
    print(f"A bisect   median {statistics.median(a):.1f} s  ({', '.join(f'{x:.1f}' for x in a)})")
    print(f"H by hand  median {statistics.median(h):.1f} s  ({', '.join(f'{x:.1f}' for x in h)})")
    print(f"A/H {ratio:.2f} (target <= {TARGET}: {'met' if ratio <= TARGET else 'NOT met'})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
