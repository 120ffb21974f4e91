"""Benchmark the probe program alone: the child ``qnndoctor check`` starts in
the target interpreter (run by hand; numbers go in docs/speed.md).

One target venv (onnxruntime 1.31.1 + onnxruntime-qnn 2.7.0 + numpy + pip).
The probe package comes from qnndoctor's wheel built from this checkout and
installed in its own venv (compiled bytecode, as a user gets it); with
``--compare CHECKOUT`` a second checkout (say, an export of the previous
commit) is built and installed the same way. Alternating, every repetition
runs each of:
  S  python -B -c pass                 (bare interpreter start-up)
  N  the probe program of this checkout
  M  the probe program of CHECKOUT     (only with --compare)
  P  python -m pip list                (the issue's baseline for check --no-smoke)
each as ``collect.probe_argv`` starts it (``launch.probe_argv``: ``-B -c <bootstrap> <probes> --probe-timeout=20``,
the bootstrap of this checkout for both), and reports medians of wall time
and of CPU time (user + sys, from ``RUSAGE_CHILDREN``), how many modules each
imports, and each probe's own median ``duration_ms`` (from 5 captured runs).

Usage: python bench/bench_probes.py [--runs 31] [--compare CHECKOUT] [--wheels DIR]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from _common import add_wheels_argument, healthy_wheels, make_venv, timed_with_cpu

from qnndoctor.children.launch import probe_argv
from qnndoctor.target.collect import MARKER, PART_MARKER

CHECKOUT = Path(__file__).resolve().parent.parent


def install_probes(checkout: Path, folder: Path) -> str:
    """qnndoctor's wheel of ``checkout`` installed (no dependencies) in a fresh
    venv of this interpreter; the folder of its probe package."""
    built = folder / "dist"
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(built), str(checkout)],
        check=True,
        stdin=subprocess.DEVNULL,
    )
    python = make_venv(folder, sorted(built.glob("qnndoctor-*.whl")))
    purelib = subprocess.run(
        [python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        check=True,
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
    ).stdout.strip()
    probes = Path(purelib) / "qnndoctor" / "probes"
    if not list((probes / "__pycache__").glob("__init__.*.pyc")):
        raise SystemExit(f"no compiled bytecode in {probes}: the timing would include compiling")
    return str(probes)


def probe_sections(argv: list[str]) -> dict[str, dict[str, Any]]:
    """Each probe's entry from one run; fails loudly unless the run completed."""
    out = subprocess.run(
        argv, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=120
    ).stdout
    sections: dict[str, dict[str, Any]] = {}
    complete = False
    for line in out.splitlines():
        if line.startswith(PART_MARKER):
            name, entry = json.loads(line[len(PART_MARKER) :])
            sections[name] = entry
        elif line.startswith(MARKER):
            complete = bool(json.loads(line[len(MARKER) :]).get("complete"))
    if not complete:
        raise SystemExit(f"the probe program did not complete: {argv[-2]}")
    return sections


def imported_modules(argv: list[str]) -> int:
    """How many modules one run imports (``-X importtime`` lines), start-up included."""
    err = subprocess.run(
        [argv[0], "-X", "importtime", *argv[1:]],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=120,
    ).stderr
    return (
        sum(1 for line in err.splitlines() if line.startswith("import time:") and "|" in line) - 1
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=31)
    parser.add_argument("--compare", type=Path, help="another checkout: its probe program as M")
    add_wheels_argument(parser)
    args = parser.parse_args()
    wheels = healthy_wheels(args.wheels)
    if wheels is None:
        raise SystemExit(f"the healthy reference wheels are missing from {args.wheels}")
    with tempfile.TemporaryDirectory(prefix="qnndoctor-bench-probes-") as tmp:
        root = Path(tmp)
        python = make_venv(root / "target", wheels, with_pip=True)
        programs = {"N": install_probes(CHECKOUT, root / "this")}
        if args.compare:
            programs["M"] = install_probes(args.compare.resolve(), root / "compare")
        commands = {"S": [python, "-B", "-c", "pass"]}
        for label, probes in programs.items():
            commands[label] = probe_argv(python, probes, probe_timeout=20)
        commands["P"] = [python, "-m", "pip", "list"]
        durations: dict[str, dict[str, list[float]]] = {label: {} for label in programs}
        for _ in range(5):  # warm-up, and each probe's own duration
            for label in programs:
                for name, entry in probe_sections(commands[label]).items():
                    durations[label].setdefault(name, []).append(float(entry["duration_ms"]))
        modules = {label: imported_modules(commands[label]) for label in ("S", *programs)}
        wall: dict[str, list[float]] = {label: [] for label in commands}
        cpu: dict[str, list[float]] = {label: [] for label in commands}
        for _ in range(args.runs):
            for label, argv in commands.items():
                seconds, cpu_seconds = timed_with_cpu(argv)
                wall[label].append(seconds * 1000)
                cpu[label].append(cpu_seconds * 1000)
    wall_ms = {label: statistics.median(values) for label, values in wall.items()}
    cpu_ms = {label: statistics.median(values) for label, values in cpu.items()}
    print(f"medians of {args.runs} alternating runs (ms)")
    for label in commands:
        print(f"  {label}: wall {wall_ms[label]:7.1f}   cpu {cpu_ms[label]:7.1f}")
    ratios = [("N/S", "N", "S"), ("N/P", "N", "P")]
    if "M" in programs:
        ratios += [("N/M", "N", "M"), ("M/S", "M", "S"), ("M/P", "M", "P")]
    for name, top, bottom in ratios:
        print(
            f"  {name}: wall {wall_ms[top] / wall_ms[bottom]:.3f}"
            f"   cpu {cpu_ms[top] / cpu_ms[bottom]:.3f}"
        )
    if "M" in programs:
        above = (wall_ms["N"] - wall_ms["S"]) / (wall_ms["M"] - wall_ms["S"])
        above_cpu = (cpu_ms["N"] - cpu_ms["S"]) / (cpu_ms["M"] - cpu_ms["S"])
        print(f"  (N-S)/(M-S), cost above start-up: wall {above:.3f}   cpu {above_cpu:.3f}")
    print("modules imported: " + ", ".join(f"{k} {v}" for k, v in modules.items()))
    print("each probe's own duration_ms (median of 5 runs)")
    for name in durations["N"]:
        row = "   ".join(
            f"{label} {statistics.median(durations[label].get(name, [0.0])):6.2f}"
            for label in programs
        )
        print(f"  {name:12s} {row}")


if __name__ == "__main__":
    main()
