"""The cost of the marker sweep after a child ends (Linux), with a desktop's
worth of processes running (run by hand; numbers go in docs/speed.md).

After the probe program and after the smoke child, ``MarkerSweep.quick_scan``
reads ``/proc/<pid>/environ`` looking for the child's marker. It reads only
pids from the child's own up when the kernel's pid counter shows no wrap
(a descendant is always younger than the child). This starts ``--processes``
idle processes first (a desktop session runs a few hundred), then times,
alternating in one run:

  window  the scan as a check runs it (the child's pid known)
  full    every pid read (the child's pid unknown: what the scan did before)

and checks that both find a real escaped grandchild carrying the marker.

Usage: python bench/bench_sweep.py [--processes 400] [--runs 41]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time

from qnndoctor.children.containment import MarkerSweep

IDLE = "import time; time.sleep(600)"
# The child leaves a grandchild behind (it inherits the marker) and exits.
ESCAPE = (
    "import subprocess, sys\n"
    "p = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(600)'],"
    " start_new_session=True, stdout=subprocess.DEVNULL)\n"
    "print(p.pid)\n"
)


def _timed(sweep: MarkerSweep) -> tuple[float, list[int]]:
    started = time.perf_counter()
    found = sweep.quick_scan() or []
    return time.perf_counter() - started, found


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--processes", type=int, default=400)
    parser.add_argument("--runs", type=int, default=41)
    args = parser.parse_args()
    if not sys.platform.startswith("linux"):
        print("Linux only: the quick scan reads /proc")
        return 2
    idle = [
        subprocess.Popen([sys.executable, "-c", IDLE], stdin=subprocess.DEVNULL)
        for _ in range(args.processes)
    ]
    escaped: list[int] = []
    try:
        sweep = MarkerSweep()
        env = dict(os.environ)
        sweep.prepare(env)
        child = subprocess.Popen(
            [sys.executable, "-c", ESCAPE], env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE
        )
        escaped.append(int(child.communicate()[0]))
        time.sleep(0.2)  # the grandchild is running
        full = MarkerSweep(marker=sweep.marker)  # the child's pid unknown: every pid
        sweep.attach(child.pid, None)
        window_s: list[float] = []
        full_s: list[float] = []
        for _ in range(args.runs):
            seconds, found_window = _timed(sweep)
            window_s.append(seconds)
            seconds, found_full = _timed(full)
            full_s.append(seconds)
        processes = sum(name.isdigit() for name in os.listdir("/proc"))  # noqa: PTH208
        window_ms = statistics.median(window_s) * 1000
        full_ms = statistics.median(full_s) * 1000
        print(f"{processes} processes in /proc, {args.runs} alternating runs; medians")
        print(f"window (from the child's pid up) {window_ms:7.2f} ms  found {found_window}")
        print(f"full (every pid)                 {full_ms:7.2f} ms  found {found_full}")
        print(f"ratio window/full: {window_ms / full_ms:.3f}")
        if not found_window == found_full == escaped:
            print("the two scans disagree, or missed the escaped grandchild")
            return 1
    finally:
        for proc in idle:
            proc.kill()
        for pid in escaped:
            os.kill(pid, 9)
        for proc in idle:
            proc.wait()
    return 0


if __name__ == "__main__":
    sys.exit(main())
