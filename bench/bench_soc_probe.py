"""Benchmark the soc probe (SoC identity, NPU driver, FastRPC access) on the
machine it runs on: on Windows on Snapdragon it times the registry, SetupAPI
and version-resource queries (target: at most 300 ms together); elsewhere
the Linux / Android queries. Baseline, measured in the same run: the
interpreter probe.

Usage: python bench/bench_soc_probe.py [--runs N]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

try:
    from qnndoctor.probes import interpreter, soc
    from qnndoctor.probes.base import Context
except ImportError:  # a source checkout that is not installed
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    from qnndoctor.probes import interpreter, soc
    from qnndoctor.probes.base import Context


def _median_ms(run: Callable[[], object], runs: int) -> float:
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        run()
        times.append((time.perf_counter() - started) * 1000)
    return statistics.median(times)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=51)
    parser.add_argument("--target-ms", type=float, default=300.0)
    args = parser.parse_args(argv)
    baseline = _median_ms(lambda: interpreter.run(Context()), args.runs)
    probe = _median_ms(lambda: soc.run(Context()), args.runs)
    errors = soc.run(Context()).values.get("errors") or {}
    print(f"platform                 {sys.platform}")
    print(f"interpreter probe        median {baseline:.2f} ms ({args.runs} runs)")
    print(f"soc probe                median {probe:.2f} ms")
    print(f"ratio soc / interpreter  {probe / baseline:.2f}")
    print(
        f"target                   soc probe <= {args.target_ms:.0f} ms: {'met' if probe <= args.target_ms else 'MISSED'}"
    )
    if errors:
        print(f"queries that failed here: {', '.join(errors)}")
    return 0 if probe <= args.target_ms else 1


if __name__ == "__main__":
    raise SystemExit(main())
