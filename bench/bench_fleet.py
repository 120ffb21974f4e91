"""Benchmark `qnndoctor fleet` on a large fleet against its baseline, in one
run (by hand; numbers go in docs/fleet.md).

Two real tickets are made with `qnndoctor report -o` from real venvs (the
healthy onnxruntime-qnn 2.7.0 + onnxruntime 1.31.1 on the HTP simulator, and
2.3.0 floated onto 1.31.1, whose smoke session fails), then ``--count``
tickets (default 100,000, ~5 GB: indented as `report -o` writes them) are
generated from them by tests/helpers/fleet_tickets.py into 1,000-ticket
folders (kept between runs: ``--folder``). Then, alternating, ``--repeat``
times each:
  J  one Python process that opens and `json.load`s every ticket of the
     folder (the baseline: what reading the tickets costs at all)
  F  qnndoctor fleet FOLDER --json --jobs N (read, re-diagnose, aggregate)
and reports wall and CPU time (user + sys of the process tree) and the
largest resident set of any one process. Target (issue 31): F <= 3 x J.
Both read the same files from the page cache (an unmeasured J pass reads
them first; the first repetition's order is J then F, the next F then J).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

from _common import add_wheels_argument, make_venv

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests"))

BASELINE = """
import json, os, sys
count = 0
for root, dirs, files in os.walk(sys.argv[1]):
    dirs.sort()
    for name in sorted(files):
        if name.endswith(".json"):
            with open(os.path.join(root, name), "rb") as handle:
                json.load(handle)
            count += 1
print(count)
"""
PINS = {
    "healthy": ("onnxruntime_qnn-2.7.0-*.whl", "onnxruntime-1.31.1-*.whl", "numpy-2.4.6-*.whl"),
    "broken": ("onnxruntime_qnn-2.3.0-*.whl", "onnxruntime-1.31.1-*.whl", "numpy-2.4.6-*.whl"),
}


def _qnndoctor() -> str:
    found = shutil.which("qnndoctor", path=str(Path(sys.executable).parent))
    return found or "qnndoctor"


def real_tickets(wheels: Path, folder: Path) -> dict[str, dict[str, object]]:
    """The two real tickets (made once, kept in ``folder``)."""
    out: dict[str, dict[str, object]] = {}
    for name, patterns in PINS.items():
        ticket = folder / f"{name}.json"
        if not ticket.exists():
            found = [sorted(wheels.glob(p)) for p in patterns]
            if not all(found):
                sys.exit(f"missing real wheels in {wheels}: {patterns}")
            python = make_venv(folder / f"{name}-venv", [f[0] for f in found])
            subprocess.run(
                [_qnndoctor(), "report", "--python", python, "-o", str(ticket)],
                stdin=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
        out[name] = json.loads(ticket.read_text("utf-8"))
    return out


def generate(real: dict[str, dict[str, object]], folder: Path, count: int) -> int:
    """``count`` tickets under ``folder`` (skipped when already there); their bytes."""
    from helpers.fleet_tickets import tickets

    marker = folder / f".complete-{count}"
    if marker.exists():
        return int(marker.read_text())
    shutil.rmtree(folder, ignore_errors=True)
    total = 0
    for number, (name, data) in enumerate(tickets(real, count, indent=2)):
        sub = folder / f"{number // 1000:03d}"
        if number % 1000 == 0:
            sub.mkdir(parents=True, exist_ok=True)
        (sub / name).write_bytes(data)
        total += len(data)
    marker.write_text(str(total))
    return total


def measure(argv: list[str], out: Path) -> tuple[float, float, float]:
    """Wall s, CPU s (user + sys of the process and the children it waited
    for: fleet's workers) and the largest resident set (MB) of one of them."""
    started = time.perf_counter()
    with open(out, "wb") as handle:
        child = subprocess.Popen(
            argv, stdin=subprocess.DEVNULL, stdout=handle, stderr=subprocess.DEVNULL
        )
        _pid, _status, usage = os.wait4(child.pid, 0)
        child.returncode = 0  # reaped above
    wall = time.perf_counter() - started
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_wheels_argument(parser)
    parser.add_argument("--count", type=int, default=100_000)
    parser.add_argument("--folder", type=Path, default=Path("/tmp/qnndoctor-bench-fleet"))
    parser.add_argument("--jobs", type=int, default=0, help="fleet --jobs (0: one per CPU)")
    parser.add_argument("--repeat", type=int, default=2)
    args = parser.parse_args()
    args.folder.mkdir(parents=True, exist_ok=True)
    real = real_tickets(args.wheels, args.folder)
    tickets = args.folder / f"tickets-{args.count}"
    started = time.perf_counter()
    size = generate(real, tickets, args.count)
    print(
        f"{args.count:,} tickets, {size / 1e9:.2f} GB in {tickets} "
        f"(ready in {time.perf_counter() - started:.0f} s)"
    )
    print(f"machine: {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f} at start")
    runs: dict[str, list[tuple[float, float, float]]] = {"J": [], "F": []}
    commands = {
        "J": [sys.executable, "-c", BASELINE, str(tickets)],
        "F": [_qnndoctor(), "fleet", str(tickets), "--json", "--jobs", str(args.jobs)],
    }
    # Both read from the page cache: one unmeasured pass reads every ticket first.
    measure(commands["J"], args.folder / "warm-up.out")
    for repetition in range(args.repeat):
        order = ("J", "F") if repetition % 2 == 0 else ("F", "J")
        for name in order:
            result = measure(commands[name], args.folder / f"{name}.out")
            runs[name].append(result)
            print(
                f"  {name}: wall {result[0]:.1f} s, cpu {result[1]:.1f} s, "
                f"max rss {result[2]:.0f} MB"
            )
    summary = json.loads((args.folder / "F.out").read_text("utf-8"))
    assert summary["tickets"]["readable"] == args.count, summary["tickets"]
    j_wall = statistics.median(r[0] for r in runs["J"])
    f_wall = statistics.median(r[0] for r in runs["F"])
    j_cpu = statistics.median(r[1] for r in runs["J"])
    f_cpu = statistics.median(r[1] for r in runs["F"])
    print(f"J json.load of every ticket: wall {j_wall:.1f} s, cpu {j_cpu:.1f} s")
    print(
        f"F qnndoctor fleet: wall {f_wall:.1f} s, cpu {f_cpu:.1f} s, "
        f"max rss {max(r[2] for r in runs['F']):.0f} MB; "
        f"{summary['machines']['count']} machines, "
        f"{summary['tickets']['distinct_setups']} re-diagnoses"
    )
    print(f"F / J: wall {f_wall / j_wall:.2f} x (target <= 3), cpu {f_cpu / j_cpu:.2f} x")


if __name__ == "__main__":
    main()
