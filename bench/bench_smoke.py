"""Benchmark the smoke session's overhead (run by hand; numbers go in docs/speed.md).

Side by side, alternating, in one run on the same venv (onnxruntime 1.31.1 +
onnxruntime-qnn 2.7.0 + numpy, HTP simulator):
  A  qnndoctor check --json            (probes + smoke session)
  B  qnndoctor check --json --no-smoke (probes only)
  C  a bare script: import onnxruntime, register the QNN EP, create the
     session on the same model with CPU fallback disabled, run it once.
  D  an application's start-up guard: ``qnndoctor.ensure_ready(venv)`` in a
     fresh interpreter (E: the same with ``smoke=False``).
Targets: median(A) - median(B) <= 1.25 x median(C); median(A) <= 1.15 x median(C).

``--wheel``: time a wheel install of this checkout (see bench_check.py).

Usage: python bench/bench_smoke.py [--runs 9] [--wheel] [--wheels DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from _common import (
    BARE_SCRIPT,
    add_wheels_argument,
    healthy_wheels,
    install_qnndoctor_wheel,
    make_venv,
    timed,
)

GUARD = "import qnndoctor; qnndoctor.ensure_ready(%r, smoke=%r)"


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=9)
    parser.add_argument(
        "--wheel", action="store_true", help="time a wheel install of this checkout"
    )
    add_wheels_argument(parser)
    args = parser.parse_args()
    wheels = healthy_wheels(args.wheels)
    if wheels is None:
        print(
            f"need onnxruntime, onnxruntime-qnn and numpy wheels in {args.wheels} (run the tests once)"
        )
        return 2
    from qnndoctor.smoke import MODEL

    with tempfile.TemporaryDirectory() as tmp:
        # A neutral working directory: `python -c` puts it first on sys.path, and
        # in a checkout that would import qnndoctor's sources instead of the install.
        os.chdir(tmp)
        if args.wheel:
            qnndoctor = install_qnndoctor_wheel(Path(tmp) / "host")
        else:
            qnndoctor = str(Path(sys.executable).parent / "qnndoctor")
        host_python = str(Path(qnndoctor).parent / "python")
        python = make_venv(Path(tmp), wheels)
        bare = Path(tmp) / "bare.py"
        bare.write_text(f"MODEL = {str(MODEL)!r}\n" + BARE_SCRIPT)
        commands = {
            "A check": [qnndoctor, "check", "--python", python, "--json"],
            "B check --no-smoke": [qnndoctor, "check", "--python", python, "--json", "--no-smoke"],
            "C bare script": [python, str(bare)],
            "D ensure_ready()": [host_python, "-c", GUARD % (python, True)],
            "E ensure_ready(smoke=False)": [host_python, "-c", GUARD % (python, False)],
        }
        # A timing means nothing unless the session really ran and passed.
        shown = subprocess.run(commands["A check"], capture_output=True, text=True, check=False)
        status = json.loads(shown.stdout)["smoke"]["status"]
        if status != "passed":
            print(f"the smoke session did not pass under check ({status}): no timing")
            return 1
        times: dict[str, list[float]] = {name: [] for name in commands}
        for argv in commands.values():
            timed(argv)  # warm the page cache
        for _ in range(args.runs):
            for name, argv in commands.items():
                times[name].append(timed(argv))
        medians = {name: statistics.median(values) for name, values in times.items()}
        for name, value in medians.items():
            print(f"{name:28} median {value:.3f} s ({args.runs} runs)")
        overhead = medians["A check"] - medians["B check --no-smoke"]
        ratio = overhead / medians["C bare script"]
        print(
            f"smoke overhead A-B       {overhead:.3f} s = {ratio:.2f} x the bare script (target <= 1.25)"
        )
        whole = medians["A check"] / medians["C bare script"]
        print(f"whole check A/C          {whole:.2f} x the bare script (target <= 1.15)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
